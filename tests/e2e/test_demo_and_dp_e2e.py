"""End to end with the real vLLM CPU engine: the deployments that need an engine start of their own (the shared
tiny server of test_serve_e2e is not enough), in a module of their own so that `make unit` runs them on the other
worker while test_serve_e2e's shared server runs its tests:

- the embedded default's engine, as `ascendctl init prepared:smollm2-135m-instruct` writes it on this accelerator-less
  host (the same engine command as `profiles/cpu-demo.yaml` but its served name: tests/test_init.py), answers
  "Paris", its fit equals the engine's own KV cache size, and `ascendctl bench` / `bench --compare` measure it while
  it runs (found through its state: no second start);
- data parallel over two "nodes" on 127.0.0.1 (`--node 1` headless, then `--node 0`).

Helpers (`Home`, `free_port`, `tiny_profile`, `post`, the fit/KV readers) are test_serve_e2e's.
"""

from __future__ import annotations

import base64
import json
from html.parser import HTMLParser
from pathlib import Path

import pytest
from test_serve_e2e import Home, engine_kv_report, fit_json, free_port, get, make_home, post, tiny_profile

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory, engine_data_dir: Path, cpu_engine: object, tiny_model: Path) -> Home:
    return make_home(tmp_path_factory.mktemp("e2e-demo-home"), engine_data_dir)


def bench_the_running_demo(home: Home, demo: Path, port: int, name: str) -> None:
    """`ascendctl bench` of the running embedded default (found through its state: same profile and --set), the
    quick workload with the engine environment's own `vllm bench serve`; then `bench --compare` of that run with
    itself, with its PNG and self-contained HTML page."""
    out = home.root / "bench"
    result = home.cli(
        "bench", str(demo), "--set", f"server.port={port}", "--workload", "quick", "--json", "-o", str(out)
    )
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)  # stdout is the document alone (progress and notes go to stderr)
    assert (doc["schema"], doc["kind"], doc["target"]["started_here"]) == (1, "ascendctl-bench", False)
    assert doc["target"]["base_url"] == f"http://127.0.0.1:{port}" and doc["plan"]["name"] == name
    (point,) = doc["points"]
    metrics = point["metrics"]
    assert metrics["completed"] == point["point"]["requests"] and metrics["failed"] == 0 and point["errors"] == []
    assert 0 < metrics["ttft_ms"]["p50"] <= metrics["ttft_ms"]["p99"] and metrics["tpot_ms"]["p50"] > 0
    assert metrics["output_tokens"] == point["point"]["requests"] * point["point"]["output_len"]  # --ignore-eos
    (saved,) = out.glob(f"bench-{name}-*.json")
    assert (saved.with_suffix("") / point["raw_result"]).is_file()  # the client's own JSON beside the document
    compared = home.cli("bench", "--compare", str(saved), str(saved), "-o", str(out / "plots"))
    assert compared.returncode == 0, compared.stderr
    assert "(1.00×)" in compared.stdout
    png = next((out / "plots").glob("*.png")).read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 5_000
    page = next((out / "plots").glob("*.html")).read_text()
    images: list[str] = []

    class Page(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            images.extend(value or "" for name, value in attrs if tag == "img" and name == "src")
            assert tag not in ("script", "link") and not any(name == "href" for name, _ in attrs)

    Page().feed(page)
    assert images and base64.b64decode(images[0].removeprefix("data:image/png;base64,")) == png


def test_smollm2_answers_paris(home: Home, smollm2_model: Path) -> None:
    port = free_port()
    demo = home.root / "init" / "smollm2.yaml"
    demo.parent.mkdir(exist_ok=True)
    written = home.cli("init", "prepared:smollm2-135m-instruct", "-o", str(demo))
    assert written.returncode == 0 and "backend cpu" in written.stderr, written.stdout + written.stderr
    name = "smollm2-135m-instruct"
    started = home.cli("serve", str(demo), "--set", f"server.port={port}", "--detach")
    assert started.returncode == 0, started.stdout + started.stderr
    try:
        status, raw = get(f"http://127.0.0.1:{port}/v1/models")
        served = json.loads(raw)["data"][0]["id"]  # no served_name: vLLM serves the model by its path
        body = {
            "model": served,
            "messages": [{"role": "user", "content": "What is the capital of France?"}],
            "max_tokens": 32,
            "temperature": 0,
        }
        status, raw = post(f"http://127.0.0.1:{port}/v1/chat/completions", body)
        assert status == 200, raw
        assert "Paris" in json.loads(raw)["choices"][0]["message"]["content"]
        # the embedded default's fit equals the engine's own KV cache size (the tiny model's test has the details)
        tokens, _, concurrency = engine_kv_report(home, name)
        fit = fit_json(home, demo)
        assert fit["kv_tokens"] == tokens and fit["max_concurrency"] == pytest.approx(concurrency, abs=0.01)
        bench_the_running_demo(home, demo, port, name)
    finally:
        stopped = home.cli("stop", name, "--timeout", "60")
    assert stopped.returncode == 0


def test_two_node_data_parallel_on_one_host(home: Home, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """DP 2 over two "nodes" on 127.0.0.1: `--node 1` (headless worker) then `--node 0` (head + API server)."""
    from ascendctl.plan.planner import plan_profile
    from ascendctl.schema.loader import load_profile

    port, rpc = free_port(), free_port()
    profile = tmp_path / "dp2.yaml"
    profile.write_text(
        tiny_profile(tmp_path, port, name="e2e-dp2").read_text()
        + f"""network:
  nodes:
    - address: 127.0.0.1
    - address: 127.0.0.1
  dp_rpc_port: {rpc}
"""
    )
    profile.write_text(
        profile.read_text()
        .replace("target:\n  backend: cpu\n", "target:\n  backend: cpu\n  nodes: 2\n")
        .replace("engine:\n", "engine:\n  parallel:\n    data: 2\n    data_per_node: 1\n", 1)
    )
    monkeypatch.setenv("ASCENDCTL_HOME", str(home.root))
    commands = plan_profile(load_profile(profile)).commands  # the planner's head + headless worker
    assert [(c.role, c.health_url is None) for c in commands] == [("head", False), ("worker", True)]

    worker = home.cli(
        "serve", str(profile), "--node", "1", "--detach", "--set", 'runtime.env.VLLM_CPU_OMP_THREADS_BIND="1"'
    )
    assert worker.returncode == 0, worker.stdout + worker.stderr
    try:
        head = home.cli(
            "serve", str(profile), "--node", "0", "--detach", "--set", 'runtime.env.VLLM_CPU_OMP_THREADS_BIND="0"'
        )
        assert head.returncode == 0, head.stdout + head.stderr
        rows = home.ps()
        assert sorted((r["node"], r["role"]) for r in rows) == [(0, "head"), (1, "worker")]
        body = {"model": "tiny", "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 8}
        for _ in range(4):  # spread over both ranks
            status, raw = post(f"http://127.0.0.1:{port}/v1/chat/completions", body)
            assert status == 200, raw
    finally:
        stopped = home.cli("stop", "e2e-dp2", "--timeout", "90")
    assert stopped.returncode == 0, stopped.stderr
    assert "e2e-dp2 (node 0): stopped" in stopped.stdout and "e2e-dp2 (node 1): stopped" in stopped.stdout
    assert home.ps() == []
