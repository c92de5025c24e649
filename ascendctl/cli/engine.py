"""`ascendctl engine install|list|remove`: the pinned engine environments (one venv per backend × release)."""

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ascendctl.cli import completers
from ascendctl.core.errors import OperationFailed, UserInputError

if TYPE_CHECKING:
    from ascendctl_engine.install_plan import EngineReleaseSpec, InstallPlan

app = typer.Typer(
    name="engine",
    help="Engine environments: install, list and remove the pinned vLLM installs ascendctl runs.",
    no_args_is_help=True,
)


class EngineFailure(OperationFailed):
    """An engine-environment failure with the failing command's last output lines and a hint."""

    def __init__(self, message: str, output: list[str], hint: str | None) -> None:
        super().__init__(message)
        self.output = output
        self.hint = hint

    def lines(self) -> list[str]:
        out = [str(self)]
        out += [f"  | {line}" for line in self.output]
        if self.hint:
            out.append(f"hint: {self.hint}")
        return out


def _target(profile: Path | None, release: str | None, backend: str | None) -> tuple[str, str | None]:
    """(backend, release pin) from a profile and/or the flags; flags win over the profile."""
    if profile is not None:
        from ascendctl.schema.loader import load_profile

        loaded = load_profile(profile)
        return backend or loaded.target.backend, release or loaded.release
    if backend is None and release is None:
        raise UserInputError("say which engine: a PROFILE, --release R (Ascend) or --backend cpu|npu|cuda")
    return backend or "npu", release


def resolve_spec(
    profile: Path | None, release: str | None, backend: str | None, extra_index_urls: list[str] | None
) -> "EngineReleaseSpec":
    import dataclasses

    from ascendctl.run.engine_envs import engine_spec_for

    be, pin = _target(profile, release, backend)
    spec = engine_spec_for(be, pin)
    if extra_index_urls:
        spec = dataclasses.replace(spec, extra_index_urls=(*spec.extra_index_urls, *extra_index_urls))
    return spec


def make_plan(spec: "EngineReleaseSpec", arch: str | None = None) -> "InstallPlan":
    import platform

    from ascendctl_engine.install_plan import PlanError, plan_install

    try:
        return plan_install(spec, machine=arch or platform.machine())
    except PlanError as exc:
        raise UserInputError(f"cannot plan the {spec.backend} engine {spec.release}: {exc}") from None


def plan_as_dict(plan: "InstallPlan", directory: Path) -> dict[str, Any]:
    """The `install --dry-run --json` shape: {"name", "path", "backend", "release", "pins", "steps":
    [{"id", "title", "argv", "env", "reason"}], "fixes", "notes"}."""
    python = directory / "bin" / "python"
    wheels = directory / ".ascendctl" / "wheels"
    return {
        "name": plan.spec.name,
        "path": str(directory),
        "backend": plan.spec.backend,
        "release": plan.spec.release,
        "pins": plan.spec.as_dict(),
        "steps": [
            {
                "id": step.id,
                "title": step.title,
                "argv": step.argv(python, wheels),
                "env": dict(step.env),
                "reason": step.reason,
            }
            for step in plan.steps
        ],
        "fixes": list(plan.fixes),
        "notes": list(plan.notes),
    }


def _print_plan(data: dict[str, Any]) -> None:
    import shlex

    typer.echo(f"engine environment {data['name']} ({data['path']})")
    typer.echo(f"  0. create the venv: python -m venv {shlex.quote(data['path'])}")
    for number, step in enumerate(data["steps"], start=1):
        env = " ".join(f"{k}={shlex.quote(v)}" for k, v in sorted(step["env"].items()))
        command = shlex.join(step["argv"])
        typer.echo(f"  {number}. {step['title']}")
        typer.echo(f"     $ {env + ' ' if env else ''}{command}")
        typer.echo(f"     why: {step['reason']}")
    for fix in data["fixes"]:
        typer.echo(f"  fix: {fix}")
    for note in data["notes"]:
        typer.echo(f"  note: {note}")


# pip lines that say nothing about progress (the resolver re-checking what is there, and pip's
# configured-but-absent local index folders).
_QUIET = re.compile(r"\] (Requirement already satisfied: |WARNING: Location '.*' is ignored)")


def progress_printer(verbose: bool) -> Callable[[str], None]:
    """Step headers and pip output to stderr; without `verbose`, the noise lines are dropped."""

    def emit(line: str) -> None:
        if verbose or not _QUIET.search(line):
            typer.echo(line, err=True)

    return emit


@app.command("install")
def install(
    profile: Annotated[
        Path | None, typer.Argument(metavar="PROFILE", help="Install the engine this profile's release needs.")
    ] = None,
    release: Annotated[
        str | None,
        typer.Option(
            "--release",
            help="Release pin: a version (v0.13.0) or latest-stable.",
            autocompletion=completers.releases,
        ),
    ] = None,
    backend: Annotated[str | None, typer.Option("--backend", help="cpu, npu or cuda.")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the install plan; install nothing.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="With --dry-run: print the plan as JSON.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Delete the environment and install it afresh.")] = False,
    extra_index_url: Annotated[
        list[str] | None,
        typer.Option("--extra-index-url", metavar="URL", help="Another package index for pip (repeatable)."),
    ] = None,
    arch: Annotated[
        str | None,
        typer.Option("--arch", help="Plan for this CPU architecture (aarch64, x86_64); default: this host's."),
    ] = None,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Show every pip line (default: hide 'already satisfied').")
    ] = False,
) -> None:
    """Create the engine environment of a release: a venv with exactly that release's pins, the known fixes
    applied, a manifest, and a smoke check. Resumable (finished steps are kept) and idempotent."""
    if backend is not None and backend not in ("cpu", "npu", "cuda"):
        raise UserInputError(f"--backend {backend}: expected cpu, npu or cuda")
    from ascendctl_engine import envs

    spec = resolve_spec(profile, release, backend, extra_index_url)
    plan = make_plan(spec, arch)
    directory = envs.env_dir(spec.name)
    if dry_run:
        data = plan_as_dict(plan, directory)
        if as_json:
            typer.echo(json.dumps(data, indent=2))
        else:
            _print_plan(data)
        return
    try:
        result = envs.install_engine(plan, log=progress_printer(verbose), force=force)
    except envs.EngineEnvError as exc:
        raise EngineFailure(str(exc), exc.output, exc.hint) from None
    env = result.env
    state = "already installed" if result.already_installed else f"installed in {result.seconds:.0f} s"
    typer.echo(f"engine {env.name}: {state}")
    typer.echo(f"  python: {env.python}")
    typer.echo(f"  vllm:   {env.vllm_executable} ({env.versions.get('vllm', '?')})")


@app.command("list")
def list_(
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON array.")] = False,
) -> None:
    """List engine environments: name, status (ready / incomplete), vLLM version, creation time, path.

    `--json` prints an array of {"name", "path", "status", "backend", "release", "vllm", "created_at",
    "installed_at", "steps_done", "steps_total"}.
    """
    from ascendctl_engine import envs

    listing = envs.list_engines()
    if as_json:
        typer.echo(json.dumps([e.as_dict() for e in listing], indent=2))
        return
    if not listing:
        typer.echo("no engine environments (install one: ascendctl engine install --backend cpu)")
        return
    for e in listing:
        progress = "" if e.status == "ready" else f" ({e.steps_done}/{e.steps_total or '?'} steps)"
        typer.echo(f"{e.name:<24} {e.status + progress:<24} vllm {e.vllm or '-':<14} {e.created_at or '-'}  {e.path}")


@app.command("remove")
def remove(name: Annotated[str, typer.Argument(help="Environment name as `engine list` shows it.")]) -> None:
    """Delete an engine environment (its venv and manifest)."""
    from ascendctl_engine import envs

    try:
        path = envs.remove_engine(name)
    except envs.EngineEnvError as exc:
        raise UserInputError(str(exc)) from None
    typer.echo(f"removed {name} ({path})")
