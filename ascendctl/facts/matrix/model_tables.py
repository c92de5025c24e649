"""Per-release model support: a release is judged by its own supported-models table (the nearest earlier tag's
table when it has none), read from the upstream extracts — never by a newer release's table.

A family matches a table row by its name, id, aliases, architectures, or the `table_names` upstream spells it
with; a row's hardware comes from its tab (`A2/A3`, `Atlas 300I DUO` / `Atlas inference products`, `Ascend 950
Products`) or its hardware
column, and older tables without either cover the families of their time (A2, and A3 from its first release).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from ascendctl.core.findings import Clause
from ascendctl.facts import upstream
from ascendctl.facts.matrix.evidence import Evidence, disagreement, evidence, page_families
from ascendctl.facts.matrix.hardware import UNSTATED_HARDWARE, phrase_hardware
from ascendctl.facts.matrix.model_families import _model_keys
from ascendctl.facts.matrix.names import _norm
from ascendctl.facts.matrix.schema import Cell, ModelFamily, ModelSupport, Release, SupportMatrix, in_range
from ascendctl.facts.matrix.verdicts import Level, Reason
from ascendctl_engine.records import record
from ascendctl_engine.versions import parse as parse_version

# an issue or PR number in a table row's note (`(#496)`): upstream evidence behind the table's claim
_CITES_ISSUE = re.compile(r"#\d+")


@record
class TableJudgement:
    status: str  # supported | experimental | untested | unsupported | absent
    table_tag: str | None  # the tag whose table judged (None: no table at or before the release)
    table_path: str
    own_table: bool  # the release's own table (False: the nearest earlier one)
    row: upstream.ModelRow | None
    support: ModelSupport | None  # the row as a matrix support row (cells mapped to feature ids)

    @property
    def table_ref(self) -> str:
        return f"{self.table_tag}:{self.table_path}" if self.table_tag else "no supported-models table"


def row_hardware(row: upstream.ModelRow, release: Release, matrix: SupportMatrix) -> tuple[str, ...]:
    """The hardware families a table row covers on `release`."""
    supported = {h.id for h in matrix.hardware if in_range(h.releases, release.version)}
    return tuple(f for f in stated_hardware(row) if f in supported)


def stated_hardware(row: upstream.ModelRow) -> tuple[str, ...]:
    """The hardware families a table row names (its tab, else its hardware column, else A2/A3)."""
    return phrase_hardware(f"{row.group} {row.hardware}") or UNSTATED_HARDWARE


def hardware_status(row: upstream.ModelRow, family: str) -> str:
    """The row's status for one hardware family: a hardware cell such as "A2/A3/Ascend950 (Ascend950
    experimental)" makes the parenthesised family experimental; otherwise the row's own status."""
    for note in re.findall(r"\(([^)]*)\)", row.hardware or ""):
        words = note.lower()
        if "experimental" in words and family in stated_hardware(_named(note)):
            return "experimental"
    return row.status


def _named(text: str) -> upstream.ModelRow:
    return upstream.ModelRow(
        name="", category="", group="", status="", status_raw="", cells={}, cells_raw={}, note="", hardware=text,
        max_model_len="", issues=(), source="",
    )  # fmt: skip


def family_keys(fam: ModelFamily) -> set[str]:
    return {_norm(k) for k in (*_model_keys(fam), *fam.table_names)}


def family_rows(fam: ModelFamily, table: upstream.ModelTable, matrix: SupportMatrix) -> list[upstream.ModelRow]:
    """The rows naming the family, or linking its tutorial (the `Qwen3-Moe` row links `Qwen3-235B-A22B.md`),
    in table order."""
    by_name, by_link = _row_index(matrix, table)
    hits = {i for key in family_keys(fam) for i in by_name.get(key, ())} | set(by_link.get(fam.id, ()))
    return [table.rows[i] for i in sorted(hits)]


def _row_index(matrix: SupportMatrix, table: upstream.ModelTable) -> tuple[dict[str, list[int]], dict[str, list[int]]]:
    """(normalised row name -> row positions, family id -> positions of the rows linking its tutorial), built
    once per table: `nearest_listing` asks every release's table about one family."""
    key = (id(matrix), table.tag)
    cached = _ROW_INDEX.get(key)
    if cached is None or cached[0] is not matrix or cached[1] is not table:
        by_name: dict[str, list[int]] = {}
        by_link: dict[str, list[int]] = {}
        for i, row in enumerate(table.rows):
            by_name.setdefault(_norm(row.name), []).append(i)
            for fam_id in {f for path in row.links for f in page_families(matrix, path, table.tag)}:
                by_link.setdefault(fam_id, []).append(i)
        cached = (matrix, table, by_name, by_link)
        _ROW_INDEX[key] = cached
    return cached[2], cached[3]


_ROW_INDEX: dict[
    tuple[int, str],
    tuple[SupportMatrix, upstream.ModelTable, dict[str, list[int]], dict[str, list[int]]],
] = {}


def _support(row: upstream.ModelRow, hardware: Sequence[str], matrix: SupportMatrix) -> ModelSupport:
    return support_row(row, hardware, matrix.model_table_columns)


def support_row(row: upstream.ModelRow, hardware: Sequence[str], columns: Mapping[str, str]) -> ModelSupport:
    """A table row as a matrix support row: cells mapped to feature ids through `model_table_columns`."""
    features: dict[str, Cell] = {}
    bf16: Cell | None = None
    w8a8: Cell | None = None
    for header, cell in row.cells.items():
        target = columns.get(header)
        if target is None or cell not in ("yes", "no", "untested", "experimental"):
            continue
        if target == "bf16":
            bf16 = cell  # type: ignore[assignment]
        elif target == "w8a8":
            w8a8 = cell  # type: ignore[assignment]
        else:
            features[target] = cell  # type: ignore[assignment]
    status = row.status if row.status in ("supported", "experimental", "untested", "unsupported") else "untested"
    stated = {hardware_status(row, h) for h in hardware}
    if stated == {"experimental"}:
        status = "experimental"
    return ModelSupport(
        hardware=list(hardware),  # type: ignore[arg-type]
        status=status,  # type: ignore[arg-type]
        bf16=bf16,
        w8a8=w8a8,
        features=features,
        max_len=_max_len(row.max_model_len),
        note=row.note,
        source=row.source,
    )


def _max_len(text: str) -> int | None:
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmM]?)\s*", text or "")
    if not m:
        return None
    scale = {"": 1, "k": 1024, "m": 1024 * 1024}[m.group(2).lower()]
    return int(float(m.group(1)) * scale)


def judge(matrix: SupportMatrix, fam: ModelFamily, release: Release, hardware: str) -> TableJudgement:
    """The status of `fam` on (`release`, `hardware`) in the release's own model table, or the nearest earlier."""
    found = upstream.nearest_model_table(release.version) if release.backend == "npu" else None
    if found is None:
        return TableJudgement("absent", None, "", False, None, None)
    tag, table = found
    own = tag == release.version
    for row in family_rows(fam, table, matrix):
        covered = row_hardware(row, release, matrix)
        if hardware in covered:
            status = hardware_status(row, hardware)
            return TableJudgement(status, tag, table.path, own, row, _support(row, (hardware,), matrix))
    return TableJudgement("absent", tag, table.path, own, None, None)


def _model_status(matrix: SupportMatrix, fam: ModelFamily, rel: Release, hardware: str) -> tuple[str, list[Reason]]:
    """Status of a family on (release, hardware) in that release's own model table (or the nearest earlier one):
    supported / experimental / untested / unsupported / absent."""
    src = fam.source
    if fam.first_release and rel.key < parse_version(fam.first_release):
        return "unsupported", [Reason(f"{fam.name} is supported from {fam.first_release}", src, "error")]
    j = judge(matrix, fam, rel, hardware)
    which = (
        f"{j.table_tag}'s table"
        if j.own_table
        else f"{j.table_tag}'s table (the nearest earlier; {rel.version} has none)"
    )
    found = evidence(matrix, fam, rel, hardware, notes=j.row is None)
    if j.row is None:
        return _unlisted(matrix, fam, rel, hardware, which, j, found)
    level: Level = {"supported": "ok", "unsupported": "error"}.get(j.status, "warning")  # type: ignore[assignment]
    note = f" ({j.row.note})" if j.row.note else ""
    # a table's "unsupported" is a document's claim (it warns) unless its row cites an issue or PR showing it fail
    clause: Clause | None = "known-failure" if level == "error" and _CITES_ISSUE.search(j.row.note or "") else None
    reasons = [Reason(f"{fam.name} is {j.status} on {hardware} in {which}{note}", j.row.source, level, clause=clause)]
    other = disagreement(j.status, found)
    if other is not None:
        text = f"sources disagree: the table marks {fam.name} unsupported on {hardware}, while {other.text}"
        reasons.append(Reason(text, other.source, "warning"))
    return j.status, reasons + _shown(found, skip=other)


def _unlisted(
    matrix: SupportMatrix,
    fam: ModelFamily,
    rel: Release,
    hardware: str,
    which: str,
    j: TableJudgement,
    found: list[Evidence],
) -> tuple[str, list[Reason]]:
    """A family the table does not list: the tag's tutorials, then the release notes, decide; absence of evidence
    is a warning ("not listed at vX; nearest release that lists it: ..."), never a refusal."""
    missing = f"{fam.name} is not listed for {hardware} in {which}"
    tutorial = next((e for e in found if e.kind == "tutorial"), None)
    if tutorial is not None:
        text = f"{missing}, but {tutorial.text} on {hardware}"
        return "documented", [Reason(text, tutorial.source, "ok"), *_shown(found, skip=tutorial)]
    note = next((e for e in found if e.kind == "release-notes" and e.announces), None)
    note = note or next((e for e in found if not e.caveat), None)
    if note is not None:
        text = f"{missing}; {note.text} (support not verified by a table or tutorial)"
        return "noted", [Reason(text, note.source, "warning"), *_shown(found, skip=note)]
    nearest = nearest_listing(matrix, fam, rel, hardware)
    hint = f"; nearest release that lists it: {nearest}" if nearest else "; no release's table lists it"
    text = f"{missing}{hint} (support not verified)"
    return "absent", [Reason(text, j.table_ref, "warning"), *_shown(found)]


# `matrix --explain` lists this many further evidence items after the deciding one.
_SHOWN_EVIDENCE = 4


def _shown(found: list[Evidence], skip: Evidence | None = None) -> list[Reason]:
    """The other evidence, as `ok` facts (a caveat note as a warning): what `--explain` shows beside the verdict."""
    rest = [e for e in found if e is not skip][:_SHOWN_EVIDENCE]
    return [Reason(f"evidence: {e.text}", e.source, "warning" if e.caveat else "ok") for e in rest]


def nearest_listing(matrix: SupportMatrix, fam: ModelFamily, rel: Release, hardware: str) -> str | None:
    """The release closest to `rel` whose model table lists `fam` as running on `hardware` (newer on a tie)."""
    rows = sorted((r for r in matrix.releases if r.backend == "npu"), key=lambda r: r.key)
    listing = [
        (i, r.version)
        for i, r in enumerate(rows)
        if judge(matrix, fam, r, hardware).status in ("supported", "experimental")
    ]
    if not listing:
        return None
    here = next((i for i, r in enumerate(rows) if r.version == rel.version), len(rows))
    return min(listing, key=lambda item: (abs(item[0] - here), -item[0]))[1]
