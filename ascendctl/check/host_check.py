"""`check` on the host side: probe this host (or a captured tree), build the `CheckContext`, apply the host rules
and, for a profile, add the findings of its plan against the probed facts.

The profile comes loaded and the plan step comes as a function (`service.run_check` loads the profile and plans
it), so checking a host without a profile loads neither the profile loader nor the planner. This module and
`service` are where check does I/O (the matrix loader and a `HostProbe`); the rules themselves are pure
functions of the context built here.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from ascendctl.check import host_findings
from ascendctl.check.context import CheckContext, ReleaseSource
from ascendctl.check.host_engine import ENGINE_PACKAGE
from ascendctl.check.matrix_view import row_for_version, select_release
from ascendctl.check.report import CheckReport
from ascendctl.core.errors import UserInputError
from ascendctl.facts.matrix import load_matrix
from ascendctl.schema.secrets import declared_secret_names
from ascendctl_engine import paths
from ascendctl_engine.host.facts import HostFacts
from ascendctl_engine.host.gather import PortRequest, gather_host_facts
from ascendctl_engine.host.probe import HostProbe, LocalHostProbe
from ascendctl_engine.host.pyenv import choose_engine_python, probe_python_env

if TYPE_CHECKING:
    from ascendctl.check.fabric_view import FabricView
    from ascendctl.core.findings import Finding
    from ascendctl.facts.matrix.schema import Release, SupportMatrix
    from ascendctl.plan.lock import LockComparison
    from ascendctl.plan.types import Plan
    from ascendctl.schema.profile import Profile

    # The profile's plan against the probed facts, or the finding that says why it has none.
    PlanStep = Callable[[HostFacts, SupportMatrix], tuple[Plan | None, Finding | None]]
    # `check --fabric`: this node's fabric, probed for the profile and its plan (None: the profile runs on one node).
    FabricStep = Callable[[HostProbe, Plan | None, HostFacts], FabricView | None]


def load_matrix_or_reason() -> tuple[SupportMatrix | None, str | None]:
    """The shipped support matrix, or (None, why) — a broken or missing matrix must not break `check`."""
    try:
        return load_matrix(), None
    except Exception as exc:
        return None, f"{type(exc).__name__}: {exc}"


def requested_ports(profile: Profile) -> list[PortRequest]:
    host = profile.server.host
    out = [PortRequest(host, profile.server.port, "server")]
    if profile.engine.parallel.data > 1:
        out.append(PortRequest(host, profile.network.dp_rpc_port, "data-parallel rpc"))
    if profile.engine.parallel.executor == "ray":
        out.append(PortRequest(host, profile.network.ray_port, "ray head"))
    return out


def requested_files(profile: Profile) -> list[str]:
    """Host paths the profile names, for the probe to look at (the rules read only facts)."""
    jemalloc = profile.engine.ascend.jemalloc
    return [jemalloc] if jemalloc is not None else []


def _release_for(
    matrix: SupportMatrix | None, profile: Profile | None, facts: HostFacts, backend: str
) -> tuple[Release | None, ReleaseSource, str | None]:
    if matrix is None:
        return None, "none", None
    if profile is not None:
        row, why = select_release(matrix, profile.target.backend, profile.release)
        return row, ("profile" if row is not None else "none"), why
    package = ENGINE_PACKAGE[backend]
    version = facts.packages.get(package)
    if version is None and backend == "cpu":
        alias = facts.packages.get("vllm")
        version = alias if alias and "cpu" in alias else None
    if version is None:
        return None, "none", None
    row = row_for_version(matrix, backend, version)
    return row, ("installed" if row is not None else "none"), None


def root_dir(root: str) -> Path:
    """`--root` as a directory (a captured host tree, or `/`)."""
    path = Path(root)
    if not path.is_dir():
        raise UserInputError(f"--root {root}: not a directory")
    return path


def check_host(
    profile: Profile | None = None,
    *,
    plan_step: PlanStep | None = None,
    profile_path: Path | None = None,
    overrides: Sequence[str] = (),
    root: str = "/",
    engine_python: str | None = None,
    environ: Mapping[str, str] | None = None,
    probe: HostProbe | None = None,
    matrix: SupportMatrix | None = None,
    fabric_step: FabricStep | None = None,
    lock: LockComparison | None = None,
) -> CheckReport:
    """Check this host (against `profile` when given, its plan from `plan_step`; with `fabric_step`, the
    multi-node fabric too). `profile_path` and `overrides` only name the profile in the report's rerun line.
    Raises only for invalid input (`--root`, `--node`, `--peer-facts`)."""
    env = dict(os.environ if environ is None else environ)
    root_path = root_dir(root)
    matrix_error: str | None = None
    if matrix is None:
        matrix, matrix_error = load_matrix_or_reason()

    host_probe = probe if probe is not None else LocalHostProbe(root_path, env)
    ports = requested_ports(profile) if profile is not None else []
    files = requested_files(profile) if profile is not None else []
    facts = gather_host_facts(host_probe, ports=ports, root=str(root_path), files=files)
    if profile is not None:  # the variables it reads secrets from, whatever their names (`check --json` prints env)
        facts = facts.redacted(declared_secret_names(profile.server.api_key, profile.runtime.secrets))

    backend = profile.target.backend if profile is not None else facts.backend
    pin_row: Release | None = None
    if profile is not None and matrix is not None:
        pin_row, _ = select_release(matrix, profile.target.backend, profile.release)
    choice = choose_engine_python(
        engine_python,
        env,
        engines_dir=paths.engines_dir(paths.data_dir(env)),
        backend=backend,
        release=pin_row.version if pin_row is not None else None,
    )
    facts = replace(facts, python=probe_python_env(host_probe, choice))
    ctx = CheckContext(
        facts=facts,
        matrix=matrix,
        profile=profile,
        matrix_error=matrix_error,
        profile_path=str(profile_path) if profile_path is not None else None,
    )
    release, source, why = _release_for(matrix, profile, facts, ctx.target)
    plan, plan_failure = plan_step(facts, matrix) if plan_step is not None and matrix is not None else (None, None)
    ctx = replace(ctx, release=release, release_source=source, release_error=why, plan=plan, lock=lock)
    if fabric_step is not None:
        ctx = replace(ctx, fabric=fabric_step(host_probe, plan, facts))
    findings = host_findings(ctx)
    if plan is not None:
        findings += list(plan.deployment.findings)
    elif plan_failure is not None:
        findings.append(plan_failure)
    return CheckReport.build(ctx, findings, rerun=rerun_command(profile_path, overrides, root, engine_python))


def rerun_command(profile_path: Path | None, overrides: Sequence[str], root: str, engine_python: str | None) -> str:
    argv = ["ascendctl", "check"]
    if profile_path is not None:
        argv.append(str(profile_path))
    for o in overrides:
        argv += ["--set", o]
    if root != "/":
        argv += ["--root", root]
    if engine_python:
        argv += ["--engine-python", engine_python]
    return shlex.join(argv)
