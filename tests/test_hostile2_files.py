"""Hostile input, round two (issue 32, items 4-5): files.

- `logs --tail N` reads from the end in blocks (a 1 GiB sparse log costs one block of memory);
- the engine log is opened without following a symbolic link, and only as a regular file;
- `render -o` is all-or-nothing under SIGTERM / SIGINT / SIGHUP: the previous files stay, no temporary file is left.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import tracemalloc
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ascendctl.cli import app
from ascendctl.cli.render import write_files
from ascendctl.run.log_tail import LineClipper, stream, tail_offset
from ascendctl_engine.launcher import LogSink, open_log_append
from ascendctl_engine.state import StateStore
from ascendctl_engine.supervisor import spawn_detached
from tests.render_dirs import contents, seed

runner = CliRunner()
GIB = 1024 * 1024 * 1024


# --- logs --tail ----------------------------------------------------------------------------------------------------


def _sparse_log(path: Path, tail: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as handle:
        handle.truncate(GIB)  # a hole: no disk, and no newline in it
        handle.seek(GIB)
        handle.write("\n".join(["", *tail, ""]).encode())  # the hole is a line of its own


def test_logs_tail_of_a_1_gib_log_reads_from_the_end() -> None:
    path = StateStore().log_path("big", 0)
    _sparse_log(path, [f"line {i}" for i in range(10)])
    result = runner.invoke(app, ["logs", "big", "--tail", "3"])
    assert result.exit_code == 0, result.output
    assert result.stdout == "line 7\nline 8\nline 9\n"
    assert runner.invoke(app, ["logs", "big", "-n", "0"]).stdout == ""


def test_tail_memory_is_one_block_whatever_the_file_size(tmp_path: Path) -> None:
    path = tmp_path / "big.log"
    _sparse_log(path, ["é" * 40_000, "last"])  # a long last-but-one line spans blocks, with split characters
    out: list[str] = []
    with open(path, "rb") as handle:
        tracemalloc.start()
        try:
            offset = tail_offset(handle, 2)
            lines = LineClipper(out.append, limit=1 << 20)  # the long line is 80 KB: shown whole here
            end = stream(handle, offset, lines)
            lines.flush()
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert "".join(out) == "é" * 40_000 + "\nlast\n" and end == path.stat().st_size
    assert peak < 2 * 1024 * 1024  # the output itself (~80 KB) and a block or two, not the 1 GiB


@pytest.mark.parametrize(
    ("data", "lines", "expected"),
    [
        (b"", 3, b""),
        (b"a\nb\nc\n", 2, b"b\nc\n"),
        (b"a\nb\nc", 2, b"b\nc"),  # an unterminated last line counts as one
        (b"a\nb\n", 5, b"a\nb\n"),
        (b"\n\n\n", 2, b"\n\n"),
        (b"a\nb\n", 0, b""),
    ],
)
def test_tail_offset_at_the_edges(tmp_path: Path, data: bytes, lines: int, expected: bytes) -> None:
    path = tmp_path / "x.log"
    path.write_bytes(data)
    with open(path, "rb") as handle:
        offset = tail_offset(handle, lines, block=2)
    assert data[offset:] == expected


# --- the engine log: no symbolic links ------------------------------------------------------------------------------


def test_the_engine_log_is_never_opened_through_a_symlink(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("precious\n")
    log = tmp_path / "logs" / "demo.node0.log"
    log.parent.mkdir()
    log.symlink_to(outside)
    with pytest.raises(OSError, match="is a symbolic link: the engine log is never opened through one"):
        open_log_append(log)
    with pytest.raises(OSError, match="symbolic link"):
        LogSink(log, prefix="")
    with pytest.raises(OSError, match="symbolic link"):
        spawn_detached([sys.executable, "-c", "pass"], log)
    assert outside.read_text() == "precious\n"  # nothing was appended to the link's target


def test_the_engine_log_must_be_a_regular_file(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.log"
    os.mkfifo(fifo)
    with pytest.raises(OSError):  # no reader: ENXIO before the type check; never blocks
        open_log_append(fifo)
    directory = tmp_path / "dir.log"
    directory.mkdir()
    with pytest.raises(OSError):
        open_log_append(directory)
    fd = open_log_append(tmp_path / "ok.log")
    os.close(fd)
    assert (tmp_path / "ok.log").stat().st_mode & 0o777 == 0o600


# --- render -o: all or nothing under signals ------------------------------------------------------------------------


@dataclass(frozen=True)
class _File:
    name: str
    text: str
    executable: bool = False
    signal_on_read: int | None = None

    @property
    def content(self) -> str:
        if self.signal_on_read is not None:
            os.kill(os.getpid(), self.signal_on_read)
        return self.text


def _previous(directory: Path) -> dict[str, str]:
    return seed(directory, {"node0.sh": "old 0\n", "node1.sh": "old 1\n"})


_state = contents


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_signal_while_staging_leaves_the_previous_render(tmp_path: Path, sig: int) -> None:
    old = _previous(tmp_path / "out")
    files = [_File("node0.sh", "new 0\n"), _File("node1.sh", "new 1\n", signal_on_read=sig), _File("node2.sh", "2\n")]
    with pytest.raises(KeyboardInterrupt):
        write_files(tmp_path / "out", files)  # type: ignore[arg-type]
    assert _state(tmp_path / "out") == old  # no temporary directory or file left either
    assert signal.getsignal(sig) is not None and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL


@pytest.mark.parametrize("after", [1, 2, 3, 4])
def test_a_signal_while_moving_into_place_rolls_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, after: int
) -> None:
    old = _previous(tmp_path / "out")
    real_replace = Path.replace
    calls = []

    def replace(self: Path, target: Path) -> Path:
        done = real_replace(self, target)
        calls.append(self)
        if len(calls) == after:
            os.kill(os.getpid(), signal.SIGTERM)
        return done

    monkeypatch.setattr(Path, "replace", replace)
    files = [_File("node0.sh", "new 0\n"), _File("node1.sh", "new 1\n"), _File("node2.sh", "new 2\n")]
    with pytest.raises(KeyboardInterrupt):
        write_files(tmp_path / "out", files)  # type: ignore[arg-type]
    monkeypatch.undo()
    assert _state(tmp_path / "out") == old


def test_sigterm_from_outside_to_a_render_subprocess_mid_write(tmp_path: Path) -> None:
    out = tmp_path / "out"
    old = _previous(out)
    child = textwrap.dedent(
        f"""
        import sys, time
        from dataclasses import dataclass
        from pathlib import Path
        from ascendctl.cli.render import write_files

        class Slow:
            name, executable = "node1.sh", False
            @property
            def content(self):
                print("writing", flush=True)
                time.sleep(30)  # the test sends SIGTERM meanwhile
                return "new 1\\n"

        @dataclass
        class Fast:
            name: str
            content: str
            executable: bool = False

        try:
            write_files(Path({str(out)!r}), [Fast("node0.sh", "new 0\\n"), Slow(), Fast("node2.sh", "new 2\\n")])
        except KeyboardInterrupt:
            sys.exit(130)
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == b"writing\n"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 130, proc.stderr.read() if proc.stderr else ""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert _state(out) == old


def test_render_writes_every_file_when_not_interrupted(tmp_path: Path) -> None:
    _previous(tmp_path / "out")
    write_files(tmp_path / "out", [_File("node0.sh", "new 0\n", executable=True)])  # type: ignore[list-item]
    assert _state(tmp_path / "out") == {"node0.sh": "new 0\n", "node1.sh": "old 1\n"}
    assert (tmp_path / "out" / "node0.sh").stat().st_mode & 0o777 == 0o755
