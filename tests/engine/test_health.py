"""Health probing, readiness waiting, the port check and the warm-up request, on 127.0.0.1 only."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from ascendctl_engine.health import Probe, port_in_use, probe, wait_ready, warmup


class _Handler(BaseHTTPRequestHandler):
    status = 200
    seen: list[tuple[str, str | None]] = []

    def log_message(self, *args: object) -> None:
        pass

    def _reply(self, code: int, body: object) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        _Handler.seen.append((self.path, self.headers.get("Authorization")))
        if self.path == "/health":
            self._reply(_Handler.status, {})
        else:
            self._reply(200, {"data": [{"id": "tiny"}]})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _Handler.seen.append((self.path, self.headers.get("Authorization")))
        self._reply(200, {"choices": [{"text": "x"}], "model": body["model"]})


@pytest.fixture
def server() -> Iterator[str]:
    _Handler.status = 200
    _Handler.seen = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_probe_ok_unhealthy_and_refused(server: str, free_port: int) -> None:
    assert probe(f"{server}/health") == Probe(200)
    _Handler.status = 503
    assert probe(f"{server}/health").status == 503
    refused = probe(f"http://127.0.0.1:{free_port}/health", timeout=1)
    assert refused.status is None and refused.error


def test_probe_ignores_proxy_settings(server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("http_proxy", "http://127.0.0.1:9")  # nothing listens there
    monkeypatch.setenv("no_proxy", "")
    assert probe(f"{server}/health").ok


def test_wait_ready_outcomes() -> None:
    answers = iter([Probe(None, "refused"), Probe(None, "refused"), Probe(200)])
    clock = iter(float(i) for i in range(100))
    result = wait_ready(
        "u", 10, exited=lambda: False, probe_fn=lambda _: next(answers), clock=lambda: next(clock), sleep=lambda _: None
    )
    assert result.outcome == "ready"

    ticks = iter(float(i) for i in range(100))
    timeout = wait_ready(
        "u",
        3,
        exited=lambda: False,
        probe_fn=lambda _: Probe(None, "refused"),
        clock=lambda: next(ticks),
        sleep=lambda _: None,
    )
    assert (timeout.outcome, timeout.last_error) == ("timeout", "refused")

    exited = wait_ready("u", 3, exited=lambda: True, probe_fn=lambda _: Probe(200))
    assert exited.outcome == "exited"
    stopped = wait_ready("u", 3, exited=lambda: False, stopped=lambda: True, probe_fn=lambda _: Probe(200))
    assert stopped.outcome == "stopped"


def test_port_in_use_detects_a_listener(free_port: int) -> None:
    assert port_in_use("127.0.0.1", free_port) is None
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", free_port))
        sock.listen()
        problem = port_in_use("127.0.0.1", free_port)
    assert problem is not None and "already in use" in problem
    unavailable = port_in_use("192.0.2.123", free_port)  # TEST-NET address: not on this host
    assert unavailable is not None and "not an address of this host" in unavailable


def test_warmup_asks_the_first_model_with_the_key(server: str) -> None:
    result = warmup(server, "sk-1")
    assert result.ok and result.model == "tiny"
    assert _Handler.seen == [("/v1/models", "Bearer sk-1"), ("/v1/completions", "Bearer sk-1")]


def test_warmup_failure_is_reported_not_raised(free_port: int) -> None:
    result = warmup(f"http://127.0.0.1:{free_port}", None, timeout=1)
    assert not result.ok and result.error
