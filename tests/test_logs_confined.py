"""`ascendctl logs` prints only a deployment's own log, `logs/<key>.log` in the state directory, whatever its record
names; and no log line, however long, prints more than a bounded amount. The CLI runs as a process of its own, as
a user runs it; every process here is started by the test and ended by its pid."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from ascendctl.run.log_tail import MAX_LINE_BYTES, LineClipper
from ascendctl_engine.state import StateStore
from tests.state_records import STARTED as _STARTED
from tests.state_records import record

SECRET = "sekrit-4c1e9b7e"


def logs_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "ascendctl", "logs", *args],
        capture_output=True,
        timeout=120,
        check=False,
        env=env,
    )


def running_record(name: str, log_path: str) -> Path:
    """A record of a live "supervisor" (a sleep the test started, never signalled) naming `log_path`."""
    proc = subprocess.Popen(["sleep", "60"], stdin=subprocess.DEVNULL)
    _STARTED.append(proc)
    store = StateStore()
    store.ensure()
    store.log_path(name, 0).write_text("its own log\n")
    path = store.path_for(name, 0)
    path.write_text(replace(record(name, pid=proc.pid), log_path=log_path).to_json())
    return path


@pytest.mark.parametrize("target", ["file", "environ", "dotdot"])
def test_a_record_naming_a_file_outside_the_logs_dir_is_refused(tmp_path: Path, target: str) -> None:
    outside = tmp_path / "private.txt"
    outside.write_text(f"{SECRET}\n")
    own = StateStore().log_path("victim", 0)
    named = {
        "file": str(outside),
        "environ": "/proc/self/environ",  # would print the CLI's own environment, secrets included
        "dotdot": f"{own.parent}/../../../../../../..{outside}",
    }[target]
    path = running_record("victim", named)
    for args in (("victim",), ("victim", "--tail", "5"), ("victim", "-f")):
        result = logs_cli(*args, env={**os.environ, "ASCEND_TEST_TOKEN": SECRET})
        out = (result.stdout + result.stderr).decode()
        assert result.returncode == 1, out
        assert SECRET not in out and "its own log" not in out
        [line] = out.splitlines()
        assert line.startswith(f"error: the record {path} names the log {named}, not {own}")
        assert line.endswith(f"remove the record: rm {shlex.quote(str(path))}")
    assert path.exists()  # the record is the user's to remove


def test_a_record_naming_its_own_log_is_printed() -> None:
    running_record("mine", str(StateStore().log_path("mine", 0)))
    result = logs_cli("mine")
    assert result.returncode == 0, result.stderr
    assert result.stdout == b"its own log\n"


def _long_line_log(path: Path, size: int, end: bytes, newline: bool) -> None:
    """A log whose last line is `size` bytes: a sparse hole (no disk, no newline), then `end`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as handle:
        handle.write(b"first line\n")
        handle.seek(handle.tell() + size - len(end))
        handle.write(end + (b"\n" if newline else b""))


@pytest.mark.parametrize("newline", [True, False])
def test_tail_of_a_gigantic_last_line_prints_a_bounded_amount(newline: bool) -> None:
    size = 512 * 1024 * 1024
    _long_line_log(StateStore().log_path("big", 0), size, "é".encode() * 40_000 + b"the end", newline)
    started = time.monotonic()
    result = logs_cli("big", "--tail", "1")
    assert result.returncode == 0, result.stderr
    assert len(result.stdout) <= MAX_LINE_BYTES + 100  # not 512 MiB
    # its last 64 KiB, less the one byte of a character cut in two, after the count of what was left out
    shown = "é" * ((MAX_LINE_BYTES - 7) // 2) + "the end"
    expected = f"[ascendctl: {size - len(shown.encode())} bytes of an over-long line left out] {shown}"
    assert result.stdout.decode() == expected + ("\n" if newline else "")
    assert time.monotonic() - started < 60


def test_the_clipper_keeps_short_lines_whole_and_clips_long_ones_across_blocks() -> None:
    out: list[str] = []
    clip = LineClipper(out.append, limit=8)
    for chunk in (b"ab\ncd", b"ef\n0123456", b"789abcdef", b"\nlast"):
        clip.feed(chunk)
    clip.flush()
    assert "".join(out) == "ab\ncdef\n[ascendctl: 8 bytes of an over-long line left out] 89abcdef\nlast"
