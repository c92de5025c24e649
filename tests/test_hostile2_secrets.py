"""Hostile input, round two (issue 32, item 2): secrets are never shown.

- a `--set` value is never repeated in an error, whatever the key (fuzzed over every key of the schema);
- a value for the variable a declared secret source reads (`{env: VAR}`) is refused in every env map, for every
  secret source the schema declares (found by walking the schema, not listed);
- the engine log redacts a multi-line secret whole and line by line; a secret (or a line of one) shorter than
  the minimum is refused when the launcher reads it, with a message giving the minimum and not the value;
- `diagnose` redacts key-bearing text of the lines it prints.
"""

from __future__ import annotations

import json
import types
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel
from typer.testing import CliRunner

from ascendctl.cli import app
from ascendctl.cli.serve_output import print_failure
from ascendctl.core.errors import DocumentError
from ascendctl.core.yamlio import load_yaml_text
from ascendctl.schema.declared_secrets import secret_sources
from ascendctl.schema.loader import parse_override, validate_profile_document
from ascendctl.schema.profile import Profile
from ascendctl_engine.launcher import LaunchError, LogSink, resolve_secret
from ascendctl_engine.phases import Diagnosis
from ascendctl_engine.redaction import MIN_SECRET_CHARS, redact_key_material, secret_needles
from ascendctl_engine.sections.secret_source import SecretSource
from ascendctl_engine.spec import SecretRef

REPO = Path(__file__).resolve().parents[1]
CPU_DEMO = REPO / "profiles" / "cpu-demo.yaml"
HEAD = (
    "apiVersion: ascendctl/v1\nkind: Profile\nmetadata:\n  name: s\nmodel:\n  source: org/m\ntarget:\n  backend: cpu\n"
)
SECRET = "S3cr3t-Value-0f-Hostile-2"
runner = CliRunner()


def _refusal(text: str, overrides: list[str] = ()) -> list[str]:  # type: ignore[assignment]
    with pytest.raises(DocumentError) as exc:
        validate_profile_document(load_yaml_text(text, "p.yaml"), [parse_override(o) for o in overrides])
    return [i.render() for i in exc.value.issues]


# --- a --set value is never echoed ----------------------------------------------------------------------------


def _leaf_keys(model: type[BaseModel], prefix: str = "") -> Iterator[str]:
    """Every key path of the profile schema (a mapping's key as `X`, a list's item as `0`)."""
    for name, field in model.model_fields.items():
        key = f"{prefix}{name}"
        yield key
        for inner in _models_in(field.annotation):
            yield from _leaf_keys(inner, f"{key}.")
        if _is_mapping_or_list(field.annotation):
            yield f"{key}.X" if _origin(field.annotation) is dict else f"{key}.0"


def _origin(annotation: Any) -> Any:
    for arg in (annotation, *typing.get_args(annotation)):
        if typing.get_origin(arg) in (dict, list):
            return typing.get_origin(arg)
    return None


def _is_mapping_or_list(annotation: Any) -> bool:
    return _origin(annotation) is not None


def _models_in(annotation: Any) -> Iterator[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
    elif typing.get_origin(annotation) in (typing.Union, types.UnionType, list, dict, typing.Annotated):
        for arg in typing.get_args(annotation):
            yield from _models_in(arg)


KEYS = sorted(set(_leaf_keys(Profile)))


@pytest.mark.parametrize(
    "override",
    [
        f"runtime.env.HF_TOKEN={SECRET}",
        f"server.api_key={SECRET}",
        f"runtime.secrets.X={SECRET}",
        f"network.nodes.0.env.HF_TOKEN={SECRET}",
        f"engine.extra_args=[--api-key, {SECRET}]",
        f"server.host={SECRET}!",
        f"engine.ascend.jemalloc={SECRET}",
        f"runtime.secrets.X.env={SECRET}-x",
        f"model.dtype={SECRET}",
        f"network.nodes.0.address={SECRET}",
        f"allow=[{SECRET}]",
        f"metadata.name={SECRET}",
        f"runtime.env={{A_TOKEN: [{SECRET}]}}",
    ],
)
def test_the_cli_never_echoes_a_set_value(override: str) -> None:
    result = runner.invoke(app, ["validate", str(CPU_DEMO), "--set", override])
    assert result.exit_code == 2, result.output
    assert SECRET not in result.output and SECRET not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_an_argument_without_equals_is_not_echoed() -> None:
    result = runner.invoke(app, ["validate", str(CPU_DEMO), "--set", SECRET])
    assert result.exit_code == 2 and SECRET not in result.stderr and len(result.stderr.splitlines()) == 1


@settings(max_examples=120, deadline=None)
@given(
    key=st.sampled_from(KEYS),
    value=st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_./:+-]{7,30}", fullmatch=True),
)
def test_no_key_echoes_its_value(key: str, value: str) -> None:
    # every key of the schema, any secret-looking value: accepted, or refused without the value in the message
    try:
        validate_profile_document(load_yaml_text(HEAD, "p.yaml"), [parse_override(f"{key}={value}")])
    except DocumentError as exc:
        for issue in exc.issues:
            assert value not in issue.render()


# --- declared secret sources: their variable is never set inline --------------------------------------------


def _source_fields(model: type[BaseModel], prefix: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], bool]]:
    """(path, is a mapping of sources) of every SecretSource field of the schema."""
    for name, field in model.model_fields.items():
        for inner in _models_in(field.annotation):
            if issubclass(inner, SecretSource):
                yield (*prefix, name), _origin(field.annotation) is dict
            else:
                yield from _source_fields(inner, (*prefix, name))


SOURCE_FIELDS = list(_source_fields(Profile))


def _with_source(path: tuple[str, ...], mapping: bool) -> str:
    """YAML declaring one secret source `{env: SRC_VAR}` at `path` (under a new key when it is a mapping)."""
    text = "".join(f"{'  ' * depth}{part}:\n" for depth, part in enumerate(path))
    if mapping:
        return text + f"{'  ' * len(path)}MY_SECRET: {{env: SRC_VAR}}\n"
    return text + f"{'  ' * len(path)}env: SRC_VAR\n"


@pytest.mark.parametrize(
    ("key", "path"),
    [
        ("api_key", "api_key"),
        ("hf_token", "hf_token"),
        ("kv_transfer.password", "kv_transfer.password"),
        ("ascend_scheduler_config.secret", "ascend_scheduler_config.secret"),
    ],
)
def test_a_secret_named_additional_config_key_is_refused_without_its_value(key: str, path: str) -> None:
    # --additional-config is argv: plans print it, rendered files hold it (it was printed, rendered and logged)
    for args in (["plan"], ["render", "-t", "k8s"], ["serve", "--dry-run", "--json"]):
        command = [args[0], str(CPU_DEMO), *args[1:], "--set", f"engine.additional_config.{key}={SECRET}"]
        result = runner.invoke(app, command)
        assert result.exit_code == 2, result.output
        assert SECRET not in result.output
        assert f"`{path}` looks like a secret" in result.output


def test_additional_config_keys_that_are_not_secrets_pass() -> None:
    # switches under a secret-looking name are not secrets; nested maps are searched, names split on `_`
    text = HEAD + "engine:\n  additional_config:\n    use_key_cache: true\n    max_tokens_hint: 8\n    x: {token: 1}\n"
    assert validate_profile_document(load_yaml_text(text, "p.yaml"), []) is not None
    [issue] = _refusal(HEAD + "engine:\n  additional_config:\n    rows: [{db_password: hunter2x}]\n")
    assert "rows.0.db_password" in issue and "hunter2x" not in issue


EXTRA_CONFIG_SECRETS = {
    "separate": (["--additional-config", f'{{"api_key": "{SECRET}", "hf_token": "hf_{SECRET}"}}'], 0, "api_key"),
    "underscore-equals": (["--seed", "1", f'--additional_config={{"x": {{"hf_token": "{SECRET}"}}}}'], 2, "x.hf_token"),
    "abbreviated": (["--additional-c", f'{{"db_password": "{SECRET}"}}'], 0, "db_password"),
    "shortest-prefix": ([f'--ad={{"rows": [{{"token": "{SECRET}"}}]}}'], 0, "rows.0.token"),
    "dotted-key": (["--additional-config.kv.password", SECRET], 0, "kv.password"),
    # JSON the bounded reader refuses but vLLM's json.loads accepts still reaches the argv: scanned as vLLM reads it
    "not-a-number-beside": (["--additional-config", f'{{"x": NaN, "api_key": "{SECRET}"}}'], 0, "api_key"),
    "repeated-key": (["--additional-config", f'{{"token": "{SECRET}", "token": null}}'], 0, "token"),
}


@pytest.mark.parametrize(("args", "index", "path"), EXTRA_CONFIG_SECRETS.values(), ids=EXTRA_CONFIG_SECRETS.keys())
def test_a_secret_in_an_additional_config_of_extra_args_is_refused_at_its_item(
    args: list[str], index: int, path: str
) -> None:
    # engine.extra_args reaches the same argv as engine.additional_config: the value was validated and printed
    [issue] = _refusal(HEAD + f"engine:\n  extra_args: {json.dumps(args)}\n")
    assert issue.startswith("p.yaml:10:") and f"engine.extra_args[{index}]: " in issue, issue
    assert f"holds `{path}`, which looks like a secret" in issue
    assert SECRET not in issue


def test_a_secret_in_a_nodes_additional_config_is_refused_at_its_item() -> None:
    nodes = (
        "  nodes: 2\nengine:\n  parallel: {data: 2}\nnetwork:\n  nodes:\n  - {address: 10.0.0.1}\n"
        f"  - address: 10.0.0.2\n    extra_args: ['--additional-config', '{{\"hf_token\": \"{SECRET}\"}}']\n"
    )
    [issue] = _refusal(HEAD + nodes)
    assert "network.nodes[1].extra_args[0]: " in issue and "holds `hf_token`" in issue and SECRET not in issue


def test_plan_refuses_a_secret_in_extra_args_additional_config_without_printing_it(tmp_path: Path) -> None:
    profile = tmp_path / "p.yaml"
    config = json.dumps({"api_key": SECRET, "hf_token": f"hf_{SECRET}"})
    profile.write_text(HEAD + f"engine:\n  extra_args: ['--additional-config', '{config}']\n", encoding="utf-8")
    for args in (["plan"], ["render", "-t", "k8s"], ["serve", "--dry-run", "--json"]):
        result = runner.invoke(app, [args[0], str(profile), *args[1:]])
        assert result.exit_code == 2, result.output
        assert SECRET not in result.output and "`--additional-config` in engine.extra_args holds" in result.output


def test_extra_args_additional_config_without_secrets_passes() -> None:
    # the same keys engine.additional_config may hold: switches under a secret-looking name, non-secret names
    config = json.dumps({"use_key_cache": True, "max_tokens_hint": 8, "x": {"token": 1}})
    text = HEAD + f"engine:\n  extra_args: ['--additional-config', '{config}', '--hf-token']\n"
    assert validate_profile_document(load_yaml_text(text, "p.yaml"), []) is not None


def test_the_schema_declares_secret_sources() -> None:
    assert (("server", "api_key"), False) in SOURCE_FIELDS and (("runtime", "secrets"), True) in SOURCE_FIELDS


@pytest.mark.parametrize(("path", "mapping"), SOURCE_FIELDS)
@pytest.mark.parametrize("env_map", ["runtime.env", "network.nodes.0.env"])
def test_a_secret_sources_variable_is_refused_in_every_env_map(
    path: tuple[str, ...], mapping: bool, env_map: str, tmp_path: Path
) -> None:
    text = HEAD + _with_source(path, mapping) + "network:\n  nodes:\n    - address: 10.0.0.1\n"
    declared = validate_profile_document(load_yaml_text(text, "p.yaml"))
    assert [d.source.env for d in secret_sources(declared)] == ["SRC_VAR"]
    profile = tmp_path / "p.yaml"
    profile.write_text(text)
    result = runner.invoke(app, ["validate", str(profile), "--set", f"{env_map}.SRC_VAR={SECRET}"])
    assert result.exit_code == 2, result.output
    [line] = result.stderr.strip().splitlines()
    assert SECRET not in result.output + result.stderr
    assert line.startswith(f"error: --set {env_map}.SRC_VAR: ") and ".".join(path) in line


# --- the log: multi-line secrets, the minimum length -------------------------------------------------------


def test_a_multi_line_secret_is_redacted_whole_and_line_by_line(tmp_path: Path) -> None:
    secret = "first-line-of-a-key\nsecond-line-of-a-key\n"
    shown: list[str] = []
    sink = LogSink(tmp_path / "log", console=shown.append, secrets=[secret])
    sink.engine_line("loaded first-line-of-a-key from env")
    sink.engine_line("and second-line-of-a-key too")
    sink.event(f"whole: {secret!r}")
    sink.close()
    text = (tmp_path / "log").read_text()
    assert "first-line-of-a-key" not in text and "second-line-of-a-key" not in text
    assert "first-line-of-a-key" not in "".join(shown)


@settings(max_examples=60, deadline=None)
@given(lines=st.lists(st.from_regex(r"[A-Za-z0-9+/=_-]{8,40}", fullmatch=True), min_size=1, max_size=4))
def test_every_line_of_a_secret_is_a_needle(lines: list[str]) -> None:
    secret = "\n".join(lines)
    needles = secret_needles([secret])
    for line in lines:
        assert line in needles
    log_line = " | ".join(lines)
    redacted = log_line
    for needle in needles:
        redacted = redacted.replace(needle, "<redacted>")
    assert not any(line in redacted for line in lines)


@pytest.mark.parametrize("value", ["a", "short12", "long-enough-line\nab", "  x  "])
def test_a_short_secret_is_refused_with_the_minimum(value: str) -> None:
    with pytest.raises(LaunchError) as exc:
        resolve_secret(SecretRef(env="K"), {"K": value})
    message = str(exc.value)
    assert str(MIN_SECRET_CHARS) in message and "env:K" in message
    assert all(part.strip() not in message for part in value.splitlines() if len(part.strip()) > 1)


def test_a_short_key_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "k").write_text("abc\n")
    with pytest.raises(LaunchError, match=f"shorter than {MIN_SECRET_CHARS} characters"):
        resolve_secret(SecretRef(file=str(tmp_path / "k")), {})


def test_a_long_enough_multi_line_secret_is_accepted() -> None:
    value = "first-line-of-a-key\nsecond-line-of-a-key"
    assert resolve_secret(SecretRef(env="K"), {"K": value}) == value


# --- diagnose ------------------------------------------------------------------------------------------------


KEYS_IN_LOGS = [
    ("--api-key {v}", "{v}"),
    ("--api-key={v}", "{v}"),
    ("HF_TOKEN={v}", "{v}"),
    ("VLLM_API_KEY: {v}", "{v}"),
    ("{{'api_key': '{v}'}}", "{v}"),
    ("Authorization: Bearer {v}", "{v}"),
    ("authorization: {v}", "{v}"),
    ('--api-key "{v}"', "{v}"),  # quoted as a shell writes it: the quote hid the value
    ("--api-key '{v}'", "{v}"),
    ("{{'model': 'Qwen/Qwen3-8B', 'api_key': ['{v}'], 'port': 8000}}", "{v}"),  # vLLM's non-default args
    ("Namespace(api_key=['{v}'], port=8000)", "{v}"),
]


@pytest.mark.parametrize("as_json", [False, True])
def test_diagnose_redacts_key_bearing_lines(tmp_path: Path, as_json: bool) -> None:
    value = "sk-live-0123456789abcdef"
    lines = [f"OSError: [Errno 98] Address already in use {shape.format(v=value)}" for shape, _ in KEYS_IN_LOGS]
    for line in lines:
        log = tmp_path / "engine.log"
        log.write_text(line + "\n")
        result = runner.invoke(app, ["diagnose", str(log), *(["--json"] if as_json else [])])
        assert result.exit_code == 1, result.output  # a failure was found
        assert value not in result.output, line
        assert "Address already in use" in (
            json.loads(result.output)["matches"][0]["line"] if as_json else result.output
        )


@settings(max_examples=100, deadline=None)
@given(
    value=st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._~+/=-]{7,40}", fullmatch=True),
    shape=st.sampled_from([s for s, _ in KEYS_IN_LOGS] + ["export AWS_SECRET_ACCESS_KEY={v}", "DB_PASSWORD={v} x"]),
)
def test_key_material_never_survives(value: str, shape: str) -> None:
    assert value not in redact_key_material("prefix " + shape.format(v=value) + " suffix")


@pytest.mark.parametrize(
    "line",
    ['--api-key "a quoted secret with spaces" --port 1', "GET https://user:url-password-123@hub.local/x failed"],
)
def test_quoted_and_url_secrets_are_redacted_whole(line: str) -> None:
    assert "secret" not in redact_key_material(line).replace("<redacted>", "")
    assert "url-password-123" not in redact_key_material(line)


def test_ordinary_lines_are_left_alone() -> None:
    for line in [
        "TOKENIZERS_PARALLELISM=false",
        "max tokens 128, basic block size 16",
        "use_token: true",
        "see http://example.com:8080/a",
        "sizes: [1, 2]",
    ]:
        assert redact_key_material(line) == line


def test_a_failed_start_shows_its_log_without_key_material(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`serve`'s failure report (log tail and the diagnosis's line) redacts keys the profile did not declare."""
    line = "RuntimeError: bad token HF_TOKEN=hf_leakedvalue123 (Authorization: Bearer sk-leaked-4567)"
    found = Diagnosis("log.test", "a summary", "a fix", "a source", line)
    print_failure([line], [found], tmp_path / "engine.log")
    err = capsys.readouterr().err
    assert "hf_leakedvalue123" not in err and "sk-leaked-4567" not in err
    assert err.count("HF_TOKEN=<redacted>") == 2
