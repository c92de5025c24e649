"""What each vllm-ascend release reads: its `--additional-config` keys, its env variables, its parser hook.

One checked-in table per tag, `engine/ascendctl_engine/data/ascend_keys/<tag>.json`, written by the maintainer script
`scripts/extract_ascend_keys.py` from a static (`ast`) reading of that tag's `vllm_ascend/` sources. Nothing
here guesses between tags: a tag without a table raises `KeyTableMissing`. A release that exists only on PyPI
(`v0.23.0.post1`, no git tag) has a table too, read from its sdist; it sorts among the tags by PEP 440.

File format (JSON, `indent=1`, sorted keys; every `source` is `TAG:path:line` in vllm-ascend, or for a PyPI-only
release `TAG:PyPI:<sdist file>:path:line`, e.g. `v0.23.0.post1:PyPI:vllm_ascend-0.23.0.post1.tar.gz:…`):

- `schema` (1), `tag`, `generated_by`.
- `keys`: one object per key the code reads, sorted by `path`:
  - `path`: dotted, from the top of `--additional-config` (`eplb_config.num_redundant_experts`);
  - `type`: `bool` / `int` / `float` / `str` / `list` / `dict` or another annotation text, null when nothing
    tells (taken from a cast around the read, else an annotation, else the default's type);
  - `default`: the value used when the key is absent (JSON), or null; `default_expr`: its source text when it
    is not a plain literal (`ascend_envs.VLLM_ASCEND_ENABLE_MLAPO`, `18 * 1024 * 1024`);
  - `env_fallback`: the environment variable the getter falls back to when the key is absent, or null;
  - `mapping`: true when the code reads keys inside this one (a sub-config such as `eplb_config`);
  - `source`: the read used for the facts above; `also_read_at`: the other places that read it;
  - optional `deprecated` (where the code warns that the key is deprecated when given) and `required`
    (only ever read as `m[key]`: a KeyError when its parent is given without it).
- `unknown_keys`: for the top level (`""`) and each sub-config path, what a key the code does not read does:
  `{"policy": "ignored" | "warned" | "error" | "kept", "source": …, "detail": …}`. `error`: start-up fails
  (e.g. `EplbConfig` raising "Config has no attribute …"); `kept`: every key is copied on without a check, so
  any key there is accepted (e.g. `ascend_scheduler_config` at v0.9.x); `warned`: logged and ignored.
- `env`: the variables `vllm_ascend/envs.py` defines, sorted by `name`: `default` (the string the lookup
  falls back to, or null), `type` (the cast applied: `bool`, `int`, `str`), `source`, optional `default_expr`
  and `reads_env` (other variables the lookup falls back to). `env_note` says why the list is empty.
- `quantization_cli_choice`: `{"value", "source", "detail"}`: whether the platform's parser hook
  (`pre_register_and_update`) appends `ascend` to vLLM's `--quantization` choices.
- `kv_connectors`: `{"registered_by", "source", "connectors": [{"name", "module", "class", "source"}]}`, the KV
  connectors the tag registers with vLLM's `KVConnectorFactory` (`name` is what `--kv-transfer-config`'s
  `kv_connector` says); `registered_by` `entry-point` (the `ascend_kv_connector` general plugin registers them in
  every engine process) or `import` (only once `vllm_ascend.distributed` is imported: `kv_connector_module_path`
  must name the module).
- `unresolved`: `[{"what", "source"}]`, what the static reading could not follow (a mapping handed to code
  outside the tag's sources, a key computed at run time).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, cast

from packaging.version import InvalidVersion, Version

from ascendctl_engine.jsonio import read_json_resource
from ascendctl_engine.package_data import package_dir
from ascendctl_engine.records import record
from ascendctl_engine.versions import parse

Policy = Literal["ignored", "warned", "error", "kept"]
ProblemKind = Literal["not-read", "rejected"]

DATA_PACKAGE = "ascendctl_engine"
DATA_DIR = ("data", "ascend_keys")
SOURCE_PREFIX = "engine/ascendctl_engine/data/ascend_keys"  # how messages name a table (its path in the repository)
_POLICIES: frozenset[str] = frozenset({"ignored", "warned", "error", "kept"})


class KeyTableMissing(LookupError):
    """No checked-in table for this vllm-ascend tag."""


@record
class KeyInfo:
    path: str
    type: str | None
    default: Any
    source: str
    env_fallback: str | None
    mapping: bool = False
    default_expr: str | None = None
    deprecated: str | None = None


@record
class EnvInfo:
    name: str
    default: str | None
    source: str
    type: str | None = None


@record
class KvConnectorInfo:
    """A KV connector a tag registers: the name `kv_connector` gives, where its class lives, where it is registered."""

    name: str
    module: str
    cls: str
    source: str


@record
class KeyProblem:
    path: str
    kind: ProblemKind
    message: str


@record
class _Unknown:
    policy: Policy
    source: str
    detail: str


class KeyTable:
    """One tag's table (see the module docstring for the file it is read from)."""

    def __init__(self, tag: str, source: str, data: Mapping[str, Any]) -> None:
        self.tag = tag
        self.source = source
        self._keys: dict[str, KeyInfo] = {}
        for raw in data.get("keys", ()):
            info = KeyInfo(
                path=str(raw["path"]),
                type=raw.get("type"),
                default=raw.get("default"),
                source=str(raw["source"]),
                env_fallback=raw.get("env_fallback"),
                mapping=bool(raw.get("mapping", False)),
                default_expr=raw.get("default_expr"),
                deprecated=raw.get("deprecated"),
            )
            self._keys[info.path] = info
        self._unknown: dict[str, _Unknown] = {}
        for parent, raw in dict(data.get("unknown_keys", {})).items():
            policy = str(raw["policy"])
            if policy not in _POLICIES:
                raise ValueError(f"{source}: unknown_keys[{parent!r}] has policy {policy!r}")
            self._unknown[str(parent)] = _Unknown(cast(Policy, policy), str(raw["source"]), str(raw.get("detail", "")))
        self._env: dict[str, EnvInfo] = {
            str(raw["name"]): EnvInfo(
                name=str(raw["name"]),
                default=None if raw.get("default") is None else str(raw["default"]),
                source=str(raw["source"]),
                type=raw.get("type"),
            )
            for raw in data.get("env", ())
        }
        hook = data.get("quantization_cli_choice", {})
        self._quant_choice = bool(hook.get("value", False))
        self.quantization_cli_source: str = str(hook.get("source", ""))
        kv = data.get("kv_connectors", {})
        self.kv_connectors: dict[str, KvConnectorInfo] = {
            str(c["name"]): KvConnectorInfo(str(c["name"]), str(c["module"]), str(c["class"]), str(c["source"]))
            for c in kv.get("connectors", ())
        }
        # `import`: the names exist only once vllm_ascend.distributed is imported (see the module docstring)
        self.kv_registered_by: str = str(kv.get("registered_by", "import"))
        self.kv_registered_source: str = str(kv.get("source", ""))
        self.unresolved: tuple[tuple[str, str], ...] = tuple(
            (str(u["what"]), str(u["source"])) for u in data.get("unresolved", ())
        )

    def __repr__(self) -> str:
        return f"KeyTable({self.tag!r}, {len(self._keys)} keys, {len(self._env)} env)"

    # -------------------------------------------------------------------------------------------- keys
    def reads(self, path: str) -> bool:
        """Whether the tag's code reads this key (a leaf, or a sub-config such as `eplb_config`)."""
        return path in self._keys

    def key(self, path: str) -> KeyInfo | None:
        return self._keys.get(path)

    @property
    def keys(self) -> tuple[KeyInfo, ...]:
        return tuple(self._keys.values())

    def unknown_policy(self, parent: str) -> str:
        """What a key the code does not read does when given directly under `parent` ("" = top level).

        Under a `kept` level (or below one) everything is accepted. A parent that is no mapping level of this
        tag (not read, or read only as a whole value) checks nothing: `ignored`.
        """
        kept = self._kept_ancestor(parent)
        if kept is not None:
            return "kept"
        found = self._unknown.get(parent)
        return found.policy if found is not None else "ignored"

    def unknown_detail(self, parent: str) -> tuple[str, str]:
        """(source, detail) of the policy `unknown_policy(parent)` reports ("" when no code is involved)."""
        kept = self._kept_ancestor(parent)
        found = self._unknown.get(kept if kept is not None else parent)
        return (found.source, found.detail) if found is not None else ("", "")

    def _kept_ancestor(self, parent: str) -> str | None:
        parts = parent.split(".") if parent else []
        for cut in range(len(parts), 0, -1):
            prefix = ".".join(parts[:cut])
            found = self._unknown.get(prefix)
            if found is not None and found.policy == "kept":
                return prefix
        return None

    def check(self, additional_config: Mapping[str, Any]) -> list[KeyProblem]:
        """Every key of `additional_config` (walking nested mappings) that this tag does not read.

        A key under a `kept` level is accepted; one under an `error` level is `rejected` (start-up fails); any
        other unread key is `not-read` (the tag ignores it, perhaps with a warning).
        """
        problems: list[KeyProblem] = []
        self._walk(additional_config, "", problems)
        return problems

    def _walk(self, mapping: Mapping[str, Any], parent: str, out: list[KeyProblem]) -> None:
        policy = self.unknown_policy(parent)
        if policy == "kept":
            return
        for name, value in mapping.items():
            path = f"{parent}.{name}" if parent else str(name)
            info = self._keys.get(path)
            if info is not None:
                if info.mapping and isinstance(value, Mapping):
                    self._walk(value, path, out)
                continue
            out.append(self._problem(path, parent, policy))

    def _problem(self, path: str, parent: str, policy: str) -> KeyProblem:
        where, detail = self.unknown_detail(parent)
        readers = tags_reading(path)
        others = f"read by {tag_span(readers)}" if readers else "no vllm-ascend release reads it"
        if policy == "error":
            error = next((w for w in detail.replace("(", " ").split() if w.endswith("Error")), "an error")
            return KeyProblem(
                path,
                "rejected",
                f"vllm-ascend {self.tag} rejects `--additional-config` key `{path}`: {error} at start-up "
                f"({where}); {others}",
            )
        what = "it is logged as a warning and ignored" if policy == "warned" else "it is ignored"
        return KeyProblem(
            path,
            "not-read",
            f"vllm-ascend {self.tag} does not read `--additional-config` key `{path}`: {what} "
            f"({self.source}); {others}",
        )

    # ------------------------------------------------------------------------------------ env and hook
    def env(self, name: str) -> EnvInfo | None:
        return self._env.get(name)

    @property
    def env_names(self) -> frozenset[str]:
        return frozenset(self._env)

    @property
    def quantization_cli_choice(self) -> bool:
        """Whether the tag's parser hook adds `ascend` to vLLM's `--quantization` choices."""
        return self._quant_choice


# ------------------------------------------------------------------------------------------------ loading
def _data_dir() -> Path:
    return package_dir(DATA_PACKAGE).joinpath(*DATA_DIR)


def _version(tag: str) -> Version:
    return parse(tag)


@functools.lru_cache(maxsize=1)
def key_tags() -> tuple[str, ...]:
    """The tags with a table, oldest first (PEP 440 order: v0.7.3rc1 < v0.7.3 < v0.7.3.post1)."""
    tags = []
    for entry in _data_dir().iterdir():
        name = entry.name
        if name.endswith(".json"):
            try:
                _version(name[: -len(".json")])
            except InvalidVersion:
                continue
            tags.append(name[: -len(".json")])
    return tuple(sorted(tags, key=_version))


@functools.cache  # = lru_cache(maxsize=None)
def key_table(tag: str) -> KeyTable:
    """The table of vllm-ascend `tag` (`v0.13.0`; a missing leading `v` is added)."""
    name = tag if tag.startswith("v") else f"v{tag}"
    path = _data_dir().joinpath(f"{name}.json")
    if not path.is_file():
        have = key_tags()
        span = f"{have[0]} … {have[-1]}" if have else "none"
        raise KeyTableMissing(
            f"no config-key table for vllm-ascend {name} in {SOURCE_PREFIX}/ (tables: {span}); "
            "add it with scripts/extract_ascend_keys.py --repo <vllm-ascend clone> --tags " + name
        )
    data = read_json_resource(path)  # package data: the one JSON reader, without the depth pre-check
    return KeyTable(name, f"{SOURCE_PREFIX}/{name}.json", data)


def tags_reading(path: str) -> tuple[str, ...]:
    """The tags whose code reads `path`, oldest first."""
    return tuple(t for t in key_tags() if key_table(t).reads(path))


def tags_registering(connector: str) -> tuple[str, ...]:
    """The tags that register KV connector `connector` (its `kv_connector` name), oldest first."""
    return tuple(t for t in key_tags() if connector in key_table(t).kv_connectors)


def tags_defining_env(name: str) -> tuple[str, ...]:
    """The tags whose `vllm_ascend/envs.py` defines variable `name`, oldest first."""
    return tuple(t for t in key_tags() if key_table(t).env(name) is not None)


def tag_span(tags: Sequence[str]) -> str:
    """`v0.9.0rc1 … v0.11.0 (15 tags)`, or the tags themselves when there are few; gaps become separate runs."""
    order = key_tags()
    runs: list[list[str]] = []
    for tag in tags:
        if runs and order.index(runs[-1][-1]) + 1 == order.index(tag):
            runs[-1].append(tag)
        else:
            runs.append([tag])
    parts = [run[0] if len(run) == 1 else f"{run[0]} … {run[-1]}" for run in runs]
    return ", ".join(parts) + (f" ({len(tags)} tags)" if len(tags) > 3 else "")
