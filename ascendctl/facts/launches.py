"""What upstream runs on hardware: vllm-ascend's CI launches per tag, and the small index `plan` and `matrix` read.

vllm-ascend keeps the launches its CI runs on real A2, A3 and 300I Duo machines as YAML in each tag. The maintainer
script `scripts/extract_launches.py` reads them from every tag (its docstring says which layouts and tags) into
`ascendctl/facts/data/launches/launches.json`: per launch the tag, file, line, test case, hardware, runners, NPUs and
nodes, and a de-duplicated content (argv and env per node, benchmarks). A launch there is **verified at T**: listed in
T's CI lists, loadable by upstream's own loader, with an argv the release's vLLM parser accepts. It never claims the
run passed. What upstream's runner could not load is recorded per tag with the reason, and is not evidence.

`index.json` beside it is what the everyday commands read: one small row per launch, filed under the support
matrix's model family (the same name lookup the plan uses), the quantization the launch loads (its
`--quantization`, the checkpoint's name for ModelSlim weights) and the features its argv uses. It is written by
`python -m ascendctl.facts.launches --write` from the data and the matrix; tests/test_launches.py fails when it is
stale. One launch's whole content (argv, env, benchmarks) is `content_of(launch)`, read from the data itself: the
importer's launch scripts and `bench --workload launch:CASE` read it.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ascendctl.facts.checkpoint_names import QUANTIZATIONS, quantization_from_name
from ascendctl.facts.matrix.load import load_matrix
from ascendctl.facts.matrix.model_families import find_models
from ascendctl.facts.matrix.schema import SupportMatrix
from ascendctl.facts.published_shapes import normalise
from ascendctl_engine.argv_items import ArgItem, parse_args
from ascendctl_engine.package_data import package_dir
from ascendctl_engine.records import record
from ascendctl_engine.versions import parse as parse_version

if TYPE_CHECKING:
    from packaging.version import Version

DATA = ("data", "launches")
DATA_FILE = "launches.json"
INDEX_FILE = "index.json"
INDEX_SCHEMA = 1
COMMAND = "python -m ascendctl.facts.launches --write"

# `vllm serve` flags whose presence says the launch uses a support-matrix feature (ids of matrix.yaml `features`).
FLAG_FEATURES: Mapping[str, str] = {
    "--speculative-config": "speculative",
    "--async-scheduling": "async-scheduling",
    "--enable-expert-parallel": "ep",
    "--kv-transfer-config": "pd",
    "--enable-prefix-caching": "prefix-cache",
    "--enable-chunked-prefill": "chunked-prefill",
    "--enable-lora": "lora",
    "--decode-context-parallel-size": "dcp",
    "--prefill-context-parallel-size": "pcp",
    "--enable-eplb": "eplb",
}
# `cudagraph_mode` in `--compilation-config` → the graph feature it uses
GRAPH_FEATURES: Mapping[str, str] = {
    "FULL_DECODE_ONLY": "full-decode-only-graph",
    "PIECEWISE": "piecewise-graph",
    "FULL": "full-graph",
}
SIZE_FEATURES: Mapping[str, str] = {"--tensor-parallel-size": "tp", "--data-parallel-size": "dp"}
# the features a launch's argv can show (a model trait such as `mm` is the family's, not the argv's)
ARGV_FEATURES = frozenset([*FLAG_FEATURES.values(), *GRAPH_FEATURES.values(), *SIZE_FEATURES.values()])


@record
class Launch:
    """One launch upstream's CI runs, as the index files it."""

    family: str | None  # the support matrix's model family (None: the matrix has none for this model)
    model: str
    quant: str  # the matrix quantization id it loads (`none`: float weights; `auto`: ModelSlim, type unnamed)
    hardware: str
    tag: str
    file: str
    line: int
    case: str
    kind: str  # single-node | multi-node | accuracy
    npus: int  # per node
    nodes: int
    features: tuple[str, ...] = ()

    @property
    def source(self) -> str:
        return f"{self.tag}:{self.file}:{self.line}"

    @property
    def layout(self) -> str:
        nodes = f" × {self.nodes} nodes" if self.nodes > 1 else ""
        pd = ", prefill/decode" if "pd" in self.features else ""
        npus = "1 NPU" if self.npus == 1 else f"{self.npus} NPUs"
        return f"{self.hardware} × {npus}{nodes}{pd}"

    def mark(self, at: str | None = None) -> str:
        """`verified at T: FILE:LINE, HARDWARE × NPUs (× nodes)`; `at`: the release asked about (another tag's
        launch says so)."""
        other = f" (another release than {at})" if at is not None and at != self.tag else ""
        return f"verified at {self.tag}{other}: {self.file}:{self.line}, {self.layout}"

    def to_row(self) -> dict[str, Any]:
        return {
            "family": self.family,
            "model": self.model,
            "quant": self.quant,
            "hardware": self.hardware,
            "tag": self.tag,
            "file": self.file,
            "line": self.line,
            "case": self.case,
            "kind": self.kind,
            "npus": self.npus,
            "nodes": self.nodes,
            "features": list(self.features),
        }


# ------------------------------------------------------------------------------------------------ the data


def data_dir() -> Path:
    return Path(str(package_dir("ascendctl.facts").joinpath(*DATA)))


def read_data(path: Path | None = None) -> dict[str, Any]:
    """The whole launch data (maintainer and test use; the everyday commands read the index)."""
    data: dict[str, Any] = json.loads((path or data_dir() / DATA_FILE).read_text(encoding="utf-8"))
    return data


def serve_options(argv: Sequence[str]) -> list[str]:
    """The options of a `vllm serve` argv: what follows `vllm serve` and its model (which `--model` may give
    instead)."""
    tokens = list(argv[2:]) if list(argv[:2]) == ["vllm", "serve"] else list(argv)
    return tokens[1:] if tokens and not tokens[0].startswith("-") else tokens


def _items(argv: Sequence[str]) -> tuple[ArgItem, ...]:
    try:
        return parse_args(serve_options(argv))
    except ValueError:
        return ()


def launch_quant(model: str, items: Sequence[ArgItem], llm_kwargs: Mapping[str, Any] | None = None) -> str:
    """The quantization a launch loads, as a matrix id: `--quantization METHOD` (`ascend`: the ModelSlim type
    the checkpoint's name states, else `auto`), else what the name states (releases that detect ModelSlim weights
    load them quantized), else `none`."""
    said = next((i.value for i in items if i.flag == "--quantization" and i.value), None)
    if said is None and llm_kwargs:
        said = llm_kwargs.get("quantization")
    named = quantization_from_name(model)
    if said == "ascend":
        return named or "auto"
    if isinstance(said, str) and said in QUANTIZATIONS:
        return said
    return named or "none"


def launch_features(items: Sequence[ArgItem]) -> tuple[str, ...]:
    """The support-matrix features a launch's argv uses."""
    found: list[str] = []
    for item in items:
        if item.flag in FLAG_FEATURES:
            found.append(FLAG_FEATURES[item.flag])
        elif item.flag in SIZE_FEATURES and item.value is not None and item.value.isdigit() and int(item.value) > 1:
            found.append(SIZE_FEATURES[item.flag])
        elif item.flag == "--compilation-config" and item.value:
            try:
                config = json.loads(item.value)
            except ValueError:
                continue
            mode = config.get("cudagraph_mode") if isinstance(config, dict) else None
            if isinstance(mode, str) and mode.upper() in GRAPH_FEATURES:
                found.append(GRAPH_FEATURES[mode.upper()])
    return tuple(sorted(set(found)))


def _family(matrix: SupportMatrix, model: str) -> str | None:
    name = model.rstrip("/").rsplit("/", 1)[-1] if model.startswith(("/", ".", "~")) else model
    hits = find_models(matrix, name)
    return hits[0].id if hits else None


def build_index(data: Mapping[str, Any], matrix: SupportMatrix) -> list[Launch]:
    """Every launch of `data` as the index files it (family, quantization, features), in the data's order."""
    out: list[Launch] = []
    for raw in data["launches"]:
        content = data["contents"][raw["content"]]
        model = str(content["model"])
        items = [item for node in content.get("nodes", ()) for item in _items(node.get("argv", ()))]
        out.append(
            Launch(
                family=_family(matrix, model),
                model=model,
                quant=launch_quant(model, items, content.get("llm_kwargs")),
                hardware=str(raw["hardware"]),
                tag=str(raw["tag"]),
                file=str(raw["file"]),
                line=int(raw["line"]),
                case=str(raw["case"]),
                kind=str(raw["kind"]),
                npus=int(raw["npus_per_node"]),
                nodes=int(raw["nodes"]),
                features=launch_features(items),
            )
        )
    return out


# the columns of an index row (the index keeps rows as lists under their family: small to read, built on demand)
_COLUMNS = ("model", "quant", "hardware", "tag", "file", "line", "case", "kind", "npus", "nodes", "features")


def index_text(data_text: str, matrix: SupportMatrix) -> str:
    """The index file for `data_text` (launches.json): rows grouped by family, stamped with that text's sha256."""
    families: dict[str, list[list[Any]]] = {}
    for launch in build_index(json.loads(data_text), matrix):
        row = launch.to_row()
        families.setdefault(launch.family or "", []).append([row[c] for c in _COLUMNS])
    stamp = hashlib.sha256(data_text.encode("utf-8")).hexdigest()[:16]
    body = ",\n".join(
        f"{json.dumps(family)}:{json.dumps(rows, ensure_ascii=False, separators=(',', ':'))}"
        for family, rows in sorted(families.items())
    )
    head = json.dumps({"schema": INDEX_SCHEMA, "stamp": stamp, "columns": list(_COLUMNS)})[:-1]
    return f'{head},"families":{{\n{body}\n}}}}\n'


# ------------------------------------------------------------------------------------------------ lookups


@functools.cache
def _index_lines() -> dict[str, str]:
    """The index's family lines, unparsed: a plan reads one family's (`"family":[rows]` a line, see `index_text`)."""
    path = data_dir() / INDEX_FILE
    if not path.is_file():
        return {}
    out: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines()[1:-1]:
        key, _, rows = line.partition(":")
        out[json.loads(key)] = rows.rstrip(",")
    return out


@functools.cache
def family_launches(family: str) -> tuple[Launch, ...]:
    """The launches the index files under `family` (none when the data is not installed)."""
    rows = json.loads(_index_lines().get(family, "[]"))
    return tuple(
        Launch(family=family or None, **{**dict(zip(_COLUMNS, row, strict=True)), "features": tuple(row[-1])})
        for row in rows
    )


@functools.cache
def _data() -> dict[str, Any]:
    return read_data()


def content_of(launch: Launch) -> Mapping[str, Any]:
    """The launch's de-duplicated content (argv and env per node, benchmarks); KeyError when the data has none."""
    data = _data()
    for row in data["launches"]:
        if (row["tag"], row["file"], row["case"], row["line"]) == (launch.tag, launch.file, launch.case, launch.line):
            return data["contents"][row["content"]]  # type: ignore[no-any-return]
    raise KeyError(launch.source)


def launch_index() -> tuple[Launch, ...]:
    """Every launch of the index (a family's own are `family_launches`)."""
    return tuple(launch for family in _index_lines() for launch in family_launches(family))


def verified(
    family: str, quant: str, hardware: str, features: Sequence[str] = (), *, tag: str | None = None
) -> list[Launch]:
    """The launches of `family` × `quant` on `hardware` using every one of `features` (at `tag` only, when given),
    newest tag first."""
    wanted = set(features)
    found = [
        launch
        for launch in family_launches(family)
        if launch.quant == quant
        and launch.hardware == hardware
        and wanted <= set(launch.features)
        and (tag is None or launch.tag == tag)
    ]
    return sorted(found, key=lambda launch: _tag_key(launch.tag), reverse=True)


def evidence_for(
    family: str, quant: str, hardware: str, tag: str, features: Sequence[str] = ()
) -> tuple[list[Launch], list[Launch]]:
    """(the launches of `tag`, those of the nearest other tag that has any) for the combination."""
    every = verified(family, quant, hardware, features)
    own = [launch for launch in every if launch.tag == tag]
    if own:
        return own, []
    here = parse_version(tag)
    others = sorted({launch.tag for launch in every}, key=lambda t: abs(_distance(_tag_key(t), here)))
    nearest = others[0] if others else None
    return [], [launch for launch in every if launch.tag == nearest]


@functools.cache
def _tag_key(tag: str) -> Version:
    return parse_version(tag)


def _distance(a: Version, b: Version) -> float:
    """How far apart two releases are, for picking the nearest: by their (major, minor, micro) numbers; an older
    one a half step further than a newer one as far away."""
    steps = (a.major - b.major) * 10_000 + (a.minor - b.minor) * 100 + (a.micro - b.micro)
    return float(steps) + (0.5 if a < b else 0.0)


def tag_distance(tag: str, other: str) -> float:
    """How far release `tag` is from `other` (0: the same), as `evidence_for` picks the nearest."""
    return _distance(_tag_key(tag), parse_version(other))


def family_of(model: str) -> str | None:
    """The support matrix's family of a model name, as the index files launches (None: no family)."""
    return _family(load_matrix(), model)


def family_marks(family: str, tag: str | None = None) -> dict[str, Launch]:
    """Per hardware family, the newest launch of `family` (at `tag` only, when given): what `matrix models` shows."""
    out: dict[str, Launch] = {}
    for launch in sorted(family_launches(family), key=lambda item: _tag_key(item.tag), reverse=True):
        if tag is None or launch.tag == tag:
            out.setdefault(launch.hardware, launch)
    return out


def verified_line(family: str | None, quant: str, hardware: str | None, tag: str, model: str = "") -> str:
    """What `plan --why` says of the evidence: the release's launches, else the nearest tag's, else none; launches
    of the same checkpoint name (quantization suffixes aside) as `model` first."""
    if family is None or hardware is None:
        return "no upstream CI launch: the model is in no support-matrix family (or no hardware family)"
    own, others = evidence_for(family, quant, hardware, tag)
    wanted = normalise(model) if model else None
    own.sort(key=lambda launch: normalise(launch.model) != wanted)
    others.sort(key=lambda launch: normalise(launch.model) != wanted)
    if own:
        shown = "; ".join(launch.mark() for launch in own[:3])
        more = f" (+{len(own) - 3} more)" if len(own) > 3 else ""
        return f"{shown}{more}"
    if others:
        return f"no launch at {tag}; {others[0].mark(tag)}"
    return f"no upstream CI launch of {family} × {quant} on {hardware} in any extracted tag"


# ------------------------------------------------------------------------------------------------ maintainer


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write or check the launch index (ascendctl/facts/data/launches).")
    parser.add_argument("--write", action="store_true", help="rewrite index.json from launches.json")
    args = parser.parse_args(argv)
    text = index_text((data_dir() / DATA_FILE).read_text(encoding="utf-8"), load_matrix())
    target = data_dir() / INDEX_FILE
    if args.write:
        target.write_text(text, encoding="utf-8")
        print(f"wrote {target}")
        return 0
    same = target.is_file() and target.read_text(encoding="utf-8") == text
    print("up to date" if same else f"{target} is stale: run {COMMAND}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
