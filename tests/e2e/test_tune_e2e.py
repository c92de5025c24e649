"""End to end with the real vLLM CPU engine: `ascendctl tune` of the tiny model over two values of
`engine.scheduler.max_num_seqs` with the `quick` workload, as a user runs it (`python -m ascendctl tune …`).

Exactly two engine starts (one per value; the tune starts and stops each itself through `ascendctl bench`'s
engine start) and two `vllm bench serve` runs. Asserted: structure and consistency, never absolute speed — trials
in measured order, one restart each, every request completed, the winner is the best candidate, the tuned profile
validates and carries the winner's value, nothing is left running. The helpers (`Home`, `free_port`,
`tiny_profile`) are test_serve_e2e's.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_serve_e2e import Home, free_port, make_home, tiny_profile

from ascendctl.schema.loader import load_profile

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory, engine_data_dir: Path, cpu_engine: object, tiny_model: Path) -> Home:
    return make_home(tmp_path_factory.mktemp("tune-home"), engine_data_dir)


def test_tune_two_max_num_seqs_writes_a_valid_profile(home: Home, tmp_path: Path) -> None:
    profile = tiny_profile(tmp_path, free_port(), name="e2e-tune")
    grid = "engine.scheduler.max_num_seqs=4,8"
    result = home.cli("tune", str(profile), "--grid", grid, "--workload", "quick", "--json", timeout=1200)
    assert result.returncode == 0, result.stderr[-3000:]
    doc = json.loads(result.stdout)
    assert doc["schema"] == 1 and doc["engine_starts"] == 2 and doc["skipped"] == []
    trials = doc["trials"]
    assert [t["index"] for t in trials] == [1, 2]  # measured order
    assert [t["settings"] for t in trials] == [
        {"engine.scheduler.max_num_seqs": "4"},
        {"engine.scheduler.max_num_seqs": "8"},
    ]
    assert [t["restart"] for t in trials] == [True, True]
    for trial in trials:
        assert trial["status"] == "measured" and trial["candidate"], trial["reason"]
        (point,) = trial["points"]
        assert point["failed"] == 0 and point["completed"] == point["point"]["requests"] == 16
        assert point["metrics"]["output_tok_s"] > 0 and trial["score"] == point["metrics"]["output_tok_s"]
        assert 0 < point["metrics"]["ttft_p50_ms"] <= point["metrics"]["ttft_p99_ms"]
        assert trial["start_seconds"] > 0
    best = max(trials, key=lambda t: t["score"])
    assert doc["winner"]["index"] == best["index"]
    # progress while it ran, on stderr
    assert "engine start 1 of 2" in result.stderr and "trial 2/2" in result.stderr
    # the tuned profile: next to the input, valid, the winner's value applied
    tuned = tmp_path / "e2e-tune.tuned.yaml"
    assert doc["tuned_profile"] == str(tuned)
    valid = home.cli("validate", str(tuned))
    assert valid.returncode == 0, valid.stderr
    assert load_profile(tuned).engine.scheduler.max_num_seqs == int(best["settings"]["engine.scheduler.max_num_seqs"])
    assert json.loads((tmp_path / "e2e-tune.tuned.json").read_text()) == doc
    # both engines were stopped
    assert home.ps() == []
