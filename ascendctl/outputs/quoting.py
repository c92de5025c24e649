"""Quoting for rendered artifacts: shell words, shell variable names, and single-line comment text.

A rendered script runs as root on someone's host, and most of what it carries (model paths, env values,
`extra_args`) is free text from a profile. So no renderer builds a shell word by hand: every word goes
through `sh_word` / `sh_join` (POSIX single quotes via `shlex.quote`, which leave nothing to expand), a
variable name through `shell_name` (refused unless it is a plain identifier: it cannot be quoted), and
any text placed in a comment through `one_line` (a line break there would end the comment and start code,
or a new YAML document).

Everything returned here is a `Quoted` string: the templates' `finalize` hook (ascendctl.outputs.render.templating)
refuses to interpolate anything else, so a template cannot emit a raw profile string by accident.
"""

from __future__ import annotations

import re
import shlex
import unicodedata
from collections.abc import Iterable

from ascendctl.core.errors import UserInputError


class Quoted(str):
    """Text already quoted or escaped for the artifact it is written into."""

    __slots__ = ()


# --- shell --------------------------------------------------------------------------------------------

# An identifier the shell accepts in `export NAME=` and `${NAME}` (POSIX "Name", ASCII only: bash refuses
# non-ASCII letters even where Python's str.isalnum() accepts them).
_SHELL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def sh_word(value: str) -> Quoted:
    """One shell word that the shell reads back as exactly `value` (no expansion, no splitting)."""
    return Quoted(shlex.quote(value))


def sh_join(words: Iterable[str]) -> Quoted:
    """A command line of literal words, each quoted with `sh_word`."""
    return Quoted(" ".join(sh_word(w) for w in words))


def shell_name(name: str, what: str = "environment variable") -> Quoted:
    """`name` as a shell variable name; refused unless it is a plain identifier."""
    if not _SHELL_NAME.fullmatch(name):
        raise UserInputError(f"{what} {name!r} is not a valid shell variable name ([A-Za-z_][A-Za-z0-9_]*)")
    return Quoted(name)


def shell_var(name: str) -> Quoted:
    """A double-quoted expansion of variable `name` (one word, whatever its value)."""
    return Quoted(f'"${{{shell_name(name)}}}"')


def shell_product(name: str, factor: int) -> Quoted:
    """A double-quoted arithmetic expansion `$((name * factor))`."""
    return Quoted(f'"$(({shell_name(name)} * {int(factor)}))"')


# --- comments -----------------------------------------------------------------------------------------

# Characters that could end a comment line in some artifact: C0/C1 controls (\n, \r, \v, \f, NEL \x85),
# format characters, and the Unicode line and paragraph separators YAML 1.1 also reads as line breaks.
_LINE_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"})


def one_line(text: str) -> Quoted:
    """`text` made safe to place inside a comment line: every control or line-breaking character is
    written as its Python escape (`\\n`, `\\x85`, `\\u2028`), so the comment cannot end early."""
    return Quoted("".join(_visible(c) for c in text))


def _visible(char: str) -> str:
    if unicodedata.category(char) in _LINE_UNSAFE_CATEGORIES:
        return char.encode("unicode_escape").decode("ascii")
    return char
