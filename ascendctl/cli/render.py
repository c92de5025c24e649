"""`ascendctl render PROFILE --target TARGET [-o DIR]`; the targets are `ascendctl.outputs.targets` (data: the help
is built from it), rendered by `ascendctl.outputs.render.RENDERERS` (imported when the command runs)."""

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ascendctl.cli import completers
from ascendctl.cli.plan import AllowIdsOption, AllowOption
from ascendctl.outputs.targets import targets_help

if TYPE_CHECKING:
    from ascendctl.outputs.render.options import RenderedFile

TargetOption = Annotated[
    str,
    typer.Option(
        "--target",
        "-t",
        metavar="TARGET",
        help=targets_help() + ".",
        show_default=False,
        autocompletion=completers.render_targets,
    ),
]


def render(
    profile: Annotated[Path, typer.Argument(help="Profile YAML file.", show_default=False)],
    target: TargetOption,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", metavar="DIR", help="Write files into this directory instead of stdout."),
    ] = None,
    overrides: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            metavar="KEY.PATH=VALUE",
            help="Override a profile value.",
            autocompletion=completers.profile_paths,
        ),
    ] = None,
    release: Annotated[
        str | None,
        typer.Option("--release", help="Render for this release instead.", autocompletion=completers.releases),
    ] = None,
    resource_name: Annotated[
        str | None,
        typer.Option("--resource-name", help="k8s device resource (default: huawei.com/Ascend910 / Ascend310P)."),
    ] = None,
    namespace: Annotated[str | None, typer.Option("--namespace", help="k8s namespace.")] = None,
    image: Annotated[str | None, typer.Option("--image", help="Container image instead of the release's.")] = None,
    installed_profile: Annotated[
        str | None,
        typer.Option("--installed-profile", metavar="PATH", help="systemd: where the profile lives on the host."),
    ] = None,
    ascendctl_bin: Annotated[
        str, typer.Option("--ascendctl-bin", metavar="PATH", help="systemd: path of ascendctl on the host.")
    ] = "/usr/local/bin/ascendctl",
    allow: AllowIdsOption = None,
    allow_unsupported: AllowOption = False,
) -> None:
    """Render the plan of PROFILE for a deployment target (see --target): manifests, units or scripts."""
    from ascendctl.facts.matrix import load_matrix
    from ascendctl.outputs.render import RenderOptions
    from ascendctl.outputs.render import render as render_files
    from ascendctl.outputs.render.options import check_options
    from ascendctl.outputs.targets import render_overrides
    from ascendctl.plan.planner import plan_profile, require_startable
    from ascendctl.schema.loader import load_profile

    plan_overrides = render_overrides(target, overrides or [])  # refuses an unknown target first
    options = RenderOptions(
        installed_profile=installed_profile,
        ascendctl_bin=ascendctl_bin,
        resource_name=resource_name,
        namespace=namespace,
        image=image,
    )
    check_options(options)
    loaded = load_profile(profile, plan_overrides)
    matrix = load_matrix()
    plan = plan_profile(loaded, matrix=matrix, release=release, allow=allow or (), allow_unsupported=allow_unsupported)
    require_startable(plan)
    files = render_files(plan, target, options)
    if output is None:
        for index, file in enumerate(files):
            if len(files) > 1:
                typer.echo(("" if index == 0 else "\n") + f"# ---- {file.name} ----")
            typer.echo(file.content, nl=False)
        return
    write_files(output, files)
    for file in files:
        typer.echo(f"wrote {output / file.name}")


def write_files(directory: Path, files: "Sequence[RenderedFile]") -> None:
    """Write every file or none. All files are staged in a private directory next to their targets first;
    then each target is moved aside and the new file moved in. Any failure (an OS error, SIGINT, SIGTERM or
    SIGHUP: from before the staging directory is made until it is removed, those raise `KeyboardInterrupt` instead
    of ending the process where it stands) puts every moved-aside file back and removes the staging directory, and
    the output directory too when this call made it: an earlier render is never left half replaced, and no
    temporary file stays behind."""
    import contextlib
    import shutil
    import signal

    from ascendctl.core.errors import UserInputError
    from ascendctl.run.signals import as_interrupt, deferred, ignored

    signals = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    # (target, where its previous version is moved, the staged new file); recorded before either move
    moves: list[tuple[Path, Path | None, Path]] = []
    made: list[Path] = []  # the output directory and its parents that this call makes, outermost first
    stage: Path | None = None
    with as_interrupt(signals):
        try:
            with deferred(signals):  # a directory is made and recorded as one step: a signal waits for both
                stage = _make_stage(directory, made)
            for file in files:
                if Path(file.name).name != file.name or file.name in ("", ".", ".."):
                    raise UserInputError(f"refusing to write {file.name!r}: not a plain file name")
                if (directory / file.name).is_dir():
                    raise UserInputError(f"--output {directory}: {file.name} is a directory; nothing was changed")
                staged = stage / file.name
                staged.write_text(file.content, encoding="utf-8")
                staged.chmod(0o755 if file.executable else 0o644)
            for file in files:
                target, staged = directory / file.name, stage / file.name
                previous = stage / f"{file.name}.previous" if target.exists() or target.is_symlink() else None
                moves.append((target, previous, staged))
                if previous is not None:
                    target.replace(previous)
                staged.replace(target)
        except BaseException as exc:
            with ignored(signals):  # a second signal must not cut the roll-back short
                _roll_back(moves)
                if stage is not None:
                    shutil.rmtree(stage, ignore_errors=True)
                for path in reversed(made):  # only while empty: what another writer put there stays
                    with contextlib.suppress(OSError):
                        path.rmdir()
            if isinstance(exc, OSError):
                raise UserInputError(f"--output {directory}: {exc.strerror or exc}; nothing was changed") from None
            raise
        else:
            with ignored(signals):  # every file is in place: a late signal must not leave the staging half removed
                shutil.rmtree(stage, ignore_errors=True)


def _make_stage(directory: Path, made: list[Path]) -> Path:
    """The private staging directory in `directory`, made with its missing parents when absent (those are added to
    `made` first). Run with the ending signals deferred, so that the caller always knows what to remove."""
    import tempfile

    from ascendctl.core.errors import UserInputError

    made.extend(reversed([p for p in (directory, *directory.parents) if not p.exists() and not p.is_symlink()]))
    try:
        directory.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix=".ascendctl-render.", dir=directory))
    except OSError as exc:
        raise UserInputError(f"--output {directory}: {exc.strerror or exc}") from None


def _roll_back(moves: Sequence[tuple[Path, Path | None, Path]]) -> None:
    """Undo the moves of `write_files`, last first: put each moved-aside previous file back, remove a new file that
    had no previous one. Best effort: the staging directory still holds what could not be moved back."""
    for target, previous, staged in reversed(moves):
        try:
            if staged.exists():  # the new file is not in place: at most the previous one was moved aside
                if previous is not None and (previous.exists() or previous.is_symlink()):
                    previous.replace(target)
            elif previous is not None:
                previous.replace(target)
            else:
                target.unlink(missing_ok=True)
        except OSError:
            pass
