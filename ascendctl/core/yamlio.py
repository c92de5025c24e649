"""The one YAML load boundary: safe, bounded, strict, and located.

Every YAML document ascendctl reads from a user (profiles, facts files) comes through `load_yaml_file`
or `load_yaml_text`. It:
- reads at most `MAX_BYTES` and requires UTF-8 (a BOM is accepted);
- uses PyYAML's *safe* composer only (no Python tags);
- rejects duplicate mapping keys (YAML says they are an error; PyYAML silently keeps the last);
- bounds the document: more than `MAX_EXPANDED_NODES` nodes fails while composing (so a large flat
  document is refused in well under a second), and so does nesting deeper than `MAX_DEPTH`;
- bounds anchors/aliases: a document whose aliases would expand past `MAX_EXPANDED_NODES` nodes or
  `MAX_DEPTH` levels (the "billion laughs" bomb) or that refers to itself fails fast, before anything
  walks the expansion;
- accepts only plain mappings, sequences and scalars: a collection tag such as `!!set`, `!!omap` or
  `!!python/object` is an error, as a scalar tag the safe loader does not know already is;
- keeps the position of every key and value so later validation errors can say `file:line:col`.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import field
from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from ascendctl.core.errors import DocumentError, Issue
from ascendctl_engine.records import record

# A profile is a few KiB. The cap also bounds the time to refuse a broken file (the 1 s budget): libyaml scans
# it, but PyYAML's pure-Python scanner (used where PyYAML was built without libyaml) needs ~0.5 s per MiB.
MAX_BYTES = 256 * 1024
MAX_ALIASES = 256
# A real profile has a few hundred nodes. Composing costs ~15 µs a node in pure-Python PyYAML, so this
# cap also bounds the time to refuse an oversized document (~0.3 s on a laptop core).
MAX_EXPANDED_NODES = 20_000
MAX_DEPTH = 64

KeyPath = tuple[str | int, ...]


@record
class Mark:
    """1-based position of a key (where unknown-key errors point) and of its value."""

    key_line: int
    key_column: int
    value_line: int
    value_column: int


@record(frozen=False)
class YamlDocument:
    """Plain Python data of one document, plus where each key path sits in the source."""

    source: str
    data: Any
    marks: dict[KeyPath, Mark] = field(default_factory=dict)

    def issue(self, path: KeyPath, message: str, *, at_key: bool = False) -> Issue:
        """An `Issue` located at the deepest position known for `path`."""
        probe = path
        while probe and probe not in self.marks:
            probe = probe[:-1]
        mark = self.marks.get(probe)
        if mark is None:
            line, column = 1, 1
        elif at_key and probe == path:
            line, column = mark.key_line, mark.key_column
        else:
            line, column = mark.value_line, mark.value_column
        return Issue(self.source, line, column, dotted(path), message)


def dotted(path: KeyPath) -> str:
    """`a.b[0].c`; a key that would not read back as one dotted segment is quoted: `a['x.y']`, `a['\\n']`."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif not part or "." in part or "[" in part or not part.isprintable():
            out += f"[{part!r}]"
        else:
            out += f".{part}" if out else part
    return out


def _one_line(text: str) -> str:
    return " ".join(text.split())


def load_yaml_file(path: Path) -> YamlDocument:
    source = str(path)
    try:
        # O_NONBLOCK: opening a FIFO never waits for a writer; then only a regular file is read at all.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        with os.fdopen(fd, "rb") as fh:
            mode = os.fstat(fh.fileno()).st_mode
            if stat.S_ISDIR(mode):
                raise IsADirectoryError
            if not stat.S_ISREG(mode):
                raise DocumentError([Issue(source, 0, 0, "", "is not a regular file (a FIFO, socket or device)")])
            raw = fh.read(MAX_BYTES + 1)
    except FileNotFoundError:
        raise DocumentError([Issue(source, 0, 0, "", "file not found")]) from None
    except IsADirectoryError:
        raise DocumentError([Issue(source, 0, 0, "", "is a directory, expected a YAML file")]) from None
    except OSError as exc:
        raise DocumentError([Issue(source, 0, 0, "", f"cannot read: {exc.strerror or exc}")]) from None
    if len(raw) > MAX_BYTES:
        raise DocumentError(
            [
                Issue(
                    source,
                    1,
                    1,
                    "",
                    f"file is larger than {MAX_BYTES // 1024} KiB; is this really a profile?",
                )
            ]
        )
    return load_yaml_bytes(raw, source)


def load_yaml_bytes(raw: bytes, source: str) -> YamlDocument:
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        before = raw[: exc.start]
        line = before.count(b"\n") + 1
        line_start = before[before.rfind(b"\n") + 1 :]
        column = len(line_start.decode("utf-8", errors="replace")) + 1
        raise DocumentError(
            [Issue(source, line, column, "", f"not UTF-8 text (byte 0x{raw[exc.start]:02x})")]
        ) from None
    return load_yaml_text(text, source)


def load_yaml_text(text: str, source: str) -> YamlDocument:
    if len(text.encode("utf-8", errors="surrogatepass")) > MAX_BYTES:
        raise DocumentError([Issue(source, 1, 1, "", f"document is larger than {MAX_BYTES // 1024} KiB")])
    loader: _BoundedLoader | None = None
    try:
        yaml.reader.Reader(text)  # PyYAML's reader checks every character here, before any parsing
        loader = _BoundedLoader(text)
        root = loader.get_single_node()
    except yaml.reader.ReaderError as exc:
        line, column = _line_col(text, _char_index(text, exc, loader))
        char = f"U+{exc.character:04X}" if isinstance(exc.character, int) else repr(exc.character)
        raise DocumentError(
            [Issue(source, line, column, "", f"character {char} is not allowed in YAML text")]
        ) from None
    except _LimitError as exc:
        mark = exc.problem_mark
        line, column = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
        raise DocumentError([Issue(source, line, column, "", str(exc.problem))]) from None
    except yaml.MarkedYAMLError as exc:
        raise DocumentError([_yaml_issue(source, exc, text)]) from None
    except yaml.YAMLError as exc:
        raise DocumentError([Issue(source, 1, 1, "", f"YAML error: {_one_line(str(exc))}")]) from None
    except RecursionError:
        raise DocumentError([Issue(source, 1, 1, "", f"nesting deeper than {MAX_DEPTH} levels")]) from None
    finally:
        if loader is not None:
            loader.dispose()
    doc = YamlDocument(source, None)
    if root is None:
        return doc
    _check_expansion(root, source)
    doc.data = _Builder(doc, loader).build(root, ())
    return doc


def _line_col(text: str, position: int) -> tuple[int, int]:
    before = text[:position]
    return before.count("\n") + 1, position - (before.rfind("\n") + 1) + 1


def _char_index(text: str, exc: yaml.reader.ReaderError, loader: Any) -> int:
    """Where a reader error is, as an index into `text`: libyaml's reader counts UTF-8 bytes (PyYAML's own reader,
    which runs first, counts characters; libyaml refuses little it accepts)."""
    if loader is None:
        return int(exc.position)
    return len(text.encode("utf-8")[: exc.position].decode("utf-8", errors="ignore"))


def _yaml_issue(source: str, exc: yaml.MarkedYAMLError, text: str = "") -> Issue:
    mark = exc.problem_mark or exc.context_mark
    problem = _one_line(exc.problem or exc.context or "invalid YAML")
    if "\\t" in problem or "\t" in problem or _TAB_WORD.search(problem) or _tab_at(text, mark):
        problem += " (YAML indentation must use spaces, not tabs)"
    if mark is None:
        return Issue(source, 1, 1, "", f"YAML syntax error: {problem}")
    line, column = _within(text, mark.line, mark.column)
    return Issue(source, line + 1, column + 1, "", f"YAML syntax error: {problem}")


# YAML's line breaks (1.1, what PyYAML and libyaml count): CR LF, CR, LF, NEL, LS, PS.
_LINE_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")
# libyaml names a tab in words ("found a tab character that violates indentation"); "unacceptable" is no tab
_TAB_WORD = re.compile(r"\btab\b")


def _within(text: str, line: int, column: int) -> tuple[int, int]:
    """A 0-based (line, column) kept inside `text`: at the end of a text without a final line break, libyaml's
    scanner starts a new line, so its end-of-stream mark can name a line one past the last."""
    if not text:
        return line, column
    lines = _LINE_BREAK.split(text)
    if line < len(lines):
        return line, column
    return len(lines) - 1, len(lines[-1])


def _tab_at(text: str, mark: Any) -> bool:
    """Whether the character an error points at is a tab (libyaml's messages do not quote it, PyYAML's do)."""
    if mark is None or not text:
        return False
    lines = _LINE_BREAK.split(text, mark.line + 1)
    return bool(mark.line < len(lines) and lines[mark.line][mark.column : mark.column + 1] == "\t")


class _LimitError(yaml.composer.ComposerError):
    """A size, depth or alias limit of this boundary was hit (not a YAML syntax error)."""


class _PyEvents(yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser):
    """PyYAML's pure-Python reader, scanner and parser: text to events."""

    def __init__(self, stream: str) -> None:
        yaml.reader.Reader.__init__(self, stream)
        yaml.scanner.Scanner.__init__(self)
        yaml.parser.Parser.__init__(self)


# libyaml's scanner and parser turn the text into events about ten times as fast (a 50-line profile: ~0.7 ms
# instead of ~8). Composing the events into nodes stays in Python (`_BoundedLoader`), where every node, alias and
# level of nesting is counted; libyaml's parser keeps its own stack, so deep nesting reaches the composer's limit,
# not the C stack. Where PyYAML was built without libyaml, the pure-Python events serve.
try:
    from yaml._yaml import CParser as _Events
except ImportError:  # pragma: no cover - PyYAML without libyaml
    _Events = _PyEvents  # type: ignore[misc, assignment]


class _BoundedLoader(yaml.composer.Composer, _Events, yaml.constructor.SafeConstructor, yaml.resolver.Resolver):
    """The safe loader's composer, constructor and resolver over `_Events`, counting aliases and nesting while
    composing. (The composer comes first: its methods, not libyaml's own composer, build the nodes.)"""

    def __init__(self, stream: str) -> None:
        _Events.__init__(self, stream)
        yaml.composer.Composer.__init__(self)
        yaml.constructor.SafeConstructor.__init__(self)
        yaml.resolver.Resolver.__init__(self)
        self._aliases = 0
        self._depth = 0
        self._nodes = 0

    def _here(self) -> Any:
        """Where the next event starts (libyaml's mark or PyYAML's: both have `line` and `column`)."""
        event: Any = self.peek_event()
        return event.start_mark

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        self._nodes += 1
        if self._nodes > MAX_EXPANDED_NODES:
            raise _LimitError(
                None, None, f"more than {MAX_EXPANDED_NODES} nodes; refusing so large a document", self._here()
            )
        if self.check_event(yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > MAX_ALIASES:
                raise _LimitError(None, None, f"more than {MAX_ALIASES} aliases; refusing to expand", self._here())
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise _LimitError(None, None, f"nesting deeper than {MAX_DEPTH} levels", self._here())
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def _check_expansion(root: Node, source: str) -> None:
    """Refuse documents whose alias expansion is huge, too deep or cyclic, without expanding them.

    The composer already bounds the nodes and nesting written in the text; aliases can multiply both
    (each reference re-uses a whole subtree), so size and height are computed once per node and
    checked against the same limits as the expanded document would have. The recursion here never
    goes deeper than `MAX_DEPTH` + 1 frames.
    """
    sizes: dict[int, tuple[int, int]] = {}  # id(node) -> (expanded nodes, expanded height)
    visiting: set[int] = set()

    def fail(node: Node, message: str) -> DocumentError:
        mark = node.start_mark
        return DocumentError([Issue(source, mark.line + 1, mark.column + 1, "", message)])

    def measure(node: Node, level: int) -> tuple[int, int]:
        key = id(node)
        if key in visiting:
            raise fail(node, "an alias refers to its own anchor")
        known = sizes.get(key)
        if known is None:
            if level > MAX_DEPTH:
                raise fail(node, f"aliases expand to nesting deeper than {MAX_DEPTH} levels; refusing")
            visiting.add(key)
            total, height = 1, 1
            children: list[Node] = []
            if isinstance(node, SequenceNode):
                children = list(node.value)
            elif isinstance(node, MappingNode):
                children = [part for pair in node.value for part in pair]
            for child in children:
                child_total, child_height = measure(child, level + 1)
                total += child_total
                height = max(height, child_height + 1)
                if total > MAX_EXPANDED_NODES:
                    raise fail(node, f"aliases expand to more than {MAX_EXPANDED_NODES} nodes; refusing (alias bomb?)")
            visiting.discard(key)
            known = sizes[key] = (total, height)
        if level + known[1] - 1 > MAX_DEPTH:
            raise fail(node, f"aliases expand to nesting deeper than {MAX_DEPTH} levels; refusing")
        return known

    measure(root, 1)


_PLAIN_COLLECTION_TAGS = frozenset({"tag:yaml.org,2002:seq", "tag:yaml.org,2002:map"})


class _Builder:
    """Turns composed nodes into plain data, recording marks and rejecting duplicate keys."""

    def __init__(self, doc: YamlDocument, loader: _BoundedLoader) -> None:
        self.doc = doc
        self.loader = loader

    def build(self, node: Node, path: KeyPath) -> Any:
        if isinstance(node, ScalarNode):
            try:
                return self.loader.construct_object(node, deep=True)
            except yaml.constructor.ConstructorError as exc:
                raise DocumentError([_yaml_issue(self.doc.source, exc)]) from None
            except ValueError as exc:  # e.g. an out-of-range timestamp, an int past the digit limit
                mark = node.start_mark
                digits = sum(ch.isdigit() for ch in node.value)
                # Python's own words name sys.set_int_max_str_digits(), which is no advice for a profile
                message = (
                    f"an integer of {digits} digits, beyond any setting's range"
                    if node.tag.endswith(":int")
                    else _one_line(str(exc))
                )
                raise DocumentError(
                    [Issue(self.doc.source, mark.line + 1, mark.column + 1, dotted(path), message)]
                ) from None
            except Exception:  # PyYAML's constructors fail in many ways on odd input (`!!int ''`, `!!bool x`)
                mark = node.start_mark
                tag = node.tag.rsplit(":", 1)[-1]
                message = f"cannot read {node.value!r} as a YAML {tag}"
                raise DocumentError(
                    [Issue(self.doc.source, mark.line + 1, mark.column + 1, dotted(path), message)]
                ) from None
        if node.tag not in _PLAIN_COLLECTION_TAGS:
            mark = node.start_mark
            raise DocumentError(
                [
                    Issue(
                        self.doc.source,
                        mark.line + 1,
                        mark.column + 1,
                        dotted(path),
                        f"unsupported YAML tag {node.tag!r}; use a plain mapping or list",
                    )
                ]
            )
        if isinstance(node, SequenceNode):
            items = []
            for index, child in enumerate(node.value):
                child_path = (*path, index)
                self._mark(child_path, child, child)
                items.append(self.build(child, child_path))
            return items
        if isinstance(node, MappingNode):
            return self._mapping(node, path)
        raise DocumentError([Issue(self.doc.source, 1, 1, dotted(path), "unsupported YAML node")])

    def _mapping(self, node: MappingNode, path: KeyPath) -> dict[Any, Any]:
        seen: dict[str, Node] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self._key(key_node, path)
            if key in seen:
                first = seen[key].start_mark
                mark = key_node.start_mark
                raise DocumentError(
                    [
                        Issue(
                            self.doc.source,
                            mark.line + 1,
                            mark.column + 1,
                            dotted((*path, str(key))),
                            f"duplicate key (first defined at line {first.line + 1})",
                        )
                    ]
                )
            seen[key] = key_node
        try:
            self.loader.flatten_mapping(node)  # resolve `<<` merge keys the YAML way
        except yaml.constructor.ConstructorError as exc:
            raise DocumentError([_yaml_issue(self.doc.source, exc)]) from None
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = self._key(key_node, path)
            child_path = (*path, key)
            self._mark(child_path, key_node, value_node)
            out[key] = self.build(value_node, child_path)
        return out

    def _key(self, key_node: Node, path: KeyPath) -> str:
        if not isinstance(key_node, ScalarNode):
            mark = key_node.start_mark
            raise DocumentError(
                [
                    Issue(
                        self.doc.source,
                        mark.line + 1,
                        mark.column + 1,
                        dotted(path),
                        "keys must be plain scalars",
                    )
                ]
            )
        # Keys are always text: YAML 1.1 would turn `on:`/`1:` into a bool/int, which no schema expects.
        return str(key_node.value)

    def _mark(self, path: KeyPath, key_node: Node, value_node: Node) -> None:
        k, v = key_node.start_mark, value_node.start_mark
        self.doc.marks[path] = Mark(k.line + 1, k.column + 1, v.line + 1, v.column + 1)
