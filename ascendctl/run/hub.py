"""Models from a hub: `ascendctl model config` (config.json and the weight index only) and `ascendctl model pull`
(the whole repository), into the cache the plan and the engine read.

A source is what a profile's `model.source` may name for a hub — `hf:ORG/NAME`, `modelscope:ORG/NAME` or a bare
`ORG/NAME` (Hugging Face) — parsed by the profile's own model section (`ModelSpec`), so the CLI and the profile
cannot disagree. The download itself is the hub's library (`HubClient`: `ascendctl.run.hub_hf` wraps
`huggingface_hub.snapshot_download`, `ascendctl.run.hub_modelscope` wraps `modelscope.snapshot_download`): the
library resumes an interrupted download from its partial file with an HTTP byte range, writes the cache layout
vLLM reads, and draws the progress bars. What this module adds: the source syntax, the file patterns, where the
files went and whether the plan's offline lookup (`locate_model_dir`) finds them there.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from pydantic import ValidationError

from ascendctl.core.errors import OperationFailed, UserInputError
from ascendctl.facts.model_identity import IdentityError, ModelIdentity, locate_identity, model_identity
from ascendctl.facts.model_inspect import (
    ModelConfig,
    estimate_params,
    inspect_weights,
    locate_model_dir,
    read_config_dir,
)
from ascendctl_engine.records import record
from ascendctl_engine.sections.deployment import HubScheme, ModelSpec
from ascendctl_engine.sections.fields import HUB_ID

HUB_JSON_SCHEMA = 1  # `model config --json`, `model pull --json`, `model identity --json`
# What `model config` fetches: the shapes (config.json), the weights' total and shard list (the safetensors index)
# and the ModelSlim description vllm-ascend reads next to them (`model_inspect.MODELSLIM_DESCRIPTION_GLOB`).
CONFIG_PATTERNS = ("config.json", "model.safetensors.index.json", "quant_model_description*.json")
HUB_NAMES: Mapping[HubScheme, str] = {"hf": "Hugging Face", "modelscope": "ModelScope"}
INSTALL_HINT = "pip install 'ascendctl[hub]'"
MAX_LISTED_FILES = 10_000  # files named in the result (a repository has tens)
RESUME_HINT = "run the same command again to resume (the partial files stay in the cache)"


def first_line(exc: BaseException) -> str:
    """A library exception as one line (their messages run to several)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


@record
class HubSource:
    hub: HubScheme
    repo_id: str

    @property
    def source(self) -> str:
        """As a profile's `model.source` names it."""
        return f"{self.hub}:{self.repo_id}"


def parse_hub_source(text: str) -> HubSource:
    """`hf:ORG/NAME`, `modelscope:ORG/NAME` or `ORG/NAME` (Hugging Face); `UserInputError` (exit 2) otherwise."""
    spec = model_spec(text)
    if not HUB_ID.match(spec.location):
        raise UserInputError(
            f"{text!r} is not a hub model: write hf:ORG/NAME, modelscope:ORG/NAME or ORG/NAME (Hugging Face)"
        )
    return HubSource(spec.scheme or "hf", spec.location)


def model_spec(text: str) -> ModelSpec:
    """`text` read as a profile's `model.source` (scheme and location); `UserInputError` (exit 2) when invalid."""
    try:
        return ModelSpec(source=text)
    except ValidationError as exc:
        raise UserInputError(f"{text!r}: {exc.errors()[0]['msg'].removeprefix('Value error, ')}") from None


class HubClient(Protocol):
    """One hub's download library: the files of `repo_id` at `revision` matching `patterns` (all when None) into
    its cache; returns the directory holding them. Raises `OperationFailed` with one line saying why."""

    def download(
        self, repo_id: str, *, revision: str | None, patterns: Sequence[str] | None, progress: bool
    ) -> Path: ...


def offline_flag(env: Mapping[str, str] | None = None) -> str | None:
    """The variable that forbids hub access, when set as huggingface_hub reads it (`constants._is_true`)."""
    e = os.environ if env is None else env
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        if e.get(name, "").upper() in ("1", "ON", "YES", "TRUE"):
            return name
    return None


@record
class Fetched:
    """What a `model config` / `model pull` left in the cache."""

    source: HubSource
    revision: str | None
    path: Path
    files: tuple[str, ...]  # relative to `path`, sorted
    found_by_plan: bool  # the plan's offline lookup finds this directory for `source`
    identity: ModelIdentity | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "schema": HUB_JSON_SCHEMA,
            "source": self.source.source,
            "hub": self.source.hub,
            "repo_id": self.source.repo_id,
            "revision": self.revision,
            "path": str(self.path),
            "files": list(self.files),
            "found_by_plan": self.found_by_plan,
            "identity": self.identity.as_dict() if self.identity is not None else None,
        }


def fetch(
    source: HubSource,
    client: HubClient,
    *,
    revision: str | None = None,
    patterns: Sequence[str] | None = None,
    progress: bool = True,
    env: Mapping[str, str] | None = None,
) -> Fetched:
    """Download `patterns` of `source` (everything when None) through `client`; `OperationFailed` when the
    repository has no config.json."""
    path = client.download(source.repo_id, revision=revision, patterns=patterns, progress=progress)
    files = _listing(path)
    if "config.json" not in files:
        raise OperationFailed(
            f"{source.source}: no config.json in the repository (at {path}); vLLM needs a Hugging Face layout"
        )
    located = locate_model_dir(source.repo_id, revision, env, source.hub if source.hub == "modelscope" else None)
    found = located is not None and _same(located, path)
    try:
        identity: ModelIdentity | None = model_identity(path)
    except ValueError:
        identity = None
    return Fetched(source, revision, path, files, found, identity)


def _listing(path: Path) -> tuple[str, ...]:
    try:
        names = sorted(p.relative_to(path).as_posix() for p in path.rglob("*") if p.is_file())
    except OSError as exc:
        raise OperationFailed(f"cannot list {path}: {exc.strerror or exc}") from None
    return tuple(names[:MAX_LISTED_FILES])


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


# --------------------------------------------------------------------------------------------------
# what `model config` reports


def key_shapes(directory: Path) -> dict[str, Any]:
    """The model's shapes the fit reads, from `directory`'s config.json (and the weights' total from its index);
    `OperationFailed` when config.json cannot be read."""
    config, error = read_config_dir(directory)
    if config is None:
        raise OperationFailed(error or f"{directory / 'config.json'}: not found")
    weights, _ = inspect_weights(directory)
    return {**_shape_fields(config), "weights_bytes": weights.total_bytes if weights is not None else None}


def _shape_fields(c: ModelConfig) -> dict[str, Any]:
    return {
        "model_type": c.model_type,
        "architectures": list(c.architectures),
        "torch_dtype": c.torch_dtype,
        "hidden_size": c.hidden_size,
        "num_hidden_layers": c.num_hidden_layers,
        "num_attention_heads": c.num_attention_heads,
        "num_key_value_heads": c.num_key_value_heads,
        "head_dim": c.head_dim,
        "kv_lora_rank": c.kv_lora_rank,
        "num_experts": c.num_experts,
        "experts_per_token": c.experts_per_token,
        "vocab_size": c.vocab_size,
        "max_model_len": c.derived_max_model_len,
        "params": estimate_params(c),
    }


# --------------------------------------------------------------------------------------------------
# identity of a model on this machine


def identity_of(text: str, revision: str | None = None, env: Mapping[str, str] | None = None) -> ModelIdentity:
    """`model_identity` of what `text` names as a profile's `model.source` would (a directory, `prepared:NAME`, or a
    hub id in the cache), found offline; `UserInputError` for bad syntax, `OperationFailed` when not on disk."""
    spec = model_spec(text)
    try:
        return locate_identity(spec.location, revision, spec.scheme, env)
    except IdentityError as exc:
        raise OperationFailed(str(exc)) from None
