"""A `HostProbe` made of dicts, for tests (here and in the planner's tests). No I/O at all."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from ascendctl_engine.host.probe import DEFAULT_TIMEOUT, CommandResult

CommandHandler = Callable[[Sequence[str]], CommandResult]


@dataclass
class FakeHostProbe:
    """`files` maps absolute paths to text (directories are implied by the paths, or listed in `dirs`);
    `commands` maps an argv tuple (program name without its directory) to a result or a handler;
    `programs` maps names to the path `which` returns; `busy_ports` are the ports `port_in_use` reports.
    Every command run is recorded in `calls`."""

    files: dict[str, str] = field(default_factory=dict)
    dirs: set[str] = field(default_factory=set)
    environ: dict[str, str] = field(default_factory=dict)
    programs: dict[str, str] = field(default_factory=dict)
    commands: dict[tuple[str, ...], CommandResult | CommandHandler] = field(default_factory=dict)
    busy_ports: set[int] = field(default_factory=set)
    arch: str = "aarch64"
    calls: list[tuple[str, ...]] = field(default_factory=list)

    def run(self, argv: Sequence[str], *, timeout: float = DEFAULT_TIMEOUT) -> CommandResult:
        key = (PurePosixPath(argv[0]).name, *argv[1:])
        self.calls.append(tuple(argv))
        handler = self.commands.get(key)
        if handler is None:
            # A program known by name with arguments not scripted: try a prefix handler (argv[0] only).
            handler = self.commands.get((key[0],))
        if handler is None:
            return CommandResult(127, "", f"not found: {argv[0]}")
        return handler(argv) if callable(handler) else handler

    def read_text(self, path: str) -> str | None:
        return self.files.get(path)

    def _all_dirs(self) -> set[str]:
        out = set(self.dirs)
        for p in list(self.files) + list(self.dirs):
            for parent in PurePosixPath(p).parents:
                out.add(str(parent))
        return out

    def list_dir(self, path: str) -> list[str] | None:
        base = PurePosixPath(path)
        if str(base) not in self._all_dirs():
            return None
        names = {
            PurePosixPath(p).relative_to(base).parts[0]
            for p in list(self.files) + list(self.dirs)
            if PurePosixPath(p) != base and base in PurePosixPath(p).parents
        }
        return sorted(names)

    def exists(self, path: str) -> bool:
        return path in self.files or str(PurePosixPath(path)) in self._all_dirs()

    def env(self) -> Mapping[str, str]:
        return self.environ

    def which(self, program: str) -> str | None:
        return self.programs.get(program)

    def port_in_use(self, host: str, port: int) -> bool:
        return port in self.busy_ports

    def machine(self) -> str:
        return self.arch
