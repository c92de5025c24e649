#!/usr/bin/env bash
# Rendered by ascendctl from profile glm-5-2-pd-a3-prefill-0 (node 0, head): release v0.25.1rc1 (vLLM 0.25.1), backend npu, hardware a3.
# Run on node 0 with the engine environment active (`vllm` on PATH).
# note: engine.ascend.recompute_scheduler: vllm-ascend documents the recompute scheduler for the decode instances of a prefill/decode-disaggregated deployment only (additional_config.md); this is a prefill instance
# note: engine.ascend.fuse_muls_add: a graph fusion pass runs when vLLM compiles the model (v0.23.0:vllm_ascend/compilation/graph_fusion_pass_manager.py:49-72); engine.graph.mode eager compiles nothing
# note: engine.ascend.npugraph_ex: npugraph_ex compiles the graph Dynamo captures (v0.25.1rc1:vllm_ascend/ascend_config.py:514-522); engine.graph.mode eager captures none
# note: matrix: GLM-5.2 is experimental on a3 in v0.25.1rc1's table (v0.25.1rc1:docs/source/user_guide/support_matrix/supported_models.md:34)
# note: matrix: Data parallel with decode context parallel is only partly supported (partial) (main:docs/source/user_guide/support_matrix/feature_matrix.md)
set -euo pipefail
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export TASK_QUEUE_ENABLE=1
export VLLM_WORKER_MULTIPROC_METHOD=spawn
export OMP_NUM_THREADS=20
export OMP_PROC_BIND=false
export HCCL_OP_EXPANSION_MODE=AIV
export HCCL_BUFFSIZE=768
export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
export HCCL_IF_IP=192.0.2.10
export VLLM_HOST_IP=192.0.2.10
export GLOO_SOCKET_IFNAME=eth0
export TP_SOCKET_IFNAME=eth0
export HCCL_SOCKET_IFNAME=eth0
export VLLM_MOONCAKE_ABORT_REQUEST_TIMEOUT=480
exec vllm serve /models/GLM-5.2-w8a8 --served-model-name glm-52 --max-model-len 1024000 --seed 1024 --gpu-memory-utilization 0.75 --safetensors-load-strategy prefetch --quantization ascend --enforce-eager --tensor-parallel-size 8 --data-parallel-size 4 --enable-expert-parallel --max-num-seqs 8 --max-num-batched-tokens 16384 --speculative-config '{"method": "mtp", "num_speculative_tokens": 1, "enforce_eager": true}' --decode-context-parallel-size 8 --cp-kv-cache-interleave-size 128 --kv-transfer-config '{"kv_connector": "MooncakeConnectorV1", "kv_role": "kv_producer", "kv_port": 36000, "engine_id": "0", "kv_connector_extra_config": {"prefill": {"dp_size": 4, "tp_size": 8}, "decode": {"dp_size": 4, "tp_size": 8}}}' --host 0.0.0.0 --port 9081 --shutdown-timeout 30 --additional-config '{"weight_nz_mode": 1, "enable_flashcomm1": true, "enable_cpu_binding": true, "multistream_overlap_shared_expert": true, "scheduler_config": {"recompute_scheduler_enable": true}, "enable_dsa_cp": true, "enable_mc2_hierarchy_comm": false, "ascend_compilation_config": {"fuse_muls_add": true, "enable_npugraph_ex": true, "enable_static_kernel": false}}' --data-parallel-size-local 2 --data-parallel-address 192.0.2.10 --data-parallel-rpc-port 16591
