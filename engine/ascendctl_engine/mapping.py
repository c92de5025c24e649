"""Nested mappings (JSON-like profile fragments, `--additional-config` objects): one merge rule for everyone."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def deep_merge(base: Mapping[str, Any], over: Mapping[str, Any], path: str = "") -> tuple[dict[str, Any], list[str]]:
    """`over` merged into `base` (mappings recursively; `over` wins). Returns the merge and the dotted
    paths of `base` leaves that `over` replaced with a different value."""
    out = dict(base)
    replaced: list[str] = []
    for key, value in over.items():
        here = f"{path}.{key}" if path else str(key)
        if key in out and isinstance(out[key], Mapping) and isinstance(value, Mapping):
            merged, more = deep_merge(out[key], value, here)
            out[key] = merged
            replaced += more
        else:
            if key in out and out[key] != value:
                replaced.append(here)
            out[key] = value
    return out, replaced
