"""Report the interpreter, every installed distribution and (optionally) which modules import.

Run as `<env python> probe.py [--import MODULE]...`; prints one line `ASCENDCTL-PROBE <json>`.
"""

from __future__ import annotations

import importlib
import importlib.metadata as metadata
import json
import platform
import re
import sys
import time
import traceback

MARKER = "ASCENDCTL-PROBE "


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def main(argv: list[str]) -> int:
    modules = [argv[i + 1] for i, arg in enumerate(argv[:-1]) if arg == "--import"]
    dists: dict[str, str] = {}
    for dist in metadata.distributions():
        name = dist.metadata["Name"]
        if name:
            dists[_norm(name)] = dist.version
    imports: dict[str, dict[str, object]] = {}
    for module in modules:
        start = time.monotonic()
        try:
            importlib.import_module(module)
            imports[module] = {"ok": True, "seconds": round(time.monotonic() - start, 2)}
        except BaseException as exc:  # report, do not crash: the caller decides
            last = traceback.format_exception_only(type(exc), exc)[-1].strip()
            imports[module] = {"ok": False, "error": last}
    report = {
        "executable": sys.executable,
        "python_version": platform.python_version(),
        "distributions": dict(sorted(dists.items())),
        "imports": imports,
    }
    sys.stdout.flush()
    print(MARKER + json.dumps(report, sort_keys=True), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
