"""The per-vLLM-tag flag table: its data is well-formed and reads as documented in its header."""

from __future__ import annotations

import pytest

from ascendctl_engine.adapters.flags import (
    canonical_flag,
    flag_tokens,
    load_flag_table,
    parse_table,
    unknown_or_absent,
    version_of,
)


def test_table_loads_and_lists_tags_in_order() -> None:
    table = load_flag_table()
    versions = [version_of(t) for t in table.tags]
    assert versions == sorted(versions) and len(set(versions)) == len(versions)
    assert table.tags[0] == "0.7.1" and table.tags[-1] == "0.33.0"
    assert set(table.examined) <= set(table.tags)
    assert all(name == canonical_flag(name) for name in table.flags)
    assert all(e.src for e in table.flags.values())


@pytest.mark.parametrize(
    ("flag", "vllm", "state"),
    [
        ("--shutdown-timeout", "0.13.0", "no"),  # parse test: unrecognized at 0.13
        ("--shutdown-timeout", "0.15.0", "unknown"),  # between no (0.13) and yes (0.18)
        ("--shutdown-timeout", "0.18.0", "yes"),
        ("--shutdown-timeout", "0.32.0", "yes"),  # yes at 0.23 and 0.33
        ("--task", "0.11.0", "yes"),
        ("--task", "0.12.0", "yes"),  # seen in vllm-ascend v0.12.0rc1 docs
        ("--task", "0.14.1", "no"),
        ("--cuda-graph-sizes", "0.13.0", "no"),
        ("--cuda-graph-sizes", "0.10.2", "unknown"),  # older than every observation
        ("--no-enable-prefix-caching", "0.33.0", "yes"),  # hidden but parses
        ("--disable-prefix-caching", "0.23.0", "no"),
        ("--disable-prefix-caching", "0.33.0", "yes"),
        ("--disable-log-requests", "0.25.1", "unknown"),  # came back at 0.33: no interpolation across
        ("--tensor-parallel-size", "0.7.3", "yes"),  # seen in vllm-ascend v0.7.3 docs
        ("--tensor-parallel-size", "0.7.1", "unknown"),
        ("--tensor_parallel_size=4", "0.13.0", "yes"),  # underscores and `=value` are normalised
        ("--eplb-config.use_async", "0.23.0", "yes"),  # dotted sub-keys belong to their option
        ("--no-such-flag", "0.23.0", "unknown"),
    ],
)
def test_states(flag: str, vllm: str, state: str) -> None:
    assert load_flag_table().state(flag, vllm) == state


def test_canonical_and_tokens() -> None:
    assert canonical_flag("--max_model_len=5") == "--max-model-len"
    assert canonical_flag("-O3") == "-O" and canonical_flag("-tp") == "-tp"
    assert canonical_flag("value") is None
    argv = ["vllm", "serve", "m", "--max-model-len", "-1", "--hf-overrides", '{"a": 1}', "-tp", "2"]
    assert flag_tokens(argv) == ["--max-model-len", "--hf-overrides", "-tp"]


def test_unknown_or_absent() -> None:
    found = unknown_or_absent(["--port", "1", "--task", "embed", "--bogus"], "0.23.0")
    assert found == [("--task", "no"), ("--bogus", "unknown")]


def test_bad_tables_are_rejected() -> None:
    base = {"examined": ["0.11.0", "0.13.0"], "tags": ["0.11.0", "0.13.0"]}
    with pytest.raises(ValueError, match="one letter per examined tag"):
        parse_table({**base, "flags": {"--a": {"at": "y", "src": "x"}}})
    with pytest.raises(ValueError, match="canonical"):
        parse_table({**base, "flags": {"--a_b": {"at": "yy", "src": "x"}}})
    with pytest.raises(ValueError, match="contradicts"):
        parse_table({**base, "flags": {"--a": {"at": "yn", "seen": ["0.13.0"], "src": "x"}}})
    with pytest.raises(ValueError, match="src"):
        parse_table({**base, "flags": {"--a": {"at": "yy"}}})
