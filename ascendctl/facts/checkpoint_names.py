"""What a checkpoint's name says about its weights: the ModelSlim type (`Qwen3-32B-W8A8` → w8a8).

A name is a claim, not proof: the importer reads it for `--quantization ascend` (which names no type) and the index
of upstream's CI launches reads it to file each launch under a quantization (`ascendctl.facts.launches`).
"""

from __future__ import annotations

import re
from typing import get_args

from ascendctl_engine.vocab import Quantization

QUANTIZATIONS: frozenset[str] = frozenset(get_args(Quantization))


def quantization_from_name(source: str) -> str | None:
    """The ModelSlim type a checkpoint's name states (`Qwen3-32B-W8A8` → w8a8, `-w4a8` → w4a8_dynamic)."""
    tokens = re.split(r"[-_/.]+", source.lower())
    for token in tokens:
        if not re.fullmatch(r"w\d+a\d+\w*", token):
            continue
        for candidate in (token, f"{token}_dynamic"):
            if candidate in QUANTIZATIONS:
                return candidate
    return None
