"""SIGTERM and friends ending a command as Ctrl-C does, so that its cleanup runs.

The default action of SIGTERM and SIGHUP ends the process where it stands: no `finally`, no roll-back, no stop of a
deployment the command started. `as_interrupt` makes them raise `KeyboardInterrupt` instead while a step runs;
`ignored` keeps a second one from cutting that cleanup short; `deferred` holds them back (blocked, not lost) while a
step that must not be cut in two runs, such as making a temporary directory and keeping its name. Handlers and the
mask belong to the main thread: elsewhere all three leave the signals as they are.
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
def deferred(signals: Iterable[signal.Signals]) -> Iterator[None]:
    """While the block runs, each of `signals` is blocked: one sent meanwhile is delivered (its handler runs, e.g.
    `as_interrupt`'s) as the block ends, after every statement in it has run."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, signals)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)  # a pending signal's handler runs here


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
