"""Model inspection (`ascendctl.facts.model_inspect`): config.json from a directory and the hub caches, safetensors
totals and tensor kinds, the `model.architecture` field and the name-guess warning.

The config.json files are the published shapes of ascendctl/facts/data/model_configs/ (reduced by hand, see its
index.yaml); the memory rule's sizes are tested with the fit (tests/test_fit.py, tests/test_checks.py)."""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from ascendctl.facts.architectures import architecture_traits
from ascendctl.facts.model_inspect import (
    estimate_params,
    hf_cache_dir,
    identity_warnings,
    inspect_model,
    inspect_weights,
    locate_model_dir,
    model_traits,
    modelscope_cache_dir,
    read_config_dir,
    read_model_config_or_error,
)
from ascendctl.plan.planner import plan_profile
from ascendctl.schema.profile import Profile

FIXTURES = Path(__file__).resolve().parents[1] / "ascendctl" / "facts" / "data" / "model_configs"
COMMIT = "0123456789abcdef0123456789abcdef01234567"
OTHER = "fedcba9876543210fedcba9876543210fedcba98"


def model_from(tmp_path: Path, fixture: str, name: str = "model") -> Path:
    directory = tmp_path / name
    directory.mkdir(parents=True)
    shutil.copy(FIXTURES / f"{fixture}.json", directory / "config.json")
    return directory


def profile(source: str, **model: Any) -> Profile:
    return Profile.model_validate(
        {
            "apiVersion": "ascendctl/v1",
            "kind": "Profile",
            "metadata": {"name": "t"},
            "model": {"source": source, **model},
            "target": {"backend": "cpu"},
        }
    )


def safetensors(path: Path, tensors: dict[str, tuple[str, list[int]]], *, data: int | None = None) -> None:
    header: dict[str, Any] = {"__metadata__": {"format": "pt"}}
    offset = 0
    sizes = {"BF16": 2, "F32": 4, "I8": 1, "F8_E4M3": 1}
    for name, (dtype, shape) in tensors.items():
        n = sizes[dtype]
        for dim in shape:
            n *= dim
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + n]}
        offset += n
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + b"\0" * (offset if data is None else data))


# ---- the curated families' config.json ------------------------------------------------------------


@pytest.mark.parametrize(
    ("fixture", "arch", "multimodal", "billions"),
    [
        ("deepseek-v3", "mla", False, 671),
        ("kimi-k2", "mla", False, 1030),
        ("qwen3-235b-a22b", "moe", False, 235),
        ("qwen3-next", "moe", False, 80),
        ("glm-4.5", "moe", False, 355),
        ("minimax-m2", "moe", False, 230),
        ("qwen3-vl-8b", "dense", True, 8.2),
    ],
)
def test_curated_family_configs(tmp_path: Path, fixture: str, arch: str, multimodal: bool, billions: float) -> None:
    config, error = read_config_dir(model_from(tmp_path, fixture))
    assert error is None and config is not None
    traits = model_traits("x", config, None, None)
    assert (traits.arch, traits.multimodal, traits.guessed) == (arch, multimodal, False)
    params = estimate_params(config)
    assert params is not None and params / 1e9 == pytest.approx(billions, rel=0.05)
    # vLLM's registry (newest entry) agrees with what config.json says for each family's architecture
    named = architecture_traits(config.architectures[0], None)
    assert named is not None and (named.arch, named.multimodal) == (arch, multimodal)
    assert "registry entry" not in traits.why  # no disagreement to report


def test_an_unreadable_config_says_why(tmp_path: Path) -> None:
    directory = tmp_path / "m"
    directory.mkdir()
    assert read_config_dir(directory)[1] == f"could not read {directory / 'config.json'}: no such file"
    (directory / "config.json").write_text("[1, 2]")
    assert read_config_dir(directory)[1] == f"could not read {directory / 'config.json'}: not a JSON object"
    (directory / "config.json").write_text('{"a": NaN}')
    config, error = read_config_dir(directory)
    assert config is None and error is not None and "NaN" in error


# ---- the hub caches ------------------------------------------------------------------------------------


def hf_cache(tmp_path: Path) -> Path:
    cache = tmp_path / "hf"
    repo = cache / "models--deepseek-ai--DeepSeek-V3"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(COMMIT)
    model_from(repo / "snapshots", "deepseek-v3", COMMIT)
    model_from(repo / "snapshots", "qwen3-235b-a22b", OTHER)  # another revision, pinned by commit
    return cache


def test_hugging_face_cache(tmp_path: Path) -> None:
    cache = hf_cache(tmp_path)
    env = {"HF_HUB_CACHE": str(cache)}
    config, error = read_model_config_or_error("deepseek-ai/DeepSeek-V3", env=env)
    assert error is None and config is not None and config.model_type == "deepseek_v3"
    assert COMMIT in config.path
    pinned, _ = read_model_config_or_error("deepseek-ai/DeepSeek-V3", OTHER, env=env)
    assert pinned is not None and pinned.model_type == "qwen3_moe"
    assert locate_model_dir("deepseek-ai/DeepSeek-V3", "no-such-branch", env) is None
    assert locate_model_dir("deepseek-ai/DeepSeek-V3", "../../etc", env) is None
    assert locate_model_dir("Qwen/Qwen3-8B", env=env) is None
    fifo = cache / "models--deepseek-ai--DeepSeek-V3" / "refs" / "fifo"
    os.mkfifo(fifo)
    assert locate_model_dir("deepseek-ai/DeepSeek-V3", "fifo", env) is None  # never blocks on a FIFO
    # HF_HOME/hub when HF_HUB_CACHE is not set
    home = tmp_path / "home"
    home.mkdir()
    cache.rename(home / "hub")
    assert locate_model_dir("deepseek-ai/DeepSeek-V3", env={"HF_HOME": str(home)}) is not None


@pytest.mark.parametrize(
    ("env", "where"),
    [
        ({"HF_HUB_CACHE": "{t}/new", "HUGGINGFACE_HUB_CACHE": "{t}/legacy", "HF_HOME": "{t}/home"}, "{t}/new"),
        ({"HUGGINGFACE_HUB_CACHE": "{t}/legacy", "HF_HOME": "{t}/home"}, "{t}/legacy"),
        ({"HF_HOME": "{t}/home", "XDG_CACHE_HOME": "{t}/xdg"}, "{t}/home/hub"),
        ({"XDG_CACHE_HOME": "{t}/xdg"}, "{t}/xdg/huggingface/hub"),
    ],
)
def test_the_hub_cache_is_found_where_huggingface_hub_looks(tmp_path: Path, env: dict[str, str], where: str) -> None:
    filled = {name: value.format(t=tmp_path) for name, value in env.items()}
    assert hf_cache_dir(filled) == Path(where.format(t=tmp_path))
    # huggingface_hub itself, in a process with that environment and nothing else of ours, agrees
    script = "import json, huggingface_hub.constants as c; print(json.dumps(c.HF_HUB_CACHE))"
    base = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE_", "XDG_"))}
    proc = subprocess.run(
        [sys.executable, "-c", script], env={**base, **filled}, capture_output=True, text=True, check=True, timeout=60
    )
    assert Path(json.loads(proc.stdout)) == hf_cache_dir(filled)


def test_the_default_hub_cache_is_under_the_home_directory(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert hf_cache_dir({}) == tmp_path / ".cache" / "huggingface" / "hub"
    # An empty variable is unset here (huggingface_hub would take "" as a relative path).
    assert hf_cache_dir({"HF_HUB_CACHE": "", "HF_HOME": ""}) == tmp_path / ".cache" / "huggingface" / "hub"


def test_the_default_modelscope_cache_is_modelscopes_own(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # modelscope v1.38.1:modelscope/utils/file_utils.py:41-67: MODELSCOPE_CACHE, else ~/.cache/modelscope/hub;
    # models under its `models/` (`~` expanded in both)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert modelscope_cache_dir({}) == tmp_path / ".cache" / "modelscope" / "hub"
    assert modelscope_cache_dir({"MODELSCOPE_CACHE": "~/ms"}) == tmp_path / "ms"
    model_from(tmp_path / ".cache" / "modelscope" / "hub" / "models" / "Qwen", "qwen3-235b-a22b", "Qwen3-8B")
    found = locate_model_dir("Qwen/Qwen3-8B", env={"HF_HUB_CACHE": str(tmp_path / "none")}, hub="modelscope")
    assert found == tmp_path / ".cache" / "modelscope" / "hub" / "models" / "Qwen" / "Qwen3-8B"


def test_modelscope_cache_both_layouts(tmp_path: Path) -> None:
    cache = tmp_path / "ms"
    model_from(cache / "models" / "Qwen", "qwen3-235b-a22b", "Qwen3___5-MoE")  # newer layout, `.` stored as `___`
    model_from(cache / "ZhipuAI", "glm-4.5", "GLM-4.5")  # older layout
    env = {"MODELSCOPE_CACHE": str(cache), "HF_HUB_CACHE": str(tmp_path / "none")}
    assert locate_model_dir("Qwen/Qwen3.5-MoE", env=env) == cache / "models" / "Qwen" / "Qwen3___5-MoE"
    config, _ = read_model_config_or_error("ZhipuAI/GLM-4.5", env=env)
    assert config is not None and config.model_type == "glm4_moe"


def test_prepared_model_and_missing_ones(tmp_path: Path) -> None:
    found = inspect_model("prepared:no-such-model", data_root=tmp_path)
    assert found.config is None and found.config_error is not None and "no-such-model" in found.config_error
    assert inspect_model("nobody/nothing", env={"HF_HUB_CACHE": str(tmp_path)}).config is None


# ---- safetensors -----------------------------------------------------------------------------------------


def test_safetensors_headers_give_bytes_per_dtype(tmp_path: Path) -> None:
    directory = model_from(tmp_path, "deepseek-v3")
    safetensors(directory / "model-00001-of-00002.safetensors", {"a": ("BF16", [4, 8]), "s": ("F32", [8])})
    safetensors(directory / "model-00002-of-00002.safetensors", {"b": ("I8", [16, 16])})
    stats, error = inspect_weights(directory)
    assert error is None and stats is not None
    assert dict(stats.by_dtype) == {"BF16": 64, "F32": 32, "I8": 256}
    assert (stats.total_bytes, stats.files) == (352, 2)
    found = inspect_model(str(directory), weights=True)
    assert found.weights == stats and found.config is not None


def test_safetensors_headers_sort_tensors_by_how_parallelism_shards_them(tmp_path: Path) -> None:
    directory = model_from(tmp_path, "qwen3-235b-a22b")
    safetensors(
        directory / "model.safetensors",
        {
            "model.embed_tokens.weight": ("BF16", [16, 8]),
            "lm_head.weight": ("BF16", [16, 8]),
            "model.layers.0.self_attn.q_proj.weight": ("I8", [8, 8]),
            "model.layers.0.mlp.experts.3.down_proj.weight": ("I8", [8, 4]),
            "model.layers.0.mlp.shared_expert.down_proj.weight": ("I8", [8, 4]),
            "model.layers.0.input_layernorm.weight": ("BF16", [8]),
            "model.layers.0.self_attn.q_proj.weight_scale": ("F32", [8]),
        },
    )
    stats, error = inspect_weights(directory)
    assert error is None and stats is not None
    assert dict(stats.by_kind) == {"embeddings": 512, "layers": 64 + 32, "experts": 32, "replicated": 16 + 32}
    assert sum(stats.by_kind.values()) == stats.total_bytes


def test_safetensors_index_total(tmp_path: Path) -> None:
    directory = model_from(tmp_path, "qwen3-235b-a22b")
    index = {"metadata": {"total_size": 470_000_000_000}, "weight_map": {"a": "model-00001-of-00002.safetensors"}}
    (directory / "model.safetensors.index.json").write_text(json.dumps(index))
    stats, error = inspect_weights(directory)
    assert error is None and stats is not None and stats.total_bytes == 470_000_000_000 and not stats.by_dtype
    (directory / "model.safetensors.index.json").write_text('{"weight_map": {}}')
    assert inspect_weights(directory) == (None, f"could not read {directory}/model.safetensors.index.json: "
                                                "no metadata.total_size")  # fmt: skip
    (directory / "model.safetensors.index.json").unlink()
    assert inspect_weights(directory) == (None, None)


@pytest.mark.parametrize(
    "raw",
    [
        b"\x01\x02",  # shorter than the length
        struct.pack("<Q", 2**40) + b"{}",  # a length past the end
        struct.pack("<Q", 2) + b"[]",  # not an object
        struct.pack("<Q", 5) + b"{nope",  # not JSON
        struct.pack("<Q", 30) + b'{"t": {"dtype": "X", "shape": 1}}'[:30],
        struct.pack("<Q", 36) + b'{"t": {"dtype": "BF16", "shape": [-1]}}'[:36],
    ],
)
def test_a_bad_safetensors_file_is_a_reason_not_a_traceback(tmp_path: Path, raw: bytes) -> None:
    (tmp_path / "bad.safetensors").write_bytes(raw)
    stats, error = inspect_weights(tmp_path)
    assert stats is None and error is not None and error.startswith(f"could not read {tmp_path / 'bad.safetensors'}")


# ---- model.architecture and the name guess -----------------------------------------------------------


def test_architecture_field_is_an_identifier() -> None:
    assert profile("x/y", architecture="DeepseekV3ForCausalLM").model.architecture == "DeepseekV3ForCausalLM"
    for bad in ("Deepseek V3", "1Model", "a.b", "x\n"):
        with pytest.raises(ValidationError):
            profile("x/y", architecture=bad)


def test_traits_from_the_architecture_and_the_guess_warning(tmp_path: Path) -> None:
    env_free = profile("acme/custom-chat")  # a hub id nobody cached: a few stats, no read
    plan = plan_profile(env_free)
    assert any("guessed from the name 'acme/custom-chat'" in w and "set model.architecture" in w
               for w in plan.warnings)  # fmt: skip
    assert plan.deployment.model.arch == "dense"

    named = plan_profile(profile("acme/custom-chat", architecture="DeepseekV3ForCausalLM"))
    assert named.deployment.model.arch == "mla"
    assert "model.architecture DeepseekV3ForCausalLM (vLLM " in named.deployment.model.traits_from
    assert "vllm/model_executor/models/registry.py:" in named.deployment.model.traits_from
    assert not any("guessed" in w for w in named.warnings)

    unknown = model_traits("acme/x-moe", None, None, None, "AcmeForCausalLM")
    assert unknown.guessed and unknown.arch == "moe"
    warning = identity_warnings("acme/x-moe", unknown, None, "AcmeForCausalLM")[0]
    assert "AcmeForCausalLM is not in vLLM's model registry" in warning


def test_config_wins_over_a_contradicting_architecture(tmp_path: Path) -> None:
    directory = model_from(tmp_path, "qwen3-235b-a22b")
    plan = plan_profile(profile(str(directory), architecture="DeepseekV3ForCausalLM"))
    assert plan.deployment.model.arch == "moe"
    assert any("contradicts" in w and "Qwen3MoeForCausalLM" in w for w in plan.warnings)
    agreeing = plan_profile(profile(str(directory), architecture="Qwen3MoeForCausalLM"))
    assert not any("contradicts" in w or "guessed" in w for w in agreeing.warnings)


def test_plan_reads_a_cached_hub_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(hf_cache(tmp_path)))
    plan = plan_profile(profile("deepseek-ai/DeepSeek-V3"))
    assert plan.deployment.model.arch == "mla"
    assert plan.deployment.model.config_path is not None and COMMIT in plan.deployment.model.config_path
    assert not any("guessed" in w for w in plan.warnings)
