"""The one exception family of ascendctl and the exit codes it maps to.

Every error a user can cause is an `AscendctlError`; the top-level handler in `ascendctl.cli` prints it
as one line (or one line per located issue) and exits with `exit_code`. Anything else is a bug (exit 3).
"""

from __future__ import annotations

from ascendctl_engine.records import record

EXIT_OK = 0
EXIT_FAILED = 1  # the operation ran and failed (a check failed, the engine failed)
EXIT_INVALID = 2  # invalid input: a profile, a flag, a file
EXIT_INTERNAL = 3  # a bug in ascendctl; rerun with --debug for the traceback
EXIT_INTERRUPTED = 130


class AscendctlError(Exception):
    """Base of every error ascendctl reports to a user without a traceback."""

    exit_code = EXIT_FAILED

    def lines(self) -> list[str]:
        return [str(self)]


class UserInputError(AscendctlError):
    """The input (a flag, a file, an override) is wrong; the user can fix it."""

    exit_code = EXIT_INVALID


class OperationFailed(AscendctlError):
    """The input was fine but the operation did not succeed (exit 1)."""

    exit_code = EXIT_FAILED


@record
class Issue:
    """One located problem in an input document."""

    source: str  # a file path, or "--set a.b=c" for an override
    line: int  # 1-based; 0 when unknown
    column: int  # 1-based; 0 when unknown
    path: str  # dotted key path, "" for the document itself
    message: str

    def render(self) -> str:
        where = self.source if self.line <= 0 else f"{self.source}:{self.line}:{self.column}"
        return f"{where}: {self.path}: {self.message}" if self.path else f"{where}: {self.message}"

    def as_dict(self) -> dict[str, object]:
        return {
            "file": self.source,
            "line": self.line,
            "column": self.column,
            "path": self.path,
            "message": self.message,
        }


class DocumentError(UserInputError):
    """A document (profile, facts file) is invalid; carries every located issue found."""

    def __init__(self, issues: list[Issue]) -> None:
        super().__init__("; ".join(i.render() for i in issues))
        self.issues = issues

    def lines(self) -> list[str]:
        return [i.render() for i in self.issues]
