"""Engine environments: one isolated venv per (backend, release) under ascendctl's data dir.

`install_engine(plan)` makes an `InstallPlan` real: it creates the venv, runs each pip step with the
environment's own pip (output streamed line by line), records a marker per finished step (so an
interrupted install resumes where it stopped and a finished one is not redone), writes `manifest.json`
(pins, resolved versions, interpreter, times) and verifies the result with a smoke run in the
environment's interpreter. An environment without a manifest is incomplete: `find_engine` ignores it.

Layout of `<data>/engines/<backend>-<release>/`: the venv itself (`bin/`, `lib/`, `pyvenv.cfg`),
`manifest.json` (written last), `.ascendctl/install-state.json` (step markers) and `.ascendctl/wheels/`
(generated alias wheels). A lock file `<data>/engines/.<name>.lock` keeps two installs apart.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import hashlib
import io
import json
import os
import re
import shutil
import sys
import time
import zipfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from packaging.specifiers import SpecifierSet

from ascendctl_engine import paths
from ascendctl_engine.cmdrun import CommandRunner, SubprocessRunner, capture
from ascendctl_engine.inenv import script_path
from ascendctl_engine.install_plan import AliasDistribution, InstallPlan, InstallStep, env_name
from ascendctl_engine.jsonio import JsonReadError, loads_json, read_json_file
from ascendctl_engine.records import record
from ascendctl_engine.versions import parse_or_none

MANIFEST = "manifest.json"
MAX_MANIFEST_BYTES = 4 * 1024 * 1024
STATE_DIR = ".ascendctl"
STATE_FILE = "install-state.json"
MANIFEST_SCHEMA = 1
PROBE_MARKER = "ASCENDCTL-PROBE "
# Each step streams pip's output; these keep it line-oriented and quiet about pip itself.
STEP_ENV = {"PIP_PROGRESS_BAR": "off", "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PYTHONUNBUFFERED": "1"}
SMOKE_TIMEOUT_S = 600.0

Log = Callable[[str], None]


class EngineEnvError(Exception):
    """An engine environment could not be installed, verified, found or removed."""

    def __init__(self, message: str, *, hint: str | None = None, output: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.hint = hint
        self.output = list(output)  # last lines of the failing command, for the report


@record
class EngineEnv:
    """A finished, verified engine environment (what the launcher needs)."""

    name: str
    backend: str
    release: str
    root: Path
    python: Path  # the environment's interpreter
    bin_dir: Path
    vllm_executable: Path  # launch this as argv[0] instead of the logical "vllm"
    manifest: Mapping[str, Any] = field(repr=False)

    @property
    def versions(self) -> dict[str, str]:
        resolved = self.manifest.get("resolved", {})
        return dict(resolved) if isinstance(resolved, dict) else {}


@record
class EngineListing:
    name: str
    path: Path
    status: str  # "ready" | "incomplete"
    backend: str | None
    release: str | None
    vllm: str | None
    created_at: str | None
    installed_at: str | None
    steps_done: int
    steps_total: int | None

    def as_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "path": str(self.path),
            "status": self.status,
            "backend": self.backend,
            "release": self.release,
            "vllm": self.vllm,
            "created_at": self.created_at,
            "installed_at": self.installed_at,
            "steps_done": self.steps_done,
            "steps_total": self.steps_total,
        }


@record
class InstallResult:
    env: EngineEnv
    already_installed: bool  # nothing had to be done
    ran: tuple[str, ...]  # step ids run now
    skipped: tuple[str, ...]  # step ids done by an earlier run
    seconds: float


# ---------------------------------------------------------------------------------------------------
# locating


def env_dir(name: str, root: Path | None = None) -> Path:
    _check_plain_name(name)
    return paths.engines_dir(root) / name


def _check_plain_name(name: str) -> None:
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._+-]*", name) or ".." in name:
        raise EngineEnvError(f"{name!r} is not an engine environment name")


def _python_of(directory: Path) -> Path:
    return directory / "bin" / "python"


def _read_json(path: Path) -> dict[str, Any] | None:
    """A manifest or install-state file through the bounded reader; None when absent or unusable (the
    environment then counts as incomplete, and `engine install` rebuilds what it must)."""
    try:
        data = read_json_file(path, max_bytes=MAX_MANIFEST_BYTES)
    except JsonReadError:
        return None
    return data if isinstance(data, dict) else None


def _write_json_atomic(path: Path, data: Mapping[str, Any]) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(path)


def load_engine(name: str, root: Path | None = None) -> EngineEnv | None:
    """The finished environment called `name`, or None (absent or incomplete)."""
    directory = env_dir(name, root)
    manifest = _read_json(directory / MANIFEST)
    python = _python_of(directory)
    if manifest is None or not python.exists():
        return None
    bin_dir = directory / "bin"
    return EngineEnv(
        name=name,
        backend=str(manifest.get("backend", "")),
        release=str(manifest.get("release", "")),
        root=directory,
        python=python,
        bin_dir=bin_dir,
        vllm_executable=bin_dir / "vllm",
        manifest=manifest,
    )


def find_engine(backend: str, release: str, *, root: Path | None = None) -> EngineEnv | None:
    """The installed and verified environment for (backend, release), or None."""
    return load_engine(env_name(backend, release), root)


def list_engines(root: Path | None = None) -> list[EngineListing]:
    base = paths.engines_dir(root)
    if not base.is_dir():
        return []
    out: list[EngineListing] = []
    for directory in sorted(p for p in base.iterdir() if p.is_dir() and not p.name.startswith(".")):
        manifest = _read_json(directory / MANIFEST)
        state = _read_json(directory / STATE_DIR / STATE_FILE) or {}
        steps = state.get("steps", [])
        done = len(steps) if isinstance(steps, list) else 0
        total = state.get("steps_total")
        if manifest is not None and _python_of(directory).exists():
            resolved = manifest.get("resolved", {})
            out.append(
                EngineListing(
                    name=directory.name,
                    path=directory,
                    status="ready",
                    backend=manifest.get("backend"),
                    release=manifest.get("release"),
                    vllm=resolved.get("vllm") if isinstance(resolved, dict) else None,
                    created_at=manifest.get("created_at"),
                    installed_at=manifest.get("installed_at"),
                    steps_done=done,
                    steps_total=total if isinstance(total, int) else None,
                )
            )
        else:
            out.append(
                EngineListing(
                    name=directory.name,
                    path=directory,
                    status="incomplete",
                    backend=state.get("backend"),
                    release=state.get("release"),
                    vllm=None,
                    created_at=state.get("created_at"),
                    installed_at=None,
                    steps_done=done,
                    steps_total=total if isinstance(total, int) else None,
                )
            )
    return out


def remove_engine(name: str, root: Path | None = None) -> Path:
    directory = env_dir(name, root)
    if not directory.is_dir():
        known = ", ".join(e.name for e in list_engines(root)) or "none"
        raise EngineEnvError(f"no engine environment named {name!r} (installed: {known})")
    with _install_lock(name, root):
        shutil.rmtree(directory)
    return directory


# ---------------------------------------------------------------------------------------------------
# pure helpers (tested directly)


def resume_point(steps: Sequence[InstallStep], done: Sequence[Mapping[str, Any]]) -> int:
    """How many leading steps an earlier run finished with exactly this content. A changed or missing
    step invalidates it and everything after it (later steps build on earlier ones)."""
    count = 0
    for step, finished in zip(steps, done, strict=False):
        if finished.get("id") != step.id or finished.get("digest") != step.digest():
            break
        count += 1
    return count


def choose_python(requirement: str | None, candidates: Sequence[tuple[str, str]]) -> str | None:
    """The first candidate (path, "3.X") whose version satisfies `requirement` (a PEP 440 specifier)."""
    if not requirement:
        return candidates[0][0] if candidates else None
    spec = SpecifierSet(requirement)
    for path, version in candidates:
        if spec.contains(version, prereleases=True):
            return path
    return None


def version_mismatches(expected: Mapping[str, str], found: Mapping[str, str]) -> list[str]:
    problems: list[str] = []
    for name, want in expected.items():
        have = found.get(_norm(name))
        if have is None:
            problems.append(f"{name} is not installed (expected {want})")
            continue
        hv, wv = parse_or_none(have), parse_or_none(want)
        same = hv == wv if hv is not None and wv is not None else have == want
        if not same:
            problems.append(f"{name} {have} is installed, the release pins {want}")
    return problems


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def alias_wheel_bytes(alias: AliasDistribution) -> bytes:
    """A deterministic metadata-only wheel for `alias` (dist-info only: METADATA, WHEEL, RECORD)."""
    dist_info = f"{alias.name.replace('-', '_')}-{alias.version}.dist-info"
    files = {
        f"{dist_info}/METADATA": (
            f"Metadata-Version: 2.1\nName: {alias.name}\nVersion: {alias.version}\nSummary: {alias.summary}\n"
        ).encode(),
        f"{dist_info}/WHEEL": (b"Wheel-Version: 1.0\nGenerator: ascendctl\nRoot-Is-Purelib: true\nTag: py3-none-any\n"),
    }
    record_lines = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record_lines.append(f"{path},sha256={digest},{len(data)}")
    record_lines.append(f"{dist_info}/RECORD,,")
    files[f"{dist_info}/RECORD"] = ("\n".join(record_lines) + "\n").encode()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for path, data in files.items():
            info = zipfile.ZipInfo(path, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            zf.writestr(info, data)
    return buffer.getvalue()


def _now() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


# ---------------------------------------------------------------------------------------------------
# installing


@contextlib.contextmanager
def _install_lock(name: str, root: Path | None) -> Iterator[None]:
    base = paths.engines_dir(root)
    base.mkdir(parents=True, exist_ok=True)
    with (base / f".{name}.lock").open("a+") as handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise EngineEnvError(
                f"another ascendctl process is installing or removing {name!r} right now",
                hint="wait for it to finish, then run the command again",
            ) from None
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _python_candidates() -> list[tuple[str, str]]:
    """Interpreters that can create the venv: this one first, then `python3.N` found on PATH."""
    found = [(sys.executable, f"{sys.version_info.major}.{sys.version_info.minor}")]
    for minor in (12, 11, 10, 13, 9):
        exe = shutil.which(f"python3.{minor}")
        if exe:
            found.append((exe, f"3.{minor}"))
    return found


def install_engine(
    plan: InstallPlan,
    *,
    root: Path | None = None,
    runner: CommandRunner | None = None,
    log: Log = print,
    base_python: str | None = None,
    force: bool = False,
    verify: bool = True,
) -> InstallResult:
    """Create (or finish, or confirm) the engine environment of `plan`. Idempotent and resumable."""
    runner = runner or SubprocessRunner()
    spec = plan.spec
    name = spec.name
    directory = env_dir(name, root)
    started = time.monotonic()
    with _install_lock(name, root):
        existing = load_engine(name, root)
        if existing is not None and not force and existing.manifest.get("plan_digest") == plan.digest():
            log(f"==> {name} is already installed ({directory})")
            return InstallResult(existing, True, (), tuple(s.id for s in plan.steps), 0.0)
        if force and directory.exists():
            log(f"==> --force: removing {directory}")
            shutil.rmtree(directory)
        (directory / MANIFEST).unlink(missing_ok=True)  # from here on the environment is incomplete

        state_dir = directory / STATE_DIR
        state_path = state_dir / STATE_FILE
        state = _read_json(state_path) or {}
        python = _python_of(directory)
        state = _ensure_venv(runner, plan, directory, python, state, base_python=base_python, log=log)
        state_dir.mkdir(parents=True, exist_ok=True)
        records, first = _resume_state(plan, state, log=log)
        _write_json_atomic(state_path, state)

        ran = _run_steps(runner, plan, python, state_dir, state, records, first, log=log)

        report = _probe(runner, python, plan.smoke.import_modules if verify else (), log=log)
        smoke: dict[str, Any] = {"imports": report.get("imports", {})}
        if verify:
            smoke["cli"] = _verify(runner, plan, directory, report, log=log)
        _write_json_atomic(directory / MANIFEST, _manifest(plan, directory, python, state, records, report, smoke))
    env = load_engine(name, root)
    assert env is not None
    seconds = round(time.monotonic() - started, 1)
    log(f"==> {name} ready in {seconds:.0f} s: {env.python}")
    return InstallResult(env, False, tuple(ran), tuple(s.id for s in plan.steps[:first]), seconds)


def _ensure_venv(
    runner: CommandRunner,
    plan: InstallPlan,
    directory: Path,
    python: Path,
    state: dict[str, Any],
    *,
    base_python: str | None,
    log: Log,
) -> dict[str, Any]:
    """Create the venv `directory` unless it holds a usable one; the install state to go on with."""
    if python.exists() and (directory / "pyvenv.cfg").exists():
        return state
    spec = plan.spec
    if directory.exists():
        log(f"==> {directory} holds no usable venv; starting over")
        shutil.rmtree(directory)
    base = base_python or choose_python(spec.python, _python_candidates())
    if base is None:
        raise EngineEnvError(
            f"no Python interpreter satisfies {spec.python!r} for {spec.name}",
            hint=f"install a matching python3.X (the release needs Python {spec.python})",
        )
    directory.parent.mkdir(parents=True, exist_ok=True)
    log(f"==> creating the venv {directory} with {base}")
    _run_checked(runner, [base, "-m", "venv", str(directory)], log=log, prefix="[venv] ", what="venv")
    return {"created_at": _now(), "base_python": base, "steps": []}


def _resume_state(plan: InstallPlan, state: dict[str, Any], *, log: Log) -> tuple[list[dict[str, Any]], int]:
    """Record `plan` in `state` and keep the step records an earlier run finished; (records, first step to run)."""
    spec = plan.spec
    state.update({"backend": spec.backend, "release": spec.release, "steps_total": len(plan.steps)})
    done_records = [r for r in state.get("steps", []) if isinstance(r, dict)]
    first = resume_point(plan.steps, done_records)
    records = done_records[:first]
    if first:
        log(f"==> resuming {spec.name}: {first} of {len(plan.steps)} steps were done by an earlier run")
    state["steps"] = records
    return records, first


def _run_steps(
    runner: CommandRunner,
    plan: InstallPlan,
    python: Path,
    state_dir: Path,
    state: dict[str, Any],
    records: list[dict[str, Any]],
    first: int,
    *,
    log: Log,
) -> list[str]:
    """Run the steps of `plan` from index `first` on, recording each finished one in the state file; their ids."""
    state_path = state_dir / STATE_FILE
    total = len(plan.steps)
    ran: list[str] = []
    for index, step in enumerate(plan.steps):
        tag = f"[{index + 1}/{total}]"
        if index < first:
            log(f"==> {tag} {step.title}: done earlier, skipped")
            continue
        log(f"==> {tag} {step.title}")
        if step.alias is not None:
            wheels = state_dir / "wheels"
            wheels.mkdir(exist_ok=True)
            (wheels / step.alias.wheel_name).write_bytes(alias_wheel_bytes(step.alias))
        argv = step.argv(python, state_dir / "wheels")
        step_start = time.monotonic()
        _run_checked(runner, argv, log=log, prefix=f"{tag} ", what=step.title, env={**STEP_ENV, **step.env})
        seconds = round(time.monotonic() - step_start, 1)
        records.append({"id": step.id, "digest": step.digest(), "seconds": seconds, "finished_at": _now()})
        state["steps"] = records
        _write_json_atomic(state_path, state)
        ran.append(step.id)
        log(f"==> {tag} done in {seconds:.0f} s")
    return ran


def _manifest(
    plan: InstallPlan,
    directory: Path,
    python: Path,
    state: Mapping[str, Any],
    records: Sequence[Mapping[str, Any]],
    report: Mapping[str, Any],
    smoke: dict[str, Any],
) -> dict[str, Any]:
    """The `manifest.json` of a finished install."""
    spec = plan.spec
    state_dir = directory / STATE_DIR
    dists: dict[str, str] = report.get("distributions", {})
    return {
        "schema_version": MANIFEST_SCHEMA,
        "name": spec.name,
        "backend": spec.backend,
        "release": spec.release,
        "pins": spec.as_dict(),
        "plan_digest": plan.digest(),
        "steps": [
            {"id": s.id, "title": s.title, "argv": s.argv(python, state_dir / "wheels"), "env": dict(s.env)}
            for s in plan.steps
        ],
        "fixes": list(plan.fixes),
        "python": {
            "executable": str(python),
            "version": report.get("python_version"),
            "base": state.get("base_python"),
        },
        "bin_dir": str(directory / "bin"),
        "vllm_executable": str(directory / "bin" / "vllm"),
        "resolved": {p: dists[p] for p in plan.report_packages if p in dists},
        "distributions": dists,
        "smoke": smoke,
        "created_at": state.get("created_at"),
        "installed_at": _now(),
        "install_seconds": round(sum(float(r.get("seconds", 0)) for r in records), 1),
    }


def _run_checked(
    runner: CommandRunner,
    argv: Sequence[str],
    *,
    log: Log,
    prefix: str,
    what: str,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
) -> list[str]:
    tail: list[str] = []

    def sink(line: str) -> None:
        tail.append(line)
        del tail[:-40]
        log(prefix + line)

    code = runner.run(argv, on_line=sink, env=env, timeout=timeout)
    if code != 0:
        raise EngineEnvError(
            f"{what} failed (exit {code}): {' '.join(argv)}",
            hint=_install_hint(argv, tail),
            output=tail[-15:],
        )
    return tail


def _install_hint(argv: Sequence[str], tail: Sequence[str]) -> str:
    text = "\n".join(tail)
    torch_missing = "Cannot install torch" in text or "No matching distribution found for torch" in text
    if any("+cpu" in a for a in argv) and torch_missing:
        # The CPU build of torch is not on PyPI: pip must see the PyTorch CPU index or a local wheel folder.
        return (
            "pip could not find the CPU build of torch; run again with "
            "--extra-index-url https://download.pytorch.org/whl/cpu (or a pip find-links folder that has it); "
            "finished steps are kept"
        )
    return "fix the cause shown above and run the same command again: finished steps are kept"


def _probe(runner: CommandRunner, python: Path, modules: Sequence[str], *, log: Log) -> dict[str, Any]:
    argv = [str(python), str(script_path("probe"))]
    for module in modules:
        argv += ["--import", module]
    if modules:
        log(f"==> smoke: importing {', '.join(modules)} in {python}")
    code, lines = capture(runner, argv, timeout=SMOKE_TIMEOUT_S)
    for line in lines:
        if line.startswith(PROBE_MARKER):
            try:
                data = loads_json(line[len(PROBE_MARKER) :], source=f"the probe report of {python}")
            except JsonReadError as exc:
                raise EngineEnvError(f"the environment's interpreter answered the probe with {exc}") from None
            if isinstance(data, dict):
                return data
    raise EngineEnvError(f"the environment's interpreter did not answer the probe (exit {code})", output=lines[-15:])


def _verify(
    runner: CommandRunner, plan: InstallPlan, directory: Path, report: Mapping[str, Any], *, log: Log
) -> dict[str, Any]:
    problems = version_mismatches(plan.smoke.expect_versions, report.get("distributions", {}))
    for module, result in report.get("imports", {}).items():
        if not result.get("ok"):
            problems.append(f"`import {module}` failed: {result.get('error')}")
    if problems:
        raise EngineEnvError(
            "the engine environment failed its smoke check: " + "; ".join(problems),
            hint="run the install again with --force to rebuild it",
        )
    exe = directory / "bin" / "vllm"
    argv = [str(exe), *plan.smoke.cli_args]
    log(f"==> smoke: {' '.join(argv)}")
    start = time.monotonic()
    code, lines = capture(runner, argv, timeout=SMOKE_TIMEOUT_S)
    if code != 0:
        raise EngineEnvError(
            f"the engine's `vllm` command failed its smoke check (exit {code})",
            hint="run the install again with --force to rebuild it",
            output=lines[-15:],
        )
    answer = next((line.strip() for line in reversed(lines) if line.strip()), "")
    log(f"==> smoke: vllm answered {answer!r}")
    return {"argv": argv, "output": answer, "seconds": round(time.monotonic() - start, 1)}
