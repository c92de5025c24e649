"""Help that names values the way other command-line tools do: `PROFILE...`, `--node N`, `--output PATH`.

typer (from 0.2x, the one that vendors click as `typer._click`) writes a parameter's Python type into the help:
`PROFILE <list[Path]>`, `--node <int range>  [x>=0]`, `--release <str>`, and braces a required argument in the
usage line (`validate [OPTIONS] {PROFILE}...`). git, pip, kubectl and click's own help name the value instead.
`enable()` (called when the app is built) puts that rule at the few methods typer writes the help from
(`typer/core.py`: `TyperArgument` and `TyperOption`), so each of the commands' parameters follows it without a
`metavar=` of its own; a declaration names one only where the rule reads wrong (`--set KEY.PATH=VALUE`).

- An argument is its metavar, else its name upper-cased (`PROFILE`), with `...` when it takes several; the usage
  line brackets an optional one (`[NAME]`) and leaves a required one bare. Errors name it the same way
  (`Missing argument 'PROFILE'`).
- An option's value is its metavar, else by its type: `N` for an integer; `SECONDS` for a number named like a
  duration (`--timeout`, `--interval`), else `NUMBER`; `FILE`, `DIR` or `PATH` for a path (a file only, a
  directory only, either); else the option's long name upper-cased (`--release RELEASE`). A repeatable option
  takes one value each time, so its value has no `...`.
- No `[x>=0]` after the help: typer still checks the bounds (and its error names them); a help text says a
  range where it matters (`init --devices`).

Where typer is laid out differently (no such methods), `enable` does nothing and the help is typer's own.
"""

from __future__ import annotations

from pathlib import PurePath
from typing import Any, Final, get_args

from typer import core as typer_core

# Float options whose value is a duration in seconds (by the parameter's name).
DURATIONS: Final = frozenset({"timeout", "interval", "delay", "wait"})

# The methods typer writes an argument's and an option's help from; `enable` replaces them all or none.
_ARGUMENT_METHODS: Final = (
    "_rich_display_name",
    "_usage_display_name",
    "display_type_rich",
    "get_error_hint",
    "_get_number_range_help_str",
)
_OPTION_METHODS: Final = ("display_type_rich", "_get_number_range_help_str")


def argument_metavar(param: Any) -> str:
    """`PROFILE`, `PROFILE...` (several values), or the argument's own metavar (`...` added when it takes several)."""
    name = param.metavar if param.metavar is not None else str(param.name or "value").upper()
    if param.nargs != 1 and not name.endswith("..."):
        name += "..."
    return str(name)


def option_metavar(param: Any) -> str:
    """The value of an option that takes one: its own metavar, else one named by its type (module docstring)."""
    if param.metavar is not None:
        return str(param.metavar)
    descriptor = param.type_descriptor
    choices = descriptor.choices
    if choices is not None:
        return "|".join(str(getattr(choice, "value", choice)) for choice in choices)
    annotation = descriptor.annotation
    if descriptor.is_list:
        args = get_args(annotation)
        annotation = args[0] if len(args) == 1 else str
    name = str(param.name or "")
    if annotation is int:
        metavar = "N"
    elif annotation is float:
        metavar = "SECONDS" if name in DURATIONS else "NUMBER"
    elif isinstance(annotation, type) and issubclass(annotation, PurePath):
        info = descriptor.parameter_info
        metavar = "FILE" if not info.dir_okay else "DIR" if not info.file_okay else "PATH"
    else:
        longest = max((o for o in param.opts if o.startswith("--")), key=len, default=name)
        metavar = longest.lstrip("-").replace("-", "_").upper() or "VALUE"
    return metavar if param.nargs == 1 else " ".join([metavar] * max(param.nargs, 1))


def _argument_usage(self: Any) -> str:
    name = argument_metavar(self)
    return name if self.required else f"[{name}]"


def _argument_error_hint(self: Any) -> str:
    return f"'{argument_metavar(self)}'"


def _no_type(self: Any, ctx: Any) -> None:
    return None


def _option_value(self: Any, ctx: Any) -> str:
    return option_metavar(self)


def _no_range(self: Any) -> None:
    return None


def enable() -> bool:
    """Write every argument's and option's value name by the rule above from now on (idempotent). True when
    typer has the methods this module replaces."""
    argument = getattr(typer_core, "TyperArgument", None)
    option = getattr(typer_core, "TyperOption", None)
    if argument is None or option is None:  # pragma: no cover - another typer
        return False
    if not all(callable(getattr(argument, m, None)) for m in _ARGUMENT_METHODS) or not all(
        callable(getattr(option, m, None)) for m in _OPTION_METHODS
    ):  # pragma: no cover - another typer
        return False
    if getattr(argument, "_ascendctl_metavars", False):
        return True
    for owner, method, replacement in (
        (argument, "_rich_display_name", argument_metavar),
        (argument, "_usage_display_name", _argument_usage),
        (argument, "display_type_rich", _no_type),
        (argument, "get_error_hint", _argument_error_hint),
        (argument, "_get_number_range_help_str", _no_range),
        (option, "display_type_rich", _option_value),
        (option, "_get_number_range_help_str", _no_range),
    ):
        setattr(owner, method, replacement)
    argument._ascendctl_metavars = True
    return True
