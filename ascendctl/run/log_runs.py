"""A deployment's log holds every run of its name, one after another: which run starts where, for `ascendctl logs`.

Each run's first attempt opens with the supervisor's stamped line (`ascendctl_engine.supervisor.run_start`); a
restart within the run (attempt 2, 3, …) stays in it. What comes before the first such line (a log from before runs
were marked) is run 1. Runs are numbered from 1, oldest first — the numbers `logs --list` prints and `--run N` reads.
`log_runs` reads the file once from the start (`--list`, `--run N`); `latest_run_start` reads backwards from the end
only as far as the latest run (the default), or as the window a `--tail` asks for: a huge log costs what is printed.
Both in bounded memory.
"""

from __future__ import annotations

import os
from typing import BinaryIO

from ascendctl_engine.records import record
from ascendctl_engine.supervisor import ATTEMPT_LINE, run_start

_PIECE = 64 * 1024  # the longest piece of a line read at once (a run's opening line is far shorter)
# in every run-opening line: the end of the sink's stamp, then the supervisor's attempt line up to the run id
_NEEDLE = b"] " + ATTEMPT_LINE.split("{run}")[0].encode()
_LINE = 512  # a run-opening line is shorter: how much of a candidate line is read to judge it


@record
class LogRun:
    number: int  # 1 = the oldest run in the file
    run_id: str  # the run's id (its first 8 hex digits), "" for lines from before runs were marked
    started: str  # when its first attempt started (the stamp of that line), "" when unmarked
    start: int  # byte offset of its first line
    end: int  # byte offset after its last line


def log_runs(handle: BinaryIO) -> list[LogRun]:
    """Every run in the log, oldest first (none for an empty file)."""
    size = os.fstat(handle.fileno()).st_size
    handle.seek(0)
    starts: list[tuple[int, str, str]] = []
    offset, at_line_start = 0, True
    while piece := handle.readline(_PIECE):  # a line longer than a piece is read in pieces: memory stays bounded
        found = run_start(piece) if at_line_start else None
        if found is not None:
            starts.append((offset, found[1], found[0]))
        offset += len(piece)
        at_line_start = piece.endswith(b"\n")
    if size == 0:
        return []
    if not starts or starts[0][0] > 0:
        starts.insert(0, (0, "", ""))
    ends = [s[0] for s in starts[1:]] + [size]
    return [
        LogRun(i, run_id, started, start, end)
        for i, ((start, run_id, started), end) in enumerate(zip(starts, ends, strict=True), 1)
    ]


def latest_run_start(handle: BinaryIO, *, floor: int = 0, block: int = _PIECE) -> int | None:
    """The offset of the last run-opening line at or after `floor` (a line start), reading backwards from the end in
    blocks; None when there is none there (the latest run began before `floor`, or runs are not marked)."""
    size = os.fstat(handle.fileno()).st_size
    pos = size
    while pos > floor:
        low = max(floor, pos - block)
        handle.seek(low)
        chunk = handle.read(min(size, pos - 1 + len(_NEEDLE)) - low)  # a needle straddling `pos` is read whole
        index = len(chunk)
        while (index := chunk.rfind(_NEEDLE, 0, index)) >= 0:
            begin = _opening_line(handle, low + index, floor)
            if begin is not None:
                return begin
        pos = low
    return None


def _opening_line(handle: BinaryIO, needle_at: int, floor: int) -> int | None:
    """Where the line holding the needle at `needle_at` begins, if that line opens a run (its stamp is short: a line
    whose start is further back than `_LINE` is no run-opening line)."""
    low = max(floor, needle_at - _LINE)
    handle.seek(low)
    around = handle.read(needle_at - low + _LINE)
    newline = around.rfind(b"\n", 0, needle_at - low)
    if newline < 0 and low > floor:
        return None
    begin = newline + 1
    return low + begin if run_start(around[begin:]) is not None else None


__all__ = ["LogRun", "latest_run_start", "log_runs"]
