"""The README's five-minute tour (and the getting-started page's) runs: every `$ ascendctl ...` line of a fenced block
between `<!-- tour:begin -->` and `<!-- tour:end -->` is run in order, in-process, in a temporary directory holding a
copy of profiles/ (with this test's own `ASCENDCTL_HOME`, tests/conftest.py), and exits 0.

Left out are the lines that start an engine — `serve` without `--dry-run`, `bench` without `--compare`, `tune`
without `--suggest` — and those that act on the deployment such a line started (`stop`, `logs`); `serve --dry-run`
shows the same plan.
"""

from __future__ import annotations

import glob
import re
import shlex
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ascendctl.check.report import CHECK_JSON_SCHEMA
from ascendctl.cli import app
from ascendctl.plan.fit.result import SCHEMA as FIT_JSON_SCHEMA
from ascendctl.plan.types import PLAN_JSON_SCHEMA

REPO = Path(__file__).resolve().parents[1]
TOURS = ("README.md", "docs/getting-started.md")
BLOCK = re.compile(r"<!-- tour:begin -->\n```console\n(.*?)\n```\n<!-- tour:end -->", re.S)
runner = CliRunner()


def tour_lines(document: str) -> list[str]:
    """The `$ ascendctl ...` lines of the document's tour blocks, in order."""
    text = (REPO / document).read_text(encoding="utf-8")
    blocks = BLOCK.findall(text)
    assert blocks, f"{document}: no ```console block between <!-- tour:begin --> and <!-- tour:end -->"
    return [line[2:] for block in blocks for line in block.splitlines() if line.startswith("$ ascendctl ")]


def starts_an_engine(args: list[str]) -> bool:
    command = args[0]
    return (
        (command == "serve" and "--dry-run" not in args)
        or (command == "bench" and "--compare" not in args)
        or (command == "tune" and "--suggest" not in args)
        or command in ("stop", "logs")  # the deployment a left-out `serve` started
    )


def words(line: str, cwd: Path) -> list[str]:
    """The arguments after `ascendctl`, as a shell splits them (comments dropped, globs expanded in `cwd`)."""
    out: list[str] = []
    for word in shlex.split(line, comments=True)[1:]:
        matches = sorted(glob.glob(word, root_dir=cwd)) if any(c in word for c in "*?[") else []
        out += matches or [word]
    return out


@pytest.mark.parametrize("document", TOURS)
def test_the_tour_runs(document: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(REPO / "profiles", tmp_path / "profiles")
    monkeypatch.chdir(tmp_path)
    lines = tour_lines(document)
    ran, failed = 0, []
    for line in lines:
        for meta in ("|", ">", "<", "&&", ";", "$("):
            assert meta not in line.split("#")[0], f"{document}: `{line}`: a tour line is one command, no shell"
        args = words(line, tmp_path)
        if starts_an_engine(args):
            continue
        result = runner.invoke(app, args)
        ran += 1
        if result.exit_code != 0:
            failed.append(f"$ {line}\nexit {result.exit_code}\n{result.output[-2000:]}")
    assert ran >= 5, f"{document}: only {ran} tour commands ran"
    assert not failed, "\n\n".join(failed)


def test_only_engine_starts_are_left_out() -> None:
    left_out = [line for doc in TOURS for line in tour_lines(doc) if starts_an_engine(shlex.split(line)[1:])]
    assert left_out and all(line.split()[1] in ("serve", "stop", "logs") for line in left_out), left_out
    # the port example the README promises is there, and its plan is tested
    readme = tour_lines("README.md")
    commands = [line.split("#")[0].strip() for line in readme]
    assert "ascendctl serve profiles/cpu-demo.yaml --set server.port=8001" in commands
    assert any("--set server.port=8001 --dry-run" in line for line in readme)


@pytest.mark.parametrize(
    ("document", "said"),
    [
        ("README.md", f"(`plan --json` is schema {PLAN_JSON_SCHEMA})"),
        ("docs/getting-started.md", f"# the same as a document (schema {PLAN_JSON_SCHEMA})"),
        ("docs/concepts/plan.md", f'--json    # {{"schema": {PLAN_JSON_SCHEMA}, "release"'),
        ("docs/guides/check.md", f'ascendctl check --json{" " * 29}# {{"schema": {CHECK_JSON_SCHEMA},'),
        ("docs/concepts/fit.md", f'--json    # {{"schema": {FIT_JSON_SCHEMA}, "per_device"'),
        ("docs/memory-fit.md", f"(fit JSON `schema` {FIT_JSON_SCHEMA}, `plan --json` schema {PLAN_JSON_SCHEMA})"),
    ],
)
def test_the_documented_json_versions_are_current(document: str, said: str) -> None:
    # the versions a page states in prose; docs/reference/cli.md lists them all, generated from the same constants
    assert said in (REPO / document).read_text(encoding="utf-8"), f"{document} does not say {said!r}"
