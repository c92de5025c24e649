#!/usr/bin/env bash
# Rendered by ascendctl from profile deepseek-r1-w8a8-2node-a2 (node 1, worker): release v0.13.0 (vLLM 0.13.0), backend npu, hardware a2.
# Run on node 1 with the engine environment active (`vllm` on PATH).
set -euo pipefail
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export TASK_QUEUE_ENABLE=1
export OMP_NUM_THREADS=1
export OMP_PROC_BIND=false
export HCCL_OP_EXPANSION_MODE=AIV
export HCCL_BUFFSIZE=200
export HCCL_INTRA_PCIE_ENABLE=1
export HCCL_INTRA_ROCE_ENABLE=0
export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export VLLM_ASCEND_BALANCE_SCHEDULING=1
export HCCL_IF_IP=192.0.2.11
export VLLM_HOST_IP=192.0.2.11
export GLOO_SOCKET_IFNAME=eth0
export TP_SOCKET_IFNAME=eth0
export HCCL_SOCKET_IFNAME=eth0
exec vllm serve vllm-ascend/DeepSeek-R1-W8A8 --served-model-name deepseek_r1 --max-model-len 16384 --trust-remote-code --seed 1024 --gpu-memory-utilization 0.92 --quantization ascend --tensor-parallel-size 4 --data-parallel-size 4 --enable-expert-parallel --max-num-seqs 16 --max-num-batched-tokens 4096 --speculative-config '{"method": "mtp", "num_speculative_tokens": 3}' --compilation-config '{"cudagraph_mode": "FULL_DECODE_ONLY"}' --data-parallel-size-local 2 --data-parallel-address 192.0.2.10 --data-parallel-rpc-port 13389 --headless --data-parallel-start-rank 2
