"""No shipped text cites the team's private reference notes: users do not have them.

Code, package data, profiles and docs name the upstream source of a fact (`TAG:path[:line]` in vllm-project/vllm-ascend
or vllm-project/vllm, an issue or PR, a vendor URL) or the file in this repository that records a measurement (a
test, fixture or benchmark data file). This test walks those trees and lists every line that still names a note.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TREES = ("ascendctl", "engine", "profiles", "docs")
FILES = ("README.md", "CHANGELOG.md")
SUFFIXES = {".py", ".yaml", ".yml", ".json", ".md", ".j2", ".toml"}
SKIP_DIRS = {"__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache"}

_BARE = r"(?<![A-Za-z0-9_-])"  # a note's own name, not the tail of a longer file name
NOTE = re.compile(
    r"shared/reference"
    + rf"|{_BARE}(?:vllm-ascend|cpu-engine|real-parsers|pd-bench-ops|peers|code-style-anchors)\.md"
    # `vllm.md` alone is the note; an upstream path ending in `/vllm.md` (or `-vllm.md`, `xvllm.md`) is not
    + r"|(?<![A-Za-z/-])vllm\.md"
    + r"|(?<![A-Za-z0-9_/-])reference/vllm\.md"  # the notes' folder named without `shared/`
)


def shipped_text_files() -> list[Path]:
    found = [ROOT / name for name in FILES if (ROOT / name).is_file()]
    for tree in TREES:
        for path in sorted((ROOT / tree).rglob("*")):
            parts = set(path.relative_to(ROOT).parts)
            if parts & SKIP_DIRS or any(part.endswith(".egg-info") for part in parts):
                continue
            if path.is_file() and path.suffix in SUFFIXES:
                found.append(path)
    return found


def note_citations(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8", errors="replace")
    rel = path.relative_to(ROOT).as_posix()
    return [
        f"{rel}:{number}: {match.group(0)}"
        for number, line in enumerate(text.splitlines(), 1)
        for match in NOTE.finditer(line)
    ]


def test_the_pattern_tells_notes_from_upstream_paths() -> None:
    for cited in (
        "../shared/reference/vllm-ascend.md §11 row 13",
        "vllm.md §4.3",
        "(cpu-engine.md, measured)",
        "reference/vllm.md §6",
        "peers.md",
    ):
        assert NOTE.search(cited), cited
    for upstream in (
        "main:docs/source/tutorials/multi_node.md",
        "v0.33.0:docs/design/vllm.md",
        "docs/source/tutorials/models/Qwen3-Dense.md",
        "my-vllm.md",
    ):
        assert not NOTE.search(upstream), upstream


def test_no_shipped_file_cites_the_reference_notes() -> None:
    files = shipped_text_files()
    names = {p.relative_to(ROOT).as_posix() for p in files}
    assert {"ascendctl/facts/data/matrix.yaml", "engine/ascendctl_engine/data/diagnoses.yaml", "README.md"} <= names
    hits = [hit for path in files for hit in note_citations(path)]
    listing = "\n".join(hits)
    assert not hits, f"{len(hits)} citation(s) of the private notes; cite the upstream source instead:\n{listing}"
