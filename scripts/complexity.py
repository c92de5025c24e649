"""The complexity budget of the two packages, as `radon cc` (radon >= 6, default options) scores functions.

    python scripts/complexity.py          # exit 1 when the budget is broken, listing the offenders

The budget: every function of the planner and of the matrix explainer at most `STRICT_MAX`; in all of
`ascendctl` and `ascendctl_engine` at most `OVER_CEILING_ALLOWED` functions above `CEILING`. Why: those two
modules decide what a deployment is allowed to be; a verdict hidden in a 40-branch function is one nobody
can review. Run by `make complexity` (part of `make lint`).
"""

from __future__ import annotations

import sys
from pathlib import Path

from radon.complexity import cc_visit
from radon.visitors import Function

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = (ROOT / "ascendctl", ROOT / "engine" / "ascendctl_engine")
STRICT = (ROOT / "ascendctl" / "plan" / "planner.py", ROOT / "ascendctl" / "facts" / "matrix" / "explainer.py")
STRICT_MAX = 15
CEILING = 20
OVER_CEILING_ALLOWED = 3


def scores(path: Path) -> list[tuple[str, int]]:
    """(qualified name, complexity) of every function and method in one file."""
    out: dict[str, int] = {}
    for block in cc_visit(path.read_text(encoding="utf-8")):
        # radon lists a method twice (as a function with its class name, and in its class's block): once here
        if isinstance(block, Function):
            out[f"{block.classname}.{block.name}" if block.classname else block.name] = block.complexity
    return list(out.items())


def main() -> int:
    over: list[tuple[int, str]] = []
    strict_broken: list[tuple[int, str]] = []
    for package in PACKAGES:
        for path in sorted(package.rglob("*.py")):
            rel = path.relative_to(ROOT)
            for name, cc in scores(path):
                if cc > CEILING:
                    over.append((cc, f"{rel}:{name}"))
                if path in STRICT and cc > STRICT_MAX:
                    strict_broken.append((cc, f"{rel}:{name}"))
    ok = True
    for cc, where in sorted(strict_broken, reverse=True):
        print(f"complexity: {where} scores {cc} (the planner and the explainer keep every function <= {STRICT_MAX})")
        ok = False
    if len(over) > OVER_CEILING_ALLOWED:
        ok = False
        print(f"complexity: {len(over)} functions score above {CEILING} (at most {OVER_CEILING_ALLOWED} may):")
    for cc, where in sorted(over, reverse=True):
        print(f"  {cc:3d}  {where}")
    if ok:
        print(f"complexity: ok ({len(over)} functions above {CEILING}; planner and explainer <= {STRICT_MAX})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
