#!/usr/bin/env bash
# Rendered by ascendctl from profile qwen3-vl-30b-a3b-a3: release v0.23.0 (vLLM 0.23.0), backend npu, hardware a3.
# Run on the serving host with the engine environment active (`vllm` on PATH).
set -euo pipefail
export VLLM_USE_MODELSCOPE=True
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export TASK_QUEUE_ENABLE=1
export OMP_NUM_THREADS=1
export OMP_PROC_BIND=false
export HCCL_OP_EXPANSION_MODE=AIV
export HCCL_BUFFSIZE=1024
export ASCEND_RT_VISIBLE_DEVICES=0,1
exec vllm serve Qwen/Qwen3-VL-30B-A3B-Instruct --served-model-name qwen3-vl-30b --max-model-len 32768 --seed 1024 --gpu-memory-utilization 0.9 --tensor-parallel-size 2 --enable-expert-parallel --max-num-seqs 32 --max-num-batched-tokens 16384 --no-enable-prefix-caching --limit-mm-per-prompt '{"image": 1, "video": 0}' --mm-processor-cache-gb 0 --host 0.0.0.0 --port 8000 --shutdown-timeout 30 --additional-config '{"enable_flashcomm1": true, "enable_fused_mc2": 1}' --compilation-config '{"cudagraph_mode": "FULL_DECODE_ONLY", "cudagraph_capture_sizes": [1, 2, 4, 8, 16, 24, 32]}'
