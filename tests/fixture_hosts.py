"""Fixture hosts (tests/fixtures/hosts/<name>/): a root tree for `check --root` plus `_captured/` (npu-smi output,
the engine interpreter's package report, the host's environment), and the stubs that replay a capture. Used by the
tests (tests/conftest.py `FixtureHost`) and by `make bench` (benchmarks/latency.py runs `check` on a fixture host
exactly as the tests do)."""

from __future__ import annotations

from pathlib import Path

HOSTS_DIR = Path(__file__).resolve().parent / "fixtures" / "hosts"
# The machine's own variables that would change what `check` finds on a fixture host.
HOST_ENV_PREFIXES = ("ASCEND", "HCCL_", "ATB_", "LCCL_", "PYTORCH_NPU_", "VLLM_", "LD_LIBRARY_PATH", "TORCH_")


def write_stubs(captured: Path, bin_dir: Path) -> Path:
    """Write, under `bin_dir`, a stub `npu-smi` replaying the captures in `captured` (when one was captured) and a
    stub engine interpreter printing the captured package report; returns the interpreter stub's path.

    A capture `npu-smi-<args>.txt` next to a `npu-smi-<args>.rc` holding a number is printed, then the stub exits
    with that status (a failing npu-smi)."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    if (captured / "npu-smi-info.txt").exists():
        stub = bin_dir / "npu-smi"
        stub.write_text(
            "#!/bin/sh\n"
            f"dir='{captured}'\n"
            'f="$dir/npu-smi-$(echo "$*" | sed \'s/ -*/-/g\').txt"\n'
            '[ -f "$f" ] && [ -f "${f%.txt}.rc" ] && { cat "$f"; exit "$(cat "${f%.txt}.rc")"; }\n'
            '[ -f "$f" ] && exec cat "$f"\n'
            'echo "npu-smi stub: no capture for: $*" >&2\n'
            "exit 2\n"
        )
        stub.chmod(0o755)
    engine_python = bin_dir / "engine-python"
    engine_python.write_text(
        f"#!/bin/sh\nprintf 'ASCENDCTL-PROBE '\ntr -d '\\n' < '{captured}/engine-python.json'\necho\n"
    )
    engine_python.chmod(0o755)
    return engine_python
