#!/usr/bin/env bash
# Rendered by ascendctl from profile qwen3-8b-lora-a2: release v0.13.0 (vLLM 0.13.0), backend npu, hardware a2.
# Re-render instead of editing: `ascendctl render PROFILE --target docker`.
# note: matrix: v0.13.0's model table states nothing about lora for Qwen3-Dense on a2 (v0.13.0:docs/source/user_guide/support_matrix/supported_models.md)
set -euo pipefail
# Host networking: HCCL and the data-parallel RPC talk between hosts; the API binds 0.0.0.0:8000.
exec docker run --rm --name qwen3-8b-lora-a2 \
  --net=host --shm-size=16g \
  --device /dev/davinci0 \
  --device /dev/davinci1 \
  --device /dev/davinci2 \
  --device /dev/davinci3 \
  --device /dev/davinci4 \
  --device /dev/davinci5 \
  --device /dev/davinci6 \
  --device /dev/davinci7 \
  --device /dev/davinci_manager \
  --device /dev/devmm_svm \
  --device /dev/hisi_hdc \
  -v /usr/local/dcmi:/usr/local/dcmi:ro \
  -v /usr/local/Ascend/driver/tools/hccn_tool:/usr/local/Ascend/driver/tools/hccn_tool:ro \
  -v /usr/local/bin/npu-smi:/usr/local/bin/npu-smi:ro \
  -v /usr/local/Ascend/driver/lib64:/usr/local/Ascend/driver/lib64:ro \
  -v /usr/local/Ascend/driver/version.info:/usr/local/Ascend/driver/version.info:ro \
  -v /etc/ascend_install.info:/etc/ascend_install.info:ro \
  -v /root/.cache:/root/.cache \
  -e PYTORCH_NPU_ALLOC_CONF=expandable_segments:True \
  -e TASK_QUEUE_ENABLE=1 \
  -e OMP_NUM_THREADS=1 \
  -e OMP_PROC_BIND=false \
  -e HCCL_OP_EXPANSION_MODE=AIV \
  -e ASCEND_RT_VISIBLE_DEVICES=0 \
  --entrypoint vllm \
  quay.io/ascend/vllm-ascend:v0.13.0 \
  serve Qwen/Qwen3-8B --served-model-name qwen3-8b --dtype bfloat16 --max-model-len 8192 --gpu-memory-utilization 0.9 --enforce-eager --max-num-seqs 32 --enable-lora --lora-modules sql-lora=/models/lora/qwen3-8b-sql chat-lora=/models/lora/qwen3-8b-chat --max-lora-rank 64 --max-loras 2 --host 0.0.0.0 --port 8000
