"""docs/reference/cli.md: every command and option of `ascendctl`, generated from the app itself (the click command
tree of `build_app()`: each command's usage, help and options, as `--help` states them), with the exit codes and the
shape version of every `--json` document, so the reference cannot drift from what the CLI accepts.

    python -m ascendctl.cli.cli_doc            # print the page
    python -m ascendctl.cli.cli_doc --write    # rewrite docs/reference/cli.md
    python -m ascendctl.cli.cli_doc --check    # exit 1 when it is stale

It lives in the CLI package because it reads the CLI (the stages below `ascendctl.cli` may not import it).
"""

from __future__ import annotations

import html
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import typer

from ascendctl.check.report import CHECK_JSON_SCHEMA
from ascendctl.cli import build_app
from ascendctl.cli.tune import SUGGEST_SCHEMA
from ascendctl.core.errors import EXIT_FAILED, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_INVALID, EXIT_OK
from ascendctl.importer.run import IMPORT_JSON_SCHEMA
from ascendctl.init.build import INIT_JSON_SCHEMA
from ascendctl.outputs.bench_report import BENCH_SCHEMA, COMPARE_SCHEMA
from ascendctl.plan.fit.result import SCHEMA as FIT_JSON_SCHEMA
from ascendctl.plan.lock import LOCK_SCHEMA
from ascendctl.plan.release_diff import RELEASE_DIFF_SCHEMA
from ascendctl.plan.types import PLAN_JSON_SCHEMA
from ascendctl.run.hub import HUB_JSON_SCHEMA
from ascendctl.run.status import STATUS_JSON_SCHEMA
from ascendctl.run.tune.tuned import TUNE_SCHEMA

COMMAND = "python -m ascendctl.cli.cli_doc --write"
PATH = Path("docs") / "reference" / "cli.md"

EXIT_CODES = (
    (EXIT_OK, "ok"),
    (EXIT_FAILED, "the operation ran and failed: a check failed, the engine failed, the profile does not fit"),
    (EXIT_INVALID, "invalid input: a profile, a flag, a file (a failing finding of `plan`, `serve`, `render`)"),
    (EXIT_INTERNAL, "internal error, a bug in ascendctl: rerun with `--debug` for the traceback"),
    (EXIT_INTERRUPTED, "interrupted (Ctrl-C)"),
)

# (the commands that print the document, what it is, its `schema` field): a change to a documented shape bumps its
# constant (and the CHANGELOG says so)
JSON_SCHEMAS: tuple[tuple[tuple[str, ...], str, int], ...] = (
    (("plan --json", "serve --dry-run --json", "pin --json"), "the plan", PLAN_JSON_SCHEMA),
    (("plan PROFILE --against-release TAG --json",), "what an upgrade changes", RELEASE_DIFF_SCHEMA),
    (("check --json",), "the host report", CHECK_JSON_SCHEMA),
    (("fit --json",), "the memory fit", FIT_JSON_SCHEMA),
    (("init --json",), "the profile written, its choices, the fit", INIT_JSON_SCHEMA),
    (("import --json",), "the round-trip report", IMPORT_JSON_SCHEMA),
    (("lock", "lock --json"), "the lock file", LOCK_SCHEMA),
    (("status --json",), "live load per instance", STATUS_JSON_SCHEMA),
    (("bench --json",), "the bench document", BENCH_SCHEMA),
    (("bench --compare --json",), "the comparison", COMPARE_SCHEMA),
    (("tune --json",), "the tune report", TUNE_SCHEMA),
    (("tune --suggest --json",), "the suggested grids", SUGGEST_SCHEMA),
    (("model config --json", "model pull --json", "model identity --json"), "a hub model", HUB_JSON_SCHEMA),
)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("<", "&lt;").replace("\n", " ")


def _code(text: str) -> str:
    """`text` as code in a table cell. A `|` inside backticks would be a column break on GitHub and a literal `\\|` in
    the site, so such a cell is an HTML code element with the bar as an entity, which both show as `|`."""
    if "|" not in text:
        return f"`{text}`"
    return "<code>" + html.escape(text, quote=False).replace("|", "&#124;") + "</code>"


def _commands(group: Any, ctx: Any) -> Iterator[tuple[Any, Any]]:
    """Every command below `group` with its context, depth first, in the order `--help` lists them."""
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is None or command.hidden:
            continue
        sub = command.make_context(name, [], parent=ctx, resilient_parsing=True)
        yield command, sub
        if hasattr(command, "list_commands"):
            yield from _commands(command, sub)


def _command_section(command: Any, ctx: Any) -> list[str]:
    usage = " ".join([ctx.command_path, *command.collect_usage_pieces(ctx)])
    out = ["", f"## `{ctx.command_path}`", "", "```text", usage, "```", ""]
    out += ["```text", *(command.help or "").strip().splitlines(), "```"]
    if hasattr(command, "list_commands"):
        subs = [c for c in command.list_commands(ctx) if not command.get_command(ctx, c).hidden]
        out += ["", "Commands: " + ", ".join(f"`{ctx.command_path} {name}`" for name in subs) + "."]
    records = [r for r in (p.get_help_record(ctx) for p in command.get_params(ctx)) if r is not None]
    records = [r for r in records if r[0] != "-h, --help"]
    if records:
        out += ["", "| argument / option | what it does |", "|---|---|"]
        out += [f"| {_code(names)} | {_cell(text)} |" for names, text in records]
    return out


def render() -> str:
    root = typer.main.get_command(build_app())
    ctx = root.make_context("ascendctl", [], resilient_parsing=True)
    out = [
        "# Commands and options",
        "",
        f"<!-- Generated by `{COMMAND}` from the CLI itself (the command tree of `ascendctl.cli.build_app()`). "
        "Do not edit by hand: a test fails when this file is stale. -->",
        "",
        "Every command of `ascendctl`, its usage, its help and its options, as `ascendctl COMMAND --help` prints "
        "them. `-h` / `--help` work everywhere; `--debug` (before the command) shows the traceback of an internal "
        "error. Values of `--set KEY.PATH=VALUE` are profile fields: [Profile fields](../profile-reference.md).",
        "",
        "## Exit codes",
        "",
        "The same for every command:",
        "",
        "| code | meaning |",
        "|---|---|",
        *(f"| `{code}` | {_cell(text)} |" for code, text in EXIT_CODES),
        "",
        "## JSON documents",
        "",
        "Every reporting command has `--json` with a stable, tested shape: keys may be added; a key renamed or "
        "removed, or a value that changes meaning, bumps the document's `schema` field (and the CHANGELOG says so).",
        "",
        "| command | document | `schema` |",
        "|---|---|---|",
        *(
            f"| {', '.join(_code(f'ascendctl {c}') for c in commands)} | {what} | {version} |"
            for commands, what, version in JSON_SCHEMAS
        ),
        "",
        "## `ascendctl`",
        "",
        "```text",
        " ".join(["ascendctl", *root.collect_usage_pieces(ctx)]),
        "```",
        "",
        "```text",
        *(root.help or "").strip().splitlines(),
        "```",
        "",
        "| option | what it does |",
        "|---|---|",
    ]
    records = [r for r in (p.get_help_record(ctx) for p in root.get_params(ctx)) if r is not None]
    out += [f"| {_code(names)} | {_cell(text)} |" for names, text in records if names != "-h, --help"]
    for command, sub in _commands(root, ctx):
        out += _command_section(command, sub)
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    text = render()
    if not args:
        sys.stdout.write(text)
        return 0
    path = PATH
    if "--check" in args:
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            print(f"{path} is stale: run {COMMAND}")
            return 1
        return 0
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
