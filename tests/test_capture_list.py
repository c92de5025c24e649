"""The capture list each release's code builds (era topic `capture-list`, adapters/capture_list.py) and the rule
plan.graph.decode-capture (vllm-project/vllm-ascend#16049: under FULL_DECODE_ONLY an off-list max_num_seqs leaves the
widest decode batches eager).

The expected lists are written out from the cited code, not from the computation: vLLM's
`VllmConfig._set_cudagraph_sizes` (v0.11.0 vllm/config/__init__.py:589-612; v0.12.0 vllm/config/vllm.py:1036-1075;
v0.13.0 …:1067-1077 multiplies the ceiling by the query length; v0.20.2 …:1527-1532 appends max_num_batched_tokens),
vllm-ascend's platform.py (v0.18.0rc1:157-191 drops the × 2; v0.23.0:549-568 keeps the multiples of TP under
FlashComm1; v0.23.0:109-119 samples 4 sizes on Ascend 950 in piecewise modes), `update_default_aclgraph_sizes`
(v0.14.0rc1:vllm_ascend/utils.py:448-474) and vLLM's `adjust_cudagraph_sizes_for_spec_decode`
(v0.23.0 vllm/config/compilation.py:1473-1515). The dispatcher keys FULL decode graphs by the sizes ≤ max_num_seqs ×
query length (vLLM v0.23.0:vllm/v1/cudagraph_dispatcher.py:211-235), so the widest decode batch needs its own size.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from ascendctl.core.findings import Finding
from ascendctl.facts.matrix import load_matrix
from ascendctl.plan.planner import plan_profile
from ascendctl.schema.loader import load_profile
from ascendctl_engine.adapters.capture_list import CaptureInputs, CaptureList, compute, grid
from ascendctl_engine.adapters.eras import Era, era_for_release

PROFILES = Path(__file__).resolve().parent.parent / "profiles"
DENSE = PROFILES / "qwen3-32b-w8a8-a2.yaml"  # v0.23.0, A2, TP 4, FULL_DECODE_ONLY, max_num_seqs unset
MTP_SP = PROFILES / "deepseek-v3-2-w8a8-mtp-a3.yaml"  # v0.23.0, A3, TP 8, MTP 3, FlashComm1, max_num_seqs 16
RULE = "plan.graph.decode-capture"

EIGHTS_TO_512 = [1, 2, 4, *range(8, 513, 8)]  # vLLM 0.11: 1, 2, 4, every 8 up to min(2 × 256, 512)
BELOW_256 = list(range(8, 256, 8))
STRIDED_512 = [1, 2, 4, *BELOW_256, *range(256, 513, 16)]  # vLLM ≥ 0.12 up to 512
STRIDED_256 = [1, 2, 4, *BELOW_256, 256]  # vllm-ascend ≥ v0.18.0rc1: ceiling min(256 × 1, 512)
ROUNDED_512 = [4, *BELOW_256, *range(256, 513, 16)]  # STRIDED_512 rounded up to multiples of 4 (1, 2, 4 → 4)


@cache
def _pins() -> dict[str, str]:
    return {r.version: r.vllm for r in load_matrix().releases if r.backend == "npu"}


def capture_era(release: str) -> Era:
    chosen = era_for_release("capture-list", "npu", _pins()[release], release)
    assert chosen is not None
    return chosen


def capture(release: str, **given: object) -> CaptureList:
    facts = capture_era(release).traits["facts"]
    given.setdefault("mode", "full-decode-only")
    return compute(facts, CaptureInputs(**given))  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------ the lists per era
@pytest.mark.parametrize(
    ("release", "spec", "expected", "captured"),
    [
        # the oldest release with FULL_DECODE_ONLY: vLLM 0.11's list, its ceiling blind to speculative tokens
        ("v0.11.0rc0", 0, EIGHTS_TO_512, True),
        ("v0.11.0rc0", 3, EIGHTS_TO_512, False),
        ("v0.11.0", 0, EIGHTS_TO_512, True),
        ("v0.11.0", 3, EIGHTS_TO_512, False),
        # vLLM 0.12: every 16 from 256; the runner rounds the sizes up to multiples of 1 + 3
        ("v0.12.0rc1", 0, STRIDED_512, True),
        ("v0.12.0rc1", 3, ROUNDED_512, False),
        ("v0.13.0", 0, STRIDED_512, True),
        ("v0.13.0", 3, ROUNDED_512, False),
        # v0.18.0: min(256 × (1 + spec), 512), the × 2 dropped; 256 × 4 = 1024 is past the 512 cap in every release
        ("v0.18.0", 0, STRIDED_256, True),
        ("v0.18.0", 3, ROUNDED_512, False),
        ("v0.23.0", 0, STRIDED_256, True),
        ("v0.23.0", 3, ROUNDED_512, False),
        ("v0.25.1rc1", 0, STRIDED_256, True),
        ("v0.25.1rc1", 3, ROUNDED_512, False),
    ],
)
def test_list_for_256_sequences_on_tp4(release: str, spec: int, expected: list[int], captured: bool) -> None:
    got = capture(release, max_num_seqs=256, speculative_tokens=spec, tensor=4)
    assert list(got.sizes) == expected
    assert got.decode_batch == 256 * (1 + spec)
    assert got.captured is captured


@pytest.mark.parametrize(
    ("release", "expected"),
    [
        ("v0.11.0rc0", EIGHTS_TO_512),  # no trim before v0.11.0rc1
        ("v0.11.0rc1", [s for s in EIGHTS_TO_512 if s % 4 == 0]),  # v0.11.0rc1:vllm_ascend/platform.py:184-198
        ("v0.23.0", [4, *BELOW_256, 256]),  # v0.23.0:vllm_ascend/platform.py:549-568
    ],
)
def test_sequence_parallelism_keeps_multiples_of_tp(release: str, expected: list[int]) -> None:
    got = capture(release, max_num_seqs=256, tensor=4, sequence_parallel=True)
    assert list(got.sizes) == expected
    assert got.captured


def test_speculative_ceiling_and_rounding_by_era() -> None:
    """64 sequences × (1 + 3) = 256 tokens: vLLM 0.11 / 0.12 size the ceiling by sequences alone (2 × 64 = 128),
    vLLM 0.13 by tokens (min(2 × 256, 512)), vllm-ascend v0.18.0 by tokens without the × 2 (256)."""
    assert list(capture("v0.11.0", max_num_seqs=64, speculative_tokens=3).sizes) == [1, 2, 4, *range(8, 129, 8)]
    assert list(capture("v0.12.0rc1", max_num_seqs=64, speculative_tokens=3).sizes) == [4, *range(8, 129, 8)]
    assert not capture("v0.11.0", max_num_seqs=64, speculative_tokens=3).captured
    assert not capture("v0.12.0rc1", max_num_seqs=64, speculative_tokens=3).captured
    assert list(capture("v0.13.0", max_num_seqs=64, speculative_tokens=3).sizes) == ROUNDED_512
    assert capture("v0.13.0", max_num_seqs=64, speculative_tokens=3).captured
    assert list(capture("v0.18.0", max_num_seqs=64, speculative_tokens=3).sizes) == [4, *BELOW_256, 256]
    assert capture("v0.18.0", max_num_seqs=64, speculative_tokens=3).captured


def test_rounding_to_three_tokens_per_request() -> None:
    """100 × (1 + 2) = 300: ceiling 300, grid up to 288, each size rounded up to a multiple of 3 (≤ 288)."""
    got = capture("v0.23.0", max_num_seqs=100, speculative_tokens=2)
    assert list(got.sizes) == [
        3, 6, 9, 18, 24, 33, 42, 48, 57, 66, 72, 81, 90, 96, 105, 114, 120, 129, 138, 144, 153, 162, 168, 177, 186,
        192, 201, 210, 216, 225, 234, 240, 249, 258, 273, 288,
    ]  # fmt: skip
    assert not got.captured


@pytest.mark.parametrize(
    ("seqs", "expected", "captured"),
    [
        (8, [1, 2, 4, 8], True),
        (12, [1, 2, 4, 8], False),
        (16, [1, 2, 4, 8, 16], True),
        (20, [1, 2, 4, 8, 16], False),
        (32, [1, 2, 4, 8, 16, 24, 32], True),
    ],
)
def test_issue_16049_table(seqs: int, expected: list[int], captured: bool) -> None:
    """vllm-project/vllm-ascend#16049's table (v0.23.0: ceiling max_num_seqs itself)."""
    got = capture("v0.23.0", max_num_seqs=seqs)
    assert list(got.sizes) == expected
    assert got.captured is captured


def test_the_doubled_ceiling_does_not_capture_an_off_grid_batch() -> None:
    """With upstream's × 2 (v0.17.0rc1: ceiling 24) 12 pads to 16, but the decode graphs stop at 12 tokens."""
    got = capture("v0.17.0rc1", max_num_seqs=12)
    assert list(got.sizes) == [1, 2, 4, 8, 16, 24]
    assert not got.captured
    assert got.largest_covered == 8
    # FULL (one routine) pads any batch up to the largest size
    assert capture("v0.17.0rc1", max_num_seqs=12, mode="full").captured


def test_batched_tokens_appended_from_vllm_0_20() -> None:
    assert list(capture("v0.18.0", max_num_seqs=100, max_num_batched_tokens=100).sizes)[-1] == 96
    got = capture("v0.20.2rc1", max_num_seqs=100, max_num_batched_tokens=100)
    assert list(got.sizes)[-2:] == [96, 100]
    assert got.captured


def test_qwen3_moe_dp_list() -> None:
    """v0.14.0rc1 replaces the default list of Qwen3-MoE on TP 1 with DP > 1 (its max is 16 for 10 sequences)."""
    moe = {"max_num_seqs": 10, "tensor": 1, "data": 2, "model_type": "qwen3_moe"}
    got = capture("v0.14.0rc1", **moe)
    assert list(got.sizes) == [1, 2, 5, 10, 15, 20]
    assert got.captured
    assert list(capture("v0.15.0rc1", **moe).sizes) == [1, 2, 4, 8, 16]
    assert not capture("v0.15.0rc1", **moe).captured


def test_950_sample_only_in_piecewise_modes() -> None:
    both = {"max_num_seqs": 256, "max_capture_sizes": 4}
    assert list(capture("v0.23.0", mode="full-and-piecewise", **both).sizes) == [1, 72, 168, 256]
    assert list(capture("v0.23.0", **both).sizes) == STRIDED_256
    assert list(capture("v0.21.0rc1", mode="full-and-piecewise", **both).sizes) == STRIDED_256


def test_eras_before_and_at_full_decode_only() -> None:
    assert capture_era("v0.10.2rc1").traits["capture_list"] is None
    assert capture_era("v0.10.2rc1").traits["full_decode_modes"] == frozenset()
    assert capture_era("v0.11.0").traits["full_decode_modes"] == frozenset({"full-decode-only"})
    assert "full" in capture_era("v0.12.0rc1").traits["full_decode_modes"]
    assert "full-and-piecewise" not in capture_era("v0.20.2rc1").traits["full_decode_modes"]
    assert "full-and-piecewise" in capture_era("v0.21.0rc1").traits["full_decode_modes"]
    # v0.11.0rc0 runs FULL_DECODE_ONLY on MLA models through the PIECEWISE path
    assert not capture("v0.11.0rc0", max_num_seqs=12, mla=True).full_decode
    assert capture("v0.11.0rc1", max_num_seqs=12, mla=True).full_decode
    # the trait is the computation itself
    trait = capture_era("v0.23.0").traits["capture_list"]
    assert trait(CaptureInputs(max_num_seqs=12, mode="full-decode-only")).sizes == (1, 2, 4, 8)


def test_grid() -> None:
    assert grid(3) == [1, 2]
    assert grid(300) == [1, 2, 4, *BELOW_256, 256, 272, 288]
    assert grid(20, step16=False) == [1, 2, 4, 8, 16]


# ----------------------------------------------------------------------------------------------- the rule
def finding(profile: Path, *sets: str) -> Finding:
    plan = plan_profile(load_profile(profile, list(sets)))
    found = [f for f in plan.deployment.findings if f.id == RULE]
    assert len(found) == 1
    return found[0]


def test_warns_for_an_off_list_max_num_seqs() -> None:
    f = finding(DENSE, "engine.scheduler.max_num_seqs=100")
    assert f.status == "warn"
    assert "FULL_DECODE_ONLY" in f.message and "100 tokens" in f.message and "97–100" in f.message
    assert f.fix is not None
    assert "engine.scheduler.max_num_seqs to 96 or 104" in f.fix
    assert "engine.graph.capture_sizes" in f.fix and "100 added" in f.fix
    assert f.source and "vllm-project/vllm-ascend#16049" in f.source


def test_issue_16049_setup() -> None:
    """max_num_seqs 12 under FULL_DECODE_ONLY: capture sizes [1, 2, 4, 8], batches 9-12 eager."""
    f = finding(DENSE, "engine.scheduler.max_num_seqs=12")
    assert f.status == "warn"
    assert "[1, 2, 4, 8]" in f.message and "9–12" in f.message
    assert f.fix is not None
    assert "8 or 16" in f.fix and "[1, 2, 4, 8, 12]" in f.fix


@pytest.mark.parametrize(
    "sets",
    [
        ("engine.scheduler.max_num_seqs=96",),
        ("engine.scheduler.max_num_seqs=100", "engine.graph.capture_sizes=[1,2,4,8,16,32,64,100]"),
        ("engine.scheduler.max_num_seqs=100", "engine.graph.mode=piecewise"),
        ("engine.scheduler.max_num_seqs=100", "engine.graph.mode=eager"),
        (),  # vLLM's default: 256 sequences on a 64 GB A2 device, on the list
    ],
)
def test_silent(sets: tuple[str, ...]) -> None:
    assert finding(DENSE, *sets).status in ("pass", "skip")


def test_default_max_num_seqs_is_vllms() -> None:
    f = finding(DENSE)
    assert f.status == "pass"
    assert "256 tokens" in f.message


def test_only_the_releases_that_leave_it_uncaptured() -> None:
    """264 is on vLLM 0.11's every-8 list (v0.11.x) but between 256 and 272 from vLLM 0.12."""
    assert finding(DENSE, "engine.scheduler.max_num_seqs=264", "release=v0.11.0").status == "pass"
    assert finding(DENSE, "engine.scheduler.max_num_seqs=264", "release=v0.13.0").status == "warn"
    # vLLM 0.20 appends max_num_batched_tokens: v0.20.2rc1 on capture 100, v0.18.0 does not
    both = ("engine.scheduler.max_num_seqs=100", "engine.scheduler.max_num_batched_tokens=100")
    assert finding(DENSE, *both, "release=v0.23.0").status == "pass"
    assert finding(DENSE, *both, "release=v0.18.0").status == "warn"


def test_speculative_tokens_and_sequence_parallelism() -> None:
    """TP 8 with FlashComm1 and MTP 3: the list keeps multiples of 8; 17 × 4 = 68 is not one, 16 and 18 are."""
    assert finding(MTP_SP, "engine.scheduler.max_num_seqs=20").status == "pass"
    f = finding(MTP_SP, "engine.scheduler.max_num_seqs=17")
    assert f.status == "warn"
    assert "× (1 + 3 speculative tokens) = 68 tokens" in f.message
    assert f.fix is not None and "16 or 18" in f.fix


def test_modes_that_capture_decode_batches_otherwise() -> None:
    """Sizes [1, 2, 4, 8, 16] and 12 sequences: FULL_AND_PIECEWISE keys its decode graphs like FULL_DECODE_ONLY (≤ 12
    tokens) and falls back to its PIECEWISE graph of 16; FULL pads 12 to its FULL graph of 16."""
    sets = ("engine.scheduler.max_num_seqs=12", "engine.graph.capture_sizes=[1,2,4,8,16]")
    assert finding(DENSE, *sets).status == "warn"
    f = finding(DENSE, *sets, "engine.graph.mode=full-and-piecewise")
    assert f.status == "warn" and "fall back to PIECEWISE" in f.message
    assert finding(DENSE, *sets, "engine.graph.mode=full").status == "pass"
    # before v0.21.0rc1 the platform turns FULL_AND_PIECEWISE into PIECEWISE: no FULL decode graphs to miss
    assert finding(DENSE, *sets, "engine.graph.mode=full-and-piecewise", "release=v0.20.2rc1").status == "skip"


@pytest.mark.parametrize("profile", sorted(PROFILES.glob("*.yaml")), ids=lambda p: p.stem)
def test_curated_profiles_capture_their_widest_decode_batch(profile: Path) -> None:
    plan = plan_profile(load_profile(profile))
    assert [f.message for f in plan.deployment.findings if f.id == RULE and f.status == "warn"] == []
