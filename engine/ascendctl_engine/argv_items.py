"""`engine.extra_args` (and `network.nodes[i].extra_args`) read once: `parse_args` turns a token list into
`ArgItem`s, each one option with its value, spelled the way vLLM's `FlexibleArgumentParser` and argparse read it.

The rules, in the order vLLM applies them:

- a flag is a token that starts `-` or `--` and a letter (`-1`, `-0.5`, `{...}`, `[...]` are values);
- `_` → `-` in long names (`--max_model_len` → `--max-model-len`); `-O3` / `-O.level` are `-O`;
- `--flag=V` carries its value; otherwise the following tokens that do not read as flags are its values (vLLM's
  list-valued options take several, `nargs="+"`);
- `--flag.key V` / `--flag.key=V` sets one key of a JSON-valued flag (`--compilation-config.level 3`);
- `--no-X` is argparse's `BooleanOptionalAction` negation of `--X`; vLLM also has real `--no-...` flags, so an
  item keeps both spellings (`flag` as written, `positive` without the `no-`).

A token that is neither a flag nor a value of one (the first token, or a token after `--flag=V`) is a
`ValueError` naming its position. Which flags a release has (and which unique prefix argparse would take for an
abbreviation) is not decided here: `resolve_prefixes` asks a caller-given table, the release's parser snapshot.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Sequence

from ascendctl_engine.flags import canonical_flag, reads_as_flag
from ascendctl_engine.records import record


@record
class ArgItem:
    """One option of an argv: `flag` canonical (`--max-model-len`, `-O`, `--no-enable-prefix-caching`)."""

    flag: str
    index: int  # position of the flag token in the list
    tokens: tuple[str, ...]  # as written: the flag token and the values that followed it
    key: str | None = None  # the dotted JSON key (`--compilation-config.level` → "level")
    values: tuple[str, ...] = ()  # `--flag=V` → (V,); `--flag a b` → (a, b); () for a bare switch
    written: str = ""  # the flag before prefix resolution (an abbreviation such as `--api-k`), "" when the same

    @property
    def value(self) -> str | None:
        """The (first) value, None for a bare flag."""
        return self.values[0] if self.values else None

    @property
    def negated(self) -> bool:
        """A `--no-X` spelling (argparse's BooleanOptionalAction sets X False)."""
        return self.flag.startswith("--no-") and len(self.flag) > len("--no-")

    @property
    def positive(self) -> str:
        """The flag without its `no-` (`--no-enable-x` → `--enable-x`); the flag itself when not negated."""
        return "--" + self.flag[len("--no-") :] if self.negated else self.flag

    @property
    def as_written(self) -> str:
        """The flag the profile spelled (before any prefix resolution), canonical."""
        return self.written or self.flag


def _split(token: str) -> tuple[str, str | None, str | None]:
    """(canonical flag, dotted key, `=` value) of a flag token."""
    flag = canonical_flag(token)
    assert flag is not None
    if token.startswith("--"):
        head, eq, rest = token[2:].partition("=")
        _, dot, key = head.partition(".")
        return flag, (key or None) if dot else None, rest if eq else None
    name, eq, rest = token[1:].partition("=")
    if flag == "-O" and name != "O" and not name.startswith("O."):  # -O3: the level attached
        return flag, None, name[1:]
    _, dot, key = name.partition(".")
    return flag, (key or None) if dot else None, rest if eq else None


def parse_args(tokens: Sequence[str]) -> tuple[ArgItem, ...]:
    """The options of `tokens`, in order. Raises ValueError (naming the position) for a token that is neither a
    flag nor a value of the flag before it."""
    items: list[ArgItem] = []
    open_values = False  # whether the last flag takes following values (no `=V`, no attached -O level)
    for index, token in enumerate(tokens):
        if reads_as_flag(token):
            flag, key, value = _split(token)
            items.append(ArgItem(flag, index, (token,), key, () if value is None else (value,)))
            open_values = value is None
            continue
        # The token itself is not quoted: a stray word may be part of a secret (`--api-key=S1 S2`), and the
        # position (with the file's line) finds it.
        if not items:
            raise ValueError(f"extra_args must start with a flag such as '--foo', not a value (position {index})")
        last = items[-1]
        if not open_values:
            raise ValueError(
                f"position {index} is neither a flag nor a value of one (`{last.flag}` at position {last.index} "
                "already has its value: `=V`, or attached as in `-O3`)"
            )
        items[-1] = dataclasses.replace(last, tokens=(*last.tokens, token), values=(*last.values, token))
    return tuple(items)


def find(items: Sequence[ArgItem], flag: str, *, abbreviation: int | None = None) -> ArgItem | None:
    """The first item for `flag` (canonical); with `abbreviation`, a unique prefix of at least that many
    characters counts too, as argparse takes it (`--kv-cache-memory` for `--kv-cache-memory-bytes`)."""
    for item in items:
        name = item.flag
        if name == flag:
            return item
        if abbreviation and name.startswith("--") and len(name) >= abbreviation and flag.startswith(name):
            return item
    return None


@record
class PrefixProblem:
    """An abbreviated long flag a release cannot resolve: no candidate (unknown) or several (ambiguous)."""

    item: ArgItem
    candidates: tuple[str, ...]


def resolve_prefixes(
    items: Sequence[ArgItem], known: Collection[str], candidates: Callable[[str], Sequence[str]]
) -> tuple[tuple[ArgItem, ...], tuple[PrefixProblem, ...]]:
    """`items` with every long flag that is not in `known` resolved as argparse resolves a unique prefix: one
    candidate → the item names the full flag (`written` keeps the abbreviation); none or several → a problem
    (the item is kept as written)."""
    out: list[ArgItem] = []
    problems: list[PrefixProblem] = []
    for item in items:
        if not item.flag.startswith("--") or item.flag in known:
            out.append(item)
            continue
        found = tuple(candidates(item.flag))
        if len(found) == 1:
            out.append(dataclasses.replace(item, flag=found[0], written=item.flag))
        else:
            problems.append(PrefixProblem(item, found))
            out.append(item)
    return tuple(out), tuple(problems)


__all__ = ["ArgItem", "PrefixProblem", "find", "parse_args", "resolve_prefixes"]
