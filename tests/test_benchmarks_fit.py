"""benchmarks/fit_accuracy.py (`make bench-fit`): the published-log comparison runs, its table in docs/ is current,
and the rows it reproduces exactly stay exact. Accuracy is reported by the script, not gated here."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[1]


def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fit_accuracy", REPO / "benchmarks" / "fit_accuracy.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["fit_accuracy"] = module
    spec.loader.exec_module(module)
    return module


def test_the_table_in_docs_is_what_the_bench_prints() -> None:
    b = bench()
    lines = b.table(b.cpu_rows() + b.published())
    doc = (REPO / "docs" / "memory-fit.md").read_text(encoding="utf-8")
    assert "\n".join(lines) in doc, "docs/memory-fit.md is stale: run make bench-fit"


def test_every_miss_is_explained_and_anchors_hold() -> None:
    b = bench()
    outcomes = {o.row: o for o in b.cpu_rows() + b.published()}
    assert all(o.hit or o.why not in ("", "no explanation recorded") for o in outcomes.values())
    assert outcomes["cpu-0.32.0-tiny-random"].config == "524,288 (+0.0%)"  # the CPU engine: exact
    # rows whose token counts the shapes reproduce to the block: within 1 % with the logged weights
    for row in ("qwen3-32b-tp8-fdo-v0112-dev", "qwen3-1_7b-910b1-eager-ngram-len32", "glm-5-2x910b2-dp-tp8-ep-mtp"):
        assert outcomes[row].hit, outcomes[row]
