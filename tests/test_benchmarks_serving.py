"""The serving benchmarks' own logic (no engine is started; the figures themselves are not asserted)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parent.parent
BENCH = REPO / "benchmarks"


def load(name: str) -> ModuleType:
    """A script of benchmarks/ as a module (they import their shared module `servebench` by name)."""
    if name in sys.modules:
        return sys.modules[name]
    if str(BENCH) not in sys.path:
        sys.path.append(str(BENCH))
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is created
    spec.loader.exec_module(module)
    return module


# The keys of a `vllm bench serve --save-result` JSON we read (vLLM vllm/benchmarks/serve.py @ v0.32.0).
RESULT = {
    "num_prompts": 128,
    "completed": 126,
    "failed": 2,
    "duration": 4.0,
    "request_throughput": 31.5,
    "output_throughput": 2016.0,
    "total_token_throughput": 4032.0,
    "median_ttft_ms": 80.5,
    "p99_ttft_ms": 300.25,
    "median_tpot_ms": 5.5,
    "p99_tpot_ms": 9.0,
    "median_itl_ms": 4.0,
    "median_e2el_ms": 420.0,
    "ttfts": [0.1],
}


def test_summary_reads_the_saved_result() -> None:
    summary = load("servebench").summary_from_result(RESULT)
    assert summary["completed"] == 126
    assert summary["failed"] == 2
    assert summary["output_throughput"] == 2016.0
    assert summary["median_ttft_ms"] == 80.5
    assert summary["p99_tpot_ms"] == 9.0
    assert "ttfts" not in summary


def test_summary_counts_failures_without_the_failed_key() -> None:
    older = {k: v for k, v in RESULT.items() if k != "failed"}
    assert load("servebench").summary_from_result(older)["failed"] == 2


def test_summary_rejects_a_result_without_figures() -> None:
    from ascendctl.core.errors import OperationFailed

    with pytest.raises(OperationFailed, match="output_throughput"):
        load("servebench").summary_from_result({"completed": 1})


def test_bench_argv_is_loopback_random_and_bounded(tmp_path: Path) -> None:
    sb = load("servebench")
    plan = sb.NodePlan(
        name="x",
        argv=["/e/bin/vllm", "serve", "/m"],
        vllm=Path("/e/bin/vllm"),
        env={},
        health_url="http://127.0.0.1:9000/health",
        base_url="http://127.0.0.1:9000",
        served_name="tiny",
        model_dir=Path("/m"),
    )
    argv = sb.bench_argv(plan, sb.LoadSpec(num_prompts=64, concurrency=32, input_len=16, output_len=8), tmp_path, "r")
    assert argv[:3] == ["/e/bin/vllm", "bench", "serve"]

    def flag(name: str) -> str:
        return argv[argv.index(name) + 1]

    assert flag("--base-url") == "http://127.0.0.1:9000"
    assert flag("--dataset-name") == "random"
    assert (flag("--num-prompts"), flag("--max-concurrency")) == ("64", "32")
    assert (flag("--random-input-len"), flag("--random-output-len")) == ("16", "8")
    assert flag("--tokenizer") == "/m"
    assert flag("--result-dir") == str(tmp_path)
    assert "--ignore-eos" in argv


def test_client_env_drops_proxies(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("http_proxy", "http://proxy:3128")
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy:3128")
    env = load("servebench").client_env()
    assert not {"http_proxy", "HTTPS_PROXY"} & set(env)
    assert "127.0.0.1" in env["NO_PROXY"]


def test_arms_alternate() -> None:
    order = load("serve_overhead").arm_order(3)
    assert [arm for _, arm in order] == ["ascendctl", "by hand", "by hand", "ascendctl", "ascendctl", "by hand"]
    assert [rep for rep, _ in order] == [1, 1, 2, 2, 3, 3]


def test_concurrency_levels() -> None:
    demo = load("demo_throughput")
    assert demo.parse_levels("1, 8,32") == [1, 8, 32]
    for bad in ("", "0", "4,-1"):
        with pytest.raises(ValueError):
            demo.parse_levels(bad)
