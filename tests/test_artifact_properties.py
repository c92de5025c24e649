"""Property: whatever string reaches an artifact, the artifact gives the consumer exactly the planned argv and
env back. Arbitrary text (every Unicode category but lone surrogates and NUL, which no argv or environment
can carry) goes into an `extra_args` value, an env value and the served model name; the shell script is run
with a stub `vllm` that prints what it got, the Kubernetes manifest is parsed and expanded as Kubernetes
does, the compose file as compose does, the systemd unit's ExecStart is split as systemd does. The values
are put past the profile loader (which refuses control characters) so the renderers are tested on their own.
Example counts are bounded to keep CI time small."""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ascendctl.facts.matrix import load_matrix
from ascendctl.outputs.render import RenderOptions, render, render_overrides
from ascendctl.plan.planner import plan_profile
from ascendctl.plan.types import Plan
from ascendctl.schema.loader import load_profile
from tests.consumers import compose_unescape, k8s_expand, systemd_words

ROOT = Path(__file__).resolve().parents[1]
CPU_DEMO = ROOT / "profiles" / "cpu-demo.yaml"
TEXT = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), min_size=1, max_size=24)
# A flag value that starts with `-` reads as an option to vLLM's parser: the planner refuses it (a clear
# error, tested below), so artifacts only ever see the others.
VALUE = TEXT.filter(lambda t: not t.startswith("-"))
EXAMPLES = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def hostile_plan(target: str, arg: str, env_value: str, served: str) -> Plan:
    profile = load_profile(CPU_DEMO, render_overrides(target, []))
    engine = profile.engine.model_copy(update={"extra_args": ["--chat-template", arg]})
    runtime = profile.runtime.model_copy(update={"env": {"PROBE_VALUE": env_value}})
    model = profile.model.model_copy(update={"served_name": served})
    hostile = profile.model_copy(update={"engine": engine, "runtime": runtime, "model": model})
    return plan_profile(hostile, matrix=load_matrix())


def only_file(plan: Plan, target: str) -> str:
    [file] = render(plan, target, RenderOptions())
    return file.content


@EXAMPLES
@given(arg=VALUE, env_value=TEXT, served=VALUE)
def test_a_script_execs_exactly_the_planned_command(arg: str, env_value: str, served: str) -> None:
    plan = hostile_plan("script", arg, env_value, served)
    [command] = plan.commands
    with tempfile.TemporaryDirectory() as tmp:
        stub = Path(tmp) / "vllm"
        stub.write_text(
            "#!/usr/bin/env python3\nimport json, os, sys\n"
            'print(json.dumps({"argv": ["vllm", *sys.argv[1:]], "env": dict(os.environ)}, ensure_ascii=True))\n'
        )
        stub.chmod(0o755)
        out = subprocess.run(
            ["bash", "-c", only_file(plan, "script")],
            env={"PATH": f"{tmp}:/usr/bin:/bin", "LC_ALL": "C.UTF-8"},
            capture_output=True,
            check=True,
            timeout=30,
        )
    seen = json.loads(out.stdout)
    assert seen["argv"] == list(command.argv)
    assert seen["env"]["PROBE_VALUE"] == env_value == command.env["PROBE_VALUE"]


@EXAMPLES
@given(arg=VALUE, env_value=TEXT, served=VALUE)
def test_a_manifest_gives_kubernetes_the_planned_command(arg: str, env_value: str, served: str) -> None:
    plan = hostile_plan("k8s", arg, env_value, served)
    [command] = plan.commands
    docs = [d for d in yaml.safe_load_all(only_file(plan, "k8s")) if d]
    assert [d["kind"] for d in docs] == ["Deployment", "Service"]
    container = docs[0]["spec"]["template"]["spec"]["containers"][0]
    assert [k8s_expand(w, {}) for w in [*container["command"], *container["args"]]] == list(command.argv)
    env = {e["name"]: k8s_expand(e["value"], {}) for e in container["env"] if "value" in e}
    assert env == dict(command.env)


@EXAMPLES
@given(arg=VALUE, env_value=TEXT, served=VALUE)
def test_a_compose_file_gives_compose_the_planned_command(arg: str, env_value: str, served: str) -> None:
    plan = hostile_plan("compose", arg, env_value, served)
    [command] = plan.commands
    doc = yaml.safe_load(only_file(plan, "compose"))
    [service] = doc["services"].values()
    words = [compose_unescape(w) for w in [*service["entrypoint"], *service["command"]]]
    assert words == list(command.argv)
    assert compose_unescape(service["environment"]["PROBE_VALUE"]) == env_value


@settings(max_examples=25, deadline=None)
@given(path=TEXT.filter(lambda t: "/" not in t))
def test_a_unit_starts_ascendctl_with_the_profile_path_it_was_given(path: str) -> None:
    installed = f"/etc/ascendctl/{path}.yaml"
    plan = hostile_plan("systemd", "x", "y", "z")
    try:
        [file] = render(plan, "systemd", RenderOptions(installed_profile=installed))
    except Exception as exc:  # a value systemd cannot express is refused with a clear error, never mangled
        assert type(exc).__name__ == "UserInputError", exc
        return
    exec_start = next(line for line in file.content.splitlines() if line.startswith("ExecStart="))
    assert systemd_words(exec_start.removeprefix("ExecStart="))[:3] == ["/usr/local/bin/ascendctl", "serve", installed]


def test_a_value_that_reads_as_a_flag_is_refused_not_passed() -> None:
    import pytest

    from ascendctl.plan.planner import UnsupportedPlan, require_startable

    with pytest.raises(UnsupportedPlan, match="--served-model-name: expected at least one argument"):
        require_startable(hostile_plan("script", "x", "y", "-:"))
