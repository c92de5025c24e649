#!/usr/bin/env python3
"""Extract the architecture → traits table from vLLM's own model registry, per pinned vLLM version.

    python scripts/extract_architectures.py                    # every vLLM version the support matrix pins
    python scripts/extract_architectures.py --versions 0.10.2 0.13.0 --out /tmp/architectures.json

A maintainer tool, run by hand (never by CI or the tests); its output, `ascendctl/facts/data/architectures.json`,
is checked-in data that `ascendctl.facts.architectures` reads. Network: pypi.org and files.pythonhosted.org only.

What is read, per vLLM version the matrix pins (every release row, the cpu / cuda rows too):
- the vLLM sdist from PyPI (`https://pypi.org/simple/vllm/` lists `vllm-X.tar.gz`), cached under
  `~/.cache/ascendctl-extract/vllm/`. A version with no sdist but a published wheel (vLLM 0.15.0) is read from
  the wheel's Python files instead (HTTP range reads of the zip, only the model files; cached as a small zip);
  a version not published at all (vLLM 0.11.0rc3, pinned by vllm-ascend v0.11.0rc0) is skipped and recorded in
  the output's `decisions` (its lookups fall back to the nearest earlier version read). Nothing is imported:
  every file is parsed with `ast`.
- `vllm/model_executor/models/registry.py`: the module-level `_*_MODELS` dicts whose values are
  `(module, class)` tuples (`**other_dict` merges and `**{k: v for k, v in other.items() if ...}` comprehensions
  included; dicts of other values, such as `_PREVIOUSLY_SUPPORTED_MODELS`, are not registrations). A dict made
  only of `**` merges (`_VLLM_MODELS`) is the aggregate, not a category; its merge order says which entry wins
  when an architecture sits in several dicts (the later one, as in vLLM).
- the model module of each entry (`vllm/model_executor/models/<module>.py`, or a dotted module such as
  `vllm.models.deepseek_v4`, a package whose `__init__.py` re-exports its platforms' classes).

Per vllm-ascend tag (the bare mirror of vllm-project/vllm-ascend, read with `git archive TAG vllm_ascend`), the
architectures the plugin itself registers (`ModelRegistry.register_model("Arch", "vllm_ascend.models.x:Cls")`
anywhere under `vllm_ascend/`), analysed the same way, with the vLLM sources of the tag's pinned version next to
them (vllm-ascend's classes subclass vLLM's).

The traits (`Registration`, `module_facts`, `Analyzer`):
- multimodal: the architecture is in `_MULTIMODAL_MODELS`;
- pooling: every dict the architecture is in is a pooling one (embedding, cross-encoder, reward, classification,
  late interaction, ...): it cannot be served to generate (`Qwen2ForCausalLM`, also listed as an embedding
  model, is not pooling);
- hybrid: the class, or a base it inherits (same module, or one import away), lists `IsHybrid`;
- MoE: the module uses vLLM's fused-MoE layer (imports anything from a `fused_moe` package, or imports / calls
  a `*FusedMoE*` / `fused_moe` / `fused_experts` name); MLA: the module reads `kv_lora_rank`, or imports vLLM's
  MLA layer (`MultiHeadLatentAttentionWrapper`, `*MLAModules`) or its MLA attention backends (`...backends.mla`,
  `flashmla`: DeepSeek V4 reads no kv_lora_rank).
  Decided per module, not per class: a module holding a dense and a MoE variant (minicpm, qwen3_5, gemma4,
  bert_with_rope) marks both MoE. A registered class imported rather than defined (a re-export) is read in its
  defining module(s), one import away. One level further: a class the defining module subclasses or builds from
  another model module counts by what that class reaches in its own module (so Qwen3-VL-MoE's text model, built
  from qwen3_moe's classes, is MoE, while a dense encoder borrowed from a module that also holds a MoE variant is
  not); a model built through the registry by name (`init_vllm_registered_model(..., architectures=["X"])`, the
  Kimi-VL / Kimi-K2.5 language models) takes X's MoE / MLA.

Output: per architecture, spans of consecutive versions read with identical traits (`from` / `to`), each with
the first version's `tag:path:line` of the registry entry (stable when later versions are appended), and
`model` (module:class). Sorted keys, so reruns diff cleanly. Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import io
import json
import re
import subprocess
import sys
import tarfile
import urllib.request
import zipfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "ascendctl" / "facts" / "data" / "architectures.json"
DEFAULT_REPO = Path("/work/.mirror/vllm-project+vllm-ascend/repo")
CACHE = Path("~/.cache/ascendctl-extract/vllm").expanduser()
INDEX_URL = "https://pypi.org/simple/vllm/"
SCHEMA = 1
REGISTRY = "vllm/model_executor/models/registry.py"
MODELS_DIR = "vllm/model_executor/models"
# what is kept of an sdist / wheel: the model code (the registry, the model modules, vLLM's model packages)
WANTED_PREFIXES = ("vllm/model_executor/models/", "vllm/models/")

# registry dicts whose entries are pooling-only models (every name vLLM used; matched on the dict's name)
POOLING_DICT = re.compile(r"EMBEDDING|CROSS_ENCODER|REWARD|CLASSIFICATION|LATE_INTERACTION|POOLING|SCORING")
MULTIMODAL_DICT = "_MULTIMODAL_MODELS"
TRAIT_KEYS = ("hybrid", "mla", "moe", "multimodal", "pooling")


def log(message: str) -> None:
    """Progress on stderr."""
    print(message, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------------------
# Which versions: the support matrix's pins.


def matrix_pins() -> tuple[list[str], dict[str, str]]:
    """(every vLLM version the support matrix pins, in version order; vllm-ascend tag → its vLLM pin)."""
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "engine"))
    from ascendctl.facts.matrix import load_matrix
    from ascendctl_engine.versions import parse

    releases = load_matrix().releases
    versions = sorted({r.vllm for r in releases}, key=parse)
    tags = {r.version: r.vllm for r in releases if r.package == "vllm-ascend"}
    return versions, dict(sorted(tags.items(), key=lambda kv: parse(kv[0])))


def version_key(text: str) -> Version:
    """PEP 440 ordering of a version or tag (`v0.13.0rc1`)."""
    return Version(text[1:] if text[:1] == "v" else text)


# ---------------------------------------------------------------------------------------------------------
# Fetching: PyPI's simple index, the sdist, or (no sdist) the wheel's model files by HTTP range reads.


def simple_index_links(html: str) -> dict[str, str]:
    """File name → link (with its `#sha256=` fragment, which `download` checks) of a PyPI simple-index page."""
    out: dict[str, str] = {}
    for href in re.findall(r'href="([^"]+)"', html):
        out[PurePosixPath(href.split("#", 1)[0]).name] = href.replace("&amp;", "&")
    return out


def fetch_index() -> dict[str, str]:
    """The links of https://pypi.org/simple/vllm/."""
    log(f"reading {INDEX_URL}")
    request = urllib.request.Request(INDEX_URL, headers={"Accept": "text/html"})
    with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310 - a fixed https URL
        return simple_index_links(response.read().decode("utf-8", errors="replace"))


def download(link: str, target: Path) -> Path:
    """Download an index link to `target` (atomically, with progress on stderr), checking its `#sha256=`."""
    url, _, fragment = link.partition("#")
    partial = target.with_suffix(target.suffix + ".part")
    digest = hashlib.sha256()
    with urllib.request.urlopen(url, timeout=300) as response, partial.open("wb") as out:  # noqa: S310
        total = int(response.headers.get("Content-Length") or 0)
        done = 0
        while chunk := response.read(1 << 20):
            out.write(chunk)
            digest.update(chunk)
            done += len(chunk)
            if total:
                print(f"\r  {target.name}: {done / 2**20:6.1f} / {total / 2**20:.1f} MiB", end="", file=sys.stderr)
    print(file=sys.stderr)
    expected = fragment.removeprefix("sha256=") if fragment.startswith("sha256=") else None
    if expected is not None and digest.hexdigest() != expected:
        partial.unlink()
        raise SystemExit(f"{target.name}: sha256 {digest.hexdigest()} is not the index's {expected}")
    partial.replace(target)
    return target


class HttpRangeFile(io.RawIOBase):
    """A read-only, seekable view of a remote file through HTTP range requests (for `zipfile`), with a cache of
    the ranges fetched (`prefetch` one large range, then read its members from memory)."""

    def __init__(self, url: str, size: int) -> None:
        super().__init__()
        self.url = url
        self.size = size
        self.pos = 0
        self.chunks: list[tuple[int, bytes]] = []

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.pos, io.SEEK_END: self.size}[whence]
        self.pos = max(0, base + offset)
        return self.pos

    def prefetch(self, start: int, end: int) -> None:
        """Fetch bytes [start, end) in one request and keep them."""
        headers = {"Range": f"bytes={start}-{end - 1}"}
        request = urllib.request.Request(self.url, headers=headers)  # noqa: S310 - an https PyPI file URL
        with urllib.request.urlopen(request, timeout=300) as response:  # noqa: S310
            self.chunks.append((start, response.read()))

    def readinto(self, buffer: Any) -> int:
        want = min(len(buffer), self.size - self.pos)
        if want <= 0:
            return 0
        data = self._cached(self.pos, want)
        if data is None:
            self.prefetch(self.pos, min(self.size, self.pos + max(want, 1 << 16)))
            data = self._cached(self.pos, want)
        assert data is not None
        buffer[: len(data)] = data
        self.pos += len(data)
        return len(data)

    def _cached(self, start: int, length: int) -> bytes | None:
        for begin, data in self.chunks:
            if begin <= start and start + length <= begin + len(data):
                return data[start - begin : start - begin + length]
        return None


def wanted(path: str) -> bool:
    """Whether a file of vLLM is kept: the Python files of the model code."""
    return path.startswith(WANTED_PREFIXES) and path.endswith(".py")


def wheel_models(url: str, target: Path) -> Path:
    """The model files of a remote wheel, saved as a small zip at `target` (one ranged read of their span)."""
    request = urllib.request.Request(url, method="HEAD")  # noqa: S310 - an https PyPI file URL
    with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310
        size = int(response.headers["Content-Length"])
    remote = HttpRangeFile(url, size)
    remote.prefetch(max(0, size - (16 << 20)), size)  # the central directory sits at the end
    with zipfile.ZipFile(io.BufferedReader(remote, buffer_size=1 << 16)) as wheel:
        members = [m for m in wheel.infolist() if wanted(m.filename)]
        start = min(m.header_offset for m in members)
        end = max(m.header_offset + m.compress_size for m in members) + (1 << 16)
        log(f"  {PurePosixPath(url).name}: reading {len(members)} model files ({(end - start) / 2**20:.1f} MiB)")
        remote.prefetch(start, min(size, end))
        partial = target.with_suffix(".part")
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as out:
            for member in members:
                out.writestr(member.filename, wheel.read(member))
    partial.replace(target)
    return target


def wheel_name(links: Mapping[str, str], version: str) -> str | None:
    """A wheel of `version` on the index (x86_64 preferred), or None."""
    wheels = sorted(n for n in links if n.startswith(f"vllm-{version}-") and n.endswith(".whl"))
    preferred = [n for n in wheels if "x86_64" in n]
    chosen = preferred or wheels
    return chosen[0] if chosen else None


@dataclass(frozen=True)
class Fetched:
    """Where one version's files are, or why it was not read."""

    version: str
    path: Path | None
    decision: dict[str, str] | None = None  # recorded in the output (skipped, or read from a wheel)


def fetch_version(version: str, links: Mapping[str, str]) -> Fetched:
    """The cached sdist (downloaded when missing), else the wheel's model files, else a skip decision."""
    CACHE.mkdir(parents=True, exist_ok=True)
    sdist = f"vllm-{version}.tar.gz"
    cached = CACHE / sdist
    if cached.is_file():
        return Fetched(version, cached)
    if sdist in links:
        log(f"downloading {sdist}")
        return Fetched(version, download(links[sdist], cached))
    wheel = wheel_name(links, version)
    if wheel is not None:
        target = CACHE / f"vllm-{version}.models.zip"
        if not target.is_file():
            wheel_models(links[wheel].partition("#")[0], target)
        reason = f"no sdist on PyPI: the model files were read from the wheel {wheel} (the same Python sources)"
        return Fetched(version, target, {"version": version, "decision": reason})
    reason = "not published on PyPI (no sdist, no wheel): skipped; lookups fall back to the nearest earlier version"
    return Fetched(version, None, {"version": version, "decision": reason})


# ---------------------------------------------------------------------------------------------------------
# Source trees: path → text of the files read, and how a line is cited.


@dataclass
class SourceTree:
    """The Python files of one release (`files`: path → text) and its tag, for `tag:path:line` citations."""

    tag: str
    files: dict[str, str]

    def read(self, path: str) -> str | None:
        return self.files.get(path)


def sdist_tree(path: Path, tag: str) -> SourceTree:
    """The model files of an sdist (`vllm-X/...` inside the .tar.gz) or of a saved wheel subset (.zip)."""
    files: dict[str, str] = {}
    if path.suffix == ".zip":
        with zipfile.ZipFile(path) as archive:
            for name in archive.namelist():
                if wanted(name):
                    files[name] = archive.read(name).decode("utf-8", errors="replace")
        return SourceTree(tag, files)
    with tarfile.open(path, "r:gz") as tar:
        for member in tar:
            rel = "/".join(PurePosixPath(member.name).parts[1:])
            if member.isfile() and wanted(rel):
                handle = tar.extractfile(member)
                if handle is not None:
                    files[rel] = handle.read().decode("utf-8", errors="replace")
    return SourceTree(tag, files)


def git_tree(repo: Path, tag: str) -> SourceTree:
    """The `vllm_ascend/**.py` files of one vllm-ascend tag of a (bare) git repository (one `git archive`)."""
    command = ["git", f"--git-dir={repo}", "archive", "--format=tar", tag, "vllm_ascend"]
    data = subprocess.run(command, check=True, capture_output=True).stdout
    files: dict[str, str] = {}
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        for member in tar:
            handle = tar.extractfile(member) if member.isfile() and member.name.endswith(".py") else None
            if handle is not None:
                files[member.name] = handle.read().decode("utf-8", errors="replace")
    return SourceTree(tag, files)


# ---------------------------------------------------------------------------------------------------------
# The registry: module-level dicts of `"Arch": ("module", "Class")` (pure: source text in, entries out).


@dataclass(frozen=True)
class RegistryEntry:
    """One `"Arch": ("module", "Class")` entry; `line` is the line of the key in registry.py."""

    arch: str
    module: str
    cls: str
    line: int


@dataclass(frozen=True)
class Registration:
    """An architecture as the registry resolves it: the winning entry and every dict that lists it."""

    arch: str
    module: str
    cls: str
    line: int
    dicts: tuple[str, ...]

    @property
    def multimodal(self) -> bool:
        return MULTIMODAL_DICT in self.dicts

    @property
    def pooling(self) -> bool:
        return all(POOLING_DICT.search(name) for name in self.dicts)


@dataclass
class RegistryDicts:
    """The registration dicts of registry.py in file order, and the aggregates (dicts of `**` merges only)."""

    dicts: dict[str, list[RegistryEntry]] = field(default_factory=dict)
    aggregates: dict[str, list[str]] = field(default_factory=dict)


def _assigned_dict(node: ast.stmt) -> tuple[str, ast.Dict] | None:
    """`NAME = {...}` / `NAME: T = {...}` at module level: (NAME, the dict), else None."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target, value = node.targets[0], node.value
    elif isinstance(node, ast.AnnAssign) and node.value is not None:
        target, value = node.target, node.value
    else:
        return None
    if isinstance(target, ast.Name) and isinstance(value, ast.Dict):
        return target.id, value
    return None


def _entry(key: ast.expr, value: ast.expr) -> RegistryEntry | None:
    """`"Arch": ("module", "Class")` → an entry; anything else → None."""
    if not (isinstance(key, ast.Constant) and isinstance(key.value, str) and isinstance(value, ast.Tuple)):
        return None
    parts = value.elts
    if len(parts) != 2 or not all(isinstance(p, ast.Constant) and isinstance(p.value, str) for p in parts):
        return None
    module, cls = (p.value for p in parts if isinstance(p, ast.Constant))
    return RegistryEntry(key.value, str(module), str(cls), key.lineno)


def dict_entries(node: ast.Dict, known: Mapping[str, list[RegistryEntry]]) -> tuple[list[RegistryEntry], bool]:
    """(the entries of one dict literal, whether it is made only of `**NAME` merges). `**NAME` copies an earlier
    dict's entries (their own lines), `**{...}` a nested literal, `**{k: v for ... in NAME.items() if ...}` the
    entries of NAME the comprehension keeps (`comprehension_entries`). Non-registration values are skipped."""
    out: list[RegistryEntry] = []
    merges_only = bool(node.keys)
    for key, value in zip(node.keys, node.values, strict=True):
        if key is not None:
            merges_only = False
            found = _entry(key, value)
            if found is not None:
                out.append(found)
        elif isinstance(value, ast.Name):
            out.extend(known.get(value.id, []))
        else:
            merges_only = False
            if isinstance(value, ast.Dict):
                out.extend(dict_entries(value, known)[0])
            elif isinstance(value, ast.DictComp):
                out.extend(comprehension_entries(value, known))
            else:
                raise ValueError(f"line {value.lineno}: unsupported ** merge {ast.unparse(value)[:80]}")
    return out, merges_only


def _bind(target: ast.expr, value: Any, env: dict[str, Any]) -> None:
    """Bind a `for` target (a name or nested tuple of names) to a value."""
    if isinstance(target, ast.Name):
        env[target.id] = value
    elif isinstance(target, ast.Tuple) and isinstance(value, tuple) and len(target.elts) == len(value):
        for part, item in zip(target.elts, value, strict=True):
            _bind(part, item, env)
    else:
        raise ValueError(f"line {target.lineno}: unsupported comprehension target {ast.unparse(target)}")


def _evaluate(node: ast.expr, env: Mapping[str, Any]) -> Any:
    """The value of a comprehension's key, value or condition: names bound by the loop, constants, tuples,
    comparisons (==, !=, in, not in, `.startswith`), and / or / not. Anything else raises ValueError."""
    if isinstance(node, ast.Name) and node.id in env:
        return env[node.id]
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return tuple(_evaluate(e, env) for e in node.elts)
    if isinstance(node, ast.BoolOp):
        values = [_evaluate(v, env) for v in node.values]
        return all(values) if isinstance(node.op, ast.And) else any(values)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return not _evaluate(node.operand, env)
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        left, right = _evaluate(node.left, env), _evaluate(node.comparators[0], env)
        ops: dict[type, Any] = {
            ast.Eq: lambda a, b: a == b,
            ast.NotEq: lambda a, b: a != b,
            ast.In: lambda a, b: a in b,
            ast.NotIn: lambda a, b: a not in b,
        }
        if type(node.ops[0]) in ops:
            return ops[type(node.ops[0])](left, right)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "startswith":
        return str(_evaluate(node.func.value, env)).startswith(_evaluate(node.args[0], env))
    raise ValueError(f"line {node.lineno}: unsupported expression {ast.unparse(node)[:80]}")


def comprehension_entries(node: ast.DictComp, known: Mapping[str, list[RegistryEntry]]) -> list[RegistryEntry]:
    """The entries `{k: (mod, cls) for k, (mod, cls) in NAME.items() if COND}` produces, evaluated over NAME's
    entries (which keep their own lines). One generator over `NAME.items()` of an earlier dict."""
    if len(node.generators) != 1:
        raise ValueError(f"line {node.lineno}: one generator expected")
    gen = node.generators[0]
    it = gen.iter
    if not (
        isinstance(it, ast.Call)
        and isinstance(it.func, ast.Attribute)
        and it.func.attr == "items"
        and isinstance(it.func.value, ast.Name)
    ):
        raise ValueError(f"line {node.lineno}: only `for ... in NAME.items()` is supported")
    out: list[RegistryEntry] = []
    for entry in known.get(it.func.value.id, []):
        env: dict[str, Any] = {}
        _bind(gen.target, (entry.arch, (entry.module, entry.cls)), env)
        if not all(_evaluate(cond, env) for cond in gen.ifs):
            continue
        key, value = _evaluate(node.key, env), _evaluate(node.value, env)
        if isinstance(key, str) and isinstance(value, tuple) and len(value) == 2:
            out.append(RegistryEntry(key, str(value[0]), str(value[1]), entry.line))
    return out


def registry_dicts(source: str) -> RegistryDicts:
    """Every module-level registration dict of a registry.py source, in file order (see `dict_entries`); a dict
    with neither registrations nor merges (e.g. `_PREVIOUSLY_SUPPORTED_MODELS`: name → version) is left out."""
    found = RegistryDicts()
    for node in ast.parse(source).body:
        assigned = _assigned_dict(node)
        if assigned is None:
            continue
        name, literal = assigned
        entries, merges_only = dict_entries(literal, found.dicts)
        if merges_only:
            found.aggregates[name] = [v.id for v in literal.values if isinstance(v, ast.Name)]
        elif entries:
            found.dicts[name] = entries
    return found


def registrations(source: str) -> dict[str, Registration]:
    """Architecture → its registration, as vLLM resolves it: the entry of the last dict in the aggregate's merge
    order (`_VLLM_MODELS`: later dicts win) — dicts outside any aggregate before it — and every dict listing it."""
    found = registry_dicts(source)
    merged = [name for names in found.aggregates.values() for name in names]
    order = [name for name in found.dicts if name not in merged] + [n for n in merged if n in found.dicts]
    winner: dict[str, RegistryEntry] = {}
    where: dict[str, list[str]] = {}
    for name in order:
        for entry in found.dicts[name]:
            winner[entry.arch] = entry
            if name not in where.setdefault(entry.arch, []):
                where[entry.arch].append(name)
    return {arch: Registration(arch, e.module, e.cls, e.line, tuple(sorted(where[arch]))) for arch, e in winner.items()}


def ascend_registrations(source: str) -> list[RegistryEntry]:
    """`ModelRegistry.register_model("Arch", "package.module:Class")` calls in a vllm-ascend source (any depth:
    inside `register_model()` functions and `if` branches); `line` is the line of the architecture string."""
    out: list[RegistryEntry] = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call) or len(node.args) < 2:
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        arch, target = node.args[0], node.args[1]
        if name != "register_model" or not isinstance(arch, ast.Constant) or not isinstance(target, ast.Constant):
            continue
        if isinstance(arch.value, str) and isinstance(target.value, str) and ":" in target.value:
            module, cls = target.value.split(":", 1)
            out.append(RegistryEntry(arch.value, module, cls, arch.lineno))
    return sorted(out, key=lambda e: e.line)


# ---------------------------------------------------------------------------------------------------------
# Model modules: what one file says (pure), and the traits of a registered class across files.

# vLLM's fused-MoE layer, by name: FusedMoE, SharedFusedMoE, FusedMoEFactory (0.3x), fused_moe, fused_experts,
# and vllm-ascend's AscendFusedMoE / TorchairAscendFusedMoE; a `fused_moe` package in an import path counts too.
MOE_NAME = re.compile(r"FusedMoE|fused_moe|fused_experts")
MLA_FIELD = "kv_lora_rank"
# Also MLA: vLLM's MLA layer imported by name (`MultiHeadLatentAttentionWrapper`, `MLAModules`,
# `DeepseekV4MLAModules`), or anything from its MLA attention backends (`vllm.v1.attention.backends.mla.*`,
# `...flashmla`): DeepSeek V4 reads no kv_lora_rank but is built from those. The module path is matched a whole
# part at a time, so the Transformers backend's generic `layers.attention.mla_attention` helpers (and its
# `MLAAttention`, which serves any checkpoint that turns out to be MLA) do not count.
MLA_NAME = re.compile(r"MultiHeadLatentAttention|MLAModules")
MLA_MODULE = re.compile(r"mla|flashmla|sparse_mla")
HYBRID_INTERFACE = "IsHybrid"
REEXPORT_HOPS = 1  # how far a registered class or a base class is followed through imports
# a composite model (Kimi-VL, Kimi-K2.5) may build its language model through the registry, by architecture name
DELEGATE_CALL = "init_vllm_registered_model"


@dataclass
class ModuleFacts:
    """What one Python file says: where it first uses the fused-MoE layer / reads `kv_lora_rank` (line, or
    None); its classes (name → base names as written, dotted); its imports (local name → every (absolute
    module, imported name) it is bound to: platform branches bind one name several times); the names it calls
    or subclasses; and, per top-level class or function, the names its body refers to (`refs`) plus the local
    names that are the fused-MoE layer (`moe_names`), for `reaches`."""

    moe: int | None = None
    mla: int | None = None
    classes: dict[str, list[str]] = field(default_factory=dict)
    imports: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    used: set[str] = field(default_factory=set)
    refs: dict[str, set[str]] = field(default_factory=dict)
    moe_names: set[str] = field(default_factory=set)
    mla_names: set[str] = field(default_factory=set)
    # architectures it builds through the registry: `init_vllm_registered_model(..., architectures=["X"])`
    delegates: set[str] = field(default_factory=set)

    def reaches(self, name: str) -> tuple[bool, bool]:
        """(MoE, MLA) of one top-level class or function: whether it, or a definition of this file it refers to
        (transitively: its bases, what it builds and calls), uses the fused-MoE layer / reads `kv_lora_rank`."""
        seen: set[str] = set()
        todo = [name]
        moe = mla = False
        while todo:
            current = todo.pop()
            if current in seen or current not in self.refs:
                continue
            seen.add(current)
            refs = self.refs[current]
            moe = moe or bool(refs & self.moe_names) or any(MOE_NAME.search(r) for r in refs)
            mla = mla or MLA_FIELD in refs or bool(refs & self.mla_names)
            todo.extend(refs & self.refs.keys())
        return moe, mla


def absolute_module(module: str, is_package: bool, level: int, name: str | None) -> str:
    """The absolute module of `from <level dots><name> import ...` written in `module`."""
    if level == 0:
        return name or ""
    parts = module.split(".") if is_package else module.split(".")[:-1]
    parts = parts[: len(parts) - (level - 1)] if level > 1 else parts
    return ".".join([*parts, *([name] if name else [])])


def _dotted(node: ast.expr) -> str:
    """`a.b.C` / `C` as text; other expressions (subscripts, calls) as ''."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else ""
    return ""


def _earliest(current: int | None, line: int) -> int:
    return line if current is None else min(current, line)


def _record_import(node: ast.ImportFrom, module: str, is_package: bool, facts: ModuleFacts) -> None:
    source = absolute_module(module, is_package, node.level, node.module)
    parts = source.split(".")
    from_moe = any(MOE_NAME.fullmatch(p) for p in parts)
    from_mla = any(MLA_MODULE.fullmatch(p) for p in parts)
    for alias in node.names:
        local = alias.asname or alias.name
        facts.imports.setdefault(local, []).append((source, alias.name))
        if from_moe or MOE_NAME.search(alias.name):
            facts.moe_names.add(local)
            facts.moe = _earliest(facts.moe, node.lineno)
        if from_mla or MLA_NAME.search(alias.name):
            facts.mla_names.add(local)
            facts.mla = _earliest(facts.mla, node.lineno)


def _record_node(node: ast.AST, facts: ModuleFacts) -> None:
    """Calls, class definitions, `kv_lora_rank` reads, `import ...fused_moe`."""
    if isinstance(node, ast.Call):
        name = _dotted(node.func).rsplit(".", 1)[-1]
        facts.used.add(name)
        if MOE_NAME.search(name):
            facts.moe = _earliest(facts.moe, node.lineno)
        if name == DELEGATE_CALL:
            facts.delegates.update(_constant_architectures(node))
    elif isinstance(node, ast.ClassDef):
        bases = [_dotted(b) for b in node.bases]
        facts.classes[node.name] = [b for b in bases if b]
        facts.used.update(b for b in bases if b and "." not in b)
    elif isinstance(node, ast.Import):
        if any(MOE_NAME.fullmatch(p) for alias in node.names for p in alias.name.split(".")):
            facts.moe = _earliest(facts.moe, node.lineno)
    elif (isinstance(node, ast.Attribute) and node.attr == MLA_FIELD) or (
        isinstance(node, ast.Constant) and node.value == MLA_FIELD
    ):
        facts.mla = _earliest(facts.mla, node.lineno)


def _constant_architectures(call: ast.Call) -> list[str]:
    """The string constants of a call's `architectures=[...]` keyword."""
    for keyword in call.keywords:
        if keyword.arg == "architectures" and isinstance(keyword.value, (ast.List, ast.Tuple)):
            return [e.value for e in keyword.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def _names_in(node: ast.AST) -> set[str]:
    """Every name, attribute name and string constant `kv_lora_rank` a definition's body refers to."""
    out: set[str] = set()
    for inner in ast.walk(node):
        if isinstance(inner, ast.Name):
            out.add(inner.id)
        elif isinstance(inner, ast.Attribute):
            out.add(inner.attr)
        elif isinstance(inner, ast.Constant) and inner.value == MLA_FIELD:
            out.add(MLA_FIELD)
    return out


def module_facts(source: str, module: str = "", is_package: bool = False) -> ModuleFacts:
    """Pure: the facts of one file (`module`: its dotted name, for relative imports). Imports anywhere count
    (function-level and platform-branch imports too); so do module-level aliases `NewName = OldClass`, which are
    recorded as a class with that one base."""
    facts = ModuleFacts()
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            _record_import(node, module, is_package, facts)
        else:
            _record_node(node, facts)
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            facts.refs[node.name] = _names_in(node) - {node.name}
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            target, value = node.targets[0].id, _dotted(node.value)
            if value and target not in facts.classes and (value in facts.classes or value in facts.imports):
                facts.classes[target] = [value]
                facts.refs[target] = {value}
    return facts


def module_file(module: str, files: Mapping[str, str] | Iterable[str]) -> str | None:
    """The file of a registry module: `qwen2` → vllm/model_executor/models/qwen2.py; a dotted module
    (`vllm.models.deepseek_v4`, `vllm_ascend.models.x`) → its .py file or its package's `__init__.py`."""
    base = module.replace(".", "/") if "." in module else f"{MODELS_DIR}/{module}"
    for candidate in (f"{base}.py", f"{base}/__init__.py"):
        if candidate in files:
            return candidate
    return None


def dotted_name(path: str) -> tuple[str, bool]:
    """(dotted module name, is a package) of a file path."""
    parts = path[: -len(".py")].split("/")
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), True
    return ".".join(parts), False


class Analyzer:
    """The traits of registered classes in one source tree (vLLM's files, plus a vllm-ascend tag's when
    analysing its registrations). `followed`: the files whose MoE / MLA a module that uses their classes takes
    on (the registry's modules and the model packages, never helpers such as utils.py or interfaces.py)."""

    def __init__(self, files: Mapping[str, str], followed: set[str], inherit: int = 0) -> None:
        self.files = files
        self.followed = followed
        self.inherit = inherit  # imported base classes whose full MoE / MLA a class takes (see `moe_mla`)
        self._facts: dict[str, ModuleFacts | None] = {}

    def facts(self, path: str) -> ModuleFacts | None:
        """The file's facts (parsed once); None when it is not in the tree or does not parse."""
        if path not in self._facts:
            text = self.files.get(path)
            try:
                self._facts[path] = None if text is None else module_facts(text, *dotted_name(path))
            except SyntaxError as exc:
                log(f"  warning: {path} does not parse ({exc.msg}, line {exc.lineno})")
                self._facts[path] = None
        return self._facts[path]

    def _imported(self, facts: ModuleFacts, name: str) -> Iterator[tuple[str, str]]:
        """(file, name there) for each module a local name is imported from, when the file is in the tree."""
        for module, original in facts.imports.get(name, []):
            path = module_file(module, self.files)
            if path is not None:
                yield path, original

    def defining(self, path: str, cls: str, hops: int = REEXPORT_HOPS) -> list[str]:
        """The files defining `cls` as seen from `path`: itself, or (imported, re-exported) the modules it is
        imported from, `hops` imports deep."""
        facts = self.facts(path)
        if facts is None:
            return []
        if cls in facts.classes:
            return [path]
        if hops <= 0:
            return []
        return sorted({d for p, name in self._imported(facts, cls) for d in self.defining(p, name, hops - 1)})

    def hybrid(self, path: str, cls: str, hops: int = REEXPORT_HOPS, seen: frozenset[str] = frozenset()) -> bool:
        """Whether `cls` (or a base it inherits: same file, or `hops` imports away) lists `IsHybrid`."""
        facts = self.facts(path)
        if facts is None or f"{path}:{cls}" in seen:
            return False
        seen = seen | {f"{path}:{cls}"}
        if cls not in facts.classes:
            return hops > 0 and any(self.hybrid(p, n, hops - 1, seen) for p, n in self._imported(facts, cls))
        for base in facts.classes[cls]:
            if base.rsplit(".", 1)[-1] == HYBRID_INTERFACE:
                return True
            if base in facts.classes and self.hybrid(path, base, hops, seen):
                return True
            if hops > 0 and any(self.hybrid(p, n, hops - 1, seen) for p, n in self._imported(facts, base)):
                return True
        return False

    def moe_mla(self, path: str, cls: str, depth: int | None = None) -> tuple[bool, bool]:
        """MoE / MLA of a registered class. Its defining module decides, as a whole (a module holding a dense
        and a MoE variant marks both MoE); and one level further, each class it subclasses or calls from another
        model module, by what that class reaches in its own module (`ModuleFacts.reaches`: Qwen3-VL-MoE's text
        model subclasses qwen3_moe's, Granite-MoE-Shared calls granitemoe's MoE block; a dense encoder borrowed
        from a module that also holds a MoE variant does not count). With `inherit` (vllm-ascend's classes,
        which subclass vLLM's models), an imported base class of the registered class brings its full MoE / MLA
        as vLLM's own analysis finds them, `inherit` bases deep."""
        depth = self.inherit if depth is None else depth
        moe = mla = False
        for defining in self.defining(path, cls) or [path]:
            facts = self.facts(defining)
            if facts is None:
                continue
            moe, mla = moe or facts.moe is not None, mla or facts.mla is not None
            own_bases = set(facts.classes.get(cls, []))
            for name in sorted(facts.used & facts.imports.keys()):
                for other, original in self._imported(facts, name):
                    if other == defining or other not in self.followed:
                        continue
                    if name in own_bases and depth > 0:
                        more = self.moe_mla(other, original, depth - 1)
                    else:
                        more = self._class_reaches(other, original)
                    moe, mla = moe or more[0], mla or more[1]
        return moe, mla

    def _class_reaches(self, path: str, name: str) -> tuple[bool, bool]:
        """`ModuleFacts.reaches` of a class in its defining module (through one re-export)."""
        for defining in self.defining(path, name):
            facts = self.facts(defining)
            if facts is not None:
                return facts.reaches(name)
        return False, False

    def delegates(self, module: str, cls: str) -> set[str]:
        """The architectures a registered class's defining module(s) build through the registry by name."""
        path = module_file(module, self.files)
        if path is None:
            return set()
        found = [self.facts(d) for d in self.defining(path, cls) or [path]]
        return {arch for facts in found if facts is not None for arch in facts.delegates}

    def traits(self, module: str, cls: str) -> dict[str, bool] | None:
        """{hybrid, mla, moe} of a registered (module, class); None when the module is not in the tree."""
        path = module_file(module, self.files)
        if path is None or self.facts(path) is None:
            return None
        moe, mla = self.moe_mla(path, cls)
        return {"hybrid": self.hybrid(path, cls), "mla": mla, "moe": moe}


def followed_files(files: Iterable[str], modules: Iterable[str]) -> set[str]:
    """The model files a module's use of their classes is followed into: the registry's modules, every file of
    vLLM's model packages (`vllm/models/`) and vllm-ascend's model folders."""
    names = set(files)
    out = {p for p in (module_file(m, names) for m in modules) if p is not None}
    roots = ("vllm/models/", "vllm_ascend/models/", "vllm_ascend/torchair/models/")
    return out | {p for p in names if p.startswith(roots)}


# ---------------------------------------------------------------------------------------------------------
# Per release: the records of every architecture; then spans over the releases.

Record = dict[str, Any]
NO_TRAITS = {"hybrid": False, "mla": False, "moe": False}


def vllm_records(tree: SourceTree) -> dict[str, Record]:
    """Architecture → record (traits, `model`, `source`) of one vLLM version's registry."""
    text = tree.read(REGISTRY)
    if text is None:
        raise SystemExit(f"{tree.tag}: no {REGISTRY}")
    found = registrations(text)
    analyzer = Analyzer(tree.files, followed_files(tree.files, {r.module for r in found.values()}))
    out: dict[str, Record] = {}
    for arch, reg in sorted(found.items()):
        traits = analyzer.traits(reg.module, reg.cls)
        if traits is None:
            log(f"  warning: {tree.tag}: {arch}: module {reg.module} not found; MoE / MLA / hybrid left false")
        out[arch] = {
            **(traits or NO_TRAITS),
            "multimodal": reg.multimodal,
            "pooling": reg.pooling,
            "model": f"{reg.module}:{reg.cls}",
            "source": f"{tree.tag}:{REGISTRY}:{reg.line}",
        }
    delegated = {arch: analyzer.delegates(reg.module, reg.cls) for arch, reg in found.items()}
    return with_delegates(out, delegated, out)


def with_delegates(
    records: dict[str, Record], delegated: Mapping[str, set[str]], known: Mapping[str, Record]
) -> dict[str, Record]:
    """Records whose model builds another registered architecture by name (`init_vllm_registered_model(...,
    architectures=["DeepseekV2ForCausalLM"])`) take that architecture's MoE / MLA (as first found: one level)."""
    out = {arch: dict(record) for arch, record in records.items()}
    for arch, names in delegated.items():
        for name in sorted(names):
            if arch in out and name in known:
                for key in ("mla", "moe"):
                    out[arch][key] = out[arch][key] or bool(known[name][key])
    return out


def ascend_entries(tree: SourceTree) -> list[tuple[str, RegistryEntry]]:
    """(file, entry) of every `register_model` call of a vllm-ascend tag, in file and line order."""
    out: list[tuple[str, RegistryEntry]] = []
    for path in sorted(tree.files):
        text = tree.files[path]
        if "register_model(" in text:
            out.extend((path, entry) for entry in ascend_registrations(text))
    return out


def ascend_records(tree: SourceTree, vllm: SourceTree | None, vllm_found: Mapping[str, Record]) -> dict[str, Record]:
    """Architecture → record of the architectures one vllm-ascend tag registers, its modules analysed with the
    vLLM sources of the tag's pin next to them (so base classes imported from vLLM are followed). Several
    registrations of one architecture (if/else branches, the torchair variants): traits of any of them; the
    source is the first. Multimodal / pooling are vLLM's registry's for the same architecture (false when vLLM
    does not register it)."""
    files = {**(vllm.files if vllm else {}), **tree.files}
    entries = ascend_entries(tree)
    modules = {r["model"].split(":")[0] for r in vllm_found.values()} | {e.module for _, e in entries}
    analyzer = Analyzer(files, followed_files(files, modules), inherit=1)
    out: dict[str, Record] = {}
    delegated: dict[str, set[str]] = {}
    for path, entry in entries:
        traits = analyzer.traits(entry.module, entry.cls)
        if traits is None:
            log(f"  warning: {tree.tag}: {entry.arch}: module {entry.module} not found; traits left false")
        known = vllm_found.get(entry.arch, {})
        record = out.setdefault(
            entry.arch,
            {
                **NO_TRAITS,
                "multimodal": bool(known.get("multimodal")),
                "pooling": bool(known.get("pooling")),
                "model": f"{entry.module}:{entry.cls}",
                "source": f"{tree.tag}:{path}:{entry.line}",
            },
        )
        for key, value in (traits or NO_TRAITS).items():
            record[key] = record[key] or value
        delegated.setdefault(entry.arch, set()).update(analyzer.delegates(entry.module, entry.cls))
    return with_delegates(out, delegated, vllm_found)


IDENTITY = (*TRAIT_KEYS, "model")


def spans(per_release: Sequence[tuple[str, Mapping[str, Record]]]) -> dict[str, list[Record]]:
    """Architecture → spans of consecutive releases (in the given order) whose records agree on the traits and
    the model class: `{"from", "to", traits..., "model", "source"}`, the source of the span's first release. A
    release without the architecture ends its span."""
    out: dict[str, list[Record]] = {}
    current: dict[str, Record] = {}
    for release, records in per_release:
        for arch in [a for a in current if a not in records]:
            del current[arch]
        for arch, record in sorted(records.items()):
            span = current.get(arch)
            if span is not None and all(span[k] == record[k] for k in IDENTITY):
                span["to"] = release
                continue
            span = {"from": release, "to": release, **{k: record[k] for k in (*IDENTITY, "source")}}
            current[arch] = span
            out.setdefault(arch, []).append(span)
    return out


def render(data: Mapping[str, Any]) -> str:
    """The output JSON: sorted keys, one architecture per line (compact inside), so a rerun's diff is per line."""
    lines = ["{"]
    keys = sorted(data)
    for i, key in enumerate(keys):
        comma = "," if i < len(keys) - 1 else ""
        value = data[key]
        if key == "architectures":
            archs = sorted(value)
            lines.append(f"{json.dumps(key)}:{{")
            for j, arch in enumerate(archs):
                tail = "," if j < len(archs) - 1 else ""
                body = json.dumps(value[arch], sort_keys=True, separators=(",", ":"))
                lines.append(f"{json.dumps(arch)}:{body}{tail}")
            lines.append("}" + comma)
        else:
            lines.append(f"{json.dumps(key)}:{json.dumps(value, sort_keys=True, separators=(',', ':'))}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------------------
# The run.


def nearest_earlier(version: str, read: Sequence[str]) -> str | None:
    """The newest version in `read` at or before `version` (else the oldest), or None when nothing was read."""
    earlier = [v for v in read if version_key(v) <= version_key(version)]
    if earlier:
        return earlier[-1]
    return read[0] if read else None


def context_version(pin: str, read: Sequence[str]) -> str | None:
    """The vLLM version whose sources a vllm-ascend tag's modules are analysed with: its pin when read; for a
    pre-release pin that was not (0.11.0rc3), the final of the same release when read (0.11.0: the closer
    sources); else the nearest earlier version."""
    if pin in read:
        return pin
    base = str(version_key(pin).base_version)
    if version_key(pin).is_prerelease and base in read:
        return base
    return nearest_earlier(pin, read)


def read_vllm(versions: Sequence[str]) -> tuple[dict[str, SourceTree | None], list[dict[str, str]]]:
    """Fetch each version (see `fetch_version`): version → tree (None: skipped), and the decisions."""
    links = fetch_index()
    trees: dict[str, SourceTree | None] = {}
    decisions: list[dict[str, str]] = []
    for version in versions:
        fetched = fetch_version(version, links)
        if fetched.decision is not None:
            decisions.append(fetched.decision)
        trees[version] = None if fetched.path is None else sdist_tree(fetched.path, f"v{version}")
    read = [v for v, t in trees.items() if t is not None]
    for decision in decisions:
        if trees.get(decision["version"]) is None:
            use = nearest_earlier(decision["version"], read)
            if use is not None:
                decision["use"] = use
    return trees, decisions


def mirror_tags(repo: Path) -> set[str]:
    """The tags of the vllm-ascend mirror."""
    out = subprocess.run(["git", f"--git-dir={repo}", "tag"], check=True, capture_output=True).stdout
    return set(out.decode().split())


def ascend_decisions(
    tags: Mapping[str, str], present: set[str], read: Sequence[str], skipped: set[str]
) -> list[dict[str, str]]:
    """Decisions about vllm-ascend tags: a release with no tag in the repository (the PyPI-only post release) is
    not read (its lookups use the nearest earlier tag); a tag whose vLLM pin was not read is analysed with
    `context_version`'s sources (said on the pin's own decision: `vllm_ascend_sources`)."""
    out: list[dict[str, str]] = []
    for tag in tags:
        if tag not in present:
            use = nearest_earlier(tag, sorted(present & set(tags), key=version_key))
            reason = "not a tag of the vllm-ascend repository (a PyPI-only release): not read"
            out.append({"version": tag, "decision": reason, **({"use": use} if use else {})})
    for pin in sorted({tags[t] for t in tags if t in present and tags[t] in skipped}, key=version_key):
        out.append({"version": pin, "vllm_ascend_sources": str(context_version(pin, read))})
    return out


def merge_decisions(decisions: Sequence[Mapping[str, str]]) -> list[dict[str, str]]:
    """One decision per version (the fields of several merged), in version order."""
    merged: dict[str, dict[str, str]] = {}
    for decision in decisions:
        merged.setdefault(decision["version"], {}).update(decision)
    return [merged[v] for v in sorted(merged, key=version_key)]


def extract(versions: Sequence[str], tags: Mapping[str, str], repo: Path | None) -> dict[str, Any]:
    """The whole output: vLLM spans per version, vllm-ascend spans per tag, what was read and decided."""
    trees, decisions = read_vllm(versions)
    read = [v for v, t in trees.items() if t is not None]
    present = mirror_tags(repo) if repo is not None else set()
    ascend_tags = [t for t in tags if t in present]
    skipped = {v for v, t in trees.items() if t is None}
    decisions += ascend_decisions(tags, present, read, skipped) if repo is not None else []
    per_version: list[tuple[str, dict[str, Record]]] = []
    per_tag: list[tuple[str, dict[str, Record]]] = []
    for version in read:
        tree = trees.pop(version)
        assert tree is not None
        log(f"vLLM {version}: {len(tree.files)} files")
        records = vllm_records(tree)
        per_version.append((version, records))
        for tag in [t for t in ascend_tags if context_version(tags[t], read) == version]:
            log(f"  vllm-ascend {tag} (vLLM {tags[tag]}, sources of {version})")
            assert repo is not None  # tags are present only with a repository
            per_tag.append((tag, ascend_records(git_tree(repo, tag), tree, records)))
    per_tag.sort(key=lambda item: version_key(item[0]))
    return assemble(per_version, per_tag, merge_decisions(decisions), {t: tags[t] for t in ascend_tags})


def assemble(
    per_version: Sequence[tuple[str, Mapping[str, Record]]],
    per_tag: Sequence[tuple[str, Mapping[str, Record]]],
    decisions: Sequence[Mapping[str, str]],
    tags: Mapping[str, str],
) -> dict[str, Any]:
    """The output document from the records per vLLM version and per vllm-ascend tag."""
    architectures: dict[str, dict[str, list[Record]]] = {}
    for key, found in (("vllm", spans(per_version)), ("vllm_ascend", spans(per_tag))):
        for arch, arch_spans in found.items():
            architectures.setdefault(arch, {})[key] = arch_spans
    return {
        "architectures": architectures,
        "decisions": list(decisions),
        "generated_by": "scripts/extract_architectures.py",
        "schema": SCHEMA,
        "vllm_ascend_tags": dict(tags),
        "vllm_versions": [v for v, _ in per_version],
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--versions", nargs="*", help="vLLM versions (default: every version the matrix pins)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--repo", type=Path, default=DEFAULT_REPO, help="vllm-ascend git mirror (may be bare)")
    parser.add_argument("--no-ascend", action="store_true", help="skip vllm-ascend's own registrations")
    args = parser.parse_args(argv)
    versions, tags = matrix_pins()
    if args.versions:
        versions = sorted(args.versions, key=version_key)
        tags = {t: v for t, v in tags.items() if v in versions}
    data = extract(versions, {} if args.no_ascend else tags, None if args.no_ascend else args.repo)
    text = render(data)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    log(f"wrote {args.out} ({len(text) / 1024:.0f} KiB, {len(data['architectures'])} architectures, sha256 {digest})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
