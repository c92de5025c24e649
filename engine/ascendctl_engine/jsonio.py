"""The one bounded JSON reader: every JSON document ascendctl reads from disk or from a subprocess goes
through `read_json_file` / `loads_json` (package data through `read_json_resource`).

What it refuses, each as one `JsonReadError(path, reason)` (a `ValueError`, so a caller that already
catches `ValueError` keeps working):

- anything but a regular file (a FIFO, a device, a socket, a directory): checked with `stat` before the
  open, and the file is opened with `O_NONBLOCK` and checked again with `fstat`, so a FIFO swapped in
  between never blocks the reader;
- more than `max_bytes` (read with a cap: a 10 GB file costs `max_bytes + 1` bytes, not 10 GB);
- bytes that are not UTF-8 (a UTF-8 byte-order mark is accepted and dropped), and `\\ud800`-style escapes
  that decode to a lone surrogate (such a string cannot be printed or written back as UTF-8);
- nesting deeper than `max_depth` (64): checked on the text before parsing (Python's parser would recurse
  up to the interpreter's limit and raise `RecursionError`, which is caught too);
- `NaN`, `Infinity`, `-Infinity` and numbers that overflow to infinity (`1e999`): not JSON, and a
  non-finite number breaks every comparison downstream;
- integers beyond the signed 64-bit range (`MIN_INT`..`MAX_INT`): bounded like floats, since every integer these files
  hold (a tensor dimension, a byte count, a device's MiB) is an int64 where it was written, and a larger one
  overflows to float (or to infinity) in the arithmetic downstream. `bounded_int` is the one range check for
  the values read from such a document (counts, sizes) at the boundary;
- an object that names a key twice (`{"address": "a", "address": "b"}`): the stdlib parser keeps the last one,
  while a reader of the file may take the first, so the document is ambiguous (YAML input is refused the same
  way, `ascendctl.core.yamlio`);
- invalid JSON, with the parser's message and position.

`trusted=True` is for checked-in package data only (the parser snapshots, the key tables, the upstream extracts, the
architecture table): it is decoded as UTF-8 and parsed with the stdlib parser as it is, without the checks that cost
a pass over the text (the depth pre-check, the number hooks, the long-integer and surrogate scans), which cost
more than the parse itself on the start-up path of `plan`. The test suite reads every shipped JSON file with every
check (tests/test_hostile2_bounds.py), so package data that would fail one fails the build instead.
"""

from __future__ import annotations

import errno
import json
import math
import os
import re
import stat
from pathlib import Path
from typing import Any, BinaryIO

MAX_DEPTH = 64
MAX_INT = 2**63 - 1  # the largest integer a JSON document may hold (int64, what safetensors and probes write)
MIN_INT = -(2**63)  # the smallest: int64's range is asymmetric (JSON Schema writes it as a bound, for one)
DEFAULT_MAX_BYTES = 4 * 1024 * 1024
_BOM = b"\xef\xbb\xbf"
# A `\uD800`–`\uDFFF` escape: the only way a lone surrogate gets into parsed JSON (strict UTF-8 decoding
# refuses encoded surrogates). Its presence triggers the exact check; a valid pair passes it.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
# JSON strings (with escapes), removed before counting brackets so that "[[[" inside a string is not depth.
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
# A run of 19+ digits: the only way an integer beyond `MAX_INT` gets in (a scan in C; the exact check follows).
_LONG_DIGITS = re.compile(r"[0-9]{19}")


class JsonReadError(ValueError):
    """A JSON document that could not be read; `path` names it (a file, or e.g. `<probe output>`)."""

    def __init__(
        self, path: str | os.PathLike[str], reason: str, *, missing: bool = False, errno: int | None = None
    ) -> None:
        self.path = str(path)
        self.reason = reason
        self.missing = missing  # the file does not exist (callers often treat that as "no record")
        self.errno = errno  # the OS error behind it, when there was one
        super().__init__(f"{self.path}: {reason}")


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """Open a regular file for reading (a JSON document, a log to follow), never a FIFO or a device: the type
    is checked with `stat` before the open (no open that blocks), the open is `O_NONBLOCK` and the type is
    checked again on the descriptor (a FIFO swapped in between). Raises `JsonReadError` naming the path."""
    name = os.fspath(path)
    try:
        before = Path(name).stat()
    except OSError as exc:
        raise _os_error(name, exc) from None
    if not stat.S_ISREG(before.st_mode):
        raise JsonReadError(name, f"not a regular file ({_kind(before.st_mode)})")
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(name, flags)
    except OSError as exc:
        raise _os_error(name, exc) from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise JsonReadError(name, f"not a regular file ({_kind(mode)})")
    return os.fdopen(fd, "rb")


def read_bytes(path: str | os.PathLike[str], max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """The content of a regular file of at most `max_bytes` (never more is read), or `JsonReadError`."""
    name = os.fspath(path)
    with open_regular(name) as handle:
        if os.fstat(handle.fileno()).st_size > max_bytes:
            raise JsonReadError(name, f"larger than {_size(max_bytes)}")
        try:
            data = handle.read(max_bytes + 1)
        except OSError as exc:
            raise _os_error(name, exc) from None
    if len(data) > max_bytes:  # it grew after the check
        raise JsonReadError(name, f"larger than {_size(max_bytes)}")
    return data


def _os_error(name: str, exc: OSError) -> JsonReadError:
    if exc.errno == errno.ENOENT:
        return JsonReadError(name, "no such file", missing=True, errno=exc.errno)
    return JsonReadError(name, f"cannot read: {exc.strerror or exc}", errno=exc.errno)


def read_json_file(
    path: str | os.PathLike[str],
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_depth: int = MAX_DEPTH,
    trusted: bool = False,
) -> Any:
    """Read and parse the JSON file `path` under every bound above; raises `JsonReadError`."""
    return loads_json(read_bytes(path, max_bytes), source=path, max_depth=max_depth, trusted=trusted)


def read_json_resource(path: Path, *, max_bytes: int = 64 * 1024 * 1024) -> Any:
    """Checked-in package data (`ascendctl_engine.package_data`): the same reader and parser, without the depth
    pre-check (the data is ours and the start-up path reads it)."""
    return read_json_file(path, max_bytes=max_bytes, trusted=True)


def loads_json(
    data: bytes | str,
    *,
    source: str | os.PathLike[str] = "<data>",
    max_depth: int = MAX_DEPTH,
    trusted: bool = False,
) -> Any:
    """Parse one JSON document (bytes: UTF-8, optional BOM; str: must encode as UTF-8)."""
    name = os.fspath(source)
    if isinstance(data, str):
        try:
            data.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise JsonReadError(name, f"not valid UTF-8 text (character {exc.start})") from None
        text = data.removeprefix("\ufeff")
    else:
        if data.startswith(_BOM):
            data = data[len(_BOM) :]
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise JsonReadError(name, f"not UTF-8 (invalid byte at offset {exc.start})") from None
    if trusted:
        try:
            return json.loads(text)
        except (json.JSONDecodeError, RecursionError) as exc:
            raise JsonReadError(name, f"not valid JSON: {exc}") from None
    if _depth_over(text, max_depth) and _parses(text):
        raise JsonReadError(name, f"nested deeper than {max_depth} levels")
    try:
        value = json.loads(
            text, parse_constant=_refuse_constant, parse_float=_finite_float, object_pairs_hook=_unique_keys
        )
    except RecursionError:
        raise JsonReadError(name, f"nested deeper than {max_depth} levels") from None
    except _Refused as exc:
        raise JsonReadError(name, str(exc)) from None
    except json.JSONDecodeError as exc:
        raise JsonReadError(name, f"not valid JSON: {exc.msg} (line {exc.lineno} column {exc.colno})") from None
    except ValueError as exc:  # e.g. an integer with more digits than int() accepts
        _check_integers(text, name)  # that one in our words: beyond the 64-bit range
        raise JsonReadError(name, f"not valid JSON: {str(exc)[:200]}") from None
    if _LONG_DIGITS.search(text) is not None:
        _check_integers(text, name)
    if _SURROGATE_ESCAPE.search(text) is not None:
        try:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise JsonReadError(name, "holds a lone UTF-16 surrogate escape (e.g. \\ud800)") from None
    return value


class _Refused(ValueError):
    """A value the reader refuses, raised from inside the parser's hooks (a number out of range, a repeated key)."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """The parser's object hook: the object as a dict, refused when it names a key twice."""
    value = dict(pairs)
    if len(value) < len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Refused(f"an object names the key {json.dumps(key)[:80]} twice")
            seen.add(key)
    return value


def _check_integers(text: str, name: str) -> None:
    """Refuse an integer outside `MIN_INT`..`MAX_INT` (the second parse runs only when a long digit run is present)."""
    try:
        json.loads(text, parse_int=_bounded_literal)
    except _Refused as exc:
        raise JsonReadError(name, str(exc)) from None


def _bounded_literal(text: str) -> int:
    # JSON writes no leading zeros, so more than 19 digits is past int64 whatever they are (and past a few thousand,
    # int() itself refuses the text with advice about sys.set_int_max_str_digits())
    value = int(text) if len(text) - text.startswith("-") <= 19 else MAX_INT + 1
    if not MIN_INT <= value <= MAX_INT:
        shown = text if len(text) <= 24 else f"{text[:20]}... ({len(text) - text.startswith('-')} digits)"
        raise _Refused(f"the integer {shown} is beyond the 64-bit range")
    return value


def bounded_int(value: object, *, low: int = 0, high: int = MAX_INT, where: str = "", source: str = "") -> int | None:
    """The one range check for a count or size read from a document: None when `value` is not an integer (a
    bool, a float, a string: the caller's default applies), the integer when `low <= value <= high`, else
    `JsonReadError(source, "where: value is out of range low..high")`."""
    if type(value) is not int:
        return None
    if not low <= value <= high:
        shown = str(value) if abs(value) < 10**24 else f"{str(value)[:12]}... ({len(str(value))} digits)"
        raise JsonReadError(source or "<data>", f"{where}: {shown} is out of range {low}..{high}")
    return value


def _refuse_constant(name: str) -> Any:
    raise _Refused(f"not valid JSON: {name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Refused(f"not valid JSON: the number {text[:40]} is out of range")
    return value


def _depth_over(text: str, max_depth: int) -> bool:
    """True when brackets outside strings nest deeper than `max_depth` (a syntax error may look deep too:
    the caller then lets the parser name it)."""
    if text.count("[") + text.count("{") <= max_depth:  # cannot be deeper: the common case, in C
        return False
    depth = 0
    for char in _NOT_BRACKET.sub("", _STRING.sub("", text)):
        if char in "[{":
            depth += 1
            if depth > max_depth:
                return True
        else:
            depth -= 1
    return False


def _parses(text: str) -> bool:
    """Whether the parser gets past the syntax (so a syntax error is reported as one, not as depth)."""
    try:
        json.loads(text)
    except RecursionError:
        return True
    except ValueError:
        return False
    return True


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


def _size(limit: int) -> str:
    if limit % (1024 * 1024) == 0:
        return f"{limit // (1024 * 1024)} MiB"
    if limit % 1024 == 0:
        return f"{limit // 1024} KiB"
    return f"{limit} bytes"
