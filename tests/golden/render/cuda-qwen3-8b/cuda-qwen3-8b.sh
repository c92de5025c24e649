#!/usr/bin/env bash
# Rendered by ascendctl from profile cuda-qwen3-8b: release 0.33.0 (vLLM 0.33.0), backend cuda.
# Run on the serving host with the engine environment active (`vllm` on PATH).
set -euo pipefail
export VLLM_API_KEY="${VLLM_DEMO_API_KEY:?set VLLM_DEMO_API_KEY to the API key}"
exec vllm serve Qwen/Qwen3-8B --served-model-name qwen3-8b --max-model-len 32768 --gpu-memory-utilization 0.9 --max-num-seqs 64 --host 127.0.0.1 --port 8000 --shutdown-timeout 30
