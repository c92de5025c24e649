"""A stand-in for the engine environment's `vllm` as the bench load client: `bench serve --help[=all]` prints the
real v0.32.0 help (captured from the CPU engine), a run copies a real saved result (captured from the CPU engine
serving cpu-demo) to the `--result-dir/--result-filename` it was given, and every call's argv and environment are
recorded. What it stands in for is the process edge only: the files it returns are the real client's.
"""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "bench"
HELP_ALL = FIXTURES / "vllm-0.32.0-bench-serve-help-all.txt"
QUICK_RESULT = FIXTURES / "quick-64-32-4.result.json"
TOO_LONG_RESULT = FIXTURES / "too-long-2100-8-2.result.json"

_SCRIPT = """#!{python}
import json, os, shutil, sys
from pathlib import Path
calls = Path({calls!r})
with calls.open("a") as out:
    out.write(json.dumps({{"argv": sys.argv[1:], "key": os.environ.get("OPENAI_API_KEY"),
                          "no_proxy": os.environ.get("NO_PROXY"), "proxy": os.environ.get("http_proxy"),
                          "offline": os.environ.get("HF_HUB_OFFLINE")}}) + "\\n")
mode = {mode!r}
args = sys.argv[1:]
if mode == "old":
    print("usage: vllm [-h] [-v] {{chat,complete,serve}} ...", file=sys.stderr)
    print("vllm: error: argument subparser: invalid choice: 'bench' (choose from 'chat', 'complete', 'serve')",
          file=sys.stderr)
    sys.exit(2)
if args[:2] == ["bench", "serve"] and any(a.startswith("--help") for a in args):
    sys.stdout.write(Path({help!r}).read_text())
    sys.exit(0)
if mode == "fail":
    print("Traceback: boom", file=sys.stderr)
    sys.exit(1)
out_dir = Path(args[args.index("--result-dir") + 1])
shutil.copy({result!r}, out_dir / args[args.index("--result-filename") + 1])
"""


def make_client(directory: Path, *, mode: str = "ok", result: Path = QUICK_RESULT) -> Path:
    """A fake `vllm` executable in `directory` (modes: ok, old (no `vllm bench`), fail (the run exits 1))."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "vllm"
    calls = directory / "calls.jsonl"
    path.write_text(
        _SCRIPT.format(python=sys.executable, calls=str(calls), mode=mode, help=str(HELP_ALL), result=str(result))
    )
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def calls(client: Path) -> list[dict[str, Any]]:
    log = client.parent / "calls.jsonl"
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


def result_json(path: Path = QUICK_RESULT) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data
