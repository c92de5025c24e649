"""Text helpers shared by the queries: name normalisation, did-you-mean suggestions, lenient version parsing."""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Iterable, Sequence

_SEPARATORS = re.compile(r"[\s_]+")


@functools.lru_cache(maxsize=4096)  # a lookup normalises every family's names again (~2000 calls per `plan`)
def _norm(text: str) -> str:
    return _SEPARATORS.sub("-", text.strip().lower())


def _did_you_mean(word: str, candidates: Iterable[str], n: int = 4) -> list[str]:
    pool = list(dict.fromkeys(candidates))
    by_norm: dict[str, str] = {}
    for c in pool:
        by_norm.setdefault(_norm(c), c)
    hits = difflib.get_close_matches(_norm(word), list(by_norm), n=n, cutoff=0.5)
    return [by_norm[h] for h in hits]


def _suggest(hits: Sequence[str]) -> str:
    return f"; did you mean {', '.join(hits)}?" if hits else ""
