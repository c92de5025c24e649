"""Proof against the real parser: the argv planned for the CPU engine row is parsed by that vLLM's own
`vllm serve` argument parser (built as `vllm/entrypoints/cli/main.py` builds it) in the engine
environment's interpreter. Skipped when the CPU engine environment is not installed."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from ascendctl.plan.planner import plan_profile
from ascendctl.schema.loader import load_profile

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]

# Runs inside the engine environment: parse each argv (a JSON list on stdin) with vLLM's serve subparser
# and validate it; prints one PARSED line per argv (vLLM is imported once for all of them).
PARSE = r"""
import json, sys
import vllm.entrypoints.cli.serve as serve
from vllm.utils.argparse_utils import FlexibleArgumentParser

def parse(argv):
    parser = FlexibleArgumentParser(description="vLLM CLI")
    sub = parser.add_subparsers(required=False, dest="subparser")
    cmds = {}
    for cmd in serve.cmd_init():
        cmd.subparser_init(sub)
        cmds[cmd.name] = cmd
    args = parser.parse_args(argv[1:])
    cmds[args.subparser].validate(args)
    return args

for argv in json.load(sys.stdin):
    args = parse(argv)
    keys = (
        "model_tag", "port", "host", "enforce_eager", "max_num_seqs", "max_model_len", "tensor_parallel_size",
        "data_parallel_size", "enable_prefix_caching", "enable_chunked_prefill", "shutdown_timeout", "runner",
        "seed", "dtype", "trust_remote_code", "served_model_name", "async_scheduling", "hf_overrides")
    out = {k: getattr(args, k, None) for k in keys}
    print("PARSED " + json.dumps(out, default=str), flush=True)
"""


def write(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(
        f"apiVersion: ascendctl/v1\nkind: Profile\nmetadata: {{name: {name}}}\n"
        "model: {source: /models/demo, served_name: demo, max_model_len: 2048, trust_remote_code: true}\n"
        "target: {backend: cpu, devices_per_node: 2}\n" + body
    )
    return path


@pytest.fixture(scope="module")
def engine_python(engine_data_dir: Path) -> Path:
    from ascendctl.facts.matrix import latest_stable, load_matrix
    from ascendctl_engine.envs import find_engine

    row = latest_stable(load_matrix(), "cpu")
    env = find_engine("cpu", row.version, root=engine_data_dir)
    if env is None:
        pytest.skip(f"the CPU engine environment cpu-{row.version} is absent: ascendctl engine install --backend cpu")
    return env.python


def parse_all(python: Path, argvs: list[tuple[str, ...]]) -> list[dict[str, object]]:
    proc = subprocess.run(
        [str(python), "-c", PARSE],
        input=json.dumps([list(a) for a in argvs]),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, f"vLLM's parser rejected a planned argv:\n{proc.stderr[-3000:]}"
    lines = [line for line in proc.stdout.splitlines() if line.startswith("PARSED ")]
    assert len(lines) == len(argvs)
    return [json.loads(line[len("PARSED ") :]) for line in lines]


@pytest.fixture(scope="module")
def plans(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    tmp_path = tmp_path_factory.mktemp("profiles")
    rich = write(
        tmp_path,
        "rich",
        "engine:\n"
        "  graph: {mode: full-decode-only}\n"
        "  parallel: {tensor: 2}\n"
        "  scheduler: {max_num_seqs: 8, max_num_batched_tokens: 4096, prefix_caching: false, chunked_prefill: false,"
        " async_scheduling: true}\n"
        "  seed: 7\n"
        "server: {port: 8123, shutdown_timeout: 5}\n",
    )
    rich.write_text(
        rich.read_text().replace(
            "trust_remote_code: true}", "trust_remote_code: true, dtype: bfloat16, hf_overrides: {rope_theta: 10000}}"
        )
    )
    pool = write(tmp_path, "pool", "engine: {graph: {mode: eager}}\n")
    pool.write_text(pool.read_text().replace("trust_remote_code: true}", "trust_remote_code: true, task: embed}"))
    return {
        "demo": plan_profile(load_profile(REPO / "profiles" / "cpu-demo.yaml")),
        "rich": plan_profile(load_profile(rich)),
        "pool": plan_profile(load_profile(pool)),
    }


@pytest.fixture(scope="module")
def parsed(engine_python: Path, plans: dict[str, object]) -> dict[str, dict[str, object]]:
    names = list(plans)
    results = parse_all(engine_python, [plans[n].commands[0].argv for n in names])  # type: ignore[attr-defined]
    return dict(zip(names, results, strict=True))


def test_curated_cpu_profile_parses(parsed: dict[str, dict[str, object]]) -> None:
    demo = parsed["demo"]
    assert demo["enforce_eager"] is True and demo["max_num_seqs"] == 32 and demo["port"] == 8000
    assert demo["shutdown_timeout"] == 30 and demo["max_model_len"] == 2048


def test_rich_cpu_plan_parses(parsed: dict[str, dict[str, object]], plans: dict[str, object]) -> None:
    rich = parsed["rich"]
    assert rich["tensor_parallel_size"] == 2 and rich["enable_prefix_caching"] is False
    assert rich["enable_chunked_prefill"] is False and rich["port"] == 8123 and rich["seed"] == 7
    assert rich["hf_overrides"] == {"rope_theta": 10000} and rich["dtype"] == "bfloat16"
    assert rich["async_scheduling"] is True and rich["shutdown_timeout"] == 5
    plan = plans["rich"]
    assert "--compilation-config" not in plan.commands[0].argv  # type: ignore[attr-defined]  # CPU: no graphs


def test_pooling_plan_parses(parsed: dict[str, dict[str, object]]) -> None:
    assert parsed["pool"]["runner"] == "pooling"
