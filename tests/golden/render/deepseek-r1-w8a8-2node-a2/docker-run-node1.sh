#!/usr/bin/env bash
# Rendered by ascendctl from profile deepseek-r1-w8a8-2node-a2 (node 1, worker): release v0.13.0 (vLLM 0.13.0), backend npu, hardware a2.
# Re-render instead of editing: `ascendctl render PROFILE --target docker`.
set -euo pipefail
# Host networking: HCCL and the data-parallel RPC talk between hosts; the API binds 0.0.0.0:8000.
exec docker run --rm --name deepseek-r1-w8a8-2node-a2-node1 \
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
  -v /etc/hccn.conf:/etc/hccn.conf:ro \
  -v /root/.cache:/root/.cache \
  -e PYTORCH_NPU_ALLOC_CONF=expandable_segments:True \
  -e TASK_QUEUE_ENABLE=1 \
  -e OMP_NUM_THREADS=1 \
  -e OMP_PROC_BIND=false \
  -e HCCL_OP_EXPANSION_MODE=AIV \
  -e HCCL_BUFFSIZE=200 \
  -e HCCL_INTRA_PCIE_ENABLE=1 \
  -e HCCL_INTRA_ROCE_ENABLE=0 \
  -e ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 \
  -e VLLM_ASCEND_BALANCE_SCHEDULING=1 \
  -e HCCL_IF_IP=192.0.2.11 \
  -e VLLM_HOST_IP=192.0.2.11 \
  -e GLOO_SOCKET_IFNAME=eth0 \
  -e TP_SOCKET_IFNAME=eth0 \
  -e HCCL_SOCKET_IFNAME=eth0 \
  --entrypoint vllm \
  quay.io/ascend/vllm-ascend:v0.13.0 \
  serve vllm-ascend/DeepSeek-R1-W8A8 --served-model-name deepseek_r1 --max-model-len 16384 --trust-remote-code --seed 1024 --gpu-memory-utilization 0.92 --quantization ascend --tensor-parallel-size 4 --data-parallel-size 4 --enable-expert-parallel --max-num-seqs 16 --max-num-batched-tokens 4096 --speculative-config '{"method": "mtp", "num_speculative_tokens": 3}' --compilation-config '{"cudagraph_mode": "FULL_DECODE_ONLY"}' --data-parallel-size-local 2 --data-parallel-address 192.0.2.10 --data-parallel-rpc-port 13389 --headless --data-parallel-start-rank 2
