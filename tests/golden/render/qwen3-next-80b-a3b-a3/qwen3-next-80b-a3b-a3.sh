#!/usr/bin/env bash
# Rendered by ascendctl from profile qwen3-next-80b-a3b-a3: release v0.23.0 (vLLM 0.23.0), backend npu, hardware a3.
# Run on the serving host with the engine environment active (`vllm` on PATH).
# note: matrix: Qwen3-Next is experimental on a3 in v0.23.0's table (v0.23.0:docs/source/user_guide/support_matrix/supported_models.md:44)
set -euo pipefail
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export TASK_QUEUE_ENABLE=1
export OMP_NUM_THREADS=1
export OMP_PROC_BIND=false
export HCCL_OP_EXPANSION_MODE=AIV
export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3
exec vllm serve Qwen/Qwen3-Next-80B-A3B-Instruct --served-model-name qwen3_next --max-model-len 32768 --gpu-memory-utilization 0.8 --tensor-parallel-size 4 --max-num-batched-tokens 4096 --host 127.0.0.1 --port 8000 --shutdown-timeout 30 --compilation-config '{"cudagraph_mode": "FULL_DECODE_ONLY"}'
