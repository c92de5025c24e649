"""Plots of a bench comparison: TTFT and TPOT per workload point for each run (bars: p50, ticks: p99), as a PNG
and as one self-contained HTML page (the PNG inlined as a data URI, the comparison tables, no external
reference of any kind), drawn with matplotlib (the optional `plot` extra: `pip install 'ascendctl[plot]'`).

Importing this module imports matplotlib: the command imports it only for `--compare -o DIR` and turns a
missing matplotlib into one line with the install hint.
"""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only: never a display

import matplotlib.pyplot as plt

from ascendctl.outputs.bench_report import TextTable, compare_tables, differences_table, metric_rows

PANELS = (("TTFT", "ttft_ms"), ("TPOT", "tpot_ms"))
DPI = 100
SIZE_IN = (10.0, 4.0)


def plot_png(comparison: Mapping[str, Any]) -> bytes:
    """The PNG bytes of the TTFT / TPOT panels."""
    names = [run["name"] for run in comparison["runs"]]
    labels = [point["label"] for point in comparison["points"]]
    fig, axes = plt.subplots(1, len(PANELS), figsize=SIZE_IN, dpi=DPI)
    try:
        width = 0.8 / max(1, len(names))
        for ax, (title, key) in zip(axes, PANELS, strict=True):
            p50 = metric_rows(comparison, f"{key}.p50")
            p99 = metric_rows(comparison, f"{key}.p99")
            for i, name in enumerate(names):
                xs = [j + (i - (len(names) - 1) / 2) * width for j in range(len(labels))]
                heights = [_zero(row[i]) for row in p50]
                ax.bar(xs, heights, width, label=name)
                ax.scatter(xs, [_zero(row[i]) for row in p99], marker="_", s=200, color="black", zorder=3)
            ax.set_title(f"{title} (bars p50, ticks p99)")
            ax.set_ylabel("ms")
            ax.set_xticks(range(len(labels)))
            ax.set_xticklabels(labels, rotation=15 if len(labels) > 3 else 0)
            ax.grid(axis="y", alpha=0.3)
        axes[0].legend(fontsize="small")
        fig.tight_layout()
        out = io.BytesIO()
        fig.savefig(out, format="png")
        return out.getvalue()
    finally:
        plt.close(fig)


def _zero(value: float | None) -> float:
    return 0.0 if value is None else value


def _html_table(table: TextTable) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in table.columns)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in table.rows)
    notes = "".join(f"<p>{html.escape(n)}</p>" for n in table.notes)
    return (
        f"<h2>{html.escape(table.title)}</h2><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{notes}"
    )


def html_page(comparison: Mapping[str, Any], png: bytes, title: str = "ascendctl bench --compare") -> str:
    """One self-contained page: the plot inlined as a data URI, then the tables; no script, no link."""
    runs = "".join(
        f"<li>{html.escape(str(r['name']))}: {html.escape(str(r.get('profile')))} "
        f"(release {html.escape(str(r.get('release')))}, {html.escape(str(r.get('started_at')))})</li>"
        for r in comparison["runs"]
    )
    tables: Sequence[TextTable] = [*compare_tables(comparison), differences_table(comparison)]
    data = base64.b64encode(png).decode("ascii")
    style = (
        "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:.2em .6em;text-align:right}td:first-child{text-align:left}"
    )
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title><style>{style}</style>'
        f"</head><body><h1>{html.escape(title)}</h1><ul>{runs}</ul>"
        f'<img alt="TTFT and TPOT per point" src="data:image/png;base64,{data}">'
        + "".join(_html_table(t) for t in tables)
        + "</body></html>\n"
    )


__all__ = ["html_page", "plot_png"]
