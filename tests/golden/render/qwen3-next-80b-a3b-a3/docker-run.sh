#!/usr/bin/env bash
# Rendered by ascendctl from profile qwen3-next-80b-a3b-a3: release v0.23.0 (vLLM 0.23.0), backend npu, hardware a3.
# Re-render instead of editing: `ascendctl render PROFILE --target docker`.
# note: matrix: Qwen3-Next is experimental on a3 in v0.23.0's table (v0.23.0:docs/source/user_guide/support_matrix/supported_models.md:44)
set -euo pipefail
# Host networking: HCCL and the data-parallel RPC talk between hosts; the API binds 127.0.0.1:8000.
exec docker run --rm --name qwen3-next-80b-a3b-a3 \
  --net=host --shm-size=16g \
  --device /dev/davinci0 \
  --device /dev/davinci1 \
  --device /dev/davinci2 \
  --device /dev/davinci3 \
  --device /dev/davinci4 \
  --device /dev/davinci5 \
  --device /dev/davinci6 \
  --device /dev/davinci7 \
  --device /dev/davinci8 \
  --device /dev/davinci9 \
  --device /dev/davinci10 \
  --device /dev/davinci11 \
  --device /dev/davinci12 \
  --device /dev/davinci13 \
  --device /dev/davinci14 \
  --device /dev/davinci15 \
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
  -e ASCEND_RT_VISIBLE_DEVICES=0,1,2,3 \
  --entrypoint vllm \
  quay.io/ascend/vllm-ascend:v0.23.0-a3 \
  serve Qwen/Qwen3-Next-80B-A3B-Instruct --served-model-name qwen3_next --max-model-len 32768 --gpu-memory-utilization 0.8 --tensor-parallel-size 4 --max-num-batched-tokens 4096 --host 127.0.0.1 --port 8000 --shutdown-timeout 30 --compilation-config '{"cudagraph_mode": "FULL_DECODE_ONLY"}'
