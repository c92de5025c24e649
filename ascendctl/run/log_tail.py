"""Reading an engine log from its end, in bounded memory, for `ascendctl logs [--tail N] [-f]`.

A log can be large (the supervisor rotates at a size, an operator's own file need not): `tail_offset` finds where
the last N lines begin by reading backwards in blocks of `BLOCK` bytes (memory: one block, whatever N or the file's
size), and `stream` feeds the file from an offset in blocks to a `LineClipper`, which decodes each line whole (a
character split between two blocks is kept whole; invalid bytes become U+FFFD) and prints at most `MAX_LINE_BYTES`
of it: of a longer line only its end, marked, so a log that never ends its line cannot flood the terminal.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import BinaryIO

BLOCK = 64 * 1024


def tail_offset(handle: BinaryIO, lines: int, *, block: int = BLOCK, start: int = 0, end: int | None = None) -> int:
    """The offset where the last `lines` lines of the file begin (0 when it holds fewer; its size for 0). A final
    line without a newline counts as a line; the newline that ends the file does not start another. `start` /
    `end`: the same within that part of the file (one run of a deployment)."""
    end = os.fstat(handle.fileno()).st_size if end is None else end
    if lines <= 0 or end <= start:
        return end
    # newlines to pass from the end: one per line, not counting the one that ends the file
    handle.seek(end - 1)
    wanted = lines + (1 if handle.read(1) == b"\n" else 0)
    pos = end
    while pos > start:
        low = max(start, pos - block)
        handle.seek(low)
        chunk = handle.read(pos - low)
        index = len(chunk)
        while True:
            index = chunk.rfind(b"\n", 0, index)
            if index < 0:
                break
            wanted -= 1
            if wanted == 0:
                return low + index + 1
        pos = low
    return start


MAX_LINE_BYTES = 64 * 1024


class LineClipper:
    """Turns the bytes of a log into text, line by line, with at most `limit` bytes of any one line: of a longer
    line, its last `limit` bytes (the latest state of a line redrawn in place), after a marker saying how much
    was left out. Memory and output per line are bounded, however long the line; `write` gets each piece."""

    def __init__(self, write: Callable[[str], None], limit: int = MAX_LINE_BYTES) -> None:
        self._write = write
        self._limit = limit
        self._line = bytearray()  # the end of the line being read, at most `limit` bytes
        self._dropped = 0  # bytes of that line left out so far

    def feed(self, data: bytes) -> None:
        """Write every line `data` completes; keep (the end of) the unfinished one."""
        first = data.find(b"\n")
        if first < 0:
            self._add(data)
            return
        last = data.rfind(b"\n")
        self._add(data[:first])
        out = [self._take() + "\n"]
        middle = data[first + 1 : last + 1]  # whole lines, each with its newline
        if len(middle) <= self._limit or max(map(len, middle.split(b"\n"))) <= self._limit:
            out.append(middle.decode("utf-8", errors="replace"))  # at once: a log of short lines is the rule
        else:
            for part in middle.split(b"\n")[:-1]:
                self._add(part)
                out.append(self._take() + "\n")
        self._add(data[last + 1 :])
        self._write("".join(out))

    def flush(self) -> None:
        """Write the unfinished last line (without a newline), if any."""
        if self._line or self._dropped:
            self._write(self._take())

    def _add(self, part: bytes) -> None:
        self._line += part
        extra = len(self._line) - self._limit
        if extra > 0:
            del self._line[:extra]
            self._dropped += extra

    def _take(self) -> str:
        line = bytes(self._line)
        dropped = self._dropped
        self._line.clear()
        self._dropped = 0
        if not dropped:
            return line.decode("utf-8", errors="replace")
        cut = 0
        while cut < min(3, len(line)) and 0x80 <= line[cut] < 0xC0:  # no half character where the cut fell
            cut += 1
        text = line[cut:].decode("utf-8", errors="replace")
        return f"[ascendctl: {dropped + cut} bytes of an over-long line left out] {text}"


def stream(handle: BinaryIO, offset: int, lines: LineClipper, *, block: int = BLOCK, end: int | None = None) -> int:
    """Feed the file from `offset` to its current end (or to `end`) to `lines`, a block at a time; returns where it
    stopped (the offset to follow from). The unfinished last line stays in `lines` until `lines.flush()`."""
    handle.seek(offset)
    while chunk := handle.read(block if end is None else min(block, end - offset)):
        offset += len(chunk)
        lines.feed(chunk)
    return offset
