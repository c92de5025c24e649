"""Model inspection in one place: the model's own `config.json` and its safetensors weights.

Where config.json comes from (`locate_model_dir`): a local directory, a `prepared:NAME` model (resolved by
the caller), or, for a hub id, the Hugging Face cache (`$HF_HUB_CACHE`, else `$HF_HOME/hub`, else
`~/.cache/huggingface/hub`: `models--ORG--NAME/snapshots/<rev>/`, `<rev>` from `refs/main` or the profile's
`revision` pin) or the ModelScope cache (`$MODELSCOPE_CACHE`, else `~/.cache/modelscope/hub`:
`[models/]ORG/NAME/`, dots in the name also tried as `___`). Hub ids are never fetched: a miss costs a few
`stat`s, and the rules that need the numbers report "skipped".

`inspect_weights` totals the checkpoint's parameter bytes: from the headers of `*.safetensors` files (8 bytes
little-endian header length, then a JSON header of dtype + shape per tensor, read bounded through the one
JSON reader), else `model.safetensors.index.json` `metadata.total_size`. `estimate_params` counts parameters
from config.json's shapes. Nothing here raises: a bad file is an error string ("could not read X: why").

`model_traits` combines what config.json says, the profile's `model.architecture` (looked up in vLLM's model
registry at the release's vLLM pin: `ascendctl.facts.architectures`, extracted from the vLLM sources), the support
matrix family and, last, the model name into the few facts the planner needs (MLA / MoE / multimodal); a guess
from the name is flagged (`ModelTraits.guessed`) so the plan warns about it.
"""

from __future__ import annotations

import math
import os
import re
import struct
import time
from collections.abc import Mapping
from dataclasses import field, replace
from pathlib import Path
from typing import Any

from ascendctl.facts.architectures import ArchitectureTraits, architecture_traits
from ascendctl_engine.jsonio import (
    JsonReadError,
    bounded_int,
    loads_json,
    open_regular,
    read_bytes,
    read_json_file,
)
from ascendctl_engine.paths import expand_user, user_home
from ascendctl_engine.prepared_models import ModelError, resolve_model_source
from ascendctl_engine.records import record
from ascendctl_engine.sections.fields import HUB_ID
from ascendctl_engine.vocab import ModelArch

MAX_CONFIG_BYTES = 4 * 1024 * 1024
# The largest count or size config.json may state (a context of a trillion tokens, a trillion-wide layer): past it
# the shapes' products leave float range in the fit. Negative counts are refused too.
MAX_CONFIG_COUNT = 2**40
MAX_LAYER_ENTRIES = 4096  # a per-layer list longer than this is not a model's
# The ModelSlim description vllm-ascend reads (`MODELSLIM_CONFIG_FILENAME`,
# v0.23.0:vllm_ascend/quantization/modelslim_config.py:67; the same name in `get_config_filenames` since
# v0.8.5rc1:vllm_ascend/quantization/quant_config.py:70). Older msModelSlim wrote it as
# `quant_model_description_<type>.json` (v0.8.4rc2:docs/source/tutorials/multi_npu_quantization.md:65).
MODELSLIM_DESCRIPTION = "quant_model_description.json"
MODELSLIM_DESCRIPTION_GLOB = "quant_model_description*.json"
MAX_DESCRIPTION_FILES = 16  # names reported; a checkpoint has one

# model_type values of DeepSeek-class models (multi-head latent attention); `kv_lora_rank` in the config
# is the generic sign (vllm-ascend FAQ #13 names DeepSeek-V2/V3/R1).
MLA_MODEL_TYPES = frozenset({"deepseek_v2", "deepseek_v3", "deepseek_v32", "kimi_k2", "deepseek_v4"})
EXPERT_KEYS = ("n_routed_experts", "num_experts", "num_local_experts", "moe_num_experts")


@record
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
    model_max_length: int | None = None  # a longer length some configs allow (vLLM's `_get_and_verify_max_len`)
    quant_method: str | None = None  # config.json quantization_config.quant_method
    modelslim: bool = False  # quant_model_description.json next to config.json
    # every `quant_model_description*.json` next to config.json (the standard name included), sorted
    quant_description_files: tuple[str, ...] = ()
    # `rope_scaling` (or transformers v5 `rope_parameters`), for the context vLLM derives
    rope_type: str | None = None
    rope_factor: float | None = None
    rope_original_max_position_embeddings: int | None = None
    vision: bool = False  # has a vision_config
    # shapes, for `estimate_params` (the text model's, `text_config` first where there is one)
    hidden_size: int | None = None
    num_hidden_layers: int | None = None
    intermediate_size: int | None = None
    moe_intermediate_size: int | None = None
    vocab_size: int | None = None
    head_dim: int | None = None
    shared_experts: int | None = None
    first_dense_layers: int | None = None
    tie_word_embeddings: bool = False
    # for the memory fit (`ascendctl.plan.fit`): the attention cache's shape and the MoE routing
    experts_per_token: int | None = None  # num_experts_per_tok (top-k)
    qk_rope_head_dim: int | None = None  # MLA: the rope part cached next to kv_lora_rank
    index_head_dim: int | None = None  # DeepSeek-V3.2 sparse attention: the indexer's key cache per token
    # DeepSeek-V4: each layer's time-axis compression (config.json `compress_ratios`: 0 = sliding window only,
    # 4 = compressed sparse attention with an indexer, 128 = heavily compressed attention)
    compress_ratios: tuple[int, ...] = ()
    full_attention_layers: int | None = None  # hybrid models: layers with a full-attention cache (None: all)
    mtp_layers: int = 0  # num_nextn_predict_layers: MTP draft layers (their cache sits next to the target's)
    # hybrid linear-attention layers (Qwen3-Next's gated delta net): their per-sequence state sets the page size
    linear_key_heads: int | None = None
    linear_key_head_dim: int | None = None
    linear_value_heads: int | None = None
    linear_value_head_dim: int | None = None
    linear_conv_kernel: int | None = None
    shared_expert_intermediate: int | None = None  # shared_expert_intermediate_size (Qwen MoE: one shared expert)
    text_model_type: str | None = None  # `text_config.model_type` where there is one, else `model_type`
    # the remote-code files config.json's `auto_map` names in the model's own directory (`module.Class` →
    # `module.py`; `org/repo--module.Class` lives elsewhere), and those of them the directory lacks
    remote_code_files: tuple[str, ...] = ()
    missing_remote_code: tuple[str, ...] = ()

    @property
    def mla(self) -> bool:
        return self.kv_lora_rank is not None or (self.model_type or "") in MLA_MODEL_TYPES

    @property
    def moe(self) -> bool:
        return bool(self.num_experts and self.num_experts > 1)

    @property
    def derived_max_model_len(self) -> int | None:
        """The context vLLM serves when `--max-model-len` is unset, as `_get_and_verify_max_len` derives it
        (vllm/config/model.py): `max_position_embeddings`, times the RoPE scaling factor unless the rope type
        is su / longrope / llama3 (YaRN scales `original_max_position_embeddings` instead); Gemma 3's length
        is already scaled. None without `max_position_embeddings`."""
        length = self.max_position_embeddings
        if length is None:
            return None
        if self.rope_type is None or "gemma3" in (self.model_type or ""):
            return length
        if self.rope_type in ("su", "longrope", "llama3"):
            return length
        base = self.rope_original_max_position_embeddings if self.rope_type == "yarn" else None
        return int((base or length) * (self.rope_factor or 1.0))

    @property
    def misnamed_quant_descriptions(self) -> tuple[str, ...]:
        """ModelSlim descriptions under a name vllm-ascend does not read, when the standard one is absent."""
        if self.modelslim:
            return ()
        return tuple(n for n in self.quant_description_files if n != MODELSLIM_DESCRIPTION)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


MAX_ROPE_FACTOR = 1024.0  # RoPE scaling factors in the wild are 2..64; past this the derived context is nonsense


def _factor(value: Any, path: str) -> float | None:
    """`rope_scaling.factor`, range-checked (0 < factor <= MAX_ROPE_FACTOR) where it is read."""
    factor = _number(value)
    if factor is not None and not 0 < factor <= MAX_ROPE_FACTOR:
        raise JsonReadError(
            path or "config.json", f"rope_scaling.factor: {factor:g} is out of range 0..{MAX_ROPE_FACTOR:g}"
        )
    return factor


# hf_overrides keys that change the context vLLM derives: `--hf-overrides` updates the HF config's top-level keys
# (`config.update`) before `_get_and_verify_max_len` runs (vLLM v0.32.0 vllm/transformers_utils/config.py:926-928).
CONTEXT_OVERRIDES = ("max_position_embeddings", "rope_scaling", "rope_parameters", "model_max_length")
_ROPE_KEYS = ("rope_scaling", "rope_parameters")


def with_context_overrides(config: ModelConfig, overrides: Mapping[str, Any] | None) -> ModelConfig:
    """`config` with the context keys of `model.hf_overrides` applied as vLLM applies them (each top-level key replaces
    config.json's), so that `derived_max_model_len` is the context the engine serves; unchanged when the overrides
    set none of them or set one that cannot be read."""
    if not overrides or not any(k in overrides for k in CONTEXT_OVERRIDES):
        return config
    data: dict[str, Any] = {
        "max_position_embeddings": config.max_position_embeddings,
        "model_max_length": config.model_max_length,
    }
    data.update({k: overrides[k] for k in CONTEXT_OVERRIDES if k in overrides})
    try:
        parsed = parse_model_config(data, config.path)
    except JsonReadError:
        return config
    rope = parsed if any(k in overrides for k in _ROPE_KEYS) else config
    return replace(
        config,
        max_position_embeddings=parsed.max_position_embeddings,
        model_max_length=parsed.model_max_length,
        rope_type=rope.rope_type,
        rope_factor=rope.rope_factor,
        rope_original_max_position_embeddings=rope.rope_original_max_position_embeddings,
    )


def parse_model_config(
    data: Mapping[str, Any],
    path: str = "",
    *,
    modelslim: bool = False,
    quant_description_files: tuple[str, ...] = (),
) -> ModelConfig:
    """Pure: the fields we need from parsed config.json data (nested `text_config` is read too). A count outside
    0..`MAX_CONFIG_COUNT` raises `JsonReadError` naming `path` and the key (the one range check, `bounded_int`)."""
    text = data.get("text_config")
    inner: Mapping[str, Any] = text if isinstance(text, Mapping) else {}

    def pick(key: str) -> Any:
        value = data.get(key)
        return inner.get(key) if value is None else value

    def count(key: str, where: Mapping[str, Any] | None = None) -> int | None:
        value = pick(key) if where is None else where.get(key)
        return bounded_int(value, high=MAX_CONFIG_COUNT, where=key, source=path or "config.json")

    experts = next((n for n in (count(k) for k in EXPERT_KEYS) if n is not None), None)
    quant = data.get("quantization_config")
    archs = data.get("architectures")
    raw_rope = pick("rope_scaling") or pick("rope_parameters")
    rope: Mapping[str, Any] = raw_rope if isinstance(raw_rope, Mapping) else {}
    rope_type = rope.get("rope_type", rope.get("type"))
    return ModelConfig(
        path=path,
        model_type=str(data["model_type"]) if isinstance(data.get("model_type"), str) else None,
        architectures=tuple(str(a) for a in archs) if isinstance(archs, list) else (),
        num_attention_heads=count("num_attention_heads"),
        num_key_value_heads=count("num_key_value_heads"),
        num_experts=experts,
        kv_lora_rank=count("kv_lora_rank"),
        torch_dtype=str(pick("torch_dtype") or pick("dtype") or "") or None,
        max_position_embeddings=count("max_position_embeddings"),
        model_max_length=count("model_max_length"),
        quant_method=str(quant.get("quant_method"))
        if isinstance(quant, Mapping) and quant.get("quant_method")
        else None,
        modelslim=modelslim,
        quant_description_files=quant_description_files,
        rope_type=str(rope_type) if isinstance(rope_type, str) else None,
        rope_factor=_factor(rope.get("factor"), path),
        rope_original_max_position_embeddings=count("original_max_position_embeddings", rope),
        vision=isinstance(data.get("vision_config"), Mapping),
        hidden_size=count("hidden_size"),
        num_hidden_layers=count("num_hidden_layers"),
        intermediate_size=count("intermediate_size"),
        moe_intermediate_size=count("moe_intermediate_size"),
        vocab_size=count("vocab_size"),
        head_dim=count("head_dim"),
        shared_experts=count("n_shared_experts"),
        first_dense_layers=count("first_k_dense_replace"),
        tie_word_embeddings=pick("tie_word_embeddings") is True,
        experts_per_token=count("num_experts_per_tok"),
        qk_rope_head_dim=count("qk_rope_head_dim"),
        index_head_dim=count("index_head_dim"),
        compress_ratios=_compress_ratios(pick("compress_ratios"), path),
        full_attention_layers=_full_attention_layers(
            pick("layer_types"), count("full_attention_interval"), count("num_hidden_layers")
        ),
        mtp_layers=count("num_nextn_predict_layers") or 0,
        linear_key_heads=count("linear_num_key_heads"),
        linear_key_head_dim=count("linear_key_head_dim"),
        linear_value_heads=count("linear_num_value_heads"),
        linear_value_head_dim=count("linear_value_head_dim"),
        linear_conv_kernel=count("linear_conv_kernel_dim"),
        shared_expert_intermediate=count("shared_expert_intermediate_size"),
        text_model_type=_text_model_type(data, inner),
        remote_code_files=remote_code_files(data.get("auto_map")),
    )


def _compress_ratios(value: Any, path: str) -> tuple[int, ...]:
    """DeepSeek-V4's per-layer compression ratios; () when config.json has none or not a list of counts."""
    if not isinstance(value, list) or len(value) > MAX_LAYER_ENTRIES:
        return ()
    source = path or "config.json"
    ratios = [bounded_int(v, high=MAX_CONFIG_COUNT, where="compress_ratios", source=source) for v in value]
    return tuple(r for r in ratios if r is not None) if None not in ratios else ()


def _text_model_type(data: Mapping[str, Any], inner: Mapping[str, Any]) -> str | None:
    value = inner.get("model_type") if isinstance(inner.get("model_type"), str) else data.get("model_type")
    return value if isinstance(value, str) else None


_MODULE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,100}(?:\.[A-Za-z_][A-Za-z0-9_]{0,100}){0,4}$")
MAX_REMOTE_CODE_FILES = 16


def remote_code_files(auto_map: Any) -> tuple[str, ...]:
    """The `.py` files config.json's `auto_map` (`{"AutoConfig": "configuration_x.XConfig", "AutoTokenizer":
    ["tokenization_x.XTokenizer", null], ...}`) loads from the model's own directory, sorted; a reference into another
    repository (`org/repo--module.Class`) or anything that is not a module path is left out."""
    if not isinstance(auto_map, Mapping):
        return ()
    values: list[Any] = []
    for value in list(auto_map.values())[:64]:
        values.extend(value[:4] if isinstance(value, list) else [value])
    files = set()
    for value in values:
        if not isinstance(value, str) or "--" in value or "." not in value:
            continue
        module = value.rsplit(".", 1)[0]
        if _MODULE.match(module):
            files.add(module.replace(".", "/") + ".py")
    return tuple(sorted(files)[:MAX_REMOTE_CODE_FILES])


def _full_attention_layers(layer_types: Any, interval: int | None, layers: int | None) -> int | None:
    """Hybrid models: how many layers keep a full-attention cache — from `layer_types` (Qwen3-Next and later:
    `full_attention` entries) or `full_attention_interval` (every N-th layer); None for plain models."""
    if isinstance(layer_types, list) and layer_types and all(isinstance(t, str) for t in layer_types):
        if any(t != "full_attention" for t in layer_types):
            return sum(1 for t in layer_types if t == "full_attention")
        return None
    if interval and interval > 1 and layers:
        return layers // interval
    return None


def read_model_config(source: str, revision: str | None = None, hub: str | None = None) -> ModelConfig | None:
    """config.json of a local model directory, or of a hub id found in the Hugging Face / ModelScope cache (only
    the ModelScope one for `hub="modelscope"`); None when there is none or it cannot be read
    (`read_model_config_or_error` says why)."""
    return read_model_config_or_error(source, revision, hub=hub)[0]


def read_model_config_or_error(
    source: str, revision: str | None = None, env: Mapping[str, str] | None = None, hub: str | None = None
) -> tuple[ModelConfig | None, str | None]:
    """(config, None), or (None, "could not read X: why"), or (None, None) when no directory was found."""
    directory = locate_model_dir(source, revision, env, hub)
    if directory is None:
        return None, None
    return read_config_dir(directory)


def read_config_dir(directory: Path) -> tuple[ModelConfig | None, str | None]:
    return read_config_file(directory / "config.json")


def read_config_file(config: Path) -> tuple[ModelConfig | None, str | None]:
    """A config.json at any path (`--config FILE`, or a model directory's own); the ModelSlim descriptions are looked
    for next to it. (config, None) or (None, "could not read X: why")."""
    directory = config.parent
    try:
        # the bounded reader: no FIFO or device, at most MAX_CONFIG_BYTES, UTF-8, depth and numbers checked
        data = read_json_file(config, max_bytes=MAX_CONFIG_BYTES)
        if not isinstance(data, dict):
            return None, f"could not read {config}: not a JSON object"
        modelslim = (directory / MODELSLIM_DESCRIPTION).is_file()
        descriptions = _quant_description_files(directory)
        parsed = parse_model_config(data, str(config), modelslim=modelslim, quant_description_files=descriptions)
        if parsed.remote_code_files:
            missing = tuple(f for f in parsed.remote_code_files if not (directory / f).is_file())
            parsed = replace(parsed, missing_remote_code=missing)
    except JsonReadError as exc:
        return None, f"could not read {config}: {exc.reason}"
    except OSError as exc:  # the directory itself cannot be looked at
        return None, f"could not read {config}: {exc.strerror or exc}"
    return parsed, None


def _quant_description_files(directory: Path) -> tuple[str, ...]:
    """The `quant_model_description*.json` files next to config.json (at most `MAX_DESCRIPTION_FILES`)."""
    try:
        names = sorted(p.name for p in directory.glob(MODELSLIM_DESCRIPTION_GLOB) if p.is_file())
    except OSError:
        return ()
    return tuple(names[:MAX_DESCRIPTION_FILES])


# a ModelSlim description lists every tensor: tens of MB for the largest MoE checkpoints
MAX_DESCRIPTION_BYTES = 256 * 1024 * 1024


def described_quant_type(source: str) -> str | None:
    """The ModelSlim type a local model directory's description states (`"model_quant_type": "W8A8_DYNAMIC"` →
    `w8a8_dynamic`), None where there is none to read on this machine (a hub id, another machine's directory, an
    older description without the key)."""
    if not is_path_source(source):
        return None
    try:
        path = expand_user(source, "model.source") / MODELSLIM_DESCRIPTION
        data = read_json_file(path, max_bytes=MAX_DESCRIPTION_BYTES)
    except (JsonReadError, OSError, ValueError):
        return None
    said = data.get("model_quant_type") if isinstance(data, dict) else None
    return said.lower() if isinstance(said, str) else None


# --------------------------------------------------------------------------------------------------
# where a model's files are


def is_path_source(source: str) -> bool:
    return source.startswith(("/", ".", "~"))


_COMMIT = re.compile(r"^[0-9a-f]{40}$")
_REF = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]*$")


# The variables huggingface_hub reads its hub cache from, first set first (huggingface_hub v2.4.0
# src/huggingface_hub/constants.py:160-183: `HF_HUB_CACHE`, else the legacy `HUGGINGFACE_HUB_CACHE`, else
# `HF_HOME/hub`, `HF_HOME` defaulting to `$XDG_CACHE_HOME/huggingface`, `XDG_CACHE_HOME` to `~/.cache`).
HF_HUB_CACHE_VARIABLES = ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE")


def hf_cache_dir(env: Mapping[str, str] | None = None) -> Path:
    """The Hugging Face hub cache as huggingface_hub finds it in `env` (default: this process's environment); an
    empty variable counts as unset."""
    e = os.environ if env is None else env
    for name in HF_HUB_CACHE_VARIABLES:
        if e.get(name):
            return expand_user(e[name], name)
    if e.get("HF_HOME"):
        return expand_user(e["HF_HOME"], "HF_HOME") / "hub"
    if e.get("XDG_CACHE_HOME"):
        return expand_user(e["XDG_CACHE_HOME"], "XDG_CACHE_HOME") / "huggingface" / "hub"
    return user_home() / ".cache" / "huggingface" / "hub"


def modelscope_cache_dir(env: Mapping[str, str] | None = None) -> Path:
    """Where ModelScope keeps its hub cache: `MODELSCOPE_CACHE` when set, else `~/.cache/modelscope/hub`
    (modelscope v1.38.1:modelscope/utils/file_utils.py:41-58, `get_modelscope_cache_dir`)."""
    e = os.environ if env is None else env
    if e.get("MODELSCOPE_CACHE"):
        return expand_user(e["MODELSCOPE_CACHE"], "MODELSCOPE_CACHE")
    return user_home() / ".cache" / "modelscope" / "hub"


def hf_snapshot(hub_id: str, revision: str | None = None, env: Mapping[str, str] | None = None) -> Path | None:
    """The cached snapshot of `ORG/NAME` at `revision` (a commit, or a ref such as `main`), or None."""
    repo = hf_cache_dir(env) / ("models--" + hub_id.replace("/", "--"))
    rev = revision or "main"
    if _COMMIT.match(rev):
        commit = rev
    elif _REF.match(rev) and ".." not in rev:
        try:  # bounded, never a FIFO
            commit = read_bytes(repo / "refs" / rev, max_bytes=256).decode("ascii", errors="replace").strip()
        except JsonReadError:
            return None
        if not _COMMIT.match(commit):
            return None
    else:
        return None
    snapshot = repo / "snapshots" / commit
    return snapshot if snapshot.is_dir() else None


def modelscope_dir(hub_id: str, env: Mapping[str, str] | None = None) -> Path | None:
    """`ORG/NAME` in the ModelScope cache: `models/ORG/NAME` under the cache directory since modelscope's
    "clean directory structure" (65075191, January 2025; v1.38.1:modelscope/utils/file_utils.py:61-67), `ORG/NAME`
    directly under it before; a `.` in the name is stored as `___` (v1.38.1:modelscope/hub/utils/utils.py:146-154).
    Older releases read `MODELSCOPE_CACHE` as the directory above `hub/`, hence the two extra roots."""
    base = modelscope_cache_dir(env)
    org, name = hub_id.split("/", 1)
    roots = [base / "models", base]
    if (env if env is not None else os.environ).get("MODELSCOPE_CACHE"):  # some releases put hub/ under it
        roots += [base / "hub" / "models", base / "hub"]
    for root in roots:
        for spelling in dict.fromkeys((name, name.replace(".", "___"))):
            candidate = root / org / spelling
            if (candidate / "config.json").is_file():
                return candidate
    return None


def locate_model_dir(
    source: str, revision: str | None = None, env: Mapping[str, str] | None = None, hub: str | None = None
) -> Path | None:
    """The directory holding the model's config.json: the source itself when it is a directory, else the
    Hugging Face or ModelScope cache entry of a hub id (`hub="modelscope"`, a `model.source: modelscope:` id: the
    ModelScope cache only, which keeps no revisions). `prepared:NAME` is resolved by the caller."""
    directory = expand_user(source, "model.source")
    if is_path_source(source) or directory.is_dir():
        return directory
    if not HUB_ID.match(source):
        return None
    if hub == "modelscope":
        return modelscope_dir(source, env) if revision is None else None
    return hf_snapshot(source, revision, env) or (modelscope_dir(source, env) if revision is None else None)


# --------------------------------------------------------------------------------------------------
# weights: safetensors headers and index

MAX_SAFETENSORS_HEADER = 100 * 1024 * 1024  # the safetensors format's own limit on the JSON header
MAX_INDEX_BYTES = 64 * 1024 * 1024
MAX_SHARDS = 4096
# The budget for every header of one model together (a plan reads them once): a 671B checkpoint's 163 headers
# hold ~20 MiB; beyond the budget the weights are counted from config.json's shapes instead, with a note.
HEADER_BUDGET_BYTES = 256 * 1024 * 1024
HEADER_BUDGET_SECONDS = 5.0
MAX_TENSOR_ELEMENTS = 2**48  # 256 T elements in one tensor: no checkpoint comes near (a file's size bounds it anyway)
DTYPE_BYTES = {
    "F64": 8.0, "I64": 8.0, "U64": 8.0,
    "F32": 4.0, "I32": 4.0, "U32": 4.0,
    "F16": 2.0, "BF16": 2.0, "I16": 2.0, "U16": 2.0,
    "F8_E4M3": 1.0, "F8_E5M2": 1.0, "F8_E8M0": 1.0, "I8": 1.0, "U8": 1.0, "BOOL": 1.0,
    "F4": 0.5, "F6_E2M3": 0.75, "F6_E3M2": 0.75,
}  # fmt: skip


@record
class WeightStats:
    """The checkpoint's parameter bytes."""

    total_bytes: int
    by_dtype: Mapping[str, int] = field(default_factory=dict)  # empty when only the index's total is known
    files: int = 0  # safetensors files whose headers were read
    source: str = ""  # "safetensors headers" or the index file
    by_kind: Mapping[str, int] = field(default_factory=dict)  # `tensor_kind` → bytes (headers only)


def tensor_kind(name: str, shape: list[int]) -> str:
    """How parallelism shards a checkpoint tensor: `embeddings` (vocab-parallel), `experts` (routed experts:
    over the EP ranks), `replicated` (1-D: norms, biases, per-channel scales — every rank holds them) or
    `layers` (TP-sharded, split by PP). From the tensor names vLLM's loaders use."""
    if len(shape) <= 1:
        return "replicated"
    lowered = name.lower()
    if "embed_tokens" in lowered or "lm_head" in lowered or "word_embeddings" in lowered or ".wte." in lowered:
        return "embeddings"
    if ".experts." in lowered and "shared_expert" not in lowered:
        return "experts"
    return "layers"


class HeaderBudgetExceeded(JsonReadError):
    """The headers of one model together are larger than `HEADER_BUDGET_BYTES` or took `HEADER_BUDGET_SECONDS`."""


def read_safetensors_header(path: Path) -> dict[str, Any]:
    """The JSON header of one `.safetensors` file (bounded); raises `JsonReadError`."""
    return _read_header(path, MAX_SAFETENSORS_HEADER)[0]


def _read_header(path: Path, budget: int) -> tuple[dict[str, Any], int]:
    """(header, its length in bytes); `HeaderBudgetExceeded` when it is longer than the `budget` of bytes left."""
    try:
        with open_regular(path) as handle:
            size = os.fstat(handle.fileno()).st_size
            head = handle.read(8)
            if len(head) < 8:
                raise JsonReadError(path, "shorter than the 8-byte header length")
            (length,) = struct.unpack("<Q", head)
            if length > MAX_SAFETENSORS_HEADER or length > size - 8:
                raise JsonReadError(path, f"header length {length} is past the file's end or the format's limit")
            if length > budget:
                raise HeaderBudgetExceeded(path, f"header of {length:,} bytes is past the budget left")
            data = handle.read(length)
    except OSError as exc:  # a read error (EIO, a file that vanished while open)
        raise JsonReadError(path, f"cannot read: {exc.strerror or exc}") from None
    if len(data) < length:
        raise JsonReadError(path, "the file ended inside the header (it shrank while read)")
    header = loads_json(data, source=path)
    if not isinstance(header, dict):
        raise JsonReadError(path, "the header is not a JSON object")
    return header, length


def _tensor_bytes(path: Path, name: str, info: Any) -> tuple[str, int, str]:
    # called once per tensor (~90k for a 671B checkpoint, on every `plan`): plain type checks, no generators
    dtype = info.get("dtype") if type(info) is dict else None
    shape = info.get("shape") if type(info) is dict else None
    if type(dtype) is not str or type(shape) is not list:
        raise JsonReadError(path, f"tensor {name[:80]!r} has no dtype and shape")
    per_element = DTYPE_BYTES.get(dtype)
    if per_element is None or any(type(d) is not int or d < 0 for d in shape):
        raise JsonReadError(path, f"tensor {name[:80]!r}: unknown dtype {dtype[:20]!r} or bad shape")
    elements = math.prod(shape)
    if elements > MAX_TENSOR_ELEMENTS:  # exact int arithmetic above; past this the byte count leaves float range
        bounded_int(elements, high=MAX_TENSOR_ELEMENTS, where=f"tensor {name[:80]!r} elements", source=str(path))
    return dtype, int(elements * per_element), tensor_kind(name, shape)


def inspect_weights(directory: Path) -> tuple[WeightStats | None, str | None]:
    """(stats, None); (None, "could not read X: why"); (None, None) when there are no safetensors."""
    try:
        shards = sorted(p for p in directory.glob("*.safetensors"))[: MAX_SHARDS + 1]
    except OSError as exc:
        return None, f"could not read {directory}: {exc.strerror or exc}"
    if len(shards) > MAX_SHARDS:
        return None, f"could not read {directory}: more than {MAX_SHARDS} safetensors files"
    if shards:
        by_dtype: dict[str, int] = {}
        by_kind: dict[str, int] = {}
        budget, deadline = HEADER_BUDGET_BYTES, time.monotonic() + HEADER_BUDGET_SECONDS
        try:
            for shard in shards:
                if time.monotonic() > deadline:
                    raise HeaderBudgetExceeded(shard, f"reading the headers took over {HEADER_BUDGET_SECONDS:g} s")
                header, length = _read_header(shard, budget)
                budget -= length
                for name, info in header.items():
                    if name == "__metadata__":
                        continue
                    dtype, size, kind = _tensor_bytes(shard, name, info)
                    by_dtype[dtype] = by_dtype.get(dtype, 0) + size
                    by_kind[kind] = by_kind.get(kind, 0) + size
        except HeaderBudgetExceeded as exc:
            return None, (
                f"safetensors headers of {directory} are over the budget ({HEADER_BUDGET_BYTES // (1024 * 1024)} MiB, "
                f"{HEADER_BUDGET_SECONDS:g} s per model; {exc.path}: {exc.reason}): weights counted from config.json"
            )
        except JsonReadError as exc:
            return None, f"could not read {exc.path}: {exc.reason}"
        summed = sum(by_dtype.values())
        return WeightStats(summed, by_dtype, len(shards), "safetensors headers", by_kind), None
    index = directory / "model.safetensors.index.json"
    try:
        data = read_json_file(index, max_bytes=MAX_INDEX_BYTES)
    except JsonReadError as exc:
        return None, (None if exc.missing else f"could not read {index}: {exc.reason}")
    meta = data.get("metadata") if isinstance(data, dict) else None
    total = _int(meta.get("total_size")) if isinstance(meta, dict) else None
    if total is None or total <= 0:
        return None, f"could not read {index}: no metadata.total_size"
    return WeightStats(total, {}, 0, str(index)), None


@record
class ParamBreakdown:
    """Parameters counted from config.json's shapes, by how tensor/expert parallelism shards them."""

    embeddings: int  # embed_tokens (+ lm_head unless tied): vocab-parallel over TP
    layers: int  # attention + dense MLP + shared experts + router: TP-sharded, split by PP
    experts: int  # routed experts: over the EP ranks with expert parallelism, else TP-sharded

    @property
    def total(self) -> int:
        return self.embeddings + self.layers + self.experts


def param_breakdown(config: ModelConfig) -> ParamBreakdown | None:
    """Parameters by sharding kind (embeddings, attention, dense and expert MLPs; norms and biases left out);
    None when a shape is missing. MLA counts as plain attention; a hybrid model's linear-attention layers count
    their own projections (gated delta net: q, k, v, z in, beta/alpha, out)."""
    h, layers, vocab = config.hidden_size, config.num_hidden_layers, config.vocab_size
    if not (h and layers and vocab):
        return None
    heads = config.num_attention_heads or 1
    head_dim = config.head_dim or h // heads
    kv = config.num_key_value_heads or heads
    attention = 2 * h * heads * head_dim + 2 * h * kv * head_dim
    attention_total = layers * attention
    linear = _linear_attention_params(config)
    if linear is not None and config.full_attention_layers is not None:
        attention_total = config.full_attention_layers * attention + (layers - config.full_attention_layers) * linear
    dense_ffn = 3 * h * (config.intermediate_size or 4 * h)
    routed = 0
    if config.moe:
        expert = 3 * h * (config.moe_intermediate_size or config.intermediate_size or 4 * h)
        shared = (config.shared_experts or 0) * expert + 3 * h * (config.shared_expert_intermediate or 0)
        dense = min(config.first_dense_layers or 0, layers)
        moe_layers = layers - dense
        routed = moe_layers * (config.num_experts or 0) * expert
        mlp = dense * dense_ffn + moe_layers * (shared + h * (config.num_experts or 0))
    else:
        mlp = layers * dense_ffn
    embeddings = vocab * h * (1 if config.tie_word_embeddings else 2)
    return ParamBreakdown(embeddings, attention_total + mlp, routed)


def _linear_attention_params(config: ModelConfig) -> int | None:
    """One gated-delta-net layer's projections (Qwen3-Next): q, k, v and the output gate z in, beta and alpha per
    value head, the output projection; None without the dims."""
    c = config
    if not (c.hidden_size and c.linear_key_heads and c.linear_key_head_dim and c.linear_value_heads):
        return None
    keys = c.linear_key_heads * c.linear_key_head_dim
    values = c.linear_value_heads * (c.linear_value_head_dim or c.linear_key_head_dim)
    return c.hidden_size * (2 * keys + 2 * values) + c.hidden_size * 2 * c.linear_value_heads + values * c.hidden_size


def estimate_params(config: ModelConfig) -> int | None:
    """Total parameters counted from config.json's shapes (`param_breakdown`)."""
    parts = param_breakdown(config)
    return parts.total if parts else None


@record
class ModelInspection:
    """What could be learnt about a model without loading it."""

    source: str
    directory: str | None = None  # where its files were found
    config: ModelConfig | None = None
    config_error: str | None = None
    weights: WeightStats | None = None
    weights_error: str | None = None

    @property
    def params(self) -> int | None:
        return estimate_params(self.config) if self.config else None


def inspect_model(
    source: str,
    *,
    revision: str | None = None,
    weights: bool = False,
    data_root: Path | None = None,
    env: Mapping[str, str] | None = None,
    hub: str | None = None,
) -> ModelInspection:
    """config.json (and, with `weights`, the safetensors totals) of a local directory, a `prepared:NAME`
    model or a cached hub id. Never raises for what is on disk."""
    if source.startswith("prepared:"):
        try:
            source = resolve_model_source(source, root=data_root)
        except (ModelError, ValueError, OSError) as exc:
            return ModelInspection(source, config_error=f"could not read {source}: {exc}")
    directory = locate_model_dir(source, revision, env, hub)
    if directory is None:
        return ModelInspection(source)
    config, error = read_config_dir(directory)
    stats, weights_error = inspect_weights(directory) if weights and directory.is_dir() else (None, None)
    return ModelInspection(source, str(directory), config, error, stats, weights_error)


# --------------------------------------------------------------------------------------------------
# traits


@record
class ModelTraits:
    arch: ModelArch
    multimodal: bool
    why: str  # where the traits come from
    guessed: bool = False  # from the model's name only: the plan warns
    pooling: bool = False  # vLLM registers the architecture only as a pooling (embedding / scoring) model
    hybrid: bool = False  # the model class is a hybrid (attention + linear-attention / SSM layers: IsHybrid)


_MLA_NAMES = ("deepseek-v2", "deepseek-v3", "deepseek-r1", "deepseek-v4", "kimi-k2")
_MOE_NAMES = ("-a22b", "-a3b", "-a17b", "moe", "mixtral", "-a10b")


def model_traits(
    source: str,
    config: ModelConfig | None,
    family_types: tuple[str, ...] | None,
    family: str | None,
    architecture: str | None = None,
    vllm: str | None = None,
    vllm_ascend: str | None = None,
    expert_parallel: bool = False,
) -> ModelTraits:
    """MLA / MoE / multimodal from config.json, else the profile's `model.architecture` in vLLM's registry at the
    release's vLLM pin `vllm` (and vllm-ascend's own registrations at the tag `vllm_ascend`), else the matrix
    family's types, else the name (`guessed`) — where a name says nothing, `expert_parallel` (the profile asks
    for expert parallelism, which only a MoE model has) makes it MoE. config.json stays authoritative; where vLLM's
    registry says otherwise for its architecture, `why` says so."""
    if config is not None:
        arch: ModelArch = "mla" if config.mla else ("moe" if config.moe else "dense")
        named = architecture_traits(config.architectures[0], vllm, vllm_ascend) if config.architectures else None
        why = f"config.json ({config.path})"
        if named is not None and named.arch != arch:
            registry = f"vLLM's registry entry for {named.architecture} reads as {named.arch} ({named.cite()})"
            why += f"; {registry}: config.json wins"
        pooling, hybrid = (named.pooling, named.hybrid) if named is not None else (False, False)
        return ModelTraits(arch, config.vision, why, pooling=pooling, hybrid=hybrid)
    named = architecture_traits(architecture, vllm, vllm_ascend) if architecture is not None else None
    if named is not None:
        return _registry_traits(named)
    if family_types:
        arch = "mla" if "mla" in family_types else ("moe" if "moe" in family_types else "dense")
        return ModelTraits(arch, "vl" in family_types, f"support matrix family {family}")
    name = source.lower()
    if any(n in name for n in _MLA_NAMES):
        return ModelTraits("mla", False, "model name (DeepSeek-class)", guessed=True)
    arch = "moe" if any(n in name for n in _MOE_NAMES) else "dense"
    if arch == "dense" and expert_parallel:
        why = "engine.parallel.expert: expert parallelism, which only a MoE model has (the name says nothing)"
        return ModelTraits("moe", "-vl" in name, why, guessed=True)
    return ModelTraits(arch, "-vl" in name, "model name", guessed=True)


def _registry_traits(named: ArchitectureTraits) -> ModelTraits:
    """`model.architecture X (vLLM 0.10.2 registry: vllm/model_executor/models/registry.py:81)`, plus the note when
    the entry is another version's."""
    note = f"; {named.note}" if named.note else ""
    why = f"model.architecture {named.architecture} ({named.cite()}{note})"
    return ModelTraits(named.arch, named.multimodal, why, pooling=named.pooling, hybrid=named.hybrid)


def identity_warnings(
    source: str, traits: ModelTraits, config: ModelConfig | None, architecture: str | None
) -> list[str]:
    """The plan's warnings about who the model is: traits guessed from its name, or a profile
    `model.architecture` that config.json contradicts."""
    out: list[str] = []
    if traits.guessed:
        extra = (
            f" ({architecture} is not in vLLM's model registry, nor registered by vllm-ascend)" if architecture else ""
        )
        out.append(
            f"model traits ({traits.arch}{', multimodal' if traits.multimodal else ''}) guessed from the name "
            f"{source!r}: no config.json could be read{extra}; set model.architecture "
            "(the Hugging Face `architectures` name, e.g. DeepseekV3ForCausalLM)"
        )
    if architecture and config is not None and config.architectures and architecture not in config.architectures:
        out.append(
            f"model.architecture {architecture} contradicts {config.path} "
            f"(architectures: {', '.join(config.architectures)}); config.json wins"
        )
    return out
