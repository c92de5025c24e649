"""Secrets in a profile: where their values may come from, which names and flags mean one, which variables
`check` must redact, and what `check` and `serve` say about key files.

A secret's value never enters a profile, a plan, a rendered file, the state dir or a log. The profile names
a source — `{env: VAR}` or `{file: PATH}` — for the API key (`server.api_key`, exported as `VLLM_API_KEY`)
and for any other secret variable (`runtime.secrets`, e.g. `HF_TOKEN`); the planner carries sources as
`SecretRef`s (`EngineCommand.secret_env`), plans print them as `<redacted>`, renderers write references
(a Kubernetes Secret, `${VAR:?}`, a key-file read), and only the launcher reads the values, at start
(`ascendctl_engine.launcher.resolve_secrets`), redacting them from every engine line it logs.

What looks like an inline secret is refused when the profile is loaded (exit 2, `file:line`): a `runtime.env` entry
whose name is a secret's (`ascendctl_engine.spec.secret_name_part`: a `_`-separated part KEY, APIKEY, TOKEN,
SECRET(S), or one containing PASSWORD/PASSWD) unless its value is a switch (`0`, `1`, `true`, `false`, `yes`, `no`,
`on`, `off`), and a secret-valued `vllm serve` flag in `engine.extra_args` (`SECRET_FLAGS`), and a secret-named key
in `engine.additional_config` (`secret_config_key`) or in an `--additional-config` of `engine.extra_args`
(`secret_config_args`). So is an env map that sets the variable a declared source reads
(`{env: VAR}`), or a variable a secret already sets; the sources are found by walking the profile
(`ascendctl.schema.declared_secrets`), not from a list of keys. This module holds no profile model, so `check` on a
host reads it without loading them.
"""

from __future__ import annotations

import shlex
import stat
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ascendctl_engine.argv_items import ArgItem
from ascendctl_engine.json_args import ADDITIONAL_CONFIG, ADDITIONAL_CONFIG_SHORTEST, RepeatedKeys, item_configs, spells
from ascendctl_engine.paths import expand_user
from ascendctl_engine.records import record
from ascendctl_engine.secret_names import API_KEY_VAR, INLINE_REFUSED, POSIX_NAME, is_posix_name, is_switch
from ascendctl_engine.spec import is_secret_name, secret_name_part

if TYPE_CHECKING:
    from ascendctl_engine.spec import EngineCommand


@record
class FlagSecret:
    """How a secret-valued `vllm serve` flag is spelled and what carries its secret instead."""

    shortest: str  # the shortest prefix vLLM's parser still reads as the flag
    instead: str  # what the profile says instead
    bare_ok: bool  # whether the flag without a value is harmless
    variable: str  # the engine variable that gives the engine the same secret (what `import` makes of the flag)


# `vllm serve` flags whose value is a secret. vLLM's argparse takes unique-prefix abbreviations
# (engine/ascendctl_engine/adapters/parser_snapshot.py): `--api-k` is `--api-key`, while `--api` also starts
# `--api-server-count` and `--hf` starts `--hf-overrides`. A bare `--hf-token` means "the token cached by
# `huggingface-cli login`", which puts no secret in the profile; a valued one is the token huggingface_hub
# otherwise reads from `HF_TOKEN`.
SECRET_FLAGS: Mapping[str, FlagSecret] = {
    "--api-key": FlagSecret("--api-k", "set server.api_key: {env: VAR} or {file: PATH}", False, API_KEY_VAR),
    "--hf-token": FlagSecret(
        "--hf-t", "use runtime.secrets: {HF_TOKEN: {env: VAR}} or {HF_TOKEN: {file: PATH}}", True, "HF_TOKEN"
    ),
}


def secret_label(name: str) -> str:
    """The profile key a command's secret variable comes from."""
    return "server.api_key" if name == API_KEY_VAR else f"runtime.secrets.{name}"


class Source(Protocol):
    """A profile's source of one secret (`server.api_key`, a `runtime.secrets` entry): an env var or a file."""

    @property
    def env(self) -> str | None: ...

    @property
    def file(self) -> str | None: ...


def declared_secret_names(api_key: Source | None, secrets: Mapping[str, Source]) -> frozenset[str]:
    """Every variable whose value a profile makes or reads as a secret, from its `server.api_key` and
    `runtime.secrets`: the variables it sets (`VLLM_API_KEY`, `runtime.secrets` names) and the env vars it reads
    them from."""
    names: set[str] = set()
    if api_key is not None:
        names.add(API_KEY_VAR)
        if api_key.env:
            names.add(api_key.env)
    for name, source in secrets.items():
        names.add(name)
        if source.env:
            names.add(source.env)
    return frozenset(names)


def inline_secret_env(env: Mapping[str, str]) -> list[tuple[str, str]]:
    """`runtime.env` entries whose name is a secret's and whose value is not a switch: (name, the part that
    makes it one)."""
    return [(n, part) for n, v in env.items() if (part := secret_name_part(n)) is not None and not is_switch(v)]


def secret_config_key(config: object, path: tuple[str | int, ...] = ()) -> tuple[tuple[str | int, ...], str] | None:
    """The first key in a JSON config (`engine.additional_config`, nested maps and lists included) whose name is a
    secret's and whose value is a scalar that is not a switch: (its path, the part that makes it one), or None.
    vllm-ascend reads no secret from `--additional-config` (no key of any release's table has such a name:
    engine/ascendctl_engine/data/ascend_keys), so such a key is a secret written into the engine's argv."""
    items: Iterable[tuple[str | int, object]] = ()
    if isinstance(config, Mapping):
        items = config.items()
    elif isinstance(config, RepeatedKeys):  # an `--additional-config` object naming a key twice: every value
        items = iter(config)
    elif isinstance(config, list):
        items = enumerate(config)
    for key, value in items:
        here = (*path, key)
        if isinstance(value, (Mapping, list)):
            found = secret_config_key(value, here)
            if found is not None:
                return found
            continue
        part = secret_name_part(key) if isinstance(key, str) else None
        if part is not None and value is not None and not is_switch(value):
            return here, part
    return None


@record
class SecretFlag:
    index: int  # position in engine.extra_args
    flag: str  # the secret flag it spells (canonical), never the token itself: it may hold `=VALUE`
    instead: str
    variable: str  # the engine variable that carries the same secret (`FlagSecret.variable`)


def secret_flags(items: Sequence[ArgItem]) -> list[SecretFlag]:
    """The secret-valued `vllm serve` flags among parsed extra args (`parse_args`), any spelling: `--api_key`,
    `--api-key=...`, an abbreviation such as `--api-k` (a unique prefix at least as long as the shortest one
    argparse would still resolve to the secret flag)."""
    found: list[SecretFlag] = []
    for item in items:
        for flag, spec in SECRET_FLAGS.items():
            if spells(item, flag, spec.shortest) and (item.values or not spec.bare_ok):
                found.append(SecretFlag(item.index, flag, spec.instead, spec.variable))
    return found


@record
class SecretConfigArg:
    index: int  # position of the `--additional-config` item in the argv
    path: tuple[str | int, ...]  # the secret-named key in its JSON (a dotted `--additional-config.KEY` first)
    part: str  # what makes the key's name a secret's (`secret_name_part`)


def secret_config_args(items: Sequence[ArgItem]) -> list[SecretConfigArg]:
    """The `--additional-config` items among parsed args (any spelling: `--additional_config`, `=V`, an
    abbreviation, a dotted `--additional-config.KEY V`) whose JSON holds a secret-named key (`secret_config_key`),
    as `engine.additional_config` may not. A value that is not JSON holds no key (the planner reports it)."""
    found: list[SecretConfigArg] = []
    for item in items:
        if not spells(item, ADDITIONAL_CONFIG, ADDITIONAL_CONFIG_SHORTEST):
            continue
        for config in item_configs(item):
            hit = secret_config_key(config)
            if hit is not None:
                found.append(SecretConfigArg(item.index, *hit))
                break
    return found


# --- key files --------------------------------------------------------------------------------------


@record
class KeyFile:
    label: str  # the profile key naming it, e.g. server.api_key.file
    path: str


def profile_key_files(api_key: Source | None, secrets: Mapping[str, Source]) -> list[KeyFile]:
    """The key files a profile's `server.api_key` and `runtime.secrets` name."""
    files: list[KeyFile] = []
    if api_key is not None and api_key.file:
        files.append(KeyFile("server.api_key.file", api_key.file))
    files += [KeyFile(f"runtime.secrets.{n}.file", s.file) for n, s in secrets.items() if s.file]
    return files


def command_key_files(commands: Iterable[EngineCommand]) -> list[KeyFile]:
    seen: dict[tuple[str, str], KeyFile] = {}
    for command in commands:
        for name, ref in command.secret_env.items():
            if ref.file:
                seen.setdefault((name, ref.file), KeyFile(f"{secret_label(name)}.file", ref.file))
    return list(seen.values())


def key_file_path(path: str, root: str = "/") -> Path:
    """Where the launcher reads `path` (`~` expanded, like `resolve_secret`), under a captured host's root."""
    expanded = expand_user(path, "key file")
    if root != "/" and expanded.is_absolute():
        return Path(root) / expanded.relative_to(expanded.anchor)
    return expanded


def open_mode(path: Path) -> int | None:
    """The group/other permission bits of a key file when it has any (None: private). Raises OSError."""
    mode = stat.S_IMODE(path.stat().st_mode)
    return mode if mode & 0o077 else None


def chmod_fix(path: str) -> str:
    return f"chmod 600 {shlex.quote(str(expand_user(path, 'key file')))}"


def loose_message(key: KeyFile, mode: int) -> str:
    return f"{key.label} {key.path} is open to group/others (mode {mode:04o}); only its owner should read it"


def key_file_warnings(commands: Iterable[EngineCommand]) -> list[str]:
    """What `serve` says before starting about the plan's key files that others may read (a missing or
    unreadable file is the launcher's error, with its own message)."""
    out: list[str] = []
    for key in command_key_files(commands):
        try:
            mode = open_mode(key_file_path(key.path))
        except OSError:
            continue
        if mode is not None:
            out.append(f"{loose_message(key, mode)}: {chmod_fix(key.path)}")
    return out


__all__ = [
    "ADDITIONAL_CONFIG",
    "API_KEY_VAR",
    "INLINE_REFUSED",
    "POSIX_NAME",
    "SECRET_FLAGS",
    "FlagSecret",
    "KeyFile",
    "SecretConfigArg",
    "SecretFlag",
    "chmod_fix",
    "command_key_files",
    "declared_secret_names",
    "inline_secret_env",
    "is_posix_name",
    "is_secret_name",
    "is_switch",
    "key_file_path",
    "key_file_warnings",
    "loose_message",
    "open_mode",
    "profile_key_files",
    "secret_config_args",
    "secret_config_key",
    "secret_flags",
    "secret_label",
]
