#!/usr/bin/env bash
# Rendered by ascendctl from profile kimi-k2-5-w4a8-eagle3-a3: release v0.23.0 (vLLM 0.23.0), backend npu, hardware a3.
# Run on the serving host with the engine environment active (`vllm` on PATH).
# note: matrix: W4A8 quantization does not work for multimodal models (unsupported) — contradicted by a launch upstream runs: verified at v0.23.0: tests/e2e/nightly/multi_node/external_dp/config/Kimi-K2.6-W4A8-64k-1k-TPOT50-PD.yaml:1, a3 × 16 NPUs × 2 nodes, prefill/decode (v0.23.0:tests/e2e/nightly/multi_node/external_dp/config/Kimi-K2.6-W4A8-64k-1k-TPOT50-PD.yaml:1) (main:docs/source/user_guide/support_matrix/feature_matrix.md)
set -euo pipefail
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export TASK_QUEUE_ENABLE=1
export OMP_NUM_THREADS=1
export OMP_PROC_BIND=false
export HCCL_OP_EXPANSION_MODE=AIV
export HCCL_BUFFSIZE=800
export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
export LD_PRELOAD=/usr/lib/aarch64-linux-gnu/libjemalloc.so.2
exec vllm serve Eco-Tech/Kimi-K2.5-w4a8 --served-model-name kimi_k25 --max-model-len 32768 --trust-remote-code --seed 1024 --gpu-memory-utilization 0.9 --quantization ascend --tensor-parallel-size 4 --data-parallel-size 4 --enable-expert-parallel --max-num-seqs 64 --max-num-batched-tokens 16384 --no-enable-prefix-caching --speculative-config '{"method": "eagle3", "num_speculative_tokens": 3, "model": "lightseekorg/kimi-k2.5-eagle3"}' --mm-encoder-tp-mode data --host 0.0.0.0 --port 8088 --shutdown-timeout 30 --additional-config '{"enable_flashcomm1": true, "enable_mlapo": true, "enable_balance_scheduling": true}' --compilation-config '{"cudagraph_mode": "FULL_DECODE_ONLY"}'
