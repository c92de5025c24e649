"""Collects what the era adapters decide, checks every flag, JSON key, `--additional-config` key and
`VLLM_ASCEND_*` variable against what the target release accepts (`acceptance.ReleaseAcceptance`: the real-parser
snapshot of its vLLM pin and the vllm-ascend tag's key table), and assembles the per-node `EngineCommand`s.

Adapters never build argv strings themselves: they call `arg()`, `compile_key()`, `additional_key()`,
`env_default()` with a reason, and the builder records the provenance of each value.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import Any

from ascendctl_engine.adapters.acceptance import FAIL_ON_ENVIRON, ReleaseAcceptance, SettingVerdict
from ascendctl_engine.adapters.intent import EngineIntent, secret_ref
from ascendctl_engine.adapters.parser_snapshot import ItemSchema
from ascendctl_engine.argv_items import ArgItem, parse_args
from ascendctl_engine.flags import canonical_flag, flag_tokens
from ascendctl_engine.json_args import additional_configs
from ascendctl_engine.mapping import deep_merge
from ascendctl_engine.records import record
from ascendctl_engine.spec import (
    EngineCommand,
    Joined,
    Listen,
    NodeAddress,
    NodeRankBase,
    SecretRef,
    Symbols,
    Word,
)
from ascendctl_engine.vocab import Clause

# A value only a node-level consumer can spell: a node's address, this node's first DP rank, or a word made
# of text and those. Adapters pass them as values; the builder keeps them symbolic next to the resolved text.
Symbolic = NodeAddress | NodeRankBase | Joined
ArgValue = str | int | float | Sequence[int] | Symbolic | None


@record(eq=False, frozen=False)
class Arg:
    flag: str
    words: tuple[Word, ...]  # the values, symbolic (a plain value is a one-part word)
    why: str
    server: bool = False  # an API-server option: dropped on headless nodes


def _word(value: str | Symbolic) -> Word:
    if isinstance(value, Joined):
        return value.parts
    return (value,)


def _has_refs(word: Word) -> bool:
    return any(not isinstance(part, str) for part in word)


@record
class Refusal:
    """A constraint the intent breaks on this release. `kind` names the constraint: the topic whose era refused
    (`graph`, `speculative`, ...) or the check that did (`parser`: the release's real parser rejects an
    argument; `keys`: an `--additional-config` key; `env`: a variable; `node-args`: a per-node option).
    `clause`: why it may refuse — `engine-start` (`fatal`: the engine cannot start with it, as asked for this
    release: the parser rejects the spelling, a config class raises), `placement`, `known-failure`; None: the
    engine would ignore or drop it, a warning."""

    kind: str
    message: str
    fatal: bool = False
    clause: Clause | None = None


@record(eq=False, frozen=False)
class AdapterResult:
    """What the adapters made of one intent: one command per node, plus the reasons."""

    commands: tuple[EngineCommand, ...]
    provenance: dict[str, str]  # "--flag" / "env:NAME" / "--additional-config.a.b" / "decision:x" → why
    warnings: tuple[str, ...]
    refusals: tuple[Refusal, ...]  # broken constraints (each a finding of the plan)
    eras: dict[str, str]  # topic → era name and range used
    env_sources: dict[int, dict[str, str]]  # node → env var → provenance
    graph_mode: str  # resolved: eager / piecewise / full / full-decode-only / full-and-piecewise / torchair / default
    graph_why: str  # why that mode: the graph era's decision, or the provenance of the flag that spells it
    resolved: dict[str, tuple[Any, str]] = field(default_factory=dict)  # intent path → (value the adapters chose, why)
    hccl_buffer_mb: tuple[int, str] | None = None  # the HCCL buffer the plan sets (MB, why); None: HCCL's default
    # provenance key → the dotted profile field that asked for it (`engine.ascend.flashcomm1`), where one did: what
    # `plan --against-release` pairs across releases to tell a renamed flag/key/variable from an added one
    origins: dict[str, str] = field(default_factory=dict)
    # every `--additional-config` key and vLLM / vllm-ascend variable the plan passes, wherever it was written, as
    # the release reads it (`ReleaseAcceptance.judge_keys` / `judge_env`): the findings and the release diff ask it
    reads: tuple[SettingVerdict, ...] = ()
    decisive: tuple[str, ...] = ()  # the topics whose era emitted, suppressed or decided something here

    @property
    def unsupported(self) -> tuple[str, ...]:
        return tuple(r.message for r in self.refusals)


def _str(value: int | float | str) -> str:
    if isinstance(value, bool):
        raise TypeError("boolean flags take no value")
    return str(value)


def _set_path(target: dict[str, Any], path: Sequence[str], value: Any) -> None:
    node = target
    for part in path[:-1]:
        nxt = node.get(part)
        if not isinstance(nxt, dict):
            nxt = {}
            node[part] = nxt
        node = nxt
    node[path[-1]] = value


def _flag_key(token: str) -> str:
    """`--eplb-config.window_size=5` → `--eplb-config.window_size` (dotted sub-keys are separate options)."""
    name = token.split("=", 1)[0]
    head, dot, rest = name.partition(".")
    return (canonical_flag(head) or head) + dot + rest


def _json(value: Any) -> str:
    return json.dumps(value)


def _arg_groups(tokens: Sequence[str]) -> list[list[str]]:
    """Extra args as option groups: each flag token with the values that follow it."""
    groups: list[list[str]] = []
    for token in tokens:
        if flag_tokens([token]) or not groups:
            groups.append([token])
        else:
            groups[-1].append(token)
    return groups


@record(eq=False, frozen=False)
class CommandBuilder:
    intent: EngineIntent
    accepted: ReleaseAcceptance
    args: dict[str, Arg] = field(default_factory=dict)
    node_args: dict[int, dict[str, Arg]] = field(default_factory=dict)
    compilation: dict[str, Any] = field(default_factory=dict)
    additional: dict[str, Any] = field(default_factory=dict)
    env: dict[str, tuple[str, str]] = field(default_factory=dict)
    node_env: dict[int, dict[str, tuple[Word, str]]] = field(default_factory=dict)
    pre_commands: dict[int, list[tuple[Word, ...]]] = field(default_factory=dict)
    worker_argv: dict[int, tuple[Word, ...]] = field(default_factory=dict)
    headless: set[int] = field(default_factory=set)
    provenance: dict[str, str] = field(default_factory=dict)
    origins: dict[str, str] = field(default_factory=dict)  # provenance key → the profile field that asked for it
    warnings: list[str] = field(default_factory=list)
    refusals: list[Refusal] = field(default_factory=list)
    topic: str = ""  # the topic whose era is applying (what its refusals are about)
    eras: dict[str, str] = field(default_factory=dict)
    decisive: list[str] = field(default_factory=list)  # topics whose era emitted, suppressed or decided something
    # Set by the graph topic, spelled by the capture-sizes topic (None: the engine's own list).
    capture_sizes: tuple[int, ...] | None = None
    capture_sizes_why: str = ""
    graph_mode: str = "auto"  # resolved by the graph topic: eager / piecewise / full / ... / torchair / default
    resolved: dict[str, tuple[Any, str]] = field(default_factory=dict)
    hccl_buffer_mb: tuple[int, str] | None = None
    ascend_scheduler: bool = False  # TorchAir era: the Ascend scheduler is on (takes chunked prefill)
    # Set by data eras (`lora-modules`): the JSON objects a list flag's items may be, for the argv replay.
    item_schemas: dict[str, ItemSchema] = field(default_factory=dict)
    reads: dict[tuple[str, str, str], SettingVerdict] = field(default_factory=dict)  # (kind, name, origin) → verdict

    # ---------------------------------------------------------------- queries
    @property
    def vllm(self) -> str:
        return self.intent.vllm

    def accepts(self, flag: str) -> bool:
        """Whether the target vLLM's real parser has `flag` (from its snapshot)."""
        return self.accepted.has_flag(flag)

    def state(self) -> tuple[Any, ...]:
        """What an era can change: compared before and after it applies, to tell an era that decided something in
        this plan (emitted, dropped, resolved, warned, refused) from one that had nothing to do. Not `item_schemas`:
        a data era's description of a flag's items, whether or not the flag is used."""
        return (
            dict(self.provenance),
            tuple(self.warnings),
            len(self.refusals),
            dict(self.resolved),
            self.capture_sizes,
            self.graph_mode,
            self.hccl_buffer_mb,
            self.ascend_scheduler,
            len(self.reads),
        )

    # ---------------------------------------------------------------- recording
    def warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)

    def fail(self, message: str, *, kind: str | None = None, fatal: bool = False, clause: Clause | None = None) -> None:
        """A constraint this intent breaks on this release (a finding of the plan); `kind` defaults to the topic
        applying. It refuses only with a `clause` (`fatal` is `engine-start`); without one it warns: what the
        release would ignore or drop."""
        if fatal or clause == "engine-start":
            fatal, clause = True, "engine-start"
        if message not in self.unsupported:
            self.refusals.append(Refusal(kind or self.topic or "plan", message, fatal, clause))

    @property
    def unsupported(self) -> list[str]:
        return [r.message for r in self.refusals]

    def decide(self, key: str, why: str) -> None:
        self.provenance[f"decision:{key}"] = why

    def _origin(self, key: str, why: str, origin: str | None) -> None:
        """Record which profile field asked for `key`: the adapter's `origin`, else the one field whose provenance
        (`intent.sources`) is exactly `why` (an adapter that passes `intent.source(path)` unchanged)."""
        if origin is None:
            owners = [path for path, text in self.intent.sources.items() if text == why]
            origin = owners[0] if len(owners) == 1 else None
        if origin is not None:
            self.origins[key] = origin

    def resolve(self, path: str, value: Any, why: str) -> None:
        """Record the value the adapters chose for an `auto` intent (the plan's settings show it)."""
        self.resolved[path] = (value, why)

    def arg(
        self,
        flag: str,
        *values: ArgValue,
        why: str,
        required: bool = True,
        node: int | None = None,
        server: bool = False,
        origin: str | None = None,
    ) -> bool:
        """Emit `flag` (with values) if the target vLLM's parser has it. Returns whether it was emitted.

        A flag the parser lacks is never emitted: `required` → a broken constraint, optional → a warning.
        An API-server option (`server`, or one the release's parser snapshot files among them) is dropped on
        headless nodes.
        """
        if not self.accepted.has_flag(flag):
            message = f"vLLM {self.vllm} has no `{flag}` ({self.accepted.parser.source}); it was needed for: {why}"
            if required:  # spelled as asked, the release's parser would refuse it
                self.fail(message, clause="engine-start")
            else:
                self.warn(message)
            return False
        words: list[Word] = []
        for value in values:
            if value is None:
                continue
            if isinstance(value, (NodeAddress, NodeRankBase, Joined)):
                words.append(_word(value))
            elif isinstance(value, (list, tuple)):
                words += [(_str(v),) for v in value]
            else:
                words.append((_str(value),))  # type: ignore[arg-type]
        target = self.args if node is None else self.node_args.setdefault(node, {})
        server = server or self.accepted.parser.is_api_server_flag(flag)
        target[flag] = Arg(flag, tuple(words), why, server)
        key = flag if node is None else f"{flag}@node{node}"
        self.provenance[key] = why
        self._origin(key, why, origin)
        return True

    def drop(self, flag: str) -> None:
        self.args.pop(flag, None)
        self.provenance.pop(flag, None)
        self.origins.pop(flag, None)

    def json_arg(self, flag: str, value: Mapping[str, Any], *, why: str, required: bool = True) -> bool:
        return self.arg(flag, _json(value), why=why, required=required)

    def compile_key(self, key: str, value: Any, *, why: str, origin: str | None = None) -> None:
        self.compilation[key] = value
        self.provenance[f"--compilation-config.{key}"] = why
        self._origin(f"--compilation-config.{key}", why, origin)

    def additional_key(self, path: str, value: Any, *, why: str, origin: str | None = None) -> None:
        _set_path(self.additional, path.split("."), value)
        self.provenance[f"--additional-config.{path}"] = why
        self._origin(f"--additional-config.{path}", why, origin)

    def env_default(
        self, name: str, value: str | NodeAddress, *, why: str, node: int | None = None, origin: str | None = None
    ) -> None:
        self._origin(f"env:{name}", why, origin)
        if node is None:
            if not isinstance(value, str):
                raise TypeError("a node address is per node: pass node=")
            self.env[name] = (value, why)
        else:
            self.node_env.setdefault(node, {})[name] = (_word(value), why)

    def pre_command(self, node: int, *words: str | Symbolic) -> None:
        """A command to run on `node` before the engine (e.g. `ray start --head`)."""
        self.pre_commands.setdefault(node, []).append(tuple(_word(w) for w in words))

    def node_process(self, node: int, *words: str | Symbolic) -> None:
        """The process `node` runs instead of `vllm serve` (e.g. a Ray worker's `ray start --block`)."""
        self.worker_argv[node] = tuple(_word(w) for w in words)

    # ---------------------------------------------------------------- references
    def address_known(self, node: int) -> bool:
        return self.intent.nodes[node].address is not None

    def text(self, word: Word) -> str:
        """A node-independent word as text (the head's view)."""
        return self._resolve(word, 0)

    def _resolve(self, word: Word, node: int) -> str:
        """A word as text on `node`: addresses from the profile's node list (or their placeholder)."""
        out = []
        for part in word:
            if isinstance(part, NodeAddress):
                out.append(self.intent.nodes[part.node].address or part.placeholder)
            elif isinstance(part, NodeRankBase):
                out.append(str(node * part.per_node))
            else:
                out.append(part)
        return "".join(out)

    # ---------------------------------------------------------------- assembly
    def finish(self) -> AdapterResult:
        intent = self.intent
        planned_additional = self.additional
        if intent.engine.additional_config:
            merged, replaced = deep_merge(planned_additional, intent.engine.additional_config)
            for path in replaced:
                self.warn(f"engine.additional_config overrides the planned `{path}` (the profile's value wins)")
            for key in intent.engine.additional_config:
                self.provenance[f"--additional-config.{key}"] = "user: engine.additional_config"
                self.origins[f"--additional-config.{key}"] = "engine.additional_config"
            planned_additional = merged
        self._judge_keys()
        if planned_additional:
            self.arg(
                "--additional-config",
                _json(planned_additional),
                why="vllm-ascend options collected from the plan (see --additional-config.* entries)",
            )
        if self.compilation:
            self.arg(
                "--compilation-config",
                _json(self.compilation),
                why="graph options collected from the plan (see --compilation-config.* entries)",
            )
        extra = self._checked_extra_args()
        shared = [(group, self.accepted.parser.is_api_server_flag(group[0])) for group in _arg_groups(extra)]
        if self.headless:
            for group, server in shared:
                if server:
                    self.provenance[f"extra:{group[0]}"] = (
                        "user: engine.extra_args (an API-server option: given to the head only, headless nodes "
                        "serve no API)"
                    )
        commands: list[EngineCommand] = []
        fails_on_unknown = self._fails_on_unknown_env()  # the same for every node: decided once
        env_sources: dict[int, dict[str, str]] = {}
        for node in intent.nodes:
            i = node.index
            headless = i in self.headless
            node_extra: list[str] = []
            mine: list[str] = []
            if i in self.worker_argv:
                words = list(self.worker_argv[i])
                if node.extra_args or node.device_utilization is not None:
                    self.fail(
                        f"network.nodes[{i}]: node {i} runs `{self.text(words[0])}`, not `vllm serve`: its "
                        "extra_args / device_utilization have no effect there (set them on the head)",
                        kind="node-args",
                    )
            else:
                words = [("vllm",), ("serve",), (intent.load.source,)]
                flags = dict(self.args)
                flags.update(self.node_args.get(i, {}))
                for a in flags.values():
                    if headless and a.server:
                        continue
                    words.append((a.flag,))
                    words += a.words
                mine = [t for group, server in shared if not (headless and server) for t in group]
                node_extra = self._checked_node_args(i, headless, set(flags))
                words += [(token,) for token in [*mine, *node_extra]]
            argv = tuple(self._resolve(w, i) for w in words)
            if i not in self.worker_argv:
                self._check_argv(argv, mine, node_extra, i)
            env, sources, env_words = self._node_env(i)
            self._judge_env(env, i, fails_on_unknown)
            env_sources[i] = sources
            serves_http = i not in self.worker_argv and not headless
            secret: dict[str, SecretRef] = {}
            if serves_http and intent.server.api_key is not None:
                api_key = secret_ref(intent.server.api_key)
                secret["VLLM_API_KEY"] = api_key
                sources["VLLM_API_KEY"] = f"user: server.api_key ({api_key.describe()}), read at launch"
            # runtime.secrets reach every node (a worker downloads weights too, e.g. with HF_TOKEN). A secret
            # replaces a planned value of the same name: one variable, one source, and no value left to print.
            for name, given in intent.runtime.secrets.items():
                ref = secret_ref(given)
                self._record(self.accepted.judge_env(name, "runtime.secrets", fails_on_unknown))
                replacing = f" (replaces the planned value: {sources[name]})" if name in env else ""
                env.pop(name, None)
                env_words.pop(name, None)
                secret[name] = ref
                sources[name] = f"user: runtime.secrets.{name} ({ref.describe()}), read at launch{replacing}"
            pre_words = tuple(self.pre_commands.get(i, ()))
            commands.append(
                EngineCommand(
                    node=i,
                    role="head" if i == 0 else "worker",
                    argv=argv,
                    env=env,
                    secret_env=secret,
                    listen=Listen(intent.server.host, intent.server.port) if serves_http else None,
                    supervision=intent.supervision,
                    pre_commands=tuple(tuple(self._resolve(w, i) for w in p) for p in pre_words),
                    symbols=self._symbols(tuple(words), env_words, pre_words),
                )
            )
        for name, (_value, why) in self.env.items():
            self.provenance[f"env:{name}"] = why
        self.provenance.update(self.accepted.describe())
        if self.accepted.parser.decision:
            self.warn(
                f"flags are checked against the vLLM {self.accepted.parser.built_from} parser, standing in for "
                f"{self.accepted.parser.version}: {self.accepted.parser.decision}"
            )
        return AdapterResult(
            commands=tuple(commands),
            provenance=self.provenance,
            warnings=tuple(self.warnings),
            refusals=tuple(self.refusals),
            reads=tuple(self.reads.values()),
            eras=self.eras,
            decisive=tuple(self.decisive),
            env_sources=env_sources,
            graph_mode=self.graph_mode,
            graph_why=self._graph_why(),
            resolved=dict(self.resolved),
            hccl_buffer_mb=self.hccl_buffer_mb,
            origins=dict(self.origins),
        )

    def _graph_why(self) -> str:
        for key in ("decision:graph.mode", "--enforce-eager", "--compilation-config.cudagraph_mode"):
            if key in self.provenance:
                return self.provenance[key]
        return self.intent.source("engine.graph.mode")

    def _symbols(
        self, argv: tuple[Word, ...], env: Mapping[str, Word], pre: tuple[tuple[Word, ...], ...]
    ) -> Symbols | None:
        words = [*argv, *env.values(), *(w for p in pre for w in p)]
        if not any(_has_refs(w) for w in words):
            return None
        unresolved = sorted(
            {p.node for w in words for p in w if isinstance(p, NodeAddress) and not self.address_known(p.node)}
        )
        return Symbols(argv, dict(env), pre, tuple(unresolved))

    def _node_env(self, node: int) -> tuple[dict[str, str], dict[str, str], dict[str, Word]]:
        """The node's env, where each value came from, and the values that hold a reference (symbolic)."""
        env: dict[str, str] = {}
        sources: dict[str, str] = {}
        words: dict[str, Word] = {}
        for name, (value, why) in self.env.items():
            env[name] = value
            sources[name] = why
        for name, (word, why) in self.node_env.get(node, {}).items():
            env[name] = self._resolve(word, node)
            sources[name] = why
            if _has_refs(word):
                words[name] = word
        for name, value in self.intent.runtime.env.items():
            words.pop(name, None)  # the profile's own value is literal text
            if name in env and env[name] != value:
                sources[name] = f"user: runtime.env.{name} (replaces the planned {env[name]!r}: {sources[name]})"
            else:
                sources[name] = f"user: runtime.env.{name}"
            env[name] = value
        for name, value in self.intent.nodes[node].env.items():
            words.pop(name, None)
            here = f"user: network.nodes[{node}].env.{name}"
            if name in env and env[name] != value:
                sources[name] = f"{here} (replaces {env[name]!r}: {sources[name]})"
            else:
                sources[name] = here
            env[name] = value
        return env, sources, words

    def _checked_extra_args(self) -> list[str]:
        """The profile's extra args, with warnings for repeats and `--config`; whether the release accepts them
        is decided with the rest of the argv by the parser snapshot (`_check_argv`)."""
        extra = list(self.intent.engine.extra_args)
        if not extra:
            return extra
        planned = {_flag_key(f) for f in self.args}
        for item in parse_args(extra):
            token = item.tokens[0]
            name = item.flag + (f".{item.key}" if item.key else "")
            if name in planned:
                self.warn(f"engine.extra_args repeats the planned `{name}`; vLLM takes the last value (yours)")
            if item.flag == "--config":
                self.warn(
                    "engine.extra_args passes `--config`: vLLM silently drops `false` values from that YAML "
                    "(vLLM `_pull_args_from_config`, vllm/utils/argparse_utils.py); ascendctl always spells "
                    "switches as flags instead"
                )
            self.provenance[f"extra:{token}"] = "user: engine.extra_args"
        return extra

    def _checked_node_args(self, node: int, headless: bool, planned: set[str]) -> list[str]:
        """`network.nodes[node].extra_args`, appended after the profile-wide ones: an API-server option on a
        headless node is a broken constraint (it serves no API); a repeat of a planned flag is a warning."""
        kept: list[str] = []
        where = f"network.nodes[{node}].extra_args"
        planned_keys = {_flag_key(f) for f in planned}
        for group in _arg_groups(self.intent.nodes[node].extra_args):
            token = group[0]
            if headless and self.accepted.parser.is_api_server_flag(token):
                self.fail(
                    f"{where}: `{token}` is an API-server option of vLLM {self.vllm} "
                    f"({self.accepted.parser.source}), and node {node} is headless (it serves no API): "
                    "set it on the head (network.nodes[0].extra_args or engine.extra_args)",
                    kind="node-args",
                )
                continue  # never given to the node, even when unsupported plans are allowed
            if _flag_key(token) in planned_keys:
                self.warn(f"{where} repeats the planned `{_flag_key(token)}`; vLLM takes the last value (yours)")
            self.provenance[f"extra:{token}@node{node}"] = f"user: {where}"
            kept += group
        return kept

    def _check_argv(
        self, argv: Sequence[str], extra: Sequence[str], node_extra: Sequence[str] = (), node: int = 0
    ) -> None:
        """Replay one node's argv through the release's real-parser snapshot: every rejection (a flag it lacks,
        a bad choice or value, a JSON key it rejects or drops) is a broken constraint."""
        extra_flags = {canonical_flag(t) for t in flag_tokens(list(extra))}
        node_flags = {canonical_flag(t) for t in flag_tokens(list(node_extra))}
        for problem in self.accepted.argv_problems(argv, self.item_schemas):
            flag = canonical_flag(problem.token.split(" ", 1)[0])  # a value's problem: "--flag value"
            fatal = problem.severity == "error"  # vLLM's parser or config classes refuse it: no start
            if flag in node_flags:
                self.fail(f"network.nodes[{node}].extra_args: {problem.message}", kind="parser", fatal=fatal)
            elif flag in extra_flags:
                self.fail(f"engine.extra_args: {problem.message}", kind="parser", fatal=fatal)
            else:
                self.fail(problem.message, kind="parser", fatal=fatal)

    # ---------------------------------------------------------------- what the release reads
    def _record(self, verdict: SettingVerdict | None) -> None:
        """Keep one verdict per (kind, name, origin). One the engine would not start with is a fatal refusal
        (`plan.rejected.*`); the plan's findings make the rest from `AdapterResult.reads` (`plan.unread.*`)."""
        if verdict is None:
            return
        key = (verdict.kind, verdict.name, verdict.origin)
        if key in self.reads:
            return
        self.reads[key] = verdict
        if verdict.status == "rejected":
            self.fail(verdict.message, kind="keys" if verdict.kind == "key" else "env", fatal=True)

    def _planned_key_origin(self, path: str) -> str:
        """The typed field that asked for a key the plan sets (its longest recorded prefix), else `the plan`."""
        parts = path.split(".")
        for n in range(len(parts), 0, -1):
            origin = self.origins.get("--additional-config." + ".".join(parts[:n]))
            if origin is not None and origin != "engine.additional_config":
                return origin
        return "the plan"

    def _judge_keys(self) -> None:
        """Every `--additional-config` key, judged where it was written: the plan's own (a typed field or a
        default), `engine.additional_config`, and an `--additional-config` in the profile's or a node's
        `extra_args` (which vLLM reads as a whole option: the last one given wins)."""
        for verdict in self.accepted.judge_keys(self.additional, "the plan"):
            self._record(dataclasses.replace(verdict, origin=self._planned_key_origin(verdict.name)))
        for verdict in self.accepted.judge_keys(self.intent.engine.additional_config, "engine.additional_config"):
            self._record(verdict)
        for origin, items in self._written_args():
            for _item, mapping in additional_configs(items):
                for verdict in self.accepted.judge_keys(mapping, origin):
                    self._record(verdict)

    def _written_args(self) -> list[tuple[str, tuple[ArgItem, ...]]]:
        """The profile's extra args and each node's, parsed, with where they were written."""
        written = [("engine.extra_args", self.intent.engine.arg_items)]
        for node in self.intent.nodes:
            if node.overrides is not None:
                written.append((f"network.nodes[{node.index}].extra_args", node.overrides.arg_items))
        return written

    def _fails_on_unknown_env(self) -> bool:
        """Whether the argv turns vLLM's unknown-variable warning into a start-up error (the last spelling wins)."""
        said = [i for _origin, items in self._written_args() for i in items if i.positive == FAIL_ON_ENVIRON]
        return bool(said) and not said[-1].negated

    def _judge_env(self, env: Mapping[str, str], node: int, fails: bool) -> None:
        """Every variable of one node's env, judged where it was written (`fails`: `_fails_on_unknown_env`)."""
        for name in env:
            if name in self.intent.nodes[node].env:
                origin = f"network.nodes[{node}].env"
            elif name in self.intent.runtime.env:
                origin = "runtime.env"
            else:
                origin = self.origins.get(f"env:{name}") or "the plan"
            self._record(self.accepted.judge_env(name, origin, fails))
