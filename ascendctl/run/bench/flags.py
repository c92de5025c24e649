"""Which flags the installed `vllm bench serve` accepts, read from the client itself.

The client's own `--help=all` (vLLM versions whose help is grouped) or `--help` lists every option; its option
lines are read once per client executable and cached under the data directory's `cache/bench-client/`, keyed by
the executable's real path, size and modification time (a reinstalled environment rewrites its `vllm`). A vLLM
without the `bench` command (older than `BENCH_CLI_SINCE`) is a clear error, not a failed run.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import subprocess
import tempfile
from pathlib import Path

from ascendctl.core.errors import OperationFailed
from ascendctl_engine.paths import cache_dir
from ascendctl_engine.records import record

# The first vLLM with `vllm bench serve`: v0.8.0:vllm/entrypoints/cli/benchmark/serve.py (vllm-project/vllm#13993;
# v0.7.3 has no vllm/entrypoints/cli/benchmark/).
BENCH_CLI_SINCE = "0.8.0"
HELP_TIMEOUT_S = 180.0  # the client imports vLLM (and torch) to print its help: ~10 s on a small CPU
CACHE_VERSION = 1

# An option line of argparse's help: two spaces, then the option strings (`-h, --help`, `--x X`, `--y {a,b}`).
_OPTION_LINE = re.compile(r"^  (-[^\s].*?)(?:\s{2,}|$)")
_OPTION = re.compile(r"^--?[A-Za-z0-9][\w-]*$")


@record
class ClientFlags:
    """The option strings of one client's `vllm bench serve`."""

    client: Path
    options: frozenset[str]


def options_from_help(text: str) -> frozenset[str]:
    """The option strings on argparse's option lines of `text` (metavars and help words are not options)."""
    found: set[str] = set()
    for line in text.splitlines():
        match = _OPTION_LINE.match(line)
        if match is None:
            continue
        for word in match.group(1).replace(",", " ").split():
            if _OPTION.match(word):
                found.add(word)
    return frozenset(found)


def check_client(client: Path) -> ClientFlags:
    """The flags of `client bench serve` (cached per executable); exit 1 when the client cannot be run or its
    vLLM has no `vllm bench`."""
    try:
        real = client.resolve(strict=True)
        stat = real.stat()
    except OSError:
        raise OperationFailed(f"the load client {client} does not exist") from None
    if not os.access(real, os.X_OK):
        raise OperationFailed(f"the load client {client} is not executable")
    key = hashlib.sha256(f"{CACHE_VERSION}:{real}:{stat.st_size}:{stat.st_mtime_ns}".encode()).hexdigest()[:32]
    cached = _read_cache(key)
    if cached is not None:
        return ClientFlags(client, cached)
    options = _ask_client(client)
    _write_cache(key, real, options)
    return ClientFlags(client, options)


def _ask_client(client: Path) -> frozenset[str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "NO_PROXY": "127.0.0.1,localhost"}
    texts: list[str] = []
    for flag in ("--help=all", "--help"):  # `--help=all`: vLLM's grouped help; older argparse help lists all
        try:
            done = subprocess.run(
                [str(client), "bench", "serve", flag],
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                errors="replace",
                timeout=HELP_TIMEOUT_S,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise OperationFailed(f"{client} bench serve {flag} did not answer within {HELP_TIMEOUT_S:.0f}s") from None
        except OSError as exc:
            raise OperationFailed(f"cannot run {client}: {exc.strerror or exc}") from None
        text = done.stdout + done.stderr
        texts.append(text)
        options = options_from_help(done.stdout)
        if done.returncode == 0 and "--base-url" in options:
            return options
    joined = "\n".join(texts)
    if "invalid choice: 'bench'" in joined or "argument subparser: invalid choice" in joined:
        raise OperationFailed(
            f"the vLLM of {client} has no `vllm bench` (it first appears in vLLM {BENCH_CLI_SINCE}); use an engine "
            f"environment with vLLM >= {BENCH_CLI_SINCE}, or pass --url with --client PATH of another "
            "environment's `vllm`"
        )
    last = next((line for line in reversed(joined.splitlines()) if line.strip()), "no output")
    raise OperationFailed(f"{client} bench serve --help failed: {last.strip()[:300]}")


def _cache_path(key: str) -> Path:
    return cache_dir() / "bench-client" / f"{key}.json"


def _read_cache(key: str) -> frozenset[str] | None:
    try:
        data = json.loads(_cache_path(key).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    options = data.get("options") if isinstance(data, dict) else None
    if not isinstance(options, list) or not all(isinstance(o, str) for o in options):
        return None
    return frozenset(options)


def _write_cache(key: str, real: Path, options: frozenset[str]) -> None:
    """Best effort: a cache that cannot be written only costs the next run the same `--help`."""
    path = _cache_path(key)
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=".bench-client.", dir=path.parent)
        tmp = Path(name)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump({"client": str(real), "options": sorted(options)}, out)
            tmp.replace(path)
        finally:
            tmp.unlink(missing_ok=True)


__all__ = ["BENCH_CLI_SINCE", "ClientFlags", "check_client", "options_from_help"]
