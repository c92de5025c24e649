"""systemd's unit-file escaping rules, one function per kind of setting.

The rules (systemd.syntax(7) "Quoting", systemd.service(5) "Command lines", systemd.exec(5)
"Environment=", systemd.unit(5) "Specifiers"; checked against systemd 252's `systemd-analyze verify`):

- A unit file is read line by line; a line ending in a backslash continues on the next one. So no value
  may carry a control character (a line break would start a new directive) or end in a backslash.
- `%` starts a specifier (`%n` is the unit name, `%h` a home directory) in ExecStart=, Environment=,
  EnvironmentFile= and Description=, inside quotes too: a literal percent sign is `%%`.
- ExecStart= is split into words like a shell line: a word may be wrapped in double quotes, inside which
  C escapes are decoded (`\\\\`, `\\"`); a lone `;` word separates commands (never unquoted here).
  After the first word, `$NAME` and `${NAME}` are replaced by environment variables: a literal `$` is `$$`.
- The first ExecStart= word, the executable, takes specifiers but no `$` substitution (`"$$"` stays two
  dollar signs there), may contain spaces but no quotes, backslashes or control characters ("Executable
  name contains special characters"), and a leading `-`, `@`, `:`, `+` or `!` is a prefix, not part of the
  path: it must be absolute, and `$` is refused in it so the process's argv[0] equals the path.
- Description= and paths such as EnvironmentFile= are taken verbatim (no unquoting): only `%` needs
  escaping.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ascendctl.core.errors import UserInputError
from ascendctl.outputs.quoting import Quoted

# Words written without quotes: nothing in them is special to systemd (no whitespace, quote, backslash,
# `%`, `$` or `;`), so they read back unchanged; everything else is double-quoted and escaped.
_BARE_WORD = re.compile(r"[A-Za-z0-9_+=:,./-]+")
_EXEC_PATH_REFUSED = frozenset("\"'\\$")


def exec_line(argv: Sequence[str], what: str = "ExecStart=") -> Quoted:
    """An ExecStart= value that systemd splits back into exactly `argv`."""
    if not argv:
        raise ValueError("an ExecStart= line needs at least the executable")
    return Quoted(" ".join([exec_path(argv[0], what), *(exec_arg(a, what) for a in argv[1:])]))


def exec_path(path: str, what: str = "ExecStart=") -> Quoted:
    """The first ExecStart= word: an absolute executable path."""
    _refuse_line_breaks(path, what)
    if not path.startswith("/"):
        raise UserInputError(f"{what} {path!r}: the executable must be an absolute path")
    if refused := sorted(_EXEC_PATH_REFUSED.intersection(path)):
        raise UserInputError(f"{what} {path!r}: systemd refuses {' '.join(refused)} in an executable path")
    escaped = _specifiers(path)
    return Quoted(f'"{escaped}"' if any(c.isspace() for c in path) else escaped)


def exec_arg(value: str, what: str = "ExecStart=") -> Quoted:
    """One ExecStart= argument after the executable."""
    _refuse_line_breaks(value, what)
    if _BARE_WORD.fullmatch(value):
        return Quoted(value)
    escaped = _specifiers(_c_escapes(value)).replace("$", "$$")
    return Quoted(f'"{escaped}"')


def text(value: str, what: str = "Description=") -> Quoted:
    """Free text for a verbatim setting such as Description=."""
    _refuse_line_breaks(value, what)
    if value.endswith("\\"):
        raise UserInputError(f"{what} {value!r}: a trailing backslash would join the next line")
    return Quoted(_specifiers(value))


def path(value: str, what: str = "EnvironmentFile=") -> Quoted:
    """An absolute path for a verbatim path setting such as EnvironmentFile=."""
    if not value.startswith("/"):
        raise UserInputError(f"{what} {value!r}: must be an absolute path")
    return text(value, what)


def _specifiers(value: str) -> str:
    return value.replace("%", "%%")


def _c_escapes(value: str) -> str:
    # Inside double quotes systemd decodes C escapes: only the backslash and the quote itself need one.
    return value.replace("\\", "\\\\").replace('"', '\\"')


def _refuse_line_breaks(value: str, what: str) -> None:
    if any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in value):
        raise UserInputError(f"{what} {value!r}: a systemd unit line cannot carry control characters")
