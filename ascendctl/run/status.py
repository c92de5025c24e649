"""`ascendctl status`: what each running instance is doing, from two scrapes of its `/metrics` an interval apart.

The instances are the state store's records (`ps`): every record with an endpoint, i.e. a plain deployment's
head and each prefill/decode instance; routers and headless workers serve no `/metrics` of an engine and are left
out. Each instance's vLLM version comes from its own `/version`, and picks the metric names of its era
(`ascendctl_engine.adapters.eras.metrics_names`). vLLM serves `/metrics` and `/version` without the API key
(only `/v1`, `/v2`, `/inference` and `/cohere` paths are behind it: vLLM
0.32.0:vllm/entrypoints/serve/middleware/authenticate.py:11,59),
so status sends none and never reads one. An instance that does not answer is reported down with the reason.

JSON contract (`status --json`; pinned by tests/test_status_cli.py; keys may be added, never removed; a renamed or
removed key, or a value that changes meaning, bumps `STATUS_JSON_SCHEMA`):
`{"schema": 1, "interval_s", "instances": [{"name", "node", "instance", "role", "endpoint", "up", "error",
"vllm", "era", "interval_s", "running", "waiting", "kv_cache_usage_pct", "prompt_tokens_per_s",
"generation_tokens_per_s", "preemptions", "ttft_ms": {"p50", "p99"}, "tpot_ms": {"p50", "p99"},
"observations": {"ttft", "tpot"}}]}` — times in milliseconds, rates per second, `null` where the engine reports
nothing or the interval saw no new observation.
"""

from __future__ import annotations

import http.client
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from ascendctl.core.errors import UserInputError
from ascendctl.run.deployments import find_running, listed
from ascendctl.run.metrics import Interval, MetricsError, Scrape, interval, parse_scrape
from ascendctl_engine.adapters.eras import EraError, metrics_names
from ascendctl_engine.jsonio import JsonReadError, loads_json
from ascendctl_engine.state import Listed, StateStore

STATUS_JSON_SCHEMA = 1
MAX_METRICS_BYTES = 16 * 1024 * 1024
SCRAPE_TIMEOUT = 5.0
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # the engines' own endpoints, never a proxy

Fetch = Callable[[str], str]  # GET a URL, return its text; raises OSError (or a subclass) with the reason


class ScrapeFailed(Exception):
    """An instance did not answer (one line: the URL's reason)."""


def http_get(url: str) -> str:
    """GET `url` (http/https only: it comes from a state record), at most `MAX_METRICS_BYTES`."""
    if not url.startswith(("http://", "https://")):
        raise ScrapeFailed(f"{url}: not an http(s) URL")
    try:
        with _OPENER.open(url, timeout=SCRAPE_TIMEOUT) as response:
            data: bytes = response.read(MAX_METRICS_BYTES + 1)
    except urllib.error.HTTPError as exc:
        raise ScrapeFailed(f"{url}: HTTP {exc.code}") from None
    except (urllib.error.URLError, OSError, ValueError, http.client.HTTPException) as exc:
        raise ScrapeFailed(f"{url}: {getattr(exc, 'reason', exc)}") from None
    if len(data) > MAX_METRICS_BYTES:
        raise ScrapeFailed(f"{url}: answer larger than {MAX_METRICS_BYTES} bytes")
    return data.decode("utf-8", errors="replace")


@dataclass
class Target:
    """One instance to scrape and what is known of it so far."""

    name: str
    node: int
    instance: str | None
    role: str
    endpoint: str
    vllm: str | None = None
    era: str | None = None
    names: Mapping[str, str] = field(default_factory=dict)
    error: str | None = None
    last: Scrape | None = None
    result: Interval | None = None

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "name": self.name,
            "node": self.node,
            "instance": self.instance,
            "role": self.role,
            "endpoint": self.endpoint,
            "up": self.error is None,
            "error": self.error,
            "vllm": self.vllm,
            "era": self.era,
        }
        if self.result is not None and self.error is None:
            out.update(self.result.to_dict())
        return out


def targets(name: str | None, store: StateStore | None = None) -> list[Target]:
    """The instances to scrape: `name`'s, or every running deployment's (an orphaned engine is down from the
    start). Raises `OperationFailed` for a `name` that is not running."""
    store = store or StateStore()
    entries = find_running(name, None, store) if name is not None else listed(store)
    out: list[Target] = []
    for entry in sorted(entries, key=lambda e: (e.state.name, e.state.instance or "", e.state.node)):
        target = _target(entry)
        if target is not None:
            out.append(target)
    return out


def _target(entry: Listed) -> Target | None:
    state = entry.state
    if state.endpoint is None or state.instance_role == "router":
        return None  # a headless worker or the router: no engine API here
    target = Target(state.name, state.node, state.instance, state.instance_role or state.role, state.endpoint)
    if entry.orphaned:
        target.error = "orphaned: its supervisor is gone (see `ascendctl ps`)"
    return target


def identify(target: Target, fetch: Fetch) -> None:
    """The instance's vLLM version from its `/version`, and the metric names of that version's era."""
    try:
        data = loads_json(fetch(target.endpoint.rstrip("/") + "/version").encode())
    except (ScrapeFailed, JsonReadError) as exc:
        target.error = str(exc)
        return
    version = data.get("version") if isinstance(data, dict) else None
    if not isinstance(version, str):
        target.error = f"{target.endpoint}/version: no version in the answer"
        return
    try:
        era = metrics_names(version)
    except (EraError, ValueError) as exc:
        target.error = f"vLLM {version!r}: {exc}"
        return
    target.vllm, target.era, target.names = version, era.name, era.traits["names"]


def scrape(target: Target, fetch: Fetch, clock: Callable[[], float]) -> Scrape | None:
    """One scrape of the target's `/metrics` (None, with `target.error` set, when it fails)."""
    try:
        text = fetch(target.endpoint.rstrip("/") + "/metrics")
        return parse_scrape(text, target.names, clock())
    except (ScrapeFailed, MetricsError) as exc:
        target.error = str(exc)
        return None


def check_interval(seconds: float) -> None:
    """`--interval`: seconds between the two scrapes, more than 0 and at most an hour (exit 2 otherwise)."""
    if not 0 < seconds <= 3600:
        raise UserInputError(f"--interval {seconds:g}: give seconds between 0 and 3600")


def refresh(
    found: list[Target],
    seconds: float,
    *,
    fetch: Fetch = http_get,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> list[Target]:
    """One interval for every target: a first scrape (or the last one, in a watch), `seconds` of waiting, the
    second scrape; each up target gets its `result`."""
    check_interval(seconds)
    for t in found:
        if t.error is None and t.vllm is None:
            identify(t, fetch)
        if t.error is None and t.last is None:
            t.last = scrape(t, fetch, clock)
    sleep(seconds)
    for t in found:
        if t.error is not None or t.last is None:
            continue
        now = scrape(t, fetch, clock)
        if now is not None:
            t.result, t.last = interval(t.last, now), now
    return found


def status_report(found: list[Target], seconds: float) -> dict[str, object]:
    """The `status --json` document (see the module's contract)."""
    return {"schema": STATUS_JSON_SCHEMA, "interval_s": seconds, "instances": [t.to_dict() for t in found]}
