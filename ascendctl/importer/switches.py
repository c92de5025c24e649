"""A vllm-ascend switch is its meaning, whatever a script spells it with.

A script turns FlashComm1 on with `VLLM_ASCEND_ENABLE_FLASHCOMM1=1`, `--additional-config '{"enable_flashcomm1":
true}'` or the dotted `--additional-config.enable_flashcomm1 true`; a release reads some of those spellings and the
plan writes the one its code prefers (`ascendctl_engine.adapters.ascend_switches`). The importer reads each spelling
the script's release reads into its typed field (`engine.ascend.*`, the owner `ascendctl_engine.typed_fields` names),
with the value as that release's code reads it (the key table's cast: `bool(int(…))` for a variable, `1` for an
integer key); a value the field cannot express (`VLLM_ASCEND_ENABLE_FUSED_MC2=2`, a mode) stays as written. The
round trip then compares meanings: the script's spelling and the plan's are the same switch when the release reads
both (`respell`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from ascendctl.importer.compare import Difference
from ascendctl_engine.adapters.ascend_keys import KeyTable, KeyTableMissing, key_table
from ascendctl_engine.adapters.weight_nz import FIELD as NZ_FIELD
from ascendctl_engine.adapters.weight_nz import MODES as NZ_MODES
from ascendctl_engine.argv_items import parse_args
from ascendctl_engine.json_args import ADDITIONAL_CONFIG, ADDITIONAL_CONFIG_SHORTEST, read_json, spells
from ascendctl_engine.records import record
from ascendctl_engine.typed_fields import owner

SWITCH_PREFIX = "engine.ascend."
Spelled = Literal["env", "key"]
# Fields spelled like a switch whose value is a mode number rather than on/off: field → number → the field's word.
MODE_FIELDS: dict[str, dict[int, str]] = {NZ_FIELD: {number: word for word, number in NZ_MODES.items()}}


def is_meaning_field(field: str) -> bool:
    """A field whose spellings the importer reads by meaning: an `engine.ascend` switch or a mode field."""
    return field.startswith(SWITCH_PREFIX) or field in MODE_FIELDS


@record
class Meaning:
    """What one spelling says, as the release reads it."""

    field: str  # `engine.ascend.flashcomm1`
    on: bool | str  # a switch: on or off; a mode field: its word (`quantized`)
    kind: Spelled
    name: str  # the variable, or the dotted key path
    source: str  # where the release reads it (`tag:path:line`)

    @property
    def shown(self) -> str:
        if self.kind == "env":
            return f"`{self.name}`"
        return f"`--additional-config` key `{self.name}`"


def table_of(release: str) -> KeyTable | None:
    try:
        return key_table(release)
    except KeyTableMissing:
        return None


def meaning(table: KeyTable | None, kind: Spelled, name: str, value: Any) -> Meaning | None:
    """The switch `name` spells and whether `value` turns it on, as the release reads it; None when it is no switch
    spelling, the release does not read it, or the value is one the switch field cannot express."""
    claim = owner(kind, name)
    if table is None or claim is None or not is_meaning_field(claim.field):
        return None
    modes = MODE_FIELDS.get(claim.field)
    on: bool | str | None
    if kind == "env":
        env = table.env(name)
        if env is None:
            return None
        on, source = _from_variable(env.type, value) if modes is None else _mode(modes, value), env.source
    else:
        key = table.key(name)
        if key is None or key.mapping:
            return None
        on, source = _from_key(value) if modes is None else _mode(modes, value), key.source
    return None if on is None else Meaning(claim.field, on, kind, name, source)


def _mode(modes: Mapping[int, str], value: Any) -> str | None:
    """A mode number as the release reads it (`int(...)`: the variable's text or the key's JSON integer)."""
    if isinstance(value, bool):  # a JSON true is Python's 1 to the code's `== 2` and `not mode` tests
        return modes.get(int(value))
    try:
        return modes.get(int(str(value).strip()))
    except ValueError:
        return None


def _from_variable(cast: str | None, text: Any) -> bool | None:
    """A variable's text as the release's getter reads it: `bool(int(text))` or `int(text)` (0 off, 1 on; another
    number is a mode no switch says); a word only where the getter takes the text as it is."""
    word = str(text).strip().lower()
    if cast in ("bool", "int"):
        try:
            number = int(word)
        except ValueError:
            return None
        if cast == "bool":
            return bool(number)
        return {0: False, 1: True}.get(number)
    return {"1": True, "true": True, "0": False, "false": False}.get(word)


def _from_key(value: Any) -> bool | None:
    """A key's JSON value: true/false, 0/1 (an integer key, `int(...)` in the code), or the text "true", which the
    code's truth test reads as on (e.g. v0.23.0:vllm_ascend/worker/worker.py:779 `if ….enable_cpu_binding:`; the text
    "false" is on there too, so it says more than off and stays as written); anything else says more."""
    if isinstance(value, str) and value.strip().lower() == "true":
        return True
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return {0: False, 1: True}.get(value)
    return None


def leaves(value: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for name, sub in value.items():
        path = f"{prefix}{name}"
        out += leaves(sub, path + ".") if isinstance(sub, dict) and sub else [(path, sub)]
    return out


def without(value: dict[str, Any], path: str) -> None:
    """Remove the dotted `path` from `value`, and the objects it leaves empty."""
    head, _, rest = path.partition(".")
    if not rest:
        value.pop(head, None)
        return
    sub = value.get(head)
    if isinstance(sub, dict):
        without(sub, rest)
        if not sub:
            value.pop(head)


# ------------------------------------------------------------------------------------------------ the round trip


def respell(
    script_argv: Sequence[str],
    script_env: Mapping[str, str],
    planned: Mapping[str, Meaning],
    table: KeyTable | None,
) -> tuple[list[str], dict[str, str], list[Difference]]:
    """The script's side with every switch spelling the plan says another way (and the release reads both, meaning
    the same) taken out, and one `respelled` difference for each (it does not count). `planned`: field → the
    plan's own spelling of that switch."""
    env = dict(script_env)
    notes: list[Difference] = []
    for name, text in script_env.items():
        said = meaning(table, "env", name, text)
        if said is not None and _same_switch(said, planned):
            env.pop(name)
            notes.append(_respelled(said, planned[said.field], table))
    argv = list(script_argv)
    model = [argv.pop(0)] if argv and not argv[0].startswith("-") else []
    try:
        items = parse_args(argv)
    except ValueError:
        return list(script_argv), env, notes
    kept: list[str] = list(model)
    for item in items:
        if not spells(item, ADDITIONAL_CONFIG, ADDITIONAL_CONFIG_SHORTEST):
            kept += item.tokens
            continue
        config = _object(item)
        if config is None:
            kept += item.tokens
            continue
        for path, value in leaves(dict(config)):
            said = meaning(table, "key", path, value)
            if said is not None and _same_switch(said, planned):
                without(config, path)
                notes.append(_respelled(said, planned[said.field], table))
            elif said is not None and isinstance(value, str) and planned.get(said.field) == said:
                _set(config, path, said.on)  # the text "true": the plan writes the JSON true the code reads alike
        if config:
            kept += [ADDITIONAL_CONFIG, json.dumps(config)]
    return kept, env, notes


def _set(value: dict[str, Any], path: str, new: Any) -> None:
    *parents, leaf = path.split(".")
    for part in parents:
        value = value[part]
    value[leaf] = new


def _object(item: Any) -> dict[str, Any] | None:
    if item.key is not None:
        nested: Any = read_json(item.value) if item.value is not None else True
        nested = item.value if nested is None else nested
        for part in reversed(item.key.split(".")):
            nested = {part: nested}
        return dict(nested)
    value = read_json(item.value) if item.value is not None else None
    return dict(value) if isinstance(value, dict) else None


def _same_switch(said: Meaning, planned: Mapping[str, Meaning]) -> bool:
    plan = planned.get(said.field)
    return plan is not None and plan.on == said.on and (plan.kind, plan.name) != (said.kind, said.name)


def _respelled(script: Meaning, plan: Meaning, table: KeyTable | None) -> Difference:
    tag = table.tag if table is not None else "the release"
    why = (
        f"spelled {plan.shown} by the plan, {script.shown} by the script, both read by {tag} "
        f"({plan.source}; {script.source})"
    )
    return Difference(script.kind if script.kind == "env" else "flag", script.name, "respelled", plan.on, script.on,
                      why)  # fmt: skip
