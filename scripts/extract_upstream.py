#!/usr/bin/env python3
"""Extract release facts from upstream vllm-ascend into one JSON file per release tag.

    python scripts/extract_upstream.py --repo /path/to/vllm-ascend.git          # every tag + the PyPI post release
    python scripts/extract_upstream.py --repo REPO --tags v0.23.0 v0.25.1rc1     # some tags only
    python scripts/extract_upstream.py --repo REPO --tags v0.23.0.post1          # only the PyPI release
    python scripts/extract_upstream.py --repo REPO --pypi-post none              # skip the PyPI-only release

The repository may be bare: files are read with `git show TAG:path`, never from a work tree. A release that
exists only on PyPI (`--pypi-post 0.23.0.post1`) is read from its sdist (downloaded from PyPI, or given with
`--pypi-sdist FILE`): its PKG-INFO plus the project files the sdist carries.

Every fact in the output is `{"value": ..., "source": "TAG:path:line"}` where `line` is the 1-based line of
`git show TAG:path`. Facts read from the sdist say `v0.23.0.post1:PyPI:<sdist file>:<path in sdist>:line`;
facts from PyPI's JSON API say `v0.23.0.post1:PyPI:pypi.org/pypi/vllm-ascend/json:1` (the API answers one line).
A tag's commit and commit date cite the tag ref itself: `TAG:refs/tags/TAG:1`.

What a file holds (keys of the JSON object):

- `tag`, `commit`, `commit_date`: the release and its commit (for the sdist: the commit id its _version.py
  names, and the PyPI upload date);
- `policy_rows`: every row of the versioning-policy compatibility table(s) at that tag, for every release
  the table lists; `release_window`: the dated rows of its release-window table;
- `pins`: field -> facts from the tag's own files (Dockerfiles, requirements.txt, pyproject.toml, setup.py,
  README prerequisites, PKG-INFO), one fact per place that states the field, so disagreements stay visible;
- `dockerfiles`: per root Dockerfile its FROM image (CANN version, SoC, OS, Python) and ARG defaults;
- `images` / `dockerfiles_unbuilt` / `image_workflows` / `mooncake_image`: what the image workflows build;
- `release_notes`: every `## vX.Y.Z - YYYY.MM.DD` heading of the tag's release notes; `release_note_lines`: the
  bullets of the tag's own section (support evidence: the models they name);
- `tutorials`: every page under docs/source/tutorials/ — its title, the models its commands serve, the hardware
  phrases it uses (ascendctl maps them to families); model-table rows keep the pages they link (`links`);
- `quantization_schemes`, `quantization_registry`, `quantization_methods`, `quantization_cli`: the ModelSlim
  scheme registry as the code registers it, the `register_quantization_config` names, and the
  `--quantization ascend` parser hook of the platform;
- `models`, `features`, `feature_matrix`: the tag's support tables, parsed generically by header names.

Importing this module has no side effects; `main()` runs only as a script.
"""

from __future__ import annotations

import argparse
import ast
import datetime as dt
import hashlib
import json
import posixpath
import re
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Protocol
from urllib.parse import unquote

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "ascendctl" / "facts" / "data" / "upstream"
DEFAULT_REPO = Path("/work/.mirror/vllm-project+vllm-ascend/repo")
DEFAULT_POST = "0.23.0.post1"
PYPI_PROJECT = "vllm-ascend"
PYPI_JSON_URL = f"https://pypi.org/pypi/{PYPI_PROJECT}/json"
PYPI_JSON_LABEL = f"pypi.org/pypi/{PYPI_PROJECT}/json"
PYPI_FILES = "https://files.pythonhosted.org/"
SCHEMA_VERSION = 1

Fact = dict[str, Any]


# ---------------------------------------------------------------------------------------------------------
# Reading a release's files: a tag of a (bare) git repository, or an sdist.


class Tree(Protocol):
    tag: str

    def files(self) -> list[str]: ...

    def read(self, path: str) -> str | None: ...

    def src(self, path: str, line: int) -> str: ...


class GitTree:
    """The files of one tag, read with `git ls-tree` / `git show` (works on a bare mirror)."""

    def __init__(self, repo: Path, tag: str) -> None:
        self.repo = repo
        self.tag = tag
        self._files: list[str] | None = None
        self._present: set[str] = set()
        self._cache: dict[str, str | None] = {}

    def _git(self, *args: str) -> str:
        out = subprocess.run(["git", "-C", str(self.repo), *args], check=True, capture_output=True)
        return out.stdout.decode("utf-8", errors="replace")

    def files(self) -> list[str]:
        if self._files is None:
            self._files = self._git("ls-tree", "-r", "--name-only", self.tag).splitlines()
            self._present = set(self._files)
        return self._files

    def read(self, path: str) -> str | None:
        if path not in self._cache:
            self.files()
            self._cache[path] = self._git("show", f"{self.tag}:{path}") if path in self._present else None
        return self._cache[path]

    def src(self, path: str, line: int) -> str:
        return f"{self.tag}:{path}:{line}"

    def commit(self) -> tuple[str, str]:
        sha = self._git("rev-list", "-n", "1", self.tag).strip()
        when = self._git("log", "-1", "--format=%cI", sha).strip()
        return sha, when


class SdistTree:
    """The files of an sdist (`<name>-<version>/...` inside a .tar.gz)."""

    def __init__(self, path: Path, tag: str) -> None:
        self.path = path
        self.tag = tag
        self.name = path.name
        self._texts: dict[str, str] = {}
        with tarfile.open(path, "r:gz") as tar:
            for member in tar.getmembers():
                if not member.isfile():
                    continue
                parts = PurePosixPath(member.name).parts
                if len(parts) < 2:
                    continue
                rel = "/".join(parts[1:])
                handle = tar.extractfile(member)
                if handle is not None and _wanted_in_sdist(rel):
                    self._texts[rel] = handle.read().decode("utf-8", errors="replace")
        self._files = sorted(self._texts)

    def files(self) -> list[str]:
        return self._files

    def read(self, path: str) -> str | None:
        return self._texts.get(path)

    def src(self, path: str, line: int) -> str:
        return f"{self.tag}:PyPI:{self.name}:{path}:{line}"


def _wanted_in_sdist(rel: str) -> bool:
    """Only the text files the extractor reads are kept in memory (the sdist is large)."""
    if rel in ("PKG-INFO", "README.md", "requirements.txt", "pyproject.toml", "setup.py"):
        return True
    if "/" not in rel and rel.startswith("Dockerfile"):
        return True
    if rel.startswith(".github/workflows/"):
        return rel.endswith((".yml", ".yaml"))
    if rel.startswith("docs/source/"):
        return rel.endswith(".md")
    return rel.startswith("vllm_ascend/") and rel.endswith(".py")


def fact(value: Any, source: str, **extra: Any) -> Fact:
    out: Fact = {"value": value, "source": source}
    out.update({k: v for k, v in extra.items() if v is not None})
    return out


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


# ---------------------------------------------------------------------------------------------------------
# Markdown tables.


@dataclass
class MdTable:
    """One pipe table: header cells, the line of the header, data rows (line, cells), and where it sits."""

    header: list[str]
    header_line: int
    rows: list[tuple[int, list[str]]]
    headings: list[str] = field(default_factory=list)  # the heading path above it (level 2 and deeper)
    tab: str = ""  # the tab label (`::::{tab-item} X` or mkdocs `=== "X"`) it sits in, if any


_SEPARATOR_CELL = re.compile(r"^:?-+:?$")
_HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_MYST_TAB = re.compile(r"^:{3,}\s*\{tab-item\}\s*(.*?)\s*$")
_MYST_FENCE = re.compile(r"^:{3,}\s*$")
_MKDOCS_TAB = re.compile(r'^===\+?\s+"(.*)"\s*$')


def split_row(line: str) -> list[str]:
    """The cells of a `| a | b |` line (escaped `\\|` stays inside a cell)."""
    text = line.strip()
    if text.startswith("|"):
        text = text[1:]
    if text.endswith("|") and not text.endswith("\\|"):
        text = text[:-1]
    return [cell.strip().replace("\\|", "|") for cell in re.split(r"(?<!\\)\|", text)]


def _is_separator(line: str) -> bool:
    text = line.strip()
    if not text.startswith("|"):
        return False
    cells = [c.replace(" ", "") for c in split_row(text)]
    return bool(cells) and all(_SEPARATOR_CELL.match(c) for c in cells)


def parse_markdown_tables(text: str) -> list[MdTable]:
    """Every pipe table of a markdown document, with the heading path and tab label it sits under.

    Handles indented tables (mkdocs tabs indent their content), tab-set directives of both doc systems, and
    ignores fenced code blocks. Rows keep their cell count as written; callers pad or trim by header.
    """
    lines = text.splitlines()
    tables: list[MdTable] = []
    headings: list[tuple[int, str]] = []
    tab = ""
    tab_kind = ""
    fence = ""
    i = 0
    while i < len(lines):
        raw = lines[i]
        stripped = raw.strip()
        if fence:
            if stripped.startswith(fence):
                fence = ""
            i += 1
            continue
        if stripped.startswith(("```", "~~~")):
            fence = stripped[:3]
            i += 1
            continue
        heading = _HEADING.match(raw)
        if heading:
            level = len(heading.group(1))
            headings = [h for h in headings if h[0] < level] + [(level, clean_md(heading.group(2)))]
            tab, tab_kind = "", ""
            i += 1
            continue
        myst = _MYST_TAB.match(stripped)
        mkdocs = _MKDOCS_TAB.match(stripped)
        if myst:
            tab, tab_kind = myst.group(1), "myst"
        elif mkdocs:
            tab, tab_kind = mkdocs.group(1), "mkdocs"
        elif (_MYST_FENCE.match(stripped) and tab_kind == "myst") or (
            tab_kind == "mkdocs" and stripped and not raw[:1].isspace()
        ):
            tab, tab_kind = "", ""  # the tab ends: a closing `::::`, or unindented text after mkdocs tabs
        if stripped.startswith("|") and i + 1 < len(lines) and _is_separator(lines[i + 1]):
            table = MdTable(
                header=split_row(stripped),
                header_line=i + 1,
                rows=[],
                headings=[h for lvl, h in headings if lvl >= 2],
                tab=tab,
            )
            j = i + 2
            while j < len(lines) and lines[j].strip().startswith("|"):
                table.rows.append((j + 1, split_row(lines[j])))
                j += 1
            tables.append(table)
            i = j
            continue
        i += 1
    return tables


_LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]*)\)")
_REF_LINK = re.compile(r"\[([^\]]*)\]\[([^\]]*)\]")
_ABBR = re.compile(r"<abbr[^>]*>(.*?)</abbr>", re.I)
_TAG = re.compile(r"<[^>]+>")


def clean_md(text: str) -> str:
    """Visible text of a markdown/HTML snippet: link texts, abbreviation texts, `<br>` as a space."""
    out = re.sub(r"<br\s*/?>", " ", text, flags=re.I)
    out = _ABBR.sub(r"\1", out)
    out = re.sub(r"<sup>.*?</sup>", "", out, flags=re.I)
    out = _LINK.sub(r"\1", out)
    out = _REF_LINK.sub(r"\1", out)
    out = _TAG.sub("", out)
    out = out.replace("`", "").replace("**", "")
    return re.sub(r"\s+", " ", out).strip()


def reference_links(text: str) -> dict[str, str]:
    """`[name]: url` definitions of a markdown document (lower-cased names)."""
    return {m.group(1).lower(): m.group(2) for m in re.finditer(r"^\s*\[([^\]]+)\]:\s*(\S+)", text, re.M)}


_ISSUE_URL = re.compile(r"https?://github\.com/[\w.-]+/[\w.-]+/(?:issues|pull)/\d+")


def issue_links(cells: Iterable[str], refs: dict[str, str]) -> list[str]:
    out: list[str] = []
    for cell in cells:
        urls = _ISSUE_URL.findall(cell)
        for m in _REF_LINK.finditer(cell):
            url = refs.get(m.group(2).lower(), "")
            if _ISSUE_URL.fullmatch(url):
                urls.append(url)
        out += [u for u in urls if u not in out]
    return out


def _cell(cells: list[str], index: int) -> str:
    return cells[index] if index < len(cells) else ""


# ---------------------------------------------------------------------------------------------------------
# Normalisation.

_VERSION_IN_TEXT = re.compile(r"v?\d+\.\d+(?:\.\d+)*(?:(?:rc|a|b)\d+)?(?:\.post\d+)?(?:\.dev\d+)?(?:\+[\w.]+)?")


def strip_v(text: str) -> str:
    return text[1:] if text[:1] in ("v", "V") and text[1:2].isdigit() else text


def version_key(tag: str) -> Version:
    return Version(strip_v(tag))


def is_version(text: str) -> bool:
    try:
        Version(strip_v(text))
    except InvalidVersion:
        return False
    return True


def normalise_spec(text: str) -> str:
    """`>= 3.10, < 3.13` -> `>=3.10,<3.13`; `3.9 - 3.12` -> `>=3.9,<3.13` (an inclusive minor range)."""
    raw = text.strip().strip("`")
    span = re.fullmatch(r"(\d+)\.(\d+)\s*[-~–]\s*(\d+)\.(\d+)", raw)
    if span:
        major, minor = int(span.group(3)), int(span.group(4))
        return f">={span.group(1)}.{span.group(2)},<{major}.{minor + 1}"
    return re.sub(r"\s+", "", raw)


def spec_value(spec: str) -> str:
    """The bare version when a specifier pins exactly one version (`==2.5.1` -> `2.5.1`), else the spec."""
    parts = [p for p in spec.split(",") if p]
    if len(parts) == 1 and parts[0].startswith("==") and not parts[0].startswith("==="):
        return parts[0][2:]
    if len(parts) == 1 and parts[0].startswith("==="):
        return parts[0][3:]
    return spec


def _empty(raw: str) -> bool:
    return raw.strip().strip("`").strip() in ("", "/", "-", "—", "N/A", "n/a", "NA", "None")


_MODEL_CELL = {"✅": "yes", "❌": "no", "🟡": "untested", "🔵": "experimental"}
_MODEL_STATUS = {"yes": "supported", "no": "unsupported", "untested": "untested", "experimental": "experimental"}
_MATRIX_CELL = {"✅": "full", "🟠": "partial", "❌": "none", "❔": "unknown"}
_STATUS_SYMBOL = {"supported": "✅", "unsupported": "❌", "untested": "🟡", "experimental": "🔵"}
_CANONICAL_SYMBOL = {v: k for k, v in _MODEL_CELL.items()} | {v: k for k, v in _MATRIX_CELL.items()} | {"": ""}


def model_cell(raw: str) -> str:
    """✅ yes, ❌ no, 🟡 untested, 🔵 experimental, empty ""; anything else by its first symbol, else ""."""
    text = raw.strip()
    for symbol, value in _MODEL_CELL.items():
        if text.startswith(symbol):
            return value
    if text in ("✗", "x", "X"):
        return "no"
    return ""


def model_status(raw: str) -> str:
    """supported / experimental / untested / unsupported (an empty status cell counts as untested)."""
    cell = model_cell(raw)
    if cell:
        return _MODEL_STATUS[cell]
    return "unsupported" if raw.strip().startswith("✗") else "untested"


def matrix_cell(raw: str) -> str:
    text = raw.strip()
    for symbol, value in _MATRIX_CELL.items():
        if text.startswith(symbol):
            return value
    return ""


def feature_status(raw: str) -> str:
    """functional / experimental / wip / planned / deprecated / absent ("" when the cell says nothing)."""
    text = raw.strip()
    low = text.lower()
    if not text:
        return ""
    symbols = (
        ("🟢", "functional"),
        ("⚡", "functional"),
        ("✅", "functional"),
        ("🔵", "experimental"),
        ("🚧", "wip"),
        ("🔴", "deprecated"),
        ("🟡", "planned"),
        ("✗", "absent"),
        ("❌", "absent"),
    )
    for symbol, value in symbols:
        if text.startswith(symbol):
            return value
    words = (
        ("functional", "functional"),
        ("optimized", "functional"),
        ("experimental", "experimental"),
        ("wip", "wip"),
        ("no plan", "deprecated"),
        ("deprecated", "deprecated"),
        ("planned", "planned"),
    )
    for word, value in words:
        if word in low:
            return value
    return ""


def _cells_with_raw(
    header: list[str], cells: list[str], skip: set[int], normalise: Any
) -> tuple[dict[str, str], dict[str, str]]:
    """Column -> normalised cell (non-empty only), and column -> raw text where it is not the plain symbol."""
    out: dict[str, str] = {}
    raw_out: dict[str, str] = {}
    for index, name in enumerate(header):
        if index in skip:
            continue
        raw = _cell(cells, index)
        value = normalise(raw)
        key = clean_md(name) or f"column {index + 1}"
        if value:
            out[key] = value
        if raw.strip() != _CANONICAL_SYMBOL.get(value, None):
            raw_out[key] = raw
    return out, raw_out


# ---------------------------------------------------------------------------------------------------------
# Versioning policy: compatibility rows and the release window.

_POLICY_PATHS = ("docs/source/community/versioning_policy.md", "docs/source/developer_guide/versioning_policy.md")


def _policy_column(header: str) -> str:
    low = clean_md(header).lower()
    if low in ("vllm ascend", "vllm-ascend", "vllm_ascend"):
        return "release"
    if low == "vllm":
        return "vllm"
    if low == "python":
        return "python"
    if "cann" in low:
        return "cann"
    if "pytorch" in low or "torch_npu" in low:
        return "torch/torch_npu"
    if "triton" in low:
        return "triton_ascend"
    if "mooncake" in low:
        return "mooncake"
    if "mindie" in low:
        return "mindie_turbo"
    return re.sub(r"[^a-z0-9]+", "_", low).strip("_")


def _list_or_one(values: list[str]) -> str | list[str]:
    return values[0] if len(values) == 1 else values


def _policy_value(column: str, raw: str) -> Any:
    text = raw.strip().strip("`").strip()
    if _empty(text):
        return None
    if column == "python":
        return normalise_spec(text)
    if column in ("vllm", "mooncake", "release"):
        parts = [strip_v(p.strip().strip("`")) for p in re.split(r"[/,]", text) if p.strip()]
        return _list_or_one(parts)
    if column == "cann":
        return text.replace(" ", "")
    return text


def policy_rows(tree: Tree) -> tuple[list[Fact], list[Fact]]:
    """(compatibility rows, release-window rows) of the tag's versioning policy."""
    rows: list[Fact] = []
    window: list[Fact] = []
    for path in _POLICY_PATHS:
        text = tree.read(path)
        if text is None:
            continue
        for table in parse_markdown_tables(text):
            columns = [_policy_column(h) for h in table.header]
            if columns and columns[0] == "release" and "vllm" in columns:
                rows += _policy_table_rows(tree, path, table, columns)
            elif [clean_md(h).lower() for h in table.header[:2]] == ["date", "event"]:
                window += _release_window_rows(tree, path, table)
    return rows, window


def _policy_table_rows(tree: Tree, path: str, table: MdTable, columns: list[str]) -> list[Fact]:
    out: list[Fact] = []
    for line, cells in table.rows:
        release_raw = _cell(cells, 0).strip().strip("`")
        if not is_version(release_raw):
            continue  # the `main` row of templated placeholders
        value: dict[str, Any] = {"release": "v" + strip_v(release_raw)}
        raw: dict[str, str] = {}
        for index, column in enumerate(columns[1:], start=1):
            cell = _cell(cells, index)
            if column == "torch/torch_npu":
                parts = [p.strip() for p in cell.split("/")]
                torch, npu = [*parts, "", ""][:2]
                value["torch"] = None if _empty(torch) else torch
                value["torch_npu"] = None if _empty(npu) else npu
                if len(parts) != 2:
                    raw[column] = cell
                continue
            normalised = _policy_value(column, cell)
            value[column] = normalised
            if not _same_cell(normalised, cell):
                raw[column] = cell
        if raw:
            value["raw"] = raw
        out.append(fact(value, tree.src(path, line)))
    return out


def _same_cell(normalised: Any, cell: str) -> bool:
    """Whether normalising only dropped spaces, backticks or a `v` prefix (the raw cell is then not kept)."""
    plain = re.sub(r"\s+", "", cell.strip().strip("`"))
    if normalised is None:
        return plain == ""
    return isinstance(normalised, str) and normalised in (plain, strip_v(plain))


_DATE = re.compile(r"(\d{4})[./-](\d{1,2})[./-](\d{1,2})")


def _iso_date(text: str) -> str | None:
    m = _DATE.search(text)
    if not m:
        return None
    try:
        return dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3))).isoformat()
    except ValueError:
        return None


def _release_window_rows(tree: Tree, path: str, table: MdTable) -> list[Fact]:
    out: list[Fact] = []
    for line, cells in table.rows:
        date_raw, event = _cell(cells, 0), _cell(cells, 1)
        date = _iso_date(date_raw)
        versions = [v for v in _VERSION_IN_TEXT.findall(event) if v.startswith("v")]
        if date is None or len(set(versions)) != 1:
            continue  # planned windows ("March 2025", "v0.7.1rc2 or v0.7.3rc1") name no release date
        value = {"release": versions[0], "date": date}
        out.append(fact(value, tree.src(path, line)))
    return out


# ---------------------------------------------------------------------------------------------------------
# Release notes.

_RN_PATH = "docs/source/user_guide/release_notes.md"
_RN_HEADING = re.compile(r"^##\s+(v\d+\.\d+\.\d+(?:rc\d+)?(?:\.post\d+)?)\b\s*(?:[-–—:]\s*(.*?))?\s*$")


def release_notes(tree: Tree) -> dict[str, Fact]:
    text = tree.read(_RN_PATH)
    out: dict[str, Fact] = {}
    if text is None:
        return out
    fence = False
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip().startswith("```"):
            fence = not fence
        if fence:
            continue
        m = _RN_HEADING.match(line)
        if m and m.group(1) not in out:
            rest = m.group(2) or ""
            out[m.group(1)] = fact(
                {"date": _iso_date(rest), "heading": line.strip()[3:].strip()}, tree.src(_RN_PATH, number)
            )
    return out


def release_note_lines(tree: Tree) -> list[Fact]:
    """The bullet lines of the tag's own section of its release notes (what that release says it added or
    fixed: the model mentions there are support evidence); empty when the notes have no section for the tag."""
    text = tree.read(_RN_PATH)
    if text is None:
        return []
    out: list[Fact] = []
    inside = False
    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith("## "):
            m = _RN_HEADING.match(line)
            inside = bool(m) and m.group(1) == tree.tag
            continue
        bullet = re.match(r"^\s*[-*]\s+(.*)$", line)
        if inside and bullet:
            visible = clean_md(bullet.group(1))
            if visible:
                out.append(fact(visible, tree.src(_RN_PATH, number)))
    return out


# ---------------------------------------------------------------------------------------------------------
# Tutorials: which model each runs, on which hardware.

_TUTORIAL_ROOT = "docs/source/tutorials/"
# The model a command serves: `vllm serve MODEL`, `--model MODEL`, `LLM(model="MODEL")`.
_SERVED = (
    re.compile(r"\bvllm\s+serve\s+([\"']?)([^\s\"'\\]+)\1"),
    re.compile(r"--model[=\s]+([\"']?)([^\s\"'\\]+)\1"),
    re.compile(r"\bmodel\s*=\s*([\"'])([^\"']+)\1"),
)
# A stand-in, not a model name (`your_model_path`, `$MODEL`, `{model}`, `<path>`).
_PLACEHOLDER = re.compile(r"[$<{]|your|path|model_dir|^model$|^xxx", re.I)
# How the tutorials name the hardware they run on; ascendctl maps the phrases to hardware families.
_HARDWARE_PHRASE = re.compile(
    r"Atlas[ \w/-]{0,30}?(?:A2|A3|300I(?:[ -]?Duo)?|inference products|950\w*)"
    r"|\b(?:A2|A3)\b|\b300I(?:[ -]?Duo)?|\b310P\w*|\b910[BC]\d?\b|Ascend[ -]?950\w*",
    re.I,
)


def tutorials(tree: Tree) -> list[Fact]:
    """Every tutorial page of the tag: its title, the models its commands serve, the hardware it names."""
    out: list[Fact] = []
    for path in tree.files():
        if not path.startswith(_TUTORIAL_ROOT) or not path.endswith(".md") or path.endswith("/index.md"):
            continue
        text = tree.read(path) or ""
        value = tutorial_facts(text)
        if value["models"] or value["title"]:
            out.append(fact({"path": path, **value}, tree.src(path, 1)))
    return out


def tutorial_facts(text: str) -> dict[str, Any]:
    """Title, served model names (a path's last part; placeholders dropped) and hardware phrases of one page."""
    title = ""
    models: list[str] = []
    hardware: list[str] = []
    # A benchmark's `--model qwen3` names the served name, not a checkpoint: the page's served names are dropped.
    aliases = set(re.findall(r"--served[-_]model[-_]name[=\s]+[\"']?([^\s\"'\\]+)", text))
    for line in text.splitlines():
        heading = _HEADING.match(line)
        if heading and not title and len(heading.group(1)) == 1:
            title = clean_md(heading.group(2))
        for pattern in _SERVED:
            for m in pattern.finditer(line):
                name = (
                    m.group(2).rstrip("/").rsplit("/", 1)[-1] if m.group(2).startswith(("/", ".", "~")) else m.group(2)
                )
                if name and not _PLACEHOLDER.search(name) and name not in models and name not in aliases:
                    models.append(name)
        for m in _HARDWARE_PHRASE.finditer(line):
            phrase = re.sub(r"\s+", " ", m.group(0)).strip()
            if phrase.lower() not in (h.lower() for h in hardware):
                hardware.append(phrase)
    return {"title": title, "models": models, "hardware": hardware}


# ---------------------------------------------------------------------------------------------------------
# Pins from the tag's own files.

_PIN_NAMES = {
    "torch": "torch",
    "torch-npu": "torch_npu",
    "triton-ascend": "triton_ascend",
    "transformers": "transformers",
    "vllm": "vllm",
    "mindie-turbo": "mindie_turbo",
}


def _add(pins: dict[str, list[Fact]], key: str, item: Fact) -> None:
    pins.setdefault(key, []).append(item)


def _requirement_pin(text: str) -> tuple[str, str] | None:
    try:
        req = Requirement(text.strip())
    except InvalidRequirement:
        return None
    key = _PIN_NAMES.get(canonicalize_name(req.name))
    if key is None:
        return None
    return key, ",".join(str(s) for s in req.specifier) if req.specifier else ""


def _pin_fact(spec: str, source: str, raw: str) -> Fact:
    """A requirement pin: value = the pinned version (or the specifier); spec/raw only when they add something."""
    spec = normalise_spec(spec)
    value = spec_value(spec) if spec else "(unpinned)"
    plain = re.sub(r"\s+", "", raw)
    extra_raw = raw.strip() if not plain.endswith(spec) or ";" in plain or "[" in plain else None
    return fact(value, source, raw=extra_raw)


def requirements_pins(tree: Tree, pins: dict[str, list[Fact]]) -> None:
    text = tree.read("requirements.txt")
    if text is None:
        return
    for number, line in enumerate(text.splitlines(), start=1):
        body = line.split("#", 1)[0].strip()
        if not body or body.startswith("-"):
            continue
        found = _requirement_pin(body)
        if found:
            _add(pins, found[0], _pin_fact(found[1], tree.src("requirements.txt", number), body))


def pyproject_pins(tree: Tree, pins: dict[str, list[Fact]]) -> None:
    text = tree.read("pyproject.toml")
    if text is None:
        return
    section = ""
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped.startswith("[") and not stripped.startswith(("[[", '["', "['")) and stripped.endswith("]"):
            section = stripped.strip("[]").strip()
            continue
        if stripped.startswith("#"):
            continue
        python = re.match(r"requires-python\s*=\s*[\"']([^\"']+)[\"']", stripped)
        if python:
            _add(pins, "python", _pin_fact(python.group(1), tree.src("pyproject.toml", number), stripped))
            continue
        if section not in ("build-system", "project") and not section.startswith("project."):
            continue
        for quoted in re.findall(r"[\"']([^\"']+)[\"']", stripped.split("#", 1)[0]):
            found = _requirement_pin(quoted)
            if found:
                _add(pins, found[0], _pin_fact(found[1], tree.src("pyproject.toml", number), quoted))


def setup_pins(tree: Tree, pins: dict[str, list[Fact]]) -> None:
    text = tree.read("setup.py")
    if text is None:
        return
    for m in re.finditer(r"python_requires\s*=\s*[\"']([^\"']+)[\"']", text):
        _add(pins, "python", _pin_fact(m.group(1), tree.src("setup.py", line_of(text, m.start())), m.group(0)))


def pkg_info_pins(tree: Tree, pins: dict[str, list[Fact]]) -> None:
    text = tree.read("PKG-INFO")
    if text is None:
        return
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            break  # the description body follows the headers
        if line.startswith("Requires-Python:"):
            spec = line.split(":", 1)[1]
            _add(pins, "python", _pin_fact(spec, tree.src("PKG-INFO", number), line))
        elif line.startswith("Requires-Dist:"):
            found = _requirement_pin(line.split(":", 1)[1])
            if found:
                _add(pins, found[0], _pin_fact(found[1], tree.src("PKG-INFO", number), line))


_README_PATTERNS = (
    ("python", re.compile(r"\bPython\s*((?:[<>=!~]=?\s*[\d.]+\s*,?\s*)+)")),
    ("cann", re.compile(r"\bCANN\s*((?:[<>=!~]=?)\s*[\w.-]+)")),
    ("torch", re.compile(r"\bPyTorch\s*((?:[<>=!~]=?)\s*[\w.+]+)")),
    ("torch_npu", re.compile(r"(?:torch-npu|torch_npu|TorchNPU)\s*((?:[<>=!~]=?)\s*[\w.+]+)", re.I)),
)


def readme_pins(tree: Tree, pins: dict[str, list[Fact]]) -> None:
    text = tree.read("README.md")
    if text is None:
        return
    inside = False
    for number, line in enumerate(text.splitlines(), start=1):
        heading = _HEADING.match(line)
        if heading:
            inside = "prerequisite" in heading.group(2).lower()
            continue
        if not inside:
            continue
        src = tree.src("README.md", number)
        body = line.strip().lstrip("-*").strip()
        for key in ("Hardware", "OS"):
            if body.startswith(key + ":"):
                _add(pins, "readme_" + key.lower(), fact(body.split(":", 1)[1].strip(), src))
        for key, pattern in _README_PATTERNS:
            m = pattern.search(body)
            if m:
                spec = normalise_spec(m.group(1).rstrip(", "))
                _add(pins, key, fact(spec_value(spec), src, raw=body))
        vllm = re.search(r"\bvLLM\s*(?:([<>=!~]=?)\s*(v?[\d.]+\w*))?\s*(\(.*\))?", body)
        if vllm and body.startswith("vLLM") and vllm.group(2):
            spec = normalise_spec(vllm.group(1) + strip_v(vllm.group(2)))
            _add(pins, "vllm", fact(spec_value(spec), src, raw=body))


# Dockerfiles ------------------------------------------------------------------------------------------------

_DOCKERFILE_NAME = re.compile(r"^Dockerfile(?:\.[\w.-]+)?$")
_SOC_FAMILY = {"": "a2", "a3": "a3", "310p": "300i-duo", "a5": "950"}


def image_key(dockerfile: str) -> str:
    """`Dockerfile` a2, `.a3` a3, `.310p` 300i-duo, `.a5` 950; `.openEuler` appends `-openeuler`."""
    parts = dockerfile.split(".")[1:]
    openeuler = bool(parts) and parts[-1].lower() == "openeuler"
    if openeuler:
        parts = parts[:-1]
    soc = ".".join(parts)
    family = _SOC_FAMILY.get(soc.lower(), f"dockerfile:{soc}")
    return family + ("-openeuler" if openeuler else "")


def root_dockerfiles(tree: Tree) -> list[str]:
    return sorted(p for p in tree.files() if "/" not in p and _DOCKERFILE_NAME.match(p))


def _parse_base_image(image: str) -> dict[str, str]:
    """`quay.io/ascend/cann:9.1.0-beta.1-310p-ubuntu22.04-py3.12` -> cann, chip, os, python."""
    tag = image.rsplit(":", 1)[1] if ":" in image.rsplit("/", 1)[-1] else ""
    parts = tag.split("-")
    out: dict[str, str] = {"image": image}
    if len(parts) >= 3 and parts[-1].startswith("py"):
        out["python"] = parts[-1][2:]
        os_index = next((i for i, p in enumerate(parts) if re.match(r"(ubuntu|openeuler|centos|debian)", p)), -1)
        if os_index >= 2:
            out["os"] = parts[os_index]
            out["chip"] = parts[os_index - 1]
            out["cann"] = "-".join(parts[: os_index - 1])
    return out


_DOCKER_PIP = re.compile(r"\b(torch[-_]npu|triton[-_]ascend|transformers|torch)\s*==\s*([\w.+!-]+?)(?=['\"\s\\;&|]|$)")
_DOCKER_WHEEL = re.compile(r"\b(torch_npu|triton_ascend)-(\d[\w.%+]*?)-(?=cp\d|py\d|\$)")


def _expand_args(text: str, args: dict[str, str]) -> str:
    """`${NAME}` / `$NAME` replaced by the ARG default seen so far (left as written when unknown)."""
    return re.sub(r"\$\{?(\w+)\}?", lambda m: args.get(m.group(1), m.group(0)), text)


def dockerfile_facts(tree: Tree, pins: dict[str, list[Fact]]) -> dict[str, Fact]:
    out: dict[str, Fact] = {}
    for name in root_dockerfiles(tree):
        text = tree.read(name) or ""
        args: dict[str, str] = {}
        info: dict[str, Any] = {"family": image_key(name), "args": {}}
        for number, line in enumerate(text.splitlines(), start=1):
            stripped = line.strip()
            src = tree.src(name, number)
            arg = re.match(r"^ARG\s+(\w+)(?:\s*=\s*(.*))?$", stripped)
            if arg:
                value = (arg.group(2) or "").strip().strip("\"'")
                args[arg.group(1)] = value
                if arg.group(1) != "PIP_INDEX_URL":
                    info["args"][arg.group(1)] = value
                if arg.group(1) == "VLLM_TAG" and value:
                    _add(pins, "vllm", fact(strip_v(value), src))
                elif arg.group(1) == "MOONCAKE_TAG" and value:
                    _add(pins, "mooncake_image", fact(strip_v(value), src))
                elif arg.group(1) == "SOC_VERSION" and value:
                    _add(pins, "soc_version", fact(value, src))
                elif arg.group(1) == "CANN_VERSION" and value:
                    _add(pins, "cann", fact(value, src))
                continue
            base = re.match(r"^FROM\s+(\S+)", stripped, re.I)
            if base and "base" not in info:
                image = _expand_args(base.group(1), args)
                parsed = _parse_base_image(image)
                info["base"] = fact(parsed, src)
                _add(pins, "base_image", fact(image, src))
                if "cann" in parsed:
                    _add(pins, "cann", fact(parsed["cann"], src, raw=image))
                if "python" in parsed:
                    _add(pins, "image_python", fact(parsed["python"], src, raw=image))
                continue
            if stripped.startswith("#"):
                continue
            for m in _DOCKER_PIP.finditer(line):
                key = _PIN_NAMES[canonicalize_name(m.group(1))]
                _add(pins, key, fact(m.group(2), src, raw=m.group(0)))
            for m in _DOCKER_WHEEL.finditer(line):
                key = _PIN_NAMES[canonicalize_name(m.group(1))]
                version = unquote(m.group(2))
                _add(pins, key, fact(version, src, raw=m.group(0).rstrip("-")))
        source = info["base"]["source"] if "base" in info else tree.src(name, 1)
        if "base" in info:
            info["base"] = info["base"]["value"]
        out[name] = fact(info, source)
    return out


# Image workflows --------------------------------------------------------------------------------------------

_WF_FILE = re.compile(r"^\s*-?\s*(?:file|dockerfile)\s*:\s*['\"]?([^'\"\s#]+)")
_WF_DASH_F = re.compile(r"(?:^|\s)-f\s+['\"]?(Dockerfile[\w.-]*)")
_WF_BUILD_PUSH = re.compile(r"^(\s*)-?\s*uses:\s*docker/build-push-action")


def _tag_triggered(text: str) -> bool:
    """Whether the workflow runs on a tag push (`on: push: tags:`)."""
    m = re.search(r"^on:\s*$(.*?)^\S", text + "\nEND", re.M | re.S)
    block = m.group(1) if m else ""
    push = re.search(r"^(\s+)push:\s*$(.*?)(?=^\1\S|\Z)", block, re.M | re.S)
    return bool(push and re.search(r"^\s+tags:", push.group(2), re.M))


def image_workflows(tree: Tree) -> tuple[dict[str, Fact], dict[str, Fact], list[Fact]]:
    """(image key -> workflow line that builds it, unbuilt root Dockerfiles, the image workflows read)."""
    built: dict[str, Fact] = {}
    workflows: list[Fact] = []
    paths = sorted(
        p
        for p in tree.files()
        if p.startswith(".github/workflows/") and p.count("/") == 2 and "image" in p.rsplit("/", 1)[1].lower()
    )
    for path in paths:
        text = tree.read(path) or ""
        lines = text.splitlines()
        triggered = _tag_triggered(text)
        workflows.append(fact({"path": path, "tag_trigger": triggered}, tree.src(path, 1)))
        found: list[tuple[str, int]] = []
        for index, line in enumerate(lines):
            if line.lstrip().startswith("#"):
                continue
            for pattern in (_WF_FILE, _WF_DASH_F):
                m = pattern.search(line)
                if m and _DOCKERFILE_NAME.match(m.group(1)):
                    found.append((m.group(1), index + 1))
            step = _WF_BUILD_PUSH.match(line)
            if step and not _step_has_file(lines, index, len(step.group(1))):
                found.append(("Dockerfile", index + 1))
        for dockerfile, number in found:
            key = image_key(dockerfile)
            if key not in built:
                built[key] = fact(
                    {"dockerfile": dockerfile, "workflow": path, "tag_trigger": triggered}, tree.src(path, number)
                )
    unbuilt = {
        image_key(name): fact(name, tree.src(name, 1))
        for name in root_dockerfiles(tree)
        if image_key(name) not in built
    }
    return built, unbuilt, workflows


def _step_has_file(lines: list[str], start: int, indent: int) -> bool:
    """Whether the build-push-action step starting at `start` sets `file:` before the next step."""
    for line in lines[start + 1 :]:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        current = len(line) - len(line.lstrip())
        if current <= indent and line.lstrip().startswith("- "):
            return False
        if current < indent:
            return False
        if re.match(r"^\s*file\s*:", line):
            return True
    return False


# ---------------------------------------------------------------------------------------------------------
# Quantization registry, registered methods, and the `--quantization` parser hook.

_QUANT_DIRS = ("vllm_ascend/quantization/", "vllm_ascend/_310p/quantization/")
_BUILD_METHODS = {"build_linear_method": "linear", "build_moe_method": "moe", "build_attention_method": "attention"}


def _constants(tree: Tree, *paths: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for path in paths:
        module = _parse_python(tree.read(path))
        if module is None:
            continue
        for node in module.body:
            target, value = _assignment(node)
            if target and isinstance(value, ast.Constant) and isinstance(value.value, str):
                out[target] = value.value
    return out


def _parse_python(text: str | None) -> ast.Module | None:
    if text is None:
        return None
    try:
        return ast.parse(text)
    except SyntaxError:
        return None


def _assignment(node: ast.stmt) -> tuple[str, ast.expr | None]:
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id, node.value
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id, node.value
    return "", None


def _string(node: ast.expr, constants: dict[str, str]) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return constants.get(node.id)
    return None


def _call_name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def quantization(tree: Tree) -> dict[str, Any]:
    files = sorted(p for p in tree.files() if p.startswith(_QUANT_DIRS) and p.endswith(".py"))
    constants = _constants(tree, "vllm_ascend/utils.py")
    schemes: list[Fact] = []
    registries: list[Fact] = []
    methods: list[Fact] = []
    for path in files:
        text = tree.read(path)
        module = _parse_python(text)
        if module is None:
            continue
        scope = "310p" if path.startswith("vllm_ascend/_310p/") else "all"
        local = constants | _constants(tree, path)
        classes = {n.name: n for n in ast.walk(module) if isinstance(n, ast.ClassDef)}
        if PurePosixPath(path).name == "registry.py":
            for node in module.body:
                if isinstance(node, ast.FunctionDef) and node.name == "register_scheme":
                    registries.append(fact({"kind": "register_scheme", "scope": scope}, tree.src(path, node.lineno)))
        else:
            for cls in classes.values():
                for deco in cls.decorator_list:
                    if isinstance(deco, ast.Call) and _call_name(deco.func) == "register_scheme" and deco.args:
                        qtype = _string(deco.args[0], local)
                        layer = (_string(deco.args[1], local) if len(deco.args) > 1 else None) or ""
                        if qtype:
                            value = {"type": qtype, "layer": layer, "scope": scope, "registry": "register_scheme"}
                            schemes.append(fact(value, tree.src(path, deco.lineno), cls=cls.name))
        for node in module.body:
            name, value_node = _assignment(node)
            if name in ("SUPPORT_ASCEND_QUANTIZER_TYPE", "ASCEND_QUANTIZATION_METHOD_MAP") and isinstance(
                value_node, ast.Dict
            ):
                registries.append(fact({"kind": name, "scope": scope}, tree.src(path, node.lineno)))
                schemes += _dict_registry(tree, path, name, value_node, classes, local, scope)
            elif name == "CUSTOMIZED_QUANTIZER_TYPE" and text and "mindie_turbo" in text:
                registries.append(fact({"kind": "mindie_turbo", "scope": scope}, tree.src(path, node.lineno)))
        for call in ast.walk(module):
            if isinstance(call, ast.Call) and _call_name(call.func) == "register_quantization_config" and call.args:
                method = _string(call.args[0], local)
                if method:
                    methods.append(fact({"method": method, "scope": scope}, tree.src(path, call.lineno)))
    return {
        "quantization_schemes": schemes,
        "quantization_registry": registries,
        "quantization_methods": methods,
        "quantization_cli": quantization_cli(tree, constants),
    }


def _dict_registry(
    tree: Tree,
    path: str,
    name: str,
    node: ast.Dict,
    classes: dict[str, ast.ClassDef],
    constants: dict[str, str],
    scope: str,
) -> list[Fact]:
    out: list[Fact] = []
    for key, value in zip(node.keys, node.values, strict=True):
        qtype = _string(key, constants) if key is not None else None
        if qtype is None or key is None:
            continue
        layers: list[str] = []
        if isinstance(value, ast.Dict):  # {"W8A8": {"linear": ..., "moe": ...}}
            layers = [s for s in (_string(k, constants) for k in value.keys if k is not None) if s]
        elif isinstance(value, ast.Name) and value.id in classes:  # {"W8A8": W8A8Quantizer}
            layers = _quantizer_layers(classes[value.id])
        for layer in layers or [""]:
            item = {"type": qtype, "layer": layer, "scope": scope, "registry": name}
            out.append(fact(item, tree.src(path, key.lineno)))
    return out


def _quantizer_layers(cls: ast.ClassDef) -> list[str]:
    """Layers whose build_*_method the quantizer class implements (not just `raise NotImplementedError`)."""
    out: list[str] = []
    for node in cls.body:
        if isinstance(node, ast.FunctionDef) and node.name in _BUILD_METHODS:
            raises_only = all(isinstance(s, ast.Raise) for s in node.body if not isinstance(s, ast.Expr))
            if not raises_only:
                out.append(_BUILD_METHODS[node.name])
    return out


def quantization_cli(tree: Tree, constants: dict[str, str]) -> Fact:
    """Whether the platform's parser hook appends `ascend` to the `--quantization` choices."""
    path = "vllm_ascend/platform.py"
    text = tree.read(path)
    module = _parse_python(text)
    if module is None:
        return fact({"adds_ascend": False, "supported_quantization": []}, tree.src(path, 1))
    local = constants | _constants(tree, path)
    supported: list[str] = []
    supported_line = 0
    for node in ast.walk(module):
        if not isinstance(node, (ast.Assign, ast.AnnAssign)):
            continue
        name, assigned = _assignment(node)
        if name == "supported_quantization" and isinstance(assigned, ast.List):
            supported = [s for s in (_string(e, local) for e in assigned.elts) if s]
            supported_line = node.lineno
    for func in ast.walk(module):
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(func):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "append"
                and isinstance(node.func.value, ast.Attribute)
                and node.func.value.attr == "choices"
                and node.args
            ):
                appended = _string(node.args[0], local)
                hooked: dict[str, Any] = {
                    "adds_ascend": appended == "ascend",
                    "appended": appended,
                    "hook": func.name,
                    "supported_quantization": supported,
                }
                return fact(hooked, tree.src(path, node.lineno))
    absent = {"adds_ascend": False, "appended": None, "hook": None, "supported_quantization": supported}
    return fact(absent, tree.src(path, supported_line or 1))


# ---------------------------------------------------------------------------------------------------------
# Support tables: models, features, feature matrix.

_MODEL_PATHS = (
    "docs/source/user_guide/support_matrix/supported_models.md",
    "docs/source/user_guide/supported_models.md",
)
_FEATURE_PATHS = (
    "docs/source/user_guide/support_matrix/supported_features.md",
    "docs/source/user_guide/supported_features.md",
    "docs/source/user_guide/suppoted_features.md",
)
_FEATURE_MATRIX_PATHS = ("docs/source/user_guide/support_matrix/feature_matrix.md",)
_ROLE_NAMES = {
    "name": ("model", "models", "feature", "features", "name"),
    "status": ("support", "supported", "status", "state"),
    "note": ("note", "notes", "next step", "comment", "comments"),
    "hardware": ("supported hardware", "hardware"),
    "doc": ("doc", "docs", "tutorial", "tutorials"),
    "max_model_len": ("max-model-len", "max model len", "max_model_len"),
}


def _roles(header: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for index, name in enumerate(header):
        low = clean_md(name).lower()
        for role, names in _ROLE_NAMES.items():
            if low in names and role not in out:
                out[role] = index
    out.setdefault("name", 0)
    return out


def _first(paths: Sequence[str], tree: Tree) -> tuple[str, str] | None:
    for path in paths:
        text = tree.read(path)
        if text is not None:
            return path, text
    return None


def _doc_target(raw: str) -> str:
    links = _LINK.findall(raw)
    return " ".join(url for _, url in links) if links else raw.strip()


def model_table(tree: Tree) -> dict[str, Any] | None:
    found = _first(_MODEL_PATHS, tree)
    if found is None:
        return None
    path, text = found
    refs = reference_links(text)
    tables: list[Fact] = []
    rows: list[Fact] = []
    for table in parse_markdown_tables(text):
        roles = _roles(table.header)
        if clean_md(_cell(table.header, roles["name"])).lower() not in _ROLE_NAMES["name"]:
            continue
        category = " / ".join(table.headings)
        columns = [clean_md(h) for h in table.header]
        table_value = {"category": category, "group": table.tab, "columns": columns}
        tables.append(fact(table_value, tree.src(path, table.header_line)))
        skip = set(roles.values())
        for line, cells in table.rows:
            name = _cell(cells, roles["name"]).strip()
            if not name:
                continue
            status_raw = _cell(cells, roles["status"]).strip() if "status" in roles else ""
            status = model_status(status_raw)
            value: dict[str, Any] = {"name": name, "table": len(tables) - 1, "status": status}
            if status_raw != _STATUS_SYMBOL[status]:
                value["status_raw"] = status_raw
            for role in ("note", "hardware", "max_model_len"):
                if role in roles and _cell(cells, roles[role]).strip():
                    value[role] = _cell(cells, roles[role]).strip()
            issues = issue_links([_cell(cells, roles.get("note", -1)), status_raw, name], refs)
            if issues:
                value["issues"] = issues
            normalised, raw = _cells_with_raw(table.header, cells, skip, model_cell)
            if normalised:
                value["cells"] = normalised
            if raw:
                value["cells_raw"] = raw
            extra = [c for c in cells[len(table.header) :] if c.strip()]
            if extra:
                value["extra_cells"] = extra
            links = doc_links(path, cells)
            if links:
                value["links"] = links
            rows.append(fact(value, tree.src(path, line)))
    return {"path": path, "tables": tables, "rows": rows}


def doc_links(page: str, cells: Iterable[str]) -> list[str]:
    """The repository paths of the markdown pages a table row links (its tutorial), resolved from `page`."""
    out: list[str] = []
    for cell in cells:
        for _, url in _LINK.findall(cell):
            target = url.split("#", 1)[0]
            if not target.endswith(".md") or "://" in target:
                continue
            resolved = posixpath.normpath(posixpath.join(posixpath.dirname(page), unquote(target)))
            if resolved not in out:
                out.append(resolved)
    return out


def feature_table(tree: Tree) -> dict[str, Any] | None:
    found = _first(_FEATURE_PATHS, tree)
    if found is None:
        return None
    path, text = found
    refs = reference_links(text)
    rows: list[Fact] = []
    columns_seen: list[str] = []
    for table in parse_markdown_tables(text):
        roles = _roles(table.header)
        if clean_md(_cell(table.header, roles["name"])).lower() not in _ROLE_NAMES["name"]:
            continue
        status_columns = [
            i for i in range(len(table.header)) if i not in (roles["name"], roles.get("note", -1), roles.get("doc", -1))
        ]
        names = [clean_md(table.header[i]) for i in status_columns]
        columns_seen += [n for n in names if n not in columns_seen]
        primary = _primary_status_column(names)
        for line, cells in table.rows:
            name = clean_md(_cell(cells, roles["name"]))
            if not name:
                continue
            statuses = {}
            for index, column in zip(status_columns, names, strict=True):
                raw = _cell(cells, index).strip()
                statuses[column] = {"status": feature_status(raw), "raw": raw}
            main = statuses.get(primary, {"status": "", "raw": ""})
            value: dict[str, Any] = {"name": name, "status": main["status"], "status_raw": main["raw"]}
            if len(statuses) > 1:
                value["statuses"] = statuses
            note = _cell(cells, roles["note"]).strip() if "note" in roles else ""
            if note:
                value["note"] = note
            issues = issue_links([note, main["raw"]], refs)
            if issues:
                value["issues"] = issues
            rows.append(fact(value, tree.src(path, line)))
    return {"path": path, "status_columns": columns_seen, "rows": rows}


def _primary_status_column(names: list[str]) -> str:
    """The column `status` reports: `Status`, else the V1-engine column, else the first status column."""
    for name in names:
        if name.lower() == "status":
            return name
    for name in names:
        if "v1" in name.lower():
            return name
    return names[0] if names else ""


def feature_matrix(tree: Tree) -> dict[str, Any] | None:
    found = _first(_FEATURE_MATRIX_PATHS, tree)
    if found is None:
        return None
    path, text = found
    rows: list[Fact] = []
    columns: list[str] = []
    for table in parse_markdown_tables(text):
        if clean_md(_cell(table.header, 0)).lower() != "feature":
            continue
        columns = [clean_md(h) for h in table.header[1:]]
        for line, cells in table.rows:
            name = clean_md(_cell(cells, 0))
            if not name:
                continue
            normalised, raw = _cells_with_raw(table.header, cells, {0}, matrix_cell)
            value: dict[str, Any] = {"name": name, "cells": normalised}
            if raw:
                value["cells_raw"] = {k: v for k, v in raw.items() if v.strip()}
            rows.append(fact(value, tree.src(path, line)))
    footnotes: dict[str, Fact] = {}
    for number, text_line in enumerate(text.splitlines(), start=1):
        m = re.match(r"^\s*[-*]\s*<sup>(\w+)</sup>\s*(.*)$", text_line)
        if m:
            footnotes[m.group(1)] = fact(m.group(2).strip(), tree.src(path, number))
    return {"path": path, "columns": columns, "rows": rows, "footnotes": footnotes}


# ---------------------------------------------------------------------------------------------------------
# One release.


def extract_tree(tree: Tree, commit: str | None, commit_date: str | None, commit_source: str) -> dict[str, Any]:
    pins: dict[str, list[Fact]] = {}
    dockerfiles = dockerfile_facts(tree, pins)
    requirements_pins(tree, pins)
    pyproject_pins(tree, pins)
    setup_pins(tree, pins)
    pkg_info_pins(tree, pins)
    readme_pins(tree, pins)
    policy, window = policy_rows(tree)
    images, unbuilt, workflows = image_workflows(tree)
    mooncake = list(pins.get("mooncake_image", []))
    out: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "tag": tree.tag,
        "commit": fact(commit, commit_source),
        "commit_date": fact(commit_date, commit_source),
        "policy_rows": policy,
        "release_window": window,
        "pins": pins,
        "dockerfiles": dockerfiles,
        "images": images,
        "dockerfiles_unbuilt": unbuilt,
        "image_workflows": workflows,
        "mooncake_image": mooncake,
        "release_notes": release_notes(tree),
        "release_note_lines": release_note_lines(tree),
        "tutorials": tutorials(tree),
        "models": model_table(tree),
        "features": feature_table(tree),
        "feature_matrix": feature_matrix(tree),
    }
    out.update(quantization(tree))
    return out


def extract_git_tag(repo: Path, tag: str) -> dict[str, Any]:
    tree = GitTree(repo, tag)
    sha, when = tree.commit()
    return extract_tree(tree, sha, when[:10], f"{tag}:refs/tags/{tag}:1")


# The PyPI-only release ------------------------------------------------------------------------------------------


def pypi_record(version: str) -> dict[str, Any] | None:
    """PyPI's file record of the release's sdist, with the project `info` under `_info` (None when offline)."""
    try:
        with urllib.request.urlopen(PYPI_JSON_URL, timeout=60) as response:
            project: dict[str, Any] = json.load(response)
    except OSError:
        return None
    files = project.get("releases", {}).get(version, [])
    record = next((f for f in files if f.get("packagetype") == "sdist" or f["filename"].endswith(".tar.gz")), None)
    if record is None:
        return None
    return {**record, "_info": project.get("info", {})}


def fetch_sdist(version: str, record: dict[str, Any] | None, cache: Path) -> Path:
    """The release's sdist, downloaded once into `cache` and checked against PyPI's sha256."""
    name = record["filename"] if record else f"vllm_ascend-{version}.tar.gz"
    path = cache / name
    if not path.exists():
        if record is None:
            raise SystemExit(f"no sdist for {PYPI_PROJECT}=={version} on PyPI and none cached at {path}")
        url = str(record["url"])
        if not url.startswith("https://"):  # some indexes answer relative links (`../../packages/...`)
            url = PYPI_FILES + url[url.rfind("packages/") :]
        cache.mkdir(parents=True, exist_ok=True)
        with urllib.request.urlopen(url, timeout=300) as response:  # noqa: S310 - an https PyPI file URL
            path.write_bytes(response.read())
    expected = (record or {}).get("digests", {}).get("sha256")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if expected and digest != expected:
        raise SystemExit(f"{path}: sha256 {digest} does not match PyPI's {expected}")
    return path


def extract_post(version: str, sdist: Path, record: dict[str, Any] | None) -> dict[str, Any]:
    tag = "v" + strip_v(version)
    tree = SdistTree(sdist, tag)
    commit: str | None = None
    commit_src = tree.src("PKG-INFO", 1)
    version_py = tree.read("vllm_ascend/_version.py") or ""
    for number, line in enumerate(version_py.splitlines(), start=1):
        m = re.search(r"commit_id\s*=\s*['\"]g?([0-9a-f]{7,40})['\"]", line)
        if m:
            commit, commit_src = m.group(1), tree.src("vllm_ascend/_version.py", number)
    pypi_src = f"{tag}:PyPI:{PYPI_JSON_LABEL}:1"
    upload = (record or {}).get("upload_time_iso_8601")
    if upload:
        date, date_src = upload[:10], pypi_src
    else:
        with tarfile.open(sdist, "r:gz") as tar:
            first = next(iter(tar.getmembers()))
        date, date_src = dt.datetime.fromtimestamp(first.mtime, tz=dt.timezone.utc).date().isoformat(), commit_src
    out = extract_tree(tree, commit, date, commit_src)
    out["commit_date"] = fact(date, date_src)
    digest = hashlib.sha256(sdist.read_bytes()).hexdigest()
    sdist_value = {"filename": sdist.name, "sha256": digest, "upload_time": upload}
    out["sdist"] = fact(sdist_value, pypi_src if upload else commit_src)
    info = (record or {}).get("_info") or {}
    if info.get("version") == strip_v(version):
        json_pins: dict[str, list[Fact]] = {}
        if info.get("requires_python"):
            _add(json_pins, "python", _pin_fact(info["requires_python"], pypi_src, info["requires_python"]))
        for requirement in info.get("requires_dist") or []:
            found = _requirement_pin(requirement)
            if found:
                _add(json_pins, found[0], _pin_fact(found[1], pypi_src, requirement))
        out["pypi_json_pins"] = json_pins
    return out


# ---------------------------------------------------------------------------------------------------------
# Command line.


def all_tags(repo: Path) -> list[str]:
    out = subprocess.run(["git", "-C", str(repo), "tag"], check=True, capture_output=True, text=True).stdout
    tags = [t for t in out.split() if is_version(t)]
    return sorted(tags, key=version_key)


def summary(data: dict[str, Any]) -> str:
    models = data.get("models") or {}
    features = data.get("features") or {}
    return (
        f"policy={len(data['policy_rows'])} rn={len(data['release_notes'])} "
        f"pins={sum(len(v) for v in data['pins'].values())} images={len(data['images'])} "
        f"unbuilt={len(data['dockerfiles_unbuilt'])} quant={len(data['quantization_schemes'])} "
        f"cli={'ascend' if data['quantization_cli']['value']['adds_ascend'] else '-'} "
        f"models={len(models.get('rows', []))} features={len(features.get('rows', []))} "
        f"matrix={len((data.get('feature_matrix') or {}).get('rows', []))}"
    )


def write(data: dict[str, Any], out_dir: Path) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{data['tag']}.json"
    path.write_text(json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--repo", type=Path, default=DEFAULT_REPO, help="vllm-ascend git repository (bare is fine)")
    parser.add_argument("--tags", nargs="*", help="tags to extract (default: every version tag)")
    parser.add_argument("--pypi-post", default=DEFAULT_POST, help="PyPI-only release to add ('none' to skip)")
    parser.add_argument("--pypi-sdist", type=Path, help="use this sdist file instead of downloading it")
    cache = Path(tempfile.gettempdir()) / "ascendctl-upstream-cache"
    parser.add_argument("--cache", type=Path, default=cache, help="where the downloaded sdist is kept")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder")
    args = parser.parse_args(argv)
    post = "v" + strip_v(args.pypi_post) if args.pypi_post.lower() != "none" else ""
    wanted = list(args.tags or [])
    tags = [t for t in wanted if t != post] if wanted else all_tags(args.repo)
    for tag in tags:
        data = extract_git_tag(args.repo, tag)
        path = write(data, args.out)
        print(f"{tag:<14} {summary(data)} ({path.stat().st_size // 1024} KiB)", flush=True)
    if post and (not wanted or post in wanted):
        record = pypi_record(strip_v(post))
        sdist = args.pypi_sdist or fetch_sdist(strip_v(post), record, args.cache)
        data = extract_post(strip_v(post), sdist, record)
        path = write(data, args.out)
        print(f"{data['tag']:<14} {summary(data)} ({path.stat().st_size // 1024} KiB)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
