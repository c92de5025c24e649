"""`record` behaves as `@dataclass(frozen=True)`: each check runs on a record class and on the stdlib twin of
the same body, and the two must agree."""

from __future__ import annotations

import copy
import dataclasses
import math
import pickle
import typing
from dataclasses import dataclass, field
from typing import ClassVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ascendctl_engine.records import record


def _pair(body: dict[str, object], annotations: dict[str, str], **options: bool) -> tuple[type, type]:
    def build(decorate: object, name: str) -> type:
        namespace = {"__annotations__": dict(annotations), "__module__": __name__, **body}
        return decorate(type(name, (), namespace))  # type: ignore[operator, no-any-return]

    eq = options.get("eq", True)
    frozen = options.get("frozen", True)
    ours = build(record(eq=eq, frozen=frozen), "Point")
    theirs = build(dataclass(frozen=frozen, eq=eq), "Point")
    return ours, theirs


FIELDS = {"x": "int", "y": "float", "tags": "tuple[str, ...]"}
DEFAULTS: dict[str, object] = {"tags": ()}
values = st.tuples(st.integers(), st.floats(allow_nan=True), st.tuples(st.text(max_size=3)))


@given(a=values, b=values)
def test_equality_hash_and_repr_match_a_frozen_dataclass(
    a: tuple[int, float, tuple[str, ...]], b: tuple[int, float, tuple[str, ...]]
) -> None:
    ours, theirs = _pair(DEFAULTS, FIELDS)
    mine_a, mine_b = ours(*a), ours(*b)
    std_a, std_b = theirs(*a), theirs(*b)
    assert (mine_a == mine_b) == (std_a == std_b)
    assert (mine_a == mine_a) == (std_a == std_a)  # the same NaN object is equal to itself in both
    assert hash(mine_a) == hash(std_a)
    assert repr(mine_a) == repr(std_a)
    assert mine_a != std_a  # another class never compares equal


def test_fields_marked_out_of_compare_hash_and_repr_are_left_out_alike() -> None:
    body = {"note": field(default="", compare=False, repr=False), "cached": field(default=0, hash=False)}
    annotations = {"x": "int", "note": "str", "cached": "int"}
    ours, theirs = _pair(body, annotations)
    assert ours(1, "a", 5) == ours(1, "b", 5)
    assert ours(1, "a", 5) != ours(1, "a", 6)
    assert hash(ours(1, "a", 5)) == hash(theirs(1, "a", 5)) == hash(ours(1, "zz", 9))
    assert repr(ours(1, "a", 5)) == repr(theirs(1, "a", 5)) == "Point(x=1, cached=5)"


def test_assignment_and_deletion_raise_frozen_instance_error() -> None:
    ours, _ = _pair(DEFAULTS, FIELDS)
    point = ours(1, 2.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        point.x = 3
    with pytest.raises(dataclasses.FrozenInstanceError):
        point.other = 3  # not a field either
    with pytest.raises(dataclasses.FrozenInstanceError):
        del point.x
    assert point.x == 1


@pytest.mark.parametrize("eq", [True, False])
def test_a_mutable_record_behaves_as_a_dataclass(eq: bool) -> None:
    ours, theirs = _pair({"tags": field(default_factory=list)}, {"x": "int", "tags": "list[str]"}, eq=eq, frozen=False)
    for cls in (ours, theirs):
        first, second = cls(1), cls(1)
        first.x = 2  # assignment, deletion and new attributes work, as on any mutable class
        first.tags.append("a")
        first.extra = "kept"
        assert (first.x, first.tags, first.extra, second.tags) == (2, ["a"], "kept", [])
        del first.extra
        second.x = 2
        second.tags.append("a")
        assert (first == second) is eq  # equality over the fields, or identity
        assert (cls.__hash__ is None) is eq  # mutable and comparing by value: unhashable, as dataclasses makes it
        assert repr(first) == "Point(x=2, tags=['a'])"
    names = [(f.name, f.type) for f in dataclasses.fields(ours)]
    assert names == [(f.name, f.type) for f in dataclasses.fields(theirs)]


def test_a_mutable_record_refuses_a_setattr_of_its_own() -> None:
    # dataclasses' `__init__` assigns through the class's `__setattr__`; a record's fills the instance directly, so
    # a class that needs its `__setattr__` called is refused rather than initialised differently
    def setattr_(self: object, name: str, value: object) -> None:
        object.__setattr__(self, name, value)

    with pytest.raises(TypeError, match="mutable record cannot define __setattr__"):
        _pair({"__setattr__": setattr_}, {"x": "int"}, frozen=False)


def test_dataclass_helpers_work_on_records() -> None:
    ours, _ = _pair(DEFAULTS, FIELDS)
    point = ours(1, 2.0, ("a",))
    assert dataclasses.is_dataclass(point)
    assert [f.name for f in dataclasses.fields(point)] == ["x", "y", "tags"]
    assert dataclasses.asdict(point) == {"x": 1, "y": 2.0, "tags": ("a",)}
    moved = dataclasses.replace(point, x=5)
    assert moved == ours(5, 2.0, ("a",)) and point.x == 1
    assert copy.deepcopy(point) == point
    module_level = _Child("n", 2, [1])
    assert pickle.loads(pickle.dumps(module_level)) == module_level


@record
class _Base:
    name: str
    size: int = 0


@record
class _Child(_Base):
    extra: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        object.__setattr__(self, "size", max(self.size, 0))


@record(eq=False)
class _Identity:
    value: int


@record
class _OwnMethods:
    value: float

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _OwnMethods) and math.isclose(self.value, other.value)

    def __hash__(self) -> int:
        return 7

    def __repr__(self) -> str:
        return "custom"


def test_inheritance_defaults_factories_and_post_init() -> None:
    child = _Child("n", -4)
    assert child == _Child("n", 0, [])
    assert child.extra == [] and child.extra is not _Child("m").extra
    assert repr(child) == "_Child(name='n', size=0, extra=[])"
    assert _Child("n") != _Base("n")
    with pytest.raises(TypeError):
        _Child("n", 1, [], 2)  # type: ignore[call-arg]


def test_eq_false_keeps_identity_and_a_class_body_keeps_its_own_methods() -> None:
    first = _Identity(1)
    assert first != _Identity(1) and first == first
    assert hash(first) == object.__hash__(first)
    assert _OwnMethods(1.0) == _OwnMethods(1.0 + 1e-12)
    assert hash(_OwnMethods(3.0)) == 7 and repr(_OwnMethods(3.0)) == "custom"


def test_a_class_body_setattr_is_refused_as_dataclasses_refuses_it() -> None:
    class Mutable:
        x: int

        def __setattr__(self, name: str, value: object) -> None:
            object.__setattr__(self, name, value)

    with pytest.raises(TypeError):
        record(Mutable)


@record
class _KeywordOnly:
    first: int
    rest: tuple[int, ...] = field(default=(), kw_only=True)
    hidden: int = field(default=3, init=False)


def test_init_binds_arguments_as_the_dataclass_init_does() -> None:
    std = dataclass(frozen=True)(
        type(
            "_KeywordOnly",
            (),
            {
                "__annotations__": dict(_KeywordOnly.__annotations__),
                "__module__": __name__,
                "rest": field(default=(), kw_only=True),
                "hidden": field(default=3, init=False),
            },
        )
    )
    for cls in (_KeywordOnly, std):
        made = cls(1, rest=(2,))
        assert (made.first, made.rest, made.hidden) == (1, (2,), 3)
        assert cls(first=4).rest == ()
    wrong_calls = (
        lambda cls: cls(1, (2,)),  # a keyword-only field given by position
        lambda cls: cls(),  # a required field missing
        lambda cls: cls(1, hidden=4),  # an init=False field
        lambda cls: cls(1, first=2),  # the same field twice
        lambda cls: cls(1, nope=2),  # no such field
    )
    for call in wrong_calls:
        with pytest.raises(TypeError) as ours:
            call(_KeywordOnly)
        with pytest.raises(TypeError) as theirs:
            call(std)
        assert str(ours.value).split("__init__() ")[1] == str(theirs.value).split("__init__() ")[1]


@record
class _Three:
    a: int
    b: int
    c: int
    d: int = field(kw_only=True)


def test_missing_arguments_are_listed_in_pythons_words() -> None:
    for args, expected in (
        ((), "missing 3 required positional arguments: 'a', 'b', and 'c'"),
        ((1,), "missing 2 required positional arguments: 'b' and 'c'"),
        ((1, 2, 3), "missing 1 required keyword-only argument: 'd'"),
    ):
        with pytest.raises(TypeError, match=expected):
            _Three(*args)


def test_a_record_keeps_its_docstring_and_an_undocumented_one_is_named_by_its_init_fields() -> None:
    @record
    class Documented:
        """Says what it is."""

        a: int

    @record
    class Bare:
        a: int
        b: str = "x"
        c: list[int] = field(default_factory=list, init=False)

    assert Documented.__doc__ == "Says what it is."
    assert Bare.__doc__ == "Bare(a, b)"
    assert Bare(1) == Bare(1, "x") and Bare(1).c == []  # documenting it changed nothing else


@record
class _WithClassVars:
    a: int
    b: list[str]
    shared: ClassVar[int] = 3
    kind: typing.ClassVar[str] = "x"


@dataclass(frozen=True)
class _WithClassVarsTwin:
    a: int
    b: list[str]
    shared: ClassVar[int] = 3
    kind: typing.ClassVar[str] = "x"


def test_fields_keep_their_annotations_and_pseudo_fields_are_recognised() -> None:
    # postponed annotations (this module's): the fields' types are the strings, the ClassVars are no fields
    ours = [(f.name, f.type) for f in dataclasses.fields(_WithClassVars)]
    assert ours == [(f.name, f.type) for f in dataclasses.fields(_WithClassVarsTwin)]
    assert ours == [("a", "int"), ("b", "list[str]")]
    assert _WithClassVars.__annotations__ == _WithClassVarsTwin.__annotations__
    assert _WithClassVars(1, ["x"]).kind == "x" and _WithClassVars.shared == 3
