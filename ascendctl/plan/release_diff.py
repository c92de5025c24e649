"""`ascendctl plan PROFILE --against-release TAG`: the same profile planned at two releases, side by side.

Per engine command (instance × node) the items each plan emits are compared: `vllm serve` flags, env variables,
and the leaf keys of the JSON options `--additional-config` and `--compilation-config`. An item only one side has
is *renamed* when the other side emits exactly one item for the same profile field and this one is the only one
of that field too: the field that asked for each item is the plan's own data (`Instance.origins`, recorded by the
era adapters' builder), never a guess from names. The rest is added, removed or changed (same item, other value).
Findings that appear or disappear (a release that refuses what the profile uses fails a finding), pins that
change (vLLM, CANN, torch, torch_npu, ...) and era topics whose era changes are listed too. So is every
`--additional-config` key and vLLM / vllm-ascend variable both plans pass whose reading changes (read at one release,
ignored or rejected at the other), wherever the profile wrote it: a typed field, `engine.additional_config`,
`engine.extra_args`, `runtime.env`, a node's settings (`Instance.reads`, the one judgement of
`ascendctl_engine.adapters.acceptance`).

JSON (`schema` 1; a renamed or removed key, or a value that changes meaning, bumps `RELEASE_DIFF_SCHEMA`):
`{"schema": 1, "profile", "from": {"release", "source"}, "to": {"release", "source"},
"pins": [{"name", "from", "to"}], "eras": [{"topic", "from", "to"}],
"commands": [{"instance", "node", "added": [item], "removed": [item], "changed": [{"kind", "name", "from", "to",
"origin"}], "renamed": [{"origin", "from": item, "to": item}]}],
"findings": {"appeared": [finding], "disappeared": [finding], "changed": [{"id", "from", "to", "message"}]},
"reads": [{"instance", "kind": "key"|"env", "name", "origin", "from", "to", "reason"}]}` (`from`/`to`: `read`,
`not-read`, `rejected`; `reason`: why the side that does not read it does not);
an item is `{"kind": "flag"|"env"|"additional-config"|"compilation-config", "name", "value", "origin"}`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import TYPE_CHECKING, Any, Literal

from ascendctl.core.findings import Finding
from ascendctl.plan.planner import plan_profile
from ascendctl.plan.types import Instance, Plan
from ascendctl_engine.argv_items import parse_args
from ascendctl_engine.records import record
from ascendctl_engine.spec import EngineCommand

if TYPE_CHECKING:
    from ascendctl.schema.profile import Profile
    from ascendctl_engine.adapters.acceptance import SettingVerdict
    from ascendctl_engine.host.facts import HostFacts

RELEASE_DIFF_SCHEMA = 1
Kind = Literal["flag", "env", "additional-config", "compilation-config"]
JSON_OPTIONS: dict[str, Kind] = {
    "--additional-config": "additional-config",
    "--compilation-config": "compilation-config",
}
_PINS = ("version", "vllm", "vllm_ascend", "python", "cann", "torch", "torch_npu", "triton_ascend", "mindie_turbo")


@record
class Item:
    """One thing a command sets: a flag (value: its words joined, True for a bare switch), a variable, a JSON key."""

    kind: Kind
    name: str
    value: Any
    origin: str | None  # the profile field that asked for it (None: a default of the release or of ascendctl)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "name": self.name, "value": self.value, "origin": self.origin}

    def shown(self) -> str:
        if self.kind == "env":
            return f"env {self.name}={self.value}"
        if self.kind == "flag":
            return self.name if self.value is True else f"{self.name} {self.value}"
        return f"{self.kind} {self.name}={json.dumps(self.value)}"


@record
class Changed:
    before: Item
    after: Item

    def to_json(self) -> dict[str, Any]:
        b, a = self.before, self.after
        return {"kind": b.kind, "name": b.name, "from": b.value, "to": a.value, "origin": a.origin or b.origin}


@record
class Renamed:
    origin: str
    before: Item
    after: Item

    def to_json(self) -> dict[str, Any]:
        return {"origin": self.origin, "from": self.before.to_json(), "to": self.after.to_json()}


@record
class CommandDiff:
    instance: str
    node: int
    added: tuple[Item, ...] = ()
    removed: tuple[Item, ...] = ()
    changed: tuple[Changed, ...] = ()
    renamed: tuple[Renamed, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.changed or self.renamed)

    def to_json(self) -> dict[str, Any]:
        return {
            "instance": self.instance,
            "node": self.node,
            "added": [i.to_json() for i in self.added],
            "removed": [i.to_json() for i in self.removed],
            "changed": [c.to_json() for c in self.changed],
            "renamed": [r.to_json() for r in self.renamed],
        }


@record
class FindingChange:
    id: str
    before: str  # status at the profile's release
    after: str
    message: str


@record
class ReadChange:
    """A setting both plans pass that one release reads and the other ignores or rejects."""

    instance: str
    before: SettingVerdict
    after: SettingVerdict

    @property
    def reason(self) -> str:
        return self.after.reason if self.after.status != "read" else self.before.reason

    def to_json(self) -> dict[str, Any]:
        b, a = self.before, self.after
        return {
            "instance": self.instance,
            "kind": b.kind,
            "name": b.name,
            "origin": b.origin,
            "from": b.status,
            "to": a.status,
            "reason": self.reason,
        }


@record
class ReleaseDiff:
    profile: str
    before: Plan
    after: Plan
    pins: tuple[tuple[str, Any, Any], ...]
    eras: tuple[tuple[str, str | None, str | None], ...]
    commands: tuple[CommandDiff, ...]
    appeared: tuple[Finding, ...] = field(default=())
    disappeared: tuple[Finding, ...] = field(default=())
    finding_changes: tuple[FindingChange, ...] = field(default=())
    reads: tuple[ReadChange, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        def side(plan: Plan) -> dict[str, Any]:
            return {"release": plan.deployment.release.version, "source": plan.deployment.release.why}

        return {
            "schema": RELEASE_DIFF_SCHEMA,
            "profile": self.profile,
            "from": side(self.before),
            "to": side(self.after),
            "pins": [{"name": n, "from": a, "to": b} for n, a, b in self.pins],
            "eras": [{"topic": t, "from": a, "to": b} for t, a, b in self.eras],
            "commands": [c.to_json() for c in self.commands],
            "findings": {
                "appeared": [f.to_dict() for f in self.appeared],
                "disappeared": [f.to_dict() for f in self.disappeared],
                "changed": [
                    {"id": c.id, "from": c.before, "to": c.after, "message": c.message} for c in self.finding_changes
                ],
            },
            "reads": [r.to_json() for r in self.reads],
        }


# ------------------------------------------------------------------------------------------------ items


def _origin(origins: Mapping[str, str], *keys: str) -> str | None:
    return next((origins[k] for k in keys if k in origins), None)


def _leaves(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict) and value:
        out: dict[str, Any] = {}
        for key, sub in value.items():
            out.update(_leaves(sub, f"{prefix}{key}."))
        return out
    return {prefix.rstrip("."): value}


def _json_items(kind: Kind, option: str, text: str, origins: Mapping[str, str]) -> list[Item]:
    """The leaf keys of a JSON option; each key's origin is that of its longest recorded prefix."""
    try:
        value = json.loads(text)
    except ValueError:
        return [Item("flag", option, text, origins.get(option))]
    out = []
    for path, leaf in _leaves(value).items():
        parts = path.split(".")
        prefixes = [f"{option}.{'.'.join(parts[:n])}" for n in range(len(parts), 0, -1)]
        out.append(Item(kind, path, leaf, _origin(origins, *prefixes)))
    return out


def command_items(instance: Instance, command: EngineCommand) -> dict[tuple[str, str], Item]:
    """Everything one command sets, keyed by (kind, name). Only a `vllm serve` argv has flags to compare."""
    origins = instance.origins
    items: list[Item] = []
    if command.argv[:2] == ("vllm", "serve"):
        for arg in parse_args(command.argv[3:]):
            name = arg.flag if arg.key is None else f"{arg.flag}.{arg.key}"
            text = " ".join(arg.values) if arg.values else True
            if arg.flag in JSON_OPTIONS and arg.key is None and isinstance(text, str):
                items += _json_items(JSON_OPTIONS[arg.flag], arg.flag, text, origins)
            else:
                items.append(Item("flag", name, text, _origin(origins, f"{name}@node{command.node}", name)))
    for var, value in sorted(command.display_env().items()):
        items.append(Item("env", var, value, origins.get(f"env:{var}")))
    return {(i.kind, i.name): i for i in items}


def _pair_renames(removed: list[Item], added: list[Item]) -> tuple[list[Item], list[Item], list[Renamed]]:
    """Pair a removed and an added item asked for by the same profile field (one each for that field)."""

    def by_origin(items: list[Item]) -> dict[str, list[Item]]:
        out: dict[str, list[Item]] = {}
        for item in items:
            if item.origin is not None:
                out.setdefault(item.origin, []).append(item)
        return out

    gone, new = by_origin(removed), by_origin(added)
    renamed = [
        Renamed(origin, gone[origin][0], new[origin][0])
        for origin in gone
        if len(gone[origin]) == 1 and len(new.get(origin, ())) == 1
    ]
    paired = {id(r.before) for r in renamed} | {id(r.after) for r in renamed}
    return [i for i in removed if id(i) not in paired], [i for i in added if id(i) not in paired], renamed


def diff_command(instance: str, node: int, before: Mapping[Any, Item], after: Mapping[Any, Item]) -> CommandDiff:
    removed = [before[k] for k in before if k not in after]
    added = [after[k] for k in after if k not in before]
    changed = [Changed(before[k], after[k]) for k in before if k in after and before[k].value != after[k].value]
    removed, added, renamed = _pair_renames(removed, added)
    return CommandDiff(instance, node, tuple(added), tuple(removed), tuple(changed), tuple(renamed))


def _commands(plan: Plan) -> dict[tuple[str, int], dict[tuple[str, str], Item]]:
    return {(i.name, c.node): command_items(i, c) for i in plan.instances for c in i.commands}


# ------------------------------------------------------------------------------------------------ the diff


def read_changes(before: Plan, after: Plan) -> tuple[ReadChange, ...]:
    """The settings both plans pass (same instance, kind, name and origin) whose reading differs."""

    def verdicts(plan: Plan) -> dict[tuple[str, str, str, str], SettingVerdict]:
        return {(i.name, v.kind, v.name, v.origin): v for i in plan.instances for v in i.reads}

    va, vb = verdicts(before), verdicts(after)
    return tuple(ReadChange(key[0], va[key], vb[key]) for key in va if key in vb and va[key].status != vb[key].status)


def _notable(plan: Plan) -> dict[str, Finding]:
    return {f.id: f for f in plan.deployment.findings if f.status in ("warn", "fail")}


def diff_plans(profile: str, before: Plan, after: Plan) -> ReleaseDiff:
    """`before` (the profile's release) against `after` (the other release)."""
    pa, pb = before.deployment.release.to_json(), after.deployment.release.to_json()
    pins = tuple((name, pa.get(name), pb.get(name)) for name in (*_PINS, "image") if pa.get(name) != pb.get(name))
    eras = tuple(
        (topic, before.eras.get(topic), after.eras.get(topic))
        for topic in dict.fromkeys([*before.eras, *after.eras])
        if before.eras.get(topic) != after.eras.get(topic)
    )
    ca, cb = _commands(before), _commands(after)
    commands = tuple(
        d
        for key in dict.fromkeys([*ca, *cb])
        if not (d := diff_command(key[0], key[1], ca.get(key, {}), cb.get(key, {}))).empty
    )
    na, nb = _notable(before), _notable(after)
    changes = tuple(
        FindingChange(i, na[i].status, nb[i].status, nb[i].message)
        for i in na
        if i in nb and na[i].status != nb[i].status
    )
    return ReleaseDiff(
        profile=profile,
        before=before,
        after=after,
        pins=pins,
        eras=eras,
        commands=commands,
        appeared=tuple(f for i, f in nb.items() if i not in na),
        disappeared=tuple(f for i, f in na.items() if i not in nb),
        finding_changes=changes,
        reads=read_changes(before, after),
    )


def against_release(
    profile: Profile,
    tag: str,
    *,
    host: HostFacts | None = None,
    allow: Sequence[str] = (),
    allow_unsupported: bool = False,
) -> ReleaseDiff:
    """The profile planned at its own release and at `tag` (a failing finding is shown, not raised: what a
    release refuses is what an upgrade wants to know); `UserInputError` for an unknown tag."""

    def planned(release: str | None) -> Plan:
        return plan_profile(profile, host=host, release=release, allow=allow, allow_unsupported=allow_unsupported)

    return diff_plans(profile.metadata.name, planned(None), planned(tag))
