"""Support decided on all of a release's evidence: its model table, its tutorials and its release notes.

The extractor's tutorial / release-note readers run on page texts written here; the judgements run on the
checked-in extracts (`ascendctl/facts/data/upstream`), whose cited lines were read at each tag.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from ascendctl.facts.matrix import load_matrix, lookup_model
from ascendctl.facts.matrix.evidence import _mention_pattern, evidence
from ascendctl.facts.matrix.explainer import explain
from ascendctl.facts.matrix.hardware import phrase_hardware
from ascendctl.facts.matrix.model_tables import _model_status, judge
from ascendctl.facts.matrix.release_pins import release_for_pin
from ascendctl.facts.matrix.schema import SupportMatrix
from ascendctl.plan.planner import plan_profile
from ascendctl.schema.loader import load_profile

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("extract_upstream", REPO / "scripts" / "extract_upstream.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("extract_upstream", module)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def m() -> SupportMatrix:
    return load_matrix()


# --------------------------------------------------------------------------------------------------
# the extractor

_PAGE = """# Multi-Node-DP (Kimi-K2)

Assume you have two Atlas 800 A3(64G*16) nodes (or 4 * A2).

```bash
vllm serve /home/cache/weights/Kimi-K2-Instruct-W8A8 \\
  --served-model-name kimi \\
  --tensor-parallel-size 16
vllm serve your_model_path --port 8000
vllm bench serve --model kimi --dataset-name random
python -c 'from vllm import LLM; LLM(model="Qwen/Qwen3-8B")'
```
"""


def test_a_tutorial_page_gives_its_title_served_models_and_hardware(script: ModuleType) -> None:
    facts = script.tutorial_facts(_PAGE)
    assert facts["title"] == "Multi-Node-DP (Kimi-K2)"
    # a path's last part; the placeholder and the benchmark's served name are not models
    assert facts["models"] == ["Kimi-K2-Instruct-W8A8", "Qwen/Qwen3-8B"]
    assert facts["hardware"] == ["Atlas 800 A3", "A2"]


def test_table_rows_keep_the_tutorial_they_link(script: ModuleType) -> None:
    page = "docs/source/user_guide/support_matrix/supported_models.md"
    cells = ["Qwen3-Moe", "✅", "[Qwen3-235B-A22B](../../tutorials/Qwen3-235B-A22B.md#run)", "[x](https://a.b/c.md)"]
    assert script.doc_links(page, cells) == ["docs/source/tutorials/Qwen3-235B-A22B.md"]


class _Notes:
    tag = "v0.10.2rc1"

    def read(self, path: str) -> str:
        return (
            "# Release note\n\n## v0.10.2rc1 - 2025.09.16\n\n- Add support for Qwen3 Next. #2917\n"
            "- [Kimi-K2](https://x/y) runs.\n\n## v0.10.1rc1 - 2025.09.04\n\n- Older line.\n"
        )

    def src(self, path: str, line: int) -> str:
        return f"{self.tag}:{path}:{line}"


def test_release_note_lines_are_the_tags_own_section(script: ModuleType) -> None:
    lines = script.release_note_lines(_Notes())
    assert [f["value"] for f in lines] == ["Add support for Qwen3 Next. #2917", "Kimi-K2 runs."]
    assert lines[0]["source"] == "v0.10.2rc1:docs/source/user_guide/release_notes.md:5"


def test_a_release_note_names_a_model_as_a_whole_word() -> None:
    pattern = _mention_pattern(("Qwen3-Next",))
    assert pattern is not None
    assert pattern.search("Add support for Qwen3 Next.")
    assert pattern.search("qwen3_next works")
    assert not pattern.search("Qwen3-Next-2 lands")
    short = _mention_pattern(("Qwen3",))
    assert short is not None and not short.search("Qwen3-Next is supported") and short.search("Qwen3 is faster")


def test_hardware_phrases_map_to_families() -> None:
    assert phrase_hardware("Atlas 800I A2") == ("a2",)
    assert phrase_hardware("Atlas 300I Duo") == ("300i-duo",)
    assert phrase_hardware("310P3") == ("300i-duo",)
    assert phrase_hardware("Atlas inference products") == ("300i-duo",)
    assert phrase_hardware("Qwen3-235B-A22B") == ()


# --------------------------------------------------------------------------------------------------
# judgements on the checked-in extracts


def _status(m: SupportMatrix, model: str, tag: str, hw: str) -> tuple[str, list[str], list[str]]:
    status, reasons = _model_status(m, lookup_model(m, model), release_for_pin(m, "npu", tag), hw)
    return status, [r.level for r in reasons], [f"{r.message} ({r.reference})" for r in reasons]


def test_a_model_the_table_omits_but_the_tags_tutorial_runs_is_supported(m: SupportMatrix) -> None:
    status, levels, texts = _status(m, "Kimi-K2", "v0.10.2rc1", "a3")
    assert status == "documented" and levels[0] == "ok"
    assert "not listed for a3 in v0.10.2rc1's table" in texts[0]
    assert "v0.10.2rc1:docs/source/tutorials/multi_node_kimi.md:1" in texts[0]
    # the release notes that announced it are shown as further evidence
    assert any("v0.10.0rc1's release notes" in t for t in texts[1:])


def test_the_tags_own_caveat_note_is_a_warning_beside_the_tutorial(m: SupportMatrix) -> None:
    status, levels, texts = _status(m, "Qwen3-Next", "v0.10.2rc1", "a2")
    assert status == "documented" and levels[0] == "ok"
    caveat = [t for t, level in zip(texts, levels, strict=True) if level == "warning"]
    assert caveat and "doesn't work with this release" in caveat[0]
    # an older release's caveat says nothing of a later one
    _status_later, _levels_later, texts_later = _status(m, "Qwen3-Next", "v0.11.0rc1", "a2")
    assert not any("doesn't work with this release" in t for t in texts_later)


def test_no_evidence_is_a_warning_naming_the_nearest_listing(m: SupportMatrix) -> None:
    status, levels, texts = _status(m, "Qwen3-235B-A22B", "v0.10.2rc1", "a2")
    assert status == "absent" and levels[0] == "warning"
    assert "nearest release that lists it: v0.12.0rc1" in texts[0]


def test_a_row_that_links_a_models_tutorial_is_that_models_row(m: SupportMatrix) -> None:
    fam = lookup_model(m, "Qwen3-235B-A22B")
    judged = judge(m, fam, release_for_pin(m, "npu", "v0.13.0"), "a3")
    assert judged.status == "supported"
    assert judged.row is not None and judged.row.name == "Qwen3-Moe"
    assert judged.row.links == ("docs/source/tutorials/Qwen3-235B-A22B.md",)


def test_tutorial_hardware_limits_the_evidence(m: SupportMatrix) -> None:
    fam = lookup_model(m, "Kimi-K2")
    rel = release_for_pin(m, "npu", "v0.10.2rc1")
    assert any(e.kind == "tutorial" for e in evidence(m, fam, rel, "a3"))
    assert not any(e.kind == "tutorial" for e in evidence(m, fam, rel, "300i-duo"))


def test_explain_shows_the_evidence_with_its_sources(m: SupportMatrix) -> None:
    v = explain(m, model="Qwen3-235B-A22B", hardware="a3", release="v0.13.0")
    shown = [r for r in v.reasons if r.constraint == "model" and r.message.startswith("evidence: ")]
    assert any(r.reference == "v0.13.0:docs/source/tutorials/Qwen3-235B-A22B.md:1" for r in shown)


# --------------------------------------------------------------------------------------------------
# plans


def _profile(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "p.yaml"
    path.write_text("apiVersion: ascendctl/v1\nkind: Profile\nmetadata: {name: p}\n" + body, encoding="utf-8")
    return path


def test_the_v0_10_2rc1_kimi_tutorial_plans(tmp_path: Path) -> None:
    body = (
        "target: {backend: npu, hardware: a3, devices_per_node: 16}\nrelease: v0.10.2rc1\n"
        "model: {source: /home/cache/weights/Kimi-K2-Instruct-W8A8, quantization: w8a8, trust_remote_code: true}\n"
        "engine: {parallel: {tensor: 16}}\n"
    )
    plan = plan_profile(load_profile(_profile(tmp_path, body)), read_config=lambda _source: None)
    assert plan.blocking == ()
    assert not any(f.id.startswith("plan.matrix.model") and f.status == "warn" for f in plan.deployment.findings)


def test_an_architecture_kin_never_refuses_and_names_itself(tmp_path: Path) -> None:
    body = (
        "target: {backend: npu, hardware: a2}\nrelease: v0.7.3\n"
        "model: {source: deepseek-ai/DeepSeek-V2-Lite, architecture: DeepseekV2ForCausalLM, trust_remote_code: true}\n"
    )
    plan = plan_profile(load_profile(_profile(tmp_path, body)), read_config=lambda _source: None)
    assert plan.blocking == ()
    said = [f.message for f in plan.deployment.findings if f.id == "plan.matrix.model"]
    assert any("DeepSeek-V2-Lite matches no model family by name" in s and "DeepSeek V2.5" in s for s in said)
