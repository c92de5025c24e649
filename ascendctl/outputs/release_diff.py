"""The text of `ascendctl plan PROFILE --against-release TAG` (the JSON is `ReleaseDiff.to_json`)."""

from __future__ import annotations

import json

from ascendctl.plan.release_diff import CommandDiff, Item, ReleaseDiff


def _origin(item: Item) -> str:
    return f"  [{item.origin}]" if item.origin else ""


def _era(era: str | None) -> str:
    """An era as the registry names it (its label and range); `—` where the release has none of that topic."""
    return era if era is not None else "—"


def _command_lines(d: CommandDiff) -> list[str]:
    lines = [f"  {d.instance} node {d.node}:"]
    for r in d.renamed:
        lines.append(f"    renamed  {r.before.shown()}  →  {r.after.shown()}  [{r.origin}]")
    for c in d.changed:
        lines.append(
            f"    changed  {c.before.kind} {c.before.name}: {json.dumps(c.before.value)} → {json.dumps(c.after.value)}"
            f"{_origin(c.after)}"
        )
    lines += [f"    added    {i.shown()}{_origin(i)}" for i in d.added]
    lines += [f"    removed  {i.shown()}{_origin(i)}" for i in d.removed]
    return lines


def render_release_diff(diff: ReleaseDiff) -> list[str]:
    before, after = diff.before.deployment.release, diff.after.deployment.release
    lines = [f"{diff.profile}: {before.version} ({before.why}) → {after.version}", ""]
    lines.append("pins:" if diff.pins else "pins: unchanged")
    lines += [f"  {name:<14} {a if a is not None else '—'} → {b if b is not None else '—'}" for name, a, b in diff.pins]
    lines.append("")
    if diff.commands:
        lines.append("commands (renamed = the same profile field, spelled another way):")
        for command in diff.commands:
            lines += _command_lines(command)
    else:
        lines.append("commands: the same argv and env")
    lines.append("")
    appeared = [f"  + {f.status.upper()} {f.id}: {f.message}" for f in diff.appeared]
    disappeared = [f"  - {f.status.upper()} {f.id}: {f.message}" for f in diff.disappeared]
    changed = [f"  ~ {c.id}: {c.before} → {c.after}: {c.message}" for c in diff.finding_changes]
    if appeared or disappeared or changed:
        lines += ["findings (warnings and failures):", *appeared, *disappeared, *changed]
    else:
        lines.append("findings: the same warnings and failures")
    lines.append("")
    if diff.reads:
        lines.append("what each release reads (config keys and variables both plans pass):")
        for r in diff.reads:
            lines.append(
                f"  {r.instance}: {r.before.kind} {r.before.name} [{r.before.origin}]: "
                f"{r.before.status} → {r.after.status}: {r.reason}"
            )
    else:
        lines.append("reads: both releases read the same config keys and variables")
    if diff.eras:
        lines += ["", f"eras ({len(diff.eras)} topics change between the two releases):"]
        lines += [f"  {topic}: {_era(a)} → {_era(b)}" for topic, a, b in diff.eras]
    if diff.after.blocking:
        lines += ["", f"{after.version} refuses this profile as it is: see the failing findings above"]
    return lines
