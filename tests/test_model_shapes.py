"""Published model shapes (`ascendctl.facts.published_shapes`, ascendctl/facts/data/model_configs/): every entry
loads, names
match after normalising, and every curated profile's model is known, so `fit` answers before the download."""

from __future__ import annotations

from pathlib import Path

import pytest

from ascendctl.facts.model_inspect import estimate_params
from ascendctl.facts.published_shapes import (
    INDEX_JSON,
    INDEX_YAML,
    _data,
    find_published,
    index_dir,
    index_from_texts,
    index_json_text,
    normalise,
    published_config,
    published_entries,
    read_published,
)
from ascendctl.schema.loader import load_profile

REPO = Path(__file__).resolve().parents[1]


def test_every_entry_parses_with_the_attention_shapes_and_a_source() -> None:
    entries = published_entries()
    assert len(entries) >= 15
    for entry in entries:
        config = read_published(entry)
        assert config.num_hidden_layers and config.num_attention_heads, entry
        assert config.path.startswith(f"published shapes of {entry.model}")
        assert entry.source.startswith(("http", "the config.json", "DeepSeek-V3's shapes")), entry
    files = {e.file for e in entries}
    on_disk = {p.name for p in (REPO / "ascendctl" / "facts" / "data" / "model_configs").glob("*.json")}
    assert files == on_disk - {INDEX_JSON}  # no file without an index entry, no entry without its file


def test_the_index_mirror_is_read_only_while_its_stamp_matches_the_yaml() -> None:
    yaml_text = (index_dir() / INDEX_YAML).read_text(encoding="utf-8")
    mirror = index_json_text(yaml_text)
    assert index_from_texts(yaml_text, mirror) == index_from_texts(yaml_text) == _data()
    doctored = mirror.replace("Qwen/Qwen3-8B", "Qwen/Qwen3-8B-doctored", 1)  # same stamp: the mirror is what is read
    assert index_from_texts(yaml_text, doctored) != index_from_texts(yaml_text)
    edited = yaml_text.replace("Qwen/Qwen3-8B", "Qwen/Qwen3-8B-edited", 1)  # an edited YAML: the mirror is ignored
    models = [m["model"] for m in index_from_texts(edited, mirror)["models"]]
    assert "Qwen/Qwen3-8B-edited" in models and "Qwen/Qwen3-8B" not in models


@pytest.mark.parametrize(
    ("source", "model"),
    [
        ("vllm-ascend/Qwen3-32B-W8A8", "Qwen/Qwen3-32B"),
        ("/models/Qwen3-32B", "Qwen/Qwen3-32B"),
        ("/root/.cache/modelscope/hub/models/vllm-ascend/DeepSeek-V3.2-W8A8", "deepseek-ai/DeepSeek-V3.2-Exp"),
        ("vllm-ascend/DeepSeek-R1-W8A8", "deepseek-ai/DeepSeek-V3"),
        ("/models/MiniMax-M2.7-w8a8-QuaRot", "MiniMaxAI/MiniMax-M2"),
        ("Eco-Tech/Kimi-K2.5-w4a8", "moonshotai/Kimi-K2-Instruct"),
        ("/root/.cache/modelscope/hub/models/vllm-ascend/GLM5-w4a8", "zai-org/GLM-5"),
        ("prepared:smollm2-135m-instruct", "HuggingFaceTB/SmolLM2-135M-Instruct"),
        ("/models/Deepseek-V4-flash-w8a8-mtp", "deepseek-ai/DeepSeek-V4-Flash"),
        ("Eco-Tech/Qwen3.6-27B-w8a8", "Qwen/Qwen3.6-27B"),
    ],
)
def test_checkpoint_names_find_their_model(source: str, model: str) -> None:
    found = find_published(source)
    assert found is not None and found.model == model


def test_names_that_are_not_known_find_nothing() -> None:
    assert normalise("vllm-ascend/Qwen3-32B-W8A8") == normalise("Qwen/Qwen3-32B") == "qwen332b"
    assert published_config("/models/my-finetune") is None
    assert published_config("Qwen/Qwen3-33B") is None  # close is not equal


# Curated profiles whose model's shapes this project cannot read, and why: `fit` says so instead of guessing.
UNPUBLISHED_SHAPES = {
    "glm-5-2-pd-a3.yaml": "zai-org/GLM-5.2's config.json is not readable here; it adds IndexShare to GLM-5's "
    "architecture, so GLM-5's published shapes are not assumed",
}


@pytest.mark.parametrize("profile", sorted((REPO / "profiles").glob("*.yaml")), ids=lambda p: p.name)
def test_every_curated_model_has_published_shapes(profile: Path) -> None:
    if profile.name in UNPUBLISHED_SHAPES:  # said, with its reason, where `fit` is tested
        assert published_config(load_profile(profile).model.source) is None
        return
    config = published_config(load_profile(profile).model.source)
    assert config is not None
    assert estimate_params(config) is not None  # its weights can be sized from the shapes


def test_published_sizes_are_the_models_sizes() -> None:
    """The parameter counts land near the published sizes, so config-based weights are meaningful."""
    expected = {"Qwen/Qwen3-32B": 32.8, "Qwen/Qwen3-8B": 8.2, "zai-org/GLM-5": 744, "Qwen/Qwen3-30B-A3B": 30.5}
    for model, billions in expected.items():
        config = published_config(model)
        assert config is not None
        params = estimate_params(config)
        assert params is not None and params / 1e9 == pytest.approx(billions, rel=0.08), model


def test_every_matrix_family_is_covered_or_said_unknown_with_a_reason() -> None:
    """Item 4 of issue 30: each model family the matrix lists has published shapes or is listed as unknown, with
    the reason and the `model config` hint `fit` prints."""
    from ascendctl.facts.matrix import load_matrix
    from ascendctl.facts.published_shapes import CONFIG_HINT, family_shapes

    families = family_shapes()
    assert set(families) == {m.id for m in load_matrix().models}  # every family, no stale one
    covered = {f: s.shapes.model for f, s in families.items() if s.shapes is not None}
    unknown = {f: s.unknown for f, s in families.items() if s.shapes is None}
    assert all(reason for reason in unknown.values()), [f for f, r in unknown.items() if not r]
    assert not any(s.unknown for s in families.values() if s.shapes is not None)
    # the covered ones, by name (a family that loses or gains shapes changes this list on purpose)
    assert covered == {
        "deepseek-v3": "deepseek-ai/DeepSeek-V3", "deepseek-r1": "deepseek-ai/DeepSeek-V3",
        "deepseek-v3.2": "deepseek-ai/DeepSeek-V3.2-Exp", "glm-5": "zai-org/GLM-5", "glm-4.x": "zai-org/GLM-4.5",
        "qwen3-dense": "Qwen/Qwen3-8B", "qwen3-30b-a3b": "Qwen/Qwen3-30B-A3B",
        "qwen3-235b-a22b": "Qwen/Qwen3-235B-A22B", "qwen3-next": "Qwen/Qwen3-Next-80B-A3B-Instruct",
        "kimi-k2-thinking": "moonshotai/Kimi-K2-Instruct", "kimi-k2.5": "moonshotai/Kimi-K2-Instruct",
        "minimax-m2": "MiniMaxAI/MiniMax-M2", "qwen2.5": "Qwen/Qwen2.5-7B-Instruct",
        "qwen2.5-vl": "Qwen/Qwen2.5-VL-3B-Instruct", "qwen3-vl": "Qwen/Qwen3-VL-8B-Instruct",
        "qwen3-vl-moe": "Qwen/Qwen3-VL-30B-A3B-Instruct", "mistral": "mistralai/Mistral-7B-v0.1",
        "minicpm-v": "openbmb/MiniCPM-V-4_5", "qwen3.5-35b-a3b": "Qwen/Qwen3.5-35B-A3B",
        "qwen3.6-35b-a3b": "Qwen/Qwen3.5-35B-A3B", "deepseek-v4-flash": "deepseek-ai/DeepSeek-V4-Flash",
        "qwen3.6-27b": "Qwen/Qwen3.6-27B",
    }  # fmt: skip
    assert len(unknown) == len(families) - len(covered) == 66
    assert "model config SOURCE" in CONFIG_HINT


def test_fit_points_an_unknown_model_at_model_config() -> None:
    from ascendctl.plan.planner import plan_profile
    from ascendctl.schema.profile import Profile

    profile = Profile.model_validate(
        {
            "apiVersion": "ascendctl/v1", "kind": "Profile", "metadata": {"name": "unknown"},
            "model": {"source": "/models/my-finetune", "max_model_len": 4096},
            "target": {"backend": "npu", "hardware": "a2", "devices_per_node": 1}, "release": "v0.23.0",
        }
    )  # fmt: skip
    plan = plan_profile(profile)
    # a path names another machine's directory: its own config.json, given with --config, is the way
    assert plan.fit is None and plan.fit_error is not None and "`--config FILE`" in plan.fit_error
    hub = profile.model_copy(update={"model": profile.model.model_copy(update={"source": "someorg/my-finetune"})})
    hub_plan = plan_profile(hub)
    assert hub_plan.fit_error is not None and "ascendctl model config SOURCE" in hub_plan.fit_error
