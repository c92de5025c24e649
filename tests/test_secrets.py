"""Secrets: inline ones refused with a located error that never quotes the value, `runtime.secrets` carried as
references from the profile to every node's command and every rendered artifact, key files checked, and
secret variables redacted wherever host facts are printed."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from ascendctl.check import CheckContext, host_findings
from ascendctl.core.errors import DocumentError, Issue
from ascendctl.core.findings import RULES
from ascendctl.core.yamlio import load_yaml_text
from ascendctl.facts.matrix import load_matrix
from ascendctl.outputs.render import RenderOptions, render
from ascendctl.plan.planner import plan_profile
from ascendctl.run.serve import plan_notes
from ascendctl.schema.loader import validate_profile_document
from ascendctl.schema.profile import Profile
from ascendctl.schema.secrets import (
    declared_secret_names,
    inline_secret_env,
    key_file_warnings,
    profile_key_files,
    secret_flags,
)
from ascendctl_engine.argv_items import parse_args
from ascendctl_engine.host.facts import HostFacts, redact_env
from ascendctl_engine.launcher import LogSink, launch, resolve_secrets
from ascendctl_engine.spec import REDACTED, EngineCommand, SecretRef, is_secret_name, secret_name_part

HEAD = "apiVersion: ascendctl/v1\nkind: Profile\nmetadata:\n  name: sec\nmodel:\n  source: org/model\n"
CPU = "target:\n  backend: cpu\n"
VALUE = "sk-live-9f8e7d6c5b4a"  # what a user might paste; no message may quote it


def position(text: str, needle: str) -> tuple[int, int]:
    """Line and column (1-based) just after `needle`: where its value starts."""
    index = text.index(needle) + len(needle)
    before = text[:index]
    return before.count("\n") + 1, index - (before.rfind("\n") + 1) + 1


def issues(body: str) -> tuple[str, list[Issue]]:
    text = HEAD + body
    with pytest.raises(DocumentError) as exc:
        validate_profile_document(load_yaml_text(text, "s.yaml"))
    return text, exc.value.issues


def one(body: str) -> tuple[str, Issue]:
    text, found = issues(body)
    assert len(found) == 1, [i.render() for i in found]
    assert VALUE not in found[0].render()
    return text, found[0]


def valid(body: str) -> Profile:
    return validate_profile_document(load_yaml_text(HEAD + body, "s.yaml"))


# --- the name rule ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    ["HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "VLLM_API_KEY", "OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY",
     "DB_PASSWORD", "PGPASSWORD", "MYSQL_PASSWD", "APP_SECRETS", "hf_token", "GITHUB_APIKEY"],
)  # fmt: skip
def test_secret_names(name: str) -> None:
    assert is_secret_name(name)


@pytest.mark.parametrize(
    "name",
    ["TOKENIZERS_PARALLELISM", "VLLM_MAX_TOKENS", "KEYRING_BACKEND", "HCCL_BUFFSIZE", "ASCEND_RT_VISIBLE_DEVICES",
     "MONKEY_PATCH", "PWD", "VLLM_CPU_KVCACHE_SPACE", "PASS_THROUGH", "SECRETARY"],
)  # fmt: skip
def test_names_that_only_look_alike_are_not_secrets(name: str) -> None:
    assert not is_secret_name(name)


def test_the_name_rule_names_the_part() -> None:
    assert secret_name_part("MY_API_KEY") == "KEY"
    assert inline_secret_env({"A": "1", "HF_TOKEN": "x"}) == [("HF_TOKEN", "TOKEN")]


# --- inline secrets refused (item 1) --------------------------------------------------------------------


def test_secret_named_runtime_env_entry_is_refused_at_its_key() -> None:
    text, issue = one(CPU + f"runtime:\n  env:\n    TOKENIZERS_PARALLELISM: 'false'\n    HF_TOKEN: {VALUE}\n")
    assert issue.path == "runtime.env.HF_TOKEN"
    assert (issue.line, issue.column) == position(text, "HF_TOKEN: ")
    assert "use runtime.secrets: {HF_TOKEN: {env: VAR}}" in issue.message
    assert RULES["profile.runtime.env-inline-secret"].severity == "error"


@pytest.mark.parametrize("value", ["'1'", "'0'", "'true'", "'False'", "'off'", "''"])
def test_a_secret_named_switch_is_no_secret(value: str) -> None:
    # huggingface_hub's HF_HUB_DISABLE_IMPLICIT_TOKEN=1 switches something off; it holds no token
    profile = valid(CPU + f"runtime:\n  env:\n    HF_HUB_DISABLE_IMPLICIT_TOKEN: {value}\n")
    assert "HF_HUB_DISABLE_IMPLICIT_TOKEN" in profile.runtime.env


def test_api_key_in_runtime_env_points_to_server_api_key() -> None:
    _, issue = one(CPU + f"runtime:\n  env:\n    VLLM_API_KEY: {VALUE}\n")
    assert issue.path == "runtime.env.VLLM_API_KEY"
    assert "set server.api_key (env or file)" in issue.message


def test_a_secret_named_entry_of_the_wrong_type_is_not_quoted() -> None:
    # A number is not a string: the type error would have quoted it ("..., got 123456789").
    _, issue = one(CPU + "runtime:\n  env:\n    DB_PASSWORD: 123456789\n")
    assert issue.path == "runtime.env.DB_PASSWORD"
    assert "123456789" not in issue.render()


@pytest.mark.parametrize(
    "args",
    [
        f"['--api-key', '{VALUE}']",
        f"['--api_key={VALUE}']",
        f"['--seed', '1', '--api-key={VALUE}']",
        f"['--api-k', '{VALUE}']",  # vLLM's parser takes unique-prefix abbreviations
        f"['--hf-token', '{VALUE}']",
        f"['--hf_token={VALUE}']",
    ],
)
def test_secret_flags_in_extra_args_are_refused_at_their_position(args: str) -> None:
    _, issue = one(CPU + f"engine:\n  extra_args: {args}\n")
    index = next(i for i, a in enumerate(yaml.safe_load(args)) if a.startswith(("--api", "--hf")))
    assert issue.path == f"engine.extra_args[{index}]"
    assert ("set server.api_key" if "--api" in args else "use runtime.secrets") in issue.message


def test_a_bare_hf_token_flag_and_lookalike_flags_pass() -> None:
    # `--hf-token` alone means "the cached hub login"; `--api-server-count` only starts like `--api-key`.
    assert secret_flags(parse_args(["--hf-token", "--api-server-count", "2", "--max-num-batched-tokens", "8"])) == []
    valid(CPU + "engine:\n  extra_args: ['--hf-token', '--seed', '1']\n")


def test_inline_api_key_is_refused_without_quoting_it() -> None:
    text, issue = one(CPU + f"server:\n  api_key: {VALUE}\n")
    assert issue.path == "server.api_key"
    assert (issue.line, issue.column) == position(text, "api_key: ")
    assert "never written inline" in issue.message


def test_an_api_key_pasted_as_its_env_name_is_refused_without_quoting_it() -> None:
    with pytest.raises(DocumentError, match=r"server\.api_key\.env: not a valid environment variable name") as exc:
        valid(CPU + f"server:\n  api_key:\n    env: '{VALUE} '\n")
    assert VALUE not in str(exc.value)


# --- runtime.secrets (item 2): the schema ----------------------------------------------------------------


def test_runtime_secrets_from_env_or_file() -> None:
    profile = valid(CPU + "runtime:\n  secrets:\n    HF_TOKEN: {env: HUB_TOKEN_SRC}\n    DB_PASS: {file: /run/k}\n")
    assert {n: (s.env, s.file) for n, s in profile.runtime.secrets.items()} == {
        "HF_TOKEN": ("HUB_TOKEN_SRC", None),
        "DB_PASS": (None, "/run/k"),
    }
    sources = (profile.server.api_key, profile.runtime.secrets)
    assert declared_secret_names(*sources) == {"HF_TOKEN", "HUB_TOKEN_SRC", "DB_PASS"}
    assert [k.label for k in profile_key_files(*sources)] == ["runtime.secrets.DB_PASS.file"]


def test_a_runtime_secret_value_written_inline_is_refused_without_quoting_it() -> None:
    text, issue = one(CPU + f"runtime:\n  secrets:\n    HF_TOKEN: {VALUE}\n")
    assert issue.path == "runtime.secrets.HF_TOKEN"
    assert (issue.line, issue.column) == position(text, "HF_TOKEN: ")
    assert "{env: VAR} or {file: PATH}" in issue.message


@pytest.mark.parametrize("source", ["{env: A, file: /b}", "{}"], ids=["both", "neither"])
def test_a_runtime_secret_has_exactly_one_source(source: str) -> None:
    _, issue = one(CPU + f"runtime:\n  secrets:\n    HF_TOKEN: {source}\n")
    assert issue.path == "runtime.secrets.HF_TOKEN"
    assert "exactly one of `env` or `file`" in issue.message


def test_a_runtime_secret_env_source_must_be_a_name() -> None:
    _, issue = one(CPU + f"runtime:\n  secrets:\n    HF_TOKEN: {{env: '{VALUE}!'}}\n")
    assert issue.path == "runtime.secrets.HF_TOKEN"
    assert "names an environment variable" in issue.message


@pytest.mark.parametrize("name", ["BAD-NAME", "1ST", "HÉ_TOKEN"])
def test_runtime_secret_names_are_posix_names(name: str) -> None:
    _, issue = one(CPU + f"runtime:\n  secrets:\n    '{name}': {{env: SRC}}\n")
    assert issue.path == "runtime.secrets"
    assert "[A-Za-z_][A-Za-z0-9_]*" in issue.message


def test_a_variable_is_in_runtime_env_or_runtime_secrets() -> None:
    text, issue = one(CPU + "runtime:\n  env:\n    SHARED: a\n  secrets:\n    SHARED: {file: /k}\n")
    assert issue.path == "runtime.secrets.SHARED"
    assert (issue.line, issue.column) == position(text, "  secrets:\n    SHARED: ")
    assert "keep the runtime.secrets entry" in issue.message


def test_the_api_key_is_not_a_runtime_secret() -> None:
    _, issue = one(CPU + "runtime:\n  secrets:\n    VLLM_API_KEY: {env: K}\n")
    assert issue.path == "runtime.secrets.VLLM_API_KEY"
    assert "set server.api_key" in issue.message


# --- runtime.secrets (item 2): plan ----------------------------------------------------------------------

TWO_NODE = (
    "target:\n  backend: cpu\n  nodes: 2\nengine:\n  parallel: {data: 2}\n"
    "network:\n  nodes: [{address: 10.0.0.1}, {address: 10.0.0.2}]\n"
)
SECRETS = "runtime:\n  secrets:\n    HF_TOKEN: {env: HUB_SRC}\n    DB_PASS: {file: /run/db key}\n"


def test_every_node_gets_the_runtime_secrets_as_references() -> None:
    plan = plan_profile(valid(TWO_NODE + "server:\n  api_key: {env: KEY_SRC}\n" + SECRETS), matrix=load_matrix())
    head, worker = plan.commands
    assert head.secret_env == {
        "VLLM_API_KEY": SecretRef(env="KEY_SRC"),
        "HF_TOKEN": SecretRef(env="HUB_SRC"),
        "DB_PASS": SecretRef(file="/run/db key"),
    }
    assert worker.secret_env == {"HF_TOKEN": SecretRef(env="HUB_SRC"), "DB_PASS": SecretRef(file="/run/db key")}
    for command in plan.commands:
        assert "HF_TOKEN" not in command.env and command.display_env()["HF_TOKEN"] == REDACTED
        sources = plan.serving.env_sources[command.node]
        assert sources["HF_TOKEN"] == "user: runtime.secrets.HF_TOKEN (env:HUB_SRC), read at launch"
    shown = plan.to_json()
    assert shown["nodes"][1]["secret_env"] == {"HF_TOKEN": "env:HUB_SRC", "DB_PASS": "file:/run/db key"}
    assert shown["settings"]["runtime.secrets"]["value"] == {
        "HF_TOKEN": {"env": "HUB_SRC", "file": None},
        "DB_PASS": {"env": None, "file": "/run/db key"},
    }


def test_a_runtime_secret_replaces_a_planned_value_of_the_same_name() -> None:
    plan = plan_profile(valid(CPU + "runtime:\n  secrets:\n    VLLM_CPU_KVCACHE_SPACE: {env: S}\n"))
    [command] = plan.commands
    assert "VLLM_CPU_KVCACHE_SPACE" not in command.env
    assert command.secret_env == {"VLLM_CPU_KVCACHE_SPACE": SecretRef(env="S")}
    assert "replaces the planned value" in plan.serving.env_sources[0]["VLLM_CPU_KVCACHE_SPACE"]


# --- runtime.secrets (item 2): rendered artifacts ----------------------------------------------------------


def _files(body: str, target: str) -> dict[str, str]:
    plan = plan_profile(valid(body), matrix=load_matrix())
    return {f.name: f.content for f in render(plan, target, RenderOptions())}


def test_kubernetes_reads_runtime_secrets_from_one_secret_with_a_key_per_variable() -> None:
    [content] = _files(TWO_NODE + "server:\n  api_key: {file: /k}\n" + SECRETS, "k8s").values()
    header = [line for line in content.splitlines() if line.startswith("#")]
    assert "# API key: kubectl create secret generic sec-api-key --from-file=api-key=KEYFILE" in header
    assert (
        "# Secrets (runtime.secrets): kubectl create secret generic sec-secrets "
        "--from-literal=HF_TOKEN=\"${HUB_SRC}\" '--from-file=DB_PASS=/run/db key'"
    ) in header
    lws = next(yaml.safe_load_all(content))
    templates = lws["spec"]["leaderWorkerTemplate"]
    for role in ("leaderTemplate", "workerTemplate"):
        env = {e["name"]: e for e in templates[role]["spec"]["containers"][0]["env"]}
        for name in ("HF_TOKEN", "DB_PASS"):
            assert env[name] == {"name": name, "valueFrom": {"secretKeyRef": {"name": "sec-secrets", "key": name}}}
    leader = {e["name"]: e for e in templates["leaderTemplate"]["spec"]["containers"][0]["env"]}
    assert leader["VLLM_API_KEY"]["valueFrom"]["secretKeyRef"] == {"name": "sec-api-key", "key": "api-key"}


def test_kubernetes_without_an_api_key_names_no_api_key_secret() -> None:
    [content] = _files(CPU + SECRETS, "k8s").values()
    assert "sec-api-key" not in content and "sec-secrets" in content


def test_scripts_load_runtime_secrets_at_start(tmp_path: Path) -> None:
    key_file = tmp_path / "db key"
    key_file.write_text("db-value\nsecond line\n")
    body = CPU + f"runtime:\n  secrets:\n    HF_TOKEN: {{env: HUB_SRC}}\n    DB_PASS: {{file: '{key_file}'}}\n"
    [script] = _files(body, "script").values()
    assert 'export HF_TOKEN="${HUB_SRC:?set HUB_SRC to the value of runtime.secrets.HF_TOKEN}"' in script
    assert "hub-value" not in script and "db-value" not in script
    seen = _run_with_fake(script, tmp_path, {"HUB_SRC": "hub-value"})
    assert (seen["HF_TOKEN"], seen["DB_PASS"]) == ("hub-value", "db-value")
    missing = subprocess.run(["bash", "-c", script], env={"PATH": "/usr/bin:/bin"}, capture_output=True, text=True)
    assert missing.returncode != 0 and "set HUB_SRC to the value of runtime.secrets.HF_TOKEN" in missing.stderr


def test_docker_and_compose_pass_runtime_secrets_through_by_name() -> None:
    [docker] = _files(CPU + SECRETS, "docker").values()
    assert "  -e HF_TOKEN \\\n" in docker and "  -e DB_PASS \\\n" in docker
    assert "export DB_PASS=\"$(head -n 1 -- '/run/db key')\"" in docker
    [compose] = _files(CPU + SECRETS, "compose").values()
    environment = yaml.safe_load(compose)["services"]["engine"]["environment"]
    assert environment["HF_TOKEN"] == "${HF_TOKEN:?set HF_TOKEN}"
    assert "# HF_TOKEN is passed through from the shell running `docker compose up` (env:HUB_SRC)." in compose


def test_systemd_units_say_where_each_secret_comes_from() -> None:
    [unit] = _files(CPU + SECRETS, "systemd").values()
    assert "# HF_TOKEN comes from env:HUB_SRC; put env-sourced keys in the EnvironmentFile below" in unit
    assert "# DB_PASS comes from file:/run/db key, read by ascendctl at start; keep that file mode 0600." in unit


def _run_with_fake(script: str, tmp_path: Path, env: dict[str, str]) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    fake = bin_dir / "vllm"
    fake.write_text("#!/usr/bin/env python3\nimport json, os\nprint(json.dumps(dict(os.environ)))\n")
    fake.chmod(0o755)
    out = subprocess.run(
        ["bash", "-c", script], env={"PATH": f"{bin_dir}:/usr/bin:/bin", **env}, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    return dict(json.loads(out.stdout))


# --- the launcher: values only at start, redacted from every line ------------------------------------------


def test_runtime_secrets_reach_the_engine_and_are_redacted_from_its_log(tmp_path: Path) -> None:
    key_file = tmp_path / "db"
    key_file.write_text("db-value-1234\n")
    cmd = EngineCommand(
        node=0,
        role="head",
        argv=("python3", "-c", "import os; print('token', os.environ['HF_TOKEN'], os.environ['DB_PASS'])"),
        secret_env={"HF_TOKEN": SecretRef(env="HUB_SRC"), "DB_PASS": SecretRef(file=str(key_file))},
    )
    environ = {"PATH": os.environ["PATH"], "HUB_SRC": "hub-value-5678"}
    secrets = resolve_secrets(cmd.secret_env, environ)
    assert secrets == {"HF_TOKEN": "hub-value-5678", "DB_PASS": "db-value-1234"}
    shown: list[str] = []
    sink = LogSink(tmp_path / "log", console=shown.append, secrets=list(secrets.values()))
    process = launch(cmd, "/nonexistent/vllm", sink, environ=environ, secrets=secrets)
    assert process.wait(30) == 0
    process.join_reader()
    log = (tmp_path / "log").read_text()
    assert shown == ["token <redacted> <redacted>"] and "value" not in log


# --- key files (item 4) ------------------------------------------------------------------------------------


def _key_profile(tmp_path: Path, mode: int) -> tuple[Profile, Path]:
    key_file = tmp_path / "api key"
    key_file.write_text("k\n")
    key_file.chmod(mode)
    profile = valid(CPU + f"server:\n  api_key: {{file: '{key_file}'}}\nruntime:\n  secrets:\n    X: {{env: S}}\n")
    return profile, key_file


def _key_rule(profile: Profile | None) -> tuple[str, str, str | None]:
    rule = {"host.secrets.key-file-mode": RULES["host.secrets.key-file-mode"]}
    [finding] = host_findings(CheckContext(facts=HostFacts(backend="cpu"), profile=profile), rule)
    return finding.status, finding.message, finding.fix


def test_check_warns_about_a_key_file_others_can_read(tmp_path: Path) -> None:
    profile, key_file = _key_profile(tmp_path, 0o644)
    status, message, fix = _key_rule(profile)
    assert status == "warn"
    assert message.startswith(f"server.api_key.file {key_file} is open to group/others (mode 0644)")
    assert message.endswith("; only its owner should read it")
    assert fix == f"chmod 600 '{key_file}'"


def test_check_passes_a_private_key_file_and_skips_without_one(tmp_path: Path) -> None:
    profile, _ = _key_profile(tmp_path, 0o600)
    assert _key_rule(profile)[0] == "pass"
    assert _key_rule(None)[0] == "skip"
    assert _key_rule(valid(CPU))[0] == "skip"


def test_check_warns_about_a_missing_key_file(tmp_path: Path) -> None:
    profile = valid(CPU + f"runtime:\n  secrets:\n    X: {{file: '{tmp_path}/absent'}}\n")
    status, message, _ = _key_rule(profile)
    assert status == "warn" and "runtime.secrets.X.file" in message and "No such file" in message


def test_serve_warns_before_starting_about_a_key_file_others_can_read(tmp_path: Path) -> None:
    profile, key_file = _key_profile(tmp_path, 0o640)
    plan = plan_profile(profile)
    warning = f"warning: server.api_key.file {key_file} is open to group/others (mode 0640)"
    assert any(n.startswith(warning) and n.endswith(f"chmod 600 '{key_file}'") for n in plan_notes(plan))
    key_file.chmod(0o600)
    assert key_file_warnings(plan.commands) == []


# --- redaction of host facts (item 3) -------------------------------------------------------------------


def test_host_facts_redact_secret_names_and_declared_names() -> None:
    env = {"VLLM_API_KEY": "a", "ASCEND_HUB_CRED": "b", "HCCL_IF_IP": "10.0.0.1", "VLLM_MY_TOKEN": "c"}
    assert redact_env(env) == {**env, "VLLM_API_KEY": REDACTED, "VLLM_MY_TOKEN": REDACTED}
    facts = HostFacts(backend="cpu", env=env)
    # printed facts are redacted by the name rule even when they were read back from a file with values
    assert HostFacts.from_dict(facts.to_dict()).env["VLLM_API_KEY"] == REDACTED
    assert facts.redacted({"ASCEND_HUB_CRED"}).to_dict()["env"] == {
        "ASCEND_HUB_CRED": REDACTED, "HCCL_IF_IP": "10.0.0.1", "VLLM_API_KEY": REDACTED, "VLLM_MY_TOKEN": REDACTED,
    }  # fmt: skip
