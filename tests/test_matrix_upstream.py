"""Every fact of an Ascend release row equals what its upstream extract states, or carries a recorded decision;
a new upstream disagreement with no decision fails the build."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

from ascendctl.facts import upstream
from ascendctl.facts.matrix import load_matrix, releases
from ascendctl.facts.matrix.build import RELEASE_FIELDS, MatrixBuildError, build_matrix, consistent_candidates
from ascendctl.facts.matrix.schema import Release

DATA = Path(__file__).resolve().parents[1] / "ascendctl" / "facts" / "data" / "matrix.yaml"
NPU = releases(load_matrix(), "npu")


def knowledge() -> dict[str, Any]:
    data = yaml.safe_load(DATA.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def _same(name: str, a: Any, b: Any) -> bool:
    from ascendctl.facts.matrix.build import _normalise

    return _normalise(name, str(a)) == _normalise(name, str(b))


def test_every_extracted_release_is_a_row_and_back() -> None:
    assert [r.version for r in NPU] == list(reversed(upstream.extract_tags()))
    assert "v0.23.0.post1" in {r.version for r in NPU}


@pytest.mark.parametrize("row", NPU, ids=lambda r: r.version)
def test_every_pin_equals_its_extract_or_a_decision(row: Release) -> None:
    facts = upstream.release_facts(row.version)
    for name in RELEASE_FIELDS:
        value = getattr(row, name)
        source = row.sources.get(name)
        if value is None and source is None:
            assert not consistent_candidates(name, facts.get(name, ())), f"{row.version}.{name}: upstream states it"
            continue
        assert source, f"{row.version}.{name} = {value!r} has no source"
        if source.startswith("decision: "):
            continue  # a value no file states, with its reason (`override: true` in matrix.yaml)
        cited = source.split(" (decision: ", 1)[0]
        assert cited.split(":", 1)[0] in (*upstream.extract_tags(), row.version), cited
        stated = [f.value for f in facts.get(name, ()) if f.source == cited]
        assert stated, f"{row.version}.{name}: {cited} is not a candidate the extracts give"
        assert any(_same(name, v, value) for v in stated), f"{row.version}.{name}: {value!r} but {cited} says {stated}"


@pytest.mark.parametrize("row", NPU, ids=lambda r: r.version)
def test_images_are_exactly_what_the_image_workflow_builds(row: Release) -> None:
    built = upstream.images(row.version)
    assert set(row.images) == set(built)
    for key in row.images:
        assert row.sources[f"images.{key}"] == built[key].source


@pytest.mark.parametrize("row", NPU, ids=lambda r: r.version)
def test_every_losing_candidate_is_a_recorded_disagreement(row: Release) -> None:
    facts = upstream.release_facts(row.version)
    for d in row.disagreements:
        assert any(f.source == d.source for f in facts[d.field]), d
        assert d.note, f"{row.version}: the disagreement on {d.field} carries no reason"


def _rows(data: Mapping[str, Any]) -> Sequence[dict[str, Any]]:
    return [r for r in data["releases"] if r.get("backend") == "npu"]


def test_removing_a_decision_fails_the_build() -> None:
    data = knowledge()
    row = next(r for r in _rows(data) if r["version"] == "v0.23.0")
    del row["decisions"]["cann"]
    with pytest.raises(MatrixBuildError, match=r"v0\.23\.0: upstream disagrees on `cann`"):
        build_matrix(data, upstream)


class _OneMoreCandidate:
    """The real extracts plus one new statement, as a new upstream file would add it."""

    def __init__(self, tag: str, name: str, value: str) -> None:
        self.tag, self.name, self.value = tag, name, value

    def extract_tags(self) -> tuple[str, ...]:
        return upstream.extract_tags()

    def images(self, tag: str) -> Mapping[str, Any]:
        return upstream.images(tag)

    def unbuilt_images(self, tag: str) -> Mapping[str, Any]:
        return upstream.unbuilt_images(tag)

    def quantization_schemes(self, tag: str) -> Mapping[str, Any]:
        return upstream.quantization_schemes(tag)

    def release_facts(self, tag: str) -> Mapping[str, Sequence[Any]]:
        facts = {k: list(v) for k, v in upstream.release_facts(tag).items()}
        if tag == self.tag:
            facts[self.name].append(upstream.Fact(self.value, f"{tag}:README.md:1"))
        return facts


def test_a_new_unrecorded_disagreement_fails_the_build() -> None:
    with pytest.raises(MatrixBuildError, match=r"v0\.20\.2rc1: upstream disagrees on `torch`"):
        build_matrix(knowledge(), _OneMoreCandidate("v0.20.2rc1", "torch", "9.9.9"))


def test_a_decision_must_pick_an_upstream_value_unless_it_says_override() -> None:
    data = knowledge()
    row = next(r for r in _rows(data) if r["version"] == "v0.23.0")
    row["decisions"]["cann"]["value"] = "7.0.0"
    with pytest.raises(MatrixBuildError, match="picks no upstream value"):
        build_matrix(data, upstream)
    row["decisions"]["cann"]["override"] = True
    built = build_matrix(copy.deepcopy(data), upstream)
    v23 = next(r for r in _rows(built) if r["version"] == "v0.23.0")
    assert v23["cann"] == "7.0.0" and v23["sources"]["cann"].startswith("decision: ")


def test_a_knowledge_row_holds_no_pins() -> None:
    data = knowledge()
    _rows(data)[0]["cann"] = "1.0"
    with pytest.raises(MatrixBuildError, match="may hold only"):
        build_matrix(data, upstream)


def test_soc_spellings_come_from_the_engine_vocabulary() -> None:
    from ascendctl.facts.matrix import hardware_for_soc_version
    from ascendctl_engine.host.npu_smi import family_from_soc_version
    from ascendctl_engine.vocab import SOC_VERSIONS

    matrix = load_matrix()
    for family, spellings in SOC_VERSIONS.items():
        for soc in spellings:  # the matrix and the host reader classify every spelling alike
            assert family_from_soc_version(soc) == family == hardware_for_soc_version(matrix, soc).id  # type: ignore[union-attr]
    data = knowledge()
    data["hardware"][0]["soc_versions"] = ["ascend910b9"]  # a second copy in the knowledge file is refused
    with pytest.raises(MatrixBuildError, match=r"belong to engine/ascendctl_engine/vocab\.py"):
        build_matrix(data, upstream)


def test_floors_and_fallbacks_do_not_count_as_disagreements() -> None:
    facts = [upstream.Fact("8.3.RC2", "v0.11.0:policy.md:1"), upstream.Fact(">=8.3.rc1", "v0.11.0:README.md:45")]
    assert [f.value for f in consistent_candidates("cann", facts)] == ["8.3.RC2"]
    facts = [upstream.Fact(">=3.10,<3.13", "t:policy.md:1"), upstream.Fact(">=3.10", "t:setup.py:9")]
    assert [f.value for f in consistent_candidates("python", facts)] == [">=3.10,<3.13"]
    facts = [upstream.Fact("2026-08-16", "t:notes.md:3"), upstream.Fact("2026-08-17", "t:refs/tags/t:1")]
    assert [f.value for f in consistent_candidates("date", facts)] == ["2026-08-16"]
    facts = [upstream.Fact("9.0.1", "t:Dockerfile:18"), upstream.Fact("9.1.0-beta.1", "t:Dockerfile.310p:18")]
    assert [f.value for f in consistent_candidates("cann", facts)] == ["9.0.1"]
    # A floor the pin does not meet is a real disagreement.
    facts = [upstream.Fact("2.5.1.dev20250320", "t:policy.md:1"), upstream.Fact(">=2.5.1rc1", "t:pyproject.toml:11")]
    assert len(consistent_candidates("torch_npu", facts)) == 2


def test_corrections_the_extraction_made() -> None:
    rows = {r.version: r for r in NPU}
    assert not any(k.startswith("300i-duo") for k in rows["v0.13.0"].images)  # workflow lines commented out
    assert rows["v0.13.0rc1"].mooncake_image == "0.3.7.post2"  # Dockerfile MOONCAKE_TAG
    assert rows["v0.7.1rc1"].python == ">=3.9,<3.12"
    post = rows["v0.23.0.post1"]
    assert (post.status, post.cann, post.torch_npu, post.triton_ascend) == ("final", "9.1.0", "2.10.0.post4", "3.2.2")
    assert len(post.images) == 8
