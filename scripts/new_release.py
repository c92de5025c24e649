"""Add a vllm-ascend release row to the support matrix, validate it, and regenerate docs/compatibility.md.

Typical use, once the upstream tag and its versioning-policy row exist:

    python scripts/new_release.py v0.26.0rc1 --vllm 0.26.0 --cann 9.1.0 --torch 2.10.0 \\
        --torch-npu 2.10.0.post4 --triton 3.2.2 --date 2026-09-01 \\
        --source "main:docs/source/community/versioning_policy.md; v0.26.0rc1:requirements.txt"
    python scripts/new_release.py ... --write      # insert it into ascendctl/data/matrix.yaml + regenerate docs

Fields you do not give are copied from `--like` (default: the newest npu row): Python range, torch, Mooncake,
transformers, and the set of image families (image names are recomputed for the new tag). Without `--write`
the row is validated against the whole matrix and printed. Afterwards: add `known_issues` / `notes` / any
`disagreements` by hand, add an assertion for the row to tests/test_matrix_data.py, and run
`.venv/bin/pytest tests/test_matrix_data.py tests/test_matrix_docs.py`.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_MATRIX = ROOT / "ascendctl" / "data" / "matrix.yaml"
DEFAULT_DOCS = ROOT / "docs" / "compatibility.md"
MARKER = "  # >>> npu releases\n"


def _load_yaml(text: str) -> object:
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506 - a safe loader


def _q(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def _opt(value: str | None) -> str:
    return _q(value) if value else "null"


def _rebase(image: str | None, old_cann: str | None, new_cann: str) -> str | None:
    """The like-row's CANN base image with its CANN version swapped (`cann:9.0.1-910b-…` → `cann:9.1.0-910b-…`)."""
    if not image or ":" not in image or old_cann is None:
        return image
    repo, tag = image.split(":", 1)
    head, sep, rest = tag.partition("-")
    if head.lower() != old_cann.lower() or not sep:
        return image
    return f"{repo}:{new_cann.lower()}-{rest}"


def build_row(args: argparse.Namespace, like: dict[str, Any], suffixes: dict[str, str]) -> str:
    """The YAML text of the new release row (2-space list indentation under `releases:`)."""
    version = args.version if args.version.startswith("v") else f"v{args.version}"
    status = args.status or ("rc" if "rc" in version else "final")
    families = args.families.split(",") if args.families else list(like.get("images") or {})
    triton = None if (args.triton or "").lower() in ("none", "null") else (args.triton or like.get("triton_ascend"))
    lines = [
        f"  - version: {version}",
        "    backend: npu",
        "    package: vllm-ascend",
        f"    status: {status}",
        f"    date: {args.date or dt.date.today().isoformat()}",
        f"    vllm: {_q(args.vllm)}",
        f"    python: {_q(args.python or like['python'])}",
        f"    cann: {_q(args.cann)}",
        f"    torch: {_q(args.torch or like['torch'])}",
        f"    torch_npu: {_q(args.torch_npu)}",
        f"    triton_ascend: {_opt(triton)}",
        f"    mooncake: {_opt(args.mooncake or like.get('mooncake'))}",
        f"    mooncake_image: {_opt(args.mooncake or like.get('mooncake_image'))}",
        "    mindie_turbo: null",
        f"    transformers: {_opt(args.transformers or like.get('transformers'))}",
    ]
    base = args.base_image or _rebase(like.get("base_image"), like.get("cann"), args.cann)
    if base:
        lines.append(f"    base_image: {base}")
    lines.append("    images:")
    for key in families:
        family = key.removesuffix("-openeuler")
        if family not in suffixes:
            raise SystemExit(f"error: --families: {key!r} is not a hardware family (or <family>-openeuler)")
        name = f"quay.io/ascend/vllm-ascend:{version}{suffixes[family]}{key[len(family) :]}"
        lines.append(f"      {_q(key) if key.isdigit() else key}: {name}")
    lines.append(f"    source: {_q(args.source)}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("version", help="vllm-ascend tag, e.g. v0.26.0rc1")
    p.add_argument("--vllm", required=True, help="matching vLLM version (pip form, e.g. 0.26.0)")
    p.add_argument("--cann", required=True, help="CANN version from the versioning policy (e.g. 9.1.0, 8.3.RC2)")
    p.add_argument("--torch-npu", required=True, help="torch-npu version")
    p.add_argument("--torch", help="torch version (default: from --like)")
    p.add_argument("--python", help="PEP 440 specifier, e.g. '>=3.10,<3.13' (default: from --like)")
    p.add_argument("--triton", help="triton-ascend version, or 'none' (default: from --like)")
    p.add_argument("--mooncake", help="Mooncake version (default: from --like)")
    p.add_argument("--transformers", help="transformers requirement, e.g. '==5.14.1' (default: from --like)")
    p.add_argument("--base-image", help="CANN base image of the A2 Dockerfile (default: from --like)")
    p.add_argument("--date", help="release date YYYY-MM-DD (default: today)")
    p.add_argument("--status", choices=("final", "rc"), help="default: rc when the tag contains rc")
    p.add_argument("--families", help="image keys, comma separated (default: those of --like)")
    p.add_argument("--like", help="existing release to copy unset fields from (default: newest npu row)")
    p.add_argument("--source", required=True, help="where the pins come from (repo path@tag, VP, issue)")
    p.add_argument("--matrix", type=Path, default=DEFAULT_MATRIX, help=argparse.SUPPRESS)
    p.add_argument("--docs", type=Path, default=DEFAULT_DOCS, help=argparse.SUPPRESS)
    p.add_argument("--write", action="store_true", help="insert the row and regenerate docs/compatibility.md")
    args = p.parse_args(argv)

    from pydantic import ValidationError

    from ascendctl.matrix import matrix_from_data, releases
    from ascendctl.matrix_docs import render_compatibility_md

    text = args.matrix.read_text(encoding="utf-8")
    if MARKER not in text:
        print(f"error: {args.matrix} lacks the marker line {MARKER.strip()!r}", file=sys.stderr)
        return 2
    current = matrix_from_data(_load_yaml(text))
    npu_rows = releases(current, "npu")
    like_row = npu_rows[0]
    if args.like:
        matches = [r for r in npu_rows if r.version.lstrip("v") == args.like.lstrip("v")]
        if not matches:
            print(f"error: --like {args.like}: no such release", file=sys.stderr)
            return 2
        like_row = matches[0]
    like = like_row.model_dump(mode="json")
    suffixes = {h.id: h.image_suffix for h in current.hardware}
    row = build_row(args, like, suffixes)
    new_text = text.replace(MARKER, MARKER + row, 1)
    try:
        updated = matrix_from_data(_load_yaml(new_text))
    except ValidationError as exc:
        print(f"error: the new row does not validate:\n{exc}", file=sys.stderr)
        return 1
    print(row, end="")
    if not args.write:
        print("(dry run: validated against the whole matrix; pass --write to insert it)", file=sys.stderr)
        return 0
    args.matrix.write_text(new_text, encoding="utf-8")
    args.docs.parent.mkdir(parents=True, exist_ok=True)
    args.docs.write_text(render_compatibility_md(updated), encoding="utf-8")
    print(
        f"wrote {args.matrix} and {args.docs}. Next: add known_issues/notes/disagreements to the row, "
        "an assertion in tests/test_matrix_data.py, then run the matrix tests.",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
