#!/usr/bin/env python3
"""Collect the launch commands of vllm-ascend's tutorials, every release, into tests/data/tutorial_commands.json.

    python scripts/extract_tutorial_commands.py                           # every version tag of the mirror
    python scripts/extract_tutorial_commands.py --repo R --tags v0.23.0   # some tags only (a partial corpus)

Run by hand, never in CI: it reads the vllm-ascend git mirror (bare is fine: `git ls-tree` / `git show`), which CI
does not have. Why a corpus: the launch-script importer (ascendctl/importer/script.py) must read what operators
actually paste, and the tutorials are where those scripts come from. Checked in, the corpus lets a fast test hold
the parser to every command upstream ever published, without the mirror.

What it collects: every fenced code block (```bash / ```shell / ```sh / bare ```, MyST `{code-block} bash`, and
blocks indented inside mkdocs tabs) of every markdown page under docs/source/tutorials/ that holds a `vllm serve`
(or legacy api_server) command. A block is one launch script: its own exports plus the command. A block with
several serve commands (one per node, say) becomes one script per command, each keeping the block's lines before
it except the other serve commands. Only scripts `parse_launch_script` reads are kept.

One record per distinct (path, text) across tags: `id` (sha256 of path and text, short), `tags` (every tag it
appears in, version order), `tag` (the newest), `path`, `line` (of the serve command in the newest tag's file),
`text`, `multi_node`, `pd_role` (`prefill` / `decode` / null from the `--kv-transfer-config` role) and `hardware`
(the page's hardware phrases, as scripts/extract_upstream.py reads them).
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import re
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT))

from extract_upstream import DEFAULT_REPO, GitTree, all_tags, tutorial_facts, version_key  # noqa: E402

from ascendctl.importer.script import (  # noqa: E402
    LaunchScript,
    ScriptError,
    parse_launch_script,
    serve_spans,
)

DEFAULT_OUT = ROOT / "tests" / "data" / "tutorial_commands.json"
TUTORIALS = "docs/source/tutorials/"
MAX_BYTES = 2_000_000
SHELL_LANGUAGES = frozenset(("", "bash", "shell", "sh"))

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`]*?)\s*$")
_DIRECTIVE = re.compile(r"^\{(?:code-block|code|sourcecode|test)\}\s*(\S*)")
_OPTION = re.compile(r"^\s*:[\w-]+:")
_MYST_FENCE = re.compile(r"^\s*:{3,}")
_HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_TAB = re.compile(r'^\s*(?:===\+?\s+"(?P<mkdocs>.*)"|:{3,}\s*\{tab-item\}\s*(?P<myst>.*?))\s*$')
_SERVE_TEXT = re.compile(r"\bvllm\s+serve\b|vllm\.entrypoints\.openai\.api_server")
_MULTI_NODE_TEXT = re.compile(r"multi[- _]?node|multiple nodes|two nodes|\b[2-9] nodes|cross[- ]node", re.I)
_SINGLE_NODE_TEXT = re.compile(r"single[- _]?node|one node|\b1 node", re.I)
_MULTI_NODE_FLAGS = frozenset(
    (
        "--headless",
        "--data-parallel-address",
        "--nnodes",
        "--node-rank",
        "--master-addr",
        "--data-parallel-start-rank",
        "--ray-address",
    )
)
_PD_ROLES = {"kv_producer": "prefill", "kv_consumer": "decode"}
_KV_ROLE = re.compile(r"[\"']?kv_role[\"']?\s*:\s*[\"']?(kv_producer|kv_consumer|kv_both)")


@dataclass(frozen=True)
class Block:
    """One shell code block of a page: its first body line in the file, its text (dedented, MyST options
    dropped) and where it sits (the heading path above it and the tab it is in)."""

    line: int
    text: str
    headings: tuple[str, ...]
    tab: str


@dataclass
class Occurrence:
    """Where one distinct (path, text) was found: every tag, and the newest tag's line and block."""

    tags: list[str] = field(default_factory=list)
    tag: str = ""
    line: int = 0
    block: Block | None = None
    parsed: LaunchScript | None = None


# ---------------------------------------------------------------------------------------------------------
# Markdown: the shell code blocks of a page.


def _language(info: str) -> str | None:
    """The block's language, or None for a MyST directive that is not code (`{note}`, `{tip}`)."""
    directive = _DIRECTIVE.match(info)
    if directive:
        return directive.group(1).lower()
    if info.startswith("{"):
        return None
    return info.split()[0].lower() if info else ""


def _dedent(line: str, indent: int) -> str:
    strip = len(line) - len(line.lstrip(" \t"))
    return line[min(indent, strip) :]


def code_blocks(text: str) -> Iterator[Block]:
    """Every fenced shell block of a markdown page, with the heading path and tab label above it."""
    lines = text.splitlines()
    headings: list[tuple[int, str]] = []
    tab = ""
    i = 0
    while i < len(lines):
        fence = _FENCE.match(lines[i])
        if fence is None:
            heading = _HEADING.match(lines[i])
            if heading:
                level = len(heading.group(1))
                headings = [h for h in headings if h[0] < level] + [(level, heading.group(2))]
                tab = ""
            tab_label = _TAB.match(lines[i])
            if tab_label:
                tab = tab_label.group("mkdocs") or tab_label.group("myst") or ""
            i += 1
            continue
        end, after = _closing(lines, i + 1, fence.group("fence"), len(fence.group("indent")))
        language = _language(fence.group("info"))
        if language in SHELL_LANGUAGES:
            body = [_dedent(line, len(fence.group("indent"))) for line in lines[i + 1 : end]]
            block = _block(body, i + 2, tuple(h[1] for h in headings), tab)
            if block is not None:
                yield block
        i = after


def _closing(lines: Sequence[str], start: int, fence: str, indent: int) -> tuple[int, int]:
    """(the line ending the block's body, the line to read next). A block ends at its fence; or, where a page
    forgot the fence, where the container it sits in ends (a MyST `::::` line, or a line indented less than a
    block inside an mkdocs tab), as the renderers end it -- that line is then read again as markdown."""
    closer = re.compile(rf"^\s*{re.escape(fence[0])}{{{len(fence)},}}\s*$")
    for j in range(start, len(lines)):
        line = lines[j]
        if closer.match(line):
            return j, j + 1
        outdented = indent > 0 and line.strip() and len(line) - len(line.lstrip(" \t")) < indent
        if _MYST_FENCE.match(line) or outdented:
            return j, j
    return len(lines), len(lines)


def _block(body: list[str], first_line: int, headings: tuple[str, ...], tab: str) -> Block | None:
    """Drop MyST option lines (`:substitutions:`) and blank lines at the top, blank lines at the end."""
    start = 0
    while start < len(body) and (_OPTION.match(body[start]) or not body[start].strip()):
        start += 1
    end = len(body)
    while end > start and not body[end - 1].strip():
        end -= 1
    if start == end:
        return None
    return Block(first_line + start, "\n".join(body[start:end]) + "\n", headings, tab)


# ---------------------------------------------------------------------------------------------------------
# Launch scripts: one per serve command of a block.


def launch_scripts(text: str, label: str) -> list[tuple[int, str]]:
    """(line of the serve command in `text`, script text) for each serve command. A single command keeps the
    whole block; several are split, each keeping the lines before it that are no other serve command."""
    spans = serve_spans(text, label)
    if len(spans) <= 1:
        return [(spans[0][0], text)] if spans else []
    if any(a[1] >= b[0] for a, b in itertools.pairwise(spans)):
        raise ScriptError(f"{label}:{spans[0][0]}: serve commands share a line: cannot split")
    lines = text.splitlines()
    out: list[tuple[int, str]] = []
    for k, (start, end) in enumerate(spans):
        others = {n for j, (a, b) in enumerate(spans) if j != k for n in range(a, b + 1)}
        keep = [n for n in range(1, start) if n not in others] + list(range(start, end + 1))
        out.append((start, "\n".join(lines[n - 1] for n in keep) + "\n"))
    return out


def pd_role(argv: Sequence[str]) -> str | None:
    """`prefill` / `decode` when `--kv-transfer-config` names a producer / consumer role."""
    for k, arg in enumerate(argv):
        flag, _, inline = arg.partition("=")
        if flag.replace("_", "-") != "--kv-transfer-config":
            continue
        value = inline or (argv[k + 1] if k + 1 < len(argv) else "")
        try:
            role = json.loads(value).get("kv_role")
        except (ValueError, AttributeError):
            m = _KV_ROLE.search(value)
            role = m.group(1) if m else None
        return _PD_ROLES.get(role) if isinstance(role, str) else None
    return None


def multi_node(parsed: LaunchScript, block: Block) -> bool:
    """Multi-node flags or a Ray address in the command; else what the nearest heading (or tab) says."""
    flags = {arg.partition("=")[0].replace("_", "-") for arg in parsed.argv if arg.startswith("--")}
    if flags & _MULTI_NODE_FLAGS:
        return True
    values = [*parsed.argv, *parsed.env.values()]
    if "RAY_ADDRESS" in parsed.env or any("ray://" in v for v in values):
        return True
    for text in (block.tab, *reversed(block.headings)):
        if _SINGLE_NODE_TEXT.search(text):
            return False
        if _MULTI_NODE_TEXT.search(text):
            return True
    return False


def record_id(path: str, text: str) -> str:
    return hashlib.sha256(f"{path}\0{text}".encode()).hexdigest()[:16]


# ---------------------------------------------------------------------------------------------------------
# The corpus.


@dataclass
class Stats:
    tags: int = 0
    pages: int = 0
    blocks: int = 0
    commands: int = 0
    skipped: Counter[str] = field(default_factory=Counter)


def _reason(error: ScriptError) -> str:
    """An error's kind, without its PATH:LINE (to count skipped blocks by why)."""
    why = str(error).split(": ", 1)[-1]
    return re.sub(r"\(lines? [\d, ]+\)|line \d+", "(...)", why)


def read_page(tag: str, path: str, text: str, found: dict[tuple[str, str], Occurrence], stats: Stats) -> None:
    for block in code_blocks(text):
        if not _SERVE_TEXT.search(block.text):
            continue
        stats.blocks += 1
        label = f"{tag}:{path}:{block.line}"
        try:
            scripts = launch_scripts(block.text, label)
        except ScriptError as error:
            stats.skipped[_reason(error)] += 1
            continue
        if not scripts:
            stats.skipped["no serve command"] += 1
        for line, script in scripts:
            try:
                parsed = parse_launch_script(script, label)
            except ScriptError as error:
                stats.skipped[_reason(error)] += 1
                continue
            stats.commands += 1
            occ = found.setdefault((path, script), Occurrence())
            if tag not in occ.tags:
                occ.tags.append(tag)
                occ.tag, occ.line, occ.block, occ.parsed = tag, block.line + line - 1, block, parsed


def collect(repo: Path, tags: Sequence[str]) -> tuple[list[dict[str, Any]], Stats]:
    found: dict[tuple[str, str], Occurrence] = {}
    hardware: dict[tuple[str, str], list[str]] = {}
    stats = Stats()
    for tag in sorted(tags, key=version_key):
        tree = GitTree(repo, tag)
        pages = [p for p in tree.files() if p.startswith(TUTORIALS) and p.endswith(".md")]
        before = stats.commands
        for path in pages:
            text = tree.read(path) or ""
            hardware[(tag, path)] = tutorial_facts(text)["hardware"]
            read_page(tag, path, text, found, stats)
        stats.tags += 1
        stats.pages += len(pages)
        print(f"{tag}: {len(pages)} pages, {stats.commands - before} commands", file=sys.stderr)
    records = [_record(path, text, occ, hardware[(occ.tag, path)]) for (path, text), occ in found.items()]
    records.sort(key=lambda r: (r["path"], version_key(r["tag"]), r["line"], r["id"]))
    return records, stats


def _record(path: str, text: str, occ: Occurrence, hardware: list[str]) -> dict[str, Any]:
    assert occ.parsed is not None and occ.block is not None
    return {
        "id": record_id(path, text),
        "tag": occ.tag,
        "tags": sorted(occ.tags, key=version_key),
        "path": path,
        "line": occ.line,
        "text": text,
        "multi_node": multi_node(occ.parsed, occ.block),
        "pd_role": pd_role(occ.parsed.argv),
        "hardware": hardware,
    }


def drop_duplicate_texts(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One record per text (a page renamed between releases repeats its commands): the newest, first path."""
    best: dict[str, dict[str, Any]] = {}
    for rec in sorted(records, key=lambda r: (version_key(r["tag"]), r["path"]), reverse=True):
        best.setdefault(rec["text"], rec)
    kept = {id(r) for r in best.values()}
    return [r for r in records if id(r) in kept]


def render(records: list[dict[str, Any]], tags: Sequence[str], repo: Path) -> str:
    data = {
        "about": "vllm serve commands of vllm-ascend's tutorials; scripts/extract_tutorial_commands.py writes it",
        "repo": "vllm-project/vllm-ascend",
        "mirror": repo.name if repo.name != "repo" else repo.parent.name,
        "tags": sorted(tags, key=version_key),
        "commands": records,
    }
    return json.dumps(data, indent=1, ensure_ascii=False, sort_keys=False) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--repo", type=Path, default=DEFAULT_REPO, help="vllm-ascend git repository (bare is fine)")
    parser.add_argument("--tags", nargs="*", help="tags to read (default: every version tag)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    tags = args.tags or all_tags(args.repo)
    records, stats = collect(args.repo, tags)
    text = render(records, tags, args.repo)
    deduped = 0
    if len(text.encode()) > MAX_BYTES:
        kept = drop_duplicate_texts(records)
        deduped = len(records) - len(kept)
        records = kept
        text = render(records, tags, args.repo)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    multi = sum(r["multi_node"] for r in records)
    pd = sum(r["pd_role"] is not None for r in records)
    print(
        f"tags read {stats.tags}, pages {stats.pages}, blocks {stats.blocks}, commands {stats.commands}, "
        f"unique {len(records)}, multi-node {multi}, pd {pd}"
        + (f" ({deduped} duplicate texts dropped)" if deduped else "")
    )
    print(f"wrote {args.out} ({len(text.encode())} bytes)")
    for why, n in stats.skipped.most_common():
        print(f"  skipped {n}: {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
