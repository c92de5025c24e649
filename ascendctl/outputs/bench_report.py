"""Bench reports as tables and comparisons, computed from bench documents (the JSON of `ascendctl bench`, schema
1): per-point tables of one run, the side-by-side comparison of several runs with ratios against the first, and
the settings that differ between them (profile, overrides, release pin, each command's argv and env).

Documents in, plain data out; the command renders it (rich on the console, HTML in `bench_plot`). The document's
schema number and reading one back (`read_bench_document`) live here too, so `bench --compare` loads neither the
planner nor the load client.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ascendctl.core.errors import OperationFailed, UserInputError
from ascendctl_engine.argv_items import parse_args
from ascendctl_engine.flags import reads_as_flag
from ascendctl_engine.jsonio import JsonReadError, read_json_file
from ascendctl_engine.records import record

BENCH_SCHEMA = 1  # the bench document (`ascendctl bench --json`); docs/guides/bench-and-tune.md lists its shape
DOCUMENT_KIND = "ascendctl-bench"
COMPARE_SCHEMA = 1
LATENCY_ROWS = (("TTFT", "ttft_ms"), ("TPOT", "tpot_ms"), ("ITL", "itl_ms"), ("E2E latency", "e2el_ms"))
STATS = ("mean", "p50", "p90", "p99")
# The comparison's rows: (label, metric key, stat or None for a plain number, lower is better).
COMPARE_ROWS: tuple[tuple[str, str, str | None, bool], ...] = (
    ("TTFT p50 ms", "ttft_ms", "p50", True),
    ("TTFT p99 ms", "ttft_ms", "p99", True),
    ("TPOT p50 ms", "tpot_ms", "p50", True),
    ("TPOT p99 ms", "tpot_ms", "p99", True),
    ("ITL p50 ms", "itl_ms", "p50", True),
    ("E2E p99 ms", "e2el_ms", "p99", True),
    ("output tok/s", "output_tok_s", None, False),
    ("total tok/s", "total_tok_s", None, False),
    ("req/s", "req_s", None, False),
    ("goodput req/s", "goodput_req_s", None, False),
    ("failed", "failed", None, True),
)
NONE = "—"


@record
class TextTable:
    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    notes: tuple[str, ...] = ()


def fmt(value: object, digits: int = 1) -> str:
    if value is None or isinstance(value, bool):
        return NONE
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return str(value)


def metric_value(metrics: Mapping[str, Any], key: str, stat: str | None) -> float | None:
    value = metrics.get(key)
    if stat is not None:
        value = value.get(stat) if isinstance(value, Mapping) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def point_table(point: Mapping[str, Any]) -> TextTable:
    """One measured point: latencies (mean, p50, p90, p99) and the throughput line, then failures."""
    metrics: Mapping[str, Any] = point["metrics"]
    rows = tuple((label, *(fmt(metric_value(metrics, key, stat)) for stat in STATS)) for label, key in LATENCY_ROWS)
    summary = (
        f"output {fmt(metrics.get('output_tok_s'))} tok/s · total {fmt(metrics.get('total_tok_s'))} tok/s · "
        f"{fmt(metrics.get('req_s'), 2)} req/s · goodput {fmt(metrics.get('goodput_req_s'), 2)} req/s · "
        f"{fmt(metrics.get('completed'))} completed, {fmt(metrics.get('failed'))} failed in "
        f"{fmt(metrics.get('duration_s'))} s"
    )
    failures = tuple(f"failed ×{e['count']}: {e['message']}" for e in point.get("errors", ()))
    p = point["point"]
    rate = f", {p['request_rate']:g} req/s" if p.get("request_rate") is not None else ""
    title = (
        f"{point['label']}  ({p['input_len']} in / {p['output_len']} out tokens, {p['concurrency']} concurrent, "
        f"{p['requests']} requests{rate})"
    )
    return TextTable(title, ("ms", *STATS), rows, (summary, *failures))


def run_names(names: Sequence[str]) -> list[str]:
    """Unique column names for the runs (file stems; a repeated one gets `#2`, `#3`)."""
    seen: dict[str, int] = {}
    out: list[str] = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name}#{seen[name]}")
    return out


def _points_by_label(doc: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {str(p["label"]): p for p in doc.get("points", ())}


def ratio(value: float | None, base: float | None) -> float | None:
    if value is None or base is None or base == 0:
        return None
    return value / base


def compare(docs: Sequence[Mapping[str, Any]], names: Sequence[str]) -> dict[str, Any]:
    """The comparison document (`--compare --json`): per point label (in the order first seen), every row's value
    per run and its ratio to the first run; the runs' differing settings."""
    by_run = [_points_by_label(doc) for doc in docs]
    labels: list[str] = []
    for points in by_run:
        labels += [label for label in points if label not in labels]
    points_out = []
    for label in labels:
        rows = []
        for row_label, key, stat, lower_better in COMPARE_ROWS:
            values = [
                metric_value(points[label]["metrics"], key, stat) if label in points else None for points in by_run
            ]
            rows.append(
                {
                    "metric": row_label,
                    "key": key if stat is None else f"{key}.{stat}",
                    "lower_is_better": lower_better,
                    "values": values,
                    "ratios": [ratio(v, values[0]) for v in values],
                }
            )
        points_out.append({"label": label, "rows": rows})
    return {
        "schema": COMPARE_SCHEMA,
        "kind": "ascendctl-bench-compare",
        "runs": [
            {
                "name": name,
                "started_at": doc.get("started_at"),
                "profile": doc.get("profile", {}).get("path"),
                "release": doc.get("plan", {}).get("release", {}).get("version"),
                "workload": doc.get("workload", {}).get("name"),
            }
            for name, doc in zip(names, docs, strict=True)
        ],
        "points": points_out,
        "differences": settings_diff(docs),
    }


def metric_rows(comparison: Mapping[str, Any], key: str) -> list[list[float | None]]:
    """One comparison row's values (`ttft_ms.p50`): a list per point, a value per run."""
    out = []
    for point in comparison["points"]:
        row = next((r for r in point["rows"] if r["key"] == key), None)
        out.append(list(row["values"]) if row is not None else [None] * len(comparison["runs"]))
    return out


def compare_tables(comparison: Mapping[str, Any]) -> list[TextTable]:
    names = tuple(run["name"] for run in comparison["runs"])
    tables = []
    for point in comparison["points"]:
        rows = []
        for row in point["rows"]:
            digits = 0 if row["key"] == "failed" else 2
            cells = [fmt(row["values"][0], digits)]
            for value, r in zip(row["values"][1:], row["ratios"][1:], strict=True):
                cells.append(fmt(value, digits) if r is None else f"{fmt(value, digits)} ({r:.2f}×)")
            rows.append((row["metric"], *cells))
        tables.append(TextTable(point["label"], ("", *names), tuple(rows)))
    return tables


def differences_table(comparison: Mapping[str, Any]) -> TextTable:
    names = tuple(run["name"] for run in comparison["runs"])
    rows = tuple(
        (d["setting"], *(NONE if v is None else str(v) for v in d["values"])) for d in comparison["differences"]
    )
    notes = () if rows else ("the runs' profiles, overrides, releases, argv and env are the same",)
    return TextTable("settings that differ", ("setting", *names), rows, notes)


def _argv_items(prefix: str, argv: Sequence[str]) -> dict[str, str]:
    """`vllm serve MODEL --a 1 --b` → {prefix.args: "serve MODEL", prefix.--a: "1", prefix.--b: "(set)"}."""
    lead = 1
    while lead < len(argv) and not reads_as_flag(argv[lead]):
        lead += 1
    out = {f"{prefix}.args": " ".join(argv[1:lead])}
    try:
        items = parse_args(argv[lead:])
    except ValueError:
        return {f"{prefix}.argv": " ".join(argv)}
    for item in items:
        name = item.flag if item.key is None else f"{item.flag}.{item.key}"
        out[f"{prefix}.{name}"] = " ".join(item.values) if item.values else "(set)"
    return out


def settings_of(doc: Mapping[str, Any]) -> dict[str, str]:
    """A bench document's settings as flat `key → value` text: what `settings_diff` compares."""
    out: dict[str, str] = {}
    profile = doc.get("profile", {})
    out["profile.path"] = str(profile.get("path"))
    out["profile.sha256"] = str(profile.get("sha256", ""))[:12]
    out["profile.overrides"] = " ".join(profile.get("overrides", ()))
    plan = doc.get("plan", {})
    for key, value in sorted(plan.get("release", {}).items()):
        out[f"release.{key}"] = str(value)
    for command in plan.get("commands", ()):
        prefix = f"{command.get('instance')}.node{command.get('node')}"
        out.update(_argv_items(f"{prefix}.argv", command.get("argv", ())))
        for key, value in sorted(command.get("env", {}).items()):
            out[f"{prefix}.env.{key}"] = str(value)
    out["workload"] = str(doc.get("workload", {}).get("name"))
    out["goodput"] = " ".join(doc.get("benchmark", {}).get("goodput", ()))
    return out


def settings_diff(docs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The settings whose value is not the same in every run (a setting a run lacks is `None` there)."""
    flat = [settings_of(doc) for doc in docs]
    keys: list[str] = []
    for settings in flat:
        keys += [k for k in settings if k not in keys]
    diffs = []
    for key in keys:
        values = [settings.get(key) for settings in flat]
        if len(set(values)) > 1:
            diffs.append({"setting": key, "values": values})
    return diffs


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def read_bench_document(path: Path) -> dict[str, Any]:
    """A bench document written by `ascendctl bench --json` / `-o` (exit 2 when it is not one)."""
    try:
        data = read_json_file(path)
    except JsonReadError as exc:
        raise UserInputError(f"{exc.path}: {exc.reason}") from None
    if not isinstance(data, dict) or data.get("kind") != DOCUMENT_KIND:
        raise UserInputError(f"{path}: not an `ascendctl bench` document")
    if data.get("schema") != BENCH_SCHEMA:
        raise UserInputError(
            f"{path}: bench document schema {data.get('schema')!r}; this ascendctl reads {BENCH_SCHEMA}"
        )
    points = data.get("points")
    if not isinstance(points, list) or not all(isinstance(p, dict) and "label" in p and "metrics" in p for p in points):
        raise UserInputError(f"{path}: the bench document's `points` are not readable")
    return data


def write_file_atomic(path: Path, data: bytes) -> None:
    """Write `data` to `path` through a temporary file beside it (never half-written; the umask applies)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tmp.open("xb") as out:
            out.write(data)
        tmp.replace(path)
    except OSError as exc:
        raise OperationFailed(f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        tmp.unlink(missing_ok=True)


def document_bytes(document: dict[str, Any]) -> bytes:
    return (json.dumps(document, indent=2) + "\n").encode("utf-8")


__all__ = [
    "BENCH_SCHEMA",
    "COMPARE_ROWS",
    "COMPARE_SCHEMA",
    "DOCUMENT_KIND",
    "TextTable",
    "compare",
    "compare_tables",
    "differences_table",
    "document_bytes",
    "fmt",
    "metric_rows",
    "metric_value",
    "now_iso",
    "point_table",
    "ratio",
    "read_bench_document",
    "run_names",
    "settings_diff",
    "settings_of",
    "write_file_atomic",
]
