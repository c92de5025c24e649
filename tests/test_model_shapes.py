"""Published model shapes (`ascendctl.facts.published_shapes`, ascendctl/facts/data/model_configs/): every entry
loads, names
match after normalising, and every curated profile's model is known, so `fit` answers before the download."""

from __future__ import annotations

from pathlib import Path

import pytest

from ascendctl.facts.model_inspect import estimate_params
from ascendctl.facts.published_shapes import (
    find_published,
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
    assert files == on_disk  # no file without an index entry, no entry without its file


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
