"""The round trip of every launch upstream's CI runs on hardware: import it, plan it back, compare.

`ascendctl/facts/data/launches/launches.json` holds the launches of every tag (built by
`scripts/extract_launches.py`); each is imported for its own tag and hardware, every node's argv and environment as
upstream's runner sets them (the runner's addresses and interfaces included). An accuracy launch's `llm_kwargs`
are the `vllm serve` options its engine arguments spell (keys the release's parser does not know, such as the
harness's own `runner`, are left out). Launches upstream's runner cannot load are counted with their recorded
reason, never imported.

    python tests/launch_corpus.py                  # print the coverage table
    python tests/launch_corpus.py --write          # rewrite docs/guides/import.md's table (launch-coverage markers)
    python tests/launch_corpus.py --lines v0.25 …  # only these release lines
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import import_corpus  # the coverage page's table reader and writer (tests/ is on sys.path: the script's own directory)

REPO = Path(__file__).resolve().parents[1]
BEGIN, END = "<!-- launch-coverage:begin -->", "<!-- launch-coverage:end -->"
# `make test` runs the newest lines; `make corpus` all of them (the page's table is the whole set's).
NEWEST_LINES = ("v0.23", "v0.25")


@dataclass(frozen=True)
class Outcome:
    tag: str
    file: str
    line: str  # release line (`v0.25`)
    state: str  # unreadable | reproduced | differs
    hatches: tuple[str, ...] = ()
    pass_through: tuple[str, ...] = ()
    refused: bool = False
    detail: str = ""


def release_line(tag: str) -> str:
    m = re.match(r"v(\d+)\.(\d+)", tag)
    return f"v{m.group(1)}.{m.group(2)}" if m else tag


def _line_key(line: str) -> tuple[int, ...]:
    return tuple(int(x) for x in line[1:].split("."))


def data() -> dict[str, Any]:
    from ascendctl.facts.launches import read_data

    return read_data()


def launches(lines: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """One launch per tag and content (the same config listed twice is one launch)."""
    wanted = set(lines) if lines is not None else None
    seen: set[tuple[str, str]] = set()
    out = []
    for launch in data()["launches"]:
        key = (launch["tag"], launch["content"])
        if key in seen or (wanted is not None and release_line(launch["tag"]) not in wanted):
            continue
        seen.add(key)
        out.append(launch)
    return out


def not_loadable(lines: Iterable[str] | None = None) -> Counter[str]:
    """Per release line, the launches upstream's runner cannot load (their reasons are in the data)."""
    wanted = set(lines) if lines is not None else None
    out: Counter[str] = Counter()
    for tag, facts in data()["tags"].items():
        if wanted is None or release_line(tag) in wanted:
            out[release_line(tag)] += len(facts["not_loadable"])
    return out


def scripts_of(launch: Mapping[str, Any], contents: Mapping[str, Any]) -> list[Any]:
    from ascendctl.importer.launch_scripts import scripts_of as scripts

    return scripts(launch, contents[launch["content"]])


def _no_config(_source: str) -> None:
    return None


def run_one(launch: Mapping[str, Any], contents: Mapping[str, Any]) -> Outcome:
    from ascendctl.core.errors import AscendctlError
    from ascendctl.importer.run import import_scripts

    base = {"tag": launch["tag"], "file": launch["file"], "line": release_line(launch["tag"])}
    try:
        scripts = scripts_of(launch, contents)
        result = import_scripts(scripts, release=launch["tag"], hardware=launch["hardware"], read_config=_no_config)
    except (AscendctlError, ValueError) as exc:
        return Outcome(**base, state="unreadable", detail=str(exc))
    counted = result.counted
    return Outcome(
        **base,
        state="reproduced" if result.reproduced else "differs",
        hatches=counted.hatches,
        pass_through=counted.pass_through,
        refused=bool(result.blocking),
        detail="; ".join([*result.blocking, *(d.line() for n in result.nodes for d in n.differences if d.counts)]),
    )


def run(lines: Iterable[str] | None = None) -> list[Outcome]:
    contents = data()["contents"]
    return [run_one(launch, contents) for launch in launches(lines)]


def coverage(outcomes: Sequence[Outcome], unloadable: Mapping[str, int]) -> list[str]:
    """The page's table: per release line, launches / reproduced / no escape hatch / escape-hatch items /
    launches with pass-through variables / refused / not loadable upstream."""
    lines = sorted({o.line for o in outcomes} | set(unloadable), key=_line_key)
    rows = [
        "| release line | launches | reproduced | no escape hatch | escape-hatch items | with pass-through env "
        "| refused | not loadable |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for line in [*lines, "all"]:
        mine = [o for o in outcomes if line in ("all", o.line)]
        count = Counter(o.state for o in mine)
        clean = sum(1 for o in mine if o.state != "unreadable" and not o.hatches)
        items = sum(len(o.hatches) for o in mine)
        passing = sum(1 for o in mine if o.pass_through)
        refused = sum(1 for o in mine if o.refused)
        gone = sum(unloadable.values()) if line == "all" else unloadable.get(line, 0)
        label = "**all**" if line == "all" else line
        rows.append(
            f"| {label} | {len(mine)} | {count['reproduced']} | {clean} | {items} | {passing} | {refused} | {gone} |"
        )
    return rows


def doc_table() -> list[str]:
    return import_corpus.doc_table(BEGIN, END)


def write_doc(rows: list[str]) -> None:
    import_corpus.write_doc(rows, BEGIN, END)


def main(argv: list[str]) -> int:
    lines = argv[argv.index("--lines") + 1 :] if "--lines" in argv else None
    outcomes = run(lines)
    rows = coverage(outcomes, not_loadable(lines))
    print("\n".join(rows))
    if "--details" in argv:
        for o in outcomes:
            if o.state != "reproduced" or o.refused:
                print(f"{o.tag} {o.file}: {o.state}: {o.detail[:400]}")
        items = Counter(
            h.split(":")[0] if "extra_args" not in h else h.split(" ")[1] for o in outcomes for h in o.hatches
        )
        print(items.most_common(40))
    if "--write" in argv and lines is None:
        write_doc(rows)
        print(f"wrote {import_corpus.DOC}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    sys.exit(main(sys.argv[1:]))
