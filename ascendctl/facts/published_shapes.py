"""Published model shapes: the config.json fields of well-known checkpoints, for when the model is not on disk.

An operator sizing a deployment usually asks before downloading hundreds of GB ("how many NPUs for GLM-5 at
200K context?"). `ascendctl/facts/data/model_configs/` holds reduced config.json files (only the fields
`ascendctl.facts.model_inspect` reads, values as the model's publisher states them, each with its source in
`index.yaml`); `published_config` finds one by the model's name. A name match is a lookup, not proof: whoever
uses it says so (the fit reports "published shapes of …" next to its numbers), and a config.json on disk
always wins.

`family_shapes` says, for each model family of the support matrix, which entry stands for it or why none does (the
index's `families`); for those the hint is `ascendctl model config SOURCE`, which fetches the checkpoint's own
config.json.

Names match after normalising: the last path part, lower-cased, quantization suffixes dropped (`-W8A8`,
`-w4a8`, `-QuaRot`, `-FP8`; `-Instruct` is part of the name), punctuation removed — so `vllm-ascend/Qwen3-32B-W8A8`,
`/models/Qwen3-32B` and `Qwen/Qwen3-32B` all find `Qwen/Qwen3-32B`.

`index.yaml` is the source; `index.json` is its fast-load mirror (`ascendctl.facts.stamped_mirror`: written by
`python -m ascendctl.outputs.matrix_docs --write`, a stale one fails tests/test_matrix_docs.py), read only while its
stamp matches: a plan of a hub-id model reads the index, and libyaml took some 4 ms to build it where the JSON
parser takes a tenth of one.
"""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any, Literal

import yaml

from ascendctl.facts.model_inspect import ModelConfig, parse_model_config
from ascendctl.facts.stamped_mirror import mirror_text, stamped
from ascendctl_engine.package_data import package_dir
from ascendctl_engine.records import record

DATA = ("data", "model_configs")
INDEX_YAML = "index.yaml"
INDEX_JSON = "index.json"  # generated: see the module docstring
# checkpoint-name suffixes that say how the weights are stored, not which model they are
_QUANT_SUFFIX = re.compile(
    r"([-_.](w\d+a\d+(c\d+)?(s)?|w\d+a\d+_dynamic|int[48]|fp8|fp4|bf16|awq|gptq|quarot|dynamic|mtp|modelslim))+$",
    re.IGNORECASE,
)


@record
class PublishedShapes:
    model: str  # the publisher's id, e.g. Qwen/Qwen3-32B
    file: str
    source: str  # where the numbers come from (the model card / config.json URL)
    ids: tuple[str, ...] = ()  # every id the entry names exactly: the model and its aliases

    def names_exactly(self, source: str) -> bool:
        """Whether `source` is one of the ids the entry names (hub ids compare without case), not only a name
        that normalises to one: `/models/qwen3-32b` may hold a fine-tune with other shapes."""
        wanted = source.rstrip("/").lower()
        return any(wanted == i.lower() for i in self.ids)


def normalise(name: str) -> str:
    """`vllm-ascend/Qwen3-32B-W8A8` → `qwen332b`."""
    base = name.rstrip("/").split("/")[-1].split(":")[-1]
    previous = None
    while previous != base:
        previous, base = base, _QUANT_SUFFIX.sub("", base)
    return re.sub(r"[^a-z0-9]", "", base.lower())


# What `fit` says for a model whose shapes are neither on disk nor published here.
CONFIG_HINT = "`ascendctl model config SOURCE` fetches its config.json"


@record
class FamilyShapes:
    family: str  # the matrix's model family id
    shapes: PublishedShapes | None  # the entry standing for the family, or None
    unknown: str = ""  # why none does


def _parse_index(yaml_text: str) -> dict[str, Any]:
    # package data, read with the safe loader; libyaml's when present
    data: dict[str, Any] = yaml.load(yaml_text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506
    return data


def index_json_text(yaml_text: str) -> str:
    """The mirror of `yaml_text` (index.yaml): its data as JSON, stamped with its sha256."""
    return mirror_text(
        yaml_text, "index", json.dumps(_parse_index(yaml_text), ensure_ascii=False, separators=(",", ":"))
    )


def index_from_texts(yaml_text: str, mirror: str = "") -> dict[str, Any]:
    """The index: the mirror's data when it carries `yaml_text`'s stamp, else `yaml_text` parsed."""
    if stamped(yaml_text, mirror):
        data: dict[str, Any] = json.loads(mirror)["index"]
        return data
    return _parse_index(yaml_text)


def index_dir() -> Any:
    return package_dir("ascendctl.facts").joinpath(*DATA)


@cache
def _data() -> dict[str, Any]:
    root = index_dir()
    mirror = root.joinpath(INDEX_JSON)
    return index_from_texts(
        root.joinpath(INDEX_YAML).read_text(encoding="utf-8"),
        mirror.read_text(encoding="utf-8") if mirror.is_file() else "",
    )


@cache
def _index() -> dict[str, PublishedShapes]:
    data = _data()
    out: dict[str, PublishedShapes] = {}
    for entry in data["models"]:
        ids = (entry["model"], *entry.get("aliases", ()))
        shapes = PublishedShapes(entry["model"], entry["file"], entry["source"], tuple(ids))
        for name in ids:
            key = normalise(name)
            if key in out and out[key] != shapes:
                raise ValueError(f"model_configs/index.yaml: {name!r} names two entries")
            out[key] = shapes
    return out


def family_shapes() -> dict[str, FamilyShapes]:
    """Each model family the index speaks for: the entry standing for it, or why there is none."""
    by_model = {e.model: e for e in _index().values()}
    out: dict[str, FamilyShapes] = {}
    for family, said in (_data().get("families") or {}).items():
        model = said.get("model")
        if model is not None and model not in by_model:
            raise ValueError(f"model_configs/index.yaml: family {family} names {model}, which has no entry")
        out[str(family)] = FamilyShapes(
            str(family), by_model.get(model) if model else None, str(said.get("unknown", ""))
        )
    return out


def published_entries() -> list[PublishedShapes]:
    return list(dict.fromkeys(_index().values()))


def find_published(source: str) -> PublishedShapes | None:
    return _index().get(normalise(source))


def read_published(shapes: PublishedShapes) -> ModelConfig:
    root = package_dir("ascendctl.facts").joinpath(*DATA)
    data = json.loads(root.joinpath(shapes.file).read_text(encoding="utf-8"))
    return parse_model_config(data, f"published shapes of {shapes.model} ({shapes.source})")


ShapesBasis = Literal["config.json", "--config", "publisher id", "name"]


@record
class ModelShapes:
    """The shapes the plan's shape rules read, and what they rest on: the model's own config.json, the file
    `--config` names, published shapes whose entry names the model's id exactly, or ones matched only by a
    normalised name (`/models/qwen3-32b` may hold a fine-tune with other shapes)."""

    config: ModelConfig
    basis: ShapesBasis
    matched: str | None = None  # the published id, for published shapes

    @property
    def decisive(self) -> bool:
        """Whether a rule failing on these shapes may refuse (everything but a name match)."""
        return self.basis != "name"

    @property
    def label(self) -> str:
        if self.basis in ("config.json", "--config"):
            return f"{self.config.path} ({self.basis})" if self.basis == "--config" else str(self.config.path)
        how = "the model's id" if self.basis == "publisher id" else "a name match"
        return f"the published shapes of {self.matched} ({how})"


def model_shapes(location: str, config: ModelConfig | None, from_file: bool) -> ModelShapes | None:
    """The shapes a plan decides its shape rules on: `config` (the model's config.json, or `--config FILE` when
    `from_file`), else the published shapes found for `location`, else None."""
    if config is not None:
        return ModelShapes(config, "--config" if from_file else "config.json")
    shapes = find_published(location)
    if shapes is None:
        return None
    basis: ShapesBasis = "publisher id" if shapes.names_exactly(location) else "name"
    return ModelShapes(read_published(shapes), basis, shapes.model)


def published_config(source: str) -> ModelConfig | None:
    """The published shapes of the model `source` names, or None when ascendctl does not know it."""
    shapes = find_published(source)
    return read_published(shapes) if shapes is not None else None
