"""`ascendctl tune` through the CLI: `--suggest` (text and the JSON contract), the refusals that come before any
engine start (exit 2, one line each, naming the grid value), and a whole tune with a fake engine and benchmark in
place of `BenchStarter` (the table, `--json`, the tuned profile validating, exit 1 when no trial wins)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ascendctl.cli import build_app
from ascendctl.facts.launches import launch_index
from ascendctl.importer.launch_scripts import launch_scripts
from ascendctl.plan.workload import WorkloadPoint
from ascendctl.run.tune import bench_runner
from ascendctl.run.tune.goal import METRIC_NAMES, PointOutcome
from ascendctl.run.tune.trials import PointRunner
from ascendctl_engine.adapters.ascend_switches import SWITCHES

REPO = Path(__file__).resolve().parents[2]
runner = CliRunner()
app = build_app("tune")  # just the command under test (and `validate` below), as `ascendctl tune …` builds it


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    path = tmp_path / "demo.yaml"
    path.write_text((REPO / "profiles" / "cpu-demo.yaml").read_text())
    return path


class FakeStarter:
    """Stands in for `BenchStarter`: throughput grows with max_num_seqs, TTFT too."""

    started: list[list[str]] = []

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        FakeStarter.started = []

    @contextmanager
    def __call__(self, overrides: Sequence[str]) -> Iterator[PointRunner]:
        FakeStarter.started.append(list(overrides))
        seqs = int(overrides[0].split("=")[1])

        def run(point: WorkloadPoint) -> PointOutcome:
            metrics: dict[str, float | None] = dict.fromkeys(METRIC_NAMES, 5.0)
            metrics.update(output_tok_s=float(seqs), ttft_p99_ms=float(seqs))
            return PointOutcome(point, metrics, point.requests, 0)

        yield run


@pytest.fixture
def fake_bench(monkeypatch: pytest.MonkeyPatch) -> type[FakeStarter]:
    monkeypatch.setattr(bench_runner, "BenchStarter", FakeStarter)
    return FakeStarter


def test_suggest_text_and_json(demo: Path) -> None:
    text = runner.invoke(app, ["tune", str(demo), "--suggest"])
    assert text.exit_code == 0, text.output
    assert "--grid 'engine.scheduler.max_num_seqs=16,32,64'" in text.output
    shown = runner.invoke(app, ["tune", str(REPO / "profiles" / "qwen3-32b-w8a8-a2.yaml"), "--suggest", "--json"])
    assert shown.exit_code == 0, shown.output
    doc = json.loads(shown.output)
    assert set(doc) == {"schema", "profile", "backend", "release", "upstream", "grids"}
    assert doc["schema"] == 1 and doc["backend"] == "npu"
    assert set(doc["grids"][0]) == {"key", "values", "grid", "why", "restart"}
    assert "engine.graph.mode" in {g["key"] for g in doc["grids"]}


def test_suggest_offers_what_applies_to_the_model_upstreams_values_first() -> None:
    """A dense model gets no switch only MoE / MLA layers read; an MoE model at the same release does. The closest
    verified launch's values come first (read back from that launch's own argv)."""
    dense = json.loads(
        runner.invoke(app, ["tune", str(REPO / "profiles/qwen3-32b-w8a8-a2.yaml"), "--suggest", "--json"]).output
    )
    moe = json.loads(
        runner.invoke(app, ["tune", str(REPO / "profiles/qwen3-235b-a22b-w8a8-a2.yaml"), "--suggest", "--json"]).output
    )
    assert dense["release"] == moe["release"]
    keys = {g["key"] for g in dense["grids"]}
    assert not keys & {sw.path for sw in SWITCHES if sw.models}, "MoE / MLA switches offered for a dense model"
    assert {g["key"] for g in moe["grids"]} & {sw.path for sw in SWITCHES if "moe" in sw.models}
    tag, file, line = dense["upstream"].split(":")
    [launch] = [x for x in launch_index() if (x.tag, x.file, x.line) == (tag, file, int(line))]
    argv = list(launch_scripts(launch)[0].argv)
    sizes = json.loads(argv[argv.index("--compilation-config") + 1])["cudagraph_capture_sizes"]
    grids = {g["key"]: g for g in dense["grids"]}
    assert grids["engine.graph.capture_sizes"]["values"][0] == "[" + ",".join(map(str, sizes)) + "]"
    assert dense["upstream"] in grids["engine.graph.capture_sizes"]["why"]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--grid", "engine.scheduler.max_num_seqs=16,-1"], "--grid engine.scheduler.max_num_seqs=-1 is refused:"),
        (["--grid", "engine.graph.mode=eager,sideways"], "--grid engine.graph.mode=sideways is refused:"),
        (["--grid", "concurrency=0"], "--grid concurrency=0: concurrency takes"),
        (["--grid", "concurrency=1", "--slo", "ttft=5"], "--slo ttft=5: expected NAME=MILLISECONDS"),
        (["--grid", "concurrency=1", "--goal", "fast"], "--goal fast: expected one of throughput, ttft, tpot"),
        (["--grid", "concurrency=1", "--workload", "1:2"], "--workload 1:2"),
        (["--grid", "concurrency=1", "--budget-min", "0"], "--budget-min 0: minutes above 0"),
        ([], "tune needs at least one --grid"),
    ],
)
def test_refusals_before_any_start_are_exit_2(
    demo: Path, fake_bench: type[FakeStarter], args: list[str], says: str
) -> None:
    result = runner.invoke(app, ["tune", str(demo), *args])
    assert result.exit_code == 2, result.output
    assert says in result.output and "Traceback" not in result.output
    assert fake_bench.started == []


def test_existing_tuned_profile_is_not_overwritten_without_o(demo: Path, fake_bench: type[FakeStarter]) -> None:
    existing = demo.with_name("demo.tuned.yaml")
    existing.write_text("mine\n")
    result = runner.invoke(app, ["tune", str(demo), "--grid", "engine.scheduler.max_num_seqs=16,32"])
    assert result.exit_code == 2 and "pass -o OUT" in result.output
    assert existing.read_text() == "mine\n" and fake_bench.started == []
    again = runner.invoke(
        app, ["tune", str(demo), "--grid", "engine.scheduler.max_num_seqs=16,32", "-o", str(existing)]
    )
    assert again.exit_code == 0, again.output
    assert "max_num_seqs: 32" in existing.read_text()


def test_tune_prints_the_table_and_writes_a_valid_profile(demo: Path, fake_bench: type[FakeStarter]) -> None:
    result = runner.invoke(
        app, ["tune", str(demo), "--grid", "engine.scheduler.max_num_seqs=16,48", "--grid", "concurrency=2,4"]
    )
    assert result.exit_code == 0, result.output
    assert fake_bench.started == [["engine.scheduler.max_num_seqs=16"], ["engine.scheduler.max_num_seqs=48"]]
    out = result.output
    assert "engine start 1 of 2" in out and "trial 4/4" in out  # progress
    assert "WINNER" in out and "winner: trial 3: engine.scheduler.max_num_seqs=48 concurrency=2" in out
    tuned = demo.with_name("demo.tuned.yaml")
    valid = runner.invoke(build_app("validate"), ["validate", str(tuned)])
    assert valid.exit_code == 0, valid.output
    assert json.loads(demo.with_name("demo.tuned.json").read_text())["winner"]["index"] == 3


def test_json_report_and_exit_1_without_a_winner(demo: Path, fake_bench: type[FakeStarter]) -> None:
    result = runner.invoke(
        app,
        ["tune", str(demo), "--grid", "engine.scheduler.max_num_seqs=16,32", "--slo", "ttft_p99_ms=8", "--json"],
    )
    assert result.exit_code == 1
    assert "no trial met the goal's conditions" in result.stderr
    report = json.loads(demo.with_name("demo.tuned.json").read_text())
    assert json.loads(result.stdout) == report  # stdout is that one document (the error is on stderr)
    assert report["schema"] == 1 and report["winner"] is None
    assert [t["candidate"] for t in report["trials"]] == [False, False]
    assert not demo.with_name("demo.tuned.yaml").exists()
