"""The YAML load boundary: safe, bounded, strict, located."""

from __future__ import annotations

from pathlib import Path

import pytest

from ascendctl.core import yamlio
from ascendctl.core.errors import DocumentError, Issue
from ascendctl.core.yamlio import MAX_ALIASES, MAX_BYTES, MAX_DEPTH, MAX_EXPANDED_NODES, load_yaml_file, load_yaml_text


def only_issue(exc: pytest.ExceptionInfo[DocumentError]) -> Issue:
    assert len(exc.value.issues) == 1, exc.value.issues
    return exc.value.issues[0]


def test_plain_document_data_and_marks() -> None:
    doc = load_yaml_text("a: 1\nb:\n  c: [x, y]\n  d: on\n", "f.yaml")
    assert doc.data == {"a": 1, "b": {"c": ["x", "y"], "d": True}}
    assert doc.marks[("a",)] == yamlio.Mark(1, 1, 1, 4)
    assert doc.marks[("b", "c")] == yamlio.Mark(3, 3, 3, 6)
    # list items are marked at the item itself
    assert doc.marks[("b", "c", 1)].value_line == 3
    assert doc.marks[("b", "c", 1)].value_column == 10


def test_keys_are_always_text() -> None:
    doc = load_yaml_text("1: a\non: b\nnull: c\n", "f.yaml")
    assert doc.data == {"1": "a", "on": "b", "null": "c"}


def test_empty_document_is_none() -> None:
    assert load_yaml_text("", "f.yaml").data is None
    assert load_yaml_text("# only a comment\n", "f.yaml").data is None


def test_issue_locates_deepest_known_path() -> None:
    doc = load_yaml_text("a:\n  b: 1\n", "f.yaml")
    assert doc.issue(("a", "b"), "bad").render() == "f.yaml:2:6: a.b: bad"
    assert doc.issue(("a", "b"), "bad", at_key=True).render() == "f.yaml:2:3: a.b: bad"
    # a path the file does not have falls back to its nearest written parent (the value of `a`)
    assert doc.issue(("a", "zzz"), "missing").render() == "f.yaml:2:3: a.zzz: missing"
    assert doc.issue(("nope",), "missing").render() == "f.yaml:1:1: nope: missing"


def test_dotted_paths() -> None:
    assert yamlio.dotted(("a", "b", 0, "c")) == "a.b[0].c"
    assert yamlio.dotted(()) == ""
    assert yamlio.dotted((0,)) == "[0]"


def test_dotted_quotes_keys_that_are_not_one_segment() -> None:
    # a key with a dot, a bracket, a line break or nothing at all stays readable and on one line
    assert yamlio.dotted(("hf", "a.b")) == "hf['a.b']"
    assert yamlio.dotted(("x[", "y")) == "['x['].y"
    assert yamlio.dotted(("env", "\r\n")) == "env['\\r\\n']"
    assert yamlio.dotted(("m", "")) == "m['']"


@pytest.mark.parametrize("text", ["a: !!int\n", "a: !!float x\n", "a: !!bool maybe\n", "a: !!timestamp x\n"])
def test_odd_tagged_scalars_are_located_errors(text: str) -> None:
    # PyYAML's constructors raise IndexError / KeyError / AttributeError on these: still a user error
    with pytest.raises(DocumentError) as exc:
        load_yaml_text(text, "f.yaml")
    issue = only_issue(exc)
    assert (issue.line, issue.column, issue.path) == (1, 4, "a")
    assert issue.message.startswith(("cannot read", "could not convert"))


def test_key_with_line_break_renders_on_one_line() -> None:
    with pytest.raises(DocumentError) as exc:
        load_yaml_text('"a\\nb": 1\n"a\\nb": 2\n', "f.yaml")
    rendered = only_issue(exc).render()
    assert "\n" not in rendered
    assert rendered.startswith("f.yaml:2:1: ['a\\nb']: duplicate key")


def test_duplicate_key_rejected_with_both_lines() -> None:
    with pytest.raises(DocumentError) as exc:
        load_yaml_text("a: 1\nb:\n  x: 1\n  x: 2\n", "f.yaml")
    issue = only_issue(exc)
    assert (issue.line, issue.column, issue.path) == (4, 3, "b.x")
    assert "duplicate key" in issue.message
    assert "line 3" in issue.message


def test_merge_keys_resolve_and_local_keys_win() -> None:
    doc = load_yaml_text("base: &b {x: 1, y: 2}\nuse:\n  <<: *b\n  y: 3\n", "f.yaml")
    assert doc.data["use"] == {"x": 1, "y": 3}


def test_syntax_error_located() -> None:
    with pytest.raises(DocumentError) as exc:
        load_yaml_text("a: 1\nb: [1, 2\nc: 3\n", "f.yaml")
    issue = only_issue(exc)
    assert issue.message.startswith("YAML syntax error")
    assert issue.line == 3


def test_tab_indentation_hint() -> None:
    with pytest.raises(DocumentError) as exc:
        load_yaml_text("a:\n\tb: 1\n", "f.yaml")
    issue = only_issue(exc)
    assert (issue.line, issue.column) == (2, 1)
    assert "spaces, not tabs" in issue.message


@pytest.mark.parametrize("text", ["a: @x\n", 'a: "x\\q"\n', "a: b: c\n"])
def test_other_syntax_errors_get_no_tab_hint(text: str) -> None:
    with pytest.raises(DocumentError) as exc:
        load_yaml_text(text, "f.yaml")
    assert "tabs" not in only_issue(exc).message


def test_multiple_documents_rejected() -> None:
    with pytest.raises(DocumentError) as exc:
        load_yaml_text("a: 1\n---\nb: 2\n", "f.yaml")
    assert only_issue(exc).line == 2


def test_python_tags_rejected_on_scalars_and_collections() -> None:
    for text in (
        "a: !!python/name:os.system x\n",
        "a: !!python/object:os.system {x: 1}\n",
        "a: !!python/tuple [1, 2]\n",
        "a: !custom [1]\n",
        "a: !!set {x, y}\n",
        "a: !!omap [x: 1]\n",
    ):
        with pytest.raises(DocumentError) as exc:
            load_yaml_text(text, "f.yaml")
        issue = only_issue(exc)
        assert (issue.line, issue.column) == (1, 4), text


def test_explicit_standard_collection_tags_are_fine() -> None:
    assert load_yaml_text("a: !!map {x: 1}\nb: !!seq [1]\n", "f.yaml").data == {"a": {"x": 1}, "b": [1]}


def test_non_scalar_key_rejected() -> None:
    with pytest.raises(DocumentError) as exc:
        load_yaml_text("? [a, b]\n: 1\n", "f.yaml")
    assert "plain scalars" in only_issue(exc).message


def test_bad_timestamp_is_a_located_error() -> None:
    with pytest.raises(DocumentError) as exc:
        load_yaml_text("a:\n  b: 2024-13-45\n", "f.yaml")
    issue = only_issue(exc)
    assert (issue.line, issue.column, issue.path) == (2, 6, "a.b")


def test_huge_integer_is_a_located_error() -> None:
    with pytest.raises(DocumentError) as exc:
        load_yaml_text("a: " + "9" * 6000 + "\n", "f.yaml")
    assert only_issue(exc).path == "a"
    # in the profile's words, not Python's (which advise sys.set_int_max_str_digits())
    assert only_issue(exc).message == "an integer of 6000 digits, beyond any setting's range"


def test_control_character_rejected_with_position() -> None:
    with pytest.raises(DocumentError) as exc:
        load_yaml_text("a: 1\nb: x\x00y\n", "f.yaml")
    issue = only_issue(exc)
    assert (issue.line, issue.column) == (2, 5)
    assert "U+0000" in issue.message


def test_lone_surrogate_text_rejected() -> None:
    # what `--set` values decoded with surrogateescape from a non-UTF-8 argv look like
    with pytest.raises(DocumentError) as exc:
        load_yaml_text("a: \udcff\n", "f.yaml")
    assert only_issue(exc).line == 1


def test_alias_bomb_fails_fast() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 9)]
    with pytest.raises(DocumentError) as exc:
        load_yaml_text("\n".join(lines) + "\n", "bomb.yaml")
    issue = only_issue(exc)
    assert "alias" in issue.message
    assert issue.line == 5  # a4 is the first anchor whose expansion passes the cap (9**5 > 20000)


def test_too_many_aliases() -> None:
    text = "a: &a 1\nb: [" + ", ".join(["*a"] * (MAX_ALIASES + 1)) + "]\n"
    with pytest.raises(DocumentError) as exc:
        load_yaml_text(text, "f.yaml")
    assert f"more than {MAX_ALIASES} aliases" in only_issue(exc).message


def test_self_referencing_alias() -> None:
    with pytest.raises(DocumentError) as exc:
        load_yaml_text("a: &a [1, *a]\n", "f.yaml")
    assert "refers to its own anchor" in only_issue(exc).message


def test_deep_nesting_through_aliases_is_bounded() -> None:
    # Each anchor nests 50 levels and refers to the previous one: written depth stays under MAX_DEPTH but
    # the expansion is thousands of levels deep (used to end in RecursionError, exit 3).
    lines = [f"a{i}: &a{i} " + "[" * 50 + (f"*a{i - 1}" if i else "1") + "]" * 50 for i in range(40)]
    with pytest.raises(DocumentError) as exc:
        load_yaml_text("\n".join(lines) + "\n", "f.yaml")
    assert f"deeper than {MAX_DEPTH}" in only_issue(exc).message


def test_written_nesting_is_bounded() -> None:
    with pytest.raises(DocumentError) as exc:
        load_yaml_text("a: " + "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5) + "\n", "f.yaml")
    assert f"deeper than {MAX_DEPTH}" in only_issue(exc).message


def test_nesting_at_the_limit_is_fine() -> None:
    depth = MAX_DEPTH - 2  # the root mapping and the key's value count too
    doc = load_yaml_text("a: " + "[" * depth + "]" * depth + "\n", "f.yaml")
    assert isinstance(doc.data["a"], list)


def test_too_many_nodes_fails_while_composing() -> None:
    text = "a: [" + ", ".join(["1"] * (MAX_EXPANDED_NODES + 10)) + "]\n"
    with pytest.raises(DocumentError) as exc:
        load_yaml_text(text, "f.yaml")
    issue = only_issue(exc)
    assert f"more than {MAX_EXPANDED_NODES} nodes" in issue.message
    assert not issue.message.startswith("YAML syntax error")


def test_text_size_cap() -> None:
    with pytest.raises(DocumentError) as exc:
        load_yaml_text("a: " + "x" * MAX_BYTES, "f.yaml")
    assert "larger than" in only_issue(exc).message


def test_file_size_cap(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    big.write_bytes(b"a: 1\n" + b"#" * (10 * 1024 * 1024))
    with pytest.raises(DocumentError) as exc:
        load_yaml_file(big)
    issue = only_issue(exc)
    assert (issue.source, issue.line, issue.column) == (str(big), 1, 1)
    assert "larger than" in issue.message


def test_non_utf8_located_in_characters(tmp_path: Path) -> None:
    f = tmp_path / "bin.yaml"
    f.write_bytes('a: 1\nb: "hé\xff"\n'.encode("latin-1").replace(b"\xe9", "é".encode()))
    with pytest.raises(DocumentError) as exc:
        load_yaml_file(f)
    issue = only_issue(exc)
    assert (issue.line, issue.column) == (2, 7)  # `b: "hé` is 6 characters (7 bytes)
    assert "0xff" in issue.message


def test_utf8_bom_accepted(tmp_path: Path) -> None:
    f = tmp_path / "bom.yaml"
    f.write_bytes(b"\xef\xbb\xbfa: 1\n")
    assert load_yaml_file(f).data == {"a": 1}


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(DocumentError) as exc:
        load_yaml_file(tmp_path / "nope.yaml")
    assert only_issue(exc).render() == f"{tmp_path / 'nope.yaml'}: file not found"
    with pytest.raises(DocumentError) as exc:
        load_yaml_file(tmp_path)
    assert "directory" in only_issue(exc).message
