"""The round trip of every single-node `vllm serve` command of vllm-ascend's tutorials: import it, plan it back,
compare. `tests/data/tutorial_commands.json` holds the commands (built by `scripts/extract_tutorial_commands.py`
from every tag's docs/source/tutorials/); docs/guides/import.md states the coverage this module computes:

    python tests/import_corpus.py            # print the coverage table
    python tests/import_corpus.py --write    # rewrite the page's table (between its import-coverage markers)

Each command is imported for its newest tag and for the hardware family its page names that the tag supports
and whose plan is not refused (else the first such family; A2 when the page names none).
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "tests" / "data" / "tutorial_commands.json"
DOC = REPO / "docs" / "guides" / "import.md"  # the import guide: both corpora's coverage tables
BEGIN, END = "<!-- import-coverage:begin -->", "<!-- import-coverage:end -->"


@dataclass(frozen=True)
class Outcome:
    id: str
    tag: str
    line: str  # release line (`v0.13`)
    state: str  # unreadable | reproduced | differs
    hatches: int
    refused: bool  # the plan of the imported profile is refused (a failing finding)
    detail: str = ""


def single_node_commands() -> list[dict[str, Any]]:
    data = json.loads(CORPUS.read_text(encoding="utf-8"))
    return [r for r in data["commands"] if not r["multi_node"] and not r["pd_role"]]


def release_line(tag: str) -> str:
    m = re.match(r"v(\d+)\.(\d+)", tag)
    return f"v{m.group(1)}.{m.group(2)}" if m else tag


def _no_config(_source: str) -> None:
    return None


def run_one(record: dict[str, Any]) -> Outcome:
    from ascendctl.core.errors import AscendctlError
    from ascendctl.importer.run import import_scripts
    from ascendctl.importer.script import ScriptError, parse_launch_script

    tag = record["tag"]
    base = {"id": record["id"], "tag": tag, "line": release_line(tag)}
    try:
        script = parse_launch_script(record["text"], f"{tag}:{record['path']}:{record['line']}")
        result = None
        for hardware in _families(record):
            result = import_scripts([script], release=tag, hardware=hardware, read_config=_no_config)
            if not result.blocking:
                break
    except (ScriptError, AscendctlError, ValueError) as exc:
        return Outcome(**base, state="unreadable", hatches=0, refused=False, detail=str(exc))
    assert result is not None
    state = "reproduced" if result.reproduced else "differs"
    return Outcome(**base, state=state, hatches=len(result.hatches), refused=bool(result.blocking))


def _families(record: dict[str, Any]) -> list[str]:
    from ascendctl.facts.matrix import load_matrix
    from ascendctl.facts.matrix.hardware import phrase_hardware
    from ascendctl.facts.matrix.release_pins import release_for_pin
    from ascendctl.facts.matrix.schema import in_range

    matrix = load_matrix()
    rel = release_for_pin(matrix, "npu", record["tag"])
    supported = [h.id for h in matrix.hardware if in_range(h.releases, rel.version)]
    named = [f for phrase in record["hardware"] for f in phrase_hardware(phrase)]
    found: list[str] = [f for f in dict.fromkeys(named) if f in supported]
    return found or ["a2"]


def coverage(outcomes: list[Outcome]) -> list[str]:
    """The page's table: per release line, commands / reproduced / with no escape hatch / plan not refused."""
    lines = sorted({o.line for o in outcomes}, key=lambda t: tuple(int(x) for x in t[1:].split(".")))
    rows = [
        "| release line | commands | reproduced | no escape hatch | plan not refused | unreadable |",
        "|---|---|---|---|---|---|",
    ]
    for line in [*lines, "all"]:
        mine = [o for o in outcomes if line in ("all", o.line)]
        count = Counter(o.state for o in mine)
        clean = sum(1 for o in mine if o.state == "reproduced" and o.hatches == 0)
        planned = sum(1 for o in mine if o.state != "unreadable" and not o.refused)
        label = "**all**" if line == "all" else line
        rows.append(f"| {label} | {len(mine)} | {count['reproduced']} | {clean} | {planned} | {count['unreadable']} |")
    return rows


def doc_table(begin: str = BEGIN, end: str = END) -> list[str]:
    """The table rows of the page between `begin` and `end` (this corpus's markers by default)."""
    text = DOC.read_text(encoding="utf-8")
    start, stop = text.index(begin) + len(begin), text.index(end)
    return [line for line in text[start:stop].strip().splitlines() if line.startswith("|")]


def write_doc(rows: list[str], begin: str = BEGIN, end: str = END) -> None:
    text = DOC.read_text(encoding="utf-8")
    start, stop = text.index(begin) + len(begin), text.index(end)
    DOC.write_text(text[:start] + "\n" + "\n".join(rows) + "\n" + text[stop:], encoding="utf-8")


def main(argv: list[str]) -> int:
    outcomes = [run_one(r) for r in single_node_commands()]
    rows = coverage(outcomes)
    print("\n".join(rows))
    if "--write" in argv:
        write_doc(rows)
        print(f"wrote {DOC}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    sys.exit(main(sys.argv[1:]))
