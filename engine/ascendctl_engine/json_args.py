"""What an `--additional-config` in an argv passes, read as vLLM's parser reads it.

One reader for everyone who looks inside that option where a profile writes it raw (`engine.extra_args`,
`network.nodes[i].extra_args`): the secret scan (`ascendctl.schema.secrets`), the release's key check
(`ascendctl_engine.adapters.builder`) and the importer. argparse takes any unique prefix of the flag, and vLLM's
`FlexibleArgumentParser` reads `--additional-config.a.b V` as `{"a": {"b": V}}`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from ascendctl_engine.argv_items import ArgItem

# vllm-ascend's JSON option, and the shortest prefix vLLM's parser reads as it: `--ad` starts no other flag of any
# parser snapshot (`--a` also starts `--api-key`, `--async-scheduling`, ...).
ADDITIONAL_CONFIG, ADDITIONAL_CONFIG_SHORTEST = "--additional-config", "--ad"


class RepeatedKeys(list[tuple[str, object]]):
    """A JSON object naming a key more than once, as its (key, value) pairs in order (vLLM keeps the last)."""

    def last_wins(self) -> dict[str, object]:
        return dict(self)


def spells(item: ArgItem, flag: str, shortest: str) -> bool:
    """Whether argparse reads `item` as `flag`: its canonical spelling (`--api_key`, `--api-key=V`), or an
    abbreviation at least as long as the shortest unique prefix."""
    name = item.as_written
    return name.startswith("--") and flag.startswith(name) and len(name) >= len(shortest)


def read_json(text: str) -> object | None:
    """`text` as vLLM's parser reads it (`json.loads`, so `NaN` and a repeated key pass), None when it reads none.

    Not the bounded reader: what that refuses, vLLM may still accept and put in the argv, and a scan must see what
    goes there. An object that names a key twice is kept as `RepeatedKeys`. The text is a profile value (bounded)."""
    try:
        value: object = json.loads(text, object_pairs_hook=_object)
    except (ValueError, RecursionError):
        return None
    return value


def _object(pairs: list[tuple[str, object]]) -> object:
    value = dict(pairs)
    return value if len(value) == len(pairs) else RepeatedKeys(pairs)


def item_configs(item: ArgItem) -> list[object]:
    """The JSON objects an `--additional-config` item passes: each value parsed, or the one key a dotted
    spelling sets (`--additional-config.a.b V` is `{"a": {"b": V}}`, as vLLM nests it)."""
    if item.key is None:
        return [c for c in map(read_json, item.values) if c is not None]
    parsed = None if item.value is None else read_json(item.value)
    leaf: object = True if item.value is None else item.value if parsed is None else parsed
    for key in reversed(item.key.split(".")):
        leaf = {key: leaf}
    return [leaf]


def additional_configs(items: Iterable[ArgItem]) -> list[tuple[ArgItem, dict[str, object]]]:
    """Each `--additional-config` item of `items` (any spelling) with the mapping vLLM hands vllm-ascend from it
    (a repeated key: its last value). A value that is no JSON object passes no key."""
    out: list[tuple[ArgItem, dict[str, object]]] = []
    for item in items:
        if not spells(item, ADDITIONAL_CONFIG, ADDITIONAL_CONFIG_SHORTEST):
            continue
        for config in item_configs(item):
            mapping = _plain(config)
            if isinstance(mapping, dict):
                out.append((item, mapping))
    return out


def _plain(value: object) -> object:
    """`value` with every repeated-key object read as vLLM keeps it (the last value of each key)."""
    if isinstance(value, RepeatedKeys):
        value = value.last_wins()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value
