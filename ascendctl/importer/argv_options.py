"""A `vllm serve` argv (or `ray start`'s) read as options, the way vLLM reads them: `--flag V`, `--flag=V`, the
positional model first where there is one (`argv_items.parse_args`). The one place the importer takes an option's
value out of a script's argv or drops options from it."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from ascendctl_engine.argv_items import parse_args


def take(argv: Sequence[str], flags: Collection[str]) -> tuple[list[str], str | None]:
    """`argv` without the options `flags` (canonical long flags), and the first one's value ("" for a switch, None
    when absent). An argv the parser refuses comes back whole, with no value (`compare` reports it in the parser's
    own words)."""
    tokens = list(argv)
    model = [tokens.pop(0)] if tokens and not tokens[0].startswith("-") else []
    try:
        items = parse_args(tokens)
    except ValueError:
        return list(argv), None
    found = next((i for i in items if i.flag in flags), None)
    value = None if found is None else (found.value if found.value is not None else "")
    return [*model, *(t for i in items if i.flag not in flags for t in i.tokens)], value


def option_value(argv: Sequence[str], flag: str) -> str | None:
    """The value of `flag` ("" for a switch), None when absent."""
    return take(argv, (flag,))[1]


def without_options(argv: Sequence[str], flags: Collection[str]) -> list[str]:
    return take(argv, flags)[0]


__all__ = ["option_value", "take", "without_options"]
