"""`ascendctl lock`, `check PROFILE --lock LOCK`, `serve PROFILE --locked LOCK`: the state of a profile on this host
now (planned against this host's facts, as `serve` plans it), written as a lock, or compared with one.

The engine environment's distributions are read by its own interpreter (`ascendctl_engine.inenv` `probe` script:
`importlib.metadata`, nothing imported) through the host probe, so a test fakes the interpreter, never this
module. The document and the comparison are pure (`ascendctl.plan.lock`).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from ascendctl.core.errors import OperationFailed, UserInputError
from ascendctl.core.yamlio import load_yaml_file
from ascendctl.facts.model_identity import IdentityError, locate_identity
from ascendctl.plan.lock import (
    Drift,
    EnginePackages,
    LockComparison,
    LockedModel,
    drifts,
    lock_document,
    validate_lock,
)
from ascendctl.plan.planner import plan_profile, require_startable
from ascendctl.plan.types import Plan
from ascendctl.schema.loader import load_profile
from ascendctl.schema.profile import Profile
from ascendctl_engine import paths
from ascendctl_engine.host.gather import gather_host_facts
from ascendctl_engine.host.probe import HostProbe, LocalHostProbe
from ascendctl_engine.host.pyenv import EnginePython, choose_engine_python, parse_probe_output
from ascendctl_engine.inenv import script_path
from ascendctl_engine.jsonio import JsonReadError, read_bytes

DEFAULT_LOCK = "ascendctl.lock"
PROBE_TIMEOUT = 60.0


def profile_sha256(path: Path, overrides: Sequence[str]) -> str:
    """The profile's bytes and the `--set` overrides applied to them, in order."""
    try:
        raw = read_bytes(path)
    except JsonReadError as exc:
        raise UserInputError(f"{path}: {exc.reason}") from None
    digest = hashlib.sha256(raw)
    for text in overrides:
        digest.update(b"\0" + text.encode())
    return digest.hexdigest()


def engine_packages(probe: HostProbe, choice: EnginePython) -> EnginePackages:
    """Every distribution of the engine environment, as its interpreter's `importlib.metadata` lists them;
    a failure is `EnginePackages.error`, never raised."""
    argv = [choice.path, str(script_path("probe"))]
    result = probe.run(argv, timeout=PROBE_TIMEOUT)
    if not result.ok:
        return EnginePackages(choice.path, None, {}, result.reason([choice.path, "<probe>"]))
    try:
        data = parse_probe_output(result.stdout)
    except ValueError as exc:
        return EnginePackages(choice.path, None, {}, f"{choice.path}: {exc}")
    dists = data.get("distributions")
    version = data.get("python_version")
    if not isinstance(dists, dict):
        return EnginePackages(choice.path, None, {}, f"{choice.path}: the probe listed no distributions")
    packages = {str(k): str(v) for k, v in dists.items() if isinstance(v, str)}
    return EnginePackages(choice.path, version if isinstance(version, str) else None, packages)


def locked_model(plan: Plan, profile: Profile) -> LockedModel:
    """The model's identity where its directory is found on this machine (hashes None elsewhere)."""
    facts = plan.deployment.model
    try:
        found = locate_identity(facts.resolved, profile.model.revision, profile.model.scheme)
    except IdentityError:
        return LockedModel(facts.source, facts.resolved, None, None, None)
    return LockedModel(facts.source, facts.resolved, found.path, found.config_sha256, found.index_sha256)


def current_state(
    profile_path: Path,
    overrides: Sequence[str] = (),
    *,
    engine_python: str | None = None,
    environ: Mapping[str, str] | None = None,
    allow: Sequence[str] = (),
    startable: bool = False,
) -> dict[str, Any]:
    """The lock document of `profile_path` on this host now; `startable`: exit 2 while the plan has a failing
    finding left (what `lock` refuses to record)."""
    env = dict(os.environ if environ is None else environ)
    profile = load_profile(profile_path, list(overrides))
    probe = LocalHostProbe("/", env)
    plan = plan_profile(profile, host=gather_host_facts(probe), allow=allow)
    if startable:
        require_startable(plan)
    choice = choose_engine_python(
        engine_python,
        env,
        engines_dir=paths.engines_dir(paths.data_dir(env)),
        backend=profile.target.backend,
        release=plan.deployment.release.version,
    )
    return lock_document(
        plan,
        profile_path=str(profile_path),
        profile_sha256=profile_sha256(profile_path, overrides),
        engine=engine_packages(probe, choice),
        model=locked_model(plan, profile),
    )


def render_lock(doc: Mapping[str, Any], path: Path) -> str:
    """JSON for a `.json` path, else YAML (safe_dump, keys in document order)."""
    if path.suffix == ".json":
        return json.dumps(doc, indent=2) + "\n"
    header = "# ascendctl lock (schema 1): `ascendctl check PROFILE --lock FILE` lists what drifted since\n"
    return header + yaml.safe_dump(dict(doc), sort_keys=False, allow_unicode=True)


def write_lock(doc: Mapping[str, Any], path: Path) -> None:
    """Write atomically: a temporary file in the same directory, renamed over `path`."""
    text = render_lock(doc, path)
    directory = path.parent
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise OperationFailed(f"{path}: cannot write: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        Path(tmp).replace(path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise OperationFailed(f"{path}: cannot write: {exc.strerror or exc}") from None


def take_lock(
    profile_path: Path, overrides: Sequence[str], output: Path, *, engine_python: str | None = None
) -> dict[str, Any]:
    """`ascendctl lock`: the state now, written to `output`; exit 1 when the engine environment cannot be read."""
    doc = current_state(profile_path, overrides, engine_python=engine_python, startable=True)
    error = doc["engine"].get("error")
    if error:
        raise OperationFailed(f"cannot lock: the engine environment's packages cannot be read: {error}")
    write_lock(doc, output)
    return doc


def read_lock(path: Path) -> dict[str, Any]:
    """A lock file (YAML or JSON), validated; `UserInputError` (exit 2) when it is not one."""
    return validate_lock(load_yaml_file(path).data, str(path))


def lock_drifts(
    lock_path: Path, profile_path: Path, overrides: Sequence[str] = (), *, engine_python: str | None = None
) -> list[Drift]:
    """Every field of the lock that differs now."""
    locked = read_lock(lock_path)
    return drifts(locked, current_state(profile_path, overrides, engine_python=engine_python))


def compare_lock(
    lock_path: Path, profile_path: Path, overrides: Sequence[str] = (), *, engine_python: str | None = None
) -> LockComparison:
    """What `check --lock` hands the `host.lock` rule (`ascendctl/check/host_lock.py`)."""
    found = lock_drifts(lock_path, profile_path, overrides, engine_python=engine_python)
    return LockComparison(str(lock_path), tuple(found))
