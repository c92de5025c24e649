"""Running a command and streaming its output line by line: the one subprocess boundary of engine
environments and model preparation. Tests substitute a fake `CommandRunner`."""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Protocol

LineSink = Callable[[str], None]


class CommandRunner(Protocol):
    def run(
        self,
        argv: Sequence[str],
        *,
        on_line: LineSink,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        timeout: float | None = None,
    ) -> int:
        """Run `argv` (never through a shell), feed each output line (stdout and stderr merged, without
        the newline) to `on_line`, and return the exit status (124 when `timeout` expired)."""
        ...


class SubprocessRunner:
    """The real runner. `env` entries are set on top of the inherited environment."""

    def run(
        self,
        argv: Sequence[str],
        *,
        on_line: LineSink,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        timeout: float | None = None,
    ) -> int:
        full_env = dict(os.environ)
        full_env.update(env or {})
        proc = subprocess.Popen(
            list(argv),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=full_env,
            cwd=cwd,
            text=True,
            errors="replace",
            bufsize=1,
        )
        timed_out = threading.Event()
        timer: threading.Timer | None = None
        if timeout is not None:

            def _expire() -> None:
                timed_out.set()
                proc.kill()

            timer = threading.Timer(timeout, _expire)
            timer.daemon = True
            timer.start()
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                on_line(line.rstrip("\r\n"))
            code = proc.wait()
        except BaseException:  # KeyboardInterrupt included: never leave the child behind
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            raise
        finally:
            if timer is not None:
                timer.cancel()
        return 124 if timed_out.is_set() else code


def capture(
    runner: CommandRunner,
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
) -> tuple[int, list[str]]:
    """Run and collect the output lines (for short probes)."""
    lines: list[str] = []
    code = runner.run(argv, on_line=lines.append, env=env, timeout=timeout)
    return code, lines
