"""Property: whatever document the loader is fed, it returns a Profile or raises the user-error type.

Generated inputs (≥ 10,000 documents in all, counted, not just configured): random YAML-ish text,
random bytes, structural mutations of the shipped profiles, random byte flips of them, and random
`--set` overrides. No input may end in any other exception (that would be exit 3 for a user), and every
reported issue must render as one located line.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ascendctl.core.errors import DocumentError, UserInputError
from ascendctl.core.yamlio import load_yaml_bytes, load_yaml_text
from ascendctl.schema.loader import parse_override, validate_profile_document
from ascendctl.schema.profile import Profile

PROFILE_FILES = sorted((Path(__file__).resolve().parent.parent / "profiles").glob("*.yaml"))
PROFILE_BYTES = [p.read_bytes() for p in PROFILE_FILES]
PROFILE_DATA = [yaml.safe_load(b) for b in PROFILE_BYTES]


def budget(max_examples: int) -> settings:
    return settings(SETTINGS, max_examples=max_examples)


SETTINGS = settings(
    deadline=None,
    derandomize=True,  # the same examples on every run: CI stays stable
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
TOTAL: dict[str, int] = {}
MINIMUM_TOTAL = 10_000


class Outcomes:
    def __init__(self) -> None:
        self.valid = 0
        self.invalid = 0

    @property
    def total(self) -> int:
        return self.valid + self.invalid


def check(outcomes: Outcomes, load: Callable[[], Profile], text_lines: int | None = None) -> None:
    """Run one load; only a Profile or a located user error may come out."""
    try:
        profile = load()
    except DocumentError as exc:
        outcomes.invalid += 1
        assert exc.issues, "a DocumentError must carry at least one issue"
        for issue in exc.issues:
            line = issue.render()
            assert "\n" not in line and "\r" not in line, line
            assert issue.line >= 0 and issue.column >= 0
            if text_lines is not None and issue.source == "doc.yaml":
                assert issue.line <= text_lines + 1, line
    except UserInputError as exc:
        outcomes.invalid += 1
        assert "\n" not in str(exc)
    else:
        outcomes.valid += 1
        assert isinstance(profile, Profile)


def record(name: str, outcomes: Outcomes, quota: int) -> None:
    TOTAL[name] = outcomes.total
    print(f"{name}: {outcomes.total} documents ({outcomes.valid} valid, {outcomes.invalid} invalid)")
    assert outcomes.total >= quota, f"hypothesis ran only {outcomes.total} of {quota} examples"


def lines_of(text: str) -> int:
    return text.count("\n") + 1


# --- strategies --------------------------------------------------------------------------------------

YAML_TOKENS = [
    *"abcxyz019_-.:/ \n\t[]{},&*!|>'\"#%@`?~=",
    ": ",
    "- ",
    "\n  ",
    "\n    ",
    "&a ",
    "*a",
    "<<: ",
    "!!str ",
    "!!int ",
    "!!set ",
    "!!python/tuple ",
    "!!binary ",
    "---\n",
    "...\n",
    "null",
    "true",
    "1e400",
    "0x1F",
    "2024-13-45",
    ".nan",
    "apiVersion: ascendctl/v1\n",
    "kind: Profile\n",
    "metadata:\n  name: x\n",
    "model:\n  source: m\n",
    "target:\n  backend: cpu\n",
    "target:\n  backend: npu\n  hardware: a2\n",
    "engine:\n  parallel:\n    tensor: 2\n",
    "server:\n  api_key:\n    env: K\n",
]

yaml_like_text = st.lists(st.sampled_from(YAML_TOKENS), max_size=60).map("".join)

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(["npu", "cpu", "a2", "w8a8", "eager", "auto", "static", "ascendctl/v1", "Profile", "-x"]),
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)


def containers(data: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Paths of every mapping and list inside `data` (the root included)."""
    out: list[tuple[Any, ...]] = []
    if isinstance(data, dict):
        out.append(path)
        for key, value in data.items():
            out += containers(value, (*path, key))
    elif isinstance(data, list):
        out.append(path)
        for index, value in enumerate(data):
            out += containers(value, (*path, index))
    return out


def at(data: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        data = data[part]
    return data


FIELD_NAMES = sorted(
    {str(key) for data in PROFILE_DATA for path in containers(data) for key in (at(data, path) or {}) if path != ()}
    | set(PROFILE_DATA[0])
)


@st.composite
def mutated_profile(draw: st.DrawFn) -> str:
    data = copy.deepcopy(draw(st.sampled_from(PROFILE_DATA)))
    for _ in range(draw(st.integers(1, 4))):
        path = draw(st.sampled_from(containers(data)))
        node = at(data, path)
        op = draw(st.sampled_from(["delete", "retype", "insert", "insert-known", "wrap"]))
        keys = list(node) if isinstance(node, dict) else list(range(len(node)))
        if op == "insert":
            key = draw(st.text(max_size=10))
            if isinstance(node, dict):
                node[key] = draw(values)
            else:
                node.append(draw(values))
        elif op == "insert-known" and isinstance(node, dict):
            node[draw(st.sampled_from(FIELD_NAMES))] = draw(values)
        elif not keys:
            continue
        elif op == "delete":
            del node[draw(st.sampled_from(keys))]
        elif op == "retype":
            node[draw(st.sampled_from(keys))] = draw(values)
        elif op == "wrap":
            key = draw(st.sampled_from(keys))
            node[key] = [node[key]] if draw(st.booleans()) else {"x": node[key]}
    return yaml.safe_dump(data, sort_keys=draw(st.booleans()), allow_unicode=True)


@st.composite
def flipped_bytes(draw: st.DrawFn) -> bytes:
    raw = bytearray(draw(st.sampled_from(PROFILE_BYTES)))
    for _ in range(draw(st.integers(1, 6))):
        pos = draw(st.integers(0, len(raw) - 1))
        op = draw(st.sampled_from(["flip", "set", "insert", "delete", "truncate"]))
        if op == "flip":
            raw[pos] ^= 1 << draw(st.integers(0, 7))
        elif op == "set":
            raw[pos] = draw(st.integers(0, 255))
        elif op == "insert":
            raw[pos:pos] = draw(st.binary(min_size=1, max_size=8))
        elif op == "delete":
            del raw[pos : pos + draw(st.integers(1, 16))]
        else:
            del raw[pos:]
        if not raw:
            break
    return bytes(raw)


KNOWN_PATHS = sorted(
    {
        ".".join(str(p) for p in (*path, key))
        for data in PROFILE_DATA
        for path in containers(data)
        for key in (at(data, path) if isinstance(at(data, path), dict) else range(len(at(data, path))))
    }
)
segment = st.one_of(st.sampled_from(FIELD_NAMES), st.text(max_size=6), st.integers(0, 3).map(str))
override_key = st.one_of(
    st.sampled_from(KNOWN_PATHS),
    st.lists(segment, min_size=1, max_size=4).map(".".join),
    st.tuples(st.sampled_from(KNOWN_PATHS), segment).map(".".join),
)
override_value = st.one_of(yaml_like_text, st.text(max_size=20), scalars.map(str))
overrides = st.lists(
    st.one_of(st.tuples(override_key, override_value).map("=".join), st.text(max_size=20)), min_size=1, max_size=4
)


# --- the properties --------------------------------------------------------------------------------------


def test_random_yaml_text() -> None:
    outcomes, quota = Outcomes(), 2500

    @budget(quota)
    @given(st.one_of(yaml_like_text, st.text(max_size=200)))
    def run(text: str) -> None:
        check(outcomes, lambda: validate_profile_document(load_yaml_text(text, "doc.yaml")), lines_of(text))

    run()
    record("random YAML text", outcomes, quota)


def test_random_bytes() -> None:
    outcomes, quota = Outcomes(), 3000  # cheap (refused while reading): keeps the module's total at 10,000

    @budget(quota)
    @given(st.binary(max_size=300))
    def run(raw: bytes) -> None:
        check(outcomes, lambda: validate_profile_document(load_yaml_bytes(raw, "doc.yaml")))

    run()
    record("random bytes", outcomes, quota)


def test_mutated_profiles() -> None:
    # 1,500 mutations of the curated profiles (each validated in full: ~13 ms) keep this under 20 s of the suite
    outcomes, quota = Outcomes(), 1500

    @budget(quota)
    @given(mutated_profile())
    def run(text: str) -> None:
        check(outcomes, lambda: validate_profile_document(load_yaml_text(text, "doc.yaml")), lines_of(text))

    run()
    record("mutated profiles", outcomes, quota)
    assert outcomes.valid > 0 and outcomes.invalid > 0  # the mutations reach both sides


def test_byte_flipped_profiles() -> None:
    outcomes, quota = Outcomes(), 2000

    @budget(quota)
    @given(flipped_bytes())
    def run(raw: bytes) -> None:
        check(outcomes, lambda: validate_profile_document(load_yaml_bytes(raw, "doc.yaml")))

    run()
    record("byte-flipped profiles", outcomes, quota)
    assert outcomes.valid > 0 and outcomes.invalid > 0


def test_random_overrides() -> None:
    outcomes, quota = Outcomes(), 1000

    @budget(quota)
    @given(st.sampled_from(PROFILE_BYTES), overrides)
    def run(raw: bytes, sets: list[str]) -> None:
        def load() -> Profile:
            return validate_profile_document(load_yaml_bytes(raw, "doc.yaml"), [parse_override(s) for s in sets])

        check(outcomes, load)

    run()
    record("random --set overrides", outcomes, quota)
    assert outcomes.valid > 0 and outcomes.invalid > 0


@pytest.fixture(scope="module", autouse=True)
def _report_total() -> Any:
    yield
    if len(TOTAL) == 5:  # the whole module ran: the 10k claim holds for this run
        print(f"property tests fed {sum(TOTAL.values())} documents to the loader: {TOTAL}")
        assert sum(TOTAL.values()) >= MINIMUM_TOTAL
