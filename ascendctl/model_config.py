"""The model's own `config.json`, read at one named boundary (local directories only).

Hub ids are never fetched: `read_model_config` returns None for them, and the lint rules that need the
numbers report "skipped". `model_traits` combines what config.json says with the support matrix family
and, last, the model name, into the few facts the planner needs (MLA / MoE / multimodal).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ascendctl_engine.jsonio import JsonReadError, read_json_file
from ascendctl_engine.vocab import ModelArch

MAX_CONFIG_BYTES = 4 * 1024 * 1024

# model_type values of DeepSeek-class models (multi-head latent attention); `kv_lora_rank` in the config
# is the generic sign (vllm-ascend FAQ #13 names DeepSeek-V2/V3/R1).
MLA_MODEL_TYPES = frozenset({"deepseek_v2", "deepseek_v3", "deepseek_v32", "kimi_k2", "deepseek_v4"})
EXPERT_KEYS = ("n_routed_experts", "num_experts", "num_local_experts", "moe_num_experts")


@dataclass(frozen=True)
class ModelConfig:
    """The parts of a Hugging Face config.json the planner's rules read."""

    path: str
    model_type: str | None = None
    architectures: tuple[str, ...] = ()
    num_attention_heads: int | None = None
    num_key_value_heads: int | None = None
    num_experts: int | None = None
    kv_lora_rank: int | None = None
    torch_dtype: str | None = None
    max_position_embeddings: int | None = None
    quant_method: str | None = None  # config.json quantization_config.quant_method
    modelslim: bool = False  # quant_model_description.json next to config.json
    vision: bool = False  # has a vision_config

    @property
    def mla(self) -> bool:
        return self.kv_lora_rank is not None or (self.model_type or "") in MLA_MODEL_TYPES

    @property
    def moe(self) -> bool:
        return bool(self.num_experts and self.num_experts > 1)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def parse_model_config(data: Mapping[str, Any], path: str = "", *, modelslim: bool = False) -> ModelConfig:
    """Pure: the fields we need from parsed config.json data (nested `text_config` is read too)."""
    text = data.get("text_config")
    inner: Mapping[str, Any] = text if isinstance(text, Mapping) else {}

    def pick(key: str) -> Any:
        value = data.get(key)
        return inner.get(key) if value is None else value

    experts = next((_int(pick(k)) for k in EXPERT_KEYS if _int(pick(k)) is not None), None)
    quant = data.get("quantization_config")
    archs = data.get("architectures")
    return ModelConfig(
        path=path,
        model_type=str(data["model_type"]) if isinstance(data.get("model_type"), str) else None,
        architectures=tuple(str(a) for a in archs) if isinstance(archs, list) else (),
        num_attention_heads=_int(pick("num_attention_heads")),
        num_key_value_heads=_int(pick("num_key_value_heads")),
        num_experts=experts,
        kv_lora_rank=_int(pick("kv_lora_rank")),
        torch_dtype=str(pick("torch_dtype") or pick("dtype") or "") or None,
        max_position_embeddings=_int(pick("max_position_embeddings")),
        quant_method=str(quant.get("quant_method"))
        if isinstance(quant, Mapping) and quant.get("quant_method")
        else None,
        modelslim=modelslim,
        vision=isinstance(data.get("vision_config"), Mapping),
    )


def read_model_config(source: str) -> ModelConfig | None:
    """config.json of a local model directory; None for hub ids and unreadable directories."""
    directory = Path(source).expanduser()
    if not (source.startswith(("/", ".", "~")) or directory.is_dir()):
        return None
    config = directory / "config.json"
    try:
        # the bounded reader: no FIFO or device, at most MAX_CONFIG_BYTES, UTF-8, depth and numbers checked
        data = read_json_file(config, max_bytes=MAX_CONFIG_BYTES)
    except JsonReadError:
        return None
    if not isinstance(data, dict):
        return None
    return parse_model_config(data, str(config), modelslim=(directory / "quant_model_description.json").is_file())


@dataclass(frozen=True)
class ModelTraits:
    arch: ModelArch
    multimodal: bool
    why: str  # where the traits come from


_MLA_NAMES = ("deepseek-v2", "deepseek-v3", "deepseek-r1", "deepseek-v4", "kimi-k2")
_MOE_NAMES = ("-a22b", "-a3b", "-a17b", "moe", "mixtral", "-a10b")


def model_traits(
    source: str, config: ModelConfig | None, family_types: tuple[str, ...] | None, family: str | None
) -> ModelTraits:
    """MLA / MoE / multimodal from config.json, else the matrix family's types, else the name."""
    if config is not None:
        arch: ModelArch = "mla" if config.mla else ("moe" if config.moe else "dense")
        return ModelTraits(arch, config.vision, f"config.json ({config.path})")
    if family_types:
        arch = "mla" if "mla" in family_types else ("moe" if "moe" in family_types else "dense")
        return ModelTraits(arch, "vl" in family_types, f"support matrix family {family}")
    name = source.lower()
    if any(n in name for n in _MLA_NAMES):
        return ModelTraits("mla", False, "model name (DeepSeek-class)")
    arch = "moe" if any(n in name for n in _MOE_NAMES) else "dense"
    return ModelTraits(arch, "-vl" in name, "model name")
