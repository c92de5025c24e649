"""Secrets through the CLI: no command prints a secret's value (every reporting command, every render target,
`check --json`), inline secrets are refused on every path with exit 2, and `serve` warns about key files
others can read before it starts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ascendctl.cli import app
from ascendctl_engine.state import StateStore
from ascendctl_engine.supervisor import stop_deployment

runner = CliRunner()

# One value per way a secret reaches the environment: the API key's source, a runtime.secrets source (both
# named so that only the profile says they are secrets), and variables secret by name alone.
SECRET_ENV = {
    "VLLM_DEMO_AUTH": "api-key-value-0a1b2c",
    "ASCEND_HUB_CRED": "hub-token-value-3d4e5f",
    "VLLM_API_KEY": "stray-api-key-value-6a7b",
    "HF_TOKEN": "stray-hf-token-value-8c9d",
    "HCCL_PASSWORD": "stray-password-value-0e1f",
}
FILE_SECRET = "file-secret-value-2a3b4c"
TARGETS = ("k8s", "docker", "compose", "systemd", "script")


def write_profile(tmp_path: Path, *, key_mode: int = 0o600, extra: str = "") -> Path:
    key_file = tmp_path / "db key"
    key_file.write_text(FILE_SECRET + "\n")
    key_file.chmod(key_mode)
    profile = tmp_path / "sec.yaml"
    profile.write_text(
        "apiVersion: ascendctl/v1\nkind: Profile\nmetadata: {name: sec}\nmodel: {source: org/model}\n"
        "target: {backend: cpu}\nserver: {api_key: {env: VLLM_DEMO_AUTH}}\n"
        "runtime:\n  env: {TOKENIZERS_PARALLELISM: 'false'}\n  secrets:\n"
        f"    HF_TOKEN: {{env: ASCEND_HUB_CRED}}\n    DB_PASS: {{file: '{key_file}'}}\n" + extra
    )
    return profile


def assert_no_secret(args: list[str], output: str) -> None:
    for value in (*SECRET_ENV.values(), FILE_SECRET):
        assert value not in output, (args, value)


def test_no_command_prints_a_secret_value(tmp_path: Path) -> None:
    profile = str(write_profile(tmp_path))
    commands = [
        ["validate", profile],
        ["validate", profile, "--json"],
        ["plan", profile],
        ["plan", profile, "--why"],
        ["plan", profile, "--json"],
        ["serve", profile, "--dry-run"],
        ["serve", profile, "--dry-run", "--json"],
        ["check", profile],
        ["check", profile, "--json"],
        *(["render", profile, "--target", target] for target in TARGETS),
    ]
    for args in commands:
        result = runner.invoke(app, args, env=SECRET_ENV)
        assert result.exit_code in (0, 1), (args, result.output)  # `check` fails on a host without an engine
        assert_no_secret(args, result.stdout + result.stderr)
    out = tmp_path / "rendered"
    for target in TARGETS:
        result = runner.invoke(app, ["render", profile, "--target", target, "-o", str(out / target)], env=SECRET_ENV)
        assert result.exit_code == 0, result.output
        for file in (out / target).iterdir():
            assert_no_secret([target, file.name], file.read_text())

    # check collected the sources (they have collected prefixes) and printed them redacted
    report = json.loads(runner.invoke(app, ["check", profile, "--json"], env=SECRET_ENV).stdout)
    env = report["host"]["env"]
    assert {name: env[name] for name in ("VLLM_DEMO_AUTH", "ASCEND_HUB_CRED", "VLLM_API_KEY", "HCCL_PASSWORD")} == (
        dict.fromkeys(("VLLM_DEMO_AUTH", "ASCEND_HUB_CRED", "VLLM_API_KEY", "HCCL_PASSWORD"), "<redacted>")
    )
    plan = json.loads(runner.invoke(app, ["plan", profile, "--json"], env=SECRET_ENV).stdout)
    [node] = plan["nodes"]
    assert {k: node["env"][k] for k in ("VLLM_API_KEY", "HF_TOKEN", "DB_PASS")} == dict.fromkeys(
        ("VLLM_API_KEY", "HF_TOKEN", "DB_PASS"), "<redacted>"
    )


def test_check_without_a_profile_redacts_secret_names() -> None:
    result = runner.invoke(app, ["check", "--json"], env=SECRET_ENV)
    env = json.loads(result.stdout)["host"]["env"]
    assert (env["VLLM_API_KEY"], env["HCCL_PASSWORD"]) == ("<redacted>", "<redacted>")
    assert SECRET_ENV["VLLM_API_KEY"] not in result.stdout and SECRET_ENV["HCCL_PASSWORD"] not in result.stdout


INLINE = {
    "runtime.env": ("runtime:\n  env:\n    HF_TOKEN: hf-inline-value-77\n", "runtime.env.HF_TOKEN"),
    "extra_args": ("engine:\n  extra_args: ['--api-key=sk-inline-value-77']\n", "engine.extra_args[0]"),
    "api_key": ("server:\n  api_key: sk-inline-value-77\n", "server.api_key"),
}


@pytest.mark.parametrize("where", sorted(INLINE))
@pytest.mark.parametrize(
    "command", [["validate"], ["plan"], ["serve", "--dry-run"], ["render", "--target", "k8s"], ["check"]]
)
def test_inline_secrets_are_refused_on_every_path(tmp_path: Path, where: str, command: list[str]) -> None:
    body, path = INLINE[where]
    profile = tmp_path / "inline.yaml"
    profile.write_text(
        "apiVersion: ascendctl/v1\nkind: Profile\nmetadata: {name: inline}\nmodel: {source: org/model}\n"
        "target: {backend: cpu}\n" + body
    )
    result = runner.invoke(app, [command[0], str(profile), *command[1:]])
    assert result.exit_code == 2, result.output
    line = body.count("\n", 0, body.index("-value-")) + 6
    assert f"{profile}:{line}:" in result.stderr and f": {path}: " in result.stderr
    assert "inline-value-77" not in result.output


@pytest.fixture
def cleanup() -> object:
    yield None
    for entry in StateStore().entries():
        stop_deployment(entry, timeout=10)


def test_serve_warns_about_a_key_file_others_can_read_before_starting(
    fake_cpu_engine_env: Path, tmp_path: Path, free_port: int, cleanup: object
) -> None:
    model = tmp_path / "model"
    model.mkdir()
    key_file = tmp_path / "api.key"
    key_file.write_text(FILE_SECRET + "\n")
    key_file.chmod(0o644)
    profile = tmp_path / "keyed.yaml"
    profile.write_text(
        "apiVersion: ascendctl/v1\nkind: Profile\nmetadata: {name: keyed}\n"
        f"model: {{source: '{model}', served_name: tiny}}\ntarget: {{backend: cpu}}\n"
        "engine: {graph: {mode: eager}}\n"
        f"server: {{host: 127.0.0.1, port: {free_port}, shutdown_timeout: 5, api_key: {{file: '{key_file}'}}}}\n"
        "runtime:\n  ready_timeout: 30\n  env: {FAKE_VLLM_PRINT_SECRET: '1'}\n"
        "  secrets: {HF_TOKEN: {env: ASCEND_HUB_CRED}}\n"
    )
    result = runner.invoke(app, ["serve", str(profile), "--detach"], env=SECRET_ENV)
    assert result.exit_code == 0, result.output
    warning = (
        f"ascendctl: warning: server.api_key.file {key_file} is open to group/others (mode 0644); only its owner "
        f"should read it: chmod 600 {key_file}"
    )
    assert warning in result.stderr
    assert_no_secret(["serve"], result.output)
    logs = runner.invoke(app, ["logs", "keyed"])
    assert "'api_key': '<redacted>'" in logs.stdout  # the engine got the file's key; the log has the placeholder
    assert_no_secret(["logs"], logs.stdout)
    assert runner.invoke(app, ["stop", "keyed"]).exit_code == 0


@pytest.mark.parametrize(
    "override", ["runtime.env.HF_TOKEN=hf_0verride_secret", "server.api_key=hf_0verride_secret",
                 "runtime.secrets.X=hf_0verride_secret"],
)  # fmt: skip
def test_a_set_override_with_a_secret_is_refused_without_echoing_it(override: str) -> None:
    from typer.testing import CliRunner

    from ascendctl.cli import app

    demo = Path(__file__).resolve().parents[2] / "profiles" / "cpu-demo.yaml"
    result = CliRunner().invoke(app, ["validate", str(demo), "--set", override])
    assert result.exit_code == 2 and "hf_0verride_secret" not in result.output
    assert "--set " + override.partition("=")[0] in result.output  # the key, never the value
