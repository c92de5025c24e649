"""What one target release accepts: the real-parser snapshot of its vLLM pin, and (on Ascend) the per-tag
table of `--additional-config` keys and `VLLM_ASCEND_*` variables that vllm-ascend tag reads.

Both are checked-in data built by maintainer scripts from the real artifacts (`scripts/snapshot_vllm_parsers.py`,
`scripts/extract_ascend_keys.py`); nothing here infers a state between versions. The builder asks this
object, and only this object, whether a flag, a JSON key, a config key or a variable exists for the release.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ascendctl_engine.adapters.ascend_keys import KeyProblem, KeyTable, key_table, tag_span, tags_defining_env
from ascendctl_engine.adapters.parser_snapshot import (
    ArgvProblem,
    ItemSchema,
    ParserSnapshot,
    parser_distribution,
    snapshot_for,
)
from ascendctl_engine.records import record

# The only plugin-added `--quantization` choice: vllm-ascend's platform hook appends it to vLLM's list.
ASCEND_QUANT_CHOICE = "ascend"
ENV_PREFIX = "VLLM_ASCEND_"


@record
class ReleaseAcceptance:
    parser: ParserSnapshot
    keys: KeyTable | None  # None off Ascend (vLLM itself reads no `--additional-config` key)

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

    def env_problem(self, name: str) -> str | None:
        """Why variable `name` is not read by this release (None: it is, or it is not a vllm-ascend variable)."""
        if self.keys is None or not name.startswith(ENV_PREFIX) or self.keys.env(name) is not None:
            return None
        tags = tags_defining_env(name)
        where = f"defined by {tag_span(tags)}" if tags else "no vllm-ascend release defines it"
        return f"vllm-ascend {self.keys.tag} does not read `{name}` ({self.keys.source}; {where})"

    def describe(self) -> dict[str, str]:
        """What `plan --why` shows: which snapshot and table every check used."""
        parser = f"vLLM {self.parser.built_from} real-parser snapshot {self.parser.source}"
        if self.parser.decision:
            parser += f" (stands in for {self.parser.version}: {self.parser.decision})"
        out = {"decision:flag-check": parser}
        if self.keys is not None:
            out["decision:config-key-check"] = f"vllm-ascend {self.keys.tag} key table {self.keys.source}"
        return out


def acceptance_for(backend: str, vllm: str, vllm_ascend: str | None) -> ReleaseAcceptance:
    """The snapshot and table of one release (cached by their loaders)."""
    distribution = parser_distribution(backend)
    # The key tables are read for vllm-ascend releases only: a CPU / CUDA plan reads none.
    keys = key_table(vllm_ascend) if backend == "npu" and vllm_ascend else None
    return ReleaseAcceptance(snapshot_for(vllm, distribution), keys)
