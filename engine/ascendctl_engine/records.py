"""Value records: dataclasses that are cheap to define, frozen by default.

Python 3.11's `dataclasses` compiles every method it generates from source text with exec(): a frozen class
gets `__init__`, `__repr__`, `__eq__`, `__hash__`, `__setattr__` and `__delattr__`, about 0.8 ms per class.
ascendctl defines some two hundred record classes, so every CLI start spent ~100 ms compiling them
(`make bench`, issue 32: start-up ≤ 2× the dependency import floor). `record` lets dataclasses collect the
fields (so `dataclasses.fields`, `replace`, `asdict` and `is_dataclass` work as before) and generate nothing;
`__init__`, equality, hashing, repr and immutability are functions written once here that read a per-class
plan of the fields, so defining a record class compiles no code. An instance costs a few microseconds more to
build, which is nothing at the few thousand instances a command makes.

Records behave as `@dataclass(frozen=True)` does (tests/test_records.py compares the two side by side): the
same parameters, defaults, factories, keyword-only and `init=False` fields and `__post_init__` call, the same
argument errors, equality and hashing over the fields that compare, the same repr, `FrozenInstanceError` on
assignment or deletion. The differences: `inspect.signature` of a record class reads `(*args, **kwargs)`; a
record without a docstring is documented as `Name(field, ...)` (dataclasses writes the annotated signature,
which it reads with `inspect.signature`: about 0.3 ms a class, more than the rest of a record's definition); and
`InitVar` pseudo-fields are not supported.

`@record(frozen=False)` is the same for a mutable class (a builder filled in step by step): assignment and
deletion work, and with equality an instance is unhashable, as `@dataclass` makes it.
"""

from __future__ import annotations

import dataclasses
import reprlib
from collections.abc import Callable
from typing import Any, TypeVar, overload

from typing_extensions import dataclass_transform

_T = TypeVar("_T", bound=type)

_COMPARE_KEY = "__record_compare_key__"
_HASH_KEY = "__record_hash_key__"
_REPR_NAMES = "__record_repr_names__"
_INIT_PLAN = "__record_init_plan__"


def _key_of(names: tuple[str, ...]) -> Callable[[object], tuple[Any, ...]]:
    """The tuple of those fields' values, as dataclasses compares and hashes them (always a tuple, so that
    identical members compare equal even when `==` says otherwise, e.g. the same NaN)."""

    def key(obj: object) -> tuple[Any, ...]:
        return tuple([getattr(obj, name) for name in names])

    return key


def _record_eq(self: object, other: object) -> bool:
    if other.__class__ is self.__class__:
        key: Callable[[object], tuple[object, ...]] = getattr(type(self), _COMPARE_KEY)
        return key(self) == key(other)
    return NotImplemented  # type: ignore[no-any-return]  # typeshed: NotImplemented is Any


def _record_hash(self: object) -> int:
    return hash(getattr(type(self), _HASH_KEY)(self))


@reprlib.recursive_repr()
def _record_repr(self: object) -> str:
    names = getattr(type(self), _REPR_NAMES)
    inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
    return f"{type(self).__qualname__}({inner})"


def _record_setattr(self: object, name: str, value: object) -> None:
    # `__init__` below fills the instance's __dict__ itself, so every assignment is a mutation
    raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")


def _record_delattr(self: object, name: str) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")


_NO_DEFAULT: Any = object()  # a required field's or a factory field's place in `_InitPlan.template`


class _InitPlan:
    """What `__init__` does for one record class, read once from its dataclass fields: the same parameters,
    defaults, factories, keyword-only and `init=False` fields as the `__init__` dataclasses generates."""

    __slots__ = ("arity", "factories", "fixed", "name", "names", "positional", "post_init", "required", "template")

    def __init__(self, cls: type, fields: tuple[dataclasses.Field[Any], ...]) -> None:
        init = [field for field in fields if field.init]
        defaults, factories = _defaults(fields)
        self.name = f"{cls.__qualname__}.__init__()"
        self.positional = tuple(field.name for field in init if not field.kw_only)
        # keyword-only fields come after the positional ones in dataclasses' signature, whatever their order
        self.names = self.positional + tuple(field.name for field in init if field.kw_only)
        # a call giving exactly this many positional arguments and no keyword binds every init field in order
        # (-1: never, when there are keyword-only fields)
        self.arity = len(self.positional) if self.names == self.positional else -1
        self.required = frozenset(f.name for f in init if f.name not in defaults.keys() | factories.keys())
        # every init field in declaration order, with its default where it has one: the instance's starting state
        self.template = {f.name: defaults.get(f.name, _NO_DEFAULT) for f in init}
        self.factories = tuple((f.name, factories[f.name]) for f in init if f.name in factories)
        # init=False fields with a default or a factory: (name, default, factory), one of the two None
        self.fixed: tuple[tuple[str, object, Callable[[], object] | None], ...] = tuple(
            (f.name, defaults.get(f.name), factories.get(f.name))
            for f in fields
            if not f.init and (f.name in defaults or f.name in factories)
        )
        self.post_init = hasattr(cls, "__post_init__")


def _defaults(
    fields: tuple[dataclasses.Field[Any], ...],
) -> tuple[dict[str, object], dict[str, Callable[[], object]]]:
    """The fields' defaults and default factories, by name."""
    defaults = {f.name: f.default for f in fields if f.default is not dataclasses.MISSING}
    factories = {f.name: f.default_factory for f in fields if f.default_factory is not dataclasses.MISSING}
    return defaults, factories


def _bind(plan: _InitPlan, args: tuple[object, ...], kwargs: dict[str, object]) -> dict[str, object]:
    """The arguments by field name, refused as Python refuses them for the generated `__init__`."""
    if len(args) > len(plan.positional):
        raise TypeError(
            f"{plan.name} takes {len(plan.positional) + 1} positional arguments but {len(args) + 1} were given"
        )
    bound = dict(zip(plan.positional, args, strict=False)) if args else kwargs
    if args and kwargs:
        twice = bound.keys() & kwargs.keys()
        if twice:
            raise TypeError(f"{plan.name} got multiple values for argument {min(twice)!r}")
        bound.update(kwargs)
    if not kwargs.keys() <= plan.template.keys():
        unknown = kwargs.keys() - plan.template.keys()
        raise TypeError(f"{plan.name} got an unexpected keyword argument {min(unknown)!r}")
    if not plan.required <= bound.keys():
        _refuse_missing(plan, bound)
    return bound


def _refuse_missing(plan: _InitPlan, bound: dict[str, object]) -> None:
    # Python's own wording: the positional ones first, then (if none) the keyword-only ones
    missing = [name for name in plan.names if name in plan.required and name not in bound]
    positional = [name for name in missing if name in plan.positional]
    kind, names = ("positional", positional) if positional else ("keyword-only", missing)
    quoted = [repr(name) for name in names]
    listed = quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + ("," if len(quoted) > 2 else "")
    listed += "" if len(quoted) == 1 else f" and {quoted[-1]}"
    plural = "s" if len(names) > 1 else ""
    raise TypeError(f"{plan.name} missing {len(names)} required {kind} argument{plural}: {listed}")


def _record_init(self: object, *args: object, **kwargs: object) -> None:
    plan: _InitPlan = getattr(type(self), _INIT_PLAN)
    state = self.__dict__
    if not kwargs and len(args) == plan.arity:  # the common call: every field, in order (declaration order kept)
        state.update(zip(plan.positional, args, strict=True))
    else:
        bound = _bind(plan, args, kwargs)
        state.update(plan.template)  # declaration order; the updates below keep it
        state.update(bound)
        for name, make in plan.factories:
            if name not in bound:
                state[name] = make()
    for name, default, factory in plan.fixed:
        state[name] = default if factory is None else factory()
    if plan.post_init:
        self.__post_init__()  # type: ignore[attr-defined]


# The pseudo-fields dataclasses recognises in a postponed (string) annotation.
_PSEUDO_FIELD_NAMES = ("ClassVar", "InitVar", "KW_ONLY")


def _collect_fields(cls: type) -> tuple[dataclasses.Field[Any], ...]:
    """`dataclasses.dataclass(cls, init=False, repr=False, eq=False, frozen=False)`, which sets the fields up in place;
    returns them.

    With postponed annotations every annotation is a string, and for each one dataclasses matches it three times
    against a regular expression and looks its first name up in the class's module (is it a ClassVar, an InitVar,
    KW_ONLY?): about a third of a record's definition cost. A string that names none of the three cannot be one, so
    dataclasses is shown `object` in its place, and each field's `type` is the string again afterwards (as is the
    class's `__annotations__`)."""
    annotations: dict[str, Any] = cls.__dict__.get("__annotations__") or {}  # noqa: RUF063 - what dataclasses reads
    plain = {
        name: text
        for name, text in annotations.items()
        if isinstance(text, str) and not any(word in text for word in _PSEUDO_FIELD_NAMES)
    }
    if plain:
        cls.__annotations__ = {name: object if name in plain else text for name, text in annotations.items()}
    try:
        dataclasses.dataclass(cls, init=False, repr=False, eq=False, frozen=False)
    finally:
        if plain:
            cls.__annotations__ = annotations
    fields = dataclasses.fields(cls)
    for field in fields:
        if field.name in plain and field.type is object:
            field.type = plain[field.name]
    return fields


def _make_record(cls: _T, *, eq: bool, frozen: bool) -> _T:
    # What the class body itself defines wins, as with dataclasses.
    own = cls.__dict__
    for name in ("__setattr__", "__delattr__"):
        if frozen and name in own:
            raise TypeError(f"cannot overwrite attribute {name} in class {cls.__name__}")
    if not frozen and "__setattr__" in own:  # `__init__` below fills `__dict__`, where dataclasses' calls the method
        raise TypeError(f"a mutable record cannot define __setattr__ (class {cls.__name__}): use @dataclass")

    undocumented = not own.get("__doc__")
    if undocumented:
        cls.__doc__ = cls.__name__  # keeps dataclasses from reading the class's signature (see the module docstring)
    fields = _collect_fields(cls)
    if undocumented:
        cls.__doc__ = f"{cls.__name__}({', '.join(field.name for field in fields if field.init)})"
    if "__init__" not in own:
        setattr(cls, _INIT_PLAN, _InitPlan(cls, fields))
        cls.__init__ = _record_init  # type: ignore[misc]
    setattr(cls, _REPR_NAMES, tuple(field.name for field in fields if field.repr))
    if "__repr__" not in own:
        cls.__repr__ = _record_repr  # type: ignore[assignment]
    if frozen:
        cls.__setattr__ = _record_setattr  # type: ignore[assignment]
        cls.__delattr__ = _record_delattr  # type: ignore[assignment]
    if eq:
        _add_equality(cls, fields, hashable=frozen)
    return cls


def _add_equality(cls: type, fields: tuple[dataclasses.Field[Any], ...], *, hashable: bool) -> None:
    """Equality over the fields that compare, and (unless the class body defines its own) hashing over the
    fields that hash, or none for a mutable class (`hashable` False). An `__eq__` in the body leaves `__hash__`
    None there, which is not a hash of its own."""
    own = cls.__dict__
    body_hash = own.get("__hash__", dataclasses.MISSING)
    explicit_hash = not (body_hash is dataclasses.MISSING or (body_hash is None and "__eq__" in own))
    setattr(cls, _COMPARE_KEY, _key_of(tuple(field.name for field in fields if field.compare)))
    if "__eq__" not in own:
        cls.__eq__ = _record_eq  # type: ignore[assignment]
    if explicit_hash:
        return
    if not hashable:  # a mutable instance's hash could change while it sits in a set: none (dataclasses' rule)
        cls.__hash__ = None  # type: ignore[assignment]
        return
    hashed = tuple(field.name for field in fields if (field.hash is None and field.compare) or field.hash)
    setattr(cls, _HASH_KEY, _key_of(hashed))
    cls.__hash__ = _record_hash  # type: ignore[assignment]


@overload
def record(cls: _T, /) -> _T: ...


@overload
def record(*, eq: bool = True, frozen: bool = True) -> Callable[[_T], _T]: ...


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field, dataclasses.Field))
def record(cls: _T | None = None, /, *, eq: bool = True, frozen: bool = True) -> _T | Callable[[_T], _T]:
    """`@record` is `@dataclass(frozen=True)`; `@record(eq=False)` is `@dataclass(frozen=True, eq=False)`
    (identity equality and hashing); `@record(frozen=False)` is `@dataclass` (mutable)."""
    if cls is None:
        return lambda target: _make_record(target, eq=eq, frozen=frozen)
    return _make_record(cls, eq=eq, frozen=frozen)
