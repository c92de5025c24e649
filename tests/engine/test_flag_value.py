"""A flag's value from parsed extra args (`argv_items.find` over `parse_args`), as the plan rules and the fit ask it."""

from __future__ import annotations

from collections.abc import Sequence

from ascendctl_engine.argv_items import find, parse_args


def flag_value(argv: Sequence[str], flag: str, *, abbreviation: int | None = None) -> str | None:
    item = find(parse_args(argv), flag, abbreviation=abbreviation)
    return None if item is None else item.value


def test_both_spellings_and_the_first_occurrence() -> None:
    argv = ["--quantization", "ascend", '--kv_transfer_config={"kv_role": "kv_consumer"}', "--quantization=x"]
    assert flag_value(argv, "--quantization") == "ascend"
    assert flag_value(argv, "--kv-transfer-config") == '{"kv_role": "kv_consumer"}'
    assert flag_value(argv, "--max-model-len") is None
    assert flag_value(["--quantization"], "--quantization") is None  # a flag without its value


def test_abbreviations_only_when_asked_and_long_enough() -> None:
    argv = ["--kv-cache-memory=42"]
    assert flag_value(argv, "--kv-cache-memory-bytes") is None
    assert flag_value(argv, "--kv-cache-memory-bytes", abbreviation=len("--kv-cache-m")) == "42"
    assert flag_value(["--kv", "1"], "--kv-cache-memory-bytes", abbreviation=len("--kv-cache-m")) is None
