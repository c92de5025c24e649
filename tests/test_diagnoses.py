"""The diagnosis catalog (`engine/ascendctl_engine/data/diagnoses.yaml`) and `ascendctl diagnose`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from ascendctl.cli import app
from ascendctl_engine.phases import ID_PATTERN, CatalogError, FailurePattern, catalog, diagnose, parse_catalog

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


@pytest.mark.parametrize(("entry", "example"), EXAMPLES, ids=[f"{e.key}[{i}]" for i, (e, _) in enumerate(EXAMPLES)])
def test_every_example_is_diagnosed_as_its_entry_first(entry: FailurePattern, example: str) -> None:
    assert entry.matches(example)
    first = next(e for e in ENTRIES if e.matches(example))
    assert first.key == entry.key, f"{example!r} is caught first by {first.key}"
    lines = ["(APIServer pid=1) INFO 11-29 07:10:00 [x.py:1] something normal", example, "Traceback ..."]
    found = diagnose(lines)
    assert found[0].key == entry.key
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
    assert empty.exit_code == 0 and json.loads(empty.stdout) == {"schema": 1, "release": None, "matches": []}


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
