#!/bin/sh
# Rendered by ascendctl from profile glm-5-2-pd-a3: the router, on node 0.
# router: example-proxy+layerwise (v0.25.1rc1:examples/disaggregated_prefill_v1/load_balance_proxy_server_example.py:672-677 (--host, --port, --prefiller-hosts/-ports, --decoder-hosts/-ports); v0.11.0:…/load_balance_proxy_layerwise_server_example.py; v0.25.1rc1:Dockerfile.a3:65 (COPY . /vllm-workspace/vllm-ascend/)), round-robin
exec docker run --rm --name glm-5-2-pd-a3-router --net=host quay.io/ascend/vllm-ascend:v0.25.1rc1-a3 python3 /vllm-workspace/vllm-ascend/examples/disaggregated_prefill_v1/load_balance_proxy_server_example.py --host 0.0.0.0 --port 8000 --prefiller-hosts 127.0.0.1 --prefiller-ports 9081 --decoder-hosts 192.0.2.20 --decoder-ports 9900
