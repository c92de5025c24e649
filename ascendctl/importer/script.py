"""Reading a launch script: the variables it sets and the one `vllm serve` command it runs, without running it.

Operators start vLLM from small shell scripts (a tutorial's block pasted into `start.sh`, grown by hand). To turn
one into a profile we need exactly two things from it: the environment the server sees and the serve argv. A
shell would give both by running the script, which is out of the question (it starts a server, and may do
anything else), so this module reads the text the way a POSIX shell lexes it -- quotes, escapes, `\\`
continuations, comments, operators -- and evaluates only assignments, `export`, `unset` and `${VAR}`
expansions. Everything else is left out *with a note*, so an import can say what it did not carry over:
other commands (`source`, `cd`, `sysctl`, ...), `if`/`for` blocks, heredoc bodies, redirections, pipes and a
trailing `&`. A script it cannot read honestly (no serve command, two of them, a serve command inside control
flow, unbalanced quotes, binary bytes, a value that expands past `MAX_VALUE_CHARS`) or whose serve command passes
a secret in `--additional-config` is a `ScriptError` naming `PATH:LINE`.

Where bash and the intent of a hand-written script part, the reader follows the intent and says so in a
note: `<MODEL_PATH>` is a placeholder (bash would read redirections), whitespace after a trailing `\\` still
continues the line, and a commented-out `# --flag \\` line inside a continued command is skipped.
"""

from __future__ import annotations

import bisect
import posixpath
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from ascendctl.schema.secrets import ADDITIONAL_CONFIG, secret_config_args
from ascendctl_engine.argv_items import parse_args
from ascendctl_engine.records import record

__all__ = ["LaunchScript", "ScriptError", "parse_launch_script", "serve_spans"]


class ScriptError(ValueError):
    """A launch script the importer cannot read; the message starts with `PATH:LINE: `."""


@record
class LaunchScript:
    """What one launch script runs: the environment its serve command sees and that command's arguments."""

    path: str
    env: dict[str, str]
    argv: tuple[str, ...]
    unresolved: tuple[str, ...]
    line: int
    notes: tuple[str, ...] = ()
    ray: tuple[str, ...] = ()  # the arguments of its `ray start` (after `start`), when it runs one

    @property
    def ray_worker(self) -> bool:
        """A Ray worker host: `ray start --address HEAD:PORT` and no serve command of its own."""
        return not self.argv and bool(self.ray) and "--head" not in self.ray

    @property
    def ray_head(self) -> bool:
        return bool(self.argv) and "--head" in self.ray


# ---------------------------------------------------------------------------------------------------------
# Notes: what was left out, one line per kind, with every line it happened on.


class _Notes:
    """Notes keyed by kind, so ten `sysctl` lines make one note listing ten lines rather than ten notes."""

    def __init__(self) -> None:
        # lines as dict keys: an ordered set, so a script of 100 000 ignored commands costs linear time, not
        # a scan of every earlier line per command
        self._items: dict[str, tuple[str, dict[int, None]]] = {}

    def add(self, key: str, line: int, message: str) -> None:
        _, lines = self._items.setdefault(key, (message, {}))
        lines.setdefault(line, None)

    def render(self) -> tuple[str, ...]:
        ordered = sorted(self._items.values(), key=lambda item: min(item[1]))
        return tuple(f"{_line_list(list(lines))}: {message}" for message, lines in ordered)


def _line_list(lines: Sequence[int]) -> str:
    if len(lines) == 1:
        return f"line {lines[0]}"
    shown = ", ".join(str(n) for n in lines[:8])
    return f"lines {shown}" if len(lines) <= 8 else f"lines {shown}, ... ({len(lines)} in all)"


def _error(path: str, line: int, why: str) -> ScriptError:
    return ScriptError(f"{path}:{line}: {why}")


# ---------------------------------------------------------------------------------------------------------
# Tokens.


@record
class _Seg:
    """One piece of a word: literal text, a parameter (`$NAME`, `${...}`) or a command substitution.

    `quoted` says whether it sat inside quotes (quoted expansions are not split into fields); `source` is the
    piece as written, which an expansion that cannot be resolved leaves in the value."""

    kind: str  # "lit" | "param" | "cmd"
    text: str  # the literal text; the parameter expression (NAME, or what is inside `${}`); the `$(...)` source
    quoted: bool
    source: str = ""


@record
class _Word:
    segs: tuple[_Seg, ...]
    line: int
    end: int
    raw: str


@record
class _Op:
    text: str
    line: int


_Token = _Word | _Op

_BLANK = " \t\r\f\v"
_WORD_END = frozenset(_BLANK + "\n;&|()<>")
_SPECIAL = frozenset("'\"\\$`<")
_REDIRECT = re.compile(r"\d*(?:&>>|&>|>>|>&|>\||<<<|<<-|<<|<>|<&|<|>)")
_CONTROL = re.compile(r"&&|\|\||;;|\|&|[;&|()]")
_PLACEHOLDER = re.compile(r"<[A-Za-z_][\w.\-/]*>")
_LOOSE_CONTINUATION = re.compile(r"\\[ \t]+\n")
_NAME = re.compile(r"[A-Za-z_]\w*")
_SPECIAL_PARAMS = frozenset("0123456789@*#?$!-")


class _Lexer:
    """Shell lexing of the whole text at once (a quoted value may span lines), into words and operators."""

    def __init__(self, text: str, path: str, notes: _Notes) -> None:
        self.text = text
        self.path = path
        self.notes = notes
        self.pos = 0
        self.tokens: list[_Token] = []
        self.heredocs: list[tuple[int, int, str]] = []  # skipped bodies: first line, last line, text
        self._newlines = [i for i, c in enumerate(text) if c == "\n"]
        self._pending: list[tuple[str, bool]] = []  # heredoc delimiters waiting for the end of their line
        self._want_delimiter: bool | None = None  # after `<<` (False) or `<<-` (True): the next word delimits
        self._word_handlers: dict[str, Callable[[list[_Seg]], None]] = {
            "'": self._single,
            '"': self._double,
            "\\": self._escape,
            "$": lambda segs: self._dollar(segs, quoted=False),
            "`": lambda segs: self._backtick(segs, quoted=False),
        }

    def line_at(self, pos: int) -> int:
        return bisect.bisect_left(self._newlines, pos) + 1

    def error(self, pos: int, why: str) -> ScriptError:
        return _error(self.path, self.line_at(pos), why)

    def run(self) -> list[_Token]:
        while self.pos < len(self.text):
            self._step()
        return self.tokens

    def _step(self) -> None:
        c = self.text[self.pos]
        if c in _BLANK:
            self.pos += 1
        elif c == "\n":
            self._newline()
        elif c == "\\" and self._continuation():
            return
        elif c == "#":
            self._comment()
        elif (c == "<" and _PLACEHOLDER.match(self.text, self.pos)) or not self._operator():
            self._word()

    def _newline(self) -> None:
        self.tokens.append(_Op("\n", self.line_at(self.pos)))
        self.pos += 1
        while self._pending:
            self._heredoc_body(*self._pending.pop(0))

    def _continuation(self) -> bool:
        """`\\` + newline joins lines; so does `\\` + spaces + newline (bash would end the command; the author
        meant to continue it)."""
        if self.text.startswith("\\\n", self.pos):
            self.pos += 2
            return True
        m = _LOOSE_CONTINUATION.match(self.text, self.pos)
        if m is None:
            return False
        self.notes.add(
            "loose-continuation",
            self.line_at(self.pos),
            "whitespace after the trailing `\\` (bash would end the command there): read as a continuation",
        )
        self.pos = m.end()
        return True

    def _comment(self) -> None:
        """A comment runs to the end of its line. A whole-line `# --flag \\` inside a continued command is the
        common way to comment out one argument: it is skipped and the command goes on (bash would end it)."""
        end = self.text.find("\n", self.pos)
        end = len(self.text) if end < 0 else end
        line_start = self.text.rfind("\n", 0, self.pos) + 1
        whole_line = not self.text[line_start : self.pos].strip(_BLANK)
        mid_command = bool(self.tokens) and isinstance(self.tokens[-1], _Word)
        if whole_line and mid_command and self.text[self.pos : end].rstrip(_BLANK).endswith("\\"):
            self.notes.add(
                "commented-argument",
                self.line_at(self.pos),
                "a commented-out line inside a continued command was skipped (bash would end the command there)",
            )
            end = min(end + 1, len(self.text))
        self.pos = end

    def _operator(self) -> bool:
        m = _REDIRECT.match(self.text, self.pos) or _CONTROL.match(self.text, self.pos)
        if m is None:
            return False
        op = m.group(0)
        self.tokens.append(_Op(op, self.line_at(self.pos)))
        self.pos = m.end()
        if op.endswith(("<<", "<<-")):
            self._want_delimiter = op.endswith("-")
        return True

    def _word(self) -> None:
        start = self.pos
        segs: list[_Seg] = []
        while self.pos < len(self.text):
            c = self.text[self.pos]
            placeholder = _PLACEHOLDER.match(self.text, self.pos) if c == "<" else None
            if placeholder is not None:
                self._placeholder(segs, placeholder)
            elif c in _WORD_END or _LOOSE_CONTINUATION.match(self.text, self.pos):
                break
            else:
                self._word_handlers.get(c, self._plain)(segs)
        word = _Word(tuple(segs), self.line_at(start), self.line_at(self.pos - 1), self.text[start : self.pos])
        if self._want_delimiter is not None:
            self._pending.append(("".join(s.text for s in segs if s.kind == "lit"), self._want_delimiter))
            self._want_delimiter = None
        if segs:
            self.tokens.append(word)

    def _plain(self, segs: list[_Seg]) -> None:
        start = self.pos
        while self.pos < len(self.text):
            c = self.text[self.pos]
            if c in _WORD_END or c in _SPECIAL:
                break
            self.pos += 1
        if self.pos == start:  # a special character no handler took (cannot happen; keeps the loop finite)
            self.pos += 1
        segs.append(_Seg("lit", self.text[start : self.pos], False))

    def _placeholder(self, segs: list[_Seg], m: re.Match[str]) -> None:
        self.notes.add(
            f"placeholder:{m.group(0)}",
            self.line_at(self.pos),
            f"`{m.group(0)}` read as a placeholder to fill in (bash would read redirections)",
        )
        segs.append(_Seg("lit", m.group(0), False))
        self.pos = m.end()

    def _single(self, segs: list[_Seg]) -> None:
        end = self.text.find("'", self.pos + 1)
        if end < 0:
            raise self.error(self.pos, "unbalanced quotes: a single quote opens here and never closes")
        segs.append(_Seg("lit", self.text[self.pos + 1 : end], True))
        self.pos = end + 1

    def _escape(self, segs: list[_Seg]) -> None:
        nxt = self.text[self.pos + 1 : self.pos + 2]
        self.pos += 2
        if nxt != "\n":  # `\\` + newline inside a word joins the lines
            segs.append(_Seg("lit", nxt, True))

    def _double(self, segs: list[_Seg]) -> None:
        opened, before = self.pos, len(segs)
        self.pos += 1
        buf: list[str] = []
        while True:
            if self.pos >= len(self.text):
                raise self.error(opened, "unbalanced quotes: a double quote opens here and never closes")
            c = self.text[self.pos]
            if c == '"':
                self.pos += 1
                break
            if c == "$":
                _flush(buf, segs)
                self._dollar(segs, quoted=True)
            elif c == "`":
                _flush(buf, segs)
                self._backtick(segs, quoted=True)
            elif c == "\\":
                buf.append(self._double_escape())
            else:
                buf.append(c)
                self.pos += 1
        _flush(buf, segs)
        if len(segs) == before:
            segs.append(_Seg("lit", "", True))  # `""` is an empty word, not no word

    def _double_escape(self) -> str:
        """Inside double quotes a backslash escapes only `$`, backquote, `"`, `\\` and newline."""
        nxt = self.text[self.pos + 1 : self.pos + 2]
        if nxt in ("$", "`", '"', "\\", "\n"):
            self.pos += 2
            return "" if nxt == "\n" else nxt
        self.pos += 1
        return "\\"

    def _dollar(self, segs: list[_Seg], *, quoted: bool) -> None:
        start = self.pos
        nxt = self.text[start + 1 : start + 2]
        name = _NAME.match(self.text, start + 1)
        if nxt in ("{", "("):
            end = self._matching(start + 1)
            source = self.text[start : end + 1]
            kind = "param" if nxt == "{" else "cmd"
            segs.append(_Seg(kind, self.text[start + 2 : end] if nxt == "{" else source, quoted, source))
            self.pos = end + 1
        elif name is not None:
            segs.append(_Seg("param", name.group(0), quoted, "$" + name.group(0)))
            self.pos = name.end()
        elif nxt and nxt in _SPECIAL_PARAMS:
            segs.append(_Seg("param", nxt, quoted, "$" + nxt))
            self.pos = start + 2
        elif nxt == "'" and not quoted:  # $'...' (ANSI-C quoting): read as a single-quoted string
            self.pos += 1
            self._single(segs)
        elif nxt == '"' and not quoted:  # $"..." (locale translation): read as a double-quoted string
            self.pos += 1
        else:
            segs.append(_Seg("lit", "$", quoted))
            self.pos += 1

    def _matching(self, open_at: int) -> int:
        """The index of the `}` / `)` closing the bracket at `open_at`, skipping quoted text inside."""
        pairs = {"{": "}", "(": ")"}
        opener = self.text[open_at]
        depth, i = 0, open_at
        while i < len(self.text):
            c = self.text[i]
            if c == "\\":
                i += 2
                continue
            if c in "'\"":
                close = self.text.find(c, i + 1)
                i = len(self.text) if close < 0 else close + 1
                continue
            depth += (c == opener) - (c == pairs[opener])
            if depth == 0:
                return i
            i += 1
        raise self.error(open_at - 1, f"unbalanced `${opener}`: it opens here and never closes")

    def _backtick(self, segs: list[_Seg], *, quoted: bool) -> None:
        end = self.pos + 1
        while end < len(self.text) and self.text[end] != "`":
            end += 2 if self.text[end] == "\\" else 1
        if end >= len(self.text):
            raise self.error(self.pos, "unbalanced quotes: a backquote opens here and never closes")
        source = self.text[self.pos : end + 1]
        segs.append(_Seg("cmd", source, quoted, source))
        self.pos = end + 1

    def _heredoc_body(self, delimiter: str, strip_tabs: bool) -> None:
        """A heredoc body is data for the command, not commands: skipped (and remembered, for the error when
        the only serve command is inside one)."""
        first = self.line_at(self.pos)
        start = self.pos
        while self.pos < len(self.text):
            end = self.text.find("\n", self.pos)
            end = len(self.text) if end < 0 else end
            line = self.text[self.pos : end]
            self.pos = min(end + 1, len(self.text))
            if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                break
        self.heredocs.append((first, self.line_at(max(self.pos - 1, start)), self.text[start : self.pos]))
        self.notes.add("heredoc", first, "a heredoc body (data fed to a command) was not read")


def _flush(buf: list[str], segs: list[_Seg]) -> None:
    if buf:
        segs.append(_Seg("lit", "".join(buf), True))
        buf.clear()


# ---------------------------------------------------------------------------------------------------------
# Simple commands: words and redirections between control operators.


@dataclass
class _Command:
    words: list[_Word] = field(default_factory=list)
    redirects: list[str] = field(default_factory=list)
    line: int = 0
    end: int = 0
    after: str = ""  # the operator that ended it: "\n", ";", "&", "&&", "||", "|", "|&", "(", ")", ";;", ""

    def touch(self, line: int, end: int) -> None:
        self.line = self.line or line
        self.end = max(self.end, end)


def _commands(tokens: Iterable[_Token]) -> list[_Command]:
    """Group tokens into simple commands; a redirection takes the word after it as its target."""
    out: list[_Command] = []
    cur = _Command()
    redirect: str | None = None
    for tok in tokens:
        if isinstance(tok, _Word):
            cur.touch(tok.line, tok.end)
            if redirect is not None:
                cur.redirects.append(f"{redirect}{tok.raw}" if redirect.endswith("&") else f"{redirect} {tok.raw}")
                redirect = None
            else:
                cur.words.append(tok)
        elif _REDIRECT.fullmatch(tok.text):
            cur.touch(tok.line, tok.line)
            redirect = tok.text
        else:
            if redirect is not None:  # a redirection with no target before the operator
                cur.redirects.append(redirect)
                redirect = None
            cur.touch(tok.line, tok.line)
            cur.after = tok.text
            out.append(cur)
            cur = _Command()
    if cur.words or cur.redirects:
        out.append(cur)
    return out


# ---------------------------------------------------------------------------------------------------------
# Recognising the serve command.

_PYTHON = re.compile(r"python(?:\d+(?:\.\d+)*)?")
_LEGACY_MODULE = "vllm.entrypoints.openai.api_server"
# Commands that run the command after them; what sits between them and `vllm` is dropped with a note.
_WRAPPERS = frozenset(
    (
        "nohup",
        "exec",
        "time",
        "command",
        "nice",
        "ionice",
        "chrt",
        "stdbuf",
        "env",
        "sudo",
        "numactl",
        "taskset",
        "timeout",
        "docker",
        "podman",
    )
)
_ASSIGNMENT = re.compile(r"([A-Za-z_]\w*)(\+?)=")


def _plain(word: _Word) -> str:
    """A word's text with quotes removed and expansions as written (enough to recognise `vllm serve`)."""
    return "".join(s.text if s.kind == "lit" else s.source for s in word.segs)


def _literal(word: _Word) -> str | None:
    """The word when it is one unquoted literal (how shell keywords are recognised), else None."""
    if all(s.kind == "lit" and not s.quoted for s in word.segs):
        return "".join(s.text for s in word.segs)
    return None


def _entry_at(texts: list[str], i: int) -> tuple[int, bool] | None:
    """(index of the first argument, whether it is the legacy api_server) when an entry point starts at i."""
    base = posixpath.basename(texts[i])
    if base == "vllm" and texts[i + 1 : i + 2] == ["serve"]:
        return i + 2, False
    if _PYTHON.fullmatch(base):
        j = i + 1
        while j < len(texts) and texts[j].startswith("-") and texts[j] != "-m":
            j += 1
        if texts[j : j + 2] == ["-m", _LEGACY_MODULE]:
            return j + 2, True
    return None


def _entry(texts: list[str]) -> tuple[int, int, bool] | None:
    """Where the serve entry point sits in a command's words (after its assignments): (its index, the index of
    its first argument, legacy?). Words before it must begin with a known wrapper (`nohup`, `docker`, ...),
    so `echo vllm serve x` is not a serve command."""
    for i in range(len(texts)):
        if i > 0 and posixpath.basename(texts[0]) not in _WRAPPERS:
            return None
        hit = _entry_at(texts, i)
        if hit is not None:
            return i, hit[0], hit[1]
    return None


def _split_assignments(words: Sequence[_Word]) -> tuple[list[tuple[str, bool, tuple[_Seg, ...]]], list[_Word]]:
    """Leading `NAME=value` words (name, `+=`?, value pieces) and the words after them."""
    assigns: list[tuple[str, bool, tuple[_Seg, ...]]] = []
    for n, word in enumerate(words):
        first = word.segs[0]
        m = _ASSIGNMENT.match(first.text) if first.kind == "lit" and not first.quoted else None
        if m is None:
            return assigns, list(words[n:])
        rest = _Seg("lit", first.text[m.end() :], False)
        assigns.append((m.group(1), bool(m.group(2)), (rest, *word.segs[1:])))
    return assigns, []


# ---------------------------------------------------------------------------------------------------------
# Evaluating the script.

_OPENERS = frozenset(("if", "for", "while", "until", "case", "select", "{"))
_CLOSERS = frozenset(("fi", "done", "esac", "}"))
_CONTINUERS = frozenset(("then", "do", "else", "!", "{"))
_BLOCK_NAMES = {
    "if": "an `if` block",
    "for": "a `for` loop",
    "while": "a `while` loop",
    "until": "an `until` loop",
    "case": "a `case` block",
    "select": "a `select` block",
    "{": "a `{ ... }` group (or function body)",
    "(": "a `( ... )` subshell (or function definition)",
}
_DECLARERS = frozenset(("export", "declare", "typeset", "readonly", "local"))


def _has_export_flag(args: Sequence[_Word]) -> bool:
    """`declare -x` / `typeset -x`: the names are exported."""
    return any((t := _literal(w)) is not None and t.startswith("-") and "x" in t for w in args)


_IGNORED_WHY = {
    "source": "not read: variables the sourced file sets are unknown here",
    ".": "not read: variables the sourced file sets are unknown here",
    "cd": "not run: the working directory is not recorded, relative paths stay relative",
    "set": "not run: shell options do not change the serve command",
    "echo": "not run: output only",
    "ulimit": "not run: process limits are the host's business",
}
_PARAM_EXPR = re.compile(r"([A-Za-z_]\w*|\d+|[@*#?$!-])(?:(:?[-=+])(.*))?", re.DOTALL)
_SIMPLE_REF = re.compile(r"\$\{([A-Za-z_]\w*)\}|\$([A-Za-z_]\w*)")
_MISSING = object()
# A launch script's values are paths, model names, a JSON config: a few KiB. The file limit does not bound them:
# a value doubled line after line (`A="$A$A"`) grows exponentially while the script stays a few hundred bytes,
# and one large value referenced many times adds up. So expansion has its own bounds, each refused at the line
# that crosses it: one value (an assignment, one argument), and all expanded text of the script together.
MAX_VALUE_CHARS = 64 * 1024
MAX_EXPANDED_CHARS = 1024 * 1024


@dataclass
class _Serve:
    env: dict[str, str]
    argv: list[str]
    line: int


class _Reader:
    """Walks the commands in order: assignments and exports build the variables, the serve command is read
    with the variables as they stand at its line; control-flow blocks are skipped whole."""

    def __init__(self, path: str, notes: _Notes, heredocs: Sequence[tuple[int, int, str]]) -> None:
        self.path = path
        self.notes = notes
        self.heredocs = heredocs
        self.vars: dict[str, str | None] = {}  # None: set by a command substitution, value unknown
        self.env: dict[str, str] = {}  # exported: what the serve command sees
        self.shell: dict[str, str] = {}  # every assigned value, exported or not ($VAR expansion reads these)
        self.exported: set[str] = set()
        self.unresolved: dict[str, None] = {}
        self.serve: _Serve | None = None
        self.spans: list[tuple[int, int]] = []
        self.stack: list[str] = []
        self.block_line = 0
        self.block_kind = "{"  # the outermost opener of the block being skipped
        self.expanded = 0  # characters every variable expansion so far produced (MAX_EXPANDED_CHARS)
        self.ray: tuple[tuple[str, ...], int] | None = None  # the first `ray start`'s arguments and line

    # -- the walk ------------------------------------------------------------------------------------------

    def run(self, commands: Sequence[_Command]) -> None:
        i = 0
        while i < len(commands):
            if self._in_block(commands[i]):
                i += 1
                continue
            group = [commands[i]]
            while group[-1].after in ("|", "|&") and i + 1 < len(commands):
                i += 1
                group.append(commands[i])
            self._pipeline(group)
            i += 1
        if self.stack:
            self.notes.add("open-block", self.block_line, f"{_BLOCK_NAMES[self.stack[0]]} never closes")

    def finish(self) -> LaunchScript:
        if not self.spans and self.ray is not None and "--head" not in self.ray[0]:
            # a Ray worker host: its `ray start` joins the head's cluster; the head's script serves
            return LaunchScript(
                path=self.path,
                env=dict(self.env),
                argv=(),
                unresolved=tuple(self.unresolved),
                line=self.ray[1],
                notes=self.notes.render(),
                ray=self.ray[0],
            )
        if not self.spans:
            raise self._no_serve()
        if len(self.spans) > 1:
            lines = ", ".join(str(start) for start, _ in self.spans)
            raise _error(
                self.path,
                self.spans[1][0],
                f"more than one serve command (lines {lines}): a launch script starts one server; split it",
            )
        assert self.serve is not None
        return LaunchScript(
            path=self.path,
            env=self.serve.env,
            argv=tuple(self.serve.argv),
            unresolved=tuple(self.unresolved),
            line=self.serve.line,
            notes=self.notes.render(),
            ray=self.ray[0] if self.ray is not None else (),
        )

    def _no_serve(self) -> ScriptError:
        for first, _, body in self.heredocs:
            if _mentions_serve(body):
                return _error(self.path, first, "no serve command: the one here is inside a heredoc (data, not run)")
        return _error(
            self.path,
            1,
            "no serve command: the script runs neither `vllm serve` nor `python -m " + _LEGACY_MODULE + "`",
        )

    def _in_block(self, cmd: _Command) -> bool:
        """Track `if`/`for`/`{`/`(` nesting; True for every command inside a block (or opening/closing one).
        A serve command inside one is an error: which branch or iteration runs is for the shell to decide."""
        was_inside = bool(self.stack)
        opens, closes = _keywords(cmd.words)
        self.stack.extend(opens)
        del self.stack[max(0, len(self.stack) - closes) :]
        in_case = "case" in self.stack
        if cmd.after == "(" and not in_case:
            self.stack.append("(")
        elif cmd.after == ")" and not in_case and self.stack and self.stack[-1] == "(":
            self.stack.pop()
        if self.stack and not was_inside:
            self.block_line, self.block_kind = cmd.line, self.stack[0]
            self.notes.add(f"block:{cmd.line}", cmd.line, f"{_BLOCK_NAMES[self.stack[0]]} skipped")
        inside = was_inside or bool(self.stack) or bool(opens) or closes > 0
        if inside and _is_serve(cmd.words):
            kind = _BLOCK_NAMES[self.block_kind]
            raise _error(
                self.path,
                cmd.line,
                f"the serve command is inside {kind} starting at line {self.block_line}; the importer does not run "
                "shell control flow: take the command out of it",
            )
        return inside

    def _pipeline(self, group: Sequence[_Command]) -> None:
        serving = [c for c in group if _is_serve(c.words)]
        if not serving:
            for cmd in group:
                self._plain_command(cmd)
            return
        self.spans.append((group[0].line, group[-1].end))
        if self.serve is not None:
            return
        target = serving[0]
        if len(group) > 1:
            stages = ["<serve>" if c is target else " ".join(_plain(w) for w in c.words) for c in group]
            self.notes.add("pipe", target.line, f"dropped the pipe around the serve command: `{' | '.join(stages)}`")
        self._read_serve(target)

    def _plain_command(self, cmd: _Command) -> None:
        assigns, rest = _split_assignments(cmd.words)
        if not rest:
            for name, append, segs in assigns:
                self._assign(name, append, segs, cmd.line)
            return
        name = _literal(rest[0]) or _plain(rest[0])
        if name in _DECLARERS:
            self._declare(rest[1:], cmd.line, exported=name == "export" or _has_export_flag(rest[1:]))
        elif name == "unset":
            self._unset(rest[1:], cmd.line)
        elif name == "ray" and len(rest) > 1 and _literal(rest[1]) == "start":
            if self.ray is None:
                args = tuple(f for w in rest[2:] for f in self._fields(w, cmd.line))
                self.ray = (args, cmd.line)
            else:
                self.notes.add(f"ray:{cmd.line}", cmd.line, "a second `ray start`: only the first is read")
        elif name.startswith("-"):
            self.notes.add(
                f"stray:{cmd.line}",
                cmd.line,
                f"`{name}` is not a command: the line before it ends without a `\\`, so the command there ended; "
                "these arguments were not read",
            )
        else:
            why = _IGNORED_WHY.get(name, "not run: only assignments, exports and the serve command are read")
            self.notes.add(f"ignored:{name}", cmd.line, f"`{name}` {why}")

    def _declare(self, args: Sequence[_Word], line: int, *, exported: bool) -> None:
        """`export A=1 B`, `declare -x A=1`: marks the names exported (the serve command sees them); `declare`,
        `local`, `readonly` without `-x` only set shell variables."""
        for word in args:
            text = _literal(word)
            if text is not None and text.startswith("-"):
                continue
            assigns, _ = _split_assignments([word])
            if exported:
                self.exported.update(name for name, _, _ in assigns)
                if not assigns and text:
                    self.exported.add(text)  # `export NAME`: an earlier assignment now reaches the command
                    if text in self.shell:
                        self.env[text] = self.shell[text]
            for name, append, segs in assigns:
                self._assign(name, append, segs, line)

    def _unset(self, args: Sequence[_Word], line: int) -> None:
        for word in args:
            name = _plain(word)
            if name.startswith("-"):
                continue
            self.vars.pop(name, None)
            self.env.pop(name, None)
            self.shell.pop(name, None)
            self.exported.discard(name)
            self.notes.add(f"unset:{name}", line, f"`unset {name}`: removed from the environment")

    def _assign(self, name: str, append: bool, segs: Sequence[_Seg], line: int) -> None:
        if self.serve is not None:
            self.notes.add("after-serve", line, "assignments after the serve command do not reach it: ignored")
            return
        value, known = self._value(segs, line)
        previous = self.vars.get(name)
        if append and name in self.vars:
            known = known and previous is not None
            value = self._bounded(self.shell.get(name, "") + value, line)
        self.vars[name] = value if known else None
        self.shell[name] = value
        if name in self.exported:  # a plain `K=V` reaches the command only once K is exported
            self.env[name] = value

    # -- the serve command ---------------------------------------------------------------------------------

    def _read_serve(self, cmd: _Command) -> None:
        assigns, rest = _split_assignments(cmd.words)
        texts = [_plain(w) for w in rest]
        found = _entry(texts)
        assert found is not None  # _is_serve said so
        start, first_arg, legacy = found
        env = dict(self.env)
        for name, _, segs in assigns:
            env[name] = self._value(segs, cmd.line)[0]
        self._wrappers(texts[:start], rest[:start], env, cmd.line)
        argv = [f for w in rest[first_arg:] for f in self._fields(w, cmd.line)]
        if legacy:
            argv = self._legacy(argv, cmd.line)
        self._no_secret_config(argv, cmd.line)
        if cmd.redirects:
            self.notes.add("redirect", cmd.line, f"dropped `{' '.join(cmd.redirects)}` after the serve command")
        if cmd.after == "&":
            self.notes.add("background", cmd.line, "dropped the trailing `&` (the server ran in the background)")
        self.serve = _Serve(env, argv, cmd.line)

    def _no_secret_config(self, argv: Sequence[str], line: int) -> None:
        """An `--additional-config` holding a secret-named key (`secret_config_args`, the rule a profile's
        extra_args obey) is refused here, at the serve command's line: a profile would carry the value, and
        vllm-ascend reads no secret from that JSON, so there is no reference to turn it into. The message names
        the key, never its value. (Secret-valued flags become references: `importer.profile`.)"""
        tokens = list(argv[1:] if argv and not argv[0].startswith("-") else argv)
        try:
            items = parse_args(tokens)
        except ValueError:  # an argv the importer cannot read: `importer.profile` refuses it
            return
        found = secret_config_args(items)
        if found:
            hit = found[0]
            raise _error(
                self.path,
                line,
                f"`{ADDITIONAL_CONFIG}` holds `{'.'.join(map(str, hit.path))}`, which looks like a secret (its name "
                f"has the part {hit.part}); a profile never holds a secret's value: take it out of the script "
                "(runtime.secrets gives the engine a secret as an environment variable, read at launch)",
            )

    def _wrappers(self, texts: Sequence[str], words: Sequence[_Word], env: dict[str, str], line: int) -> None:
        """`nohup` and friends are dropped; `env K=V` and `docker run -e K=V` values join the environment."""
        if not texts:
            return
        tool = posixpath.basename(texts[0])
        for k, word in enumerate(words):
            if tool == "env" or (tool in ("docker", "podman") and k > 0 and texts[k - 1] in ("-e", "--env")):
                for name, _, segs in _split_assignments([word])[0]:
                    env[name] = self._value(segs, line)[0]
        if tool in ("docker", "podman"):
            why = "its `-e` variables were read; its other options (devices, volumes, image) were not"
            self.notes.add("wrapper", line, f"the serve command runs inside `{tool}`: {why}")
        else:
            self.notes.add("wrapper", line, f"dropped `{' '.join(texts)}` before the serve command")

    def _legacy(self, argv: list[str], line: int) -> list[str]:
        """`python -m vllm.entrypoints.openai.api_server --model X ...` is `vllm serve X ...`."""
        for j, arg in enumerate(argv):
            if arg == "--model" and j + 1 < len(argv):
                model, rest = argv[j + 1], argv[:j] + argv[j + 2 :]
            elif arg.startswith("--model="):
                model, rest = arg.split("=", 1)[1], argv[:j] + argv[j + 1 :]
            else:
                continue
            self.notes.add("legacy", line, f"the legacy `{_LEGACY_MODULE}` entry point read as `vllm serve {model}`")
            return [model, *rest]
        self.notes.add("legacy", line, f"the legacy `{_LEGACY_MODULE}` entry point read as `vllm serve` (no --model)")
        return argv

    # -- expansions ----------------------------------------------------------------------------------------

    def _value(self, segs: Sequence[_Seg], line: int) -> tuple[str, bool]:
        """An assignment's value (no field splitting) and whether it is known (no command substitution)."""
        parts: list[str] = []
        known = True
        size = 0
        for seg in segs:
            text, _ = self._expand(seg, line)
            known = known and seg.kind != "cmd"
            parts.append(text)
            size += len(text)
            if size > MAX_VALUE_CHARS:
                raise self._too_long(line)
        return "".join(parts), known

    def _fields(self, word: _Word, line: int) -> list[str]:
        """A word as argv entries: an unquoted expansion splits on whitespace, an empty one vanishes."""
        fields: list[str] = []
        cur, have = "", False
        for seg in word.segs:
            text, split = self._expand(seg, line)
            if not split:
                cur, have = cur + text, have or seg.quoted or bool(text)
            else:
                for piece in re.split(r"([ \t\n]+)", text):
                    if piece.isspace() and have:
                        fields.append(cur)
                        cur, have = "", False
                    elif piece and not piece.isspace():
                        cur, have = cur + piece, True
            self._bounded(cur, line)
        if have:
            fields.append(cur)
        return fields

    def _expand(self, seg: _Seg, line: int) -> tuple[str, bool]:
        """One piece's text and whether it is subject to field splitting (an unquoted, resolved expansion)."""
        if seg.kind == "lit":
            return seg.text, False
        if seg.kind == "cmd":
            self.notes.add(f"cmd:{seg.source}", line, f"`{seg.source}` not run: its output is unknown here")
            return seg.source, False
        value = self._param(seg, line)
        return (seg.source, False) if value is None else (value, not seg.quoted)

    def _param(self, seg: _Seg, line: int) -> str | None:
        """A parameter's value; None (and the name recorded as unresolved) when the script does not set it."""
        m = _PARAM_EXPR.fullmatch(seg.text)
        if m is None:
            self.notes.add(f"param:{seg.source}", line, f"`{seg.source}` not expanded (only ${{NAME}} forms are)")
            return None
        name, op, word = m.groups()
        value = self.vars.get(name, _MISSING)
        if value is None or (op is None and value is _MISSING):
            self.unresolved.setdefault(name, None)
            if value is None:
                self.notes.add(f"unknown:{name}", line, f"`{name}` is set by a command substitution: left as ${name}")
            return None
        if op is None:
            return self._spend(str(value), line)
        present = value is not _MISSING and (value != "" or not op.startswith(":"))
        return self._spend(self._operator(name, op, word, str(value) if present else None, line), line)

    def _bounded(self, value: str, line: int) -> str:
        if len(value) > MAX_VALUE_CHARS:
            raise self._too_long(line)
        return value

    def _too_long(self, line: int) -> ScriptError:
        return _error(
            self.path,
            line,
            f"a value longer than {MAX_VALUE_CHARS // 1024} KiB once its variables are expanded; a launch "
            "script's values are far shorter (is a variable doubled line after line?)",
        )

    def _spend(self, text: str, line: int) -> str:
        """`text`, one expansion's result, counted against the script's MAX_EXPANDED_CHARS."""
        self.expanded += len(text)
        if self.expanded > MAX_EXPANDED_CHARS:
            raise _error(
                self.path,
                line,
                f"the script's variable expansions add up to more than {MAX_EXPANDED_CHARS // (1024 * 1024)} MiB "
                "of text by this line; a launch script's are far shorter (is a large variable referenced over and "
                "over?)",
            )
        return text

    def _operator(self, name: str, op: str, word: str, value: str | None, line: int) -> str:
        """`${NAME:-word}`, `${NAME:=word}`, `${NAME:+word}` (and the forms without `:`)."""
        if op.endswith("+"):
            return self._simple(word, line) if value is not None else ""
        if value is not None:
            return value
        default = self._simple(word, line)
        self.notes.add(f"default:{name}", line, f"`{name}` is not set by the script: its default `{default}` used")
        if op.endswith("="):
            self.vars[name] = default
        return default

    def _simple(self, word: str, line: int) -> str:
        """The `word` of `${NAME:-word}`: quotes dropped, `$NAME` / `${NAME}` resolved where the script sets
        them (kept as written where it does not)."""

        def one(m: re.Match[str]) -> str:
            name = m.group(1) or m.group(2)
            value = self.vars.get(name)
            if value is None:
                self.unresolved.setdefault(name, None)
            return m.group(0) if value is None else self._spend(value, line)

        return self._bounded(_SIMPLE_REF.sub(one, word.replace('"', "").replace("'", "")), line)


def _keywords(words: Sequence[_Word]) -> tuple[list[str], int]:
    """The block openers and closers a command starts with (`then if`, `fi`, `{`, `done`)."""
    opens: list[str] = []
    for word in words:
        text = _literal(word)
        if text in _CLOSERS and not opens:
            return [], 1
        if text in _OPENERS:
            opens.append(text)
        if text not in _CONTINUERS:
            break
    return opens, 0


def _is_serve(words: Sequence[_Word]) -> bool:
    _, rest = _split_assignments(words)
    texts = [_plain(w) for w in rest]
    while texts and texts[0] in _CONTINUERS:
        texts.pop(0)
    return _entry(texts) is not None


_SERVE_TEXT = re.compile(r"\bvllm\s+serve\b|" + re.escape(_LEGACY_MODULE))


def _mentions_serve(text: str) -> bool:
    return _SERVE_TEXT.search(text) is not None


# ---------------------------------------------------------------------------------------------------------
# Entry points.

_NOT_TEXT = re.compile(r"[\x00-\x08\x0e-\x1f\x7f\ufffd]")


def _text(text: str, path: str, notes: _Notes) -> str:
    """The script as text the lexer can take: a NUL byte or binary bytes mean it is not a script at all."""
    text = text.removeprefix("\ufeff")
    bad = _NOT_TEXT.search(text)
    if bad is not None:
        line = text.count("\n", 0, bad.start()) + 1
        what = "a NUL byte" if bad.group(0) == "\0" else f"the byte U+{ord(bad.group(0)):04X}"
        raise _error(path, line, f"{what}: this is not a text file")
    if "\r\n" in text:
        notes.add("crlf", 1, "CRLF line ends read as LF")
        text = text.replace("\r\n", "\n")
    return text


def _read(text: str, path: str) -> _Reader:
    notes = _Notes()
    lexer = _Lexer(_text(text, path, notes), path, notes)
    tokens = lexer.run()
    reader = _Reader(path, notes, lexer.heredocs)
    reader.run(_commands(tokens))
    return reader


def parse_launch_script(text: str, path: str = "<script>") -> LaunchScript:
    """Read one launch script: the environment and argv of its one serve command. Runs nothing.

    `path` only labels errors and the result (the caller reads the file). Raises ScriptError ("PATH:LINE: why")
    for no serve command, more than one, one inside control flow, unbalanced quotes, or a non-text file."""
    return _read(text, path).finish()


def serve_spans(text: str, path: str = "<script>") -> tuple[tuple[int, int], ...]:
    """(first line, last line) of every serve command the script runs, in order -- for splitting a text that
    holds several (a tutorial block with one command per node) into one launch script per command. Raises
    ScriptError like parse_launch_script (unbalanced quotes, binary text, a serve command inside control flow),
    but not for the number of serve commands."""
    return tuple(_read(text, path).spans)
