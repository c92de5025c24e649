#!/usr/bin/env bash
# Rendered by ascendctl from profile cpu-demo: release 0.32.0 (vLLM 0.32.0), backend cpu.
# Run on the serving host with the engine environment active (`vllm` on PATH).
# note: prepared:smollm2-135m-instruct is a directory on the planning machine (/var/lib/ascendctl/models/smollm2-135m-instruct); copy it to the same path on every node
# note: model 'smollm2-135m-instruct' is not prepared yet: run `ascendctl model prepare smollm2-135m-instruct` before serving
set -euo pipefail
export VLLM_CPU_KVCACHE_SPACE=3
exec vllm serve /var/lib/ascendctl/models/smollm2-135m-instruct --served-model-name smollm2 --dtype float32 --max-model-len 2048 --enforce-eager --max-num-seqs 32 --host 127.0.0.1 --port 8000 --shutdown-timeout 30
