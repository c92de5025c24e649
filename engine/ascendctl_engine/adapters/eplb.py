"""EPLB (expert-parallel load balancing) eras.

vllm-ascend's own EPLB ("MRv1", through `--additional-config`) moved from top-level keys (v0.11) into
`eplb_config` (v0.13.0rc2; old keys removed in v0.14.0rc1); dynamic balancing and map recording need the
env guards `DYNAMIC_EPLB=true` / `EXPERT_MAP_RECORD=true` (from v0.11.0rc1). The upstream vLLM EPLB
(`--enable-eplb --eplb-config.*`) runs on Ascend only with model runner v2 (`VLLM_USE_V2_MODEL_RUNNER=1`,
`use_async false`), merged on vllm-ascend main after the v0.26.0rc branch (#12804). The two schemas are
never mixed. Facts: each vllm-ascend tag's `docs/source/user_guide/configuration/additional_config.md` and EPLB
guide (v0.11.0 `docs/source/user_guide/feature_guide/eplb_swift_balancer.md`, main
`expert_parallelism_load_balancer.md`), `vllm_ascend/eplb/core/eplb_utils.py` (env guards); vLLM's `EPLBConfig`
(`vllm/config/parallel.py`).
"""

from __future__ import annotations

from ascendctl_engine.adapters.builder import CommandBuilder
from ascendctl_engine.adapters.eras import era, select
from ascendctl_engine.adapters.intent import EngineIntent

NPU = {"npu"}
# The releases EPLB arrives in, read by the era ranges below and by their refusals: a static expert map from
# v0.9.0rc1 (its ascend_config.py:41 reads `expert_map_path`; v0.8.5rc1 has no such key), dynamic EPLB from
# v0.11.0rc0 (v0.11.0rc0:docs/source/user_guide/configuration/additional_config.md).
STATIC_FROM = "0.9.0rc1"
DYNAMIC_FROM = "0.11.0rc0"
# Top-level keys of the v0.11 era and their `eplb_config` names (v0.13.0rc2+ additional_config.md).
TOP_LEVEL = {
    "dynamic_eplb": "dynamic_eplb",
    "num_iterations_eplb_update": "expert_heat_collection_interval",
    "num_wait_worker_iterations": "algorithm_execution_interval",
    "expert_map_path": "expert_map_path",
    "expert_map_record_path": "expert_map_record_path",
    "init_redundancy_expert": "num_redundant_experts",
    "eplb_policy_type": "eplb_policy_type",
}
MRV1_ENV = ("DYNAMIC_EPLB", "EXPERT_MAP_RECORD")


def _why(intent: EngineIntent, field: str) -> str:
    return intent.source(f"engine.eplb.{field}")


# The `engine.eplb` field each `eplb_config` key spells (the origin `plan --against-release` pairs across eras).
FIELD_OF = {
    "dynamic_eplb": "mode",
    "expert_map_path": "expert_map_path",
    "expert_map_record_path": "record_path",
    "expert_heat_collection_interval": "heat_collection_interval",
    "algorithm_execution_interval": "algorithm_interval",
    "num_redundant_experts": "redundant_experts",
    "eplb_policy_type": "policy_type",
}


def _origin(key: str) -> str:
    return f"engine.eplb.{FIELD_OF[key]}"


def _mrv1_values(intent: EngineIntent) -> list[tuple[str, object, str]]:
    """(eplb_config key, value, provenance) for what the profile asks of vllm-ascend's EPLB."""
    e = intent.engine.eplb
    out: list[tuple[str, object, str]] = []
    if e.mode == "dynamic" or e.record_path:
        out.append(("dynamic_eplb", True, _why(intent, "mode")))
    if e.expert_map_path:
        out.append(("expert_map_path", e.expert_map_path, _why(intent, "expert_map_path")))
    if e.record_path:
        out.append(("expert_map_record_path", e.record_path, _why(intent, "record_path")))
    if e.heat_collection_interval is not None:
        out.append(
            ("expert_heat_collection_interval", e.heat_collection_interval, _why(intent, "heat_collection_interval"))
        )
    if e.algorithm_interval is not None:
        out.append(("algorithm_execution_interval", e.algorithm_interval, _why(intent, "algorithm_interval")))
    if e.redundant_experts:
        out.append(("num_redundant_experts", e.redundant_experts, _why(intent, "redundant_experts")))
    if e.policy_type is not None:
        out.append(("eplb_policy_type", e.policy_type, _why(intent, "policy_type")))
    return out


def _static_removal(intent: EngineIntent, b: CommandBuilder) -> None:
    """Warn a plan that loads a static expert map where the release's EPLB guide schedules static EPLB for removal
    (the `eplb-static` era says which releases)."""
    chosen = select("eplb-static", intent)
    if chosen is None or not intent.engine.eplb.expert_map_path:
        return
    removal = chosen.traits.get("removal")
    if removal:
        b.warn(
            f"engine.eplb.expert_map_path: the EPLB guide of vllm-ascend {intent.vllm_ascend} schedules static EPLB "
            f"(loading a recorded expert map) for removal in {removal} ({chosen.source}); dynamic EPLB "
            "(engine.eplb.mode: dynamic) needs no map file"
        )


def _guards(intent: EngineIntent, b: CommandBuilder) -> None:
    e = intent.engine.eplb
    if e.mode == "dynamic":
        b.env_default(
            "DYNAMIC_EPLB",
            "true",
            why="ascend default: MRv1 dynamic EPLB refuses to start without it "
            "(v0.11.0:vllm_ascend/eplb/core/eplb_utils.py; EPLB guide)",
        )
    if e.record_path:
        b.env_default(
            "EXPERT_MAP_RECORD",
            "true",
            why="ascend default: recording the expert map needs it (EPLB guide; v0.11.0:vllm_ascend/eplb/core/"
            "eplb_utils.py)",
        )


def _implementation(intent: EngineIntent, b: CommandBuilder, *, upstream_ok: bool) -> str | None:
    """Which EPLB to plan: `ascend` (MRv1) or `upstream` (MRv2); None when EPLB is off."""
    e = intent.engine.eplb
    if e.mode == "off":
        return None
    if e.implementation == "auto":
        b.decide(
            "eplb.implementation",
            "auto: vllm-ascend's own EPLB (`--additional-config`, model runner v1) is the default on Ascend",
        )
        return "ascend"
    if e.implementation == "upstream" and not upstream_ok:
        b.fail(
            "engine.eplb.implementation upstream: vLLM's EPLB on Ascend needs model runner v2, merged on "
            "vllm-ascend main after the v0.26.0rc branch (#12804); no release in the matrix has it"
        )
    return e.implementation


def _mrv1_checks(intent: EngineIntent, b: CommandBuilder) -> None:
    for name in ("VLLM_USE_V2_MODEL_RUNNER",):
        if intent.runtime.env.get(name, "0") not in ("", "0"):
            b.fail(f"runtime.env {name} selects model runner v2, whose EPLB schema is upstream's: never mix them")


def _upstream(intent: EngineIntent, b: CommandBuilder, *, on_ascend: bool) -> None:
    e = intent.engine.eplb
    if e.expert_map_path or e.record_path or e.policy_type is not None:
        b.fail(
            "expert_map_path / record_path / policy_type are vllm-ascend (MRv1) EPLB options; upstream EPLB has none"
        )
    if on_ascend:
        for name in MRV1_ENV:
            if name in intent.runtime.env:
                b.fail(f"runtime.env {name} is an MRv1 EPLB guard: unset it for upstream EPLB (EPLB guide)")
        b.env_default(
            "VLLM_USE_V2_MODEL_RUNNER",
            "1",
            why="ascend default: upstream EPLB runs on model runner v2 only (EPLB guide, "
            "expert_parallelism_load_balancer.md)",
        )
    b.arg("--enable-eplb", why=_why(intent, "mode"))
    if e.heat_collection_interval is not None:
        b.arg("--eplb-config.window_size", e.heat_collection_interval, why=_why(intent, "heat_collection_interval"))
    if e.algorithm_interval is not None:
        b.arg("--eplb-config.step_interval", e.algorithm_interval, why=_why(intent, "algorithm_interval"))
    if e.redundant_experts:
        b.arg("--eplb-config.num_redundant_experts", e.redundant_experts, why=_why(intent, "redundant_experts"))
    if on_ascend:
        b.arg(
            "--eplb-config.use_async",
            "false",
            why="ascend default: `use_async` must be false on Ascend MRv2 (EPLB guide, "
            "expert_parallelism_load_balancer.md)",
        )


@era(
    "eplb",
    "none",
    axis="vllm_ascend",
    spec=f"<{STATIC_FROM}",
    backends=NPU,
    summary="(no EPLB)",
    source="v0.8.5rc1:vllm_ascend (no expert_map_path); v0.9.0rc1:vllm_ascend/ascend_config.py:41 reads it first",
)
def eplb_none(intent: EngineIntent, b: CommandBuilder) -> None:
    if intent.engine.eplb.mode != "off":
        b.fail(f"EPLB needs vllm-ascend ≥ v{STATIC_FROM} (static map) / ≥ v{DYNAMIC_FROM} (dynamic)")


@era(
    "eplb",
    "static-map",
    axis="vllm_ascend",
    spec=f">={STATIC_FROM},<{DYNAMIC_FROM}",
    backends=NPU,
    summary="static only: top-level `expert_map_path` in `--additional-config`",
    source="v0.9.0rc1:vllm_ascend/ascend_config.py:41 (`expert_map_path`), "
    "v0.9.0rc1:docs/source/user_guide/additional_config.md:33",
)
def eplb_static(intent: EngineIntent, b: CommandBuilder) -> None:
    impl = _implementation(intent, b, upstream_ok=False)
    if impl is None:
        return
    e = intent.engine.eplb
    if e.mode == "dynamic" or e.record_path:
        b.fail(
            f"dynamic EPLB and map recording need vllm-ascend ≥ v{DYNAMIC_FROM} "
            f"(v{DYNAMIC_FROM}:docs/source/user_guide/configuration/additional_config.md)"
        )
    if e.expert_map_path:
        b.additional_key(
            "expert_map_path", e.expert_map_path, why=_why(intent, "expert_map_path"), origin=_origin("expert_map_path")
        )


def _top_level(intent: EngineIntent, b: CommandBuilder, *, guards: bool, policy_type: bool = True) -> None:
    if _implementation(intent, b, upstream_ok=False) is None:
        return
    _mrv1_checks(intent, b)
    reverse = {v: k for k, v in TOP_LEVEL.items()}
    for key, value, why in _mrv1_values(intent):
        if key == "eplb_policy_type" and not policy_type:
            b.fail(f"engine.eplb.policy_type: vllm-ascend {intent.vllm_ascend} reads no EPLB policy type (for: {why})")
            continue
        b.additional_key(reverse[key], value, why=f"{why} (top-level key in this era)", origin=_origin(key))
    if guards:
        _guards(intent, b)


@era(
    "eplb",
    "top-level",
    axis="vllm_ascend",
    spec=f">={DYNAMIC_FROM},<0.11.0rc1",
    backends=NPU,
    summary="top-level `dynamic_eplb`, `num_iterations_eplb_update`, `num_wait_worker_iterations`, "
    "`expert_map_path`, `expert_map_record_path`, `init_redundancy_expert`",
    source="v0.11.0rc0 additional_config.md; no env guard in v0.11.0rc0 (git grep DYNAMIC_EPLB); "
    "no `eplb_policy_type` key (engine/ascendctl_engine/data/ascend_keys/v0.11.0rc0.json)",
)
def eplb_top_level_noguard(intent: EngineIntent, b: CommandBuilder) -> None:
    _top_level(intent, b, guards=False, policy_type=False)


@era(
    "eplb",
    "top-level+guards",
    axis="vllm_ascend",
    spec=">=0.11.0rc1,<0.13.0rc2",
    backends=NPU,
    summary="top-level EPLB keys + env `DYNAMIC_EPLB=true` / `EXPERT_MAP_RECORD=true`",
    source="v0.11.0 additional_config.md and vllm_ascend/eplb/core/eplb_utils.py (env guards); "
    "v0.11.0 EPLB guide (docs/source/user_guide/feature_guide/eplb_swift_balancer.md)",
)
def eplb_top_level(intent: EngineIntent, b: CommandBuilder) -> None:
    _top_level(intent, b, guards=True)


def _eplb_config(intent: EngineIntent, b: CommandBuilder, *, upstream_ok: bool) -> None:
    impl = _implementation(intent, b, upstream_ok=upstream_ok)
    if impl is None:
        return
    if impl == "upstream":
        _upstream(intent, b, on_ascend=True)
        return
    _mrv1_checks(intent, b)
    for key, value, why in _mrv1_values(intent):
        b.additional_key(f"eplb_config.{key}", value, why=why, origin=_origin(key))
    _guards(intent, b)
    _static_removal(intent, b)


@era(
    "eplb",
    "eplb_config",
    axis="vllm_ascend",
    spec=">=0.13.0rc2,<0.27.0rc1",
    backends=NPU,
    summary='`--additional-config {"eplb_config": {…}}` + env guards (old top-level keys gone in v0.14.0rc1)',
    source="release notes v0.13.0rc2 / v0.14.0rc1; docs/source/user_guide/configuration/additional_config.md "
    "at v0.13.0–v0.25.1rc1",
)
def eplb_config(intent: EngineIntent, b: CommandBuilder) -> None:
    _eplb_config(intent, b, upstream_ok=False)


@era(
    "eplb",
    "eplb_config+upstream-mrv2",
    axis="vllm_ascend",
    spec=">=0.27.0rc1",
    backends=NPU,
    summary="MRv1 `eplb_config`, or upstream `--enable-eplb --eplb-config.*` with `use_async false` and "
    "`VLLM_USE_V2_MODEL_RUNNER=1`",
    source="vllm-ascend main (182b75ea):docs/source/user_guide/feature_guide/expert_parallelism_load_balancer.md "
    "(vllm-project/vllm-ascend#12804, after the releases/v0.26.0rc branch)",
)
def eplb_mrv2(intent: EngineIntent, b: CommandBuilder) -> None:
    _eplb_config(intent, b, upstream_ok=True)


@era(
    "eplb",
    "upstream",
    axis="vllm",
    spec=">=0.11",
    backends={"cuda"},
    summary="`--enable-eplb` + `--eplb-config.window_size/step_interval/num_redundant_experts`",
    source="vLLM vllm/config/parallel.py (EPLBConfig); `--enable-eplb`, `--eplb-config` in "
    "engine/ascendctl_engine/data/parsers/ from vllm-0.11.0.json",
)
def eplb_cuda(intent: EngineIntent, b: CommandBuilder) -> None:
    if intent.engine.eplb.mode == "off":
        return
    if intent.engine.eplb.mode == "static":
        b.fail("upstream vLLM EPLB has no static expert map: use mode dynamic")
    _upstream(intent, b, on_ascend=False)


@era(
    "eplb",
    "legacy-flags",
    axis="vllm",
    spec="<0.11",
    backends={"cuda"},
    summary="(not planned: vLLM < 0.11)",
    source="ascendctl plans upstream EPLB from vLLM v0.11.0, the oldest release whose EPLB flags were checked "
    "(engine/ascendctl_engine/data/parsers/)",
)
def eplb_cuda_old(intent: EngineIntent, b: CommandBuilder) -> None:
    if intent.engine.eplb.mode != "off":
        b.fail(f"EPLB on vLLM {intent.vllm} is not planned (flags examined from vLLM 0.11)")


@era(
    "eplb",
    "none (CPU)",
    axis="vllm",
    backends={"cpu"},
    summary="(no EPLB on the CPU engine)",
    source="ascendctl: EPLB balances experts over accelerator EP ranks; vLLM docs/getting_started/installation/"
    "cpu.md (CPU backend) covers none",
)
def eplb_cpu(intent: EngineIntent, b: CommandBuilder) -> None:
    if intent.engine.eplb.mode != "off":
        b.fail("EPLB is not available on the CPU engine")
