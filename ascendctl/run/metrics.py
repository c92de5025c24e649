"""What `ascendctl status` computes from two scrapes of a vLLM `/metrics`: pure functions of the scraped text.

A scrape is parsed with `prometheus_client`'s parser (the library Prometheus' own Python client ships) into the
few families status reads, named per vLLM era (`ascendctl_engine.adapters.eras.metrics_names`: the `metrics-names`
topic). The figures over an interval come from the difference of two scrapes:

- gauges (running / waiting requests, KV-cache use) are the second scrape's values;
- rates are counter deltas over the seconds between the scrapes (a counter that went down means the engine
  restarted in between: the second value counts from that restart);
- quantiles come from the histogram's bucket deltas, interpolated linearly inside the bucket that holds the rank,
  as Prometheus' `histogram_quantile` does (the lowest bucket starts at 0; a rank in the `+Inf` bucket gives the
  highest finite bound); no new observation in the interval gives None.

Every label set of a family is summed (a data-parallel engine reports one series per engine), except the
KV-cache gauge, which reports the fullest engine.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from prometheus_client.parser import text_string_to_metric_families

from ascendctl_engine.records import record

QUANTILES = (0.5, 0.99)
_GAUGES = ("running", "waiting", "kv_usage")
_COUNTERS = ("prompt_tokens", "generation_tokens", "preemptions")
_HISTOGRAMS = ("ttft", "tpot")


class MetricsError(ValueError):
    """The scraped text is not Prometheus text (one line)."""


@record
class Histogram:
    """A cumulative histogram: (upper bound, observations at or below it), `+Inf` last; and the count."""

    buckets: tuple[tuple[float, float], ...]
    count: float

    def minus(self, earlier: Histogram) -> Histogram:
        """The observations made since `earlier` (all of them when the histogram was reset in between)."""
        before = dict(earlier.buckets)
        if self.count < earlier.count or any(n < before.get(le, 0.0) for le, n in self.buckets):
            return self
        return Histogram(tuple((le, n - before.get(le, 0.0)) for le, n in self.buckets), self.count - earlier.count)


@record
class Scrape:
    """The families status reads from one `/metrics` answer, by meaning (`running`, `ttft`, ...); a family the
    engine did not report is absent."""

    at: float  # monotonic seconds when the answer arrived
    values: Mapping[str, float]
    histograms: Mapping[str, Histogram]


def parse_scrape(text: str, names: Mapping[str, str], at: float) -> Scrape:
    """Read `text` (Prometheus exposition format) into a `Scrape`; `names` maps meaning → family name."""
    wanted = {names[k]: k for k in (*_GAUGES, *_COUNTERS, *_HISTOGRAMS) if k in names}
    values: dict[str, float] = {}
    buckets: dict[str, dict[float, float]] = {}
    counts: dict[str, float] = {}
    try:
        for family in text_string_to_metric_families(text):
            meaning = wanted.get(family.name)
            if meaning is None:
                continue
            for sample in family.samples:
                _add(meaning, family.name, sample.name, sample.labels, sample.value, values, buckets, counts)
    except ValueError as exc:
        raise MetricsError(f"not Prometheus text: {exc}") from None
    histograms = {
        m: Histogram(tuple(sorted(b.items())), counts.get(m, b.get(math.inf, 0.0))) for m, b in buckets.items()
    }
    return Scrape(at, values, histograms)


def _add(
    meaning: str,
    family: str,
    sample: str,
    labels: Mapping[str, str],
    value: float,
    values: dict[str, float],
    buckets: dict[str, dict[float, float]],
    counts: dict[str, float],
) -> None:
    if meaning in _HISTOGRAMS:
        if sample == f"{family}_bucket":
            le = float(labels["le"])
            buckets.setdefault(meaning, {})[le] = buckets.get(meaning, {}).get(le, 0.0) + value
        elif sample == f"{family}_count":
            counts[meaning] = counts.get(meaning, 0.0) + value
    elif meaning == "kv_usage":
        values[meaning] = max(values.get(meaning, 0.0), value)
    elif sample in (family, f"{family}_total"):  # a counter's `_created` sample is not a value
        values[meaning] = values.get(meaning, 0.0) + value


def quantile(q: float, histogram: Histogram) -> float | None:
    """Prometheus' `histogram_quantile(q, ...)` over cumulative buckets; None without observations."""
    total = histogram.buckets[-1][1] if histogram.buckets else 0.0
    if total <= 0:
        return None
    rank = q * total
    lower, below = 0.0, 0.0
    for upper, cumulative in histogram.buckets:
        if cumulative >= rank:
            if math.isinf(upper):
                return lower  # the highest finite bound
            if upper <= 0:
                return upper
            inside = cumulative - below
            return lower + (upper - lower) * ((rank - below) / inside if inside > 0 else 1.0)
        lower, below = upper, cumulative
    return lower


@record
class Interval:
    """What an instance did between two scrapes (None: the engine does not report it, or nothing happened)."""

    seconds: float
    running: float | None
    waiting: float | None
    kv_cache_usage_pct: float | None
    prompt_tokens_per_s: float | None
    generation_tokens_per_s: float | None
    preemptions: float | None
    ttft_ms: Mapping[str, float | None]
    tpot_ms: Mapping[str, float | None]
    observations: Mapping[str, float]  # new TTFT / TPOT observations in the interval

    def to_dict(self) -> dict[str, object]:
        return {
            "interval_s": round(self.seconds, 3),
            "running": self.running,
            "waiting": self.waiting,
            "kv_cache_usage_pct": self.kv_cache_usage_pct,
            "prompt_tokens_per_s": self.prompt_tokens_per_s,
            "generation_tokens_per_s": self.generation_tokens_per_s,
            "preemptions": self.preemptions,
            "ttft_ms": dict(self.ttft_ms),
            "tpot_ms": dict(self.tpot_ms),
            "observations": dict(self.observations),
        }


def _delta(first: Scrape, second: Scrape, meaning: str) -> float | None:
    if meaning not in second.values:
        return None
    now = second.values[meaning]
    before = first.values.get(meaning, 0.0)
    return now - before if now >= before else now  # went down: the engine restarted, count since the restart


def _ms(value: float | None) -> float | None:
    return None if value is None else round(value * 1000.0, 3)


def interval(first: Scrape, second: Scrape) -> Interval:
    """The interval between two scrapes of one instance (`first` earlier)."""
    seconds = second.at - first.at
    if seconds <= 0:
        raise ValueError("the second scrape must come after the first")

    def rate(meaning: str) -> float | None:
        delta = _delta(first, second, meaning)
        return None if delta is None else round(delta / seconds, 3)

    quantiles: dict[str, dict[str, float | None]] = {}
    observations: dict[str, float] = {}
    for meaning in _HISTOGRAMS:
        now = second.histograms.get(meaning)
        if now is None:
            quantiles[meaning] = {f"p{round(q * 100)}": None for q in QUANTILES}
            continue
        before = first.histograms.get(meaning, Histogram((), 0.0))
        new = now.minus(before)
        observations[meaning] = new.count
        quantiles[meaning] = {f"p{round(q * 100)}": _ms(quantile(q, new)) for q in QUANTILES}
    kv = second.values.get("kv_usage")
    return Interval(
        seconds=seconds,
        running=second.values.get("running"),
        waiting=second.values.get("waiting"),
        kv_cache_usage_pct=None if kv is None else round(kv * 100.0, 2),
        prompt_tokens_per_s=rate("prompt_tokens"),
        generation_tokens_per_s=rate("generation_tokens"),
        preemptions=_delta(first, second, "preemptions"),
        ttft_ms=quantiles["ttft"],
        tpot_ms=quantiles["tpot"],
        observations=observations,
    )
