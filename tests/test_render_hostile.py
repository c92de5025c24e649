"""Hostile profile strings through every renderer: they must reach each consumer as data, never as code.

Plans are made by the real planner from profiles whose free-text fields (runtime.env values,
engine.extra_args, model.source, model.served_name, server.api_key.file) carry line breaks, shell syntax,
YAML document markers, systemd specifiers and Kubernetes references. Each artifact is then read the way
its consumer reads it (YAML parser, bash, Kubernetes expansion, compose interpolation, systemd) and
compared with the plan.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
from pathlib import Path

import kubernetes_validate
import pytest
import yaml
from consumers import compose_unescape, k8s_expand, systemd_words

from ascendctl.core.errors import DocumentError, UserInputError
from ascendctl.facts.matrix import load_matrix
from ascendctl.outputs.render import RenderOptions, render, render_overrides
from ascendctl.plan.planner import plan_profile
from ascendctl.plan.types import Plan
from ascendctl.schema.loader import load_profile
from ascendctl_engine.sections.deployment import ApiKeySource

ROOT = Path(__file__).resolve().parents[1]
DATA_ROOT = Path("/var/lib/ascendctl")

HOSTILE_ENV = {
    "EVIL": "a\nrm -rf /\n'$(reboot)' %n $HOME \\ \" `id`",
    "YAMLY": "x\n---\nkind: Pod\nmetadata: {name: evil}",
    "K8S_REFS": "$(HCCL_IF_IP) $$ ${HOME} $(POD_IP) $",
}
HOSTILE_MODEL = "/models/it's '$(reboot)' %n $HOME \"q\" `id`\n---\nkind Pod"  # no ':' (docker -v splits on it)
HOSTILE_ARGS = ["--chat-template", "x\n---\nkind: Pod\n$(reboot) %n `id` $HOME ${POD_IP} $(POD_IP) '\"\\"]
HOSTILE_NOTE = "note\n---\nkind: Pod\nrm -rf /"
KEY_FILE_NAME = "k\ney %n $HOME '$(reboot)'"

PROFILES = {
    "single": ROOT / "profiles/cpu-demo.yaml",
    "two-node": ROOT / "profiles/deepseek-r1-w8a8-2node-a2.yaml",
}


def _hostile_plan(kind: str, target: str, tmp_path: Path) -> Plan:
    """A plan carrying hostile strings in every field that reaches an artifact. The profile loader refuses
    most of them (control characters, `tests/test_profile_boundary.py`); the renderers must stay safe on their
    own, so the values are put into an already validated profile, past the loader (defence in depth)."""
    profile = load_profile(PROFILES[kind], render_overrides(target, []))
    model = profile.model.model_copy(update={"source": HOSTILE_MODEL, "served_name": "served\nrm -rf /"})
    engine = profile.engine.model_copy(update={"extra_args": HOSTILE_ARGS})
    runtime = profile.runtime.model_copy(update={"env": {**profile.runtime.env, **HOSTILE_ENV}})
    key = ApiKeySource(file=str(tmp_path / "key"))
    server = profile.server.model_copy(
        update={"api_key": key.model_copy(update={"file": str(tmp_path / KEY_FILE_NAME)})}
    )
    hostile = profile.model_copy(update={"model": model, "engine": engine, "runtime": runtime, "server": server})
    plan = plan_profile(hostile, matrix=load_matrix(), data_root=DATA_ROOT)
    # A warning that quotes profile text ends up in every artifact's comments.
    return dataclasses.replace(plan, warnings=(*plan.warnings, HOSTILE_NOTE))


def _files(plan: Plan, target: str, **options: str) -> dict[str, str]:
    return {f.name: f.content for f in render(plan, target, RenderOptions(**options))}


def _assert_notes_stay_comments(content: str) -> None:
    notes = [line for line in content.splitlines() if line.startswith("# note: note")]
    assert notes == ["# note: note\\n---\\nkind: Pod\\nrm -rf /"]


# --- Kubernetes ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", PROFILES)
def test_hostile_values_stay_values_in_kubernetes_objects(kind: str, tmp_path: Path) -> None:
    plan = _hostile_plan(kind, "k8s", tmp_path)
    content = _files(plan, "k8s")["k8s.yaml"]
    _assert_notes_stay_comments(content)
    docs = list(yaml.safe_load_all(content))
    expected_kind = "LeaderWorkerSet" if kind == "two-node" else "Deployment"
    assert [d["kind"] for d in docs] == [expected_kind, "Service"]
    for doc in docs:
        if doc["kind"] != "LeaderWorkerSet":  # its pod templates are checked in test_render.py
            kubernetes_validate.validate(doc, "1.33.0", strict=True)
    if kind == "single":
        containers = [docs[0]["spec"]["template"]["spec"]["containers"][0]]
        volumes = docs[0]["spec"]["template"]["spec"]["volumes"]
    else:
        templates = docs[0]["spec"]["leaderWorkerTemplate"]
        containers = [templates[t]["spec"]["containers"][0] for t in ("leaderTemplate", "workerTemplate")]
        volumes = templates["leaderTemplate"]["spec"]["volumes"]
    assert {"name": "model", "hostPath": {"path": HOSTILE_MODEL, "type": "Directory"}} in volumes
    for container, command, layout in zip(containers, plan.commands, plan.deployment.nodes, strict=True):
        pod_env = {
            "POD_IP": layout.address or "",
            "LWS_LEADER_ADDRESS": plan.deployment.nodes[0].address or "",
            "LWS_WORKER_INDEX": str(layout.index),
        }
        env = {e["name"]: k8s_expand(e["value"], pod_env) for e in container["env"] if "value" in e}
        assert {k: env[k] for k in HOSTILE_ENV} == HOSTILE_ENV
        assert _pod_argv(container, pod_env, tmp_path) == list(command.argv)


def _pod_argv(container: dict, pod_env: dict[str, str], tmp_path: Path) -> list[str]:
    """The argv the container's process gets: Kubernetes expands command/args, then any `sh -c` runs."""
    words = [k8s_expand(w, pod_env) for w in [*container["command"], *container.get("args", [])]]
    if words[:2] != ["/bin/sh", "-c"]:
        return words
    return _run(["/bin/sh", "-c", words[2]], tmp_path, pod_env)["argv"]


# --- compose ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", PROFILES)
def test_hostile_values_stay_values_in_compose_files(kind: str, tmp_path: Path) -> None:
    plan = _hostile_plan(kind, "compose", tmp_path)
    files = _files(plan, "compose")
    assert len(files) == len(plan.commands)
    for content, command in zip(files.values(), plan.commands, strict=True):
        _assert_notes_stay_comments(content)
        docs = list(yaml.safe_load_all(content))
        assert len(docs) == 1 and list(docs[0]) == ["name", "services"]
        service = docs[0]["services"]["engine"]
        env = {k: compose_unescape(v) for k, v in service["environment"].items() if k not in command.secret_env}
        assert env == dict(command.env)
        for name in command.secret_env:  # the one interpolation left: the secret, from `docker compose up`
            assert service["environment"][name] == f"${{{name}:?set {name}}}"
        argv = [compose_unescape(w) for w in [*service["entrypoint"], *service["command"]]]
        assert argv == list(command.argv)
        assert f"{HOSTILE_MODEL}:{HOSTILE_MODEL}:ro" in [compose_unescape(v) for v in service["volumes"]]


# --- shell scripts ------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", PROFILES)
def test_hostile_scripts_pass_bash_n_and_exec_exactly_the_planned_command(kind: str, tmp_path: Path) -> None:
    plan = _hostile_plan(kind, "script", tmp_path)
    (tmp_path / KEY_FILE_NAME).write_text("s3cret\nsecond line\n")
    files = _files(plan, "script")
    for content, command in zip(files.values(), plan.commands, strict=True):
        _assert_notes_stay_comments(content)
        subprocess.run(["bash", "-n"], input=content, text=True, check=True, timeout=30)
        seen = _run(["bash", "-c", content], tmp_path, {})
        assert seen["argv"] == list(command.argv)
        assert {k: seen["env"][k] for k in command.env} == dict(command.env)
        assert {k: seen["env"][k] for k in command.secret_env} == dict.fromkeys(command.secret_env, "s3cret")


@pytest.mark.parametrize("kind", PROFILES)
def test_hostile_docker_scripts_pass_the_planned_env_and_command_to_docker(kind: str, tmp_path: Path) -> None:
    plan = _hostile_plan(kind, "docker", tmp_path)
    files = _files(plan, "docker")
    for content, command in zip(files.values(), plan.commands, strict=True):
        _assert_notes_stay_comments(content)
        subprocess.run(["bash", "-n"], input=content, text=True, check=True, timeout=30)
        (tmp_path / KEY_FILE_NAME).write_text("s3cret\n")
        docker = _run(["bash", "-c", content], tmp_path, {}, program="docker")["argv"]
        entry = docker.index("--entrypoint")
        assert [docker[entry + 1], *docker[entry + 3 :]] == list(command.argv)
        env = dict(docker[i + 1].split("=", 1) for i, w in enumerate(docker) if w == "-e" and "=" in docker[i + 1])
        assert env == dict(command.env)
        assert f"{HOSTILE_MODEL}:{HOSTILE_MODEL}:ro" in docker


def _run(argv: list[str], tmp_path: Path, env: dict[str, str], program: str = "vllm") -> dict:
    """Run `argv` with a fake `program` on PATH that prints the argv and environment it was given."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    fake = bin_dir / program
    fake.write_text(
        "#!/usr/bin/env python3\nimport json, os, sys\n"
        f'print(json.dumps({{"argv": [{program!r}, *sys.argv[1:]], "env": dict(os.environ)}}))\n'
    )
    fake.chmod(0o755)
    out = subprocess.run(
        argv, env={"PATH": f"{bin_dir}:/usr/bin:/bin", **env}, capture_output=True, text=True, check=True, timeout=30
    )
    return json.loads(out.stdout)


# --- systemd ------------------------------------------------------------------------------------------

INSTALLED_PROFILE = '/etc/ascendctl/it\'s "q" %n $HOME ; \\ `id`.yaml'
UNIT_KEYS = {
    "Description", "Documentation", "After", "Wants", "StartLimitIntervalSec", "StartLimitBurst", "Type",
    "ExecStart", "EnvironmentFile", "Restart", "RestartSec", "KillMode", "KillSignal", "TimeoutStopSec",
    "LimitNOFILE", "NoNewPrivileges", "PrivateTmp", "ProtectSystem", "ProtectKernelModules", "ProtectKernelLogs",
    "ProtectControlGroups", "RestrictSUIDSGID", "RestrictRealtime", "LockPersonality", "WantedBy",
}  # fmt: skip


@pytest.mark.parametrize("kind", PROFILES)
def test_hostile_values_stay_values_in_systemd_units(kind: str, tmp_path: Path) -> None:
    plan = _hostile_plan(kind, "systemd", tmp_path)
    # A real executable whose path needs quoting and an escaped specifier: `verify` checks that it exists.
    ascendctl = tmp_path / "bin dir %n" / "ascendctl"
    ascendctl.parent.mkdir()
    ascendctl.write_text("#!/bin/sh\n")
    ascendctl.chmod(0o755)
    files = _files(plan, "systemd", ascendctl_bin=str(ascendctl), installed_profile=INSTALLED_PROFILE)
    for (name, content), command in zip(files.items(), plan.commands, strict=True):
        lines = content.splitlines()
        # Every line is a comment, a section or a known directive: nothing was injected.
        keys = {line.split("=", 1)[0] for line in lines if line and not line.startswith(("#", "["))}
        assert keys <= UNIT_KEYS, keys - UNIT_KEYS
        exec_start = next(line.removeprefix("ExecStart=") for line in lines if line.startswith("ExecStart="))
        assert systemd_words(exec_start) == [str(ascendctl), "serve", INSTALLED_PROFILE, "--node", str(command.node)]
        if shutil.which("systemd-analyze"):
            unit = tmp_path / name
            unit.write_text(content)
            result = subprocess.run(
                ["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, timeout=60
            )
            problems = [line for line in result.stderr.splitlines() if name in line]
            assert result.returncode == 0 and not problems, result.stderr


# --- what cannot be expressed is refused --------------------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [
        {"ascendctl_bin": "/opt/$HOME/ascendctl"},
        {"ascendctl_bin": "ascendctl"},
        {"installed_profile": "/etc/ascendctl/x.yaml\nExecStartPre=/bin/reboot"},
    ],
)
def test_systemd_refuses_options_it_cannot_write_safely(options: dict[str, str], tmp_path: Path) -> None:
    plan = _hostile_plan("single", "systemd", tmp_path)
    with pytest.raises(UserInputError):
        _files(plan, "systemd", **options)


@pytest.mark.parametrize("target", ["docker", "script"])
def test_an_api_key_variable_that_is_not_a_name_is_refused(target: str, tmp_path: Path) -> None:
    # refused at load (without echoing it: a key pasted here must not be printed back) ...
    doc = yaml.safe_load(PROFILES["single"].read_text())
    doc["server"]["api_key"] = {"env": "X}; reboot; #"}
    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(DocumentError, match=r"server\.api_key\.env: not a valid environment variable name") as exc:
        load_profile(path)
    assert "reboot" not in str(exc.value)
    # ... and by the renderers on their own, past the loader
    profile = load_profile(PROFILES["single"])
    key = ApiKeySource(env="KEY").model_copy(update={"env": "X}; reboot; #"})
    hostile = profile.model_copy(update={"server": profile.server.model_copy(update={"api_key": key})})
    plan = plan_profile(hostile, matrix=load_matrix(), data_root=DATA_ROOT)
    with pytest.raises(UserInputError, match="not a valid shell variable name"):
        _files(plan, target)


@pytest.mark.parametrize("target", ["docker", "compose"])
def test_a_model_path_docker_cannot_mount_is_refused(target: str, tmp_path: Path) -> None:
    doc = yaml.safe_load(PROFILES["single"].read_text())
    doc["model"]["source"] = "/models/a:/etc:rw"
    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump(doc))
    plan = plan_profile(load_profile(path), matrix=load_matrix(), data_root=DATA_ROOT)
    with pytest.raises(UserInputError, match="cannot mount"):
        _files(plan, target)


def test_a_render_that_fails_midway_changes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # an earlier render stays whole when writing the next one fails, whatever the failure; no temp file stays
    from ascendctl.cli.render import write_files
    from ascendctl.core.errors import UserInputError
    from ascendctl.outputs.render import RenderedFile

    out = tmp_path / "out"
    out.mkdir()
    (out / "a.sh").write_text("old a\n")
    (out / "b.sh").write_text("old b\n")
    with pytest.raises(UnicodeEncodeError):  # not an OSError: fails while staging
        write_files(out, [RenderedFile("a.sh", "new a\n"), RenderedFile("b.sh", "bad \ud800\n")])
    assert sorted(p.name for p in out.iterdir()) == ["a.sh", "b.sh"]
    assert (out / "a.sh").read_text() == "old a\n"
    (out / "c.sh").mkdir()  # a directory in the way: refused before anything moves
    with pytest.raises(UserInputError, match="nothing was changed"):
        write_files(out, [RenderedFile("a.sh", "new a\n"), RenderedFile("c.sh", "new c\n")])
    assert (out / "a.sh").read_text() == "old a\n" and (out / "c.sh").is_dir()
    real_replace = Path.replace

    def fail_on_b(self: Path, target: Path) -> Path:  # the disk fills up while b.sh moves in
        if self.name == "b.sh" and self.parent != out:
            raise OSError(28, "No space left on device")
        return real_replace(self, target)

    monkeypatch.setattr(Path, "replace", fail_on_b)
    with pytest.raises(UserInputError, match="No space left on device; nothing was changed"):
        write_files(out, [RenderedFile("a.sh", "new a\n"), RenderedFile("b.sh", "new b\n")])
    monkeypatch.undo()
    assert (out / "a.sh").read_text() == "old a\n" and (out / "b.sh").read_text() == "old b\n"
    assert sorted(p.name for p in out.iterdir()) == ["a.sh", "b.sh", "c.sh"]
    write_files(out, [RenderedFile("a.sh", "new a\n", executable=True)])
    assert (out / "a.sh").read_text() == "new a\n" and (out / "a.sh").stat().st_mode & 0o777 == 0o755


@pytest.mark.parametrize("source", ["./models/m", "~/models/m", "../m"])
def test_a_relative_model_directory_is_refused_not_silently_unmounted(source: str) -> None:
    from ascendctl.core.errors import UserInputError

    profile = load_profile(PROFILES["single"], [f"model.source={source}"])
    plan = plan_profile(profile, matrix=load_matrix(), data_root=DATA_ROOT)
    for target in ("docker", "compose", "k8s"):
        with pytest.raises(UserInputError, match="relative path: give the absolute path"):
            render(plan, target, RenderOptions())
