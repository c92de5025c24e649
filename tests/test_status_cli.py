"""`ascendctl status` through the CLI: instances from the state store, scraped over HTTP on 127.0.0.1 from a small
server that replays real `/metrics` texts of the CPU engine (tests/fixtures/metrics/); the `--json` shape pinned."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

import ascendctl.run.status as status_module
from ascendctl.cli import app
from ascendctl_engine.state import StateStore
from tests.state_records import dead_pid, record

FIXTURES = Path(__file__).parent / "fixtures" / "metrics"
runner = CliRunner()


def store() -> StateStore:
    made = StateStore(warn=lambda _: None)
    made.ensure()
    return made


class Replay(http.server.BaseHTTPRequestHandler):
    texts: list[bytes] = []
    seen_auth: list[str | None] = []

    def do_GET(self) -> None:
        type(self).seen_auth.append(self.headers.get("Authorization"))
        if self.path == "/version":
            body = b'{"version": "0.32.0"}'
        elif self.path == "/metrics" and self.texts:
            body = self.texts.pop(0)
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def engine() -> Iterator[str]:
    Replay.texts = [(FIXTURES / f"cpu-0.32.0-{w}.prom").read_bytes() for w in ("idle", "load")]
    Replay.seen_auth = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Replay)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_status_json_shape_against_a_replayed_engine(engine: str) -> None:
    store().update(record("demo", endpoint=engine, health_url=f"{engine}/health"))
    result = runner.invoke(app, ["status", "demo", "--json", "--interval", "0.2"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert set(report) == {"schema", "interval_s", "instances"} and report["schema"] == 1
    [row] = report["instances"]
    assert set(row) == {
        "name", "node", "instance", "role", "endpoint", "up", "error", "vllm", "era", "interval_s", "running",
        "waiting", "kv_cache_usage_pct", "prompt_tokens_per_s", "generation_tokens_per_s", "preemptions", "ttft_ms",
        "tpot_ms", "observations",
    }  # fmt: skip
    assert (row["up"], row["running"], row["waiting"], row["era"]) == (True, 8.0, 0.0, "request-tpot")
    assert row["generation_tokens_per_s"] > 0 and set(row["ttft_ms"]) == {"p50", "p99"}
    assert row["ttft_ms"]["p50"] == pytest.approx(357.143, abs=1e-3)  # see tests/test_status.py
    assert Replay.seen_auth and set(Replay.seen_auth) == {None}  # /metrics and /version need no key: none is sent


def test_status_table_and_a_down_instance_exits_1(engine: str) -> None:
    records = store()
    records.update(record("demo", endpoint=engine, health_url=f"{engine}/health"))
    records.update(record("gone", endpoint="http://127.0.0.1:9", health_url="http://127.0.0.1:9/health"))
    result = runner.invoke(app, ["status", "--interval", "0.1"], env={"COLUMNS": "150"})
    assert result.exit_code == 1, result.output
    assert "demo" in result.stdout and "down" in result.stdout and "gone" in result.stdout


def test_status_without_deployments_and_with_a_wrong_name() -> None:
    result = runner.invoke(app, ["status"])
    assert (result.exit_code, result.stdout.strip()) == (0, "no deployments running")
    result = runner.invoke(app, ["status", "nosuch"])
    assert result.exit_code == 1 and "no running deployment named 'nosuch'" in result.output


def test_status_refuses_watch_with_json_and_a_bad_interval(engine: str) -> None:
    store().update(record("demo", endpoint=engine, health_url=f"{engine}/health"))
    assert runner.invoke(app, ["status", "--watch", "--json"]).exit_code == 2
    result = runner.invoke(app, ["status", "demo", "--interval", "0"])
    assert result.exit_code == 2 and "--interval" in result.output


def test_status_leaves_out_a_stale_record() -> None:
    store().update(record("stale", pid=dead_pid()))
    result = runner.invoke(app, ["status", "--json"])
    assert result.exit_code == 0
    assert json.loads(result.stdout)["instances"] == []  # --json: the report, with no instance


def test_watch_refreshes_until_ctrl_c_and_exits_0(engine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    store().update(record("demo", endpoint=engine, health_url=f"{engine}/health"))
    real = status_module.refresh
    calls: list[int] = []

    def refresh_then_interrupt(found: list[status_module.Target], seconds: float) -> list[status_module.Target]:
        calls.append(1)
        if len(calls) > 1:
            raise KeyboardInterrupt
        return real(found, seconds)

    monkeypatch.setattr(status_module, "refresh", refresh_then_interrupt)
    result = runner.invoke(app, ["status", "demo", "--watch", "--interval", "0.1"], env={"COLUMNS": "150"})
    assert result.exit_code == 0, result.output
    assert len(calls) == 2 and "demo" in result.stdout and "357.1/" in result.stdout


@pytest.mark.parametrize("width", [80, None], ids=["80-columns", "pipe"])
def test_status_table_keeps_every_header_whole_at_80_columns_and_in_a_pipe(width: int | None) -> None:
    """No header is cut (`R…  WA…`), no figure is wrapped; the instance's long label wraps instead."""
    import io

    from rich.console import Console

    from ascendctl.cli.status import COLUMNS, _view
    from ascendctl.run.metrics import Interval
    from ascendctl.run.status import Target

    load = Interval(2.0, 12, 3, 45.5, 1234.5, 567.8, 0, {"p50": 123.4, "p99": 4567.8}, {"p50": 12.3, "p99": 45.6}, {})
    target = Target("qwen3-235b-a22b-w8a8-a2", 0, "decode-0", "decode", "http://127.0.0.1:1", result=load)
    out = io.StringIO()  # not a terminal: rich sizes a pipe at 80 columns unless told otherwise
    Console(file=out, width=width, highlight=False).print(_view([target]))
    text = out.getvalue()
    assert max(map(len, text.splitlines())) <= 80 and "…" not in text
    for header in COLUMNS:
        for word in header.split():
            assert word in text, word
    for figure in ("1234.5", "567.8", "123.4/4567.8", "12.3/45.6"):
        assert figure in text
