#!/usr/bin/env bash
# Rendered by ascendctl from profile glm-5-w4a8-mtp-a3: release v0.23.0 (vLLM 0.23.0), backend npu, hardware a3.
# Run on the serving host with the engine environment active (`vllm` on PATH).
set -euo pipefail
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export TASK_QUEUE_ENABLE=1
export OMP_NUM_THREADS=1
export OMP_PROC_BIND=false
export HCCL_OP_EXPANSION_MODE=AIV
export HCCL_BUFFSIZE=200
export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
exec vllm serve /root/.cache/modelscope/hub/models/vllm-ascend/GLM5-w4a8 --served-model-name glm-5 --max-model-len 200000 --trust-remote-code --hf-overrides '{"use_index_cache": true, "index_topk_freq": 4}' --seed 1024 --gpu-memory-utilization 0.95 --quantization ascend --tensor-parallel-size 16 --enable-expert-parallel --max-num-seqs 16 --max-num-batched-tokens 4096 --enable-prefix-caching --enable-chunked-prefill --speculative-config '{"method": "mtp", "num_speculative_tokens": 3, "enforce_eager": true}' --host 0.0.0.0 --port 8077 --shutdown-timeout 30 --additional-config '{"enable_flashcomm1": true, "multistream_overlap_shared_expert": true, "enable_balance_scheduling": true}' --compilation-config '{"cudagraph_mode": "FULL_DECODE_ONLY"}'
