"""The per-vLLM-tag flag table (`engine/data/vllm_flags.yaml`) and the queries adapters make of it.

`flag_state(flag, vllm)` answers "does vLLM <vllm> accept this `vllm serve` flag?" with `yes`, `no` or
`unknown`, from recorded evidence only (see the YAML header for how observations are read).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any, Literal

from packaging.version import Version

FlagState = Literal["yes", "no", "unknown"]

_FLAG = re.compile(r"^--?[A-Za-z]")


def version_of(text: str) -> Version:
    """A PEP 440 version from a tag (`v0.13.0rc1`) or pip form (`0.13.0`)."""
    text = text.strip()
    return Version(text[1:] if text[:1] in ("v", "V") else text)


@dataclass(frozen=True)
class FlagEvidence:
    name: str
    observations: tuple[tuple[Version, bool], ...]  # sorted by version
    src: str


@dataclass(frozen=True)
class FlagTable:
    examined: tuple[str, ...]
    tags: tuple[str, ...]
    flags: Mapping[str, FlagEvidence]

    def state(self, flag: str, vllm: str) -> FlagState:
        evidence = self.flags.get(canonical_flag(flag) or flag)
        if evidence is None:
            return "unknown"
        v = version_of(vllm)
        lower: tuple[Version, bool] | None = None
        upper: tuple[Version, bool] | None = None
        for seen_at, present in evidence.observations:
            if seen_at == v:
                return "yes" if present else "no"
            if seen_at < v:
                lower = (seen_at, present)
            elif upper is None:
                upper = (seen_at, present)
        if lower is not None and upper is not None and lower[1] == upper[1]:
            return "yes" if lower[1] else "no"
        return "unknown"

    def source(self, flag: str) -> str:
        evidence = self.flags.get(canonical_flag(flag) or flag)
        return evidence.src if evidence else "not in the flag table"

    def known(self, flag: str) -> bool:
        return (canonical_flag(flag) or flag) in self.flags


def canonical_flag(token: str) -> str | None:
    """The table key of an argv token: `--max_model_len=5` → `--max-model-len`,
    `--eplb-config.window_size` → `--eplb-config`, `-O3` → `-O`. None when the token is not a flag."""
    if not _FLAG.match(token):
        return None
    if token.startswith("--"):
        name = token[2:].split("=", 1)[0]
        head = name.split(".", 1)[0]
        return "--" + head.replace("_", "-")
    name = token[1:].split("=", 1)[0]
    if name.startswith("O") and (len(name) == 1 or name[1:].isdigit() or name[1] == "."):
        return "-O"
    return "-" + name.split(".", 1)[0]


def flag_tokens(argv: Sequence[str]) -> list[str]:
    """The flag tokens of an argv (values such as `-1` or JSON strings are skipped)."""
    out: list[str] = []
    for token in argv:
        if token.startswith("-") and len(token) > 1 and not _is_number(token):
            name = canonical_flag(token)
            if name is not None:
                out.append(token)
    return out


def _is_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


def _observations(raw: Mapping[str, Any], examined: Sequence[str]) -> tuple[tuple[Version, bool], ...]:
    obs: dict[Version, bool] = {}
    at = str(raw.get("at", ""))
    if at and len(at) != len(examined):
        raise ValueError(f"`at` {at!r} must have one letter per examined tag ({len(examined)})")
    for letter, tag in zip(at, examined, strict=False):
        if letter in "yn":
            obs[version_of(tag)] = letter == "y"
        elif letter != "?":
            raise ValueError(f"`at` letters are y, n or ?, got {letter!r}")
    for seen in raw.get("seen", []) or []:
        v = version_of(str(seen))
        if obs.get(v) is False:
            raise ValueError(f"seen at {seen} contradicts `at`")
        obs[v] = True
    return tuple(sorted(obs.items()))


def parse_table(data: Mapping[str, Any]) -> FlagTable:
    examined = tuple(str(t) for t in data["examined"])
    flags: dict[str, FlagEvidence] = {}
    for name, raw in (data.get("flags") or {}).items():
        if canonical_flag(name) != name:
            raise ValueError(f"flag {name!r} is not in canonical form")
        if not isinstance(raw, Mapping) or not raw.get("src"):
            raise ValueError(f"flag {name!r} needs a `src`")
        try:
            flags[name] = FlagEvidence(name, _observations(raw, examined), str(raw["src"]))
        except ValueError as exc:
            raise ValueError(f"flag {name!r}: {exc}") from None
    return FlagTable(examined, tuple(str(t) for t in data["tags"]), flags)


@lru_cache(maxsize=1)
def load_flag_table() -> FlagTable:
    """The packaged table (parsed once per process)."""
    import yaml

    text = resources.files("ascendctl_engine").joinpath("data/vllm_flags.yaml").read_text(encoding="utf-8")
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    data = yaml.load(text, Loader=loader)  # noqa: S506 - a safe loader (C or pure Python)
    return parse_table(data)


def unknown_or_absent(argv: Iterable[str], vllm: str, table: FlagTable | None = None) -> list[tuple[str, FlagState]]:
    """Flags of `argv` that vLLM `vllm` is not known to accept, with their state."""
    table = table or load_flag_table()
    out: list[tuple[str, FlagState]] = []
    for token in flag_tokens(list(argv)):
        state = table.state(token, vllm)
        if state != "yes":
            out.append((token, state))
    return out
