"""`ascendctl logs NAME` shows the latest run of the name by default, `--run N` one run (numbered as `--list` numbers
them), `--all` every run; the run boundaries are the supervisor's own run-opening lines."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ascendctl.cli import app
from ascendctl.run.log_runs import latest_run_start, log_runs
from ascendctl_engine.launcher import LogSink
from ascendctl_engine.state import StateStore
from ascendctl_engine.supervisor import ATTEMPT_LINE

runner = CliRunner()


def _write_runs(path: Path) -> None:
    """Three runs as the supervisor writes them (its sink stamps each line); run 2 restarts once (attempt 2)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as handle:
        handle.write("an engine line from before runs were marked\n")
    for run, attempts in (("aaaa1111", 1), ("bbbb2222", 2), ("cccc3333", 1)):
        sink = LogSink(path)
        for attempt in range(1, attempts + 1):
            sink.event(ATTEMPT_LINE.format(run=run, attempt=attempt), echo=False)
            with open(path, "a", encoding="utf-8") as handle:
                handle.write(f"engine {run} attempt {attempt} line 1\nengine {run} attempt {attempt} line 2\n")
        sink.close()


@pytest.fixture
def log() -> Path:
    path = StateStore().log_path("demo", 0)
    _write_runs(path)
    return path


def test_runs_are_split_at_each_runs_first_attempt(log: Path) -> None:
    with open(log, "rb") as handle:
        runs = log_runs(handle)
        assert [(r.number, r.run_id) for r in runs] == [(1, ""), (2, "aaaa1111"), (3, "bbbb2222"), (4, "cccc3333")]
        assert runs[-1].end == log.stat().st_size and all(a.end == b.start for a, b in itertools.pairwise(runs))
        assert latest_run_start(handle) == runs[-1].start


def test_logs_prints_the_latest_run_by_default(log: Path) -> None:
    out = runner.invoke(app, ["logs", "demo"]).stdout
    assert "cccc3333 attempt 1 line 2" in out and "bbbb2222" not in out and "before runs" not in out
    assert runner.invoke(app, ["logs", "demo", "--tail", "1"]).stdout == "engine cccc3333 attempt 1 line 2\n"


def test_logs_run_n_all_and_list(log: Path) -> None:
    listed = runner.invoke(app, ["logs", "demo", "--list"]).stdout.splitlines()
    assert len(listed) == 4 and "run bbbb2222" in listed[2] and "before runs were marked" in listed[0]
    second = runner.invoke(app, ["logs", "demo", "--run", "3"]).stdout
    assert "bbbb2222 attempt 2 line 2" in second and "aaaa1111" not in second and "cccc3333" not in second
    assert runner.invoke(app, ["logs", "demo", "--run", "3", "--tail", "1"]).stdout == (
        "engine bbbb2222 attempt 2 line 2\n"
    )
    every = runner.invoke(app, ["logs", "demo", "--all"]).stdout
    assert every == log.read_text()
    too_far = runner.invoke(app, ["logs", "demo", "--run", "9"])
    assert too_far.exit_code == 2 and "holds 4 run(s)" in too_far.output
    both = runner.invoke(app, ["logs", "demo", "--run", "1", "--all"])
    assert both.exit_code == 2


def test_the_latest_run_is_found_from_the_end_across_blocks(tmp_path: Path) -> None:
    lines = [b"x" * 100 + b"\n"] * 50
    marker = f"[ascendctl 2026-12-07T00:00:00+00:00] {ATTEMPT_LINE.format(run='dddd4444', attempt=1)}\n".encode()
    restart = marker.replace(b"attempt 1", b"attempt 2")
    path = tmp_path / "x.log"
    path.write_bytes(b"".join(lines) + marker + b"".join(lines) + restart + b"".join(lines))
    expected = path.read_bytes().index(marker)
    with open(path, "rb") as handle:
        for block in (7, 64, 101, 4096):
            assert latest_run_start(handle, block=block) == expected, block  # a restart is no new run
        assert latest_run_start(handle, floor=expected + 1, block=64) is None
