"""Extract what each vllm-ascend release reads from `--additional-config`, its env vars and its parser hook.

Maintainer script. For every tag it reads the Python files under `vllm_ascend/` straight from git objects
(`git ls-tree` + `git cat-file --batch` on `TAG:path`; nothing is checked out) and writes
`engine/ascendctl_engine/data/ascend_keys/<tag>.json`, the table `ascendctl_engine.adapters.ascend_keys` loads (its
module
docstring describes the format). Every fact carries a `TAG:path:line` source.

The release that exists only on PyPI (`--pypi-post 0.23.0.post1`, no git tag) is read from its sdist instead
(`--pypi-sdist FILE`, else `vllm_ascend-<version>.tar.gz` in `--cache`, else downloaded there from PyPI): the
same extraction over the sdist's `vllm_ascend/**/*.py`, its facts spelled
`v0.23.0.post1:PyPI:vllm_ascend-0.23.0.post1.tar.gz:path:line` as in scripts/extract_upstream.py.

    python scripts/extract_ascend_keys.py --repo /work/.mirror/vllm-project+vllm-ascend/repo   # every tag + PyPI
    python scripts/extract_ascend_keys.py --repo REPO --tags v0.13.0 v0.23.0 --out /tmp/keys
    python scripts/extract_ascend_keys.py --tags v0.23.0.post1                                 # only the sdist
    python scripts/extract_ascend_keys.py --repo REPO --pypi-post none                         # git tags only

How the keys are found (static reading with `ast`, no per-tag lists):
- every `X.additional_config` / `getattr(X, "additional_config", …)` is the root mapping;
- a mapping value flows through names, `self.` attributes (per class, two passes), `or {}` / `if … else {}`,
  call arguments and return values of functions and classes defined in the tag's own sources;
- reads: `m.get("k", d)`, `m.setdefault("k", d)`, `m.pop("k", d)`, `m["k"]`, `"k" in m`, `getattr(m, "k", d)`,
  with the key given literally or through a parameter bound to a literal at the call site (helper getters);
  a helper that returns one of its parameters when the key is missing gives that argument as the default;
- `Cls(**m)`: the parameters of `Cls.__init__` (or the fields of a dataclass) are the keys; extra keys go to
  `**kwargs` (ignored, and `kwargs.get(...)` reads are followed) or raise `TypeError`;
- loops over a mapping's keys (`for k, v in m.items()`, `set(m) - set(KNOWN)`): `raise` → unknown keys are an
  error, a logger warning → warned, `setattr`/`d[k] = v` → kept (copied through unchecked); the known keys of a
  `KNOWN` dict literal (`_defaults`) are keys too;
- env fallbacks: a default that is `envs.NAME` / `os.getenv("NAME")`, or a helper that checks `NAME in
  os.environ` before returning its fallback.
What cannot be followed (a call the sources do not define, a key computed at run time) is listed under
`unresolved` instead of guessed.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import hashlib
import json
import math
import operator
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Protocol

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "engine" / "ascendctl_engine" / "data" / "ascend_keys"
FIRST_TAG = "v0.7.1rc1"
LAST_TAG = "v0.25.1rc1"
PACKAGE = "vllm_ascend"
MAIN_CONFIG = "vllm_ascend/ascend_config.py"
SCHEMA = 1
DEFAULT_REPO = Path("/work/.mirror/vllm-project+vllm-ascend/repo")
DEFAULT_POST = "0.23.0.post1"  # a release on PyPI only (no git tag): read from its sdist
DEFAULT_CACHE = Path(tempfile.gettempdir()) / "ascendctl-upstream-cache"  # shared with scripts/extract_upstream.py
PYPI_PROJECT = "vllm-ascend"
PYPI_JSON_URL = f"https://pypi.org/pypi/{PYPI_PROJECT}/json"
PYPI_FILES = "https://files.pythonhosted.org/"

KeyPath = tuple[str, ...]
Where = Callable[[str, int], str]  # (path, line) → the `source` of a fact there
_MISSING: Any = object()
_POLICY_RANK = {"ignored": 0, "kept": 1, "warned": 2, "error": 3}
_CASTS = {"int": "int", "float": "float", "bool": "bool", "str": "str"}
_KEY_VIEWS = {"items", "keys", "values", "__iter__"}
_BENIGN_SINKS = {
    "isinstance",
    "len",
    "print",
    "repr",
    "str",
    "type",
    "id",
    "hash",
    "vars",
    "bool",
    "json.dumps",
    "copy.deepcopy",
    "copy.copy",
    "deepcopy",
}
_BENIGN_METHODS = {
    "info",
    "debug",
    "warning",
    "warning_once",
    "info_once",
    "error",
    "exception",
    "get",
    "setdefault",
    "pop",
    "update",
    "append",
    "extend",
    "add",
    "format",
    "join",
}
_WARN_METHODS = {"warning", "warn", "warning_once", "warn_once"}


# ----------------------------------------------------------------------------------------- source loading
class SourceTree(Protocol):
    """One release's `vllm_ascend/**/*.py`, and how a fact read from one of them names its place."""

    tag: str

    def sources(self) -> dict[str, str]:
        """path (as in the repository: `vllm_ascend/envs.py`) → text."""
        ...

    def src(self, path: str, line: int) -> str:
        """The `source` of a fact at `path:line` of this release."""
        ...


def git_where(tag: str) -> Where:
    """How facts read from git objects name their place: `TAG:path:line`."""
    return lambda path, line: f"{tag}:{path}:{line}"


def git(repo: Path, *args: str, stdin: bytes | None = None) -> bytes:
    return subprocess.run(["git", "-C", str(repo), *args], input=stdin, capture_output=True, check=True).stdout


def tag_sources(repo: Path, tag: str) -> dict[str, str]:
    """path → text of every `vllm_ascend/**/*.py` at `tag`, read from git objects."""
    listing = git(repo, "ls-tree", "-r", "-z", "--name-only", tag, "--", PACKAGE).decode()
    return read_blobs(repo, tag, [p for p in listing.split("\0") if p.endswith(".py")])


def read_blobs(repo: Path, tag: str, paths: Sequence[str]) -> dict[str, str]:
    """path → text of each `TAG:path`, in one `git cat-file --batch` (a path missing at the tag is left out)."""
    if not paths:
        return {}
    out = git(repo, "cat-file", "--batch", stdin="".join(f"{tag}:{p}\n" for p in paths).encode())
    files: dict[str, str] = {}
    pos = 0
    for path in paths:
        header_end = out.index(b"\n", pos)
        header = out[pos:header_end].split()
        if len(header) < 3 or header[-1] == b"missing":
            pos = header_end + 1
            continue
        size = int(header[2])
        files[path] = out[header_end + 1 : header_end + 1 + size].decode("utf-8", errors="replace")
        pos = header_end + 1 + size + 1
    return files


class GitTree:
    """A tag of a (bare) git repository; facts say `TAG:path:line`."""

    def __init__(self, repo: Path, tag: str) -> None:
        self.repo = repo
        self.tag = tag

    def sources(self) -> dict[str, str]:
        return tag_sources(self.repo, self.tag)

    def src(self, path: str, line: int) -> str:
        return git_where(self.tag)(path, line)


class SdistTree:
    """A release's sdist (`<name>-<version>/...` in a .tar.gz; the top folder is cut off, so paths are repo paths).

    Facts say `TAG:PyPI:<sdist file>:path:line`, as scripts/extract_upstream.py spells them.
    """

    def __init__(self, path: Path, tag: str) -> None:
        self.path = path
        self.tag = tag
        self.name = path.name

    def sources(self) -> dict[str, str]:
        files: dict[str, str] = {}
        with tarfile.open(self.path, "r:gz") as tar:
            for member in tar.getmembers():
                parts = PurePosixPath(member.name).parts
                if not member.isfile() or len(parts) < 2 or parts[1] != PACKAGE:
                    continue
                rel = "/".join(parts[1:])
                handle = tar.extractfile(member)
                if rel.endswith(".py") and handle is not None:
                    files[rel] = handle.read().decode("utf-8", errors="replace")
        return dict(sorted(files.items()))

    def src(self, path: str, line: int) -> str:
        return f"{self.tag}:PyPI:{self.name}:{path}:{line}"


def fetch_sdist(version: str, cache: Path) -> Path:
    """`vllm_ascend-<version>.tar.gz` from `cache`, else downloaded there from PyPI (checked against its sha256)."""
    path = cache / f"{PACKAGE}-{version}.tar.gz"
    if path.exists():
        return path
    try:
        with urllib.request.urlopen(PYPI_JSON_URL, timeout=60) as response:
            project: dict[str, Any] = json.load(response)
    except OSError as exc:
        raise SystemExit(f"{path} is not there and PyPI cannot be reached ({exc}); pass --pypi-sdist FILE") from exc
    files = project.get("releases", {}).get(version, [])
    record = next((f for f in files if f.get("packagetype") == "sdist"), None)
    if record is None:
        raise SystemExit(f"PyPI has no sdist of {PYPI_PROJECT}=={version}")
    url = str(record["url"])
    if not url.startswith("https://"):  # some indexes answer relative links (`../../packages/...`)
        url = PYPI_FILES + url[url.rfind("packages/") :]
    with urllib.request.urlopen(url, timeout=300) as response:  # noqa: S310 - an https PyPI file URL
        data = response.read()
    expected = record.get("digests", {}).get("sha256")
    if expected and hashlib.sha256(data).hexdigest() != expected:
        raise SystemExit(f"{url}: sha256 does not match PyPI's {expected}")
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / str(record["filename"])
    path.write_bytes(data)
    return path


def release_tags(repo: Path, first: str = FIRST_TAG, last: str = LAST_TAG) -> list[str]:
    from packaging.version import InvalidVersion, Version

    tags = []
    for name in git(repo, "tag").decode().split():
        try:
            tags.append((Version(name), name))
        except InvalidVersion:
            continue
    lo, hi = Version(first), Version(last)
    return [name for version, name in sorted(tags) if lo <= version <= hi]


# ------------------------------------------------------------------------------------------- the model
@dataclass(eq=False)
class Module:
    path: str
    name: str
    tree: ast.Module
    text: str
    imports: dict[str, str] = field(default_factory=dict)  # local name → dotted target
    defs: dict[str, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef] = field(default_factory=dict)
    consts: dict[str, ast.expr] = field(default_factory=dict)


@dataclass(eq=False)
class ClassInfo:
    mod: Module
    node: ast.ClassDef

    @property
    def key(self) -> str:
        return f"{self.mod.path}:{self.node.name}"

    def methods(self) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
        return {n.name: n for n in self.node.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}

    def attrs(self) -> dict[str, ast.expr]:
        found: dict[str, ast.expr] = {}
        for stmt in self.node.body:
            if isinstance(stmt, ast.Assign):
                for target in stmt.targets:
                    if isinstance(target, ast.Name):
                        found[target.id] = stmt.value
            elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
                found[stmt.target.id] = stmt.value
        return found

    def is_dataclass(self) -> bool:
        for deco in self.node.decorator_list:
            target = deco.func if isinstance(deco, ast.Call) else deco
            if _dotted(target).split(".")[-1] in ("dataclass", "config"):
                return True
        return False


@dataclass(eq=False)
class Val:
    """The abstract value of an expression: which additional_config mappings it may be, and what else is known."""

    maps: frozenset[KeyPath] = frozenset()
    const: Any = _MISSING
    node: ast.expr | None = None
    mod: Module | None = None
    reads: frozenset[int] = frozenset()
    env: str | None = None
    keys_of: frozenset[KeyPath] = frozenset()  # the key set of these mappings (items(), set(m), for k in m)
    unknown_of: frozenset[KeyPath] = frozenset()  # set(m) - known
    known: Val | None = None
    obj: ClassInfo | None = None
    param: str | None = None  # bound to this parameter of the function being analysed
    key_param: bool = False


@dataclass(eq=False)
class Read:
    path: KeyPath
    source: str
    mod_path: str
    line: int
    kind: str
    default: Val | None = None
    cast: str | None = None
    annotation: str | None = None
    env: str | None = None
    rid: int = -1
    deprecated: str | None = None  # source of a "deprecated" warning given when this key is present


@dataclass(eq=False)
class Frame:
    mod: Module
    cls: ClassInfo | None
    func: ast.AST | None
    env: dict[str, Val] = field(default_factory=dict)
    returns: list[Val] = field(default_factory=list)
    reads: list[Read] = field(default_factory=list)
    env_seen: set[str] = field(default_factory=set)
    local_imports: dict[str, str] = field(default_factory=dict)
    depth: int = 0
    deprecating: str | None = None  # set while evaluating an `if` test whose body warns "deprecated"


@dataclass
class Policy:
    policy: str
    source: str
    detail: str


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else ""
    return ""


def _json_safe(value: Any) -> bool:
    if isinstance(value, float) and not math.isfinite(value):
        return False
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return False
    return True


def _type_name(value: Any) -> str | None:
    for py, name in ((bool, "bool"), (int, "int"), (float, "float"), (str, "str"), (list, "list"), (dict, "dict")):
        if isinstance(value, py):
            return name
    if isinstance(value, tuple):
        return "list"
    return None


def _fold(node: ast.AST | None) -> Any:
    """A literal, or integer/float arithmetic on literals (`18 * 1024 * 1024`); _MISSING otherwise."""
    if node is None:
        return _MISSING
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        pass
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub | ast.Mult | ast.FloorDiv | ast.LShift):
        left, right = _fold(node.left), _fold(node.right)
        if isinstance(left, int | float) and isinstance(right, int | float) and not isinstance(left, bool):
            ops: dict[type[ast.operator], Any] = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul}
            if type(node.op) in ops:
                return ops[type(node.op)](left, right)
            if isinstance(node.op, ast.FloorDiv) and right:
                return left // right
            if isinstance(node.op, ast.LShift) and isinstance(left, int) and isinstance(right, int):
                return left << right
    return _MISSING


def _is_literal(node: ast.AST) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def _walk_local(nodes: Iterable[ast.AST]) -> Iterator[ast.AST]:
    """ast.walk over statements, not descending into nested function or class definitions."""
    stack = list(nodes)
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
                stack.append(child)


def _is_warning_call(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return False
    if node.func.attr not in _WARN_METHODS:
        return False
    owner = _dotted(node.func.value).lower()
    return "log" in owner or owner == "warnings"


def _mentions_root(node: ast.AST) -> bool:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Attribute) and sub.attr == "additional_config":
            return True
        if isinstance(sub, ast.Constant) and sub.value == "additional_config":
            return True
    return False


# ---------------------------------------------------------------------------------------------- analyser
class Analyzer:
    """Follows additional_config through one tag's sources; `run()` fills `reads`, `policies`, `unresolved`."""

    MAX_DEPTH = 12

    def __init__(self, tag: str, files: dict[str, str], where: Where | None = None) -> None:
        self.tag = tag
        self.where = where or git_where(tag)
        self.modules: dict[str, Module] = {}
        self.pending: list[tuple[frozenset[KeyPath], str, str]] = []
        self.by_name: dict[str, Module] = {}
        self.unresolved: dict[tuple[str, str], None] = {}
        for path in sorted(files):
            if not path.endswith(".py"):
                continue
            try:
                tree = ast.parse(files[path].lstrip("\ufeff"))
            except SyntaxError as exc:
                self.note(f"could not parse {path}: {exc.msg}", self.where(path, exc.lineno or 0))
                continue
            name = path[:-3].replace("/", ".")
            if name.endswith(".__init__"):
                name = name[: -len(".__init__")]
            mod = Module(path=path, name=name, tree=tree, text=files[path])
            self._index(mod)
            self.modules[path] = mod
            self.by_name[name] = mod
        self.reads: dict[tuple[Any, ...], Read] = {}
        self.read_ids: list[Read] = []
        self.policies: dict[KeyPath, Policy] = {}
        self.self_attrs: dict[str, dict[str, Val]] = {}
        self.classes: dict[int, ClassInfo] = {}
        self.active: set[tuple[Any, ...]] = set()
        self.done: set[tuple[Any, ...]] = set()
        self.invoked: set[int] = set()
        self.mapping_paths: set[KeyPath] = {()}
        self._kwarg_binding: dict[int, Val] = {}
        self.memo: dict[tuple[Any, ...], Val] = {}

    # -------------------------------------------------------------------------------- indexing and names
    def _index(self, mod: Module) -> None:
        package = mod.name if mod.path.endswith("__init__.py") else mod.name.rpartition(".")[0]
        for stmt in mod.tree.body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                mod.defs[stmt.name] = stmt
            elif isinstance(stmt, ast.Assign):
                for target in stmt.targets:
                    if isinstance(target, ast.Name):
                        mod.consts[target.id] = stmt.value
            elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
                mod.consts[stmt.target.id] = stmt.value
        for node in ast.walk(mod.tree):
            if isinstance(node, ast.Import | ast.ImportFrom) and node in mod.tree.body:
                mod.imports.update(self._import_names(node, package))
            elif isinstance(node, ast.If | ast.Try):
                for sub in ast.iter_child_nodes(node):
                    if isinstance(sub, ast.Import | ast.ImportFrom):
                        mod.imports.update(self._import_names(sub, package))

    @staticmethod
    def _import_names(stmt: ast.Import | ast.ImportFrom, package: str) -> dict[str, str]:
        names: dict[str, str] = {}
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname:
                    names[alias.asname] = alias.name
                else:
                    names[alias.name.split(".")[0]] = alias.name.split(".")[0]
            return names
        base = stmt.module or ""
        if stmt.level:
            parts = package.split(".")
            parts = parts[: len(parts) - (stmt.level - 1)] if stmt.level > 1 else parts
            base = ".".join([*parts, base]) if base else ".".join(parts)
        for alias in stmt.names:
            names[alias.asname or alias.name] = f"{base}.{alias.name}"
        return names

    def src(self, mod: Module, node: ast.AST | int) -> str:
        line = node if isinstance(node, int) else getattr(node, "lineno", 0)
        return self.where(mod.path, line)

    def note(self, what: str, source: str) -> None:
        self.unresolved[(what, source)] = None

    def class_info(self, mod: Module, node: ast.ClassDef) -> ClassInfo:
        info = self.classes.get(id(node))
        if info is None:
            info = ClassInfo(mod, node)
            self.classes[id(node)] = info
        return info

    def resolve_qual(self, qual: str, depth: int = 0) -> Any:
        """A dotted name → ClassInfo, (Module, FunctionDef), Module, or None."""
        if qual in self.by_name:
            return self.by_name[qual]
        parts = qual.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            mod = self.by_name.get(".".join(parts[:cut]))
            if mod is None:
                continue
            rest = parts[cut:]
            return self._resolve_in(mod, rest, depth)
        return None

    def _resolve_in(self, mod: Module, rest: list[str], depth: int) -> Any:
        name = rest[0]
        target: Any = None
        if name in mod.defs:
            node = mod.defs[name]
            target = self.class_info(mod, node) if isinstance(node, ast.ClassDef) else (mod, node)
        elif name in mod.imports and depth < 6:
            target = self.resolve_qual(mod.imports[name], depth + 1)
        for attr in rest[1:]:
            if isinstance(target, ClassInfo):
                target = self.class_member(target, attr)
            elif isinstance(target, Module):
                target = self._resolve_in(target, [attr], depth + 1)
            else:
                return None
        return target

    def resolve_name(self, name: str, fr: Frame) -> Any:
        if name in fr.local_imports:
            return self.resolve_qual(fr.local_imports[name])
        if name in fr.mod.defs:
            node = fr.mod.defs[name]
            return self.class_info(fr.mod, node) if isinstance(node, ast.ClassDef) else (fr.mod, node)
        if name in fr.mod.imports:
            return self.resolve_qual(fr.mod.imports[name])
        return None

    def resolve_expr(self, node: ast.expr, fr: Frame) -> Any:
        if isinstance(node, ast.Name):
            if node.id in ("self", "cls") and fr.cls is not None:
                return fr.cls
            return self.resolve_name(node.id, fr)
        if isinstance(node, ast.Attribute):
            base = self.resolve_expr(node.value, fr)
            if isinstance(base, ClassInfo):
                return self.class_member(base, node.attr)
            if isinstance(base, Module):
                return self._resolve_in(base, [node.attr], 0)
        return None

    def bases(self, info: ClassInfo) -> list[ClassInfo]:
        found = []
        fr = Frame(mod=info.mod, cls=None, func=None)
        for base in info.node.bases:
            target = self.resolve_expr(base, fr)
            if isinstance(target, ClassInfo) and target is not info:
                found.append(target)
        return found

    def class_member(self, info: ClassInfo, name: str, depth: int = 0) -> Any:
        methods = info.methods()
        if name in methods:
            return (info.mod, methods[name], info)
        if depth < 6:
            for base in self.bases(info):
                found = self.class_member(base, name, depth + 1)
                if found is not None:
                    return found
        return None

    def class_attr(self, info: ClassInfo, name: str, depth: int = 0) -> tuple[Module, ast.expr] | None:
        attrs = info.attrs()
        if name in attrs:
            return info.mod, attrs[name]
        if depth < 6:
            for base in self.bases(info):
                found = self.class_attr(base, name, depth + 1)
                if found is not None:
                    return found
        return None

    # ------------------------------------------------------------------------------------------ reading
    def record_read(
        self, fr: Frame, base: Val, key: Val, node: ast.AST, kind: str, default: Val | None
    ) -> frozenset[int]:
        if not base.maps:
            return frozenset()
        if not isinstance(key.const, str):
            if key.param is None:
                self.note(
                    f"key computed at run time ({ast.unparse(node)[:80]}) read from "
                    + ", ".join(sorted(".".join(p) or "<top>" for p in base.maps)),
                    self.src(fr.mod, node),
                )
            return frozenset()
        ids = []
        for path in sorted(base.maps):
            full = (*path, key.const)
            sig = (full, fr.mod.path, getattr(node, "lineno", 0), getattr(node, "col_offset", 0), kind)
            read = self.reads.get(sig)
            if read is None:
                env = default.env if default is not None else None
                where = self.src(fr.mod, node)
                if key.key_param and key.node is not None and key.mod is not None:
                    where = self.src(key.mod, key.node)  # the literal at the helper's call site
                read = Read(
                    path=full,
                    source=where,
                    mod_path=fr.mod.path,
                    line=getattr(node, "lineno", 0),
                    kind=kind,
                    default=default,
                    env=env,
                )
                read.rid = len(self.read_ids)
                self.reads[sig] = read
                self.read_ids.append(read)
            elif read.default is None and default is not None:
                read.default = default
                read.env = read.env or default.env
            if fr.deprecating and kind == "in":
                read.deprecated = read.deprecated or fr.deprecating
            if key.key_param:
                fr.reads.append(read)
            ids.append(read.rid)
        return frozenset(ids)

    def set_policy(self, paths: Iterable[KeyPath], policy: str, source: str, detail: str) -> None:
        for path in paths:
            old = self.policies.get(path)
            if old is None or _POLICY_RANK[policy] > _POLICY_RANK[old.policy]:
                self.policies[path] = Policy(policy, source, detail)
            self.mapping_paths.add(path)

    # --------------------------------------------------------------------------------------- expressions
    def ev(self, node: ast.expr | None, fr: Frame) -> Val:
        if node is None:
            return Val()
        handler = getattr(self, f"_ev_{type(node).__name__}", None)
        if handler is not None:
            result: Val = handler(node, fr)
            return result
        maps: set[KeyPath] = set()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self.ev(child, fr)
            elif isinstance(child, ast.comprehension):
                self._comprehension(child, fr)
        return Val(maps=frozenset(maps), node=node, mod=fr.mod)

    def _comprehension(self, comp: ast.comprehension, fr: Frame) -> Val:
        it = self.ev(comp.iter, fr)
        for cond in comp.ifs:
            self.ev(cond, fr)
        return it

    def _ev_ListComp(self, node: ast.ListComp | ast.SetComp, fr: Frame) -> Val:
        keys_of: frozenset[KeyPath] = frozenset()
        known: Val | None = None
        for comp in node.generators:
            it = self._comprehension(comp, fr)
            if it.keys_of:
                keys_of = it.keys_of
                for cond in comp.ifs:
                    if isinstance(cond, ast.Compare) and isinstance(cond.ops[0], ast.NotIn):
                        known = self.ev(cond.comparators[0], fr)
        self.ev(node.elt, fr)
        if keys_of and known is not None:
            return Val(node=node, mod=fr.mod, unknown_of=keys_of, known=known)
        return Val(node=node, mod=fr.mod)

    _ev_SetComp = _ev_ListComp

    def _ev_Constant(self, node: ast.Constant, fr: Frame) -> Val:
        return Val(const=node.value, node=node, mod=fr.mod)

    def _ev_Name(self, node: ast.Name, fr: Frame) -> Val:
        if node.id in fr.env:
            return fr.env[node.id]
        if node.id in fr.mod.consts:
            value = fr.mod.consts[node.id]
            if isinstance(value, ast.Constant):
                return Val(const=value.value, node=node, mod=fr.mod)
            if isinstance(value, ast.Dict):
                return Val(node=value, mod=fr.mod)
        if node.id in fr.mod.imports or node.id in fr.local_imports:
            qual = fr.local_imports.get(node.id) or fr.mod.imports[node.id]
            owner, _, name = qual.rpartition(".")
            mod = self.by_name.get(owner)
            if mod is not None and isinstance(mod.consts.get(name), ast.Constant):
                const_node = mod.consts[name]
                assert isinstance(const_node, ast.Constant)
                return Val(const=const_node.value, node=node, mod=fr.mod)
        return Val(node=node, mod=fr.mod)

    def _ev_Attribute(self, node: ast.Attribute, fr: Frame) -> Val:
        if node.attr == "additional_config":
            self.ev(node.value, fr)
            return Val(maps=frozenset({()}), node=node, mod=fr.mod)
        if isinstance(node.value, ast.Name):
            owner = node.value.id
            info = self._instance_of(owner, fr)
            if info is not None:
                table = self._self_attr_lookup(info, node.attr)
                if table is not None:
                    return table
                attr = self.class_attr(info, node.attr)
                if attr is not None:
                    mod, value = attr
                    if isinstance(value, ast.Constant):
                        return Val(const=value.value, node=value, mod=mod)
                    return Val(node=value, mod=mod)
                return Val(node=node, mod=fr.mod)
            if self._is_envs_module(owner, fr) and node.attr.isupper():
                return Val(node=node, mod=fr.mod, env=node.attr)
        base = self.ev(node.value, fr)
        if base.obj is not None:
            table = self._self_attr_lookup(base.obj, node.attr)
            if table is not None:
                return table
        return Val(node=node, mod=fr.mod)

    @staticmethod
    def _instance_of(name: str, fr: Frame) -> ClassInfo | None:
        bound = fr.env.get(name)
        if bound is not None and bound.obj is not None:
            return bound.obj
        if name in ("self", "cls") and bound is None:
            return fr.cls
        return None

    def _self_attr_lookup(self, info: ClassInfo, name: str, depth: int = 0) -> Val | None:
        table = self.self_attrs.get(info.key, {})
        if name in table:
            return table[name]
        if depth < 6:
            for base in self.bases(info):
                found = self._self_attr_lookup(base, name, depth + 1)
                if found is not None:
                    return found
        return None

    def _is_envs_module(self, name: str, fr: Frame) -> bool:
        qual = fr.local_imports.get(name) or fr.mod.imports.get(name)
        if qual is not None:
            return qual.split(".")[-1] == "envs"
        return name in ("envs", "ascend_envs", "envs_ascend", "envs_vllm", "vllm_envs")

    def _ev_IfExp(self, node: ast.IfExp, fr: Frame) -> Val:
        self.ev(node.test, fr)
        return _merge(self.ev(node.body, fr), self.ev(node.orelse, fr), node, fr.mod)

    def _ev_BoolOp(self, node: ast.BoolOp, fr: Frame) -> Val:
        vals = [self.ev(v, fr) for v in node.values]
        out = vals[0]
        for v in vals[1:]:
            out = _merge(out, v, node, fr.mod)
        # a cast around `a or b` says nothing about the type of a or b: the reads do not flow through
        return dataclasses.replace(out, const=_MISSING, node=node, reads=frozenset()) if len(vals) > 1 else out

    def _ev_BinOp(self, node: ast.BinOp, fr: Frame) -> Val:
        left = self.ev(node.left, fr)
        right = self.ev(node.right, fr)
        if isinstance(node.op, ast.Sub) and left.keys_of:
            return Val(node=node, mod=fr.mod, unknown_of=left.keys_of, known=right)
        return Val(node=node, mod=fr.mod, reads=left.reads | right.reads)

    def _ev_Subscript(self, node: ast.Subscript, fr: Frame) -> Val:
        base = self.ev(node.value, fr)
        key = self.ev(node.slice, fr)
        if isinstance(node.ctx, ast.Store | ast.Del):
            return Val(node=node, mod=fr.mod)
        if base.maps:
            ids = self.record_read(fr, base, key, node, "subscript", None)
            if isinstance(key.const, str):
                return Val(maps=frozenset((*p, key.const) for p in base.maps), node=node, mod=fr.mod, reads=ids)
            return Val(node=node, mod=fr.mod)
        if isinstance(base.node, ast.Dict) and isinstance(key.const, str) and base.mod is not None:
            for k, v in zip(base.node.keys, base.node.values, strict=True):
                if isinstance(k, ast.Constant) and k.value == key.const:
                    if isinstance(v, ast.Constant):
                        return Val(const=v.value, node=v, mod=base.mod)
                    return Val(node=v, mod=base.mod)
        return Val(node=node, mod=fr.mod)

    def _ev_Compare(self, node: ast.Compare, fr: Frame) -> Val:
        left = self.ev(node.left, fr)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = self.ev(right_node, fr)
            if isinstance(op, ast.In | ast.NotIn):
                if right.maps:
                    self.record_read(fr, right, left, node, "in", None)
                elif _dotted(right_node) in ("os.environ", "environ") and isinstance(left.const, str):
                    fr.env_seen.add(left.const)
            left = right
        return Val(node=node, mod=fr.mod)

    def _ev_Lambda(self, node: ast.Lambda, fr: Frame) -> Val:
        self.ev(node.body, fr)
        return Val(node=node, mod=fr.mod)

    def _ev_Call(self, node: ast.Call, fr: Frame) -> Val:
        func = node.func
        name = _dotted(func)
        args = node.args
        if name in ("getattr", "hasattr") and len(args) >= 2:
            obj = self.ev(args[0], fr)
            key = self.ev(args[1], fr)
            if key.const == "additional_config":
                return Val(maps=frozenset({()}), node=node, mod=fr.mod)
            if obj.maps:
                default = self.ev(args[2], fr) if len(args) > 2 else None
                ids = self.record_read(fr, obj, key, node, name, default)
                if isinstance(key.const, str):
                    return Val(maps=frozenset((*p, key.const) for p in obj.maps), node=node, mod=fr.mod, reads=ids)
            return Val(node=node, mod=fr.mod)
        if name in ("os.getenv", "os.environ.get", "environ.get", "getenv") and args:
            key = self.ev(args[0], fr)
            for extra in args[1:]:
                self.ev(extra, fr)
            if isinstance(key.const, str):
                fr.env_seen.add(key.const)
                return Val(node=node, mod=fr.mod, env=key.const)
            return Val(node=node, mod=fr.mod)
        if (
            isinstance(func, ast.Name)
            and func.id in (*_CASTS, "set", "frozenset", "list", "sorted", "tuple", "dict")
            and func.id not in fr.env
            and self.resolve_name(func.id, fr) is None
        ):
            inner = self.ev(args[0], fr) if args else Val()
            for kw in node.keywords:
                self.ev(kw.value, fr)
            if func.id in _CASTS:
                for rid in inner.reads:
                    read = self.read_ids[rid]
                    read.cast = read.cast or _CASTS[func.id]
                return Val(node=node, mod=fr.mod, reads=inner.reads, env=inner.env)
            if func.id == "dict":
                return dataclasses.replace(inner, node=node) if inner.maps else Val(node=node, mod=fr.mod)
            if inner.maps or inner.keys_of:
                return Val(node=node, mod=fr.mod, keys_of=inner.keys_of or inner.maps)
            return inner if isinstance(inner.node, ast.Dict) else Val(node=node, mod=fr.mod)
        if isinstance(func, ast.Attribute):
            resolved = self.resolve_expr(func, fr)
            if resolved is None:
                base = self.ev(func.value, fr)
                if base.maps:
                    return self._map_method(node, func.attr, base, fr)
                if func.attr == "copy" and not args:
                    return base
                if base.keys_of and func.attr in ("difference", "__sub__") and args:
                    return Val(node=node, mod=fr.mod, unknown_of=base.keys_of, known=self.ev(args[0], fr))
        else:
            resolved = self.resolve_expr(func, fr)
        return self._call(node, resolved, name, fr)

    def _map_method(self, node: ast.Call, method: str, base: Val, fr: Frame) -> Val:
        args = node.args
        if method in ("get", "setdefault", "pop") and args:
            key = self.ev(args[0], fr)
            default = self.ev(args[1], fr) if len(args) > 1 else None
            ids = self.record_read(fr, base, key, node, method, default)
            if isinstance(key.const, str):
                return Val(maps=frozenset((*p, key.const) for p in base.maps), node=node, mod=fr.mod, reads=ids)
            return Val(node=node, mod=fr.mod)
        for arg in args:
            self.ev(arg, fr)
        if method in _KEY_VIEWS:
            return Val(node=node, mod=fr.mod, keys_of=base.maps)
        if method == "copy":
            return base
        return Val(node=node, mod=fr.mod)

    def _call(self, node: ast.Call, target: Any, name: str, fr: Frame) -> Val:
        pos = [self.ev(a.value if isinstance(a, ast.Starred) else a, fr) for a in node.args]
        kws: dict[str, Val] = {}
        star: list[Val] = []
        for kw in node.keywords:
            value = self.ev(kw.value, fr)
            if kw.arg is None:
                star.append(value)
            else:
                kws[kw.arg] = value
        carries = any(v.maps for v in [*pos, *kws.values(), *star])
        if target is None:
            if carries and not self._benign(name):
                paths = frozenset(p for v in [*pos, *kws.values(), *star] for p in v.maps)
                label = name or ast.unparse(node.func)[:60]
                self.pending.append(
                    (paths, f"passed to {label}(), which these sources do not define", self.src(fr.mod, node))
                )
            return Val(node=node, mod=fr.mod)
        if isinstance(target, ClassInfo):
            return self._construct(node, target, pos, kws, star, fr)
        if isinstance(target, tuple):
            mod, func = target[0], target[1]
            owner = target[2] if len(target) > 2 else None
            if not (carries or _mentions_root(func)):
                return Val(node=node, mod=fr.mod)
            bound_self = self._implicit_first(node.func, func, owner, fr)
            for value in star:
                if value.maps:
                    self._expand_kwargs(node, value, mod, func, owner, len(pos) + int(bound_self), set(kws), fr)
            return self.invoke(mod, func, owner, pos, kws, fr, node, skip_first=bound_self)
        return Val(node=node, mod=fr.mod)

    @staticmethod
    def _benign(name: str) -> bool:
        last = name.split(".")[-1]
        return name in _BENIGN_SINKS or last in _BENIGN_METHODS

    def _implicit_first(self, func_node: ast.expr, func: ast.AST, owner: ClassInfo | None, fr: Frame) -> bool:
        """Whether the first parameter is bound implicitly (self/cls), given how the callee was named."""
        if owner is None or not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
            return False
        decos = {_dotted(d).split(".")[-1] for d in func.decorator_list}
        if "staticmethod" in decos:
            return False
        if "classmethod" in decos:
            return True
        # plain method: implicit only when called on an instance (self.m / obj.m), not on the class (Cls.m)
        if isinstance(func_node, ast.Attribute) and isinstance(func_node.value, ast.Name):
            return func_node.value.id in ("self", "cls") or self.resolve_name(func_node.value.id, fr) is None
        return True

    def _construct(
        self, node: ast.Call, info: ClassInfo, pos: list[Val], kws: dict[str, Val], star: list[Val], fr: Frame
    ) -> Val:
        init = self.class_member(info, "__init__")
        for value in star:
            if not value.maps:
                continue
            if init is not None:
                self._expand_kwargs(node, value, init[0], init[1], init[2], len(pos) + 1, set(kws), fr)
            elif info.is_dataclass():
                self._expand_fields(node, value, info, fr)
            else:
                self.note(f"**mapping passed to {info.node.name}, which has no __init__ here", self.src(fr.mod, node))
        if init is not None:
            carries = any(v.maps for v in [*pos, *kws.values(), *star])
            if carries or _mentions_root(init[1]):
                self_val = Val(obj=info)
                self.invoke(init[0], init[1], init[2], [self_val, *pos], kws, fr, node, skip_first=False)
        return Val(node=node, mod=fr.mod, obj=info)

    def _expand_kwargs(
        self,
        call: ast.Call,
        value: Val,
        mod: Module,
        func: ast.FunctionDef | ast.AsyncFunctionDef,
        owner: ClassInfo | None,
        n_bound: int,
        bound_names: set[str],
        fr: Frame,
    ) -> None:
        """`f(**m)`: each parameter not bound otherwise is a key of m; extra keys go to **kwargs or raise."""
        a = func.args
        positional = [*a.posonlyargs, *a.args]
        defaults: dict[str, ast.expr] = {}
        for arg, default_expr in zip(positional[len(positional) - len(a.defaults) :], a.defaults, strict=True):
            defaults[arg.arg] = default_expr
        for arg, kw_default in zip(a.kwonlyargs, a.kw_defaults, strict=True):
            if kw_default is not None:
                defaults[arg.arg] = kw_default
        callee = Frame(mod=mod, cls=owner, func=func)
        for arg in [*positional[n_bound:], *a.kwonlyargs]:
            if arg.arg in bound_names or arg in a.posonlyargs:
                continue
            default_node = defaults.get(arg.arg)
            default = self.ev(default_node, callee) if default_node is not None else None
            key = Val(const=arg.arg)
            for rid in self.record_read(Frame(mod=mod, cls=owner, func=func), value, key, arg, "param", default):
                read = self.read_ids[rid]
                if arg.annotation is not None:
                    read.annotation = read.annotation or ast.unparse(arg.annotation)
        label = f"{owner.node.name}.{func.name}" if owner else func.name
        if a.kwarg is not None:
            self.set_policy(
                value.maps,
                "ignored",
                self.src(mod, func),
                f"passed as **kwargs to {label}(); keys it does not name land in **{a.kwarg.arg}",
            )
            self._kwarg_binding[id(func)] = value
        else:
            self.set_policy(
                value.maps,
                "error",
                self.src(fr.mod, call),
                f"passed as **kwargs to {label}(), which has no **kwargs: an unknown key raises TypeError",
            )
        for path in value.maps:
            self.mapping_paths.add(path)

    def _expand_fields(self, call: ast.Call, value: Val, info: ClassInfo, fr: Frame) -> None:
        classes = [info, *self.bases(info)]
        for cls in classes:
            for stmt in cls.node.body:
                if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
                    continue
                if "ClassVar" in ast.unparse(stmt.annotation):
                    continue
                default_node = stmt.value
                if isinstance(default_node, ast.Call) and _dotted(default_node.func).endswith("field"):
                    default_node = next((k.value for k in default_node.keywords if k.arg == "default"), None)
                default = self.ev(default_node, Frame(mod=cls.mod, cls=cls, func=None)) if default_node else None
                for rid in self.record_read(
                    Frame(mod=cls.mod, cls=cls, func=None), value, Val(const=stmt.target.id), stmt, "field", default
                ):
                    read = self.read_ids[rid]
                    read.annotation = read.annotation or ast.unparse(stmt.annotation)
        external = [
            b for b in info.node.bases if not isinstance(self.resolve_expr(b, Frame(info.mod, None, None)), ClassInfo)
        ]
        if external:
            self.note(
                f"keys under {', '.join('.'.join(p) for p in sorted(value.maps))} are passed as ** to dataclass "
                f"{info.node.name}, which also takes the fields of {', '.join(ast.unparse(b) for b in external)} "
                "(not in these sources)",
                self.src(fr.mod, call),
            )
        self.set_policy(
            value.maps,
            "error",
            self.src(fr.mod, call),
            f"passed as **kwargs to dataclass {info.node.name}: an unknown key raises TypeError",
        )

    # ---------------------------------------------------------------------------------------- functions
    def invoke(
        self,
        mod: Module,
        func: ast.AST,
        owner: ClassInfo | None,
        pos: list[Val],
        kws: dict[str, Val],
        caller: Frame,
        call: ast.AST,
        *,
        skip_first: bool,
    ) -> Val:
        if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
            return Val()
        if caller.depth >= self.MAX_DEPTH:
            return Val()
        fr = Frame(mod=mod, cls=owner, func=func, depth=caller.depth + 1)
        a = func.args
        positional = [*a.posonlyargs, *a.args]
        defaults = dict(zip([p.arg for p in positional[len(positional) - len(a.defaults) :]], a.defaults, strict=True))
        for arg, kw_default in zip(a.kwonlyargs, a.kw_defaults, strict=True):
            if kw_default is not None:
                defaults[arg.arg] = kw_default
        params = positional[1:] if skip_first else positional
        if skip_first and positional:
            fr.env[positional[0].arg] = Val(obj=owner)
        for arg, value in zip(params, pos, strict=False):
            fr.env[arg.arg] = _as_param(value, arg.arg)
        for arg in [*params, *a.kwonlyargs]:
            if arg.arg in kws:
                fr.env[arg.arg] = _as_param(kws[arg.arg], arg.arg)
            elif arg.arg not in fr.env and arg.arg in defaults:
                fr.env[arg.arg] = _as_param(self.ev(defaults[arg.arg], fr), arg.arg)
        if a.kwarg is not None and id(func) in self._kwarg_binding:
            fr.env[a.kwarg.arg] = self._kwarg_binding[id(func)]
        sig = (id(func), tuple(sorted((k, _sig(v)) for k, v in fr.env.items())))
        if sig in self.memo:
            return self.memo[sig]
        if sig in self.active:
            return Val()
        self.invoked.add(id(func))
        self.active.add(sig)
        try:
            self.block(func.body, fr)
        finally:
            self.active.discard(sig)
        self._apply_fallback(fr)
        out = Val(node=None, mod=caller.mod)
        for value in fr.returns:
            out = _merge(out, value, None, caller.mod)
        self.memo[sig] = out
        return out

    def _apply_fallback(self, fr: Frame) -> None:
        """Reads by a key parameter with no literal default: the argument the helper returns instead, if any."""
        pending = [r for r in fr.reads if r.default is None]
        if not pending:
            return
        fallbacks = [v for v in fr.returns if not v.maps and (v.param is not None or v.const is not _MISSING)]
        envs = {v.env for v in fallbacks if v.env} | fr.env_seen
        for read in pending:
            if len(fallbacks) == 1:
                read.default = fallbacks[0]
            if read.env is None and len(envs) == 1:
                read.env = next(iter(envs))

    # --------------------------------------------------------------------------------------- statements
    def block(self, stmts: Sequence[ast.stmt], fr: Frame) -> None:
        for stmt in stmts:
            self.stmt(stmt, fr)

    def stmt(self, stmt: ast.stmt, fr: Frame) -> None:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            return
        if isinstance(stmt, ast.Import | ast.ImportFrom):
            package = fr.mod.name if fr.mod.path.endswith("__init__.py") else fr.mod.name.rpartition(".")[0]
            fr.local_imports.update(self._import_names(stmt, package))
            return
        if isinstance(stmt, ast.Assign):
            value = self.ev(stmt.value, fr)
            for target in stmt.targets:
                self.assign(target, value, fr)
            return
        if isinstance(stmt, ast.AnnAssign):
            if stmt.value is None:
                return
            value = self.ev(stmt.value, fr)
            hint = ast.unparse(stmt.annotation)
            for rid in value.reads:
                read = self.read_ids[rid]
                read.annotation = read.annotation or hint
            self.assign(stmt.target, value, fr)
            return
        if isinstance(stmt, ast.AugAssign):
            self.ev(stmt.value, fr)
            return
        if isinstance(stmt, ast.Return):
            fr.returns.append(self.ev(stmt.value, fr) if stmt.value is not None else Val(const=None))
            return
        if isinstance(stmt, ast.Expr):
            self.ev(stmt.value, fr)
            return
        if isinstance(stmt, ast.If):
            fr.deprecating = self._deprecation_warning(stmt.body, fr)
            try:
                test = self.ev(stmt.test, fr)
            finally:
                fr.deprecating = None
            if test.unknown_of:
                self._unknown_check(stmt, test, fr)
            self.block(stmt.body, fr)
            self.block(stmt.orelse, fr)
            return
        if isinstance(stmt, ast.For | ast.AsyncFor):
            it = self.ev(stmt.iter, fr)
            if it.keys_of:
                self._key_loop(stmt, it.keys_of, fr)
            self.assign(stmt.target, Val(node=stmt.target, mod=fr.mod), fr)
            self.block(stmt.body, fr)
            self.block(stmt.orelse, fr)
            return
        if isinstance(stmt, ast.While):
            self.ev(stmt.test, fr)
            self.block(stmt.body, fr)
            self.block(stmt.orelse, fr)
            return
        if isinstance(stmt, ast.With | ast.AsyncWith):
            for item in stmt.items:
                self.ev(item.context_expr, fr)
            self.block(stmt.body, fr)
            return
        if isinstance(stmt, ast.Try):
            self.block(stmt.body, fr)
            for handler in stmt.handlers:
                self.block(handler.body, fr)
            self.block(stmt.orelse, fr)
            self.block(stmt.finalbody, fr)
            return
        if isinstance(stmt, ast.Assert):
            self.ev(stmt.test, fr)
            return
        if isinstance(stmt, ast.Raise):
            if stmt.exc is not None:
                self.ev(stmt.exc, fr)
            return
        for child in ast.iter_child_nodes(stmt):
            if isinstance(child, ast.expr):
                self.ev(child, fr)
            elif isinstance(child, ast.stmt):
                self.stmt(child, fr)

    def _deprecation_warning(self, body: Sequence[ast.stmt], fr: Frame) -> str | None:
        """The source of a warning directly in `body` (not nested) whose text says "deprecated"."""
        for stmt in body:
            if isinstance(stmt, ast.Expr) and _is_warning_call(stmt.value):
                texts = [
                    n.value for n in ast.walk(stmt.value) if isinstance(n, ast.Constant) and isinstance(n.value, str)
                ]
                if any("deprecat" in t.lower() for t in texts):
                    return self.src(fr.mod, stmt)
        return None

    def assign(self, target: ast.expr, value: Val, fr: Frame) -> None:
        if isinstance(target, ast.Name):
            old = fr.env.get(target.id)
            fr.env[target.id] = _merge(old, value, value.node, fr.mod) if old is not None else value
        elif isinstance(target, ast.Attribute):
            info = self._instance_of(target.value.id, fr) if isinstance(target.value, ast.Name) else None
            if info is not None:
                table = self.self_attrs.setdefault(info.key, {})
                old = table.get(target.attr)
                stored = dataclasses.replace(value, reads=frozenset())  # a later cast of self.x is not the key's type
                table[target.attr] = _merge(old, stored, value.node, fr.mod) if old is not None else stored
            else:
                self.ev(target.value, fr)
        elif isinstance(target, ast.Subscript):
            self.ev(target, fr)
        elif isinstance(target, ast.Tuple | ast.List):
            for elt in target.elts:
                self.assign(elt, Val(node=elt, mod=fr.mod), fr)

    # ------------------------------------------------------------------------------ unknown-key checks
    def _key_loop(self, loop: ast.For | ast.AsyncFor, keys_of: frozenset[KeyPath], fr: Frame) -> None:
        target = loop.target
        key_var = target.elts[0] if isinstance(target, ast.Tuple) and target.elts else target
        key_name = key_var.id if isinstance(key_var, ast.Name) else None
        raises: ast.Raise | None = None
        warns: ast.AST | None = None
        keeps: ast.AST | None = None
        known: Val | None = None
        sink: str | None = None
        for node in _walk_local(loop.body):
            if isinstance(node, ast.Raise) and raises is None:
                raises = node
            elif _is_warning_call(node) and warns is None:
                warns = node
            elif isinstance(node, ast.Call) and _dotted(node.func) == "setattr" and keeps is None:
                keeps = node
                sink = "set as attributes of the config object (setattr)"
            elif isinstance(node, ast.Assign) and keeps is None:
                for t in node.targets:
                    if isinstance(t, ast.Subscript) and isinstance(t.slice, ast.Name) and t.slice.id == key_name:
                        keeps = node
                        sink = f"copied into {ast.unparse(t.value)}"
            elif (
                isinstance(node, ast.Compare)
                and isinstance(node.left, ast.Name)
                and node.left.id == key_name
                and isinstance(node.ops[0], ast.In | ast.NotIn)
            ):
                known = self.ev(node.comparators[0], fr)
        if known is not None:
            self._known_dict(known, keys_of, fr)
        if raises is not None:
            message = ast.unparse(raises.exc)[:160] if raises.exc is not None else "raise"
            self.set_policy(keys_of, "error", self.src(fr.mod, raises), f"unknown key raises: {message}")
        elif warns is not None:
            self.set_policy(keys_of, "warned", self.src(fr.mod, warns), "unknown key is logged as a warning")
        elif keeps is not None:
            detail = f"every key is {sink} without a check"
            splat = self._splat_after(fr, sink)
            if splat is not None:
                detail += f"; that dict is then passed as ** to {splat[0]}"
                self.note(
                    f"keys under {', '.join('.'.join(p) for p in sorted(keys_of))} are {sink}, which is passed as ** "
                    f"to {splat[0]}: which names it accepts is decided outside these sources",
                    self.src(fr.mod, splat[1]),
                )
            self.set_policy(keys_of, "kept", self.src(fr.mod, keeps), detail)
        else:
            self.note(
                "loop over the keys of " + ", ".join(".".join(p) or "<top>" for p in sorted(keys_of)),
                self.src(fr.mod, loop),
            )

    def _splat_after(self, fr: Frame, sink: str | None) -> tuple[str, ast.Call] | None:
        if fr.func is None or sink is None or not sink.startswith("copied into "):
            return None
        name = sink[len("copied into ") :]
        for node in _walk_local([fr.func]):
            if isinstance(node, ast.Call):
                for kw in node.keywords:
                    if kw.arg is None and ast.unparse(kw.value) == name:
                        return ast.unparse(node.func), node
        return None

    def _unknown_check(self, stmt: ast.If, test: Val, fr: Frame) -> None:
        raises = next((n for n in _walk_local(stmt.body) if isinstance(n, ast.Raise)), None)
        warns = next((n for n in _walk_local(stmt.body) if _is_warning_call(n)), None)
        if test.known is not None:
            self._known_dict(test.known, test.unknown_of, fr)
        if raises is not None:
            message = ast.unparse(raises.exc)[:160] if raises.exc is not None else "raise"
            self.set_policy(test.unknown_of, "error", self.src(fr.mod, raises), f"unknown key raises: {message}")
        elif warns is not None:
            self.set_policy(test.unknown_of, "warned", self.src(fr.mod, warns), "unknown key is logged as a warning")

    def _known_dict(self, known: Val, paths: frozenset[KeyPath], fr: Frame) -> None:
        """The keys of a dict literal an unknown-key check compares against are keys too (with their defaults)."""
        if not isinstance(known.node, ast.Dict) or known.mod is None:
            return
        mod = known.mod
        for k, v in zip(known.node.keys, known.node.values, strict=True):
            if isinstance(k, ast.Constant) and isinstance(k.value, str):
                default = self.ev(v, Frame(mod=mod, cls=None, func=None))
                self.record_read(
                    Frame(mod=mod, cls=None, func=None), Val(maps=paths), Val(const=k.value), k, "known", default
                )

    # ---------------------------------------------------------------------------------------------- driver
    def run(self) -> None:
        roots = [m for m in self.modules.values() if "additional_config" in m.text]
        for _ in range(2):
            self.memo.clear()
            for mod in roots:
                fr = Frame(mod=mod, cls=None, func=None)
                self.block(mod.tree.body, fr)
                for top in mod.tree.body:
                    if isinstance(top, ast.FunctionDef | ast.AsyncFunctionDef):
                        self._standalone(mod, top, None)
                    elif isinstance(top, ast.ClassDef):
                        info = self.class_info(mod, top)
                        for method in info.methods().values():
                            self._standalone(mod, method, info)
        for read in self.read_ids:
            for cut in range(1, len(read.path)):
                self.mapping_paths.add(read.path[:cut])
        for paths, what, source in self.pending:
            shown = sorted(".".join(p) or "<top>" for p in paths if p in self.mapping_paths)
            if shown:
                self.note(f"mapping {', '.join(shown)} {what}", source)
        for mod in roots:
            for node in ast.walk(mod.tree):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and id(node) not in self.invoked:
                    names = [a.arg for a in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]]
                    if "additional_config" in names and _uses_param(node, "additional_config"):
                        self.note(
                            f"{node.name}() takes an additional_config parameter but no call to it could be followed",
                            self.src(mod, node),
                        )

    def _standalone(self, mod: Module, func: ast.FunctionDef | ast.AsyncFunctionDef, owner: ClassInfo | None) -> None:
        fr = Frame(mod=mod, cls=owner, func=func)
        first = [*func.args.posonlyargs, *func.args.args][:1]
        if owner is not None and first:
            fr.env[first[0].arg] = Val(obj=owner)
        self.block(func.body, fr)


def _uses_param(func: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in _walk_local(getattr(func, "body", [])))


def _as_param(value: Val, name: str) -> Val:
    # a cast or annotation inside the callee describes its own use, not the key: reads do not flow into it
    return dataclasses.replace(value, param=name, key_param=isinstance(value.const, str), reads=frozenset())


def _sig(value: Val) -> tuple[Any, ...]:
    const = value.const if isinstance(value.const, str | int | float | bool | type(None)) else "?"
    return (tuple(sorted(value.maps)), const, value.env, id(value.node) if value.node is not None else None)


def _merge(a: Val | None, b: Val, node: ast.expr | None, mod: Module | None) -> Val:
    if a is None:
        return b
    keep_node = b.node
    keep_mod = b.mod
    if not isinstance(b.node, ast.Dict) and isinstance(a.node, ast.Dict):
        keep_node, keep_mod = a.node, a.mod
    return Val(
        maps=a.maps | b.maps,
        const=b.const if b.const is not _MISSING else a.const,
        node=keep_node if keep_node is not None else node,
        mod=keep_mod if keep_mod is not None else mod,
        reads=a.reads | b.reads,
        env=b.env or a.env,
        keys_of=a.keys_of | b.keys_of,
        unknown_of=a.unknown_of | b.unknown_of,
        known=b.known or a.known,
        obj=b.obj or a.obj,
        param=b.param or a.param,
        key_param=b.key_param or a.key_param,
    )


# -------------------------------------------------------------------------------------------- envs.py
def extract_envs(
    tag: str, files: dict[str, str], where: Where | None = None
) -> tuple[list[dict[str, Any]], str | None]:
    where = where or git_where(tag)
    path = f"{PACKAGE}/envs.py"
    if path not in files:
        return [], f"{tag} has no {path}"
    tree = ast.parse(files[path])
    table: ast.Dict | None = None
    for stmt in tree.body:
        target = stmt.targets[0] if isinstance(stmt, ast.Assign) else getattr(stmt, "target", None)
        value = getattr(stmt, "value", None)
        if isinstance(target, ast.Name) and target.id == "env_variables" and isinstance(value, ast.Dict):
            table = value
    if table is None:
        return [], f"{tag}:{path} has no env_variables dict"
    funcs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    found = []
    for key, value in zip(table.keys, table.values, strict=True):
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            continue
        body: ast.AST = value.body if isinstance(value, ast.Lambda) else value
        if isinstance(value, ast.Name) and value.id in funcs:
            body = funcs[value.id]
        lookups = [n for n in ast.walk(body) if _env_lookup(n) is not None]
        entry: dict[str, Any] = {"name": key.value, "source": where(path, key.lineno), "default": None}
        own = [n for n in lookups if _env_lookup(n) == key.value] or lookups
        if own:
            call = own[0]
            also = sorted({name for n in lookups if (name := _env_lookup(n))} - {key.value})
            if also:
                entry["reads_env"] = also  # other variables the lookup falls back to
            default_node = call.args[1] if isinstance(call, ast.Call) and len(call.args) > 1 else None
            if default_node is not None:
                literal = _fold(default_node)
                if literal is _MISSING:
                    entry["default_expr"] = ast.unparse(default_node)
                else:
                    entry["default"] = None if literal is None else str(literal)
                    if not _is_literal(default_node):
                        entry["default_expr"] = ast.unparse(default_node)
            entry["type"] = _env_cast(body, call)
        else:
            entry["type"] = None
            entry["default_expr"] = ast.unparse(body)[:160]
        found.append(entry)
    return sorted(found, key=lambda e: str(e["name"])), None


def _env_lookup(node: ast.AST) -> str | None:
    key: ast.AST | None = None
    if isinstance(node, ast.Call) and _dotted(node.func) in ("os.getenv", "os.environ.get", "getenv", "environ.get"):
        key = node.args[0] if node.args else None
    elif isinstance(node, ast.Subscript) and _dotted(node.value) in ("os.environ", "environ"):
        key = node.slice
    if isinstance(key, ast.Constant) and isinstance(key.value, str):
        return key.value
    return None


def _env_cast(body: ast.AST, lookup: ast.AST) -> str | None:
    """The type the value is turned into: the outermost cast around the lookup (bool(int(os.getenv(...))) → bool)."""
    node = body.body[-1] if isinstance(body, ast.FunctionDef) and body.body else body
    if isinstance(node, ast.Return):
        node = node.value if node.value is not None else node
    if node is lookup:
        return "str"
    if isinstance(node, ast.Call):
        fname = _dotted(node.func)
        if fname in _CASTS:
            return _CASTS[fname]
        if isinstance(node.func, ast.Attribute) and node.func.attr in ("lower", "upper", "strip"):
            return "str"
        if fname in ("os.getenv", "os.environ.get"):
            return "str"
    return None


# ----------------------------------------------------------------------------------------- platform hook
def extract_quant_hook(tag: str, files: dict[str, str], where: Where | None = None) -> dict[str, Any]:
    where = where or git_where(tag)
    path = f"{PACKAGE}/platform.py"
    if path not in files:
        return {"value": False, "source": where(path, 0), "detail": "no platform.py"}
    tree = ast.parse(files[path])
    hook_line = 0
    for func in ast.walk(tree):
        if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        if func.name == "pre_register_and_update":
            hook_line = func.lineno
        mentions = any(isinstance(n, ast.Constant) and n.value == "--quantization" for n in ast.walk(func))
        if not mentions:
            continue
        for node in ast.walk(func):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("append", "extend", "add")
                and isinstance(node.func.value, ast.Attribute)
                and node.func.value.attr == "choices"
            ):
                added = ast.unparse(node.args[0]) if node.args else ""
                return {
                    "value": True,
                    "source": where(path, node.lineno),
                    "detail": f"{func.name}() appends {_resolve_text(added, tree, files)} to --quantization choices",
                }
    detail = "pre_register_and_update() does not touch the --quantization choices"
    if not hook_line:
        detail = "no pre_register_and_update() hook"
        hook_line = next((n.lineno for n in tree.body if isinstance(n, ast.ClassDef)), 1)
    return {"value": False, "source": where(path, hook_line), "detail": detail}


def extract_kv_connectors(tag: str, files: dict[str, str], where: Where | None = None) -> dict[str, Any]:
    """The KV connectors a tag registers with vLLM's `KVConnectorFactory` and how they get registered.

    `connectors`: one per `KVConnectorFactory.register_connector(NAME, MODULE[, CLASS])` call with literal
    arguments (CLASS defaults to NAME, as vLLM's factory does). `registered_by`: `entry-point` when
    `vllm_ascend/__init__.py` defines `register_connector` (the function setup.py's `vllm.general_plugins` entry
    `ascend_kv_connector` names, so every engine process registers them at start), else `import` (they exist only
    once `vllm_ascend.distributed` is imported, which is why such releases' tutorials pass
    `kv_connector_module_path`).
    """
    where = where or git_where(tag)
    connectors: list[dict[str, Any]] = []
    for path, text in sorted(files.items()):
        if "register_connector" not in text:
            continue
        for node in ast.walk(ast.parse(text)):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "register_connector"
                and len(node.args) >= 2
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                continue
            name = node.args[0].value
            # the module may be chosen at run time (v0.13.0rc3: by an env switch): its expression is kept
            module = _fold(node.args[1])
            cls = _fold(node.args[2]) if len(node.args) > 2 else name
            connectors.append(
                {
                    "name": name,
                    "module": module if isinstance(module, str) else ast.unparse(node.args[1]),
                    "class": cls if isinstance(cls, str) else ast.unparse(node.args[2]),
                    "source": where(path, node.lineno),
                }
            )
    init = f"{PACKAGE}/__init__.py"
    hook = None
    if init in files:
        hook = next(
            (
                n
                for n in ast.parse(files[init]).body
                if isinstance(n, ast.FunctionDef) and n.name == "register_connector"
            ),
            None,
        )
    return {
        "registered_by": "entry-point" if hook is not None else "import",
        "source": where(init, hook.lineno if hook is not None else 1),
        "connectors": sorted(connectors, key=lambda c: (c["name"], c["source"])),
    }


def _resolve_text(name: str, tree: ast.Module, files: dict[str, str]) -> str:
    """A constant's name → its string value, following one `from vllm_ascend.x import NAME`."""
    for stmt in tree.body:
        if (
            isinstance(stmt, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets)
            and isinstance(stmt.value, ast.Constant)
        ):
            return repr(stmt.value.value)
        if isinstance(stmt, ast.ImportFrom) and stmt.module and any(a.name == name for a in stmt.names):
            for candidate in (f"{stmt.module.replace('.', '/')}.py", f"{stmt.module.replace('.', '/')}/__init__.py"):
                if candidate in files:
                    other = ast.parse(files[candidate])
                    for sub in other.body:
                        if (
                            isinstance(sub, ast.Assign)
                            and any(isinstance(t, ast.Name) and t.id == name for t in sub.targets)
                            and isinstance(sub.value, ast.Constant)
                        ):
                            return repr(sub.value.value)
    return name


# --------------------------------------------------------------------------------------------- assembly
def _read_rank(read: Read) -> tuple[Any, ...]:
    return (
        read.mod_path != MAIN_CONFIG,
        read.default is None and read.kind not in ("param", "field"),
        read.mod_path,
        read.line,
    )


def _default_of(val: Val | None) -> tuple[Any, str | None]:
    if val is None:
        return None, None
    if val.const is not _MISSING and _json_safe(val.const):
        text = ast.unparse(val.node) if val.node is not None and not isinstance(val.node, ast.Constant) else None
        return val.const, text
    if val.node is not None:
        literal = _fold(val.node)
        if literal is not _MISSING and _json_safe(literal):
            text = None if _is_literal(val.node) else ast.unparse(val.node)
            return (list(literal) if isinstance(literal, tuple) else literal), text
        return None, ast.unparse(val.node)[:160]
    return None, None


def _clean_type(text: str | None) -> str | None:
    if text is None:
        return None
    return text.replace("typing.", "").replace("Optional[", "").rstrip("]") if "Optional[" in text else text


def build_keys(an: Analyzer, env_types: dict[str, str | None]) -> list[dict[str, Any]]:
    groups: dict[KeyPath, list[Read]] = {}
    for read in an.read_ids:
        groups.setdefault(read.path, []).append(read)
    keys = []
    for path in sorted(groups):
        reads = sorted(groups[path], key=_read_rank)
        primary = reads[0]
        with_default = next((r for r in reads if r.default is not None), None)
        chosen = primary if primary.default is not None or with_default is None else with_default
        default, default_expr = _default_of(chosen.default)
        is_mapping = path in an.mapping_paths
        env = chosen.env or next((r.env for r in reads if r.env), None)
        kind = chosen.cast or _clean_type(chosen.annotation) or _type_name(default)
        kind = kind or next((r.cast or _clean_type(r.annotation) for r in reads if r.cast or r.annotation), None)
        if kind is None and env and env_types.get(env):
            kind = env_types[env]
        if is_mapping:
            kind = "dict"
        entry: dict[str, Any] = {
            "path": ".".join(path),
            "type": kind,
            "default": default,
            "source": chosen.source,
            "env_fallback": env,
            "mapping": is_mapping,
        }
        if default_expr is not None:
            entry["default_expr"] = default_expr
        deprecated = next((r.deprecated for r in reads if r.deprecated), None)
        if deprecated:
            entry["deprecated"] = deprecated  # the code warns that this key is deprecated when it is given
        if all(r.kind == "subscript" for r in reads):
            entry["required"] = True  # read as m[key] with no default and no `in` check: KeyError if missing
        others = sorted({r.source for r in reads} - {chosen.source})
        if others:
            entry["also_read_at"] = others
        keys.append(entry)
    return keys


def build_policies(an: Analyzer, keys: list[dict[str, Any]]) -> dict[str, dict[str, str]]:
    first_source: dict[str, str] = {}
    for entry in keys:
        first_source.setdefault(str(entry["path"]), str(entry["source"]))
    root_source = next((r.source for r in sorted(an.read_ids, key=_read_rank) if r.path[:-1] == ()), None)
    out: dict[str, dict[str, str]] = {}
    if root_source is None:  # nothing reads additional_config: point at the platform class vLLM hands it to
        platform = an.modules.get(f"{PACKAGE}/platform.py")
        line = next((n.lineno for n in platform.tree.body if isinstance(n, ast.ClassDef)), 1) if platform else 1
        root_source = an.where(f"{PACKAGE}/platform.py", line)
        out[""] = {"policy": "ignored", "source": root_source, "detail": "no code in this tag reads additional_config"}
        return out
    for path in sorted(an.mapping_paths):
        dotted = ".".join(path)
        policy = an.policies.get(path)
        if policy is None:
            source = root_source if not path else first_source.get(dotted, root_source)
            out[dotted] = {"policy": "ignored", "source": source, "detail": "no code checks for keys it does not read"}
        else:
            out[dotted] = {"policy": policy.policy, "source": policy.source, "detail": policy.detail}
    return out


def extract_from_sources(tag: str, files: dict[str, str], where: Where | None = None) -> dict[str, Any]:
    """The whole table for one tag, from {path: text} of its `vllm_ascend/**/*.py` (pure; no git, no I/O).

    `where(path, line)` spells each fact's `source` (default `TAG:path:line`; see `SourceTree.src`).
    """
    an = Analyzer(tag, files, where)
    an.run()
    envs, env_note = extract_envs(tag, files, where)
    env_types = {str(e["name"]): e.get("type") for e in envs}
    keys = build_keys(an, env_types)
    table: dict[str, Any] = {
        "schema": SCHEMA,
        "tag": tag,
        "generated_by": "scripts/extract_ascend_keys.py",
        "keys": keys,
        "unknown_keys": build_policies(an, keys),
        "env": envs,
        "quantization_cli_choice": extract_quant_hook(tag, files, where),
        "kv_connectors": extract_kv_connectors(tag, files, where),
        "unresolved": [{"what": w, "source": s} for w, s in sorted(an.unresolved, key=lambda x: (x[1], x[0]))],
    }
    if env_note:
        table["env_note"] = env_note
    if not files:
        table["note"] = f"{tag} has no {PACKAGE}/ sources"
    return table


def write_table(table: dict[str, Any], out_dir: Path) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{table['tag']}.json"
    path.write_text(json.dumps(table, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def _strip_v(text: str) -> str:
    return text[1:] if text[:1] in ("v", "V") else text


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--repo", type=Path, default=DEFAULT_REPO, help="a vllm-ascend git repository, bare is fine (%(default)s)"
    )
    parser.add_argument(
        "--tags", nargs="*", help=f"tags to extract (default: every tag {FIRST_TAG} … {LAST_TAG} + the PyPI release)"
    )
    parser.add_argument(
        "--pypi-post", default=DEFAULT_POST, help="PyPI-only release read from its sdist ('none' to skip; %(default)s)"
    )
    parser.add_argument("--pypi-sdist", type=Path, help="use this sdist file instead of the cached/downloaded one")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="where the sdist is kept (%(default)s)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder (default: %(default)s)")
    args = parser.parse_args(argv)
    post = "" if args.pypi_post.lower() == "none" else "v" + _strip_v(args.pypi_post)
    wanted = list(args.tags or [])
    trees: list[SourceTree] = [GitTree(args.repo, t) for t in (wanted or release_tags(args.repo)) if t != post]
    if post and (not wanted or post in wanted):
        sdist = args.pypi_sdist or fetch_sdist(_strip_v(post), args.cache)
        trees.append(SdistTree(sdist, post))
    for tree in trees:
        tag = tree.tag
        files = tree.sources()
        table = extract_from_sources(tag, files, tree.src)
        path = write_table(table, args.out)
        policies = table["unknown_keys"]
        strict = sorted(p or "<top>" for p, v in policies.items() if v["policy"] == "error")
        print(
            f"{tag:<13} {len(files):>4} files  {len(table['keys']):>3} keys  {len(table['env']):>3} env  "
            f"quant-choice={'yes' if table['quantization_cli_choice']['value'] else 'no ':<3}  "
            f"unresolved={len(table['unresolved']):<3} error-on-unknown: {', '.join(strict) or '-'}  → {path.name}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
