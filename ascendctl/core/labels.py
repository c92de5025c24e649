"""A name as an RFC 1035 label (`metadata.name`): lower-case letters, digits and `-`, a letter first, 63 at most."""

from __future__ import annotations

import re


def rfc1035_label(text: str, fallback: str) -> str:
    """`Run_Qwen3.sh`'s stem → `run-qwen3`; `fallback` when nothing is left."""
    out = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    out = re.sub(r"^[^a-z]+", "", out)[:63].rstrip("-")
    return out or fallback
