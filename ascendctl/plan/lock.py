"""The lock document (`ascendctl lock`) and drift: what a deployment ran with, and what differs now.

A lock records, for one profile on one host: the profile's hash (file bytes + `--set` overrides), the resolved
release and its pins (the plan's `ReleasePin`), the image, every distribution installed in the engine
environment (name==version, plus a sha256 of the sorted set), the model's identity (resolved path and, when it
is a local directory, a sha256 of `config.json` and of the safetensors index) and per engine command a sha256 of
its argv and its displayed env (secrets are `<redacted>` there, so no secret reaches a lock file).

Shape (`schema` 1; a renamed or removed key, or a value that changes meaning, bumps `LOCK_SCHEMA`):
`{"schema": 1, "profile": {"path", "name", "sha256"}, "release": {ReleasePin.to_json() less "source"},
"image", "engine": {"interpreter", "python", "packages": {name: version}, "packages_sha256"},
"model": {"source", "resolved", "path", "config_sha256", "index_sha256"},
"commands": {"<instance>/<node>": sha256}}`.

`drifts(locked, now)` compares two such documents field by field: every field that differs is one `Drift`
(`what: locked → now`). Pure: the caller gathers packages and hashes (`ascendctl.run.lock`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from ascendctl.core.errors import UserInputError
from ascendctl.plan.types import Plan
from ascendctl_engine.records import record
from ascendctl_engine.spec import EngineCommand

LOCK_SCHEMA = 1
ABSENT = "(absent)"
# Derived fields: a digest of fields compared one by one (a changed package is named, not its set's hash too)
# and where the profile file was read (moving a file is no drift; its bytes are hashed).
_NOT_COMPARED = frozenset({"schema", "engine.packages_sha256", "profile.path", "profile.name"})


@record
class EnginePackages:
    """The engine environment's interpreter and every distribution installed in it (normalized name → version);
    `error` says why they could not be read."""

    interpreter: str
    python: str | None
    packages: Mapping[str, str]
    error: str | None = None

    @property
    def sha256(self) -> str:
        return sha256_text("\n".join(f"{name}=={v}" for name, v in sorted(self.packages.items())))


@record
class LockedModel:
    """Which weights: the model as the profile names it, what vLLM loads and, where the directory is found on this
    machine (a path, `prepared:NAME`, a hub id in the local cache), its path and the sha256 of its `config.json`
    and safetensors index (`ascendctl.facts.model_identity`; None where not found or absent)."""

    source: str
    resolved: str
    path: str | None
    config_sha256: str | None
    index_sha256: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "resolved": self.resolved,
            "path": self.path,
            "config_sha256": self.config_sha256,
            "index_sha256": self.index_sha256,
        }


@record
class Drift:
    """One field that differs between a lock and now."""

    what: str  # dotted field of the lock document (`engine.packages.torch`, `release.vllm`)
    locked: str
    now: str

    def line(self) -> str:
        return f"{self.what}: {self.locked} → {self.now}"

    def to_json(self) -> dict[str, str]:
        return {"what": self.what, "locked": self.locked, "now": self.now}


@record
class LockComparison:
    """`check PROFILE --lock LOCK`: the lock file and what differs from it now (what `host.lock` reports)."""

    path: str
    drifts: tuple[Drift, ...]

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "drifts": [d.to_json() for d in self.drifts]}


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def command_sha256(command: EngineCommand) -> str:
    """The argv and the displayed env of one command (secret values are never part of it)."""
    payload = {"argv": list(command.argv), "env": command.display_env()}
    return sha256_text(json.dumps(payload, sort_keys=True))


def lock_document(
    plan: Plan,
    *,
    profile_path: str,
    profile_sha256: str,
    engine: EnginePackages,
    model: LockedModel,
) -> dict[str, Any]:
    """The lock of one planned profile (see the module doc for the shape)."""
    release = {k: v for k, v in plan.deployment.release.to_json().items() if k != "source"}
    release["backend"] = plan.deployment.backend
    return {
        "schema": LOCK_SCHEMA,
        "profile": {"path": profile_path, "name": plan.deployment.name, "sha256": profile_sha256},
        "release": release,
        "image": plan.deployment.release.image,
        "engine": {
            "interpreter": engine.interpreter,
            "python": engine.python,
            "packages": dict(sorted(engine.packages.items())),
            "packages_sha256": engine.sha256,
            **({"error": engine.error} if engine.error else {}),  # only in a state taken now, never in a lock
        },
        "model": model.to_json(),
        "commands": {f"{i.name}/{c.node}": command_sha256(c) for i in plan.instances for c in i.commands},
    }


def validate_lock(data: Any, source: str) -> dict[str, Any]:
    """A lock read back from a file, or `UserInputError` naming what is wrong with it."""
    if not isinstance(data, dict):
        raise UserInputError(f"{source}: not a lock document (expected a mapping with `schema: {LOCK_SCHEMA}`)")
    if type(data.get("schema")) is not int or data["schema"] != LOCK_SCHEMA:  # `true` is not schema 1
        raise UserInputError(
            f"{source}: lock schema {data.get('schema')!r} is not {LOCK_SCHEMA}; re-lock with `ascendctl lock PROFILE`"
        )
    for section in ("profile", "release", "engine", "model", "commands"):
        if not isinstance(data.get(section), dict):
            raise UserInputError(f"{source}: `{section}` is missing or not a mapping")
    if not isinstance(data["engine"].get("packages"), dict):
        raise UserInputError(f"{source}: `engine.packages` is missing or not a mapping")
    return data


def _leaves(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        path = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(_leaves(value, f"{path}."))
        else:
            out[path] = value
    return out


def _shown(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value):
        return value[:12]  # a sha256: its first 12 digits tell two apart
    return str(value)


def drifts(locked: Mapping[str, Any], now: Mapping[str, Any]) -> list[Drift]:
    """Every field of `now` that differs from `locked` (a field only one side has counts, shown `(absent)`).
    An engine environment that could not be read now is one drift, not one per package."""
    error = now.get("engine", {}).get("error")
    if error:
        count = len(locked.get("engine", {}).get("packages", {}))
        head = [Drift("engine.packages", f"{count} packages", f"cannot be read: {error}")]
        locked = {k: v for k, v in locked.items() if k != "engine"}
        now = {k: v for k, v in now.items() if k != "engine"}
    else:
        head = []
    a, b = _leaves(locked), _leaves(now)
    out = list(head)
    for key in sorted(set(a) | set(b)):
        if key in _NOT_COMPARED:
            continue
        if key not in a:
            out.append(Drift(key, ABSENT, _shown(b[key])))
        elif key not in b:
            out.append(Drift(key, _shown(a[key]), ABSENT))
        elif a[key] != b[key]:
            out.append(Drift(key, _shown(a[key]), _shown(b[key])))
    return out
