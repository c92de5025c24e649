"""The checked-in upstream extracts (ascendctl/facts/data/upstream) and their reader, ascendctl.facts.upstream.

Spot facts below were checked by reading the upstream files at each tag (`git show TAG:path`).
"""

from __future__ import annotations

import copy
import importlib.util
import json
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from ascendctl.facts import upstream

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "ascendctl" / "facts" / "data" / "upstream"
MIRROR = Path(os.environ.get("ASCENDCTL_UPSTREAM_MIRROR", "/work/.mirror/vllm-project+vllm-ascend/repo"))

GIT_TAGS = (
    "v0.7.1rc1",
    "v0.7.3rc1",
    "v0.7.3rc2",
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
    "v0.13.0rc3",
    "v0.13.0",
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
)
POST = "v0.23.0.post1"


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("extract_upstream", REPO / "scripts" / "extract_upstream.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve their module while the class is built
    spec.loader.exec_module(module)
    return module


@pytest.fixture(autouse=True)
def package_data() -> Iterator[None]:
    upstream.set_data_dir(None)
    yield
    upstream.set_data_dir(None)


def facts(node: Any) -> Iterator[dict[str, Any]]:
    """Every `{"value", "source"}` object inside an extract."""
    if isinstance(node, dict):
        if "source" in node and "value" in node:
            yield node
        for child in node.values():
            yield from facts(child)
    elif isinstance(node, list):
        for child in node:
            yield from facts(child)


def versions(fact_list: list[upstream.Fact]) -> list[str]:
    return [str(f.value) for f in fact_list]


# --- coverage and provenance -------------------------------------------------------------------------------


def test_every_release_has_an_extract_in_version_order() -> None:
    tags = upstream.extract_tags()
    assert set(tags) == {*GIT_TAGS, POST}
    assert tags.index("v0.23.0") + 1 == tags.index(POST) == tags.index("v0.24.0rc1") - 1
    assert tags[0] == "v0.7.1rc1" and tags[-1] == "v0.25.1rc1"


@pytest.mark.parametrize("tag", [*GIT_TAGS, POST])
def test_every_fact_cites_a_line_of_its_own_release(tag: str) -> None:
    data = upstream.extract(tag)
    assert data["tag"] == tag
    found = list(facts(data))
    assert len(found) > 50
    for item in found:
        m = re.fullmatch(r"(?P<tag>[^:]+):(?P<path>.+):(?P<line>\d+)", item["source"])
        assert m, item["source"]
        assert m["tag"] == tag, item["source"]
        assert int(m["line"]) >= 1
        if tag == POST:
            assert m["path"].startswith("PyPI:"), item["source"]


@pytest.mark.skipif(not (MIRROR / "HEAD").exists(), reason="needs the vllm-ascend git mirror (absent in CI)")
@pytest.mark.parametrize("tag", ["v0.7.3", "v0.13.0", "v0.23.0"])
def test_git_sources_name_files_of_the_tag_and_lines_inside_them(tag: str) -> None:
    import subprocess

    lengths: dict[str, int] = {}
    for item in facts(upstream.extract(tag)):
        fact = upstream.Fact(item["value"], item["source"])
        if fact.path == f"refs/tags/{tag}":
            continue
        if fact.path not in lengths:
            shown = subprocess.run(
                ["git", "-C", str(MIRROR), "show", f"{tag}:{fact.path}"], capture_output=True, check=True
            )
            lengths[fact.path] = shown.stdout.count(b"\n") + 1
        assert fact.line <= lengths[fact.path], fact.source


def test_extract_of_a_missing_release_is_an_upstream_missing_lookup_error() -> None:
    with pytest.raises(upstream.UpstreamMissing):
        upstream.extract("v0.99.0")
    with pytest.raises(LookupError):
        upstream.release_facts("v0.6.0")
    assert upstream.extract("0.23.0")["tag"] == "v0.23.0"


def test_reading_one_release_loads_only_its_file() -> None:
    upstream.clear_cache()
    upstream.images("v0.23.0")
    upstream.quantization_schemes("v0.23.0")
    assert upstream.extract.cache_info().currsize == 1


# --- spot facts (read from the upstream files by hand) ------------------------------------------------------


def test_only_v0_23_0_and_its_post_release_build_the_ascend_950_images() -> None:
    building = [t for t in upstream.extract_tags() if "950" in upstream.images(t)]
    assert building == ["v0.23.0", POST]
    assert upstream.images("v0.23.0")["950"].value["dockerfile"] == "Dockerfile.a5"
    assert upstream.images("v0.23.0")["950-openeuler"].source.startswith(
        "v0.23.0:.github/workflows/schedule_image_build_and_push.yaml:"
    )
    for tag in ("v0.21.0rc1", "v0.22.1rc1", "v0.23.0rc1", "v0.24.0rc1", "v0.25.1rc1"):
        unbuilt = upstream.extract(tag)["dockerfiles_unbuilt"]
        assert set(unbuilt) == {"950", "950-openeuler"}, tag
        assert unbuilt["950"]["value"] == "Dockerfile.a5"
    assert "950" not in upstream.extract("v0.20.2rc1")["dockerfiles_unbuilt"]  # no Dockerfile.a5 yet


def test_300i_duo_images_follow_the_workflows_not_the_dockerfiles() -> None:
    for tag in ("v0.9.1rc1", "v0.9.2rc1", "v0.10.0rc1", "v0.12.0rc1", "v0.14.0rc1", "v0.25.1rc1"):
        assert {"300i-duo", "300i-duo-openeuler"} <= set(upstream.images(tag)), tag
    for tag in ("v0.9.1rc2", "v0.9.1rc3", "v0.9.1"):  # the v0.9.1 line has no 310p Dockerfile or workflow
        assert "300i-duo" not in upstream.images(tag)
        assert upstream.extract(tag)["dockerfiles_unbuilt"] == {}
    for tag in ("v0.13.0rc1", "v0.13.0rc2", "v0.13.0rc3", "v0.13.0"):  # the workflow lines are commented out
        assert "300i-duo" not in upstream.images(tag)
        assert set(upstream.extract(tag)["dockerfiles_unbuilt"]) == {"300i-duo", "300i-duo-openeuler"}
    assert upstream.images("v0.7.1rc1") == {
        "a2": upstream.Fact(
            {"dockerfile": "Dockerfile", "tag_trigger": True, "workflow": ".github/workflows/image.yml"},
            "v0.7.1rc1:.github/workflows/image.yml:97",  # build-push-action without `file:` builds ./Dockerfile
        )
    }


def test_v0_18_0_images_are_built_by_manual_dispatch_only() -> None:
    for tag in ("v0.18.0rc1", "v0.18.0"):
        assert {f.value["tag_trigger"] for f in upstream.images(tag).values()} == {False}
    assert {f.value["tag_trigger"] for f in upstream.images("v0.19.1rc1").values()} == {True}


def test_mooncake_tag_of_the_dockerfiles() -> None:
    def mooncake(tag: str) -> set[str]:
        return {item["value"] for item in upstream.extract(tag)["mooncake_image"]}

    assert mooncake("v0.11.0rc2") == set()
    assert mooncake("v0.11.0rc3") == mooncake("v0.11.0") == mooncake("v0.14.0rc1") == {"0.3.7.post2"}
    assert mooncake("v0.15.0rc1") == mooncake("v0.18.0rc1") == mooncake("v0.19.1rc1") == {"0.3.8.post1"}
    assert mooncake("v0.18.0") == mooncake("v0.21.0rc1") == mooncake("v0.22.1rc1") == {"0.3.9"}
    assert mooncake("v0.23.0rc1") == mooncake("v0.25.1rc1") == mooncake(POST) == {"0.3.11.post1"}
    sources = [item["source"] for item in upstream.extract("v0.11.0")["mooncake_image"]]
    assert "v0.11.0:Dockerfile:22" in sources
    assert not [s for s in sources if "310p" in s]  # the 300I Duo images never build Mooncake
    assert [s for s in upstream.extract("v0.11.0rc3")["pins"]["vllm"] if s["value"] == "0.11.2"] == [
        {"source": "v0.11.0rc3:Dockerfile.openEuler:52", "value": "0.11.2"}
    ]


def test_first_tag_whose_platform_hook_adds_the_ascend_quantization_choice() -> None:
    adding = [t for t in upstream.extract_tags() if upstream.quantization_cli_choice(t).value["adds_ascend"]]
    assert adding[0] == "v0.9.0rc1"
    assert adding == list(upstream.extract_tags()[upstream.extract_tags().index("v0.9.0rc1") :])
    hook = upstream.quantization_cli_choice("v0.9.0rc1")
    assert hook.source == "v0.9.0rc1:vllm_ascend/platform.py:88"
    assert hook.value["hook"] == "pre_register_and_update"
    assert upstream.quantization_cli_choice("v0.8.5rc1").value["adds_ascend"] is False
    assert upstream.quantization_cli_choice("v0.23.0").value["supported_quantization"] == [
        "ascend",
        "compressed-tensors",
        "fp8",
        "deepseek_v4_fp8",
    ]


def test_quantization_schemes_come_from_the_registry_of_each_tag() -> None:
    assert upstream.quantization_schemes("v0.7.3") == {}
    assert [r["value"]["kind"] for r in upstream.extract("v0.7.3")["quantization_registry"]] == ["mindie_turbo"]
    assert set(upstream.quantization_schemes("v0.8.4rc2")) == {"W8A8", "W8A8_DYNAMIC"}
    assert upstream.quantization_schemes("v0.8.4rc2")["W8A8_DYNAMIC"].value["layers"] == ["linear", "moe"]
    first_w4a8 = next(t for t in upstream.extract_tags() if "W4A8_DYNAMIC" in upstream.quantization_schemes(t))
    assert first_w4a8 == "v0.9.1rc2"
    assert "W4A8_DYNAMIC" not in upstream.quantization_schemes("v0.9.2rc1")  # a different branch
    w8a8sc = upstream.quantization_schemes("v0.16.0rc1")["310p:W8A8SC"]
    assert w8a8sc.value == {"type": "W8A8SC", "layers": ["linear"], "scope": "310p", "registry": "register_scheme"}
    assert w8a8sc.source == "v0.16.0rc1:vllm_ascend/_310p/quantization/methods/w8a8sc.py:31"
    assert "W8A8SC" not in upstream.quantization_schemes("v0.25.1rc1")  # 310P-only
    assert "310p:W8A8SC" not in upstream.quantization_schemes("v0.15.0rc1")
    mx = upstream.quantization_schemes("v0.13.0")["W8A8_MXFP8"]
    assert mx.value["layers"] == ["linear"] and mx.value["registry"] == "ASCEND_QUANTIZATION_METHOD_MAP"


def test_a_model_status_that_changes_between_v0_23_0_and_v0_25_1rc1() -> None:
    core = "Text-Only Language Models / Generative Models / Core Supported Models"
    old = upstream.model_table("v0.23.0")
    new = upstream.model_table("v0.25.1rc1")
    assert old is not None and new is not None
    (before,) = old.find("DeepSeek V3.2", group="A2/A3")
    (after,) = new.find("DeepSeek V3.2", group="A2/A3")
    assert before.category == after.category == core
    assert (before.status, after.status) == ("supported", "experimental")
    assert after.status_raw == "🔵" and after.cell("LoRA") == "yes" and after.max_model_len == "160k"
    assert before.source == "v0.23.0:docs/source/user_guide/support_matrix/supported_models.md:38"
    assert {r.group for r in new.rows} == {"A2/A3", "Atlas inference products", ""}  # mkdocs tabs
    assert "Ascend 950 Products" in {r.group for r in old.rows}  # myst tab-set


def test_old_model_tables_with_blank_status_count_as_untested() -> None:
    table = upstream.model_table("v0.7.1rc1")
    assert table is not None and table.path == "docs/source/user_guide/supported_models.md"
    (mistral,) = table.find("Mistral")
    assert (mistral.status, mistral.status_raw, mistral.note) == ("untested", "", "Need test")
    (gemma,) = upstream.model_table("v0.9.1rc1").find("Gemma-3")  # type: ignore[union-attr]
    assert gemma.status == "unsupported"
    assert gemma.issues == ("https://github.com/vllm-project/vllm-ascend/issues/496",)


def test_feature_tables_and_the_feature_matrix() -> None:
    old = upstream.feature_table("v0.8.5rc1")
    assert old is not None and old.status_columns == ("vLLM V0 Engine", "vLLM V1 Engine")
    lora = old.find("LoRA")
    assert lora is not None and lora.status == "wip"  # the V1 column counts
    assert lora.statuses == {"vLLM V0 Engine": "functional", "vLLM V1 Engine": "wip"}
    recent = upstream.feature_table("v0.23.0")
    assert recent is not None and recent.find("Graph Mode").status == "functional"  # type: ignore[union-attr]
    assert upstream.feature_matrix("v0.19.1rc1") is None
    matrix = upstream.feature_matrix("v0.23.0")
    assert matrix is not None
    assert matrix.cell("ACLGraph Piecewise", "ACLGraph Full_Decode_Only") == "none"
    assert matrix.cell("ACLGraph Full_Decode_Only", "ACLGraph Piecewise") == "none"
    assert matrix.cell("DP", "Context Parallel") == "partial"
    assert matrix.footnotes["1"].value.startswith("Only dcp supports dp")


def test_v0_23_0_own_policy_row_disagrees_with_later_rows_and_its_files() -> None:
    got = upstream.release_facts("v0.23.0")
    assert [(f.value, f.source) for f in got["cann"]] == [
        ("9.0.1", "v0.23.0:docs/source/community/versioning_policy.md:26"),
        ("9.1.0", "v0.23.0.post1:PyPI:vllm_ascend-0.23.0.post1.tar.gz:docs/source/community/versioning_policy.md:27"),
    ]
    assert versions(got["torch_npu"]) == ["2.10.0.post2", "2.10.0.post4"]
    assert versions(got["date"]) == ["2026-07-31", "2026-08-16", "2026-08-17"]
    assert got["date"][0].source == "v0.23.0:docs/source/user_guide/release_notes.md:3"
    assert got["date"][-1].source == "v0.23.0:refs/tags/v0.23.0:1"
    assert versions(got["transformers"]) == ["==5.5.4"]
    assert versions(got["base_image"]) == ["quay.io/ascend/cann:9.1.0-910b-ubuntu22.04-py3.12"]


def test_release_without_any_policy_row_falls_back_to_its_files() -> None:
    got = upstream.release_facts("v0.25.1rc1")
    assert got["vllm"][0] == upstream.Fact("0.25.1", "v0.25.1rc1:Dockerfile:42")
    assert versions(got["cann"]) == ["9.0.1", "9.1.0-beta.1"]  # the 310p Dockerfiles build on a beta CANN
    assert got["cann"][1].source.startswith("v0.25.1rc1:Dockerfile.310p")
    assert versions(got["torch_npu"]) == ["2.10.0.post2"]
    assert got["torch_npu"][0].source == "v0.25.1rc1:requirements.txt:17"
    assert versions(got["python"]) == [">=3.10", ">=3.10,<3.13"]  # setup.py before the README
    assert versions(got["date"]) == ["2026-08-19"] and got["mooncake"] == []


def test_plans_in_documents_older_than_the_release_are_not_candidates() -> None:
    dates = versions(upstream.release_facts("v0.7.3")["date"])
    assert "2025-04-15" not in dates  # v0.7.3rc2's release window planned the final for 2025.04.15
    assert dates[0] == "2025-05-08"


def test_v0_18_0_docker_wheels_and_policy_typos_are_kept_as_candidates() -> None:
    got = upstream.release_facts("v0.18.0")
    assert versions(got["torch_npu"])[:2] == ["2.9.0.post1+git4c901a4", "2.9.0.post1+gitdc51c2d"]
    assert "2.9.0" in versions(got["torch_npu"])
    assert versions(got["mooncake"])[0] == "3.9.0"  # v0.18.0's own policy table writes "3.9.0"
    assert "0.3.9" in versions(got["mooncake"])
    assert versions(got["date"])[:2] == ["2026-04-22", "2026-04-30"]


def test_the_post_release_reads_its_sdist_and_pypi() -> None:
    data = upstream.extract(POST)
    assert data["commit"]["value"] == "1cdb8c4db"
    assert data["commit_date"] == {"source": f"{POST}:PyPI:pypi.org/pypi/vllm-ascend/json:1", "value": "2026-09-22"}
    got = upstream.release_facts(POST)
    assert got["torch_npu"][0].value == "2.10.0.post4"
    assert f"{POST}:PyPI:vllm_ascend-0.23.0.post1.tar.gz:PKG-INFO:" in " ".join(
        item["source"] for item in data["pins"]["torch_npu"]
    )
    assert versions(got["date"])[0] == "2026-09-21"
    # PyPI's JSON `info` names other pins than the sdist's own metadata: kept, last, for the lead to judge.
    assert "2.10.0.post7" in versions(got["torch_npu"])
    assert got["torch_npu"][-1].source == f"{POST}:PyPI:pypi.org/pypi/vllm-ascend/json:1"


# --- lookups that fall back ---------------------------------------------------------------------------------


def test_nearest_tables_fall_back_to_an_earlier_release() -> None:
    own = upstream.nearest_model_table("v0.23.0")
    assert own is not None and own[0] == "v0.23.0"
    later = upstream.nearest_model_table("v0.26.0rc1")  # not extracted: the newest earlier one
    assert later is not None and later[0] == "v0.25.1rc1"
    assert upstream.nearest_model_table("v0.6.0") is None
    found = upstream.nearest_feature_matrix("v0.20.2rc1")
    assert found is not None and found[0] == "v0.20.2rc1"
    assert upstream.nearest_feature_matrix("v0.19.1rc1") is None


def _write(directory: Path, data: dict[str, Any]) -> None:
    (directory / f"{data['tag']}.json").write_text(json.dumps(data), encoding="utf-8")


def _minimal(tag: str) -> dict[str, Any]:
    src = f"{tag}:x.md:1"
    return {
        "tag": tag,
        "commit": {"value": "abc", "source": src},
        "commit_date": {"value": "2026-01-02", "source": f"{tag}:refs/tags/{tag}:1"},
        "policy_rows": [],
        "release_window": [],
        "release_notes": {},
        "pins": {},
        "images": {},
        "quantization_schemes": [],
        "quantization_cli": {"value": {"adds_ascend": False}, "source": src},
        "models": None,
        "features": None,
        "feature_matrix": None,
    }


def test_nearest_model_table_skips_a_tag_without_one(tmp_path: Path) -> None:
    for tag in ("v1.0.0", "v1.1.0rc1", "v1.1.0"):
        data = copy.deepcopy(upstream.extract("v0.7.3")) if tag == "v1.0.0" else _minimal(tag)
        data["tag"] = tag
        _write(tmp_path, data)
    upstream.set_data_dir(tmp_path)
    assert upstream.model_table("v1.1.0") is None
    found = upstream.nearest_model_table("v1.1.0")
    assert found is not None and found[0] == "v1.0.0"
    assert found[1].tag == "v1.0.0" and found[1].find("QwQ-32B")[0].status == "supported"


def test_release_facts_precedence(tmp_path: Path) -> None:
    old = _minimal("v1.0.0")
    row = {"release": "v1.0.0", "cann": "8.0.0", "vllm": "v1.0.0"}
    old["policy_rows"] = [{"value": row, "source": "v1.0.0:vp.md:7"}]
    old["release_notes"] = {"v1.0.0": {"value": {"date": None, "heading": "v1.0.0"}, "source": "v1.0.0:rn.md:3"}}
    old["pins"] = {
        "cann": [
            {"value": "8.0.0", "source": "v1.0.0:Dockerfile.a3:18"},
            {"value": "8.0.1", "source": "v1.0.0:Dockerfile:18"},
            {"value": "==8.0.2", "source": "v1.0.0:README.md:40"},
        ],
        "torch_npu": [
            {"value": "2.0.0", "source": "v1.0.0:pyproject.toml:9"},
            {"value": "2.0.1", "source": "v1.0.0:requirements.txt:4"},
            {"value": "(unpinned)", "source": "v1.0.0:setup.py:3"},
        ],
        "transformers": [{"value": "4.0.0", "source": "v1.0.0:requirements.txt:5"}],
    }
    new = _minimal("v1.1.0")
    new["commit_date"] = {"value": "2026-02-01", "source": "v1.1.0:refs/tags/v1.1.0:1"}
    plan = _minimal("v0.9.0")  # cut before v1.0.0: its release window is a plan
    plan["commit_date"] = {"value": "2025-12-01", "source": "v0.9.0:refs/tags/v0.9.0:1"}
    plan["release_window"] = [{"value": {"release": "v1.0.0", "date": "2026-03-01"}, "source": "v0.9.0:vp.md:9"}]
    plan["policy_rows"] = [{"value": {"release": "v1.0.0", "cann": "7.0.0"}, "source": "v0.9.0:vp.md:5"}]
    new["policy_rows"] = [
        {"value": {"release": "v1.1.0", "cann": "9.0.0"}, "source": "v1.1.0:vp.md:6"},
        {"value": {"release": "v1.0.0", "cann": "8.0.RC1", "vllm": ["v1.0.0", "v1.0.1"]}, "source": "v1.1.0:vp.md:7"},
    ]
    new["release_notes"] = {"v1.0.0": {"value": {"date": "2026-01-01"}, "source": "v1.1.0:rn.md:30"}}
    new["release_window"] = [{"value": {"release": "v1.0.0", "date": "2025-12-31"}, "source": "v1.1.0:vp.md:50"}]
    for data in (plan, old, new):
        _write(tmp_path, data)
    upstream.set_data_dir(tmp_path)
    got = upstream.release_facts("v1.0.0")
    assert [(f.value, f.source) for f in got["cann"]] == [
        ("8.0.0", "v1.0.0:vp.md:7"),  # own policy row
        ("8.0.RC1", "v1.1.0:vp.md:7"),  # later policy row
        ("8.0.1", "v1.0.0:Dockerfile:18"),  # the A2 Dockerfile before Dockerfile.a3 (8.0.0 there collapses)
        ("==8.0.2", "v1.0.0:README.md:40"),  # README last
    ]
    assert [(f.value, f.source) for f in got["vllm"]] == [("1.0.0", "v1.0.0:vp.md:7"), ("1.0.1", "v1.1.0:vp.md:7")]
    assert versions(got["torch_npu"]) == ["2.0.1", "2.0.0"]  # requirements.txt before pyproject.toml
    assert versions(got["transformers"]) == ["==4.0.0"]
    assert [(f.value, f.source) for f in got["date"]] == [
        ("2026-01-01", "v1.1.0:rn.md:30"),  # the own notes heading has no date
        ("2025-12-31", "v1.1.0:vp.md:50"),
        ("2026-01-02", "v1.0.0:refs/tags/v1.0.0:1"),
    ]
    assert set(got) == set(upstream.RELEASE_FIELDS)


# --- the extractor ------------------------------------------------------------------------------------------


def test_script_imports_without_side_effects(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = sorted(p.name for p in DATA.iterdir())
    module = load_script()
    assert callable(module.main) and callable(module.parse_markdown_tables)
    assert capsys.readouterr() == ("", "")
    assert sorted(p.name for p in DATA.iterdir()) == before


SYNTHETIC = """# Supported Models

| Model | Support | Note |
|-------|---------|------|
| Alpha | ✅ | |

## Text

### Generative

```bash
| not | a table |
|-----|---------|
```

:::::{tab-set}
::::{tab-item} A2/A3

| Model | Support | Note | BF16 | W8A8 |
|:------|:-------:|------|------|------|
| Beta \\| Gamma | 🔵 | see [#12](https://github.com/vllm-project/vllm-ascend/issues/12) | ✅ | ❌ |
| Delta | ❌ | | 🟡 |

::::
:::::

=== "Atlas inference products"

    | Model | Support |
    | --- | --- |
    | Epsilon | ✅ |

After the tabs.

| Feature | Status |
| - | - |
| Zeta | 🟢 Functional |
"""


def test_markdown_table_parser_on_a_synthetic_document() -> None:
    script = load_script()
    tables = script.parse_markdown_tables(SYNTHETIC)
    assert [(t.headings, t.tab, t.header_line) for t in tables] == [
        ([], "", 3),
        (["Text", "Generative"], "A2/A3", 19),
        (["Text", "Generative"], "Atlas inference products", 29),
        (["Text", "Generative"], "", 35),
    ]
    assert tables[1].header == ["Model", "Support", "Note", "BF16", "W8A8"]
    assert tables[1].rows[0] == (
        21,
        ["Beta | Gamma", "🔵", "see [#12](https://github.com/vllm-project/vllm-ascend/issues/12)", "✅", "❌"],
    )
    assert tables[1].rows[1] == (22, ["Delta", "❌", "", "🟡"])  # a short row keeps its cells
    assert tables[2].rows == [(31, ["Epsilon", "✅"])]  # indented under the mkdocs tab
    assert [script.model_cell(c) for c in ("✅", "❌", "🟡", "🔵", "", "240k")] == [
        "yes",
        "no",
        "untested",
        "experimental",
        "",
        "",
    ]
    assert [script.feature_status(c) for c in ("🟢 Functional", "🔴 NO plan", "🚧 WIP", "🟡 Planned", "✗")] == [
        "functional",
        "deprecated",
        "wip",
        "planned",
        "absent",
    ]
    assert script.normalise_spec("3.9 - 3.11") == ">=3.9,<3.12"
    assert script.normalise_spec(">= 3.10, < 3.13") == ">=3.10,<3.13"
    assert script.image_key("Dockerfile.310p.openEuler") == "300i-duo-openeuler"
    assert script.image_key("Dockerfile.a5") == "950"


@pytest.mark.skipif(not (MIRROR / "HEAD").exists(), reason="needs the vllm-ascend git mirror (absent in CI)")
@pytest.mark.parametrize("tag", ["v0.9.1rc1", "v0.25.1rc1"])
def test_rerunning_the_extractor_reproduces_the_checked_in_file(tag: str) -> None:
    script = load_script()
    fresh = json.loads(json.dumps(script.extract_git_tag(MIRROR, tag)))
    assert fresh == json.loads((DATA / f"{tag}.json").read_text(encoding="utf-8"))
