"""The bench report: reading real `vllm bench serve --save-result --save-detailed` JSON (captured from the CPU
engine serving profiles/cpu-demo.yaml), the bench document's shape (schema 1, as docs/guides/bench-and-tune.md lists
it), the comparison's ratios and setting differences, and the PNG / self-contained HTML plots."""

from __future__ import annotations

import base64
import copy
import hashlib
import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from ascendctl.core.errors import OperationFailed, UserInputError
from ascendctl.outputs.bench_report import compare, compare_tables, differences_table, point_table, settings_diff
from ascendctl.plan.planner import plan_profile
from ascendctl.plan.workload import WorkloadPoint, parse_workload
from ascendctl.run.bench import (
    BENCH_SCHEMA,
    BenchTarget,
    bench_document,
    metrics_from_result,
    read_bench_document,
    read_point_result,
)
from ascendctl.run.bench.results import LATENCY_METRICS, LATENCY_STATS, errors_from_result
from ascendctl.schema.loader import load_profile
from ascendctl_engine.host.facts import CpuInfo, HostFacts
from tests.bench_fakes import QUICK_RESULT, TOO_LONG_RESULT, result_json

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "profiles" / "cpu-demo.yaml"
QUICK = parse_workload("quick")

# The documented shape (docs/guides/bench-and-tune.md): change both together.
TOP_KEYS = {
    "schema", "kind", "tool", "started_at", "finished_at", "profile", "plan", "host", "target", "benchmark",
    "workload", "points",
}  # fmt: skip
PROFILE_KEYS = {"path", "sha256", "overrides"}
PLAN_KEYS = {"name", "backend", "hardware", "release", "model", "commands", "services"}
COMMAND_KEYS = {"instance", "role", "node", "argv", "env"}
HOST_KEYS = {"backend", "family", "soc_version", "device_count", "driver", "cann", "cuda_driver", "gpu_count", "cpu"}
TARGET_KEYS = {"base_url", "served_name", "client", "started_here"}
BENCHMARK_KEYS = {"client", "dataset", "endpoint", "ignore_eos", "percentile_metrics", "percentiles", "goodput"}
POINT_KEYS = {"label", "point", "metrics", "errors", "raw_result"}
METRIC_KEYS = {
    "ttft_ms", "tpot_ms", "itl_ms", "e2el_ms", "output_tok_s", "total_tok_s", "req_s", "goodput_req_s",
    "completed", "failed", "duration_s", "input_tokens", "output_tokens",
}  # fmt: skip


def test_metrics_are_the_saved_results_figures() -> None:
    raw = result_json()
    metrics = metrics_from_result(raw)
    for metric in LATENCY_METRICS:
        for stat in LATENCY_STATS:
            assert metrics.latency_ms[metric][stat] == raw[f"{stat}_{metric}_ms"]
    assert metrics.output_tok_s == raw["output_throughput"] and metrics.req_s == raw["request_throughput"]
    assert metrics.total_tok_s == raw["total_token_throughput"] and metrics.duration_s == raw["duration"]
    assert (metrics.completed, metrics.failed) == (raw["num_prompts"], 0)
    assert metrics.goodput_req_s is None  # no --goodput in that run
    assert metrics.latency_ms["ttft"]["p50"] <= metrics.latency_ms["ttft"]["p99"]  # type: ignore[operator]


def test_failed_requests_keep_their_messages_and_have_no_latency() -> None:
    raw = result_json(TOO_LONG_RESULT)
    result = read_point_result(WorkloadPoint(2100, 8, 2, 2), TOO_LONG_RESULT)
    assert (result.metrics.completed, result.metrics.failed) == (0, raw["failed"])
    assert result.errors == (("Bad Request", 2),)
    assert all(v is None for m in LATENCY_METRICS for v in result.metrics.latency_ms[m].values())


def test_errors_are_counted_and_successes_skipped() -> None:
    assert errors_from_result({"errors": ["", "timeout", "", "timeout", "Bad Request"]}) == (
        ("timeout", 2),
        ("Bad Request", 1),
    )
    assert errors_from_result({}) == ()


def test_an_older_result_without_failed_counts_it_and_nan_is_null(tmp_path: Path) -> None:
    raw = result_json()
    del raw["failed"]
    raw["num_prompts"] = 18
    path = tmp_path / "r.json"
    path.write_text(json.dumps(raw).replace(str(raw["p99_itl_ms"]), "NaN"))
    result = read_point_result(QUICK.points[0], path)
    assert result.metrics.failed == 2
    assert result.metrics.latency_ms["itl"]["p99"] is None


def test_a_result_without_figures_is_exit_1(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text('{"completed": 3}')
    with pytest.raises(OperationFailed, match="output_throughput"):
        read_point_result(QUICK.points[0], path)


def host() -> HostFacts:
    return HostFacts(backend="cpu", cpu=CpuInfo(arch="x86_64", cores=2, memory_total_mb=24000))


def document(*overrides: str, key_env: bool = False) -> dict[str, Any]:
    sets = list(overrides) + (["server.api_key.env=BENCH_TEST_KEY"] if key_env else [])
    plan = plan_profile(load_profile(DEMO, sets))
    result = read_point_result(QUICK.points[0], QUICK_RESULT)
    target = BenchTarget("http://127.0.0.1:8000", "smollm2", plan.deployment.model.resolved, Path("/e/bin/vllm"))
    doc = bench_document(DEMO, sets, plan, QUICK, [result], host(), target=target, started_here=False)
    printed: dict[str, Any] = json.loads(json.dumps(doc))  # what --json prints and --compare reads
    return printed


def test_document_shape_is_the_documented_one() -> None:
    doc = document()
    assert set(doc) == TOP_KEYS
    assert (doc["schema"], doc["kind"]) == (BENCH_SCHEMA, "ascendctl-bench")
    assert set(doc["profile"]) == PROFILE_KEYS and set(doc["plan"]) == PLAN_KEYS
    assert all(set(c) == COMMAND_KEYS for c in doc["plan"]["commands"])
    assert set(doc["host"]) == HOST_KEYS and set(doc["target"]) == TARGET_KEYS
    assert set(doc["benchmark"]) == BENCHMARK_KEYS
    assert doc["workload"]["name"] == "quick" and len(doc["points"]) == len(QUICK.points)
    point = doc["points"][0]
    assert set(point) == POINT_KEYS and set(point["metrics"]) == METRIC_KEYS
    assert set(point["metrics"]["ttft_ms"]) == {"mean", "p50", "p90", "p99"}
    assert point["point"] == QUICK.points[0].to_json() and point["raw_result"] == QUICK_RESULT.name


def test_document_pins_the_profile_and_the_plan() -> None:
    doc = document("server.port=8123")
    assert doc["profile"]["sha256"] == hashlib.sha256(DEMO.read_bytes()).hexdigest()
    assert doc["profile"]["overrides"] == ["server.port=8123"]
    assert doc["plan"]["release"]["version"] and doc["plan"]["backend"] == "cpu"
    argv = doc["plan"]["commands"][0]["argv"]
    assert argv[argv.index("--port") + 1] == "8123"


def test_document_never_holds_the_api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCH_TEST_KEY", "s3cret-value")
    doc = document(key_env=True)
    assert doc["plan"]["commands"][0]["env"]["VLLM_API_KEY"] == "<redacted>"
    assert "s3cret-value" not in json.dumps(doc)


def test_documents_read_back_and_others_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    path.write_text(json.dumps(document()))
    assert read_bench_document(path)["points"][0]["label"] == "64:32:4"
    path.write_text(json.dumps({**document(), "schema": 99}))
    with pytest.raises(UserInputError, match="schema 99"):
        read_bench_document(path)
    path.write_text(json.dumps({"schema": 1}))
    with pytest.raises(UserInputError, match="not an `ascendctl bench` document"):
        read_bench_document(path)


def test_point_table_shows_every_stat_and_failures() -> None:
    doc = document()
    table = point_table(doc["points"][0])
    assert table.columns == ("ms", "mean", "p50", "p90", "p99")
    assert [row[0] for row in table.rows] == ["TTFT", "TPOT", "ITL", "E2E latency"]
    assert "16 completed, 0 failed" in table.notes[0]
    failing = copy.deepcopy(doc["points"][0])
    failing["errors"] = [{"message": "Bad Request", "count": 2}]
    assert point_table(failing).notes[-1] == "failed ×2: Bad Request"


def slower(doc: dict[str, Any], factor: float) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    metrics = out["points"][0]["metrics"]
    metrics["ttft_ms"]["p50"] *= factor
    metrics["output_tok_s"] /= factor
    return out


def test_compare_ratios_are_against_the_first_run() -> None:
    a = document()
    b = slower(document("engine.scheduler.max_num_seqs=2"), 2.0)
    comparison = compare([a, b], ["a", "b"])
    rows = {r["key"]: r for r in comparison["points"][0]["rows"]}
    assert rows["ttft_ms.p50"]["ratios"] == [pytest.approx(1.0), pytest.approx(2.0)]
    assert rows["output_tok_s"]["ratios"][1] == pytest.approx(0.5)
    assert rows["ttft_ms.p50"]["lower_is_better"] and not rows["output_tok_s"]["lower_is_better"]
    assert rows["goodput_req_s"]["ratios"] == [None, None]  # no goodput asked: no ratio of nothing
    table = compare_tables(comparison)[0]
    assert table.columns == ("", "a", "b")
    assert next(r for r in table.rows if r[0] == "TTFT p50 ms")[2].endswith("(2.00×)")


def test_settings_diff_names_what_changed() -> None:
    diffs = {
        d["setting"]: d["values"] for d in settings_diff([document(), document("engine.scheduler.max_num_seqs=2")])
    }
    assert diffs["serve.node0.argv.--max-num-seqs"] == ["32", "2"]
    assert diffs["profile.overrides"] == ["", "engine.scheduler.max_num_seqs=2"]
    assert not any(key.startswith("release.") for key in diffs)
    same = compare([document(), document()], ["a", "a#2"])
    assert same["differences"] == [] and differences_table(same).notes


def test_points_missing_from_a_run_are_blank() -> None:
    a, b = document(), document()
    b["points"][0]["label"] = "other"
    comparison = compare([a, b], ["a", "b"])
    assert [p["label"] for p in comparison["points"]] == ["64:32:4", "other"]
    assert comparison["points"][0]["rows"][0]["values"][1] is None


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.images: list[str] = []
        self.links: list[str] = []
        self.tables = 0
        self.cells: list[str] = []
        self._in_cell = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "img":
            self.images.append(values.get("src") or "")
        for name in ("href", "src"):
            if values.get(name) and tag != "img":
                self.links.append(values[name] or "")
        self.tables += tag == "table"
        self._in_cell = tag in ("td", "th")
        self.links += [tag] if tag in ("script", "link", "iframe") else []

    def handle_data(self, data: str) -> None:
        if self._in_cell:
            self.cells.append(data)


def test_plot_png_and_a_self_contained_html_page() -> None:
    pytest.importorskip("matplotlib")
    from ascendctl.outputs.bench_plot import html_page, plot_png

    comparison = compare([document(), slower(document("engine.scheduler.max_num_seqs=2"), 2.0)], ["a", "b"])
    png = plot_png(comparison)
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and 5_000 < len(png) < 500_000
    page = _Page()
    page.feed(html_page(comparison, png))
    assert page.links == []  # nothing fetched from anywhere
    assert len(page.images) == 1 and page.images[0].startswith("data:image/png;base64,")
    assert base64.b64decode(page.images[0].split(",", 1)[1]) == png
    assert page.tables == 2 and "TTFT p50 ms" in page.cells and "serve.node0.argv.--max-num-seqs" in page.cells
