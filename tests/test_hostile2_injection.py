"""Hostile input, round two (issue 32, item 1): a profile value that lands in the engine's argv as a word of its
own is refused at load when it reads as an option.

The fields are not listed here: they are found by walking the profile's JSON Schema for the `x-argv-word`
marker (`ascendctl_engine.sections.fields.ARGV_WORD`, which validates and marks in one object). Completeness is
proved the other way round: every free-text field of the engine's sections gets a sentinel value, the planner
plans it for several releases, and every field whose sentinel starts a word of a planned argv must be marked.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from ascendctl.cli import app
from ascendctl.core.errors import DocumentError
from ascendctl.core.yamlio import dotted, load_yaml_text
from ascendctl.facts.matrix import hardware_by_id, load_matrix
from ascendctl.facts.matrix.launch import hardware_traits
from ascendctl.schema.loader import validate_profile_document
from ascendctl.schema.profile import Profile
from ascendctl_engine.adapters import plan_commands
from ascendctl_engine.adapters.intent import SECTIONS, intent_from_sections
from ascendctl_engine.sections.fields import ARGV_WORD_KEY

Path_ = tuple[str | int, ...]
SCHEMA = Profile.model_json_schema()
MATRIX = load_matrix()


def _resolve(node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = SCHEMA["$defs"][node["$ref"].rsplit("/", 1)[-1]]
    return node


def _string_leaves(node: dict[str, Any], path: Path_ = ()) -> Iterator[tuple[Path_, dict[str, Any]]]:
    """Every free-text string of the schema (not an enum or a constant), with its path: `0` for a list's item,
    `*` for a mapping's value."""
    node = _resolve(node)
    for alternative in node.get("anyOf", []):
        yield from _string_leaves(alternative, path)
    kind = node.get("type")
    if kind == "object":
        for key, child in node.get("properties", {}).items():
            yield from _string_leaves(child, (*path, key))
        if isinstance(node.get("additionalProperties"), dict):
            yield from _string_leaves(node["additionalProperties"], (*path, "*"))
    elif kind == "array" and "items" in node:
        yield from _string_leaves(node["items"], (*path, 0))
    elif kind == "string" and "enum" not in node and "const" not in node:
        yield path, node


LEAVES = list(_string_leaves(SCHEMA))
ARGV_FIELDS = sorted({path for path, node in LEAVES if node.get(ARGV_WORD_KEY)}, key=str)

BASE: dict[str, Any] = {
    "apiVersion": "ascendctl/v1",
    "kind": "Profile",
    "metadata": {"name": "argv"},
    "model": {"source": "org/model"},
    "target": {"backend": "cpu"},
    "serving": {"lora": {"adapters": [{"name": "base", "path": "/adapters/base"}]}},
}


def _put(document: dict[str, Any], path: Path_, value: object) -> None:
    node: Any = document
    for part, nxt in itertools.pairwise(path):
        node = node[part] if isinstance(part, int) else node.setdefault(part, [] if isinstance(nxt, int) else {})
    node[path[-1]] = value


def _refused_at(path: Path_, value: str) -> list[str]:
    """Validate BASE with `value` at `path` (the value reaches the schema as written: the YAML is dumped)."""
    document = copy.deepcopy(BASE)
    if path[0] == "disaggregation":  # a role group's field: the section's one required key beside it
        roles = {role: {"serving": copy.deepcopy(BASE["serving"])} for role in ("prefill", "decode")}
        document["disaggregation"] = {"connector": "shared-storage", **roles}
    _put(document, path, value)
    with pytest.raises(DocumentError) as exc:
        validate_profile_document(load_yaml_text(yaml.safe_dump(document), "p.yaml"))
    issues = exc.value.issues
    assert [i.path for i in issues] == [dotted(path)], [i.render() for i in issues]
    assert all(i.line > 0 for i in issues)  # located: file:line:col
    return [i.render() for i in issues]


def test_the_schema_marks_argv_words() -> None:
    # the walk finds the marker at all (what the completeness test below checks is that it finds enough)
    assert ARGV_FIELDS
    assert ("model", "source") in ARGV_FIELDS


@pytest.mark.parametrize("path", ARGV_FIELDS, ids=dotted)
@pytest.mark.parametrize("value", ["-x", "--trust-remote-code", "--model=/other", "-", "--"])
def test_every_argv_field_refuses_an_option(path: Path_, value: str) -> None:
    [line] = _refused_at(path, value)
    assert line.startswith("p.yaml:")


@pytest.mark.parametrize("path", ARGV_FIELDS, ids=dotted)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tail=st.text(max_size=24))
def test_every_argv_field_refuses_any_dash_first_text(path: Path_, tail: str) -> None:
    _refused_at(path, "-" + tail)


def test_a_list_item_after_a_good_one_is_refused_at_its_index() -> None:
    document = copy.deepcopy(BASE)
    document["serving"]["lora"]["adapters"].append({"name": "second", "path": "--enable-remote-code"})
    with pytest.raises(DocumentError) as exc:
        validate_profile_document(load_yaml_text(yaml.safe_dump(document), "p.yaml"))
    assert [i.path for i in exc.value.issues] == ["serving.lora.adapters[1].path"]


def test_a_value_with_a_dash_inside_is_still_accepted() -> None:
    document = copy.deepcopy(BASE)
    document["model"].update(source="/models/my-model", served_name="my-model", revision="v1-rc")
    validate_profile_document(load_yaml_text(yaml.safe_dump(document), "p.yaml"))


# --- completeness: what the planner puts into argv is marked ------------------------------------------------


def _sentinels(index: int) -> list[str]:
    # shapes the typed fields accept: a plain word, an absolute path, an env-style name, an IP address
    return [f"zq{index}x", f"/zq{index}x", f"ZQ{index}X", f"10.77.{index}.9"]


# A document in which every optional container the engine sections declare exists, so each leaf has a parent.
PLANNED_BASE: dict[str, Any] = {
    "model": {"source": "ybase/model"},
    "engine": {"speculative": {"method": "eagle", "num_tokens": 2, "model": "ybase/draft"}},
    "network": {"nodes": [{"address": "10.0.0.1"}]},
    "server": {"api_key": {"env": "YBASE_VAR"}},
    "serving": {"lora": {"adapters": [{"name": "ybase", "path": "/ybase"}]}},
    "runtime": {"secrets": {"YBASE_SECRET": {"file": "/ybase"}}},
}


def _targets() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(target section, resolved intent fields) of the releases planned: the newest cpu row, and the oldest and
    newest npu rows (a2), so an era that spells a field as a flag of its own is seen."""
    cpu = next(r for r in MATRIX.releases if r.backend == "cpu")
    npu = [r for r in MATRIX.releases if r.backend == "npu"]
    traits = hardware_traits(hardware_by_id(MATRIX, "a2"))
    out: list[tuple[dict[str, Any], dict[str, Any]]] = [({"backend": "cpu"}, {"vllm": cpu.vllm})]
    for row in (npu[0], npu[-1]):
        target = {"backend": "npu", "hardware": "a2", "devices_per_node": 2}
        out.append((target, {"vllm": row.vllm, "vllm_ascend": row.vllm_ascend, "traits": traits}))
    return out


def _planned_words(document: dict[str, Any], target: dict[str, Any], resolved: dict[str, Any]) -> list[str]:
    doc = {**copy.deepcopy(document), "target": target}
    return [word for command in plan_commands(intent_from_sections(doc, **resolved)).commands for word in command.argv]


def _placed(path: Path_, index: int, target: dict[str, Any], resolved: dict[str, Any]) -> tuple[str, dict] | None:
    """(sentinel, document) with a sentinel that validates at `path` (a `*` is a new key of that mapping): set
    next to what PLANNED_BASE has there, or alone in its mapping (one of `env` / `file`); None if none does."""
    concrete = tuple(f"ZQVAR{index}" if p == "*" else p for p in path)
    for sentinel in _sentinels(index):
        for alone in (False, True):
            document = copy.deepcopy(PLANNED_BASE)
            if alone:
                _put(document, concrete[:-1], {})
            _put(document, concrete, sentinel)
            try:
                intent_from_sections({**document, "target": target}, **resolved)
            except ValueError:
                continue
            return sentinel, document
    return None


def test_every_field_the_planner_puts_into_argv_is_marked() -> None:
    # `extra_args` are argv tokens by design (flags and their values, parsed by `argv_items.parse_args`)
    candidates = [(i, p) for i, (p, _) in enumerate(LEAVES) if p[0] in SECTIONS and "extra_args" not in p]
    starting_words: set[Path_] = set()
    unplaced: set[Path_] = set()
    for target, resolved in _targets():
        for index, path in candidates:
            placed = _placed(path, index, target, resolved)
            if placed is None:
                unplaced.add(path)
                continue
            sentinel, document = placed
            if any(word.startswith(sentinel) for word in _planned_words(document, target, resolved)):
                starting_words.add(path)
    assert not unplaced, f"no sentinel validates at {sorted(unplaced, key=str)}: add a shape to _sentinels"
    marked = {p for p, n in LEAVES if n.get(ARGV_WORD_KEY)}
    assert ("model", "source") in starting_words  # the method finds argv words at all
    missing = sorted(starting_words - marked, key=str)
    assert not missing, f"start a word of the planned argv but are not marked ARGV_WORD: {missing}"


# --- through the CLI: exit 2, one line, never in a plan -----------------------------------------------------

CPU_DEMO = Path(__file__).resolve().parents[1] / "profiles" / "cpu-demo.yaml"


@pytest.mark.parametrize("command", ["validate", "plan"])
@pytest.mark.parametrize(
    "override",
    ["model.source=--trust-remote-code", "model.served_name=-x", "serving.chat_template=--help", "server.host=-h"],
)
def test_the_cli_refuses_an_option_as_a_value(command: str, override: str) -> None:
    result = CliRunner().invoke(app, [command, str(CPU_DEMO), "--set", override])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --set ")
    assert override.partition("=")[0] in lines[0]
