"""Dotted key paths into plain nested mappings (`engine.memory.block_size`): the profile drafts of `import` and
the config.json fields the plan rules read both walk them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def dotted_get(data: Mapping[str, Any], path: str) -> Any:
    """The value at `path` (`a.b.c`), None when a part is missing or a parent is not a mapping."""
    node: Any = data
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node
