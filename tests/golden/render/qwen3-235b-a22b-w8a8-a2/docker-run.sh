#!/usr/bin/env bash
# Rendered by ascendctl from profile qwen3-235b-a22b-w8a8-a2: release v0.23.0 (vLLM 0.23.0), backend npu, hardware a2.
# Re-render instead of editing: `ascendctl render PROFILE --target docker`.
set -euo pipefail
# Host networking: HCCL and the data-parallel RPC talk between hosts; the API binds 127.0.0.1:8000.
exec docker run --rm --name qwen3-235b-a22b-w8a8-a2 \
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
  -e HCCL_BUFFSIZE=512 \
  -e ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 \
  --entrypoint vllm \
  quay.io/ascend/vllm-ascend:v0.23.0 \
  serve vllm-ascend/Qwen3-235B-A22B-W8A8 --served-model-name qwen3 --max-model-len 131072 --trust-remote-code --hf-overrides '{"rope_parameters": {"rope_type": "yarn", "rope_theta": 1000000, "factor": 4, "original_max_position_embeddings": 32768}}' --seed 1024 --gpu-memory-utilization 0.95 --quantization ascend --tensor-parallel-size 8 --enable-expert-parallel --max-num-seqs 32 --max-num-batched-tokens 8096 --host 127.0.0.1 --port 8000 --shutdown-timeout 30 --compilation-config '{"cudagraph_mode": "FULL_DECODE_ONLY"}'
