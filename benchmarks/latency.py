"""Whole-process latency of the CLI, next to a bare `python -c pass` measured in the same run.

    .venv/bin/python benchmarks/latency.py            # or: make bench
    .venv/bin/python benchmarks/latency.py -n 15 --json

Each command runs once to warm the bytecode and file caches, then N times (default 7); the table shows
the median and the fastest run, the difference to the interpreter's own start-up, and OK/SLOW against
the target (0.25 s median on a developer machine). A command whose first word is not a registered
subcommand yet is reported as n/a, so later commands can be listed here before they exist.

A second table times `validate` on broken profiles of every kind (issue #2: each must exit 2 within
1 s): the tests assert only the behaviour, the timing lives here.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TARGET_S = 0.25
BROKEN_TARGET_S = 1.0

# Commands with their own target: `check` probes a (fixture) host, "well under a second" (issue #4);
# `render` plans and then builds the artifacts (issue #7 sets no latency target).
TARGETS_S = {"check": 0.5, "render": 0.5}

# label, arguments after `ascendctl` (globs are expanded relative to the repository root).
# Add new commands here; they show as n/a until their subcommand is registered.
COMMANDS: list[tuple[str, list[str]]] = [
    ("ascendctl --help", ["--help"]),
    ("ascendctl --version", ["--version"]),
    ("ascendctl validate profiles/*.yaml", ["validate", "profiles/*.yaml"]),
    ("ascendctl schema", ["schema"]),
    ("ascendctl matrix", ["matrix"]),
    ("ascendctl check --root tests/fixtures/hosts/a2-910b3x8", ["check", "--root", "tests/fixtures/hosts/a2-910b3x8"]),
    ("ascendctl serve profiles/cpu-demo.yaml --dry-run", ["serve", "profiles/cpu-demo.yaml", "--dry-run"]),
    ("ascendctl plan profiles/deepseek-r1-w8a8-2node-a2.yaml", ["plan", "profiles/deepseek-r1-w8a8-2node-a2.yaml"]),
    ("ascendctl matrix releases --json", ["matrix", "releases", "--json"]),
    (
        "ascendctl render profiles/qwen3-32b-w8a8-a2.yaml -t k8s",
        ["render", "profiles/qwen3-32b-w8a8-a2.yaml", "-t", "k8s"],
    ),
]


_HEAD = b"apiVersion: ascendctl/v1\nkind: Profile\nmetadata:\n  name: demo\nmodel:\n  source: org/model\n"
_VALID = _HEAD + b"target:\n  backend: cpu\n"


def _alias_bomb() -> bytes:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 9)]
    return "\n".join(lines).encode() + b"\n"


# Broken profiles (name -> content): every kind from issue #2's "Done means", plus the slowest inputs
# that still fit under the size cap (many nodes, many lines). MAX_BYTES mirrors ascendctl.yamlio (not
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


def registered_commands(ascendctl: Path) -> set[str]:
    """Subcommand names from `ascendctl --help` (the plain click layout: a `Commands:` section)."""
    text = subprocess.run([str(ascendctl), "--help"], cwd=REPO, capture_output=True, text=True, check=True).stdout
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


def time_broken(ascendctl: Path, runs: int) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="ascendctl-bench-") as tmp:
        for name, make in BROKEN.items():
            path = Path(tmp) / (name.replace(" ", "-") + ".yaml")
            path.write_bytes(make())
            times, code = time_runs([str(ascendctl), "validate", str(path)], runs)
            median = statistics.median(times)
            status = "OK" if median <= BROKEN_TARGET_S else "SLOW"
            if code != 2:
                status += f" (exit {code}, expected 2)"
            rows.append({"command": f"validate <{name}>", "median_s": median, "min_s": min(times), "status": status})
    return rows


def print_table(title: str, rows: list[dict[str, object]], base: float) -> None:
    width = max(len(str(r["command"])) for r in rows)
    print(title)
    print(f"{'command':<{width}}  {'median s':>8}  {'min s':>6}  {'vs python -c pass':>17}  status")
    for r in rows:
        med, low = r["median_s"], r["min_s"]
        if isinstance(med, float) and isinstance(low, float):
            delta = "" if r["status"] == "baseline" else f"+{med - base:.3f} (×{med / base:.1f})"
            print(f"{r['command']!s:<{width}}  {med:8.3f}  {low:6.3f}  {delta:>17}  {r['status']}")
        else:
            print(f"{r['command']!s:<{width}}  {'-':>8}  {'-':>6}  {'':>17}  {r['status']}")


def time_runs(argv: list[str], runs: int) -> tuple[list[float], int]:
    subprocess.run(argv, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)  # warm-up
    times: list[float] = []
    code = 0
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.run(argv, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - start)
        code = code or proc.returncode
    return times, code


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", "--runs", type=int, default=7, help="timed runs per command (default 7)")
    parser.add_argument("--ascendctl", type=Path, default=REPO / ".venv" / "bin" / "ascendctl")
    parser.add_argument("--python", type=Path, default=REPO / ".venv" / "bin" / "python")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON instead of a table")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a command is SLOW or fails")
    parser.add_argument("--no-broken", action="store_true", help="skip the broken-profile table")
    opts = parser.parse_args()
    if opts.runs < 1:
        parser.error("--runs must be at least 1")
    for exe in (opts.ascendctl, opts.python):
        if not exe.exists():
            parser.error(f"{exe} not found; run `make venv` first")

    base_times, _ = time_runs([str(opts.python), "-c", "pass"], opts.runs)
    base = statistics.median(base_times)
    rows: list[dict[str, object]] = [
        {"command": "python -c pass", "median_s": base, "min_s": min(base_times), "status": "baseline"}
    ]
    known = registered_commands(opts.ascendctl)
    failed = False
    for label, args in COMMANDS:
        first = args[0]
        if not first.startswith("-") and first not in known:
            rows.append({"command": label, "median_s": None, "min_s": None, "status": "n/a"})
            continue
        times, code = time_runs([str(opts.ascendctl), *expand(args)], opts.runs)
        median = statistics.median(times)
        target = TARGETS_S.get(first, TARGET_S)
        status = "OK" if median <= target else "SLOW"
        if target != TARGET_S:
            status += f" (target {target} s)"
        if code not in (0,):
            status += f" (exit {code})"
        failed = failed or not status.startswith("OK")
        rows.append({"command": label, "median_s": median, "min_s": min(times), "status": status})

    broken = [] if opts.no_broken else time_broken(opts.ascendctl, opts.runs)
    failed = failed or any(r["status"] != "OK" for r in broken)

    if opts.json:
        report = {"runs": opts.runs, "target_s": TARGET_S, "rows": rows}
        report |= {"broken_target_s": BROKEN_TARGET_S, "broken_rows": broken}
        print(json.dumps(report, indent=2))
    else:
        python = sys.version.split()[0]
        print_table(f"{opts.runs} runs each (+1 warm-up), python {python}, target median ≤ {TARGET_S} s", rows, base)
        if broken:
            print()
            print_table(f"broken profiles: exit 2 expected, target median ≤ {BROKEN_TARGET_S} s", broken, base)
    return 1 if opts.strict and failed else 0


if __name__ == "__main__":
    sys.exit(main())
