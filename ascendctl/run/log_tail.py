"""Reading an engine log from its end, in bounded memory, for `ascendctl logs [--tail N] [-f]`.

A log can be large (the supervisor rotates at a size, an operator's own file need not): `tail_offset` finds where
the last N lines begin by reading backwards in blocks of `BLOCK` bytes (memory: one block, whatever N or the file's
size), and `stream` prints from an offset in blocks, decoding UTF-8 incrementally (a character split between two
blocks is kept whole; invalid bytes become U+FFFD, as before).
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Callable
from typing import BinaryIO

BLOCK = 64 * 1024


def tail_offset(handle: BinaryIO, lines: int, *, block: int = BLOCK) -> int:
    """The offset where the last `lines` lines of the file begin (0 when it holds fewer; its size for 0). A final
    line without a newline counts as a line; the newline that ends the file does not start another."""
    end = os.fstat(handle.fileno()).st_size
    if lines <= 0 or end == 0:
        return end
    # newlines to pass from the end: one per line, not counting the one that ends the file
    handle.seek(end - 1)
    wanted = lines + (1 if handle.read(1) == b"\n" else 0)
    pos = end
    while pos > 0:
        start = max(0, pos - block)
        handle.seek(start)
        chunk = handle.read(pos - start)
        index = len(chunk)
        while True:
            index = chunk.rfind(b"\n", 0, index)
            if index < 0:
                break
            wanted -= 1
            if wanted == 0:
                return start + index + 1
        pos = start
    return 0


def stream(handle: BinaryIO, offset: int, write: Callable[[str], None], *, block: int = BLOCK) -> int:
    """Write the file from `offset` to its current end through `write`, a block at a time; returns where it
    stopped (the offset to follow from)."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    handle.seek(offset)
    while True:
        chunk = handle.read(block)
        if not chunk:
            break
        offset += len(chunk)
        text = decoder.decode(chunk)
        if text:
            write(text)
    rest = decoder.decode(b"", final=True)
    if rest:
        write(rest)
    return offset
