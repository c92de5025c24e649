"""Text helpers shared by the queries: name normalisation, did-you-mean suggestions, lenient version parsing."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence


def _norm(text: str) -> str:
    return re.sub(r"[\s_]+", "-", text.strip().lower())


def _did_you_mean(word: str, candidates: Iterable[str], n: int = 4) -> list[str]:
    pool = list(dict.fromkeys(candidates))
    by_norm: dict[str, str] = {}
    for c in pool:
        by_norm.setdefault(_norm(c), c)
    hits = difflib.get_close_matches(_norm(word), list(by_norm), n=n, cutoff=0.5)
    return [by_norm[h] for h in hits]


def _suggest(hits: Sequence[str]) -> str:
    return f"; did you mean {', '.join(hits)}?" if hits else ""
