"""The error document of a command run with `--json`: the one owner of its shape and of when it is printed.

Contract. When the command line gives `--json` to a command that has that option, every error the command ends
with is printed on stdout as one JSON document, and the exit code is the one the error has without `--json`:

    {"error": {"exit": 2, "kind": "invalid-input", "message": "p.yaml:3:5: model: ...", "where": "p.yaml:3:5",
               "issues": [{"file": "p.yaml", "line": 3, "column": 5, "path": "model", "message": "..."}]}}

- `exit`: the process's exit code (an int).
- `kind`: named after the exit code: 2 "invalid-input" (a profile, a flag, a file, `$ASCENDCTL_HOME`; click's
  usage errors: an unknown option, a bad option value, a missing argument), 1 "failed" (the operation ran and
  failed), 3 "internal" (a bug in ascendctl), 130 "interrupted".
- `message`: the error as text; its lines (one per located issue) joined with "\\n", without stderr's "error: ".
- `where`: "FILE:LINE:COL" of the first located issue of an invalid document, else null.
- `issues`: each issue of an invalid document, `Issue.as_dict()` (the objects `validate --json` lists), else [].

Those five keys, always. stderr keeps the human text it has without `--json`. A command that printed its own
document and then fails on what it reports (`bench`, `tune`) keeps stdout to that one document: the error goes to
stderr only (`failed_after_document`). When writing the output itself fails (a closed pipe, a full disk), nothing
more is written to it: one line on stderr, exit 1.

"Under `--json`" is decided from the command line, not guessed from its words: the command it names (through
`engine`/`model`) is found, and that command's own option parser reads its arguments, without running anything
and skipping what it does not know (`requested`). So `--set --json` (a value), `-- --json` (after the separator)
and `--json` given to a command without the option never switch to JSON.
"""

import json
from collections.abc import Sequence
from typing import Any

import typer
from typer.core import TyperGroup

from ascendctl.core.errors import EXIT_FAILED, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_INVALID, Issue

KINDS: dict[int, str] = {
    EXIT_INVALID: "invalid-input",
    EXIT_FAILED: "failed",
    EXIT_INTERNAL: "internal",
    EXIT_INTERRUPTED: "interrupted",
}
JSON_FLAG = "--json"


def error_document(exit_code: int, message: str, issues: Sequence[Issue] = ()) -> dict[str, object]:
    """The document of one error (the module's contract)."""
    located = next((i for i in issues if i.line > 0), None)
    where = f"{located.source}:{located.line}:{located.column}" if located is not None else None
    return {
        "error": {
            "exit": exit_code,
            "kind": KINDS.get(exit_code, "failed"),
            "message": message,
            "where": where,
            "issues": [i.as_dict() for i in issues],
        }
    }


def print_error(exit_code: int, message: str, issues: Sequence[Issue] = ()) -> None:
    """The error document on stdout."""
    typer.echo(json.dumps(error_document(exit_code, message, issues), indent=2))


def requested(group: TyperGroup, ctx: Any, args: Sequence[str]) -> bool:
    """Whether `args` (the command line after `group`'s own options, `ctx` its parsed context) run a command that
    has `--json` with `--json` given to it. Parses like click, resiliently: nothing runs, nothing raises."""
    command: Any = group
    parent = ctx
    rest = list(args)
    opts: dict[str, Any] = {}
    while isinstance(command, TyperGroup):
        sub = command.get_command(parent, rest[0]) if rest else None
        if sub is None:
            return False
        leaf = not isinstance(sub, TyperGroup)
        parent = sub.context_class(
            sub, info_name=rest[0], parent=parent, resilient_parsing=True, ignore_unknown_options=leaf
        )
        opts, rest, _ = sub.make_parser(parent).parse_args(rest[1:])
        command = sub
    names = [p.name for p in command.params if JSON_FLAG in getattr(p, "opts", ())]
    return any(opts.get(name) is True for name in names)


def failed_after_document(message: str) -> typer.Exit:
    """A command printed its `--json` document, which says what failed: the error line goes to stderr only, so
    stdout stays that one document; exit 1. Raise what this returns."""
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(EXIT_FAILED)
