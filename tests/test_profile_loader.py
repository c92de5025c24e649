"""Loading a profile: YAML boundary → --set overrides → schema → cross-field rules, all errors located."""

from __future__ import annotations

from pathlib import Path

import pytest

from ascendctl.core.errors import DocumentError, Issue, UserInputError
from ascendctl.core.yamlio import load_yaml_text
from ascendctl.schema.loader import load_profile, parse_override, validate_profile_document
from ascendctl.schema.profile import Profile

PROFILES = sorted((Path(__file__).resolve().parent.parent / "profiles").glob("*.yaml"))


def position(text: str, needle: str) -> tuple[int, int]:
    """1-based line and column where `needle` ends in `text` (where the value after `key: ` starts)."""
    index = text.index(needle) + len(needle)
    before = text[:index]
    return before.count("\n") + 1, index - (before.rfind("\n") + 1) + 1


def issues_of(text: str, overrides: list[str] | None = None, source: str = "p.yaml") -> list[Issue]:
    doc = load_yaml_text(text, source)
    with pytest.raises(DocumentError) as exc:
        validate_profile_document(doc, [parse_override(o) for o in overrides or []])
    return exc.value.issues


def one_issue(text: str, overrides: list[str] | None = None) -> Issue:
    issues = issues_of(text, overrides)
    assert len(issues) == 1, [i.render() for i in issues]
    return issues[0]


@pytest.mark.parametrize("path", PROFILES, ids=lambda p: p.name)
def test_shipped_profiles_load(path: Path) -> None:
    profile = load_profile(path)
    assert isinstance(profile, Profile)
    assert profile.metadata.name == path.stem


def test_there_are_ascend_and_cpu_profiles() -> None:
    backends = {load_profile(p).target.backend for p in PROFILES}
    assert {"npu", "cpu"} <= backends
    assert sum(load_profile(p).target.backend == "npu" for p in PROFILES) >= 3


def test_defaults_of_a_minimal_profile(valid_profile_text: str) -> None:
    profile = validate_profile_document(load_yaml_text(valid_profile_text, "p.yaml"))
    assert profile.server.host == "127.0.0.1"
    assert profile.release == "latest-stable"
    assert profile.engine.graph.mode == "auto"
    assert profile.server.api_key is None


def test_load_profile_reports_missing_file(tmp_path: Path) -> None:
    with pytest.raises(DocumentError) as exc:
        load_profile(tmp_path / "absent.yaml")
    assert exc.value.issues[0].message == "file not found"


# --- document shape ---------------------------------------------------------------------------------


def test_empty_document() -> None:
    issue = one_issue("# nothing here\n")
    assert (issue.line, issue.column) == (1, 1)
    assert "empty" in issue.message


@pytest.mark.parametrize(
    ("text", "found"),
    [("- a\n- b\n", "a list"), ("just text\n", "a str"), ("42\n", "a int")],
)
def test_top_level_must_be_a_mapping(text: str, found: str) -> None:
    issue = one_issue(text)
    assert (issue.line, issue.column) == (1, 1)
    assert issue.message.endswith(f"found {found}")


def test_wrong_api_version_located_at_value(valid_profile_text: str) -> None:
    text = valid_profile_text.replace("ascendctl/v1", "ascendctl/v2")
    issue = one_issue(text)
    assert (issue.line, issue.column, issue.path) == (1, 13, "apiVersion")
    assert "ascendctl/v2" in issue.message
    assert "ascendctl/v1" in issue.message


def test_missing_api_version_and_kind(valid_profile_text: str) -> None:
    text = valid_profile_text.replace("apiVersion: ascendctl/v1\n", "").replace("kind: Profile\n", "")
    issues = issues_of(text)
    assert [(i.path, i.message) for i in issues] == [
        ("apiVersion", "required key is missing"),
        ("kind", "required key is missing"),
    ]


def test_wrong_kind(valid_profile_text: str) -> None:
    issue = one_issue(valid_profile_text.replace("kind: Profile", "kind: Deployment"))
    assert (issue.line, issue.column, issue.path) == (2, 7, "kind")
    assert "'Deployment'" in issue.message


# --- schema errors ----------------------------------------------------------------------------------


def test_unknown_key_did_you_mean_located_at_key(valid_profile_text: str) -> None:
    text = valid_profile_text.replace("  source: org/model\n", "  source: org/model\n  quantisation: w8a8\n")
    issue = one_issue(text)
    assert (issue.line, issue.column, issue.path) == (7, 3, "model.quantisation")
    assert issue.message == "unknown key 'quantisation' (did you mean 'quantization'?)"


def test_unknown_key_deep_inside_optional_section(valid_profile_text: str) -> None:
    text = valid_profile_text + "server:\n  api_key:\n    evn: KEY\n"
    issues = issues_of(text)
    unknown = [i for i in issues if i.path == "server.api_key.evn"]
    assert len(unknown) == 1
    assert "did you mean 'env'" in unknown[0].message
    assert (unknown[0].line, unknown[0].column) == (11, 5)


def test_unknown_key_in_list_item(valid_profile_text: str) -> None:
    text = valid_profile_text + "network:\n  nodes:\n    - address: 10.0.0.1\n      adress: x\n"
    issue = one_issue(text)
    assert issue.path == "network.nodes[0].adress"
    assert "did you mean 'address'" in issue.message
    assert (issue.line, issue.column) == (12, 7)


def test_unknown_key_without_close_match_lists_allowed(valid_profile_text: str) -> None:
    issue = one_issue(valid_profile_text + "zzzzzz: 1\n")
    assert issue.path == "zzzzzz"
    assert "allowed: allow, allow_unsupported, apiVersion, disaggregation, engine" in issue.message


def test_user_keys_that_look_like_union_tags_stay_in_the_path(valid_profile_text: str) -> None:
    # pydantic adds branch tags such as "int" or "list[...]" to error locations; the user's own keys
    # with those names must not be dropped from the path (a key "a[" used to crash the loader)
    issues = issues_of(valid_profile_text + "a[: 1\nruntime:\n  env:\n    int: 5\n")
    assert [(i.path, i.line, i.column) for i in issues] == [("['a[']", 9, 1), ("runtime.env.int", 12, 10)]


def test_wrong_type_not_coerced(valid_profile_text: str) -> None:
    text = valid_profile_text + '  nodes: "2"\n'
    issue = one_issue(text)
    assert (issue.line, issue.column, issue.path) == (9, 10, "target.nodes")
    assert issue.message == "input should be a valid integer, got '2'"


def test_bad_literal_lists_choices(valid_profile_text: str) -> None:
    issue = one_issue(valid_profile_text.replace("backend: cpu", "backend: gpu"))
    assert (issue.line, issue.column, issue.path) == (8, 12, "target.backend")
    assert "'npu'" in issue.message and "'gpu'" in issue.message


def test_missing_required_key_located_at_parent(valid_profile_text: str) -> None:
    text = valid_profile_text.replace("  source: org/model\n", "  served_name: m\n")
    issue = one_issue(text)
    assert (issue.path, issue.message) == ("model.source", "required key is missing")
    assert (issue.line, issue.column) == (6, 3)  # the value of `model:` starts at its first key


def test_every_schema_error_reported_sorted_by_position(valid_profile_text: str) -> None:
    text = valid_profile_text + "server:\n  port: 0\n  hots: x\nengine:\n  parallel:\n    tensor: two\n"
    issues = issues_of(text)
    assert [i.path for i in issues] == ["server.port", "server.hots", "engine.parallel.tensor"]
    assert [i.line for i in issues] == [10, 11, 14]


def test_bad_metadata_name(valid_profile_text: str) -> None:
    issue = one_issue(valid_profile_text.replace("name: demo", "name: Demo_1"))
    assert issue.path == "metadata.name"
    assert "pattern" in issue.message


def test_env_names_checked(valid_profile_text: str) -> None:
    issue = one_issue(valid_profile_text + "runtime:\n  env:\n    1BAD: x\n")
    assert issue.path == "runtime.env.1BAD"
    assert "not a valid environment variable name" in issue.message


def test_extra_args_must_start_with_flag(valid_profile_text: str) -> None:
    issue = one_issue(valid_profile_text + "engine:\n  extra_args: [value, --flag]\n")
    assert issue.path == "engine.extra_args"
    assert issue.message.startswith("extra_args must start with a flag")


def test_escape_hatches_pass_json_values(valid_profile_text: str) -> None:
    text = valid_profile_text + "engine:\n  extra_args: [--foo, '1']\n  additional_config:\n    a: {b: [1, 2.5, x]}\n"
    profile = validate_profile_document(load_yaml_text(text, "p.yaml"))
    assert profile.engine.extra_args == ["--foo", "1"]
    assert profile.engine.additional_config == {"a": {"b": [1, 2.5, "x"]}}


def test_escape_hatch_values_still_type_checked(valid_profile_text: str) -> None:
    issues = issues_of(valid_profile_text + "engine:\n  additional_config:\n    when: 2024-01-01\n")
    assert issues
    assert all(i.path.startswith("engine.additional_config.when") for i in issues)
    assert all(i.line == 11 for i in issues)


# --- --set overrides --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "path", "value"),
    [
        ("server.port=8001", ("server", "port"), 8001),
        ("model.trust_remote_code=true", ("model", "trust_remote_code"), True),
        ("metadata.description=", ("metadata", "description"), ""),
        ("metadata.description=a: b", ("metadata", "description"), "a: b"),  # not a mapping unless {…}
        ("target.visible_devices=[0, 1]", ("target", "visible_devices"), [0, 1]),
        ("engine.additional_config={a: 1}", ("engine", "additional_config"), {"a": 1}),
        ("network.nodes.0.address=10.0.0.1", ("network", "nodes", 0, "address"), "10.0.0.1"),
        ("metadata.description=2024-13-01", ("metadata", "description"), "2024-13-01"),  # bad date: text
        ("metadata.description=[unclosed", ("metadata", "description"), "[unclosed"),  # not YAML: text
        ("a.²=1", ("a", "²"), 1),  # a digit that int() refuses is a key, not an index
    ],
)
def test_parse_override(text: str, path: tuple[str | int, ...], value: object) -> None:
    override = parse_override(text)
    assert override.path == path
    assert override.value == value
    assert override.source == f"--set {text.partition('=')[0]}"  # never the value: it may be a secret


@pytest.mark.parametrize("text", ["server.port", "=1", "server..port=1", ".port=1", "server.=1"])
def test_malformed_override_is_user_error(text: str) -> None:
    with pytest.raises(UserInputError, match=r"expected KEY\.PATH=VALUE"):
        parse_override(text)


def test_override_with_line_break_is_named_on_one_line() -> None:
    with pytest.raises(UserInputError) as exc:
        parse_override("\n")
    assert str(exc.value).startswith("--set <an argument without `=`>: expected")
    assert parse_override("metadata.description=a\tb").source == "--set metadata.description"


def test_override_alias_bomb_is_not_expanded() -> None:
    bomb = "[&a [1,1,1,1,1,1,1,1,1], &b [*a,*a,*a,*a,*a,*a,*a,*a,*a], &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]"
    bomb += ", &d [*c,*c,*c,*c,*c,*c,*c,*c,*c], &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]]"
    override = parse_override("engine.additional_config.x=" + bomb)
    assert override.value == bomb  # refused by the YAML boundary, kept as the literal text


def test_override_applies_before_validation(valid_profile_text: str) -> None:
    doc = load_yaml_text(valid_profile_text, "p.yaml")
    overrides = [parse_override("server.port=9000"), parse_override("server.port=9001")]
    profile = validate_profile_document(doc, overrides)
    assert profile.server.port == 9001  # the last override wins


def test_override_fixes_a_broken_file(valid_profile_text: str) -> None:
    text = valid_profile_text.replace("backend: cpu", "backend: gpu")
    doc = load_yaml_text(text, "p.yaml")
    assert validate_profile_document(doc, [parse_override("target.backend=cpu")]).target.backend == "cpu"


def test_override_error_names_the_override(valid_profile_text: str) -> None:
    issue = one_issue(valid_profile_text, ["server.port=99999"])
    assert issue.render() == ("--set server.port: server.port: input should be less than or equal to 65535")
    assert (issue.line, issue.column) == (0, 0)


def test_override_unknown_key_did_you_mean(valid_profile_text: str) -> None:
    issue = one_issue(valid_profile_text, ["sever.port=1"])
    assert issue.source == "--set sever.port"
    assert "did you mean 'server'" in issue.message


def test_file_error_still_blamed_on_file_when_override_elsewhere(valid_profile_text: str) -> None:
    text = valid_profile_text + '  nodes: "2"\n'
    issue = one_issue(text, ["server.port=8001"])
    assert issue.source == "p.yaml"
    assert issue.line == 9


def test_override_creating_a_section_is_blamed_for_its_rule(valid_profile_text: str) -> None:
    issue = one_issue(valid_profile_text, ["server.api_key.env=KEY", "server.api_key.file=/k"])
    assert issue.source == "--set server.api_key.file"
    assert issue.path == "server.api_key"
    assert "exactly one of `env` or `file`" in issue.message


def test_override_inside_a_section_is_blamed_for_its_rule(valid_profile_text: str) -> None:
    text = valid_profile_text + "server:\n  api_key:\n    env: KEY\n"
    issue = one_issue(text, ["server.api_key.file=/k"])
    assert issue.source == "--set server.api_key.file"
    assert issue.path == "server.api_key"


def test_override_creating_a_section_is_blamed_for_a_missing_sibling(valid_profile_text: str) -> None:
    issue = one_issue(valid_profile_text, ["engine.speculative.method=mtp"])
    assert (issue.source, issue.path) == ("--set engine.speculative.method", "engine.speculative.num_tokens")
    assert issue.message == "required key is missing"


def test_override_breaking_a_cross_field_rule_is_blamed(valid_profile_text: str) -> None:
    text = valid_profile_text + "engine:\n  parallel:\n    tensor: 1\n"
    issue = one_issue(text, ["engine.parallel.tensor=4"])
    assert (issue.source, issue.path) == ("--set engine.parallel.tensor", "engine.parallel")
    assert "= 4 ranks" in issue.message


def test_missing_sibling_in_a_file_section_blames_the_file(valid_profile_text: str) -> None:
    text = valid_profile_text + "engine:\n  speculative:\n    method: mtp\n"
    issue = one_issue(text, ["engine.seed=1"])
    assert (issue.source, issue.path, issue.line, issue.column) == ("p.yaml", "engine.speculative.num_tokens", 11, 5)


@pytest.mark.parametrize(
    ("override", "path", "message"),
    [
        ("metadata.name.x=1", "metadata.name", "is not a mapping"),
        ("metadata.name.x.y=1", "metadata.name", "is not a mapping"),
        ("target.visible_devices.5=1", "target.visible_devices", "index 5 is past the end of the list"),
        ("network.nodes.3.address=x", "network.nodes", "index 3 is past the end of the list"),
    ],
)
def test_override_that_cannot_apply_is_a_located_document_error(
    valid_profile_text: str, override: str, path: str, message: str
) -> None:
    text = valid_profile_text + "  visible_devices: [0]\nnetwork:\n  nodes:\n    - address: 10.0.0.1\n"
    issue = one_issue(text, [override])
    assert (issue.source, issue.path, issue.message) == (f"--set {override.partition('=')[0]}", path, message)


def test_override_appends_to_list_end(valid_profile_text: str) -> None:
    text = valid_profile_text + "  devices_per_node: 2\n  visible_devices: [0]\n"
    profile = validate_profile_document(load_yaml_text(text, "p.yaml"), [parse_override("target.visible_devices.1=3")])
    assert profile.target.visible_devices == [0, 3]


def test_load_profile_takes_override_strings(tmp_path: Path, valid_profile_text: str) -> None:
    f = tmp_path / "p.yaml"
    f.write_text(valid_profile_text)
    assert load_profile(f, ["server.port=8123"]).server.port == 8123
