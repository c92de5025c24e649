"""SIGTERM and friends ending a command as Ctrl-C does, so that its cleanup runs.

The default action of SIGTERM and SIGHUP ends the process where it stands: no `finally`, no roll-back, no stop of a
deployment the command started. `as_interrupt` makes them raise `KeyboardInterrupt` instead while a step runs;
`ignored` keeps a second one from cutting that cleanup short. Handlers belong to the main thread: elsewhere both
leave the signals as they are.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any


def _raise_interrupt(signum: int, _frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


@contextmanager
def as_interrupt(signals: Iterable[signal.Signals]) -> Iterator[None]:
    """While the block runs, each of `signals` raises `KeyboardInterrupt`."""
    with _handled(signals, _raise_interrupt):
        yield


@contextmanager
def ignored(signals: Iterable[signal.Signals]) -> Iterator[None]:
    """While the block runs, each of `signals` is ignored."""
    with _handled(signals, signal.SIG_IGN):
        yield


@contextmanager
def _handled(
    signals: Iterable[signal.Signals], handler: Callable[[int, FrameType | None], Any] | signal.Handlers
) -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, handler) for sig in signals}
    try:
        yield
    finally:
        for sig, before in previous.items():
            signal.signal(sig, before)
