"""`ascendctl tune`'s core with fakes where the engine and the benchmark would run: the grid (parsing, refusals,
restart-minimizing order, a property test over random grids), SLOs and the goal, the trial loop (failed starts,
failed runs, the budget), the checks before anything starts, the tuned profile (validates, carries the winner) and
the report's shape."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ascendctl.core.errors import OperationFailed, UserInputError
from ascendctl.plan.planner import plan_profile, require_startable
from ascendctl.plan.types import Plan
from ascendctl.plan.workload import NAMED, Workload, WorkloadPoint
from ascendctl.run.tune.goal import (
    GOALS,
    METRIC_NAMES,
    SLO_NAMES,
    PointOutcome,
    best,
    goal_named,
    judge,
    parse_slo,
    parse_slos,
)
from ascendctl.run.tune.grid import Axis, apply_bench, ordered, parse_axis, parse_grid, split_values
from ascendctl.run.tune.prepare import GridValueRefused
from ascendctl.run.tune.session import TuneRequest, prepare, run, trial_rows
from ascendctl.run.tune.trials import PointRunner, run_trials
from ascendctl.run.tune.tuned import TUNE_SCHEMA, outputs_for
from ascendctl.schema.loader import load_profile
from ascendctl.schema.profile import Profile

REPO = Path(__file__).resolve().parents[1]
QUICK = NAMED["quick"]

# ------------------------------------------------------------------------------------------------ grid


def test_values_split_outside_brackets() -> None:
    assert split_values("16,32") == ["16", "32"]
    assert split_values("[1,2,4],[1,2,4,8], {a: 1, b: 2}") == ["[1,2,4]", "[1,2,4,8]", "{a: 1, b: 2}"]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("engine.scheduler.max_num_seqs", "expected KEY=V1,V2"),
        ("engine.scheduler.max_num_seqs=", "expected KEY=V1,V2"),
        ("max_num_seqs=16,32", "neither a benchmark setting"),
        ("engine.scheduler.max_num_seqs=16,,32", "an empty value"),
        ("engine.scheduler.max_num_seqs=16,16", "16 is given twice"),
        ("concurrency=0,4", "concurrency=0: concurrency takes a whole number"),
        ("concurrency=4.5", "concurrency=4.5"),
        ("request_rate=-1", "request_rate=-1: request_rate takes requests per second"),
        ("request_rate=fast", "request_rate=fast"),
    ],
)
def test_bad_grid_is_refused_naming_it(text: str, says: str) -> None:
    with pytest.raises(UserInputError, match="--grid") as caught:
        parse_axis(text)
    assert says in str(caught.value)


def test_a_key_twice_and_too_many_combinations_are_refused() -> None:
    with pytest.raises(UserInputError, match="given twice"):
        parse_grid(["concurrency=1,2", "concurrency=4"])
    many = ",".join(str(i) for i in range(1, 21))
    with pytest.raises(UserInputError, match="combinations"):
        parse_grid([f"engine.scheduler.max_num_seqs={many}", f"concurrency={many}"])
    with pytest.raises(UserInputError, match="at least one --grid"):
        parse_grid([])


def test_benchmark_keys_need_no_restart() -> None:
    axes = parse_grid(["concurrency=1,4", "engine.scheduler.max_num_seqs=16,32", "request_rate=inf,2"])
    groups = ordered(axes)
    assert [g.engine for g in groups] == [
        (("engine.scheduler.max_num_seqs", "16"),),
        (("engine.scheduler.max_num_seqs", "32"),),
    ]
    assert all(len(g.trials) == 4 for g in groups)
    assert [t.restart for t in groups[0].trials] == [True, False, False, False]
    assert [t.index for g in groups for t in g.trials] == list(range(1, 9))
    assert groups[0].trials[1].bench == (("concurrency", "1"), ("request_rate", "2"))


def test_no_engine_key_is_one_start_of_the_profile_as_written() -> None:
    groups = ordered(parse_grid(["concurrency=1,2,4"]))
    assert len(groups) == 1 and groups[0].engine == ()
    assert [t.restart for t in groups[0].trials] == [True, False, False]


_values = st.lists(st.integers(1, 64).map(str), min_size=1, max_size=4, unique=True)
_axes = st.lists(
    st.tuples(st.sampled_from(["engine.a.x", "engine.a.y", "engine.b.z", "concurrency", "request_rate"]), _values),
    min_size=1,
    max_size=5,
    unique_by=lambda kv: kv[0],
)


@settings(max_examples=150, deadline=None)
@given(_axes)
def test_order_starts_each_engine_setting_once_and_runs_every_combination_once(
    pairs: list[tuple[str, list[str]]],
) -> None:
    axes = [Axis(k, tuple(v)) for k, v in pairs]
    groups = ordered(axes)
    trials = [t for g in groups for t in g.trials]
    engine_values = [len(a.values) for a in axes if a.engine]
    bench_values = [len(a.values) for a in axes if not a.engine]
    distinct_engine = 1
    for n in engine_values:
        distinct_engine *= n
    # every combination exactly once
    total = distinct_engine
    for n in bench_values:
        total *= n
    assert len({t.settings for t in trials}) == len(trials) == total
    # restarts: exactly one per distinct engine setting (the least any order can do), each setting contiguous
    assert sum(t.restart for t in trials) == len(groups) == distinct_engine
    seen: list[tuple[tuple[str, str], ...]] = []
    for t in trials:
        if t.restart:
            assert t.engine not in seen
            seen.append(t.engine)
        else:
            assert t.engine == seen[-1]
    assert [t.index for t in trials] == list(range(1, total + 1))


def test_benchmark_settings_apply_to_every_point() -> None:
    point = WorkloadPoint(64, 32, 4, 16)
    assert apply_bench(point, (("concurrency", "8"),)) == WorkloadPoint(64, 32, 8, 16)
    assert apply_bench(point, (("concurrency", "32"),)).requests == 32  # every slot used at least once
    assert apply_bench(point, (("request_rate", "2.5"),)).request_rate == 2.5
    assert apply_bench(WorkloadPoint(64, 32, 4, 16, 3.0), (("request_rate", "inf"),)).request_rate is None


# ------------------------------------------------------------------------------------------------ goal / SLO


def outcome(
    tok_s: float | None = 100.0, ttft: float = 50.0, tpot: float = 10.0, failed: int = 0, **extra: float
) -> PointOutcome:
    metrics: dict[str, float | None] = dict.fromkeys(METRIC_NAMES, 1.0)
    metrics.update(output_tok_s=tok_s, ttft_p99_ms=ttft, tpot_p99_ms=tpot, **extra)
    return PointOutcome(QUICK.points[0], metrics, 16 - failed, failed, ("boom",) if failed else ())


def test_slo_names_are_the_benchmarks_latency_figures() -> None:
    assert {"ttft_p99_ms", "tpot_p99_ms", "itl_p99_ms", "e2el_p99_ms", "ttft_p50_ms", "tpot_p90_ms"} <= set(SLO_NAMES)
    assert all(g.metric in METRIC_NAMES for g in GOALS.values())
    assert parse_slo("ttft_p99_ms=500").limit_ms == 500
    for bad in ("ttft_p98_ms=5", "ttft_p99_ms=0", "ttft_p99_ms=abc", "ttft_p99_ms", "throughput=5"):
        with pytest.raises(UserInputError, match="--slo"):
            parse_slo(bad)
    with pytest.raises(UserInputError, match="given twice"):
        parse_slos(["ttft_p99_ms=1", "ttft_p99_ms=2"])
    with pytest.raises(UserInputError, match="--goal"):
        goal_named("latency")


def test_judge_filters_by_slo_and_failed_requests() -> None:
    goal = GOALS["throughput"]
    slos = parse_slos(["ttft_p99_ms=100"])
    assert judge([outcome()], goal, slos) == (100.0, None)
    score, reason = judge([outcome(ttft=150.0)], goal, slos)
    assert score == 100.0 and reason is not None and "ttft_p99_ms 150.0 > 100" in reason
    score, reason = judge([outcome(failed=2)], goal, slos)
    assert score is None and reason is not None and "2 of 16 requests failed" in reason and "boom" in reason
    assert judge([outcome(tok_s=None)], goal, ())[1] == "the benchmark reported no output_tok_s at 64:32:4"


def test_score_is_the_worst_point() -> None:
    two = [outcome(tok_s=100.0, ttft=20.0), outcome(tok_s=60.0, ttft=90.0)]
    assert judge(two, GOALS["throughput"], ())[0] == 60.0
    assert judge(two, GOALS["ttft"], ())[0] == 90.0


def test_goal_picks_max_throughput_or_min_latency_first_measured_on_a_tie() -> None:
    scored = [(0, 10.0), (1, 30.0), (2, 30.0), (3, 5.0)]
    assert best(scored, GOALS["throughput"]) == 1
    assert best(scored, GOALS["ttft"]) == 3
    assert best([], GOALS["tpot"]) is None


# ------------------------------------------------------------------------------------------------ the trial loop


class FakeEngine:
    """Starts record their `--set` items; a point's throughput is a function of the settings; some fail."""

    def __init__(self, *, fail_start: Sequence[str] = (), fail_run: Sequence[str] = (), tick: float = 0.0) -> None:
        self.starts: list[list[str]] = []
        self.stops = 0
        self.runs: list[tuple[tuple[str, ...], WorkloadPoint]] = []
        self.fail_start = fail_start
        self.fail_run = fail_run
        self.now = 0.0
        self.tick = tick

    def clock(self) -> float:
        return self.now

    @contextmanager
    def __call__(self, overrides: Sequence[str]) -> Iterator[PointRunner]:
        self.starts.append(list(overrides))
        self.now += 10 * self.tick  # a start takes ten ticks
        if any(o in self.fail_start for o in overrides):
            raise OperationFailed("engine exited with code 1 during start-up")
        current = tuple(overrides)

        def run(point: WorkloadPoint) -> PointOutcome:
            self.runs.append((current, point))
            self.now += self.tick
            if any(o in self.fail_run for o in current):
                raise OperationFailed("vllm bench serve failed")
            seqs = next((int(o.split("=")[1]) for o in current if o.startswith("engine.scheduler.max_num_seqs=")), 8)
            tok_s = float(seqs * point.concurrency)
            return outcome(tok_s=tok_s, ttft=float(seqs))

        try:
            yield run
        finally:
            self.stops += 1


def test_trials_run_in_order_one_start_per_engine_setting() -> None:
    groups = ordered(parse_grid(["engine.scheduler.max_num_seqs=16,32", "concurrency=1,4"]))
    engine = FakeEngine()
    lines: list[str] = []
    out = run_trials(groups, QUICK, GOALS["throughput"], (), engine, clock=engine.clock, progress=lines.append)
    assert engine.starts == [["engine.scheduler.max_num_seqs=16"], ["engine.scheduler.max_num_seqs=32"]]
    assert engine.stops == 2 and out.engine_starts == 2
    assert [t.spec.index for t in out.trials] == [1, 2, 3, 4]
    assert [r[1].concurrency for r in engine.runs] == [1, 4, 1, 4]
    assert out.winner is not None and out.winner.spec.label == "engine.scheduler.max_num_seqs=32 concurrency=4"
    assert any(line.startswith("trial 4/4") for line in lines)


def test_slo_decides_against_the_fastest() -> None:
    groups = ordered(parse_grid(["engine.scheduler.max_num_seqs=16,32"]))
    engine = FakeEngine()
    out = run_trials(groups, QUICK, GOALS["throughput"], parse_slos(["ttft_p99_ms=20"]), engine, clock=engine.clock)
    assert out.winner is not None and out.winner.spec.label == "engine.scheduler.max_num_seqs=16"
    assert not out.trials[1].candidate and "ttft_p99_ms 32.0 > 20" in (out.trials[1].reason or "")


def test_a_failed_start_or_run_is_no_candidate_and_the_tune_goes_on() -> None:
    groups = ordered(parse_grid(["engine.scheduler.max_num_seqs=16,32,64", "concurrency=1,2"]))
    engine = FakeEngine(fail_start=["engine.scheduler.max_num_seqs=64"], fail_run=["engine.scheduler.max_num_seqs=32"])
    out = run_trials(groups, QUICK, GOALS["throughput"], (), engine, clock=engine.clock)
    assert out.engine_starts == 3 and len(out.trials) == 6
    statuses = [t.status for t in out.trials]
    assert statuses == ["measured", "measured", "bench-failed", "bench-failed", "engine-failed", "engine-failed"]
    assert "the engine did not start: engine exited" in (out.trials[4].reason or "")
    assert "the benchmark failed: vllm bench serve failed" in (out.trials[2].reason or "")
    assert out.winner is not None and out.winner.spec.index == 2
    rows = trial_rows(out, GOALS["throughput"])
    assert [r["verdict"] for r in rows][:2] == ["candidate", "WINNER"]


def test_budget_stops_starting_trials_from_measured_times() -> None:
    # a start costs 10 ticks, a trial 1: after the first group (2 trials, 12 ticks) the next start would end at 24
    groups = ordered(parse_grid(["engine.scheduler.max_num_seqs=16,32,64", "concurrency=1,2"]))
    engine = FakeEngine(tick=1.0)
    out = run_trials(groups, QUICK, GOALS["throughput"], (), engine, budget_s=20.0, clock=engine.clock)
    assert out.engine_starts == 1 and [t.spec.index for t in out.trials] == [1, 2]
    assert [s.index for s in out.skipped] == [3, 4, 5, 6]
    generous = FakeEngine(tick=1.0)
    assert (
        len(run_trials(groups, QUICK, GOALS["throughput"], (), generous, budget_s=1e6, clock=generous.clock).trials)
        == 6
    )


# ------------------------------------------------------------------------------------------------ the whole tune


def _profile(tmp_path: Path) -> Path:
    path = tmp_path / "demo.yaml"
    path.write_text((REPO / "profiles" / "cpu-demo.yaml").read_text())
    return path


def _plan(profile: Profile) -> Plan:
    plan = plan_profile(profile)  # pure planning: no host
    require_startable(plan)
    return plan


def test_a_refused_grid_value_is_exit_2_before_any_start(tmp_path: Path) -> None:
    profile = _profile(tmp_path)
    with pytest.raises(GridValueRefused) as caught:
        prepare(TuneRequest(profile, ("engine.scheduler.max_num_seqs=16,0",)), _plan)
    assert caught.value.exit_code == 2
    assert caught.value.lines()[0] == "--grid engine.scheduler.max_num_seqs=0 is refused:"
    with pytest.raises(GridValueRefused, match=r"engine\.graph\.mode=sideways"):
        prepare(TuneRequest(profile, ("engine.graph.mode=eager,sideways", "engine.scheduler.max_num_seqs=8,16")), _plan)
    with pytest.raises(GridValueRefused, match=r"engine\.scheduler\.max_num_seqz=16"):
        prepare(TuneRequest(profile, ("engine.scheduler.max_num_seqz=16,32",)), _plan)


def test_outputs_refuse_to_overwrite_without_o(tmp_path: Path) -> None:
    profile = _profile(tmp_path)
    assert outputs_for(profile, None) == (tmp_path / "demo.tuned.yaml", tmp_path / "demo.tuned.json")
    (tmp_path / "demo.tuned.yaml").write_text("kept\n")
    with pytest.raises(UserInputError, match="exists; pass -o OUT"):
        prepare(TuneRequest(profile, ("engine.scheduler.max_num_seqs=16,32",)), _plan)
    assert (tmp_path / "demo.tuned.yaml").read_text() == "kept\n"
    assert outputs_for(profile, tmp_path / "demo.tuned.yaml")[0] == tmp_path / "demo.tuned.yaml"
    with pytest.raises(UserInputError, match="the input profile"):
        outputs_for(profile, profile)


def test_tune_writes_a_valid_tuned_profile_and_the_report(tmp_path: Path) -> None:
    profile = _profile(tmp_path)
    request = TuneRequest(
        profile, ("engine.scheduler.max_num_seqs=16,64", "concurrency=2,4"), "throughput", ("ttft_p99_ms=1000",),
        overrides=("server.port=8123",),
    )  # fmt: skip
    prepared = prepare(request, _plan)
    engine = FakeEngine()
    report = run(prepared, engine, clock=engine.clock)
    assert report.tuned == tmp_path / "demo.tuned.yaml"
    tuned = load_profile(report.tuned)  # what `ascendctl validate` does
    assert tuned.engine.scheduler.max_num_seqs == 64
    assert tuned.server.port == 8123  # the tune's own --set ran in every trial
    assert tuned.model.source == "prepared:smollm2-135m-instruct"
    text = report.tuned.read_text()
    assert text.startswith("# Tuned by `ascendctl tune` from demo.yaml")
    assert "SLOs: ttft_p99_ms<=1000" in text and "engine.scheduler.max_num_seqs=64 concurrency=4" in text
    doc = json.loads(report.report.read_text())
    assert doc == report.document
    assert doc["schema"] == TUNE_SCHEMA and doc["kind"] == "tune"
    assert set(doc) == {
        "schema", "kind", "profile", "overrides", "goal", "slo", "grid", "engine_keys", "bench_keys", "workload",
        "budget_min", "engine_starts", "seconds", "trials", "skipped", "winner", "tuned_profile", "plans",
    }  # fmt: skip
    assert [t["index"] for t in doc["trials"]] == [1, 2, 3, 4]
    assert [t["restart"] for t in doc["trials"]] == [True, False, True, False]
    assert doc["engine_starts"] == 2
    assert doc["winner"] == {
        "index": 4,
        "settings": {"engine.scheduler.max_num_seqs": "64", "concurrency": "4"},
        "score": 256.0,
    }
    trial = doc["trials"][0]
    assert set(trial) == {
        "index", "settings", "engine_settings", "bench_settings", "restart", "status", "score", "candidate",
        "reason", "seconds", "start_seconds", "points",
    }  # fmt: skip
    assert set(trial["points"][0]) == {"point", "label", "metrics", "completed", "failed", "errors"}
    assert set(trial["points"][0]["metrics"]) == set(METRIC_NAMES)
    assert "--max-num-seqs" in doc["plans"]["engine.scheduler.max_num_seqs=64"]["argv"]


def test_no_winner_writes_the_report_and_no_profile(tmp_path: Path) -> None:
    profile = _profile(tmp_path)
    prepared = prepare(TuneRequest(profile, ("engine.scheduler.max_num_seqs=16,32",), slos=("ttft_p99_ms=1",)), _plan)
    engine = FakeEngine()
    report = run(prepared, engine, clock=engine.clock)
    assert report.tuned is None and not (tmp_path / "demo.tuned.yaml").exists()
    doc = json.loads(report.report.read_text())
    assert doc["winner"] is None and all(not t["candidate"] for t in doc["trials"])


def test_workload_points_all_run_per_trial(tmp_path: Path) -> None:
    two = Workload("two", (WorkloadPoint(16, 8, 2, 4), WorkloadPoint(32, 8, 4, 8)))
    groups = ordered(parse_grid(["engine.scheduler.max_num_seqs=16"]))
    engine = FakeEngine()
    out = run_trials(groups, two, GOALS["throughput"], (), engine, clock=engine.clock)
    assert [p.input_len for _, p in engine.runs] == [16, 32]
    assert len(out.trials[0].outcomes) == 2 and out.trials[0].score == 32.0  # the worst point: 16 × 2
