"""What the engine needs of the platform (driver, CANN, Ray), stated once for the planner (the era adapters, the
plan rules) and for `check`'s host rules.

It lives outside `ascendctl_engine.adapters` so that `ascendctl check` on a host without a profile asks these
minimums without importing the adapters package, which loads every era module and the parser-snapshot machinery
(`make bench`: `check` is an everyday command).
"""

from __future__ import annotations

from collections.abc import Mapping

from ascendctl_engine.versions import cann_below

# Capturing piecewise graphs (PIECEWISE, FULL_AND_PIECEWISE) spends many streams: below HDK 25.5.1 / CANN 8.5.0
# capture runs out of them (error 207008; RN v0.21.0rc1 names the minimum for FULL_AND_PIECEWISE, FAQ #17 the
# stream budget for both). The graph adapter warns with these minimums and `check`'s host.cann.graph-capture rule
# asks `capture_stream_shortfall` too.
CAPTURE_MIN_HDK = "25.5.1"
CAPTURE_MIN_CANN = "8.5.0"
STREAM_HUNGRY_MODES = ("piecewise", "full-and-piecewise")

# Ray on Ascend: older Ray cannot turn an `npu:0` tensor into numpy (vllm-ascend tutorials/features/ray.md); the
# parallel adapter's Ray era and `check`'s host.engine.ray rule both ask this minimum and the install line meeting it.
RAY_MIN_NPU = "2.47.1"
RAY_INSTALL = f"pip install 'ray>={RAY_MIN_NPU}' 'protobuf>3.20.0'"


def capture_stream_shortfall(mode: str, driver: str | None, cann: str | None) -> list[str]:
    """What is too old on this host for capturing `mode` (empty: nothing known to be too old)."""
    if mode not in STREAM_HUNGRY_MODES:
        return []
    old = []
    if cann_below(driver, CAPTURE_MIN_HDK):
        old.append(f"driver (HDK) {driver} < {CAPTURE_MIN_HDK}")
    if cann_below(cann, CAPTURE_MIN_CANN):
        old.append(f"CANN {cann} < {CAPTURE_MIN_CANN}")
    return old


def captures_graphs(graph_mode: str) -> bool:
    """Whether a resolved graph mode captures graphs (everything but eager; `auto` is unresolved)."""
    return graph_mode not in ("eager", "auto")


def launch_blocking_breaks_graphs(env: Mapping[str, str], graph_mode: str) -> bool:
    """vllm-ascend refuses to start graph capture with ASCEND_LAUNCH_BLOCKING=1 (main:vllm_ascend/platform.py:1110)."""
    return env.get("ASCEND_LAUNCH_BLOCKING", "0") == "1" and captures_graphs(graph_mode)
