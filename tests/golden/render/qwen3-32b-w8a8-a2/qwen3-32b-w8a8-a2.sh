#!/usr/bin/env bash
# Rendered by ascendctl from profile qwen3-32b-w8a8-a2: release v0.23.0 (vLLM 0.23.0), backend npu, hardware a2.
# Run on the serving host with the engine environment active (`vllm` on PATH).
set -euo pipefail
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export TASK_QUEUE_ENABLE=1
export OMP_NUM_THREADS=1
export OMP_PROC_BIND=false
export HCCL_OP_EXPANSION_MODE=AIV
export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3
exec vllm serve vllm-ascend/Qwen3-32B-W8A8 --served-model-name qwen3 --max-model-len 5500 --trust-remote-code --gpu-memory-utilization 0.9 --quantization ascend --tensor-parallel-size 4 --max-num-batched-tokens 40960 --host 127.0.0.1 --port 8000 --shutdown-timeout 30 --compilation-config '{"cudagraph_mode": "FULL_DECODE_ONLY"}'
