#!/usr/bin/env bash
# Rendered by ascendctl from profile qwen3-8b-lora-a2: release v0.13.0 (vLLM 0.13.0), backend npu, hardware a2.
# Run on the serving host with the engine environment active (`vllm` on PATH).
# note: matrix: v0.13.0's model table states nothing about lora for Qwen3-Dense on a2 (v0.13.0:docs/source/user_guide/support_matrix/supported_models.md)
set -euo pipefail
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export TASK_QUEUE_ENABLE=1
export OMP_NUM_THREADS=1
export OMP_PROC_BIND=false
export HCCL_OP_EXPANSION_MODE=AIV
export ASCEND_RT_VISIBLE_DEVICES=0
exec vllm serve Qwen/Qwen3-8B --served-model-name qwen3-8b --dtype bfloat16 --max-model-len 8192 --gpu-memory-utilization 0.9 --enforce-eager --max-num-seqs 32 --enable-lora --lora-modules sql-lora=/models/lora/qwen3-8b-sql chat-lora=/models/lora/qwen3-8b-chat --max-lora-rank 64 --max-loras 2 --host 0.0.0.0 --port 8000
