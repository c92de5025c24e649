"""Who a model on disk is, as two content hashes: its `config.json` and its safetensors weight index.

Two nodes that print the same `config_sha256` and `index_sha256` load the same architecture and the same set of
weight shards (the index names every tensor's shard); a node whose hashes differ holds another revision or a
half-copied model. The weights themselves are not hashed (hundreds of GB): a shard changed in place under the same
index is not seen. A single-file checkpoint has no index (`index_sha256` is None); then only config.json is compared.

`model_identity(directory)` is pure in what it reads (two files, never a FIFO or a device: `open_regular`) and is
what `ascendctl model identity` prints and a lock file can record. `locate_identity` finds the directory first, the
way the plan does (`ascendctl.facts.model_inspect.locate_model_dir`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path

from ascendctl.facts.model_inspect import locate_model_dir
from ascendctl_engine.jsonio import JsonReadError, open_regular
from ascendctl_engine.prepared_models import PREPARED_PREFIX, ModelError, resolve_model_source
from ascendctl_engine.records import record

CONFIG_FILE = "config.json"
# the index vLLM and transformers read for a sharded safetensors checkpoint
INDEX_FILE = "model.safetensors.index.json"
IDENTITY_SCHEMA = 1


class IdentityError(ValueError):
    """The model's files could not be found or read; the message is one line naming the path."""


@record
class ModelIdentity:
    path: str  # the directory holding config.json
    config_sha256: str
    index_sha256: str | None  # None: no model.safetensors.index.json (a single-file or non-safetensors checkpoint)

    def as_dict(self) -> dict[str, str | None]:
        return {"config_sha256": self.config_sha256, "index_sha256": self.index_sha256, "path": self.path}


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open_regular(path) as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def model_identity(directory: str | Path) -> ModelIdentity:
    """The content hashes of `directory`'s config.json and safetensors index; raises `IdentityError` when
    config.json is missing or unreadable (an index that is missing is None, one that cannot be read an error)."""
    root = Path(directory)
    try:
        config = _sha256(root / CONFIG_FILE)
    except JsonReadError as exc:
        raise IdentityError(f"{exc.path}: {exc.reason}") from None
    try:
        index: str | None = _sha256(root / INDEX_FILE)
    except JsonReadError as exc:
        if not exc.missing:
            raise IdentityError(f"{exc.path}: {exc.reason}") from None
        index = None
    return ModelIdentity(str(root), config, index)


def locate_identity(
    source: str, revision: str | None = None, hub: str | None = None, env: Mapping[str, str] | None = None
) -> ModelIdentity:
    """`model_identity` of a directory, a `prepared:NAME` model or a hub id in the Hugging Face / ModelScope cache
    (`hub="modelscope"`: that cache only), found offline as the plan finds it; `IdentityError` when not there."""
    if source.startswith(PREPARED_PREFIX):
        try:
            source = resolve_model_source(source)
        except (ModelError, ValueError, OSError) as exc:
            raise IdentityError(str(exc).splitlines()[0]) from None
    directory = locate_model_dir(source, revision, env, hub)
    if directory is None:
        raise IdentityError(
            f"{source}: not a directory, and not in the Hugging Face or ModelScope cache on this machine "
            f"(fetch it: ascendctl model pull {source})"
        )
    return model_identity(directory)
