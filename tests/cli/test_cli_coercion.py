"""ascendctl.cli.coercion: option values decided without a pydantic adapter give what typer's own coercion gives.

typer's own coercion (`typer._coercion.build_runtime_param`) is the reference: for generated values of every
annotation the direct path handles, a value the direct path decides must come out equal (and of the same type)
to typer's result, and a value it does not decide goes to typer's own, errors and all.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import typer
import typer.main
from hypothesis import example, given, settings
from hypothesis import strategies as st
from typer._click.exceptions import BadParameter
from typer._coercion import build_runtime_param, resolve_type_descriptor
from typer.models import ArgumentInfo, OptionInfo
from typer.testing import CliRunner

from ascendctl.cli import coercion, full_app

LEAVES: list[Any] = [str, bool, int, float, Path]


def outcome(runtime: Any, value: Any, *, multiple: bool) -> tuple[str, Any]:
    """("ok", value), ("error", message) or ("raises", "Type: message") of one coercion, as typer's parameter
    processing sees it. Anything else raised is compared too: the direct path must fail exactly where and as typer's
    own fails (a Path object with an embedded NUL once reached `os.stat` on the direct path only)."""
    param = SimpleNamespace(multiple=multiple, nargs=1)  # what `coerce` reads of the parameter
    try:
        return "ok", runtime.coerce(value, param=param, ctx=None)
    except BadParameter as exc:
        return "error", exc.message
    except Exception as exc:  # compared with what typer's own coercion raises
        return "raises", f"{type(exc).__name__}: {exc}"


def same(a: tuple[str, Any], b: tuple[str, Any]) -> bool:
    if a[0] != b[0]:
        return False
    x, y = a[1], b[1]
    if isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y):
        return True
    return type(x) is type(y) and x == y


def compare(annotation: Any, value: Any, info: Any = None) -> None:
    descriptor = resolve_type_descriptor(annotation, info or OptionInfo())
    direct = coercion.direct_param(descriptor)
    assert direct is not None, annotation
    multiple = descriptor.is_list
    ours = outcome(direct, value, multiple=multiple)
    theirs = outcome(build_runtime_param(descriptor), value, multiple=multiple)
    if direct.leaf is Path and ("" in value if isinstance(value, (list, tuple)) else value == ""):
        # the one deliberate difference: typer reads "" as the current directory, the direct path refuses it (with
        # typer's own message where typer refuses another item of the list first, e.g. one with a NUL)
        assert ours[0] == "error", (annotation, value, ours)
        assert ours == ("error", "an empty path") or theirs[0] == "error", (annotation, value, ours, theirs)
        return
    assert same(ours, theirs), (annotation, value, ours, theirs)


numbers = st.one_of(
    st.integers(min_value=-(10**16), max_value=10**16).map(str),
    st.floats(allow_nan=False, allow_infinity=False, width=64).map(repr),
    st.from_regex(r"\A[ +\-]?[0-9_]{0,8}(\.[0-9]{0,8})?([eE][+\-]?[0-9]{1,3})?[ ]?\Z"),
)
texts = st.one_of(
    st.text(max_size=20),
    st.sampled_from(["", " ", "-", "--set", "-x", "0", "true", "no", "a\x00b", "~/x", "./a b"]),
    numbers,
)
values = st.one_of(
    texts, st.integers(), st.floats(allow_nan=False), st.booleans(), st.none(), st.builds(Path, st.text(max_size=8))
)


@settings(max_examples=300, deadline=None)
@example(annotation=Path, value=Path("\x00"))  # typer's own refuses it through pydantic; the direct path must too
@given(annotation=st.sampled_from(LEAVES), value=values)
def test_a_decided_value_is_what_typers_own_coercion_gives(annotation: Any, value: Any) -> None:
    compare(annotation, value)


@settings(max_examples=150, deadline=None)
@given(annotation=st.sampled_from([str, int, Path]), items=st.lists(texts, max_size=4), as_tuple=st.booleans())
def test_lists_agree_with_typer(annotation: Any, items: list[str], as_tuple: bool) -> None:
    compare(list[annotation], tuple(items) if as_tuple else items)  # type: ignore[valid-type]


def test_path_checks_are_typers_own(tmp_path: Path) -> None:
    present, absent = tmp_path / "here.yaml", tmp_path / "gone.yaml"
    present.write_text("x")
    for info in (OptionInfo(), OptionInfo(exists=True), OptionInfo(dir_okay=False), OptionInfo(file_okay=False)):
        for value in (str(present), str(absent), str(tmp_path), present):
            compare(Path, value, info)
    if os.geteuid() != 0:  # root reads everything: the unreadable case only exists for other users
        unreadable = tmp_path / "secret.yaml"
        unreadable.write_text("x")
        unreadable.chmod(0)
        compare(Path, str(unreadable), ArgumentInfo(readable=True))


@settings(max_examples=200, deadline=None)
@given(
    annotation=st.sampled_from([int, float]),
    low=st.none() | st.integers(-5, 5),
    high=st.none() | st.integers(-5, 5),
    value=st.one_of(numbers, st.integers(-8, 8), st.floats(-8, 8)),
)
def test_ranges_agree_with_typer(annotation: Any, low: int | None, high: int | None, value: Any) -> None:
    compare(annotation, value, OptionInfo(min=low, max=high))


def test_clamps_parsers_and_choices_stay_typers() -> None:
    # clamped ranges, custom parsers and choices are typer's alone: no direct path is made for them
    for annotation, info in (
        (int, OptionInfo(max=3, clamp=True)),
        (str, OptionInfo(parser=str.upper)),
        (bool, OptionInfo(parser=bool)),
    ):
        assert coercion.direct_param(resolve_type_descriptor(annotation, info)) is None


def test_every_parameter_of_the_cli_takes_the_direct_path_or_needs_typer() -> None:
    # The speed is only real when the CLI's own parameters are covered: every one is handled directly.
    group = typer.main.get_command(full_app())
    left: list[str] = []

    def walk(command: Any, path: str) -> None:
        for param in command.params:
            if coercion.direct_param(param.type_descriptor) is None:
                left.append(f"{path} {param.name}")
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, f"{path} {name}".strip())

    walk(group, "")
    assert left == []


def test_a_bad_value_is_refused_with_typers_message(tmp_path: Path) -> None:
    # end to end: an int option given a word and a path option given an empty string go to typer's own coercion
    app = typer.Typer()

    @app.command()
    def run(count: int = 1, where: Path = Path(".")) -> None:
        typer.echo(f"{count} {where}")

    coercion.enable()
    runner = CliRunner()
    good = runner.invoke(app, ["--count", "12", "--where", str(tmp_path)])
    assert good.exit_code == 0 and good.output.strip() == f"12 {tmp_path}"
    bad = runner.invoke(app, ["--count", "twelve"])
    assert bad.exit_code == 2
    assert "Invalid value for '--count'" in bad.output
    empty = runner.invoke(app, ["--where", ""])  # typer alone would run with where=Path(".")
    assert empty.exit_code == 2
    assert "Invalid value for '--where': an empty path" in empty.output


@pytest.mark.parametrize("annotation", LEAVES)
def test_none_is_none(annotation: Any) -> None:
    compare(annotation, None)
