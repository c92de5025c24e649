"""Support evidence beyond a release's model table: the tag's own tutorials and its release notes.

A table row is the strongest statement a release makes about a model; when the table is silent, the same
release's tutorial that serves the model on a hardware family, or a release note that names it, is evidence that
it runs there. `model_tables._model_status` asks this module only when the table has no row, and `explain` shows
every item found (`matrix --explain`), so where the sources disagree both are visible.

The evidence is extracted by `scripts/extract_upstream.py` (`tutorials`, `release_note_lines` of each tag's
extract); which family a tutorial serves is decided here, with the same name lookup the plan uses.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from ascendctl.facts import upstream
from ascendctl.facts.matrix.hardware import UNSTATED_HARDWARE, phrase_hardware
from ascendctl.facts.matrix.model_families import _model_keys, find_models
from ascendctl.facts.matrix.schema import ModelFamily, Release, SupportMatrix, in_range
from ascendctl_engine.records import record
from ascendctl_engine.versions import parse as parse_version

# A note that names a model while saying something does not work with it is a caveat, not support.
_ANNOUNCES = re.compile(r"\b(?:add(?:ed)? support|(?:is|are) (?:now )?supported|now (?:works|supported))\b", re.I)
_CAVEAT = re.compile(r"\b(?:not work|doesn'?t work|does not work|not supported|unsupported|broken|removed?)\b", re.I)


@record
class Evidence:
    """One statement of a release's documents about a model family."""

    kind: str  # tutorial | release-notes
    tag: str
    text: str  # what the document says, in a line
    hardware: tuple[str, ...]  # the hardware families it covers (a note names none: the untabbed families)
    source: str  # `tag:path:line`
    caveat: bool = False  # a release note naming the model next to "does not work" / "not supported"

    @property
    def announces(self) -> bool:
        """A note that announces support ("Add support for Qwen3 Next", "X is supported"), caveats and all."""
        return bool(_ANNOUNCES.search(self.text))


def evidence(
    matrix: SupportMatrix, fam: ModelFamily, rel: Release, hardware: str, *, notes: bool = True
) -> list[Evidence]:
    """What `rel`'s tutorials and (with `notes`) the release notes up to `rel` say of `fam` on `hardware`,
    tutorials first. The notes are every release's extract: asked for only when the table is silent."""
    if rel.backend != "npu":
        return []
    out = [e for e in tutorial_evidence(matrix, fam, rel) if hardware in e.hardware]
    if notes:
        out += [e for e in note_evidence(fam, rel, matrix) if hardware in e.hardware]
    return out


def tutorial_evidence(matrix: SupportMatrix, fam: ModelFamily, rel: Release) -> list[Evidence]:
    """The tutorials of `rel` (or of the nearest earlier extracted tag) whose commands serve `fam`."""
    found = upstream.nearest_tutorials(rel.version)
    if found is None:
        return []
    tag, pages = found
    supported = _supported_hardware(matrix, rel)
    out = []
    for page in pages:
        if fam.id in _served_families(matrix, page):
            covered = tuple(h for h in _page_hardware(page) if h in supported)
            served = ", ".join(page.models[:3]) + (f" (+{len(page.models) - 3} more)" if len(page.models) > 3 else "")
            served = served or page.title
            out.append(Evidence("tutorial", tag, f"{tag}'s tutorial {page.path} serves {served}", covered, page.source))
    return out


def note_evidence(fam: ModelFamily, rel: Release, matrix: SupportMatrix) -> list[Evidence]:
    """Release-note bullets naming `fam`, from `rel`'s own notes back to the first release (newest first); an
    older release's caveat ("X does not work") says nothing of this one and is left out."""
    supported = _supported_hardware(matrix, rel)
    covered = tuple(h for h in UNSTATED_HARDWARE if h in supported)
    return [
        Evidence("release-notes", tag, f"{tag}'s release notes: {text}", covered, source, caveat)
        for tag, text, source, caveat in _mentions(tuple(_note_keys(fam)))
        if parse_version(tag) <= rel.key and (not caveat or tag == rel.version)
    ]


@functools.lru_cache(maxsize=256)
def _mentions(keys: tuple[str, ...]) -> tuple[tuple[str, str, str, bool], ...]:
    """(tag, line, source, caveat) of every release-note bullet of every extract naming one of `keys`."""
    pattern = _mention_pattern(keys)
    if pattern is None:
        return ()
    out = []
    for tag in reversed(upstream.extract_tags()):
        for line in upstream.release_note_lines(tag):
            text = str(line.value)
            if pattern.search(text):
                out.append((tag, text, line.source, bool(_CAVEAT.search(text))))
    return tuple(out)


def disagreement(table_status: str, found: Sequence[Evidence]) -> Evidence | None:
    """A tutorial of the tag that serves what the tag's table marks unsupported (the table still decides)."""
    if table_status != "unsupported":
        return None
    return next((e for e in found if e.kind == "tutorial"), None)


# --------------------------------------------------------------------------------------------------
# tutorials


def _supported_hardware(matrix: SupportMatrix, rel: Release) -> set[str]:
    return {h.id for h in matrix.hardware if in_range(h.releases, rel.version)}


def _page_hardware(page: upstream.Tutorial) -> tuple[str, ...]:
    found: list[str] = []
    for phrase in page.hardware:
        found += [f for f in phrase_hardware(phrase) if f not in found]
    return tuple(found) if found else UNSTATED_HARDWARE


def _served_families(matrix: SupportMatrix, page: upstream.Tutorial) -> frozenset[str]:
    key = (id(matrix), page.source)
    cached = _SERVED_CACHE.get(key)
    if cached is None or cached[0] is not matrix:
        ids = {f.id for name in page.models for f in find_models(matrix, name)}
        cached = (matrix, frozenset(ids))
        _SERVED_CACHE[key] = cached
    return cached[1]


_SERVED_CACHE: dict[tuple[int, str], tuple[SupportMatrix, frozenset[str]]] = {}


def page_families(matrix: SupportMatrix, path: str, tag: str) -> frozenset[str]:
    """The families a linked tutorial page is about: its file name and title, not every model it serves
    (a row linking `Qwen3-235B-A22B.md` is that model's row, whatever else the page runs)."""
    key = (id(matrix), f"{tag}:{path}")
    cached = _PAGE_CACHE.get(key)
    if cached is None or cached[0] is not matrix:
        stem = path.rsplit("/", 1)[-1].removesuffix(".md")
        names = [stem]
        page = next((p for p in upstream.tutorials(tag) if p.path == path), None) if tag else None
        if page is not None and page.title:
            names.append(page.title)
        cached = (matrix, frozenset(f.id for name in names for f in find_models(matrix, name)))
        _PAGE_CACHE[key] = cached
    return cached[1]


# Keyed by the matrix's identity (kept alongside, so a new matrix at a reused address is not served stale).
_PAGE_CACHE: dict[tuple[int, str], tuple[SupportMatrix, frozenset[str]]] = {}


# --------------------------------------------------------------------------------------------------
# release notes


def _note_keys(fam: ModelFamily) -> list[str]:
    """The names a release note may use for the family (not its id or architecture: notes are prose)."""
    keys = [k for k in (*_model_keys(fam), *fam.table_names) if k != fam.id and k not in fam.architectures]
    return [k for k in dict.fromkeys(keys) if len(k) >= 4]


@functools.lru_cache(maxsize=1024)
def _mention_pattern(keys: tuple[str, ...]) -> re.Pattern[str] | None:
    """One name of `keys` as a whole word; `-`, `_` and a space are interchangeable (`Qwen3 Next` = `Qwen3-Next`),
    and a longer name does not count (`Qwen3` is not mentioned by `Qwen3-Next`)."""
    variants = []
    for key in keys:
        parts = [re.escape(p) for p in re.split(r"[\s_-]+", key.strip()) if p]
        if parts:
            variants.append(r"[\s_-]?".join(parts))
    if not variants:
        return None
    return re.compile(rf"(?<![\w.-])(?:{'|'.join(variants)})(?![\w]|-\w|\.\d)", re.I)
