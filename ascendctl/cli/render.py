"""`ascendctl render PROFILE --target k8s|docker|compose|systemd|script [-o DIR]`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

TargetOption = Annotated[
    str, typer.Option("--target", "-t", help="k8s | docker | compose | systemd | script", show_default=False)
]


def render(
    profile: Annotated[Path, typer.Argument(help="Profile YAML file.", show_default=False)],
    target: TargetOption,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write files into this directory instead of stdout.")
    ] = None,
    overrides: Annotated[
        list[str] | None, typer.Option("--set", metavar="KEY.PATH=VALUE", help="Override a profile value.")
    ] = None,
    release: Annotated[str | None, typer.Option("--release", help="Render for this release instead.")] = None,
    resource_name: Annotated[
        str | None,
        typer.Option("--resource-name", help="k8s device resource (default: huawei.com/Ascend910 / Ascend310P)."),
    ] = None,
    namespace: Annotated[str | None, typer.Option("--namespace", help="k8s namespace.")] = None,
    image: Annotated[str | None, typer.Option("--image", help="Container image instead of the release's.")] = None,
    installed_profile: Annotated[
        str | None,
        typer.Option("--installed-profile", help="systemd: where the profile lives on the host."),
    ] = None,
    ascendctl_bin: Annotated[
        str, typer.Option("--ascendctl-bin", help="systemd: path of ascendctl on the host.")
    ] = "/usr/local/bin/ascendctl",
    allow_unsupported: Annotated[
        bool, typer.Option("--allow-unsupported", help="Render combinations the matrix marks unsupported.")
    ] = False,
) -> None:
    """Render the plan of PROFILE as Kubernetes objects, docker/compose files, systemd units or scripts."""
    from ascendctl.errors import UserInputError
    from ascendctl.matrix import load_matrix
    from ascendctl.planner import plan_profile
    from ascendctl.profile_loader import load_profile
    from ascendctl.render import TARGETS, RenderOptions, render_overrides
    from ascendctl.render import render as render_files

    if target not in TARGETS:
        raise UserInputError(f"--target {target!r}: choose one of {', '.join(TARGETS)}")
    loaded = load_profile(profile, render_overrides(target, overrides or []))
    matrix = load_matrix()
    plan = plan_profile(loaded, matrix=matrix, release=release, allow_unsupported=allow_unsupported)
    options = RenderOptions(
        installed_profile=installed_profile,
        ascendctl_bin=ascendctl_bin,
        resource_name=resource_name,
        namespace=namespace,
        image=image,
    )
    files = render_files(plan, loaded, matrix, target, options)
    if output is None:
        for index, (name, content) in enumerate(files.items()):
            if len(files) > 1:
                typer.echo(("" if index == 0 else "\n") + f"# ---- {name} ----")
            typer.echo(content, nl=False)
        return
    write_files(output, files)
    for name in files:
        typer.echo(f"wrote {output / name}")


def write_files(directory: Path, files: dict[str, str]) -> None:
    """Write every file or none: each goes to a temporary name first, then is renamed into place."""
    import os
    import tempfile

    from ascendctl.errors import UserInputError

    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserInputError(f"--output {directory}: {exc.strerror or exc}") from None
    staged: list[tuple[str, Path]] = []
    try:
        for name, content in files.items():
            fd, tmp = tempfile.mkstemp(prefix=f".{name}.", dir=directory)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(content)
            if name.endswith(".sh"):
                Path(tmp).chmod(0o755)
            else:
                Path(tmp).chmod(0o644)
            staged.append((tmp, directory / name))
        for tmp, final in staged:
            Path(tmp).replace(final)
    except OSError as exc:
        for tmp, _ in staged:
            Path(tmp).unlink(missing_ok=True)
        raise UserInputError(f"--output {directory}: {exc.strerror or exc}") from None
