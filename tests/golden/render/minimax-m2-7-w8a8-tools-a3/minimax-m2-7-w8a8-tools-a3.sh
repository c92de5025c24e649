#!/usr/bin/env bash
# Rendered by ascendctl from profile minimax-m2-7-w8a8-tools-a3: release v0.23.0 (vLLM 0.23.0), backend npu, hardware a3.
# Run on the serving host with the engine environment active (`vllm` on PATH).
set -euo pipefail
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export TASK_QUEUE_ENABLE=1
export OMP_NUM_THREADS=1
export OMP_PROC_BIND=false
export HCCL_OP_EXPANSION_MODE=AIV
export HCCL_BUFFSIZE=1024
export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
export LD_PRELOAD=/usr/lib/aarch64-linux-gnu/libjemalloc.so.2
exec vllm serve /models/MiniMax-M2.7-w8a8-QuaRot --served-model-name MiniMax-M2.7 --max-model-len 40690 --trust-remote-code --gpu-memory-utilization 0.85 --quantization ascend --tensor-parallel-size 4 --data-parallel-size 4 --enable-expert-parallel --max-num-seqs 48 --max-num-batched-tokens 16384 --async-scheduling --speculative-config '{"method": "eagle3", "num_speculative_tokens": 3, "model": "/models/Eagle3", "enforce_eager": true}' --tool-call-parser minimax_m2 --enable-auto-tool-choice --reasoning-parser minimax_m2_append_think --host 0.0.0.0 --port 8000 --shutdown-timeout 30 --additional-config '{"weight_nz_mode": 1, "enable_flashcomm1": true, "enable_cpu_binding": true, "enable_fused_mc2": 1, "enable_balance_scheduling": false}' --compilation-config '{"cudagraph_mode": "FULL_DECODE_ONLY"}'
