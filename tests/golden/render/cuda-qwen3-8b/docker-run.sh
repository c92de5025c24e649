#!/usr/bin/env bash
# Rendered by ascendctl from profile cuda-qwen3-8b: release 0.33.0 (vLLM 0.33.0), backend cuda.
# Re-render instead of editing: `ascendctl render PROFILE --target docker`.
set -euo pipefail
export VLLM_API_KEY="${VLLM_DEMO_API_KEY:?set VLLM_DEMO_API_KEY to the API key}"
# Host networking: HCCL and the data-parallel RPC talk between hosts; the API binds 127.0.0.1:8000.
exec docker run --rm --name cuda-qwen3-8b \
  --net=host --shm-size=16g \
  --gpus all \
  -v /root/.cache:/root/.cache \
  -e VLLM_API_KEY \
  --entrypoint vllm \
  vllm/vllm-openai:v0.33.0 \
  serve Qwen/Qwen3-8B --served-model-name qwen3-8b --max-model-len 32768 --gpu-memory-utilization 0.9 --max-num-seqs 64 --host 127.0.0.1 --port 8000 --shutdown-timeout 30
