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

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, cast

import typer

from ascendctl.cli import completers

if TYPE_CHECKING:
    from ascendctl.facts.matrix import Backend
    from ascendctl.facts.matrix.host_match import HostReport
    from ascendctl.facts.matrix.schema import ModelFamily, Release, SupportMatrix
    from ascendctl_engine.host.facts import HostFacts

VIEWS = ("releases", "models", "hardware", "quantizations")
# The filters each view reads; another one given to a view is refused, never silently ignored.
VIEW_FILTERS: dict[str, tuple[str, ...]] = {
    "releases": ("--backend", "--release", "--hardware", "--model", "--quant", "--feature"),
    "models": ("--release", "--hardware", "--model", "--quant", "--feature"),
    "hardware": ("--release", "--hardware"),
    "quantizations": ("--release", "--hardware", "--quant"),
}


def complete_view(incomplete: str) -> list[str]:
    """Shell completion of VIEW (the other completers: `ascendctl.cli.completers`)."""
    return [view for view in VIEWS if view.startswith(incomplete)]


def matrix(
    view: Annotated[
        str,
        typer.Argument(
            help="What to show: releases, models, hardware or quantizations.",
            show_default=True,
            autocompletion=complete_view,
        ),
    ] = "releases",
    release: Annotated[
        str | None,
        typer.Option(
            "--release",
            "-r",
            help="A pin (v0.13.0, latest-stable), a specifier (>=0.13) or a prefix (0.13).",
            autocompletion=completers.releases,
        ),
    ] = None,
    model: Annotated[str | None, typer.Option("--model", "-m", help="Model family, name or HF architecture.")] = None,
    hardware: Annotated[
        str | None,
        typer.Option(
            "--hardware", help="Hardware family: a2, a3, 300i-duo, 950.", autocompletion=completers.hardware_ids
        ),
    ] = None,
    quant: Annotated[str | None, typer.Option("--quant", help="Quantization id (w8a8, w8a8_dynamic, ...).")] = None,
    feature: Annotated[
        str | None,
        typer.Option(
            "--feature",
            help="Feature id (eplb, lora, full-graph, ...); with --explain also an engine.ascend switch (flashcomm1).",
        ),
    ] = None,
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
        typer.Option(
            "--facts",
            metavar="FILE",
            help="With --here: a host-facts JSON file (e.g. from `ascendctl check --json`).",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """Show the support matrix: releases and their pins, models, hardware, quantizations."""
    from ascendctl.facts import matrix as mx

    _check_options(view, backend, facts, here)
    be = cast("Backend | None", backend)
    m = mx.load_matrix()

    if explain_model is not None:
        _explain(
            m, explain_model, hardware=hardware, release=release, quant=quant, backend=be, feature=feature,
            task=task, as_json=as_json,
        )  # fmt: skip
        return

    if here:
        _here(
            m, facts, release=release, model=model, hardware=hardware, quant=quant, feature=feature,
            backend=backend, as_json=as_json,
        )  # fmt: skip
        return

    _show_view(
        m, view, be, release=release, model=model, hardware=hardware, quant=quant, feature=feature, as_json=as_json
    )


def _check_options(view: str, backend: str | None, facts: Path | None, here: bool) -> None:
    """Refuse an unknown view or backend, and --facts without --here."""
    from ascendctl.core.errors import UserInputError

    if view not in VIEWS:
        import difflib

        near = difflib.get_close_matches(view, VIEWS, n=1, cutoff=0.5)
        hint = f"; did you mean {near[0]}?" if near else ""
        raise UserInputError(f"unknown view {view!r}{hint} (views: {', '.join(VIEWS)})")
    if backend is not None and backend not in ("npu", "cpu", "cuda"):
        raise UserInputError(f"--backend must be npu, cpu or cuda, not {backend!r}")
    if facts is not None and not here:
        raise UserInputError("--facts goes with --here")


def _explain(
    m: "SupportMatrix",
    model: str,
    *,
    hardware: str | None,
    release: str | None,
    quant: str | None,
    backend: "Backend | None",
    feature: str | None,
    task: str | None,
    as_json: bool,
) -> None:
    """`--explain MODEL`: whether MODEL runs and why; exit 1 when it does not."""
    from ascendctl.cli import matrix_tables as out
    from ascendctl.facts import matrix as mx
    from ascendctl.facts.matrix.explainer import explain

    verdict = explain(
        m,
        model=model,
        hardware=hardware,
        release=release or mx.LATEST_STABLE,
        quant=quant or "none",
        backend=backend or "npu",
        features=[feature] if feature else [],
        task=task,
    )
    out.emit_verdict(verdict, as_json)
    if not verdict.supported:
        raise typer.Exit(1)


def _here(
    m: "SupportMatrix",
    facts: Path | None,
    *,
    release: str | None,
    model: str | None,
    hardware: str | None,
    quant: str | None,
    feature: str | None,
    backend: str | None,
    as_json: bool,
) -> None:
    """`--here`: the host's release rows classified (from its probes or a facts file), narrowed by the filters."""
    from ascendctl.cli import matrix_tables as out
    from ascendctl.cli.facts import read_facts_file
    from ascendctl.core.errors import UserInputError
    from ascendctl.facts.matrix import filters
    from ascendctl.facts.matrix.host_match import classify_host

    report = classify_host(m, read_facts_file(facts) if facts is not None else _probe_here())
    if backend is not None and backend != report.backend:
        raise UserInputError(
            f"--here lists this host's {report.backend} release rows; --backend {backend} names another backend "
            f"(drop --here to list {backend} rows)"
        )
    if hardware is not None and hardware != report.family:
        raise UserInputError(
            f"--here judges this host's hardware ({report.family or 'no Ascend NPU detected'}); --hardware "
            f"{hardware} names another (drop --here to list the rows for {hardware})"
        )
    if release or model or quant or feature:
        keep = {
            r.version
            for r in filters.filter_releases(
                m,
                backend=cast("Backend", report.backend),
                release=release,
                model=model,
                quant=quant,
                feature=feature,
            )
        }
        report = _narrow(report, keep)
    out.emit_here(report, as_json)


def _show_view(
    m: "SupportMatrix",
    view: str,
    be: "Backend | None",
    *,
    release: str | None,
    model: str | None,
    hardware: str | None,
    quant: str | None,
    feature: str | None,
    as_json: bool,
) -> None:
    """One view's rows, filtered, as a table or JSON."""
    from ascendctl.cli import matrix_tables as out
    from ascendctl.core.errors import UserInputError
    from ascendctl.facts import matrix as mx
    from ascendctl.facts.matrix import filters

    given = {"--backend": be, "--release": release, "--hardware": hardware, "--model": model, "--quant": quant,
             "--feature": feature}  # fmt: skip
    unread = [name for name, value in given.items() if value is not None and name not in VIEW_FILTERS[view]]
    if unread:
        reads = ", ".join(VIEW_FILTERS[view])
        raise UserInputError(f"{unread[0]} does not filter the {view} view (it reads {reads}); drop it")

    if view == "releases":
        rows = filters.filter_releases(
            m, backend=be, release=release, hardware=hardware, model=model, quant=quant, feature=feature
        )
        out.emit(as_json, [mx.release_json(r) for r in rows], lambda: out.releases_table(rows))
    elif view == "models":
        fams = filters.filter_models(m, model=model, hardware=hardware, feature=feature, quant=quant, release=release)
        row = _table_release(m, release)
        out.emit(
            as_json, [_with_status(m, _with_verified(mx.model_json(f), f.id, row), f, row) for f in fams],
            lambda: out.models_table(m, fams, hardware, row),
        )  # fmt: skip
    elif view == "hardware":
        hws = filters.filter_hardware(m, hardware=hardware, release=release)
        out.emit(as_json, [mx.hardware_json(h) for h in hws], lambda: out.hardware_table(hws))
    else:
        from ascendctl.facts.matrix.launch import quantization_json

        qts = filters.filter_quantizations(m, quant=quant, hardware=hardware, release=release)
        out.emit(as_json, [quantization_json(m, q) for q in qts], lambda: out.quant_tables(m, qts))


def _table_release(m: "SupportMatrix", release: str | None) -> "Release | None":
    """The npu release whose model table `matrix models -r R` shows: the pin, else the newest release R matches."""
    from ascendctl.facts.matrix import filters

    if release is None:
        return None
    rows = filters.filter_releases(m, backend="npu", release=release)
    return max(rows, key=lambda r: r.key) if rows else None


def _with_status(
    m: "SupportMatrix", row: dict[str, object], family: "ModelFamily", release: "Release | None"
) -> dict[str, object]:
    """With a release named: `status_at` — the release, its table and the family's status per hardware family."""
    from ascendctl.facts.matrix.model_tables import judge
    from ascendctl_engine.vocab import HARDWARE_FAMILIES

    if release is None:
        return row
    judged = {h: judge(m, family, release, h) for h in HARDWARE_FAMILIES}
    tables = {j.table_ref for j in judged.values()}
    row["status_at"] = {
        "release": release.version,
        "table": tables.pop() if len(tables) == 1 else None,
        "hardware": {h: j.status for h, j in judged.items()},
    }
    return row


def _with_verified(row: dict[str, object], family: str, release: "Release | None") -> dict[str, object]:
    """A model row with `verified`: per hardware family the newest upstream CI launch (at the release, when named)."""
    from ascendctl.facts.launches import family_marks

    marks = family_marks(family, release.version if release is not None else None)
    row["verified"] = [
        {"hardware": h, "tag": m.tag, "source": m.source, "layout": m.layout} for h, m in sorted(marks.items())
    ]
    return row


# ---------------------------------------------------------------------------------------------------------
# Input: host facts


def _probe_here() -> "HostFacts":
    """Host facts from the bundled host probes (the same ones `ascendctl check` uses), engine Python included."""
    import os
    from dataclasses import replace

    from ascendctl_engine import paths
    from ascendctl_engine.host.gather import gather_host_facts
    from ascendctl_engine.host.probe import LocalHostProbe
    from ascendctl_engine.host.pyenv import choose_engine_python, probe_python_env

    env = dict(os.environ)
    probe = LocalHostProbe("/", env)
    facts = gather_host_facts(probe)
    choice = choose_engine_python(None, env, engines_dir=paths.engines_dir(paths.data_dir(env)), backend=facts.backend)
    facts = replace(facts, python=probe_python_env(probe, choice))
    return facts


def _narrow(report: "HostReport", keep: set[str]) -> "HostReport":
    from dataclasses import replace

    return replace(report, rows=[r for r in report.rows if r.release.version in keep])
