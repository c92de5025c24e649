"""docs/reference/cli.md is generated from the CLI itself (`python -m ascendctl.cli.cli_doc --write`): every command and
option is listed, and the page is current."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer

from ascendctl.cli import COMMANDS, build_app, cli_doc
from ascendctl.plan.types import PLAN_JSON_SCHEMA

REPO = Path(__file__).resolve().parents[1]


def test_the_page_is_current() -> None:
    assert (REPO / cli_doc.PATH).read_text(encoding="utf-8") == cli_doc.render(), f"stale: run {cli_doc.COMMAND}"


def test_every_command_and_option_is_listed() -> None:
    page = cli_doc.render()
    root = typer.main.get_command(build_app())
    ctx = root.make_context("ascendctl", [], resilient_parsing=True)
    for name in COMMANDS:
        assert f"## `ascendctl {name}`" in page, name
    for command, sub in cli_doc._commands(root, ctx):
        for param in command.get_params(sub):
            if param.hidden or param.name == "help":
                continue
            record = param.get_help_record(sub)
            assert record is not None and f"| {cli_doc._code(record[0])} |" in page, (sub.command_path, param.name)
    assert "## `ascendctl engine install`" in page and "## `ascendctl model pull`" in page
    assert "| `130` |" in page and f"| the plan | {PLAN_JSON_SCHEMA} |" in page


def test_check_names_a_stale_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cli_doc, "PATH", tmp_path / "reference" / "cli.md")
    assert cli_doc.main(["--check"]) == 1
    assert capsys.readouterr().out.strip() == f"{tmp_path / 'reference' / 'cli.md'} is stale: run {cli_doc.COMMAND}"
    assert cli_doc.main(["--write"]) == 0
    assert cli_doc.main(["--check"]) == 0
