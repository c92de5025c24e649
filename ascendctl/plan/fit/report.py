"""The fit as text: a per-device table, the capacity line and the suggestions."""

from __future__ import annotations

import shlex

from ascendctl.plan.fit.result import FitResult

COLUMNS = (
    ("HBM", "hbm_gib"),
    ("weights", "weights_gib"),
    ("activation", "activation_gib"),
    ("graphs", "graph_capture_gib"),
    ("HCCL", "comm_buffers_gib"),
    ("reserve", "runtime_reserve_gib"),
    ("KV cache", "kv_cache_gib"),
)


def _gib(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def summary_line(fit: FitResult) -> str:
    """One line for `plan`: the verdict and what it rests on."""
    return (
        f"{fit.verdict}: {fit.kv_tokens:,} KV tokens ({fit.kv_bytes_per_token:,} B/token), "
        f"{fit.max_concurrency:.2f}× max_model_len {fit.max_model_len:,} (max_num_seqs {fit.max_num_seqs})"
    )


def render_fit(fit: FitResult, name: str) -> list[str]:
    out = [f"fit: {name}", "per device (GiB):"]
    header = ["rank", *[c for c, _ in COLUMNS]]
    rows = [header]
    for d in fit.per_device:
        label = d.rank if d.count == 1 else f"{d.rank} (×{d.count})"
        rows.append([label, *[_gib(getattr(d, attr)) for _, attr in COLUMNS]])
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    for r in rows:
        out.append("  " + "  ".join(cell.rjust(widths[i]) if i else cell.ljust(widths[i]) for i, cell in enumerate(r)))
    out.append(f"KV cache: {fit.kv_tokens:,} tokens of {fit.kv_bytes_per_token:,} bytes (block {fit.block})")
    out.append(f"concurrency at max_model_len {fit.max_model_len:,}: {fit.max_concurrency:.2f}×")
    if fit.graph_headroom_gib is not None:
        out.append(f"graph capture headroom above device_utilization's share: {fit.graph_headroom_gib:.2f} GiB")
    if fit.workload is not None:
        out += render_workload(fit)
    out.append(f"verdict: {fit.verdict}")
    for note in fit.notes:
        out.append(f"  note: {note}")
    if fit.suggestions:
        out.append("to change it:")
        for s in fit.suggestions:
            sets = " ".join(f"--set {shlex.quote(one)}" for one in s.sets)
            out.append(f"  {sets}  → {s.kv_tokens:,} tokens, {s.max_concurrency:.2f}×, {s.verdict}  ({s.why})")
    out.append("inputs:")
    for key, value in fit.inputs.items():
        out.append(f"  {key}: {value}")
    return out


def render_workload(fit: FitResult) -> list[str]:
    """Each point of `--workload`: the tokens it holds at once, and the headroom left (or the shortfall)."""
    assert fit.workload is not None
    out = [f"workload {fit.workload.name}: {'held' if fit.workload.fits else 'NOT held'} without preemption"]
    for p in fit.workload.points:
        if p.over_max_model_len:
            state = f"longer than max_model_len {fit.max_model_len:,}: the engine refuses these requests"
        elif p.fits:
            state = f"fits, headroom {p.headroom_tokens:,} tokens ({p.headroom_fraction:.0%})"
        else:
            state = f"preempts: {-p.headroom_tokens:,} tokens short ({p.requests_held:.1f} requests held at once)"
        out.append(
            f"  {p.input_len:,} in + {p.output_len:,} out × {p.concurrency} concurrent = {p.tokens_needed:,} KV "
            f"tokens: {state}"
        )
    return out
