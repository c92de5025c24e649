"""Add a vllm-ascend release to the support matrix from its own upstream files, then show what to review.

    python scripts/new_release.py v0.26.0rc1 --repo /path/to/vllm-ascend            # dry run: nothing written
    python scripts/new_release.py v0.26.0rc1 --repo /path/to/vllm-ascend --write    # write extracts + row + docs

What it does (see docs/matrix.md):
1. extracts the tag with `scripts/extract_upstream.py` (pins, images, dates, quantization registry, model and
   feature tables) and `scripts/extract_ascend_keys.py` (the `--additional-config` keys and `VLLM_ASCEND_*`
   variables the tag reads) — from the tag's own files, never from the previous row;
2. adds a knowledge row (`version` + `backend`) to ascendctl/facts/data/matrix.yaml below the npu marker;
3. builds the whole matrix and prints the new row with the `tag:path:line` of every fact, and every problem
   the build found: each upstream disagreement needs a `decisions:` entry (value + why) in matrix.yaml — a new
   tag's policy table can also open disagreements on older rows;
4. says whether the real-parser snapshot of the row's vLLM exists (else: scripts/snapshot_vllm_parsers.py).

Without `--write` the extraction goes to a temporary copy of the data, so the tree is left as it was. With
`--write`, docs/compatibility.md and the matrix mirror are regenerated when the build is clean.
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_MATRIX = ROOT / "ascendctl" / "facts" / "data" / "matrix.yaml"
DEFAULT_UPSTREAM = ROOT / "ascendctl" / "facts" / "data" / "upstream"
DEFAULT_KEYS = ROOT / "engine" / "ascendctl_engine" / "data" / "ascend_keys"
MARKER = "  # >>> npu releases\n"

Extractor = Callable[[str, Path, Path], None]  # (tag, upstream out dir, key-table out dir)


def _script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def git_extractor(repo: Path) -> Extractor:
    """Run both maintainer extractors for one tag of a vllm-ascend checkout."""

    def run(tag: str, upstream_out: Path, keys_out: Path) -> None:
        common = ["--repo", str(repo), "--tags", tag, "--pypi-post", "none"]
        if _script("extract_upstream").main([*common, "--out", str(upstream_out)]) != 0:
            raise SystemExit(f"error: extract_upstream.py failed for {tag}")
        if _script("extract_ascend_keys").main([*common, "--out", str(keys_out)]) != 0:
            raise SystemExit(f"error: extract_ascend_keys.py failed for {tag}")

    return run


def with_row(text: str, tag: str) -> str:
    """matrix.yaml with a knowledge row for `tag` below the npu marker (unchanged if the row exists)."""
    if f"  - version: {tag}\n" in text:
        return text
    return text.replace(MARKER, f"{MARKER}  - version: {tag}\n    backend: npu\n", 1)


def describe(row: dict[str, Any]) -> list[str]:
    sources = row.get("sources", {})
    out = [f"{row['version']} ({row['status']})"]
    for name in ("vllm", "python", "cann", "torch", "torch_npu", "triton_ascend", "mooncake", "mooncake_image",
                 "mindie_turbo", "transformers", "base_image", "date"):  # fmt: skip
        out.append(f"  {name}: {row.get(name)}  [{sources.get(name, 'no upstream file states it')}]")
    for key, image in row.get("images", {}).items():
        out.append(f"  image {key}: {image}  [{sources.get(f'images.{key}', '')}]")
    return out


def add_release(
    tag: str,
    extract: Extractor,
    *,
    matrix: Path = DEFAULT_MATRIX,
    upstream_dir: Path = DEFAULT_UPSTREAM,
    keys_dir: Path = DEFAULT_KEYS,
    write: bool = False,
    out: Callable[[str], None] = print,
) -> int:
    """0: the row builds cleanly; 1: the build found problems to decide (printed); 2: bad input."""
    from ascendctl.facts import upstream
    from ascendctl.facts.matrix.build import build_matrix_data
    from ascendctl.facts.matrix.load import _knowledge

    if not tag.startswith("v"):
        tag = f"v{tag}"
    text = matrix.read_text(encoding="utf-8")
    if MARKER not in text:
        out(f"error: {matrix} lacks the marker line {MARKER.strip()!r}")
        return 2
    with tempfile.TemporaryDirectory(prefix="new-release-") as tmp:
        work_upstream, work_keys = (upstream_dir, keys_dir) if write else (Path(tmp, "up"), Path(tmp, "keys"))
        if not write:
            shutil.copytree(upstream_dir, work_upstream)
            shutil.copytree(keys_dir, work_keys)
        extract(tag, work_upstream, work_keys)
        if not (work_upstream / f"{tag}.json").exists():
            out(f"error: the extraction wrote no {tag}.json (is {tag} a tag of the repository?)")
            return 2
        new_text = with_row(text, tag)
        upstream.set_data_dir(work_upstream)
        try:
            built = build_matrix_data(_knowledge(new_text), upstream)
        finally:
            upstream.set_data_dir(None)
    row = next(r for r in built.data["releases"] if r.get("version") == tag)
    for line in describe(row):
        out(line)
    snapshot = ROOT / "engine" / "ascendctl_engine" / "data" / "parsers" / f"vllm-{row.get('vllm')}.json"
    if not snapshot.exists():
        out(
            f"missing: {snapshot.relative_to(ROOT)} — run scripts/snapshot_vllm_parsers.py --versions {row.get('vllm')}"
        )
    for problem in built.problems:
        out(f"decide: {problem}")
    if write:
        matrix.write_text(new_text, encoding="utf-8")
        out(f"wrote {matrix} and the extracts of {tag}")
        if not built.problems and matrix == DEFAULT_MATRIX:
            from ascendctl.outputs.matrix_docs import main as write_docs

            write_docs(["--write"])
    else:
        out("(dry run: nothing written; pass --write)")
    return 1 if built.problems else 0


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("tag", help="vllm-ascend tag, e.g. v0.26.0rc1")
    p.add_argument("--repo", type=Path, required=True, help="a clone of vllm-project/vllm-ascend (bare is fine)")
    p.add_argument("--write", action="store_true", help="write the extracts, the knowledge row and the docs")
    args = p.parse_args(argv)
    return add_release(args.tag, git_extractor(args.repo), write=args.write)


if __name__ == "__main__":
    sys.exit(main())
