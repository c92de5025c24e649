"""The one small interface every host probe goes through, and its real implementation.

`HostProbe` is all the I/O host checking does: run a command (argv list, timeout), read a text file, list
a directory, test a path, read the environment, find a program on PATH, and test whether a port is free.
`LocalHostProbe` does it for real, reading every file under a root prefix (`--root DIR`, default `/`) so a
captured host tree can be checked anywhere; `FakeHostProbe` (ascendctl_engine.host.fake) does it from
dicts for tests.
"""

from __future__ import annotations

import errno
import os
import platform
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Protocol

from ascendctl_engine.jsonio import JsonReadError, open_regular
from ascendctl_engine.ports import bind_error
from ascendctl_engine.records import record

MAX_READ_BYTES = 1024 * 1024
DEFAULT_TIMEOUT = 10.0
_MAX_LINK_HOPS = 40


@record
class CommandResult:
    """What a command did. `returncode` 127: not found, 126: not executable, 124: timed out."""

    returncode: int
    stdout: str
    stderr: str = ""

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def reason(self, argv: Sequence[str]) -> str:
        tail = (self.stderr or self.stdout).strip().splitlines()
        detail = f": {tail[-1][:200]}" if tail else ""
        return f"`{' '.join(argv)}` exited with {self.returncode}{detail}"


class HostProbe(Protocol):
    """Everything host checking reads from a machine. Paths are absolute host paths (`/dev/davinci0`)."""

    def run(self, argv: Sequence[str], *, timeout: float = DEFAULT_TIMEOUT) -> CommandResult: ...

    def read_text(self, path: str) -> str | None:
        """The file's text (at most 1 MiB, undecodable bytes replaced), or None when it is missing, is not a
        regular file (a FIFO, a device) or cannot be read."""
        ...

    def list_dir(self, path: str) -> list[str] | None:
        """Sorted entry names, or None when the directory is missing."""
        ...

    def exists(self, path: str) -> bool: ...

    def env(self) -> Mapping[str, str]: ...

    def which(self, program: str) -> str | None: ...

    def port_in_use(self, host: str, port: int) -> bool:
        """True when binding (host, port) fails because something holds it; other errors raise OSError."""
        ...

    def machine(self) -> str:
        """CPU architecture as `uname -m` says it (aarch64, x86_64)."""
        ...


class LocalHostProbe:
    """The real probe: subprocess argv lists with timeouts (never a shell), files under `root`."""

    def __init__(self, root: str | os.PathLike[str] = "/", environ: Mapping[str, str] | None = None) -> None:
        self.root = Path(root)
        self._env = dict(os.environ if environ is None else environ)

    # -- files ---------------------------------------------------------------------------------------
    def host_path(self, path: str) -> Path:
        """Where the host path `path` lives under the root. Symlinks are followed inside the root: an
        absolute link target (`latest -> /usr/local/Ascend/ascend-toolkit/8.3.RC2`) is re-rooted."""
        pure = PurePosixPath(path)
        if not pure.is_absolute():
            raise ValueError(f"host paths are absolute, got {path!r}")
        if self.root == Path("/"):
            return Path(path)
        pending = list(pure.parts[1:])
        current = self.root
        hops = 0
        while pending:
            part = pending.pop(0)
            if part in ("", "."):
                continue
            if part == "..":
                current = current.parent if current != self.root else current
                continue
            candidate = current / part
            if candidate.is_symlink():
                hops += 1
                if hops > _MAX_LINK_HOPS:
                    raise OSError(errno.ELOOP, "too many symbolic links", str(candidate))
                target = PurePosixPath(candidate.readlink())
                if target.is_absolute():
                    current = self.root
                    pending = list(target.parts[1:]) + pending
                else:
                    pending = list(target.parts) + pending
                continue
            current = candidate
        return current

    def read_text(self, path: str) -> str | None:
        # A captured tree (`--root`) is not trusted: a FIFO or a device where a file should be is refused
        # before it is opened (an open or read would block or never end), like a missing file.
        where = self.host_path(path)
        try:
            with open_regular(where) as fh:
                data = fh.read(MAX_READ_BYTES)
        except JsonReadError as exc:
            if exc.errno in (None, errno.ENOENT, errno.ENOTDIR, errno.EISDIR):
                return None
            raise OSError(exc.errno, exc.reason, str(where)) from None
        return data.decode("utf-8", errors="replace")

    def list_dir(self, path: str) -> list[str] | None:
        try:
            return sorted(entry.name for entry in self.host_path(path).iterdir())
        except (FileNotFoundError, NotADirectoryError):
            return None

    def exists(self, path: str) -> bool:
        try:
            return self.host_path(path).exists()
        except OSError:
            return False

    # -- process environment ---------------------------------------------------------------------------
    def env(self) -> Mapping[str, str]:
        return self._env

    def which(self, program: str) -> str | None:
        return shutil.which(program, path=self._env.get("PATH", os.defpath))

    def run(self, argv: Sequence[str], *, timeout: float = DEFAULT_TIMEOUT) -> CommandResult:
        args = list(argv)
        try:
            done = subprocess.run(  # argv list, never a shell
                args,
                capture_output=True,
                text=True,
                errors="replace",
                timeout=timeout,
                stdin=subprocess.DEVNULL,
                env=self._env,
                check=False,
            )
        except FileNotFoundError as exc:
            return CommandResult(127, "", f"not found: {exc.filename or args[0]}")
        except PermissionError as exc:
            return CommandResult(126, "", f"not executable: {exc.filename or args[0]}")
        except subprocess.TimeoutExpired as exc:
            out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
            return CommandResult(124, out, f"timed out after {timeout:g}s")
        except OSError as exc:
            return CommandResult(126, "", f"{type(exc).__name__}: {exc}")
        return CommandResult(done.returncode, done.stdout, done.stderr)

    def port_in_use(self, host: str, port: int) -> bool:
        exc = bind_error(host, port)
        if exc is None:
            return False
        if exc.errno == errno.EADDRINUSE:
            return True
        raise exc  # not "in use" but unbindable (e.g. not an address of this host): the caller reports it

    def machine(self) -> str:
        """This machine's architecture; for another root, what its `/proc/sys/kernel/arch` says (or "")."""
        if self.root == Path("/"):
            return platform.machine()
        return (self.read_text("/proc/sys/kernel/arch") or "").strip()
