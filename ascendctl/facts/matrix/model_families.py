"""Model families: lookup by name, alias or HF architecture (with did-you-mean) and their overview support rows
(a family's status on one release is judged by that release's model table: `model_tables`)."""

from __future__ import annotations

import functools
import re

from ascendctl.core.errors import UserInputError
from ascendctl.facts.matrix.names import _did_you_mean, _norm, _suggest
from ascendctl.facts.matrix.schema import ModelFamily, ModelSupport, SupportMatrix


def _model_keys(fam: ModelFamily) -> list[str]:
    return [fam.id, fam.name, *fam.aliases, *fam.architectures, *_name_parts(fam.name)]


@functools.lru_cache(maxsize=1024)  # every lookup splits every family's name again
def _name_parts(name: str) -> tuple[str, ...]:
    return tuple(part for part in re.split(r"\s*/\s*", name) if len(part) >= 4 and re.search(r"[a-zA-Z]", part))


def _preference(fam: ModelFamily, task: str | None) -> tuple[int, int]:
    pooling = {"embed": "embedding", "rerank": "reranker"}.get(task or "")
    if task is None:
        task_rank = 0
    elif pooling:
        task_rank = 0 if pooling in fam.types else 1
    else:  # generate
        task_rank = 0 if fam.kind == "generative" else 1
    return (task_rank, 0 if fam.tier == "core" else 1)


def find_models(matrix: SupportMatrix, query: str, *, task: str | None = None) -> list[ModelFamily]:
    """Families a name matches, best first: id, name, alias or HF architecture (case-insensitive).

    A Hub id's organisation is ignored (`Qwen/Qwen3-8B` → `Qwen3-8B`); when nothing matches exactly, the
    family whose name is the longest prefix of the query wins (`Qwen3-235B-A22B-Instruct` → Qwen3-235B-A22B).
    `task` (`generate`, `embed`, `rerank`) breaks ties between families sharing an architecture.
    """
    q = _norm(query.rsplit("/", 1)[-1] if "/" in query and not query.startswith("/") else query)
    index = _key_index(matrix)
    exact = list(index.get(q, ()))
    if not exact:
        # the longest key (of at least 4 characters) that is the query up to a `-`
        cuts = [i for i, ch in enumerate(q) if ch == "-" and i >= 4]
        for cut in reversed(cuts):
            if q[:cut] in index:
                exact = list(index[q[:cut]])
                break
    if len(exact) < 2:  # nothing to order (most lookups: a plan asks this for every table row it reads)
        return exact
    order = {f.id: i for i, f in enumerate(matrix.models)}
    return sorted(exact, key=lambda f: (*_preference(f, task), order[f.id]))


def _key_index(matrix: SupportMatrix) -> dict[str, tuple[ModelFamily, ...]]:
    """Normalised key -> the families it names, in matrix order; built once per matrix (a lookup per tutorial
    page and table link would otherwise normalise every family's names again)."""
    cached = _INDEX.get(id(matrix))
    if cached is None or cached[0] is not matrix:
        index: dict[str, list[ModelFamily]] = {}
        for f in matrix.models:
            for k in _model_keys(f):
                bucket = index.setdefault(_norm(k), [])
                if f not in bucket:
                    bucket.append(f)
        cached = (matrix, {k: tuple(v) for k, v in index.items()})
        _INDEX[id(matrix)] = cached
    return cached[1]


# Keyed by the matrix's identity, the matrix kept alongside (a new matrix at a reused address is not served stale).
_INDEX: dict[int, tuple[SupportMatrix, dict[str, tuple[ModelFamily, ...]]]] = {}


def lookup_model(matrix: SupportMatrix, query: str, *, task: str | None = None) -> ModelFamily:
    """The best family for a name or architecture; `UserInputError` with did-you-mean when none matches."""
    hits = find_models(matrix, query, task=task)
    if hits:
        return hits[0]
    names = [k for f in matrix.models for k in (f.name, *f.aliases, f.id)]
    raise UserInputError(
        f"unknown model {query!r}{_suggest(_did_you_mean(query, names))} (`ascendctl matrix models` lists them)"
    )


def model_support(family: ModelFamily, hardware: str) -> ModelSupport | None:
    """The overview row of a family for one hardware family (from the newest final release's model table)."""
    for row in family.support:
        if hardware in row.hardware:
            return row
    for row in family.support:
        if not row.hardware:
            return row
    return None
