"""`ascendctl bench` through the CLI with a stand-in load client (tests/bench_fakes.py: the real v0.32.0 help and
real saved results, returned by a process that records how it was called): `--url` + `--client`, the JSON on
stdout, `-o DIR`, the API key handed to the client and never printed, failed requests, usage errors, and
`--compare` with its tables, plots and the missing-matplotlib hint. The real engine run is in
tests/e2e/test_serve_e2e.py::test_smollm2_answers_paris."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import ascendctl.outputs
from ascendctl.cli import app
from tests.bench_fakes import TOO_LONG_RESULT, calls, make_client

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "profiles" / "cpu-demo.yaml"
URL = "http://127.0.0.1:9"  # nothing listens: the stand-in client never connects
runner = CliRunner()


def bench(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["bench", *args])
    return result.exit_code, result.stdout, result.stderr


def test_bench_url_prints_the_document_and_writes_it(tmp_path: Path) -> None:
    client = make_client(tmp_path / "env")
    code, out, err = bench(str(DEMO), "--url", URL, "--client", str(client), "--json", "-o", str(tmp_path / "o"))
    assert code == 0, err
    doc = json.loads(out)
    assert (doc["schema"], doc["kind"], doc["workload"]["name"]) == (1, "ascendctl-bench", "quick")
    assert doc["target"] == {"base_url": URL, "served_name": "smollm2", "client": str(client), "started_here": False}
    assert doc["points"][0]["metrics"]["completed"] == 16
    written = sorted((tmp_path / "o").glob("bench-cpu-demo-*.json"))
    assert len(written) == 1 and json.loads(written[0].read_text())["points"] == doc["points"]
    raw_dirs = [p for p in (tmp_path / "o").iterdir() if p.is_dir()]
    assert [p.name for p in raw_dirs[0].glob("*.json")] == ["64-32-4.json"]
    run = calls(client)[-1]["argv"]
    assert run[run.index("--base-url") + 1] == URL and run[run.index("--seed") + 1] == "0"


def test_bench_table_on_the_console(tmp_path: Path) -> None:
    client = make_client(tmp_path / "env")
    code, out, err = bench(str(DEMO), "--url", URL, "--client", str(client), "--workload", "64:32:4", "--seed", "3")
    assert code == 0, err
    assert "TTFT" in out and "E2E latency" in out and "16 completed, 0 failed" in out
    assert calls(client)[-1]["argv"][calls(client)[-1]["argv"].index("--seed") + 1] == "3"


@pytest.mark.parametrize("seed", ["2147483648", "99999999999999999999"])
def test_a_seed_the_load_client_cannot_take_is_refused_before_it_runs(tmp_path: Path, seed: str) -> None:
    # it was the client's ValueError ("Seed must be between 0 and 2**32 - 1") and its traceback, exit 1
    client = make_client(tmp_path / "env")
    code, _, err = bench(str(DEMO), "--url", URL, "--client", str(client), "--workload", "64:32:4", "--seed", seed)
    assert code == 2 and err == f"error: --seed {seed}: at most 2147483647 (the load client seeds numpy with it)\n"
    assert calls(client) == []


def test_the_api_key_reaches_the_client_and_is_never_printed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCH_KEY", "s3cret-value")
    client = make_client(tmp_path / "env")
    code, out, err = bench(
        str(DEMO), "--set", "server.api_key.env=BENCH_KEY", "--url", URL, "--client", str(client), "--json"
    )
    assert code == 0, err
    assert calls(client)[-1]["key"] == "s3cret-value"
    assert "s3cret-value" not in out + err
    assert json.loads(out)["plan"]["commands"][0]["env"]["VLLM_API_KEY"] == "<redacted>"


def test_failed_requests_are_reported_and_exit_1(tmp_path: Path) -> None:
    client = make_client(tmp_path / "env", result=TOO_LONG_RESULT)
    code, out, err = bench(str(DEMO), "--url", URL, "--client", str(client), "--workload", "2100:8:2", "--json")
    assert code == 1 and "2 request(s) failed" in err
    assert json.loads(out)["points"][0]["errors"] == [{"message": "Bad Request", "count": 2}]


def test_a_client_without_vllm_bench_is_named(tmp_path: Path) -> None:
    client = make_client(tmp_path / "env", mode="old")
    code, _, err = bench(str(DEMO), "--url", URL, "--client", str(client))
    assert code == 1 and "first appears in vLLM 0.8.0" in err and "Traceback" not in err


def test_without_an_engine_environment_it_says_how_to_install(tmp_path: Path) -> None:
    code, _, err = bench(str(DEMO), "--url", URL)
    assert code == 1 and "ascendctl engine install" in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "expected one PROFILE"),
        (("a.yaml", "b.yaml"), "expected one PROFILE"),
        (("--compare", "a.json"), "two or more bench documents"),
        ((str(DEMO), "--url", URL, "--goodput", "ttft"), "KEY:MILLISECONDS"),
        ((str(DEMO), "--url", URL, "--workload", "nope"), "not a named workload"),
        ((str(DEMO), "--url", "ftp://x"), "expected http://HOST:PORT"),
    ],
)
def test_usage_errors_are_exit_2(args: tuple[str, ...], message: str, tmp_path: Path) -> None:
    code, _, err = bench(*args, "--client", str(make_client(tmp_path / "env")))
    assert code == 2 and message in err, err


def two_runs(tmp_path: Path) -> list[str]:
    client = make_client(tmp_path / "env")
    paths = []
    for name, sets in (("seqs32", []), ("seqs2", ["--set", "engine.scheduler.max_num_seqs=2"])):
        code, out, err = bench(str(DEMO), *sets, "--url", URL, "--client", str(client), "--json")
        assert code == 0, err
        path = tmp_path / f"{name}.json"
        path.write_text(out)
        paths.append(str(path))
    return paths


def test_compare_tables_and_plots(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    paths = two_runs(tmp_path)
    code, out, err = bench("--compare", *paths)
    assert code == 0, err
    assert "TTFT p50 ms" in out and "(1.00×)" in out and "settings that differ" in out and "--max-num-seqs" in out
    code, out, err = bench("--compare", *paths, "--json", "-o", str(tmp_path / "plots"))
    assert code == 0, err
    comparison = json.loads(out)
    assert [r["name"] for r in comparison["runs"]] == ["seqs32", "seqs2"]
    assert {p.suffix for p in (tmp_path / "plots").iterdir()} == {".png", ".html", ".json"}
    png = next((tmp_path / "plots").glob("*.png")).read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n")


def test_compare_plots_without_matplotlib_say_how_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = two_runs(tmp_path)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib → ImportError
    monkeypatch.delitem(sys.modules, "ascendctl.outputs.bench_plot", raising=False)  # as in a fresh process
    monkeypatch.delattr(ascendctl.outputs, "bench_plot", raising=False)
    code, _, err = bench("--compare", *paths, "-o", str(tmp_path / "plots"))
    assert code == 1 and "pip install 'ascendctl[plot]'" in err and "Traceback" not in err, err
    assert not (tmp_path / "plots").exists()


def test_compare_refuses_a_file_that_is_not_a_bench_document(tmp_path: Path) -> None:
    other = tmp_path / "x.json"
    other.write_text("{}")
    code, _, err = bench("--compare", str(other), str(other))
    assert code == 2 and "not an `ascendctl bench` document" in err
