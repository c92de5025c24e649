#!/usr/bin/env bash
# Rendered by ascendctl from profile qwen3-vl-30b-a3b-a3: release v0.23.0 (vLLM 0.23.0), backend npu, hardware a3.
# Re-render instead of editing: `ascendctl render PROFILE --target docker`.
set -euo pipefail
# Host networking: HCCL and the data-parallel RPC talk between hosts; the API binds 0.0.0.0:8000.
exec docker run --rm --name qwen3-vl-30b-a3b-a3 \
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
  -e VLLM_USE_MODELSCOPE=True \
  -e PYTORCH_NPU_ALLOC_CONF=expandable_segments:True \
  -e TASK_QUEUE_ENABLE=1 \
  -e OMP_NUM_THREADS=1 \
  -e OMP_PROC_BIND=false \
  -e HCCL_OP_EXPANSION_MODE=AIV \
  -e HCCL_BUFFSIZE=1024 \
  -e ASCEND_RT_VISIBLE_DEVICES=0,1 \
  --entrypoint vllm \
  quay.io/ascend/vllm-ascend:v0.23.0-a3 \
  serve Qwen/Qwen3-VL-30B-A3B-Instruct --served-model-name qwen3-vl-30b --max-model-len 32768 --seed 1024 --gpu-memory-utilization 0.9 --tensor-parallel-size 2 --enable-expert-parallel --max-num-seqs 32 --max-num-batched-tokens 16384 --no-enable-prefix-caching --limit-mm-per-prompt '{"image": 1, "video": 0}' --mm-processor-cache-gb 0 --host 0.0.0.0 --port 8000 --shutdown-timeout 30 --additional-config '{"enable_flashcomm1": true, "enable_fused_mc2": 1}' --compilation-config '{"cudagraph_mode": "FULL_DECODE_ONLY", "cudagraph_capture_sizes": [1, 2, 4, 8, 16, 24, 32]}'
