"""The router protocol, measured: the real `vllm-router` of the CPU engine environment (as the `pd-router` era
plans it) in front of a recording fake prefill/decode pair on 127.0.0.1.

The fakes answer like vllm-ascend's connectors do: prefill's response carries the `kv_transfer_params` its
connector's `request_finished` returns (Mooncake: v0.25.1rc1:vllm_ascend/distributed/kv_transfer/kv_p2p/
mooncake_connector.py:1857-1870; LLMDataDist: v0.11.0:vllm_ascend/distributed/llmdatadist_c_mgr_connector.py:
293-302), and decode must be sent exactly those. That the router asks prefill for one token with
`do_remote_decode: true` and hands decode what prefill answered is the handshake both connectors need; a fake
stands in for the NPU engines (there is none here), the router is the real program.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from ascendctl_engine.adapters.eras import era_for_release
from ascendctl_engine.adapters.kv_transfer import router_argv

pytestmark = pytest.mark.e2e

OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))

MOONCAKE_PARAMS = {
    "do_remote_prefill": True,
    "do_remote_decode": False,
    "remote_block_ids": [[3, 4, 5]],
    "remote_engine_id": "prefill-engine-0",
    "remote_request_id": "cmpl-p-1",
    "remote_host": "10.0.0.11",
    "remote_port": 30000,
    "remote_ptp_size": 2,
    "num_prompt_blocks": 3,
}
LLMDATADIST_PARAMS = {
    "do_remote_prefill": True,
    "do_remote_decode": False,
    "remote_block_ids": [7, 8],
    "remote_engine_id": "0",
    "remote_host": "10.0.0.12",
    "remote_port": 26000,
    "remote_tp_size": "1",
}


class FakeInstance:
    """A recording OpenAI-style server: `/health`, `/v1/models`, `/v1/completions`."""

    def __init__(self, role: str) -> None:
        self.role = role
        self.requests: list[dict[str, Any]] = []
        self.authorization: list[str | None] = []  # each POST's Authorization header (None: none sent)
        self.transfer: dict[str, Any] = {}
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _send(self, payload: dict[str, Any]) -> None:
                body = json.dumps(payload).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                if self.path == "/v1/models":
                    self._send({"object": "list", "data": [{"id": "m", "object": "model"}]})
                else:
                    self._send({})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                owner.requests.append(body)
                owner.authorization.append(self.headers.get("Authorization"))
                answer: dict[str, Any] = {
                    "id": f"cmpl-{owner.role}",
                    "object": "text_completion",
                    "model": "m",
                    "choices": [{"index": 0, "text": f"from {owner.role}", "finish_reason": "length"}],
                    "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
                }
                if owner.transfer:
                    answer["kv_transfer_params"] = owner.transfer
                self._send(answer)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = int(self.server.server_address[1])
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def pair() -> Iterator[tuple[FakeInstance, FakeInstance]]:
    prefill, decode = FakeInstance("prefill"), FakeInstance("decode")
    yield prefill, decode
    prefill.close()
    decode.close()


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def run_router(
    cpu_engine: Any, prefill: FakeInstance, decode: FakeInstance, extra: tuple[str, ...] = ()
) -> tuple[subprocess.Popen[bytes], int]:
    chosen = era_for_release("pd-router", "cpu", cpu_engine.release, None)
    assert chosen is not None and chosen.name == "vllm-router"
    port = free_port()
    argv = list(
        router_argv(chosen.traits, "mooncake", "127.0.0.1", port, [("127.0.0.1", prefill.port)],
                    [("127.0.0.1", decode.port)], "round-robin", free_port())  # metrics: 29000 may be another test's
    )  # fmt: skip
    argv[0] = str(cpu_engine.vllm_executable.parent / argv[0])
    argv += extra
    env = {k: v for k, v in os.environ.items() if not k.startswith("VLLM_")}
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with OPENER.open(f"http://127.0.0.1:{port}{chosen.traits['health']}", timeout=2) as response:
                if response.status == 200:
                    return proc, port
        except OSError:
            time.sleep(0.2)
    proc.terminate()
    raise AssertionError("vllm-router did not answer its health path within 60 s")


@pytest.mark.parametrize("transfer", [MOONCAKE_PARAMS, LLMDATADIST_PARAMS], ids=["mooncake", "llmdatadist"])
def test_router_hands_decode_what_prefill_answered(
    cpu_engine: Any, pair: tuple[FakeInstance, FakeInstance], transfer: dict[str, Any]
) -> None:
    prefill, decode = pair
    prefill.transfer = transfer
    proc, port = run_router(cpu_engine, prefill, decode)
    try:
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/v1/completions",
            data=json.dumps({"model": "m", "prompt": "hello", "max_tokens": 7}).encode(),
            headers={"Content-Type": "application/json"},
        )
        with OPENER.open(request, timeout=30) as response:
            answer = json.loads(response.read())
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert answer["choices"][0]["text"] == "from decode"
    [asked_prefill] = prefill.requests
    assert asked_prefill["max_tokens"] == 1
    assert asked_prefill["kv_transfer_params"]["do_remote_decode"] is True
    assert asked_prefill["kv_transfer_params"]["do_remote_prefill"] is False
    [asked_decode] = decode.requests
    assert asked_decode["max_tokens"] == 7
    assert asked_decode["kv_transfer_params"] == transfer


@pytest.mark.parametrize("router_key", [None, "router-key-0123456789"], ids=["no-router-key", "router-api-key"])
def test_the_router_checks_no_client_key_and_forwards_none(
    cpu_engine: Any, pair: tuple[FakeInstance, FakeInstance], router_key: str | None
) -> None:
    # The fact behind `plan.pd.api-key` (the `pd-router` era's `auth` trait): with `server.api_key` the instances
    # demand the key, yet vllm-router lets a request without one through and sends the instances an empty bearer
    # token, with or without its own --api-key. A router that starts checking or forwarding keys fails this test.
    prefill, decode = pair
    proc, port = run_router(cpu_engine, prefill, decode, ("--api-key", router_key) if router_key else ())
    try:
        for headers in ({}, {"Authorization": "Bearer client-key-0123456789"}):
            request = urllib.request.Request(
                f"http://127.0.0.1:{port}/v1/completions",
                data=json.dumps({"model": "m", "prompt": "hello", "max_tokens": 2}).encode(),
                headers={"Content-Type": "application/json", **headers},
            )
            with OPENER.open(request, timeout=30) as response:
                assert response.status == 200  # no key, or any key: served
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    sent = prefill.authorization + decode.authorization
    assert len(sent) == 4
    assert all((header or "").removeprefix("Bearer").strip() == "" for header in sent), sent
