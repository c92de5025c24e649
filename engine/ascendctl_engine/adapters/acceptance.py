"""What one target release accepts: the real-parser snapshot of its vLLM pin, the `VLLM_*` variables that vLLM
reads, and (on Ascend) the per-tag table of `--additional-config` keys and variables that vllm-ascend tag reads.

All are checked-in data built by maintainer scripts from the real artifacts (`scripts/snapshot_vllm_parsers.py`,
`scripts/extract_vllm_envs.py`, `scripts/extract_ascend_keys.py`); nothing here infers a state between versions. The
builder asks this object, and only this object, whether a flag, a JSON key, a config key or a variable exists for
the release.

`judge_keys` and `judge_env` are the one judgement of an `--additional-config` key or a variable, whatever wrote it
(a typed field, `engine.additional_config`, `runtime.env`, `runtime.secrets`, `engine.extra_args`, a node's `env` or
`extra_args`, a prefill/decode role's `engine` block): the verdict's `reason` is the same sentence wherever the
setting was written, and its `origin` says where that was.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from ascendctl_engine.adapters.ascend_keys import KeyProblem, KeyTable, key_table, tag_span, tags_defining_env
from ascendctl_engine.adapters.parser_snapshot import (
    ArgvProblem,
    ItemSchema,
    ParserSnapshot,
    parser_distribution,
    snapshot_for,
)
from ascendctl_engine.adapters.vllm_envs import PREFIX as VLLM_PREFIX
from ascendctl_engine.adapters.vllm_envs import SOURCE as VLLM_ENV_SOURCE
from ascendctl_engine.adapters.vllm_envs import VllmEnvTable, versions_reading, vllm_env_table
from ascendctl_engine.records import record

# The only plugin-added `--quantization` choice: vllm-ascend's platform hook appends it to vLLM's list.
ASCEND_QUANT_CHOICE = "ascend"
ENV_PREFIX = "VLLM_ASCEND_"
# vLLM's switch that turns its unknown-variable warning into a start-up error (EngineArgs.fail_on_environ_validation)
FAIL_ON_ENVIRON = "--fail-on-environ-validation"

SettingKind = Literal["key", "env"]  # an `--additional-config` key, an environment variable
ReadStatus = Literal["read", "not-read", "rejected"]


@record
class SettingVerdict:
    """Whether the release reads one setting a plan passes: `read`, `not-read` (the engine starts and ignores it,
    perhaps with a log line) or `rejected` (the engine refuses to start with it)."""

    kind: SettingKind
    name: str  # the dotted key path (`eplb_config.dynamic_eplb`) or the variable
    origin: str  # where it was written: `engine.extra_args`, `runtime.env`, a typed field, `the plan`
    status: ReadStatus
    reason: str = ""  # why not read / rejected: the same words wherever it was written

    @property
    def message(self) -> str:
        return f"{self.origin}: {self.reason}"


@record
class ReleaseAcceptance:
    parser: ParserSnapshot
    keys: KeyTable | None  # None off Ascend (vLLM itself reads no `--additional-config` key)
    envs: VllmEnvTable | None = None  # the pinned vLLM's variables; None: no table for that version

    def has_flag(self, flag: str) -> bool:
        return self.parser.has(flag)

    def extra_choices(self) -> dict[str, list[str]]:
        if self.keys is not None and self.keys.quantization_cli_choice:
            return {"--quantization": [ASCEND_QUANT_CHOICE]}
        return {}

    def argv_problems(self, argv: Sequence[str], items: Mapping[str, ItemSchema] | None = None) -> list[ArgvProblem]:
        """The parser's problems with `argv`; `items`: the JSON objects list items may be (the `lora-modules` era's
        schema, which the builder passes)."""
        return self.parser.check_argv(argv, extra_choices=self.extra_choices(), items=items)

    def key_problems(self, additional_config: Mapping[str, Any]) -> list[KeyProblem]:
        if self.keys is None or not additional_config:
            return []
        return self.keys.check(additional_config)

    def judge_keys(self, additional_config: Mapping[str, Any], origin: str) -> list[SettingVerdict]:
        """Every key of an `--additional-config` mapping (nested keys included) judged against the tag's table:
        the keys it does not read or rejects (at the level the table decides), and every other leaf as read. Off
        Ascend nothing reads the option: no verdicts."""
        if self.keys is None or not additional_config:
            return []
        problems = self.keys.check(additional_config)
        out = [
            SettingVerdict("key", p.path, origin, "rejected" if p.kind == "rejected" else "not-read", p.message)
            for p in problems
        ]
        covered = tuple(p.path for p in problems)
        for path in _leaf_paths(additional_config):
            if not any(path == c or path.startswith(c + ".") for c in covered):
                out.append(SettingVerdict("key", path, origin, "read"))
        return out

    def judge_env(self, name: str, origin: str, fail_on_unknown: bool = False) -> SettingVerdict | None:
        """Whether the release reads variable `name`: vllm-ascend's table for the names it defines and every
        `VLLM_ASCEND_*`, vLLM's for the other `VLLM_*`. None for a variable neither reads by name (CANN, HCCL, the
        OS) or a `VLLM_*` of a vLLM version without a table. `fail_on_unknown`: the plan passes
        `--fail-on-environ-validation`, which makes vLLM's check for unknown `VLLM_*` variables raise at start."""
        ascend = self.keys is not None and (name.startswith(ENV_PREFIX) or self.keys.env(name) is not None)
        if not ascend and (self.envs is None or not name.startswith(VLLM_PREFIX)):
            return None
        rejected = self._rejected_env(name, fail_on_unknown)
        if rejected is not None:
            return SettingVerdict("env", name, origin, "rejected", rejected)
        if self.keys is not None and ascend:
            if self.keys.env(name) is not None:
                return SettingVerdict("env", name, origin, "read")
            tags = tags_defining_env(name)
            where = f"defined by {tag_span(tags)}" if tags else "no vllm-ascend release defines it"
            why = f"vllm-ascend {self.keys.tag} does not read `{name}` ({self.keys.source}; {where})"
            return SettingVerdict("env", name, origin, "not-read", why + self._starts_anyway())
        assert self.envs is not None
        if name in self.envs.names:
            return SettingVerdict("env", name, origin, "read")
        readers = versions_reading(name)
        where = f"read by {readers}" if readers else "no pinned vLLM reads it"
        why = f"vLLM {self.envs.version} does not read `{name}` ({VLLM_ENV_SOURCE}, from {self.envs.source}; {where})"
        return SettingVerdict("env", name, origin, "not-read", why + self._starts_anyway())

    def _starts_anyway(self) -> str:
        if self.envs is not None and self.envs.validate_environ is not None:
            return (
                f": the engine logs 'Unknown vLLM environment variable detected' ({self.envs.validate_environ}) "
                "and starts without it"
            )
        return ": the engine starts without it"

    def _rejected_env(self, name: str, fail_on_unknown: bool) -> str | None:
        """Why vLLM refuses to start with `name` set under `--fail-on-environ-validation` (None: it does not)."""
        envs = self.envs
        if not fail_on_unknown or envs is None or envs.validate_environ is None:
            return None
        if not name.startswith(VLLM_PREFIX) or name in envs.names:
            return None
        return (
            f"vLLM {envs.version} refuses to start with `{name}` set: {FAIL_ON_ENVIRON} makes its check of `VLLM_*` "
            f"variables raise ValueError('Unknown vLLM environment variable detected: {name}') "
            f"({envs.validate_environ}; vLLM's own list: {VLLM_ENV_SOURCE})"
        )

    def describe(self) -> dict[str, str]:
        """What `plan --why` shows: which snapshot and table every check used."""
        parser = f"vLLM {self.parser.built_from} real-parser snapshot {self.parser.source}"
        if self.parser.decision:
            parser += f" (stands in for {self.parser.version}: {self.parser.decision})"
        out = {"decision:flag-check": parser}
        if self.keys is not None:
            out["decision:config-key-check"] = f"vllm-ascend {self.keys.tag} key table {self.keys.source}"
        if self.envs is not None:
            out["decision:env-check"] = f"vLLM {self.envs.version} variables {VLLM_ENV_SOURCE} ({self.envs.source})"
        return out


def _leaf_paths(mapping: Mapping[str, Any], prefix: str = "") -> list[str]:
    out: list[str] = []
    for name, value in mapping.items():
        path = f"{prefix}{name}"
        if isinstance(value, Mapping) and value:
            out += _leaf_paths(value, path + ".")
        else:
            out.append(path)
    return out


def acceptance_for(backend: str, vllm: str, vllm_ascend: str | None) -> ReleaseAcceptance:
    """The snapshot and tables of one release (cached by their loaders)."""
    distribution = parser_distribution(backend)
    # The key tables are read for vllm-ascend releases only: a CPU / CUDA plan reads none.
    keys = key_table(vllm_ascend) if backend == "npu" and vllm_ascend else None
    return ReleaseAcceptance(snapshot_for(vllm, distribution), keys, vllm_env_table(distribution, vllm))
