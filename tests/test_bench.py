"""`ascendctl bench`'s load client: the `vllm bench serve` argv, its environment, the flag check against the
installed client's own help (real v0.32.0 help text), the missing-`vllm bench` error, and one point run through
a stand-in client process that returns a real saved result (tests/bench_fakes.py). No engine is started."""

from __future__ import annotations

from pathlib import Path

import pytest

from ascendctl.core.errors import OperationFailed, UserInputError
from ascendctl.plan.workload import WorkloadPoint, parse_workload
from ascendctl.run.bench import BenchTarget, bench_argv, check_client, check_goodput, client_env, run_point
from ascendctl.run.bench.client import require_flags
from ascendctl.run.bench.flags import BENCH_CLI_SINCE, ClientFlags, options_from_help
from tests.bench_fakes import HELP_ALL, TOO_LONG_RESULT, calls, make_client

POINT = WorkloadPoint(2048, 256, 16, 64)


def target(client: Path = Path("/env/bin/vllm"), key: dict[str, str] | None = None) -> BenchTarget:
    return BenchTarget("http://127.0.0.1:8000", "smollm2", "/models/smollm2", client, key or {})


def flag(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


def test_argv_is_the_fixed_measurement(tmp_path: Path) -> None:
    argv = bench_argv(target(), POINT, 7, tmp_path, "r.json", goodput=["ttft:500", "tpot:50"])
    assert argv[:3] == ["/env/bin/vllm", "bench", "serve"]
    assert flag(argv, "--base-url") == "http://127.0.0.1:8000"
    assert (flag(argv, "--model"), flag(argv, "--tokenizer")) == ("smollm2", "/models/smollm2")
    assert flag(argv, "--dataset-name") == "random"
    assert (flag(argv, "--random-input-len"), flag(argv, "--random-output-len")) == ("2048", "256")
    assert (flag(argv, "--num-prompts"), flag(argv, "--max-concurrency"), flag(argv, "--seed")) == ("64", "16", "7")
    assert flag(argv, "--percentile-metrics") == "ttft,tpot,itl,e2el"
    assert flag(argv, "--metric-percentiles") == "50,90,99"
    assert {"--ignore-eos", "--save-result", "--save-detailed"} <= set(argv)
    assert (flag(argv, "--result-dir"), flag(argv, "--result-filename")) == (str(tmp_path), "r.json")
    assert argv[argv.index("--goodput") + 1 :][:2] == ["ttft:500", "tpot:50"]
    assert "--request-rate" not in argv  # as fast as the concurrency allows


def test_request_rate_is_passed_when_the_point_has_one(tmp_path: Path) -> None:
    point = parse_workload("quick").points[0]
    rated = WorkloadPoint(point.input_len, point.output_len, point.concurrency, point.requests, 2.5)
    assert flag(bench_argv(target(), rated, 0, tmp_path, "r.json"), "--request-rate") == "2.5"


@pytest.mark.parametrize("pair", ["ttft", "ttft:", "latency:5", "ttft:-1", "ttft:fast", "tpot:nan"])
def test_bad_goodput_is_refused_before_any_run(pair: str) -> None:
    with pytest.raises(UserInputError, match="KEY:MILLISECONDS"):
        check_goodput([pair])


def test_goodput_pairs_pass_through() -> None:
    assert check_goodput(["ttft:500", "e2el:2000.5"]) == ["ttft:500", "e2el:2000.5"]


def test_client_env_is_loopback_offline_and_carries_the_key() -> None:
    inherited = {"http_proxy": "http://p:3128", "HTTPS_PROXY": "http://p:3128", "OPENAI_API_KEY": "stale", "A": "1"}
    env = client_env(target(key={"OPENAI_API_KEY": "s3cret"}), inherited)
    assert not {"http_proxy", "HTTPS_PROXY"} & set(env)
    assert "127.0.0.1" in env["NO_PROXY"] and env["HF_HUB_OFFLINE"] == "1"
    assert env["OPENAI_API_KEY"] == "s3cret" and env["A"] == "1"
    assert "OPENAI_API_KEY" not in client_env(target(), inherited)  # no key: none leaks in from the caller


def test_the_key_is_not_in_the_targets_repr() -> None:
    assert "s3cret" not in repr(target(key={"OPENAI_API_KEY": "s3cret"}))


def test_help_options_are_read_from_option_lines_only() -> None:
    options = options_from_help(HELP_ALL.read_text())
    assert {"--base-url", "--save-detailed", "--goodput", "--random-input-len", "--metric-percentiles"} <= options
    assert "--help" in options and "-h" in options
    assert "--chat_template_kwargs" not in options and "--x-additional-" not in options  # help prose is not options


def test_every_flag_we_pass_is_in_the_real_v0_32_help(tmp_path: Path) -> None:
    flags = ClientFlags(Path("vllm"), options_from_help(HELP_ALL.read_text()))
    rated = WorkloadPoint(64, 32, 4, 16, 1.0)
    require_flags(bench_argv(target(), rated, 0, tmp_path, "r.json", goodput=["ttft:1"], warmups=2), flags)


def test_a_flag_the_client_lacks_is_named() -> None:
    flags = ClientFlags(Path("/old/vllm"), frozenset({"--base-url", "--model"}))
    with pytest.raises(OperationFailed, match="does not accept --ignore-eos"):
        require_flags(["/old/vllm", "bench", "serve", "--base-url", "u", "--ignore-eos"], flags)


def test_client_flags_are_asked_once_and_cached(tmp_path: Path) -> None:
    client = make_client(tmp_path / "env")
    first = check_client(client)
    assert "--save-detailed" in first.options
    assert len(calls(client)) == 1  # `--help=all` answered
    assert check_client(client).options == first.options
    assert len(calls(client)) == 1  # the cache answered


def test_a_vllm_without_bench_names_the_first_version_that_has_it(tmp_path: Path) -> None:
    client = make_client(tmp_path / "env", mode="old")
    with pytest.raises(OperationFailed, match=rf"no `vllm bench` \(it first appears in vLLM {BENCH_CLI_SINCE}\)"):
        check_client(client)


def test_a_missing_client_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(OperationFailed, match="does not exist"):
        check_client(tmp_path / "nope" / "vllm")


def test_run_point_reads_the_saved_result(tmp_path: Path) -> None:
    client = make_client(tmp_path / "env")
    point = parse_workload("quick").points[0]
    result = run_point(target(client, {"OPENAI_API_KEY": "k"}), point, 0, tmp_path / "work")
    assert result.point == point
    assert (result.metrics.completed, result.metrics.failed) == (16, 0)
    assert result.raw_path == tmp_path / "work" / "64-32-4.json" and result.raw_path.is_file()
    run = calls(client)[-1]
    assert run["argv"][:2] == ["bench", "serve"] and run["key"] == "k" and run["offline"] == "1"
    assert run["proxy"] is None


def test_run_point_keeps_failed_requests_messages(tmp_path: Path) -> None:
    client = make_client(tmp_path / "env", result=TOO_LONG_RESULT)
    result = run_point(target(client), WorkloadPoint(2100, 8, 2, 2), 0, tmp_path / "work")
    assert result.errors == (("Bad Request", 2),)


def test_a_failing_client_run_is_exit_1_with_its_log(tmp_path: Path) -> None:
    client = make_client(tmp_path / "env", mode="fail")
    with pytest.raises(OperationFailed, match=r"(?s)exit 1\).*boom"):
        run_point(target(client), WorkloadPoint(64, 32, 4, 16), 0, tmp_path / "work")


def test_a_client_run_past_its_timeout_is_stopped(tmp_path: Path) -> None:
    client = make_client(tmp_path / "env")
    client.write_text(client.read_text().replace("out_dir = Path(", "import time; time.sleep(60); out_dir = Path("))
    with pytest.raises(OperationFailed, match="did not finish within 1s"):
        run_point(target(client), WorkloadPoint(64, 32, 4, 16), 0, tmp_path / "work", timeout_s=1)
