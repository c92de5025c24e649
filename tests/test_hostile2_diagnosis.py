"""Hostile input, round two (issue 32, item 4): diagnosis runs in linear time on any log line.

A complexity guard, not a benchmark: a multi-megabyte line built to make a backtracking pattern quadratic (each
catalog pattern's own literal pieces, repeated) goes through every diagnosis; the bound is generous (a quadratic
pattern on such a line takes minutes).
"""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ascendctl_engine.phases import (
    MAX_MATCH_CHARS,
    CatalogError,
    catalog,
    clip_line,
    diagnose,
    failure_phase,
    parse_catalog,
)

LINE_BYTES = 3 * 1024 * 1024


def _hostile_lines() -> list[str]:
    """Per catalog pattern: its literal pieces repeated to a multi-megabyte line (no match, maximal retries)."""
    lines = ["a" * LINE_BYTES, " " * LINE_BYTES]
    for entry in catalog():
        for pattern in entry.patterns:
            pieces = [p for p in re.split(r"[\\.*+?()\[\]{}|^$]", pattern) if len(p) >= 3] or ["x"]
            unit = pieces[0] + " "
            lines.append(unit * (LINE_BYTES // len(unit)))
    return lines


def test_every_diagnosis_on_multi_megabyte_lines_is_linear() -> None:
    lines = _hostile_lines()
    catalog()  # loaded (and compiled) once, outside the measurement
    started = time.perf_counter()
    for line in lines:
        diagnose([line])
    elapsed = time.perf_counter() - started
    assert elapsed < 1.0 * max(1, len(lines) // 40), f"{len(lines)} lines took {elapsed:.2f} s"


def test_an_error_at_either_end_of_a_long_line_is_still_diagnosed() -> None:
    error = "OSError: [Errno 98] Address already in use"
    found = diagnose([error + " " + "x" * LINE_BYTES])
    assert [d.key for d in found] == ["log.server.port-in-use"]
    assert len(found[0].line) <= MAX_MATCH_CHARS + 5  # the line shown is clipped too
    assert [d.key for d in diagnose(["x" * LINE_BYTES + " " + error])] == ["log.server.port-in-use"]
    assert len(clip_line("y" * LINE_BYTES)) <= MAX_MATCH_CHARS + 5


@pytest.mark.parametrize("pattern", ["HcclSocket.*fail", "a.+b", "KeyError: '[^']*'", "(ab)+c", "x.{3,}y"])
def test_the_catalog_refuses_patterns_that_repeat_without_bound(pattern: str) -> None:
    entry = {"id": "log.test.unbounded", "patterns": [pattern], "cause": "c", "fix": "f", "source": "s"}
    with pytest.raises(CatalogError, match="repeats without bound"):
        parse_catalog({"schema": 1, "entries": [entry]})


def test_bounded_patterns_are_accepted() -> None:
    entry = {"id": "log.test.bounded", "patterns": [r"HcclSocket.{0,500}fail", r"total memory: \d+"], "cause": "c"}
    parsed = parse_catalog({"schema": 1, "entries": [{**entry, "fix": "f", "source": "s"}]})
    assert parsed[0].matches("HcclSocket init failed")


def _line_by_line(lines: list[str]) -> list[tuple[str, str, int]]:
    """What `diagnose` answers, the plain way: each entry of the log's phase over every line, last first (the
    reference)."""
    out = []
    phase = failure_phase(lines)
    for entry in catalog():
        if not entry.applies_in(phase):
            continue
        for index in range(len(lines) - 1, -1, -1):
            if entry.matches(lines[index]):
                out.append((entry.key, clip_line(lines[index]).strip(), index + 1))
                break
    return out


def _examples() -> list[str]:
    return [example for entry in catalog() for example in entry.examples]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(_examples()),
            st.sampled_from(["", "INFO ok", "Traceback (most recent call last):", "x" * (MAX_MATCH_CHARS + 7)]),
            # a word-bounded pattern's looser whole-log search, and a class that runs across a line break
            st.sampled_from(["OutOfMemoryError: x", "MemoryError", "KeyError: 'a", "b.weight'", "EI0006x"]),
            st.text(alphabet="ab \t[]:'\"\\n", max_size=30),
        ),
        max_size=25,
    ).map(lambda parts: "\n".join(parts).split("\n"))
)
def test_the_whole_log_search_finds_what_a_line_by_line_search_finds(lines: list[str]) -> None:
    # `diagnose` searches the whole log once per pattern for candidate lines, then matches those line by line; a
    # match running across a line break must not hide a match on a later line
    found = [(d.key, d.line, d.line_no) for d in diagnose(lines)]
    assert found == _line_by_line(lines)


def test_candidates_that_do_not_match_hide_no_earlier_match() -> None:
    # the whole-log search drops `\b` (`MemoryError` inside `OutOfMemoryError`) and lets `[^']` run across a line
    # break: such candidates fail the line's own match, and the earlier line that matches is still found
    found = {d.key: d.line_no for d in diagnose(["MemoryError", "OutOfMemoryError: CUDA", "KeyError: 'a", "b.weight'"])}
    assert found["log.memory.host-oom"] == 1
    assert "log.quant.weight-key-missing" not in found
