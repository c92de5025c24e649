#!/usr/bin/env bash
# Rendered by ascendctl from profile glm-5-2-pd-a3-prefill-0 (node 1, worker): release v0.25.1rc1 (vLLM 0.25.1), backend npu, hardware a3.
# Re-render instead of editing: `ascendctl render PROFILE --target docker`.
# note: engine.ascend.recompute_scheduler: vllm-ascend documents the recompute scheduler for the decode instances of a prefill/decode-disaggregated deployment only (additional_config.md); this is a prefill instance
# note: engine.ascend.fuse_muls_add: a graph fusion pass runs when vLLM compiles the model (v0.23.0:vllm_ascend/compilation/graph_fusion_pass_manager.py:49-72); engine.graph.mode eager compiles nothing
# note: engine.ascend.npugraph_ex: npugraph_ex compiles the graph Dynamo captures (v0.25.1rc1:vllm_ascend/ascend_config.py:514-522); engine.graph.mode eager captures none
# note: matrix: GLM-5.2 is experimental on a3 in v0.25.1rc1's table (v0.25.1rc1:docs/source/user_guide/support_matrix/supported_models.md:34)
# note: matrix: Data parallel with decode context parallel is only partly supported (partial) (main:docs/source/user_guide/support_matrix/feature_matrix.md)
set -euo pipefail
# Host networking: HCCL and the data-parallel RPC talk between hosts; the API binds 0.0.0.0:9081.
exec docker run --rm --name glm-5-2-pd-a3-prefill-0-node1 \
  --net=host --shm-size=16g \
  --device /dev/davinci0 \
  --device /dev/davinci1 \
  --device /dev/davinci2 \
  --device /dev/davinci3 \
  --device /dev/davinci4 \
  --device /dev/davinci5 \
  --device /dev/davinci6 \
  --device /dev/davinci7 \
  --device /dev/davinci8 \
  --device /dev/davinci9 \
  --device /dev/davinci10 \
  --device /dev/davinci11 \
  --device /dev/davinci12 \
  --device /dev/davinci13 \
  --device /dev/davinci14 \
  --device /dev/davinci15 \
  --device /dev/davinci_manager \
  --device /dev/devmm_svm \
  --device /dev/hisi_hdc \
  -v /usr/local/dcmi:/usr/local/dcmi:ro \
  -v /usr/local/Ascend/driver/tools/hccn_tool:/usr/local/Ascend/driver/tools/hccn_tool:ro \
  -v /usr/local/bin/npu-smi:/usr/local/bin/npu-smi:ro \
  -v /usr/local/Ascend/driver/lib64:/usr/local/Ascend/driver/lib64:ro \
  -v /usr/local/Ascend/driver/version.info:/usr/local/Ascend/driver/version.info:ro \
  -v /etc/ascend_install.info:/etc/ascend_install.info:ro \
  -v /etc/hccn.conf:/etc/hccn.conf:ro \
  -v /root/.cache:/root/.cache \
  -v /models/GLM-5.2-w8a8:/models/GLM-5.2-w8a8:ro \
  -e PYTORCH_NPU_ALLOC_CONF=expandable_segments:True \
  -e TASK_QUEUE_ENABLE=1 \
  -e VLLM_WORKER_MULTIPROC_METHOD=spawn \
  -e OMP_NUM_THREADS=20 \
  -e OMP_PROC_BIND=false \
  -e HCCL_OP_EXPANSION_MODE=AIV \
  -e HCCL_BUFFSIZE=768 \
  -e ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15 \
  -e HCCL_IF_IP=192.0.2.11 \
  -e VLLM_HOST_IP=192.0.2.11 \
  -e GLOO_SOCKET_IFNAME=eth0 \
  -e TP_SOCKET_IFNAME=eth0 \
  -e HCCL_SOCKET_IFNAME=eth0 \
  -e VLLM_MOONCAKE_ABORT_REQUEST_TIMEOUT=480 \
  --entrypoint vllm \
  quay.io/ascend/vllm-ascend:v0.25.1rc1-a3 \
  serve /models/GLM-5.2-w8a8 --served-model-name glm-52 --max-model-len 1024000 --seed 1024 --gpu-memory-utilization 0.75 --safetensors-load-strategy prefetch --quantization ascend --enforce-eager --tensor-parallel-size 8 --data-parallel-size 4 --enable-expert-parallel --max-num-seqs 8 --max-num-batched-tokens 16384 --speculative-config '{"method": "mtp", "num_speculative_tokens": 1, "enforce_eager": true}' --decode-context-parallel-size 8 --cp-kv-cache-interleave-size 128 --kv-transfer-config '{"kv_connector": "MooncakeConnectorV1", "kv_role": "kv_producer", "kv_port": 36000, "engine_id": "0", "kv_connector_extra_config": {"prefill": {"dp_size": 4, "tp_size": 8}, "decode": {"dp_size": 4, "tp_size": 8}}}' --additional-config '{"weight_nz_mode": 1, "enable_flashcomm1": true, "enable_cpu_binding": true, "multistream_overlap_shared_expert": true, "scheduler_config": {"recompute_scheduler_enable": true}, "enable_dsa_cp": true, "enable_mc2_hierarchy_comm": false, "ascend_compilation_config": {"fuse_muls_add": true, "enable_npugraph_ex": true, "enable_static_kernel": false}}' --data-parallel-size-local 2 --data-parallel-address 192.0.2.10 --data-parallel-rpc-port 16591 --headless --data-parallel-start-rank 2
