"""The hub parts without a hub: source syntax (the profile's own parser), the identity hashes, the ModelScope path
through a fake `modelscope` module at the library edge (the real library is not exercised: no fake ModelScope
server here), the install hint when a library is missing, and `fit --config FILE`."""

from __future__ import annotations

import hashlib
import json
import os
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ascendctl.cli import app
from ascendctl.core.errors import UserInputError
from ascendctl.facts.model_identity import IdentityError, model_identity
from ascendctl.facts.model_inspect import read_model_config
from ascendctl.run.hub import HubSource, identity_of, parse_hub_source

runner = CliRunner()
CONFIG = {"model_type": "qwen2", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
          "num_key_value_heads": 2, "vocab_size": 1000, "max_position_embeddings": 4096}  # fmt: skip


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("hf:Qwen/Qwen3-8B", HubSource("hf", "Qwen/Qwen3-8B")),
        ("Qwen/Qwen3-8B", HubSource("hf", "Qwen/Qwen3-8B")),  # a bare id is Hugging Face, as in a profile
        ("modelscope:Qwen/Qwen2.5-7B-Instruct", HubSource("modelscope", "Qwen/Qwen2.5-7B-Instruct")),
    ],
)
def test_hub_sources_parse_as_a_profile_reads_them(text: str, expected: HubSource) -> None:
    assert parse_hub_source(text) == expected


@pytest.mark.parametrize("text", ["hf:Qwen", "modelscope:a/b/c", "prepared:tiny-random", "/models/x", "", "a b/c"])
def test_what_is_not_a_hub_model_is_invalid_input(text: str) -> None:
    with pytest.raises(UserInputError):
        parse_hub_source(text)


def write_model(directory: Path, *, index: bool = True) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "config.json").write_text(json.dumps(CONFIG))
    if index:
        (directory / "model.safetensors.index.json").write_text('{"metadata": {"total_size": 10}, "weight_map": {}}')
    return directory


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_identity_hashes_config_and_index_and_changes_with_either(tmp_path: Path) -> None:
    model = write_model(tmp_path / "m")
    first = model_identity(model)
    assert first.config_sha256 == sha(model / "config.json")
    assert first.index_sha256 == sha(model / "model.safetensors.index.json")
    (model / "model.safetensors.index.json").write_text('{"metadata": {"total_size": 11}, "weight_map": {}}')
    assert model_identity(model).index_sha256 != first.index_sha256
    assert model_identity(model).config_sha256 == first.config_sha256
    assert model_identity(write_model(tmp_path / "single", index=False)).index_sha256 is None
    with pytest.raises(IdentityError, match="no such file"):
        model_identity(tmp_path / "empty")


def test_identity_never_blocks_on_a_fifo(tmp_path: Path) -> None:
    model = tmp_path / "m"
    model.mkdir()
    os.mkfifo(model / "config.json")
    with pytest.raises(IdentityError, match="not a regular file"):
        model_identity(model)


def test_identity_of_a_hub_id_reads_the_cache_offline(tmp_path: Path) -> None:
    commit = "a" * 40
    repo = Path(os.environ["HF_HUB_CACHE"]) / "models--org--m"
    write_model(repo / "snapshots" / commit)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    found = identity_of("hf:org/m")
    assert found.path == str(repo / "snapshots" / commit) and found.config_sha256 == sha(
        Path(found.path) / "config.json"
    )
    with pytest.raises(UserInputError):
        identity_of("hf:org")


@pytest.fixture
def fake_modelscope(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """A `modelscope` module whose snapshot_download writes config.json where the library puts it
    (`$MODELSCOPE_CACHE/models/ORG/NAME`) and records its arguments."""
    calls: list[dict[str, Any]] = []

    def snapshot_download(model_id: str, **kwargs: Any) -> str:
        calls.append({"model_id": model_id, **kwargs})
        if model_id == "org/missing":
            raise FileNotFoundError("The model: org/missing not exists\nsecond line")
        return str(write_model(Path(os.environ["MODELSCOPE_CACHE"]) / "models" / model_id, index=False))

    module = types.ModuleType("modelscope")
    module.snapshot_download = snapshot_download  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "modelscope", module)
    monkeypatch.delitem(sys.modules, "ascendctl.run.hub_modelscope", raising=False)
    return calls


def test_modelscope_config_goes_where_the_plan_reads_it(fake_modelscope: list[dict[str, Any]]) -> None:
    result = runner.invoke(app, ["model", "config", "modelscope:org/m", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["hub"] == "modelscope" and data["found_by_plan"] is True and data["shapes"]["hidden_size"] == 64
    (call,) = fake_modelscope
    assert call["model_id"] == "org/m" and "config.json" in call["allow_patterns"]
    config = read_model_config("org/m", hub="modelscope")
    assert config is not None and config.num_key_value_heads == 2
    failed = runner.invoke(app, ["model", "pull", "modelscope:org/missing"])
    assert failed.exit_code == 1 and failed.output.count("\n") == 1  # one line, the library's first
    assert "org/missing not exists" in failed.output and "second line" not in failed.output


@pytest.mark.parametrize(("source", "library"), [("hf:org/m", "huggingface_hub"), ("modelscope:org/m", "modelscope")])
def test_a_missing_library_is_one_line_with_the_install_hint(
    monkeypatch: pytest.MonkeyPatch, source: str, library: str
) -> None:
    monkeypatch.setitem(sys.modules, library, None)  # `import` raises ImportError
    for edge in ("ascendctl.run.hub_hf", "ascendctl.run.hub_modelscope"):
        monkeypatch.delitem(sys.modules, edge, raising=False)
    result = runner.invoke(app, ["model", "pull", source])
    assert result.exit_code == 1
    assert result.output.strip() == (
        f"error: {'Hugging Face' if library == 'huggingface_hub' else 'ModelScope'} downloads need the {library} "
        f"library ({library} is not installed): pip install 'ascendctl[hub]'"
    )


UNKNOWN_MODEL = """apiVersion: ascendctl/v1
kind: Profile
metadata: {name: unknown-model}
model: {source: someorg/NoSuchModel-7B, max_model_len: 4096}
target: {backend: npu, hardware: a2, devices_per_node: 1}
release: v0.23.0
"""


def test_fit_and_plan_read_the_shapes_from_config_file(tmp_path: Path) -> None:
    profile = tmp_path / "p.yaml"
    profile.write_text(UNKNOWN_MODEL)
    without = runner.invoke(app, ["fit", str(profile), "--json"])
    assert without.exit_code == 1 and "needs the model's config.json" in without.output
    config = tmp_path / "shapes.json"
    shapes = {"hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8}
    config.write_text(json.dumps({**CONFIG, **shapes, "intermediate_size": 14336, "vocab_size": 128256}))
    result = runner.invoke(app, ["fit", str(profile), "--config", str(config), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["inputs"]["config"] == f"{config} (--config)"
    # 32 layers × 8 KV heads × 128 dims × (K + V) × 2 bytes (a 16-bit cache)
    assert data["kv_bytes_per_token"] == 32 * 8 * 128 * 2 * 2
    missing = runner.invoke(app, ["fit", str(profile), "--config", str(tmp_path / "none.json")])
    assert missing.exit_code == 2 and "--config" in missing.output
    planned = runner.invoke(app, ["plan", str(profile), "--config", str(config), "--json"])
    assert planned.exit_code == 0, planned.output
    plan = json.loads(planned.stdout)
    assert plan["fit"]["inputs"]["config"] == f"{config} (--config)" and plan["fit"] == data
