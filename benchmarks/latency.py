"""Whole-process latency of the CLI, as a ratio to the import floor of ascendctl's own dependencies measured in
the same run.

    .venv/bin/python benchmarks/latency.py            # or: make bench
    .venv/bin/python benchmarks/latency.py -n 15 --json

The import floor is `python -c 'import typer, rich, pydantic, yaml, jinja2'`: what any process that merely
imports ascendctl's dependencies costs on this machine. Every command (and the floor, and a bare
`python -c pass` for reference) runs once to warm the bytecode and file caches, then N times (default 7); the
table shows the median and the fastest run, the median's ratio to the floor's median, and OK/SLOW against the
command's target. The everyday commands (`validate`, `matrix --json`, `plan`, `serve --dry-run`, `check` on
a fixture host, `render -t k8s`) have a ratio target (median ≤ 2.0 × the floor), which holds across machines of
different speed; the others keep an absolute one (0.25 s median). An everyday command runs alternately with the
floor (floor, command, floor, command, ...) and its ratio divides by the median of those floor runs (`floor_s`
in `--json`): on a shared machine the load changes within seconds, and the floor row alone, timed before the
commands, can be measured under another load than a command. Beside that ratio, the table shows the same pairs'
ratio in CPU time (`cpu ÷ floor`: user + system seconds of each process, from its own resource usage), which time
spent waiting for a busy machine's CPUs does not inflate; the target is judged on wall time. A command whose
first word is not a registered subcommand yet is reported as n/a, so later commands can be listed here before
they exist.

`check` on a fixture host runs as the tests run that host (tests/conftest.py `FixtureHost`): the host's
captured environment (`_captured/env.json`, the machine's own Ascend variables removed), a stub `npu-smi` on
PATH printing the captured output, and `--engine-python` a stub printing the captured package report. So it
times ascendctl's own work on a host that passes, not a probe of this machine's engine environment, and exits 0.

Bytecode: an installed ascendctl runs from compiled bytecode. When PYTHONDONTWRITEBYTECODE is set (some
sandboxes and CI images set it), nothing would ever be cached and every timed run would compile ascendctl's
sources again, while the floor's packages (compiled at install) would not; so the timed processes run
without it, with PYTHONPYCACHEPREFIX pointing at a temporary directory (the work tree is not written to).
`--no-bytecode-cache` times them with the environment as it is.

A second table times `validate` on broken profiles of every kind (issue #2: each must exit 2 within
1 s): the tests assert only the behaviour, the timing lives here.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
from fixture_hosts import HOST_ENV_PREFIXES, HOSTS_DIR, write_stubs  # noqa: E402  (run `check` as the tests do)

TARGET_S = 0.25
BROKEN_TARGET_S = 1.0

# The import floor: ascendctl's own dependencies, imported and nothing else.
FLOOR_CODE = "import typer, rich, pydantic, yaml, jinja2"
FLOOR_COMMAND = f"python -c '{FLOOR_CODE}'"
FLOOR_LABEL = f"import floor: {FLOOR_COMMAND}"

# The everyday commands' target: median ≤ TARGET_RATIO × the floor's median.
TARGET_RATIO = 2.0

# label, arguments after `ascendctl` (globs are expanded relative to the repository root).
# Add new commands here; they show as n/a until their subcommand is registered.
COMMANDS: list[tuple[str, list[str]]] = [
    ("ascendctl --help", ["--help"]),
    ("ascendctl --version", ["--version"]),
    ("ascendctl validate profiles/*.yaml", ["validate", "profiles/*.yaml"]),
    ("ascendctl schema", ["schema"]),
    ("ascendctl matrix", ["matrix"]),
    ("ascendctl matrix --json", ["matrix", "--json"]),
    ("ascendctl matrix releases --json", ["matrix", "releases", "--json"]),
    ("ascendctl check --root tests/fixtures/hosts/a2-910b3x8", ["check", "--root", "tests/fixtures/hosts/a2-910b3x8"]),
    ("ascendctl serve profiles/cpu-demo.yaml --dry-run", ["serve", "profiles/cpu-demo.yaml", "--dry-run"]),
    ("ascendctl plan profiles/deepseek-r1-w8a8-2node-a2.yaml", ["plan", "profiles/deepseek-r1-w8a8-2node-a2.yaml"]),
    (
        "ascendctl render profiles/qwen3-32b-w8a8-a2.yaml -t k8s",
        ["render", "profiles/qwen3-32b-w8a8-a2.yaml", "-t", "k8s"],
    ),
]

# The everyday commands: judged by their ratio to the import floor.
EVERYDAY: frozenset[str] = frozenset(
    {
        "ascendctl validate profiles/*.yaml",
        "ascendctl matrix --json",
        "ascendctl matrix releases --json",
        "ascendctl plan profiles/deepseek-r1-w8a8-2node-a2.yaml",
        "ascendctl serve profiles/cpu-demo.yaml --dry-run",
        "ascendctl check --root tests/fixtures/hosts/a2-910b3x8",
        "ascendctl render profiles/qwen3-32b-w8a8-a2.yaml -t k8s",
    }
)

# Commands run on a fixture host (label -> host under tests/fixtures/hosts/): see the module docstring.
FIXTURE_HOSTS = {"ascendctl check --root tests/fixtures/hosts/a2-910b3x8": "a2-910b3x8"}


_HEAD = b"apiVersion: ascendctl/v1\nkind: Profile\nmetadata:\n  name: demo\nmodel:\n  source: org/model\n"
_VALID = _HEAD + b"target:\n  backend: cpu\n"


def _alias_bomb() -> bytes:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 9)]
    return "\n".join(lines).encode() + b"\n"


# Broken profiles (name -> content): every kind from issue #2's "Done means", plus the slowest inputs
# that still fit under the size cap (many nodes, many lines). MAX_BYTES mirrors ascendctl.core.yamlio (not
# imported: the benchmark only drives processes).
MAX_BYTES = 256 * 1024
BROKEN: dict[str, Callable[[], bytes]] = {
    "syntax error": lambda: _VALID.replace(b"backend: cpu", b"backend: cpu: npu"),
    "tab indentation": lambda: _VALID.replace(b"  name: demo", b"\tname: demo"),
    "duplicate key": lambda: _VALID + b"kind: Profile\n",
    "alias bomb": _alias_bomb,
    "10 MB file": lambda: _VALID + b"#" * (10 * 1024 * 1024),
    "binary garbage": lambda: b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 64,
    "wrong type": lambda: _VALID + b'  nodes: "2"\n',
    "unknown key": lambda: _VALID + b"  quantisation: w8a8\n",
    "wrong apiVersion": lambda: _VALID.replace(b"/v1", b"/v9"),
    "empty file": lambda: b"",
    "top-level list": lambda: b"- apiVersion: ascendctl/v1\n- kind: Profile\n",
    "max size of list items": lambda: b"a: [" + b"1," * (MAX_BYTES // 2 - 4) + b"1]",
    "max size of newlines": lambda: _VALID + b"\n" * (MAX_BYTES - len(_VALID) - 16) + b"bad: 1\n",
}


def expand(args: list[str]) -> list[str]:
    out: list[str] = []
    for arg in args:
        matches = sorted(str(m.relative_to(REPO)) for m in REPO.glob(arg)) if any(c in arg for c in "*?[") else []
        out += matches or [arg]
    return out


def child_env(environ: Mapping[str, str], cache_dir: str | None) -> dict[str, str]:
    """The environment of the timed processes: `environ`, except that with `cache_dir` given and
    PYTHONDONTWRITEBYTECODE set, bytecode is written (under `cache_dir`, unless a PYTHONPYCACHEPREFIX is set)."""
    env = dict(environ)
    if cache_dir is not None and env.get("PYTHONDONTWRITEBYTECODE"):
        del env["PYTHONDONTWRITEBYTECODE"]
        env.setdefault("PYTHONPYCACHEPREFIX", cache_dir)
    return env


def fixture_host(name: str, workdir: Path, environ: Mapping[str, str]) -> tuple[list[str], dict[str, str]]:
    """The extra arguments and the environment that run `check` on fixture host `name` as the tests do
    (tests/conftest.py `FixtureHost`): stubs for `npu-smi` and the engine interpreter written under `workdir`."""
    captured = HOSTS_DIR / name / "_captured"
    bin_dir = workdir / f"{name}-bin"
    engine_python = write_stubs(captured, bin_dir)
    env = {k: v for k, v in environ.items() if not k.startswith(HOST_ENV_PREFIXES)}
    env.update(json.loads((captured / "env.json").read_text()))
    env["PATH"] = f"{bin_dir}:/usr/bin:/bin"
    return ["--engine-python", str(engine_python)], env


def registered_commands(ascendctl: Path, env: Mapping[str, str] | None = None) -> set[str]:
    """Subcommand names from `ascendctl --help` (the plain click layout: a `Commands:` section)."""
    text = subprocess.run(
        [str(ascendctl), "--help"], cwd=REPO, capture_output=True, text=True, check=True, env=env
    ).stdout
    names: set[str] = set()
    in_commands = False
    for line in text.splitlines():
        if line.strip().rstrip(":").lower() == "commands":
            in_commands = True
            continue
        if in_commands and line.startswith("  ") and line.strip():
            names.add(line.split()[0])
        elif in_commands and line.strip() and not line.startswith(" "):
            in_commands = False
    return names


def _timed(argv: list[str], env: Mapping[str, str] | None) -> tuple[float, float, int]:
    """One run: wall seconds, CPU seconds (user + system, from the child's own resource usage) and exit code."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait for it again
    return elapsed, usage.ru_utime + usage.ru_stime, proc.returncode


def time_runs(argv: list[str], runs: int, env: Mapping[str, str] | None = None) -> tuple[list[float], int]:
    _timed(argv, env)  # warm-up
    times: list[float] = []
    code = 0
    for _ in range(runs):
        elapsed, _, returncode = _timed(argv, env)
        times.append(elapsed)
        code = code or returncode
    return times, code


@dataclass
class Paired:
    """The runs of a command alternating with the floor: wall and CPU seconds of each, and the first non-zero exit
    code of the command."""

    times: list[float] = field(default_factory=list)
    floor_times: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    floor_cpu: list[float] = field(default_factory=list)
    code: int = 0

    def cpu_ratio(self) -> float:
        """The command's median CPU time over the floor's: what the two cost in CPU, which time spent waiting for a
        busy machine's CPUs does not inflate (the wall-time ratio is the target's; this one is shown beside it)."""
        return statistics.median(self.cpu) / statistics.median(self.floor_cpu)


def time_paired(
    argv: list[str],
    floor_argv: list[str],
    runs: int,
    env: Mapping[str, str] | None = None,
    floor_env: Mapping[str, str] | None = None,
) -> Paired:
    """`argv` and the floor, alternately (after a warm-up of each): on a shared machine the load changes within
    seconds, and a ratio is only as good as the two medians it divides were measured under the same load."""
    _timed(floor_argv, floor_env)
    _timed(argv, env)
    paired = Paired()
    for _ in range(runs):
        floor_elapsed, floor_cpu, _ = _timed(floor_argv, floor_env)
        elapsed, cpu, returncode = _timed(argv, env)
        paired.floor_times.append(floor_elapsed)
        paired.floor_cpu.append(floor_cpu)
        paired.times.append(elapsed)
        paired.cpu.append(cpu)
        paired.code = paired.code or returncode
    return paired


def timed_row(
    label: str,
    times: list[float],
    floor: float,
    *,
    target_s: float | None = None,
    target_ratio: float | None = None,
    code: int = 0,
    expected_code: int = 0,
) -> dict[str, object]:
    """One table row: median, fastest, ratio to the floor, the target and OK/SLOW against it (plus the exit
    code when it is not the expected one)."""
    median = statistics.median(times)
    ratio = median / floor
    ok = ratio <= target_ratio if target_ratio is not None else median <= (target_s or TARGET_S)
    status = "OK" if ok else "SLOW"
    if code != expected_code:
        status += f" (exit {code}, expected {expected_code})" if expected_code else f" (exit {code})"
    return {
        "command": label,
        "median_s": median,
        "min_s": min(times),
        "ratio": ratio,
        "target_ratio": target_ratio,
        "target_s": None if target_ratio is not None else (target_s or TARGET_S),
        "status": status,
    }


def reference_row(label: str, times: list[float], floor: float, status: str) -> dict[str, object]:
    """A row without a target (the floor itself, `python -c pass`)."""
    median = statistics.median(times)
    return {
        "command": label,
        "median_s": median,
        "min_s": min(times),
        "ratio": median / floor,
        "target_ratio": None,
        "target_s": None,
        "status": status,
    }


def absent_row(label: str) -> dict[str, object]:
    return {
        "command": label,
        "median_s": None,
        "min_s": None,
        "ratio": None,
        "target_ratio": None,
        "target_s": None,
        "status": "n/a",
    }


def failed(rows: list[dict[str, object]], broken: list[dict[str, object]]) -> bool:
    """Whether `--strict` fails: a command missed its target (its exit code is only reported), or a broken
    profile was slow or did not exit 2."""
    return any(str(r["status"]).startswith("SLOW") for r in rows) or any(r["status"] != "OK" for r in broken)


def _target_text(row: Mapping[str, object]) -> str:
    if row["target_ratio"] is not None:
        return f"ratio ≤ {row['target_ratio']}"
    if row["target_s"] is not None:
        return f"≤ {row['target_s']} s"
    return ""


def format_table(title: str, rows: list[dict[str, object]]) -> list[str]:
    """The rows as text; `cpu ÷ floor` is shown for the rows that have it (the everyday commands)."""
    width = max(len(str(r["command"])) for r in rows)
    head = f"{'command':<{width}}  {'median s':>8}  {'min s':>6}  {'÷ floor':>7}  {'cpu ÷ floor':>11}  "
    head += f"{'target':<12}  status"
    lines = [title, head]
    for r in rows:
        med, low, ratio, cpu = r["median_s"], r["min_s"], r["ratio"], r.get("cpu_ratio")
        target = _target_text(r)
        cpu_text = f"{cpu:10.2f}×" if isinstance(cpu, float) else f"{'-':>11}"
        if isinstance(med, float) and isinstance(low, float) and isinstance(ratio, float):
            lines.append(
                f"{r['command']!s:<{width}}  {med:8.3f}  {low:6.3f}  {ratio:6.2f}×  {cpu_text}  {target:<12}  "
                f"{r['status']}"
            )
        else:
            lines.append(
                f"{r['command']!s:<{width}}  {'-':>8}  {'-':>6}  {'-':>7}  {cpu_text}  {target:<12}  {r['status']}"
            )
    return lines


def time_broken(ascendctl: Path, runs: int, floor: float, env: Mapping[str, str] | None) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="ascendctl-bench-") as tmp:
        for name, make in BROKEN.items():
            path = Path(tmp) / (name.replace(" ", "-") + ".yaml")
            path.write_bytes(make())
            times, code = time_runs([str(ascendctl), "validate", str(path)], runs, env)
            rows.append(
                timed_row(f"validate <{name}>", times, floor, target_s=BROKEN_TARGET_S, code=code, expected_code=2)
            )
    return rows


def json_report(
    runs: int, bytecode: str, floor_times: list[float], rows: list[dict[str, object]], broken: list[dict[str, object]]
) -> dict[str, object]:
    """What `--json` prints: the floor, the targets, and the rows (each with its `ratio` to the floor)."""
    floor = {"command": FLOOR_COMMAND, "median_s": statistics.median(floor_times), "min_s": min(floor_times)}
    return {
        "runs": runs,
        "bytecode": bytecode,
        "floor": floor,
        "target_ratio": TARGET_RATIO,
        "target_s": TARGET_S,
        "rows": rows,
        "broken_target_s": BROKEN_TARGET_S,
        "broken_rows": broken,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", "--runs", type=int, default=7, help="timed runs per command (default 7)")
    parser.add_argument("--ascendctl", type=Path, default=REPO / ".venv" / "bin" / "ascendctl")
    parser.add_argument("--python", type=Path, default=REPO / ".venv" / "bin" / "python")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON instead of a table")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a command is SLOW or fails")
    parser.add_argument("--no-broken", action="store_true", help="skip the broken-profile table")
    parser.add_argument(
        "--no-bytecode-cache",
        action="store_true",
        help="keep PYTHONDONTWRITEBYTECODE for the timed processes (every run compiles ascendctl's sources)",
    )
    opts = parser.parse_args()
    if opts.runs < 1:
        parser.error("--runs must be at least 1")
    for exe in (opts.ascendctl, opts.python):
        if not exe.exists():
            parser.error(f"{exe} not found; run `make venv` first")

    with tempfile.TemporaryDirectory(prefix="ascendctl-bench-pycache-") as cache_dir:
        env = child_env(os.environ, None if opts.no_bytecode_cache else cache_dir)
        bytecode = "off (PYTHONDONTWRITEBYTECODE)" if env.get("PYTHONDONTWRITEBYTECODE") else "cached"
        floor_argv = [str(opts.python), "-c", FLOOR_CODE]
        floor_times, _ = time_runs(floor_argv, opts.runs, env)
        floor = statistics.median(floor_times)
        pass_times, _ = time_runs([str(opts.python), "-c", "pass"], opts.runs, env)
        rows = [reference_row(FLOOR_LABEL, floor_times, floor, "floor")]
        rows.append(reference_row("python -c pass", pass_times, floor, "reference"))
        known = registered_commands(opts.ascendctl, env)
        for label, args in COMMANDS:
            first = args[0]
            if not first.startswith("-") and first not in known:
                rows.append(absent_row(label))
                continue
            extra, run_env = [], env
            if label in FIXTURE_HOSTS:
                extra, run_env = fixture_host(FIXTURE_HOSTS[label], Path(cache_dir) / "hosts", env)
            argv = [str(opts.ascendctl), *expand(args), *extra]
            if label in EVERYDAY:  # judged by the ratio: to the floor runs interleaved with its own
                paired = time_paired(argv, floor_argv, opts.runs, run_env, env)
                floor_s = statistics.median(paired.floor_times)
                row = timed_row(label, paired.times, floor_s, target_ratio=TARGET_RATIO, code=paired.code)
                rows.append({**row, "floor_s": floor_s, "cpu_ratio": paired.cpu_ratio()})
            else:
                times, code = time_runs(argv, opts.runs, run_env)
                rows.append(timed_row(label, times, floor, code=code))
        broken = [] if opts.no_broken else time_broken(opts.ascendctl, opts.runs, floor, env)

    if opts.json:
        print(json.dumps(json_report(opts.runs, bytecode, floor_times, rows, broken), indent=2))
    else:
        python = sys.version.split()[0]
        title = (
            f"{opts.runs} runs each (+1 warm-up), python {python}, bytecode {bytecode}; import floor {floor:.3f} s; "
            f"everyday commands: median ≤ {TARGET_RATIO} × the floor runs interleaved with them, others ≤ {TARGET_S} s"
        )
        print("\n".join(format_table(title, rows)))
        if broken:
            print()
            print("\n".join(format_table("broken profiles: exit 2 expected", broken)))
    return 1 if opts.strict and failed(rows, broken) else 0


if __name__ == "__main__":
    sys.exit(main())
