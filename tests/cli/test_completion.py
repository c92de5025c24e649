"""Shell completion of values, asked the way a shell asks (`_ASCENDCTL_COMPLETE=complete_bash`, `COMP_WORDS`,
`COMP_CWORD`: typer's bash protocol), each answer checked against the registry that owns it; and help that names
values as other command-line tools do (`PROFILE...`, `--node N`), never with typer's `<int range>` or `{PROFILE}`."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

import ascendctl.outputs.rules_doc  # noqa: F401  (registers every rule, as the --allow completer does)
from ascendctl.cli import COMMANDS, app, completers, main
from ascendctl.cli.matrix import VIEWS
from ascendctl.core.findings import RULES
from ascendctl.facts.matrix import LATEST, LATEST_STABLE, load_matrix
from ascendctl.outputs.targets import TARGETS
from ascendctl.schema.shipped_schema import shipped_schema_text
from ascendctl_engine.prepared_models import CATALOG
from ascendctl_engine.state import StateStore
from tests.state_records import record

REPO = Path(__file__).resolve().parents[2]
runner = CliRunner()


def bash_request(*words: str) -> dict[str, str]:
    """What bash's completion function sets for `ascendctl WORDS<TAB>`: the last word is the one being completed."""
    line = ["ascendctl", *words]
    return {
        "_ASCENDCTL_COMPLETE": "complete_bash",
        "COMP_WORDS": "\n".join(line),  # typer's bash function passes "${COMP_WORDS[*]}" with IFS=$'\n'
        "COMP_CWORD": str(len(line) - 1),
    }


def shell_complete(*words: str, env: dict[str, str] | None = None) -> list[str]:
    """The candidates a real `ascendctl` process prints for bash."""
    shell = {**os.environ, **(env or {}), **bash_request(*words)}
    proc = subprocess.run(
        [sys.executable, "-m", "ascendctl"], cwd=REPO, env=shell, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""  # nothing but candidates reaches the user's prompt
    return [line for line in proc.stdout.splitlines() if line]  # no candidates: one empty line


Complete = Callable[..., list[str]]


@pytest.fixture
def complete(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Complete:
    """`shell_complete` in this process (the same entry point, `ascendctl.cli.main`, without a process start)."""

    def ask(*words: str) -> list[str]:
        with monkeypatch.context() as env:
            for name, value in bash_request(*words).items():
                env.setenv(name, value)
            code = main([])
        out, err = capsys.readouterr()
        assert code == 0 and err == "", err
        return [line for line in out.splitlines() if line]

    return ask


def release_names() -> list[str]:
    return list(dict.fromkeys([LATEST_STABLE, LATEST, *(row.version for row in load_matrix().releases)]))


def test_render_targets_come_from_the_target_registry(complete: Complete) -> None:
    assert shell_complete("render", "p.yaml", "-t", "") == list(TARGETS)  # a real process, as bash asks
    assert complete("render", "p.yaml", "--target", "k") == [t for t in TARGETS if t.startswith("k")]


def test_matrix_views_releases_and_hardware_come_from_the_matrix(complete: Complete) -> None:
    assert complete("matrix", "") == list(VIEWS)
    assert complete("matrix", "--release", "") == release_names()
    assert complete("matrix", "-r", "v0.13") == [r for r in release_names() if r.startswith("v0.13")]
    assert complete("matrix", "--hardware", "") == [h.id for h in load_matrix().hardware]


@pytest.mark.parametrize(
    ("words", "expect"),
    [
        (("init", "org/model", "--hardware", ""), "hardware"),
        (("init", "org/model", "--release", "latest"), "releases"),
        (("plan", "p.yaml", "--release", ""), "releases"),
        (("plan", "p.yaml", "--against-release", "v0.1"), "releases"),
        (("fit", "p.yaml", "--release", ""), "releases"),
        (("import", "run.sh", "--hardware", "a"), "hardware"),
    ],
)
def test_release_and_hardware_options(complete: Complete, words: tuple[str, ...], expect: str) -> None:
    known = release_names() if expect == "releases" else [h.id for h in load_matrix().hardware]
    found = complete(*words)
    assert found == [k for k in known if k.startswith(words[-1])]
    assert found


def _record_live(name: str, node: int = 0) -> None:
    store = StateStore()
    store.ensure()
    state = record(name, node)  # this process stands for the supervisor: alive
    store.path_for(state.name, state.node).write_text(state.to_json())


@pytest.mark.parametrize("command", ["stop", "logs", "status"])
def test_deployment_names_come_from_the_state_store(complete: Complete, command: str) -> None:
    assert complete(command, "") == []  # nothing recorded here
    for name, node in (("demo", 0), ("demo", 1), ("qwen-a2", 0)):
        _record_live(name, node)
    store = StateStore().deployments_dir
    (store / "broken.node0.json").write_text("{not json")  # skipped, and not a word of warning at the prompt
    assert complete(command, "") == ["demo", "qwen-a2"]
    assert complete(command, "q") == ["qwen-a2"]


def test_a_state_dir_that_cannot_be_read_gives_no_candidates(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.write_text("a file where ASCENDCTL_HOME should be a directory")
    assert shell_complete("stop", "", env={"ASCENDCTL_HOME": str(home)}) == []


def test_model_prepare_offers_the_preparable_models(complete: Complete) -> None:
    assert complete("model", "prepare", "") == sorted(CATALOG)


def _schema() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(shipped_schema_text())
    return schema


def _resolve(node: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    for alternative in node.get("anyOf", ()):
        if alternative.get("type") != "null":
            node = alternative
    ref = node.get("$ref")
    resolved: dict[str, Any] = schema["$defs"][ref.rsplit("/", 1)[-1]] if ref else node
    return resolved


def _at(*path: str) -> dict[str, Any]:
    """The schema of a profile key path (following `$ref` and nullable `anyOf`)."""
    schema = _schema()
    node: dict[str, Any] = schema
    for key in path:
        node = _resolve(node["properties"][key], schema)
    return node


def test_set_completes_the_profile_key_paths_down_to_the_leaves(complete: Complete) -> None:
    graph = _at("engine", "graph")
    children = [f"engine.graph.{key}" for key in graph["properties"]]
    assert children  # the schema has a graph section with fields
    assert complete("plan", "p.yaml", "--set", "engine.gr") == children
    top = complete("validate", "p.yaml", "--set", "")
    assert "engine.graph.mode" in top and "server.port" in top
    assert not [p for p in top if p.endswith(".") and p.rstrip(".") in {"engine", "engine.graph", "server"}]


def test_set_stops_at_a_free_form_map(complete: Complete) -> None:
    env = _at("runtime", "env")
    assert env["type"] == "object" and "properties" not in env and env.get("additionalProperties")
    assert complete("serve", "p.yaml", "--set", "runtime.env") == ["runtime.env."]
    assert complete("render", "p.yaml", "--set", "engine.additional") == ["engine.additional_config."]
    assert complete("check", "p.yaml", "--set", "runtime.env.HCCL_") == []  # the map's keys are the user's
    assert complete("lock", "p.yaml", "--set", "server.port=80") == []  # a value is being typed


def test_every_completed_set_path_is_one_the_loader_accepts(valid_profile_text: str, tmp_path: Path) -> None:
    # Each leaf is a key the profile model knows: setting it to a value of the wrong type fails on the value (or is
    # accepted), never as an unknown key.
    from ascendctl.core.errors import DocumentError
    from ascendctl.schema.loader import load_profile

    profile = tmp_path / "p.yaml"
    profile.write_text(valid_profile_text)
    for path in completers.profile_paths(""):
        assert isinstance(path, str)
        key = path + "X_KEY" if path.endswith(".") else path
        try:
            load_profile(profile, [f"{key}=@"])
        except DocumentError as exc:
            assert "unknown key" not in str(exc), (path, str(exc))


def test_allow_completes_the_allowable_rule_ids(complete: Complete) -> None:
    allowable = sorted(rule_id for rule_id, rule in RULES.items() if rule.allowable)
    assert complete("plan", "p.yaml", "--allow", "") == allowable
    never = {rule_id for rule_id, rule in RULES.items() if not rule.allowable}
    assert never and never.isdisjoint(allowable)  # an id no `allow` accepts is not offered
    assert complete("render", "p.yaml", "-t", "k8s", "--allow", "plan.refused") == [
        r for r in allowable if r.startswith("plan.refused")
    ]


def test_completers_never_raise(monkeypatch: pytest.MonkeyPatch) -> None:
    import ascendctl.facts.matrix

    def broken() -> None:
        raise RuntimeError("broken install")

    monkeypatch.setattr(ascendctl.facts.matrix, "load_matrix", broken)
    assert completers.releases("") == []
    assert completers.hardware_ids("") == []


def _commands(group: Any, prefix: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    for name, command in sorted(group.commands.items()):
        if hasattr(command, "commands"):
            yield from _commands(command, (*prefix, name))
        else:
            yield (*prefix, name), command


def test_each_option_that_names_a_known_value_completes_it() -> None:
    # Every command's `--set`, `--allow`, `--against-release` and deployment NAME completes; a new command that
    # declares one of them without its completer fails here.
    root = typer.main.get_command(app)
    wanted = {
        "--set": completers.profile_paths,
        "--allow": completers.allowable_rule_ids,
        "--against-release": completers.releases,
    }
    seen: set[str] = set()
    for path, command in _commands(root):
        for param in command.params:
            opt = next((o for o in param.opts if o in wanted), None)
            if opt is not None:
                seen.add(opt)
                assert param._custom_shell_complete is not None, (path, opt)
        if path in {("stop",), ("logs",), ("status",)}:
            [name] = [p for p in command.params if p.name == "name"]
            assert name._custom_shell_complete is not None, path
    assert seen == set(wanted)


# typer's own value names, and its range and usage brackets: none of them in any help.
TYPER_STYLE = re.compile(r"<(int|str|float|path|list\[|bool)|\{[A-Za-z_]+\}|\[x[<>]=|<=x")


def test_help_names_values_the_common_way() -> None:
    root = typer.main.get_command(app)
    helps = [("--help",)] + [(*path, "--help") for path, _ in _commands(root)]
    helps += [(name, "--help") for name in COMMANDS if name in {"engine", "model"}]
    assert len(helps) > len(COMMANDS)
    for args in helps:
        result = runner.invoke(app, list(args))
        assert result.exit_code == 0, (args, result.output)
        leaked = TYPER_STYLE.findall(result.output)
        assert not leaked, (args, leaked, result.output)
    validate = runner.invoke(app, ["validate", "--help"]).output
    assert "validate [OPTIONS] PROFILE..." in validate
    logs = runner.invoke(app, ["logs", "--help"]).output
    assert re.search(r"--node N\s", logs) and re.search(r"-n, --tail N\s", logs)
    stop = runner.invoke(app, ["stop", "--help"]).output
    assert re.search(r"--timeout SECONDS\s", stop)
    imported = runner.invoke(app, ["import", "--help"]).output
    assert "import [OPTIONS] SCRIPT..." in imported and re.search(r"--release RELEASE\s", imported)
    assert re.search(r"-o, --output FILE\s", imported)
    status = runner.invoke(app, ["status", "--help"]).output
    assert "status [OPTIONS] [NAME]" in status and re.search(r"--interval SECONDS\s", status)


def test_a_missing_argument_is_named_as_the_help_names_it() -> None:
    result = runner.invoke(app, ["plan"])
    assert result.exit_code == 2
    assert "Missing argument 'PROFILE'" in result.output
