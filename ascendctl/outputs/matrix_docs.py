"""Generate what is derived from the support matrix: docs/compatibility.md and the fast-load JSON mirrors (of the
matrix, and of the published shapes' index).

    python -m ascendctl.outputs.matrix_docs            # print the page
    python -m ascendctl.outputs.matrix_docs --write    # rewrite docs/compatibility.md,
    ascendctl/facts/data/matrix.json and ascendctl/facts/data/model_configs/index.json
    python -m ascendctl.outputs.matrix_docs --check    # exit 1 when a checked-in file is stale

`render_compatibility_md(matrix)` is pure; only `main` touches files. Tests fail when a checked-in file
differs from what the data renders.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ascendctl.facts import published_shapes
from ascendctl.facts.matrix import (
    MATRIX_JSON,
    MATRIX_YAML,
    latest_stable,
    load_matrix,
    matrix_from_texts,
    matrix_json_text,
    model_support,
    releases,
)
from ascendctl.facts.matrix.launch import launch_eras
from ascendctl.facts.matrix.schema import Release, SupportMatrix
from ascendctl_engine.package_data import package_dir
from ascendctl_engine.vocab import HARDWARE_FAMILIES

DOC_PATH = Path("docs") / "compatibility.md"
REGENERATE = "python -m ascendctl.outputs.matrix_docs --write"
_GLYPH = {"supported": "✅", "experimental": "🔵", "untested": "🟡", "unsupported": "❌"}


def _cell(text: str | None) -> str:
    return (text or "—").replace("|", "\\|")


def _fam_label(key: str) -> str:
    return key.replace("-openeuler", "-oE")


def _release_row(r: Release) -> str:
    marks = {d.field for d in r.disagreements}

    def v(field: str, value: str | None) -> str:
        return _cell(value) + ("¹" if field in marks and value else "")

    images = ", ".join(f"`{_fam_label(k)}`" for k in r.images) or "—"
    return (
        f"| {r.version} | {r.status} | {v('date', r.date.isoformat() if r.date else None)} | {v('vllm', r.vllm)} "
        f"| {v('python', r.python)} | {v('cann', r.cann)} | {v('torch', r.torch)} | {v('torch_npu', r.torch_npu)} "
        f"| {v('triton_ascend', r.triton_ascend)} | {_cell(r.mooncake_image or r.mooncake)} "
        f"| {_cell(r.mindie_turbo)} | {images} |"
    )


def render_compatibility_md(matrix: SupportMatrix) -> str:
    """The whole docs/compatibility.md page for a matrix."""
    npu = releases(matrix, "npu")
    stable = latest_stable(matrix, "npu")
    out: list[str] = [
        "<!-- Generated from ascendctl/facts/data/matrix.yaml by `" + REGENERATE + "`. Do not edit by hand. -->",
        "",
        "# Compatibility matrix",
        "",
        "What each engine release pins and where it runs. The same data answers `ascendctl matrix` "
        "(`--json` for machines) and `ascendctl matrix --explain MODEL --hardware H --release R --quant Q`.",
        f"`release: latest-stable` means {stable.version} for npu.",
        "",
        "## vllm-ascend releases",
        "",
        "Images are `quay.io/ascend/vllm-ascend:<release><suffix>`; suffixes per family are in the hardware "
        "table (`-oE` = the `-openeuler` variant). ¹ = another upstream source gives a different value "
        "(see the notes below the table).",
        "",
        "| vllm-ascend | status | date | vLLM | Python | CANN | torch | torch-npu | triton-ascend | Mooncake "
        "| MindIE Turbo | images |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    out += [_release_row(r) for r in npu]
    out += _disagreement_lines(npu)
    out += _other_engine_lines(matrix)
    out += _hardware_lines(matrix)
    out += _quantization_lines(matrix)
    out += _launch_era_lines()
    out += _model_lines(matrix)
    out += [
        "",
        "Sources: every row of `ascendctl/facts/data/matrix.yaml` names its upstream source "
        "(`TAG:path` in github.com/vllm-project/vllm-ascend, or an issue); `ascendctl matrix … --json` includes them.",
        "",
    ]
    return "\n".join(out)


def _disagreement_lines(npu: list[Release]) -> list[str]:
    """The notes below the release table: every value another upstream source gives differently."""
    out = ["", "Where sources disagree:", ""]
    for r in npu:
        for d in r.disagreements:
            note = f" — {d.note}" if d.note else ""
            out.append(f"- {r.version} `{d.field}`: {_cell(d.value)} per {d.source}{note}")
    return out


def _other_engine_lines(matrix: SupportMatrix) -> list[str]:
    """The "Other engines" section: the non-npu release rows."""
    out = [
        "",
        "## Other engines",
        "",
        "| backend | package | version | vLLM | Python | torch | source |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in releases(matrix):
        if r.backend != "npu":
            out.append(
                f"| {r.backend} | {r.package} | {r.version} | {r.vllm} | {_cell(r.python)} | {r.torch} "
                f"| {_cell(r.source)} |"
            )
    return out


def _hardware_lines(matrix: SupportMatrix) -> list[str]:
    """The "Hardware" section: one row per family."""
    out = [
        "",
        "## Hardware",
        "",
        "| id | family | status | npu-smi names | SOC_VERSION (default) | chips/card | HBM/chip (GB) "
        "| devices/server | first release | image suffix | limits |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for h in matrix.hardware:
        limits = [f"dtype {'/'.join(h.limits.dtypes)}", *(x for x in h.limits.describe() if not x.startswith("dtype"))]
        out.append(
            f"| {h.id} | {h.name} | {h.status} | {', '.join(h.npu_smi_names) or '—'} | {h.soc_version_default} "
            f"| {h.chips_per_card or '—'} | {'/'.join(map(str, h.hbm_gb_per_chip))} | {h.devices_per_server or '—'} "
            f"| {h.first_release} | `{h.image_suffix or '(none)'}` | {'; '.join(limits)} |"
        )
    return out


def _quantization_lines(matrix: SupportMatrix) -> list[str]:
    """The "Quantization" section: where each type runs."""
    out = [
        "",
        "## Quantization",
        "",
        "| id | method | ModelSlim type | runs on (hardware: vllm-ascend versions) |",
        "|---|---|---|---|",
    ]
    for q in matrix.quantizations:
        where = "; ".join(f"{', '.join(s.hardware)}: `{s.releases or 'all'}`" for s in q.support)
        if q.engines:
            where += f"; engines: {', '.join(q.engines)}"
        out.append(f"| {q.id} | {q.method} | {q.modelslim_type or '—'} | {where} |")
    return out


def _launch_era_lines() -> list[str]:
    """How ModelSlim weights are switched on, per era of the adapters (npu eras only)."""
    out = [
        "",
        "How ModelSlim (`ascend`) weights are switched on, per era of the adapters (compressed-tensors and fp8 "
        "are read from config.json in every era: no flag):",
        "",
        "| era | vllm-ascend | `--quantization ascend` | auto-detected | source |",
        "|---|---|---|---|---|",
    ]
    for e in launch_eras("ascend"):
        if "npu" in e["backends"]:
            out.append(
                f"| {e['era']} | `{e['releases']}` | {e['flag']} | {'yes' if e['auto_detect'] else 'no'} "
                f"| {_cell(e['source'])} |"
            )
    return out


def _model_lines(matrix: SupportMatrix) -> list[str]:
    """The "Models" section: the overview glyph per family and hardware (families without support rows left out)."""
    out = [
        "",
        f"## Models (overview: `{matrix.model_overview}`; each release is judged by its own table)",
        "",
        "✅ supported · 🔵 experimental · 🟡 not tested · ❌ not supported · — not listed. "
        "`ascendctl matrix models --hardware H` shows the features per family.",
        "",
        f"| model | types | {' | '.join(HARDWARE_FAMILIES)} | architectures |",
        "|---|---|" + "---|" * len(HARDWARE_FAMILIES) + "---|",
    ]
    for f in matrix.models:
        if not f.support:
            continue
        cells = []
        for hw in HARDWARE_FAMILIES:
            row = model_support(f, hw)
            cells.append(_GLYPH[row.status] if row else "—")
        out.append(f"| {_cell(f.name)} | {'/'.join(f.types)} | {' | '.join(cells)} | {', '.join(f.architectures)} |")
    return out


def package_data_dir() -> Path:
    """The directory holding matrix.yaml (the source tree in an editable install)."""
    return package_dir("ascendctl.facts").joinpath(MATRIX_YAML).parent


def expected_files(docs_path: Path = DOC_PATH) -> dict[Path, str]:
    """Each derived file → the text it must have for the current matrix.yaml."""
    data = package_data_dir()
    yaml_text = (data / Path(MATRIX_YAML).name).read_text(encoding="utf-8")
    fresh = matrix_from_texts(yaml_text)  # built now from the YAML and the extracts, never the mirror
    shapes = Path(str(published_shapes.index_dir()))
    return {
        docs_path: render_compatibility_md(fresh),
        data / Path(MATRIX_JSON).name: matrix_json_text(yaml_text),
        shapes / published_shapes.INDEX_JSON: published_shapes.index_json_text(
            (shapes / published_shapes.INDEX_YAML).read_text(encoding="utf-8")
        ),
    }


def main(argv: list[str] | None = None) -> int:
    """Print the page, or write (`--write`) / check (`--check`) the derived files (docs path relative to cwd)."""
    args = sys.argv[1:] if argv is None else argv
    docs = Path(args[args.index("--path") + 1]) if "--path" in args else DOC_PATH
    if "--write" in args or "--check" in args:
        stale = []
        for path, text in expected_files(docs).items():
            current = path.read_text(encoding="utf-8") if path.exists() else None
            if current == text:
                continue
            if "--write" in args:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
                print(f"wrote {path}")
            else:
                stale.append(str(path))
        if stale:
            print(f"stale: {', '.join(stale)}: run `{REGENERATE}`", file=sys.stderr)
            return 1
        return 0
    sys.stdout.write(render_compatibility_md(load_matrix()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
