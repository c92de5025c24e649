"""Option values the common way, without a pydantic `TypeAdapter` per parameter.

typer (from 0.2x, the one that vendors click as `typer._click`) coerces every parameter value through a pydantic
`TypeAdapter` it builds on first use (`typer/_coercion.py` `build_runtime_param`, `typer/_adapters.py`), and a
`Path` value through a second adapter per value (`typer/_param_types.py` `coerce_cli_path`). Importing that layer
and building an adapter for each of a command's ten-odd parameters costs every command about 20 ms on the
development machine (`plan`, in-process, alternating runs with and without), to turn strings into the strings,
paths and numbers they already spell.

`enable()` (called when the app is built) gives each parameter a `DirectParam` in place of typer's adapter. It
decides the values whose result is certain: a `str` for a `str`, a `bool` for a `bool`, a plain decimal for an
`int` or a `float` within its `min`/`max`, a string for a `Path` (typer's own path checks then run on it,
unchanged), and lists of those. One value is refused here that typer accepts: an empty string for a `Path`, which
typer reads as the current directory (`render -o "$UNSET"` wrote its files where the user stood). Everything
else goes to typer's own coercion, built on first need: other annotations, clamped ranges, custom parsers,
choices, files, and every value the direct path does not decide.
So a value typer would refuse is still refused by typer, with typer's message; tests/cli/test_cli_coercion.py
checks on generated values that a decided value equals what typer's own coercion returns.

Where typer is older or laid out differently (no `typer._coercion`, no `_TyperParameter.get_runtime_param`),
`enable` does nothing and typer coerces as it always does.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any, Final

import typer

try:  # typer's coercion layer (private: feature-detected, see the module docstring)
    from typer import core as typer_core
    from typer._coercion import RuntimeParam, TypeDescriptor, build_runtime_param
    from typer._param_types import coerce_cli_path
except ImportError:  # pragma: no cover - an older typer: click's own types, nothing to replace
    RuntimeParam = None  # type: ignore[assignment,misc]

# A value the direct path does not decide: typer's own coercion takes it.
_UNDECIDED: Final = object()

# Decimals that every reading agrees on: no sign other than a leading minus, no underscores, no whitespace, no
# exponent, no leading zeros (pydantic and Python's int() differ on some of those). Bounded in length so the
# value is exact in a float as well as an int.
_INTEGER = re.compile(r"-?(?:0|[1-9][0-9]{0,14})")
_DECIMAL = re.compile(r"-?(?:0|[1-9][0-9]{0,14})(?:\.[0-9]{1,6})?")


def _decide_leaf(annotation: Any, value: Any, descriptor: Any, param: Any, ctx: Any) -> Any:
    kind = type(value)
    if annotation is str:
        return value if kind is str else _UNDECIDED
    if annotation is bool:
        return value if kind is bool else _UNDECIDED
    if annotation is int:
        if kind is str and _INTEGER.fullmatch(value):
            value = int(value)
        return _within(value, descriptor.parameter_info) if type(value) is int else _UNDECIDED
    if annotation is float:
        if kind is str and _DECIMAL.fullmatch(value):
            value = float(value)
        return _within(value, descriptor.parameter_info) if type(value) is float else _UNDECIDED
    if annotation is Path:
        if kind is str and not value:
            # typer reads "" as "." (the current directory): `-o "$UNSET"` would write where the user stands
            raise typer.BadParameter("an empty path", ctx=ctx, param=param)
        if kind is str and "\x00" not in value:
            value = Path(value)
        if not isinstance(value, Path) or "\x00" in str(value):  # typer's own refuses a NUL with pydantic's message
            return _UNDECIDED
        # typer's own checks (exists, file/dir, readable, ...), given the Path it would have built itself.
        return coerce_cli_path(value, descriptor.parameter_info, path_type=Path, param=param, ctx=ctx)
    return _UNDECIDED


def _within(number: float, info: Any) -> Any:
    """`number` where it lies within the parameter's `min`/`max` (if any); else typer's own says why not."""
    low, high = info.min, info.max
    if (low is not None and number < low) or (high is not None and number > high):
        return _UNDECIDED
    return number


def _leaf_annotation(descriptor: Any) -> tuple[Any, bool] | None:
    """The annotation the direct path decides for (and whether values come as a list), or None for typer."""
    info = descriptor.parameter_info
    if descriptor.file_annotation is not None or getattr(info, "parser", None) is not None:
        return None
    if descriptor.is_choice or getattr(info, "clamp", None):
        return None
    annotation = descriptor.annotation
    is_list = descriptor.is_list
    if is_list:
        args: tuple[Any, ...] = getattr(annotation, "__args__", ())
        if len(args) != 1:
            return None
        (annotation,) = args
    if annotation is Path and getattr(info, "path_type", None) not in (None, Path):
        return None
    if annotation not in (str, bool, int, float, Path):
        return None
    return annotation, is_list


if RuntimeParam is not None:

    class DirectParam(RuntimeParam):
        """A parameter's coercion: the direct path first, typer's own (built on first need) for the rest.

        `RuntimeParam` is a frozen dataclass; this subclass adds its attributes in `__init__` rather than as
        dataclass fields, which would compile five more methods at every start for one class."""

        descriptor: TypeDescriptor
        leaf: Any
        is_list: bool

        def __init__(self, descriptor: TypeDescriptor, leaf: Any, is_list: bool) -> None:
            super().__init__(parameter_info=descriptor.parameter_info, annotation=descriptor.annotation)
            object.__setattr__(self, "descriptor", descriptor)
            object.__setattr__(self, "leaf", leaf)
            object.__setattr__(self, "is_list", is_list)

        @functools.cached_property  # writes the instance's __dict__ directly: fine on a frozen dataclass
        def typer_own(self) -> RuntimeParam:
            """typer's own coercion of this parameter (a pydantic adapter), built the first time it is needed."""
            return build_runtime_param(self.descriptor)

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            decided = self._decide(value, param, ctx)
            if decided is _UNDECIDED:
                return self.typer_own._coerce_value(value, param=param, ctx=ctx)
            return decided

        def _decide(self, value: Any, param: Any, ctx: Any) -> Any:
            if not self.is_list:
                return _decide_leaf(self.leaf, value, self.descriptor, param, ctx)
            if not isinstance(value, (list, tuple)):
                return _UNDECIDED
            items = []
            for item in value:
                decided = _decide_leaf(self.leaf, item, self.descriptor, param, ctx)
                if decided is _UNDECIDED:
                    return _UNDECIDED
                items.append(decided)
            return items


def direct_param(descriptor: Any) -> Any:
    """The `DirectParam` for a typer type descriptor, or None where typer's own coercion must do it all."""
    if RuntimeParam is None:
        return None
    leaf = _leaf_annotation(descriptor)
    if leaf is None:
        return None
    annotation, is_list = leaf
    return DirectParam(descriptor, annotation, is_list)


def enable() -> None:
    """Route typer's parameter coercion through `DirectParam` from now on (idempotent).

    typer asks one place for a parameter's coercion, `_TyperParameter.get_runtime_param`, and builds it there on
    first use; parameters are also made after the app is built (click makes each command's `--help` option while
    parsing), so the direct path is put at that one place rather than on the parameters of a built tree.
    """
    owner = _typer_parameter_class()
    if owner is None or getattr(owner.get_runtime_param, "direct_path", False):
        return
    typer_own = owner.get_runtime_param

    def get_runtime_param(self: Any) -> Any:
        if self._runtime_param is None:
            self._runtime_param = direct_param(self.type_descriptor)
        return typer_own(self)  # typer's own builds it where the direct path left it None

    get_runtime_param.direct_path = True  # type: ignore[attr-defined]
    owner.get_runtime_param = get_runtime_param


def _typer_parameter_class() -> Any:
    """typer's parameter base class, where it has the coercion layer this module knows; else None."""
    if RuntimeParam is None:
        return None
    owner = getattr(typer_core, "_TyperParameter", None)
    if owner is None or not callable(getattr(owner, "get_runtime_param", None)):
        return None
    return owner
