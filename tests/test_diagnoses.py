"""The diagnosis catalog (`engine/ascendctl_engine/data/diagnoses.yaml`) and `ascendctl diagnose`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from ascendctl.cli import app
from ascendctl_engine.phases import (
    FAILURE_PHASES,
    ID_PATTERN,
    UNKNOWN_PHASE,
    CatalogError,
    FailurePattern,
    PhaseTracker,
    catalog,
    diagnose,
    failure_phase,
    parse_catalog,
)

REPO = Path(__file__).resolve().parents[1]
LOGS = REPO / "tests" / "fixtures" / "vllm_logs"
CATALOG_FILE = REPO / "engine" / "ascendctl_engine" / "data" / "diagnoses.yaml"

runner = CliRunner()
ENTRIES = catalog()


def _good_entry(**changes: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "id": "log.test.thing",
        "patterns": ["boom"],
        "cause": "c",
        "fix": "f",
        "source": "s",
        "examples": ["boom"],
    }
    entry.update(changes)
    return entry


# --- the catalog -------------------------------------------------------------------------------------------


def test_catalog_loads_and_is_large_enough() -> None:
    assert len(ENTRIES) >= 40
    ids = [e.key for e in ENTRIES]
    assert len(ids) == len(set(ids))
    assert all(ID_PATTERN.match(i) for i in ids)
    assert catalog() is ENTRIES  # loaded once


def test_catalog_file_is_plain_safe_yaml() -> None:
    document = yaml.safe_load(CATALOG_FILE.read_text(encoding="utf-8"))
    assert parse_catalog(document) == ENTRIES


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.key)
def test_every_entry_is_complete(entry: FailurePattern) -> None:
    assert entry.cause and entry.fix and entry.source
    assert entry.examples, "every entry needs at least one example line"
    assert any(ch.isdigit() or ch in "§#" for ch in entry.source) or "." in entry.source


EXAMPLES = [(e, example) for e in ENTRIES for example in e.examples]
# A line that begins each failure phase (the markers `failure_phase` reads; where vLLM prints them: phases.py).
PHASE_OPENERS = {
    "loading": "(EngineCore pid=1) INFO 07-14 06:30:19 [model_runner_v1.py:3718] Starting to load model /models/m...",
    "profiling": "(EngineCore pid=1) INFO 07-14 06:31:00 [default_loader.py:501] Loading weights took 31.02 seconds",
    "capture": "(EngineCore pid=1) INFO 07-14 06:32:00 [kv_cache_utils.py:2327] NPU KV cache size: 296,576 tokens, "
    "Maximum concurrency for 8,192 tokens per request: 36.20x",
    "serving": "INFO:     Application startup complete.",
    "unknown": "(APIServer pid=1) INFO 11-29 07:10:00 [x.py:1] something normal",
}


@pytest.mark.parametrize(("entry", "example"), EXAMPLES, ids=[f"{e.key}[{i}]" for i, (e, _) in enumerate(EXAMPLES)])
def test_every_example_is_diagnosed_as_its_entry_first(entry: FailurePattern, example: str) -> None:
    # in a log that failed in the entry's first phase (an entry without `phases` applies in every one)
    phase = entry.phases[0] if entry.phases else UNKNOWN_PHASE
    assert entry.matches(example)
    first = next(e for e in ENTRIES if e.applies_in(phase) and e.matches(example))
    assert first.key == entry.key, f"{example!r} is caught first by {first.key}"
    lines = [PHASE_OPENERS[phase], example, "Traceback ..."]
    assert failure_phase(lines) == phase
    found = diagnose(lines)
    assert found[0].key == entry.key and found[0].phase == phase
    assert found[0].line == example.strip() and found[0].line_no == 2


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"id": "hccl_init"}, "log.<area>.<name>"),
        ({"id": "log.HCCL.x"}, "log.<area>.<name>"),
        ({"patterns": []}, "empty"),
        ({"patterns": ["("]}, "bad pattern"),
        ({"cause": " "}, "non-empty"),
        ({"releases": "latest"}, "PEP 440"),
        ({"severity": "high"}, "unknown keys"),
        ({"examples": "boom"}, "list"),
        ({"phases": ["warmup"]}, "`phases` must name some of"),
        ({"phases": []}, "`phases` must name some of"),
        ({"phases": "capture"}, "list"),
    ],
)
def test_bad_entries_are_rejected(change: dict[str, Any], message: str) -> None:
    with pytest.raises(CatalogError, match=message.replace(".", r"\.").replace("<", ".").replace(">", ".")):
        parse_catalog({"schema": 1, "entries": [_good_entry(**change)]})


def test_missing_key_and_duplicates_are_rejected() -> None:
    entry = _good_entry()
    del entry["fix"]
    with pytest.raises(CatalogError, match="`fix` is missing"):
        parse_catalog({"schema": 1, "entries": [entry]})
    with pytest.raises(CatalogError, match="duplicate"):
        parse_catalog({"schema": 1, "entries": [_good_entry(), _good_entry()]})
    with pytest.raises(CatalogError, match="schema"):
        parse_catalog({"entries": []})


# --- release filtering ----------------------------------------------------------------------------------------


def test_release_filtering() -> None:
    line = "additional_config.enable_sleep_mode_extra_cleanup has been removed. Use additional_config.rl_config.x"
    assert [d.key for d in diagnose([line])] == ["log.config.removed-ascend-key"]
    assert [d.key for d in diagnose([line], release="v0.12.0rc1")] == ["log.config.removed-ascend-key"]
    assert [d.key for d in diagnose([line], release="0.13.0")] == ["log.config.removed-ascend-key"]
    assert diagnose([line], release="v0.11.0") == []
    assert [d.key for d in diagnose(["Alloc sq cq fail"], release="v0.9.1")] == ["log.graph.alloc-sq-cq"]
    assert diagnose(["Alloc sq cq fail"], release="v0.13.0") == []
    # entries without `releases` apply to every release
    assert [d.key for d in diagnose(["OSError: [Errno 98] Address already in use"], release="v0.7.3")] == [
        "log.server.port-in-use"
    ]


# --- the recorded CPU logs keep today's diagnoses ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("log", "ids"),
    [
        ("cpu-0.32.0-wrong-model-path.log", ["log.model.not-found"]),
        ("cpu-0.32.0-port-in-use.log", ["log.server.port-in-use"]),
        ("cpu-0.32.0-eager-startup.log", []),
    ],
)
def test_recorded_cpu_logs(log: str, ids: list[str]) -> None:
    assert [d.key for d in diagnose((LOGS / log).read_text().splitlines())] == ids


# --- the phase a log failed in (issue 55) ------------------------------------------------------------------------
# NPU log excerpts under tests/fixtures/vllm_logs/npu-*.log, assembled from the lines vLLM and vllm-ascend print
# (each line's source: tests/fixtures/vllm_logs/README.md). One "NPU out of memory" gets the fix of its phase.


@pytest.mark.parametrize(
    ("log", "phase", "ids"),
    [
        ("npu-load-oom.log", "loading", ["log.memory.weights-oom", "log.engine.core-init-failed"]),
        ("npu-profile-no-kv-room.log", "profiling", ["log.kv-cache.no-room", "log.engine.core-init-failed"]),
        ("npu-capture-oom.log", "capture", ["log.graph.capture-oom", "log.engine.core-init-failed"]),
        ("npu-capture-507903.log", "capture", ["log.graph.capture-invalidated", "log.engine.core-init-failed"]),
        ("npu-serving-oom.log", "serving", ["log.memory.serving-oom"]),
        # the connector is imported while the engine core starts, before any phase marker
        ("npu-mooncake-missing.log", "unknown", ["log.deps.mooncake-missing", "log.engine.core-init-failed"]),
        ("cpu-0.32.0-eager-startup.log", "serving", []),
        ("cpu-0.32.0-port-in-use.log", "unknown", ["log.server.port-in-use"]),
    ],
)
def test_each_phase_gets_its_own_diagnosis(log: str, phase: str, ids: list[str]) -> None:
    lines = (LOGS / log).read_text().splitlines()
    assert failure_phase(lines) == phase
    found = diagnose(lines)
    assert [d.key for d in found] == ids
    assert all(d.phase == phase for d in found)
    # the tracker that fed the whole run agrees (the supervisor passes it: the tail may not show the marker)
    tracker = PhaseTracker(0.0)
    for i, line in enumerate(lines):
        tracker.feed(line, float(i))
    assert tracker.current_phase == phase


def test_the_capture_oom_fix_leads_with_capture_sizes_not_the_context() -> None:
    by_phase = {}
    for phase in ("loading", "capture", "serving", "profiling"):
        (found,) = diagnose([PHASE_OPENERS[phase], "torch.OutOfMemoryError: NPU out of memory."])
        by_phase[phase] = found
    capture = by_phase["capture"]
    assert capture.key == "log.graph.capture-oom"
    assert capture.fix.startswith("capture fewer or smaller sizes (`engine.graph.capture_sizes`")
    assert "engine.memory.device_utilization" in capture.fix and "engine.graph.mode: eager" in capture.fix
    assert "model.max_model_len" not in capture.fix
    assert by_phase["loading"].key == "log.memory.weights-oom" and "engine.parallel.tensor" in by_phase["loading"].fix
    assert "model.max_model_len" not in by_phase["loading"].fix
    assert by_phase["serving"].key == "log.memory.serving-oom"
    assert by_phase["profiling"].key == "log.memory.device-oom"
    # no marker: the generic entry, as before
    assert [d.key for d in diagnose(["torch.OutOfMemoryError: NPU out of memory."])] == ["log.memory.device-oom"]


def test_an_explicit_phase_wins_over_the_lines() -> None:
    # the supervisor diagnoses the last 200 lines, which may no longer hold the KV cache line
    line = "torch.OutOfMemoryError: NPU out of memory. Tried to allocate 512.00 MiB"
    assert [d.key for d in diagnose([line], phase="capture")] == ["log.graph.capture-oom"]
    assert [d.key for d in diagnose([PHASE_OPENERS["capture"], line], phase="loading")] == ["log.memory.weights-oom"]


def test_the_phase_is_read_from_the_last_engine_start() -> None:
    # a restart appends to the same log: the first run served, the second failed while loading
    first = (LOGS / "cpu-0.32.0-eager-startup.log").read_text().splitlines()
    second = (LOGS / "npu-load-oom.log").read_text().splitlines()
    assert failure_phase(first + second) == "loading"
    assert failure_phase([*second, "INFO:     Application startup complete."]) == "serving"


def test_phases_never_go_back() -> None:
    # with data parallelism a second engine core starts loading after the first sized its KV cache
    lines = [PHASE_OPENERS["capture"], PHASE_OPENERS["loading"]]
    assert failure_phase(lines) == "capture"
    tracker = PhaseTracker(0.0)
    for line in lines:
        tracker.feed(line, 0.0)
    assert tracker.current_phase == "capture"
    assert PhaseTracker(0.0).current_phase == "unknown" and set(PHASE_OPENERS) == set(FAILURE_PHASES)


def test_every_phase_entry_has_an_example_and_a_generic_fallback() -> None:
    for entry in ENTRIES:
        assert set(entry.phases) <= set(FAILURE_PHASES)
    # the OOM lines are covered in every phase, by exactly one entry each
    line = "torch.OutOfMemoryError: NPU out of memory."
    for phase in FAILURE_PHASES:
        assert len([e for e in ENTRIES if e.applies_in(phase) and e.matches(line)]) == 1, phase


def test_cli_text_and_json_say_the_phase() -> None:
    result = runner.invoke(app, ["diagnose", str(LOGS / "npu-capture-oom.log")])
    assert result.exit_code == 1, result.output
    assert "failed in: graph capture / warm-up (phase capture)" in result.stdout
    assert result.stdout.index("log.graph.capture-oom") < result.stdout.index("log.engine.core-init-failed")
    report = json.loads(runner.invoke(app, ["diagnose", str(LOGS / "npu-load-oom.log"), "--json"]).stdout)
    assert report["phase"] == "loading" and report["matches"][0]["id"] == "log.memory.weights-oom"


@pytest.mark.parametrize(
    ("code", "key"),
    [
        ("207005", "log.graph.capture-memory"),
        ("207008", "log.graph.capture-streams"),
        ("507015", "log.graph.mte-out-of-range"),
        ("507903", "log.graph.capture-invalidated"),
        ("500002", "log.graph.capture-failed"),  # any other code (made up here): the generic capture entry
    ],
)
def test_each_capture_error_code_gets_one_diagnosis(code: str, key: str) -> None:
    # the form torch_npu raises (Ascend/pytorch v26.1.0-pytorch2.9.0:torch_npu/csrc/core/npu/NPUGraph.cpp:214, :240)
    for call in (
        "AclmdlRICaptureBegin(capture_stream_, capture_mode)",
        "AclmdlRICaptureEnd(capture_stream_, &model_ri)",
    ):
        line = f"RuntimeError: capture_begin:NPUGraph.cpp:214 NPU function error: c10_npu::acl::{call}, error code is "
        line += code
        assert [d.key for d in diagnose([line])] == [key]


def test_serve_failure_report_says_the_phase(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from ascendctl.cli.serve_output import print_failure

    print_failure([], diagnose((LOGS / "npu-capture-oom.log").read_text().splitlines()), tmp_path / "engine.log")
    err = capsys.readouterr().err
    assert "diagnosis [log.graph.capture-oom]" in err and "failed in: graph capture / warm-up" in err
    print_failure([], diagnose(["torch.OutOfMemoryError: NPU out of memory."]), tmp_path / "engine.log")
    assert "failed in" not in capsys.readouterr().err  # an unknown phase is not shown


# --- the command ------------------------------------------------------------------------------------------------


def test_cli_text_match_exits_1(tmp_path: Path) -> None:
    result = runner.invoke(app, ["diagnose", str(LOGS / "cpu-0.32.0-port-in-use.log")])
    assert result.exit_code == 1, result.output
    assert "log.server.port-in-use" in result.stdout
    assert "OSError: [Errno 98] Address already in use" in result.stdout
    assert "fix:" in result.stdout and "source:" in result.stdout and "(line " in result.stdout


def test_cli_nothing_matched_exits_0() -> None:
    result = runner.invoke(app, ["diagnose", str(LOGS / "cpu-0.32.0-eager-startup.log")])
    assert result.exit_code == 0, result.output
    assert "no known failure pattern matched" in result.stdout


def test_cli_json_shape(tmp_path: Path) -> None:
    log = tmp_path / "engine.log"
    log.write_bytes(b"INFO start\n\xff\xfe garbage\nRuntimeError: Failed to infer device type\n")
    result = runner.invoke(app, ["diagnose", str(log), "--json", "--release", "v0.13.0rc1"])
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout)
    assert report == {
        "schema": 1,
        "release": "v0.13.0rc1",
        "phase": "unknown",
        "matches": [
            {
                "id": "log.platform.device-type-unknown",
                "cause": report["matches"][0]["cause"],
                "fix": report["matches"][0]["fix"],
                "source": report["matches"][0]["source"],
                "line_no": 3,
                "line": "RuntimeError: Failed to infer device type",
            }
        ],
    }
    assert all(isinstance(report["matches"][0][k], str) and report["matches"][0][k] for k in ("cause", "fix", "source"))
    empty = runner.invoke(app, ["diagnose", str(LOGS / "cpu-0.32.0-eager-startup.log"), "--json"])
    assert empty.exit_code == 0
    assert json.loads(empty.stdout) == {"schema": 1, "release": None, "phase": "serving", "matches": []}


def test_cli_missing_or_unreadable_file_exits_2(tmp_path: Path) -> None:
    result = runner.invoke(app, ["diagnose", str(tmp_path / "nope.log")])
    assert result.exit_code == 2
    assert result.stderr.strip().count("\n") == 0 and "no such file" in result.stderr
    result = runner.invoke(app, ["diagnose", str(tmp_path)])  # a directory is not a regular file
    assert result.exit_code == 2 and "not a regular file" in result.stderr


def test_cli_bad_release_exits_2(tmp_path: Path) -> None:
    log = tmp_path / "engine.log"
    log.write_text("hello\n")
    result = runner.invoke(app, ["diagnose", str(log), "--release", "latest"])
    assert result.exit_code == 2 and "--release" in result.stderr
