#!/usr/bin/env bash
# Rendered by ascendctl from profile deepseek-v3-2-w8a8-mtp-a3: release v0.23.0 (vLLM 0.23.0), backend npu, hardware a3.
# Run on the serving host with the engine environment active (`vllm` on PATH).
set -euo pipefail
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export TASK_QUEUE_ENABLE=1
export OMP_NUM_THREADS=10
export OMP_PROC_BIND=false
export HCCL_OP_EXPANSION_MODE=AIV
export HCCL_BUFFSIZE=200
export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
exec vllm serve /root/.cache/modelscope/hub/models/vllm-ascend/DeepSeek-V3.2-W8A8 --served-model-name deepseek_v3_2 --max-model-len 8192 --trust-remote-code --seed 1024 --gpu-memory-utilization 0.92 --quantization ascend --tensor-parallel-size 8 --data-parallel-size 2 --enable-expert-parallel --max-num-seqs 16 --max-num-batched-tokens 4096 --no-enable-prefix-caching --speculative-config '{"method": "mtp", "num_speculative_tokens": 3}' --host 0.0.0.0 --port 8000 --shutdown-timeout 30 --additional-config '{"enable_flashcomm1": true, "enable_mlapo": true}' --compilation-config '{"cudagraph_mode": "FULL_DECODE_ONLY"}'
