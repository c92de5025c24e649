"""`engine.extra_args` parsed once (`ascendctl_engine.argv_items.parse_args`): the spellings vLLM's
FlexibleArgumentParser and argparse accept, load-time errors, and the consumers that ask the parsed items."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from ascendctl.core.errors import DocumentError, UserInputError
from ascendctl.core.yamlio import load_yaml_text
from ascendctl.plan.planner import plan_profile, require_startable
from ascendctl.schema.loader import load_profile, validate_profile_document
from ascendctl_engine.argv_items import ArgItem, find, parse_args, resolve_prefixes


def one(tokens: list[str]) -> ArgItem:
    (item,) = parse_args(tokens)
    return item


@pytest.mark.parametrize(
    ("tokens", "flag", "key", "values"),
    [
        (["--max-model-len", "8"], "--max-model-len", None, ("8",)),
        (["--max_model_len", "8"], "--max-model-len", None, ("8",)),  # `_` → `-`
        (["--max_model_len=8"], "--max-model-len", None, ("8",)),  # `=`
        (["--compilation-config.level", "3"], "--compilation-config", "level", ("3",)),  # dotted key
        (["--compilation_config.cudagraph_mode=FULL"], "--compilation-config", "cudagraph_mode", ("FULL",)),
        (["-O3"], "-O", None, ("3",)),  # the level attached
        (["-O", "3"], "-O", None, ("3",)),
        (["-O.level=3"], "-O", "level", ("3",)),
        (["-tp", "2"], "-tp", None, ("2",)),
        (["-dcp=2"], "-dcp", None, ("2",)),
        (["--seed", "-1"], "--seed", None, ("-1",)),  # a negative number is a value
        (["--x", "-0.5"], "--x", None, ("-0.5",)),
        (["--x", "-inf"], "--x", None, ("-inf",)),
        (["--kv-transfer-config", "{}"], "--kv-transfer-config", None, ("{}",)),  # JSON is a value
        (["--cuda-graph-sizes", "1", "2", "4"], "--cuda-graph-sizes", None, ("1", "2", "4")),  # nargs="+"
        (["--enforce-eager"], "--enforce-eager", None, ()),  # a bare switch
        (["--api-k", "x"], "--api-k", None, ("x",)),  # an abbreviation stays as written at load
    ],
)
def test_spellings(tokens: list[str], flag: str, key: str | None, values: tuple[str, ...]) -> None:
    item = one(tokens)
    assert (item.flag, item.key, item.values, item.index, item.tokens) == (flag, key, values, 0, tuple(tokens))
    assert item.value == (values[0] if values else None)
    assert not item.negated and item.positive == flag


def test_negated_spellings_keep_both_flags() -> None:
    item = one(["--no-enable-prefix-caching"])
    assert item.negated and item.flag == "--no-enable-prefix-caching" and item.positive == "--enable-prefix-caching"
    assert one(["--no_enable_prefix_caching"]).positive == "--enable-prefix-caching"
    assert not one(["--no"]).negated


def test_items_in_order_with_their_positions() -> None:
    items = parse_args(["--a", "1", "--b=2", "--c", "--d", "x", "y"])
    assert [(i.flag, i.index, i.values) for i in items] == [
        ("--a", 0, ("1",)),
        ("--b", 2, ("2",)),
        ("--c", 3, ()),
        ("--d", 4, ("x", "y")),
    ]
    assert parse_args([]) == ()


@pytest.mark.parametrize(
    ("tokens", "position"),
    [(["value", "--flag"], 0), (["--a=1", "stray"], 1), (["--b", "1", "-O3", "x"], 3)],
)
def test_a_token_that_is_neither_flag_nor_value_names_its_position(tokens: list[str], position: int) -> None:
    with pytest.raises(ValueError, match=rf"position {position}\b"):
        parse_args(tokens)


def test_find_and_abbreviations() -> None:
    items = parse_args(["--kv-cache-memory", "42", "--quantization=ascend"])
    assert find(items, "--quantization") is items[1]
    assert find(items, "--kv-cache-memory-bytes") is None
    assert find(items, "--kv-cache-memory-bytes", abbreviation=len("--kv-cache-m")) is items[0]


def test_prefix_resolution() -> None:
    known = ("--max-model-len", "--max-num-seqs", "--max-num-batched-tokens", "--seed")
    items = parse_args(["--max-model", "8", "--max-num", "4", "--bogus", "--seed", "1"])
    resolved, problems = resolve_prefixes(items, set(known), lambda p: [k for k in known if k.startswith(p)])
    assert resolved[0].flag == "--max-model-len" and resolved[0].written == "--max-model"
    assert resolved[0].as_written == "--max-model"
    assert [(p.item.flag, p.candidates) for p in problems] == [
        ("--max-num", ("--max-num-seqs", "--max-num-batched-tokens")),
        ("--bogus", ()),
    ]
    assert resolved[3].flag == "--seed" and not resolved[3].written


# --- at load ------------------------------------------------------------------------------------------

HEAD = "apiVersion: ascendctl/v1\nkind: Profile\nmetadata:\n  name: x\nmodel:\n  source: org/model\n"
CPU = HEAD + "target:\n  backend: cpu\n"


def test_a_malformed_list_is_a_located_profile_error() -> None:
    text = CPU + "engine:\n  extra_args: ['--seed=1', stray]\n"
    with pytest.raises(DocumentError) as exc:
        validate_profile_document(load_yaml_text(text, "p.yaml"))
    (issue,) = exc.value.issues
    assert issue.path == "engine.extra_args"
    assert issue.line == text.count("\n", 0, text.index("extra_args")) + 1
    assert "position 1" in issue.message and "stray" not in issue.message  # a stray word may be part of a secret
    assert issue.render().startswith("p.yaml:")


def test_a_malformed_node_list_is_located_too() -> None:
    text = (
        HEAD + "target:\n  backend: cpu\n  nodes: 2\nnetwork:\n  nodes:\n    - address: 10.0.0.1\n"
        "    - address: 10.0.0.2\n      extra_args: ['--a=1', b]\n"
    )
    with pytest.raises(DocumentError) as exc:
        validate_profile_document(load_yaml_text(text, "p.yaml"))
    assert any(i.path == "network.nodes[1].extra_args" and "position 1" in i.message for i in exc.value.issues)


def test_the_section_exposes_its_items() -> None:
    profile = validate_profile_document(
        load_yaml_text(CPU + "engine:\n  extra_args: ['--max_model_len=8', '--seed', '1']\n", "p.yaml")
    )
    assert [(i.flag, i.value) for i in profile.engine.arg_items] == [("--max-model-len", "8"), ("--seed", "1")]


@pytest.mark.parametrize(
    "args",
    [
        ["--api-key", "sk-x"],
        ["--api_key=sk-x"],
        ["--api-k", "sk-x"],
        ["--api_k=sk-x"],
        ["--seed", "1", "--api-key", "sk-x"],
        ["--hf-token", "hf_x"],
        ["--hf_token=hf_x"],
    ],
)
def test_secrets_are_refused_in_every_spelling(args: list[str]) -> None:
    text = CPU + f"engine:\n  extra_args: {json.dumps(args)}\n"
    with pytest.raises(DocumentError) as exc:
        validate_profile_document(load_yaml_text(text, "p.yaml"))
    index = next(i for i, a in enumerate(args) if a.startswith(("--api", "--hf")))
    assert [i.path for i in exc.value.issues] == [f"engine.extra_args[{index}]"]


# --- at plan time -------------------------------------------------------------------------------------


def npu_profile(tmp_path: Path, engine: dict[str, Any]) -> Path:
    path = tmp_path / "p.yaml"
    body = {
        "apiVersion": "ascendctl/v1",
        "kind": "Profile",
        "metadata": {"name": "t"},
        "model": {"source": "Qwen/Qwen3-8B"},
        "target": {"backend": "npu", "hardware": "a3", "devices_per_node": 16},
        "release": "v0.23.0",
        "engine": engine,
    }
    path.write_text(yaml.safe_dump(body))
    return path


def findings(path: Path) -> dict[str, Any]:
    plan = plan_profile(load_profile(path))
    return {f.id: f for f in plan.deployment.findings}


@pytest.mark.parametrize(
    "args",
    [
        ["--decode_context_parallel_size=2"],
        ["--decode-context-parallel-size", "2"],
        ["-dcp", "2"],
        ["--decode-context-parallel", "2"],  # an unambiguous abbreviation, resolved against the release
    ],
)
def test_context_parallel_counts_in_every_spelling(tmp_path: Path, args: list[str]) -> None:
    found = findings(npu_profile(tmp_path, {"graph": {"mode": "full"}, "extra_args": args}))
    assert found["plan.graph.full-with-context-parallel"].status == "warn"


def test_no_context_parallel_without_the_flag(tmp_path: Path) -> None:
    found = findings(npu_profile(tmp_path, {"graph": {"mode": "full"}, "extra_args": ["--seed", "2"]}))
    assert found["plan.graph.full-with-context-parallel"].status != "warn"


def test_an_ambiguous_abbreviation_is_a_plan_error_naming_the_candidates(tmp_path: Path) -> None:
    found = findings(npu_profile(tmp_path, {"extra_args": ["--max-num", "4"]}))
    finding = found["plan.extra-args.prefix"]
    assert finding.status == "fail" and "ambiguous" in finding.message
    assert "--max-num-seqs" in (finding.fix or "") and "--max-num-batched-tokens" in (finding.fix or "")


def test_an_unknown_flag_is_refused_once_by_the_release_parser_not_by_the_prefix_rule(tmp_path: Path) -> None:
    path = npu_profile(tmp_path, {"extra_args": ["--no-such-flag-at-all"]})
    assert findings(path)["plan.extra-args.prefix"].status == "pass"
    with pytest.raises(UserInputError, match=r"--no-such-flag-at-all.*\[plan\.rejected\.parser\]"):
        require_startable(plan_profile(load_profile(path)))


def test_full_spellings_pass_the_prefix_rule(tmp_path: Path) -> None:
    finding = findings(npu_profile(tmp_path, {"extra_args": ["--max-num-seqs", "4"]}))["plan.extra-args.prefix"]
    assert finding.status == "pass"


def test_the_error_never_quotes_the_value_before_it_nor_the_stray_word() -> None:
    # `--api-key=S1 S2`: the stray word is the rest of the secret
    with pytest.raises(ValueError) as exc:
        parse_args(["--api-key=sk-secret", "sk-secret-rest"])
    assert "sk-secret" not in str(exc.value) and "`--api-key` at position 0" in str(exc.value)
    with pytest.raises(ValueError) as exc:
        parse_args(["sk-secret-alone", "--seed=1"])
    assert "sk-secret" not in str(exc.value) and "position 0" in str(exc.value)
