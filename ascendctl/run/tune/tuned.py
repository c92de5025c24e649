"""What a tune leaves behind: the winning profile (`<stem>.tuned.yaml` next to the input, or `-o OUT`) and the
report of every trial (`<OUT without .yaml>.json` beside it).

The tuned profile is the input document with the winner's engine settings (and the tune's own `--set`s, which
every trial ran with) applied exactly as `--set` applies them (the loader's own override step), emitted with
`yaml.safe_dump(sort_keys=False)` under a header comment saying what won and under which SLOs. It is validated
before it is renamed into place, so a tuned profile that exists is one `ascendctl validate` accepts. The input's
comments are not carried over (PyYAML does not keep them).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from ascendctl.core.errors import OperationFailed, UserInputError
from ascendctl.core.files import write_atomic
from ascendctl.core.yamlio import load_yaml_file
from ascendctl.plan.workload import Workload
from ascendctl.run.tune.goal import Goal, Slo
from ascendctl.run.tune.grid import Axis, TrialSpec, items
from ascendctl.run.tune.trials import TrialResult, TuneOutcome
from ascendctl.schema.loader import load_profile, parse_override, validate_profile_document

TUNE_SCHEMA = 1
TUNED_SUFFIX = ".tuned.yaml"


def outputs_for(profile_path: Path, out: Path | None) -> tuple[Path, Path]:
    """Where the tuned profile and the report go; exit 2 before anything runs when they would overwrite a file
    without `-o` (or when `-o` names the input itself)."""
    tuned = out if out is not None else profile_path.with_name(profile_path.stem + TUNED_SUFFIX)
    report = tuned.with_suffix(".json")
    if tuned.exists() and tuned.resolve() == profile_path.resolve():
        raise UserInputError(f"-o {tuned}: that is the input profile; name another file")
    if tuned.is_dir():
        raise UserInputError(f"-o {tuned}: is a directory")
    if out is None:
        for path in (tuned, report):
            if path.exists() or path.is_symlink():
                raise UserInputError(f"{path} exists; pass -o OUT to write the tuned profile elsewhere (or over it)")
    return tuned, report


def _header(profile_path: Path, outcome: TuneOutcome, winner: TrialResult, goal: Goal, slos: Sequence[Slo]) -> str:
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    bounds = ", ".join(s.text for s in slos) or "none"
    score = f"{winner.score:.2f} {goal.metric}" if winner.score is not None else "?"
    lines = [
        f"Tuned by `ascendctl tune` from {profile_path.name} on {when}.",
        f"Goal: {goal.name} ({goal.means}, at the workload's worst point); SLOs: {bounds}.",
        f"Winner: trial {winner.spec.index} of {len(outcome.trials)} measured: {winner.spec.label} ({score}).",
    ]
    if winner.spec.bench:
        measured_at = " ".join(items(winner.spec.bench))
        lines.append(f"Benchmark settings are not profile settings: the winner was measured at {measured_at}.")
    lines.append("The input's comments are not carried over; the trial report sits beside this file (.json).")
    return "".join(f"# {line}\n" for line in lines)


def tuned_text(profile_path: Path, base_overrides: Sequence[str], winner: TrialSpec, header: str) -> str:
    """The input document with the winner's settings applied like `--set` (the loader applies them to the
    document's data while validating it), as YAML under `header`."""
    doc = load_yaml_file(profile_path)
    validate_profile_document(doc, [parse_override(o) for o in [*base_overrides, *items(winner.engine)]])
    body = yaml.safe_dump(doc.data, sort_keys=False, allow_unicode=True, default_flow_style=False)
    return header + body


def _write_atomic(path: Path, text: str, *, validate: bool) -> None:
    """The whole file or nothing; a tuned profile that exists is a valid one (checked before the rename)."""
    try:
        write_atomic(path, text, load_profile if validate else None)
    except OSError as exc:
        raise OperationFailed(f"cannot write {path}: {exc.strerror or exc}") from None


def write_tuned(
    profile_path: Path,
    base_overrides: Sequence[str],
    outcome: TuneOutcome,
    goal: Goal,
    slos: Sequence[Slo],
    path: Path,
) -> None:
    winner = outcome.winner
    if winner is None:
        raise OperationFailed("no trial won: nothing to write")  # callers check first; a bug otherwise
    header = _header(profile_path, outcome, winner, goal, slos)
    _write_atomic(path, tuned_text(profile_path, base_overrides, winner.spec, header), validate=True)


def tune_document(
    profile_path: Path,
    base_overrides: Sequence[str],
    axes: Sequence[Axis],
    workload: Workload,
    goal: Goal,
    slos: Sequence[Slo],
    budget_min: float | None,
    outcome: TuneOutcome,
    tuned: Path | None,
    plans: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The report (`schema` 1, docs/guides/bench-and-tune.md): every trial in measured order, the skipped ones, the
    winner and where the tuned profile went."""
    winner = outcome.winner
    return {
        "schema": TUNE_SCHEMA,
        "kind": "tune",
        "profile": str(profile_path),
        "overrides": list(base_overrides),
        "goal": {"name": goal.name, "metric": goal.metric, "maximize": goal.maximize},
        "slo": {s.metric: s.limit_ms for s in slos},
        "grid": {a.key: list(a.values) for a in axes},
        "engine_keys": [a.key for a in axes if a.engine],
        "bench_keys": [a.key for a in axes if not a.engine],
        "workload": workload.to_json(),
        "budget_min": budget_min,
        "engine_starts": outcome.engine_starts,
        "seconds": round(outcome.seconds, 3),
        "trials": [t.to_json() for t in outcome.trials],
        "skipped": [{"index": s.index, "settings": dict(s.settings), "restart": s.restart} for s in outcome.skipped],
        "winner": None
        if winner is None
        else {"index": winner.spec.index, "settings": dict(winner.spec.settings), "score": winner.score},
        "tuned_profile": None if tuned is None else str(tuned),
        "plans": plans or {},
    }


def write_report(path: Path, document: dict[str, Any]) -> None:
    _write_atomic(path, json.dumps(document, indent=2) + "\n", validate=False)


__all__ = ["TUNED_SUFFIX", "TUNE_SCHEMA", "outputs_for", "tune_document", "tuned_text", "write_report", "write_tuned"]
