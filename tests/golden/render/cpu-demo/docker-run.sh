#!/usr/bin/env bash
# Rendered by ascendctl from profile cpu-demo: release 0.32.0 (vLLM 0.32.0), backend cpu.
# Re-render instead of editing: `ascendctl render PROFILE --target docker`.
# note: prepared:smollm2-135m-instruct is a directory on the planning machine (/var/lib/ascendctl/models/smollm2-135m-instruct); copy it to the same path on every node
# note: model 'smollm2-135m-instruct' is not prepared yet: run `ascendctl model prepare smollm2-135m-instruct` before serving
set -euo pipefail
# Host networking: HCCL and the data-parallel RPC talk between hosts; the API binds 127.0.0.1:8000.
exec docker run --rm --name cpu-demo \
  --net=host --shm-size=16g \
  --cap-add SYS_NICE --security-opt seccomp=unconfined \
  -v /root/.cache:/root/.cache \
  -v /var/lib/ascendctl/models/smollm2-135m-instruct:/var/lib/ascendctl/models/smollm2-135m-instruct:ro \
  -e VLLM_CPU_KVCACHE_SPACE=3 \
  --entrypoint vllm \
  vllm/vllm-openai-cpu:v0.32.0-x86_64 \
  serve /var/lib/ascendctl/models/smollm2-135m-instruct --served-model-name smollm2 --dtype float32 --max-model-len 2048 --enforce-eager --max-num-seqs 32 --host 127.0.0.1 --port 8000 --shutdown-timeout 30
