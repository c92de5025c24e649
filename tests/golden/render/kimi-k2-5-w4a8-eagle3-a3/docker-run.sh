#!/usr/bin/env bash
# Rendered by ascendctl from profile kimi-k2-5-w4a8-eagle3-a3: release v0.23.0 (vLLM 0.23.0), backend npu, hardware a3.
# Re-render instead of editing: `ascendctl render PROFILE --target docker`.
# note: matrix: W4A8 quantization does not work for multimodal models (unsupported) — contradicted by a launch upstream runs: verified at v0.23.0: tests/e2e/nightly/multi_node/external_dp/config/Kimi-K2.6-W4A8-64k-1k-TPOT50-PD.yaml:1, a3 × 16 NPUs × 2 nodes, prefill/decode (v0.23.0:tests/e2e/nightly/multi_node/external_dp/config/Kimi-K2.6-W4A8-64k-1k-TPOT50-PD.yaml:1) (main:docs/source/user_guide/support_matrix/feature_matrix.md)
set -euo pipefail
# Host networking: HCCL and the data-parallel RPC talk between hosts; the API binds 0.0.0.0:8088.
exec docker run --rm --name kimi-k2-5-w4a8-eagle3-a3 \
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
  -e HCCL_BUFFSIZE=800 \
  -e ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15 \
  -e LD_PRELOAD=/usr/lib/aarch64-linux-gnu/libjemalloc.so.2 \
  --entrypoint vllm \
  quay.io/ascend/vllm-ascend:v0.23.0-a3 \
  serve Eco-Tech/Kimi-K2.5-w4a8 --served-model-name kimi_k25 --max-model-len 32768 --trust-remote-code --seed 1024 --gpu-memory-utilization 0.9 --quantization ascend --tensor-parallel-size 4 --data-parallel-size 4 --enable-expert-parallel --max-num-seqs 64 --max-num-batched-tokens 16384 --no-enable-prefix-caching --speculative-config '{"method": "eagle3", "num_speculative_tokens": 3, "model": "lightseekorg/kimi-k2.5-eagle3"}' --mm-encoder-tp-mode data --host 0.0.0.0 --port 8088 --shutdown-timeout 30 --additional-config '{"enable_flashcomm1": true, "enable_mlapo": true, "enable_balance_scheduling": true}' --compilation-config '{"cudagraph_mode": "FULL_DECODE_ONLY"}'
