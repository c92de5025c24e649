"""Hostile input, round two (issue 32, item 3): numbers and sizes read at the boundaries.

Every hostile number in a safetensors header, a config.json or a facts file is refused where it is read, with a
message that names the file (and the key where the reader knows it); special files and read errors are an error
string, never a traceback; version strings are length-bounded; a failed write to stdout is exit 1.
"""

from __future__ import annotations

import json
import os
import re
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from packaging.version import InvalidVersion
from typer.testing import CliRunner

from ascendctl.cli import app
from ascendctl.facts import model_inspect
from ascendctl.facts.model_inspect import inspect_weights, read_config_dir
from ascendctl.plan.fit.cache import _hybrid
from ascendctl_engine import versions
from ascendctl_engine.host.facts import FactsError, HostFacts
from ascendctl_engine.jsonio import MAX_INT, MIN_INT, JsonReadError, bounded_int, loads_json

REPO = Path(__file__).resolve().parents[1]
runner = CliRunner()
QWEN = {
    "model_type": "qwen3",
    "architectures": ["Qwen3ForCausalLM"],
    "hidden_size": 4096,
    "num_hidden_layers": 36,
    "vocab_size": 151936,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "max_position_embeddings": 40960,
}


# --- the one bounded reader -----------------------------------------------------------------------------------------


@given(st.integers())
@example(MIN_INT)
@example(MIN_INT - 1)
@example(MAX_INT)
@example(MAX_INT + 1)
def test_every_json_integer_is_read_back_or_refused_at_the_64_bit_bound(value: int) -> None:
    # int64's own range, asymmetric: -2**63 is an int64 (the shipped JSON Schema holds it as a bound)
    text = json.dumps({"n": value})
    if MIN_INT <= value <= MAX_INT:
        assert loads_json(text) == {"n": value}
    else:
        with pytest.raises(JsonReadError, match="beyond the 64-bit range"):
            loads_json(text)


PACKAGE_JSON = sorted([*(REPO / "ascendctl").rglob("*.json"), *(REPO / "engine" / "ascendctl_engine").rglob("*.json")])


def test_every_shipped_json_file_passes_every_check_the_trusted_reader_skips() -> None:
    # package data is read with trusted=True on the start-up path: here it is read with every bound
    assert len(PACKAGE_JSON) > 20
    for path in PACKAGE_JSON:
        data = path.read_bytes()
        assert loads_json(data, source=path) == loads_json(data, source=path, trusted=True), path


def test_the_trusted_reader_still_names_the_file_of_invalid_json() -> None:
    with pytest.raises(JsonReadError, match=r"^pkg/x.json: not valid JSON"):
        loads_json(b'{"a": ', source="pkg/x.json", trusted=True)


def test_long_digit_runs_inside_strings_are_not_numbers() -> None:
    assert loads_json('{"name": "layer.12345678901234567890123.weight"}')["name"].startswith("layer.")


def test_a_5000_digit_integer_is_refused_in_one_line() -> None:
    with pytest.raises(JsonReadError) as caught:
        loads_json(b'{"n": ' + b"9" * 5000 + b"}", source="f.json")
    assert str(caught.value).startswith("f.json: ") and "\n" not in str(caught.value)
    assert len(str(caught.value)) < 200
    # in the reader's words (it was Python's, advising sys.set_int_max_str_digits())
    assert str(caught.value) == "f.json: the integer 99999999999999999999... (5000 digits) is beyond the 64-bit range"


@pytest.mark.parametrize(
    "text",
    ['{"address": "10.0.0.1", "address": "10.0.0.9"}', '[{"a": {"k": 1, "j": 2, "k": 3}}]', '{"": 1, "": 1}'],
)
def test_an_object_naming_a_key_twice_is_refused(text: str) -> None:
    # the stdlib parser keeps the last value, a person reading the file may take the first: ambiguous input
    with pytest.raises(JsonReadError, match=r"^facts.json: an object names the key \S+ twice$"):
        loads_json(text, source="facts.json")
    assert loads_json(text, trusted=True)  # checked-in package data: the stdlib parser as it is


def test_bounded_int_range_checks_counts_and_ignores_non_integers() -> None:
    assert bounded_int(7, high=10) == 7
    assert bounded_int(True) is None and bounded_int(1.5) is None and bounded_int("3") is None
    with pytest.raises(JsonReadError, match=r"hidden_size: -1 is out of range 0\.\.10"):
        bounded_int(-1, high=10, where="hidden_size", source="config.json")


# --- config.json ----------------------------------------------------------------------------------------------------


def _model(tmp_path: Path, **changes: Any) -> Path:
    directory = tmp_path / "model"
    directory.mkdir(exist_ok=True)
    (directory / "config.json").write_text(json.dumps({**QWEN, **changes}))
    return directory


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"hidden_size": -5}, "hidden_size: -5 is out of range"),
        ({"num_hidden_layers": 2**41}, "num_hidden_layers: 2199023255552 is out of range"),
        ({"vocab_size": 10**40}, "beyond the 64-bit range"),
        ({"text_config": {"num_attention_heads": -1}}, None),  # the top level wins: text_config's is not read
        ({"rope_scaling": {"rope_type": "yarn", "factor": 1e308}}, "rope_scaling.factor: 1e\\+308 is out of range"),
        ({"rope_scaling": {"rope_type": "yarn", "factor": -2}}, "rope_scaling.factor: -2 is out of range"),
        ({"rope_scaling": {"type": "yarn", "original_max_position_embeddings": -3}}, "original_max_position"),
    ],
)
def test_config_counts_are_range_checked_where_read(tmp_path: Path, changes: dict[str, Any], reason: str) -> None:
    config, error = read_config_dir(_model(tmp_path, **changes))
    if reason is None:
        assert config is not None and error is None
        return
    assert config is None and error is not None
    assert error.startswith(f"could not read {tmp_path / 'model' / 'config.json'}: ")
    assert re.search(reason, error), error


def test_config_json_that_is_a_directory_or_a_fifo_is_an_error_string(tmp_path: Path) -> None:
    (tmp_path / "a" / "config.json").mkdir(parents=True)
    assert "not a regular file (a directory)" in (read_config_dir(tmp_path / "a")[1] or "")
    (tmp_path / "b").mkdir()
    os.mkfifo(tmp_path / "b" / "config.json")
    assert "not a regular file (a FIFO)" in (read_config_dir(tmp_path / "b")[1] or "")


def test_hybrid_cache_shape_with_zero_dimensions_is_not_sized(tmp_path: Path) -> None:
    changes = {
        "model_type": "qwen3_next",
        "full_attention_interval": 4,
        "linear_num_key_heads": 0,
        "linear_key_head_dim": 128,
        "linear_num_value_heads": 32,
        "linear_value_head_dim": 128,
    }
    config, _ = read_config_dir(_model(tmp_path, **changes))
    assert config is not None
    assert _hybrid(config, 4096, tensor=4, layers=36, rule="v0.18") is None
    # fewer value heads than TP ranks: no state per rank (a zero block), not a ZeroDivisionError
    fewer, _ = read_config_dir(_model(tmp_path, **{**changes, "linear_num_key_heads": 16, "linear_num_value_heads": 2}))
    assert fewer is not None and _hybrid(fewer, 4096, tensor=4, layers=36, rule="v0.18") is None
    assert _hybrid(fewer, 1, tensor=1, layers=36, rule="v0.18") is None  # a page too small to halve


# --- safetensors ----------------------------------------------------------------------------------------------------


def _shard(path: Path, header: dict[str, Any]) -> None:
    data = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(data)) + data)


def test_a_tensor_shape_beyond_float_range_is_refused(tmp_path: Path) -> None:
    _shard(tmp_path / "model.safetensors", {"w": {"dtype": "BF16", "shape": [2**40, 2**40], "data_offsets": [0, 0]}})
    stats, error = inspect_weights(tmp_path)
    assert (
        stats is None
        and error is not None
        and "tensor 'w' elements: 120892581961... (25 digits) is out of range 0..281474976710656" in error
    )
    _shard(tmp_path / "model.safetensors", {"w": {"dtype": "BF16", "shape": [10**30], "data_offsets": [0, 0]}})
    assert "beyond the 64-bit range" in (inspect_weights(tmp_path)[1] or "")


@pytest.mark.parametrize("kind", ["fifo", "directory"])
def test_a_shard_that_is_a_special_file_is_an_error_string(tmp_path: Path, kind: str) -> None:
    shard = tmp_path / "model-00001-of-00001.safetensors"
    os.mkfifo(shard) if kind == "fifo" else shard.mkdir()
    stats, error = inspect_weights(tmp_path)
    assert stats is None and error is not None and "not a regular file" in error


def test_headers_beyond_the_budget_fall_back_with_a_note(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for index in range(4):
        tensors = {
            f"layer.{index}.{t}": {"dtype": "BF16", "shape": [64, 64], "data_offsets": [0, 0]} for t in range(50)
        }
        _shard(tmp_path / f"model-{index:05d}.safetensors", tensors)
    stats, error = inspect_weights(tmp_path)
    assert stats is not None and stats.files == 4
    monkeypatch.setattr(model_inspect, "HEADER_BUDGET_BYTES", 5000)  # two headers' worth
    stats, error = inspect_weights(tmp_path)
    assert stats is None and error is not None
    assert "over the budget" in error and "weights counted from config.json" in error
    monkeypatch.setattr(model_inspect, "HEADER_BUDGET_BYTES", 10**9)
    monkeypatch.setattr(model_inspect, "HEADER_BUDGET_SECONDS", -1.0)  # the time budget is spent before the first
    assert "took over" in (inspect_weights(tmp_path)[1] or "")


# --- facts files ----------------------------------------------------------------------------------------------------


def _facts(**host: Any) -> dict[str, Any]:
    return {"backend": "npu", "hardware": {"family": "a2"}, **host}


@pytest.mark.parametrize(
    ("host", "message"),
    [
        ({"hardware": {"family": "a2", "devices": 5}}, "hardware.devices: expected a list, got int"),
        ({"hardware": {"device_nodes": {"davinci": 7}}}, "hardware.device_nodes.davinci: expected a list"),
        ({"hardware": {"processes": "12"}}, "hardware.processes: expected a list, got str"),
        ({"cann": {"installed_versions": 8}}, "cann.installed_versions: expected a list"),
        ({"cuda": {"gpus": 1}}, "cuda.gpus: expected a list"),
        ({"nics": 3}, "nics: expected a list"),
        ({"hardware": {"devices": [{"id": 0, "hbm_total_mb": -5}]}}, r"devices\[0\]\.hbm_total_mb: -5 is out of range"),
        ({"cpu": {"cores": 2**50}}, "cpu.cores: 1125899906842624 is out of range"),
        ({"driver": {"version": "9" * 5000}}, "driver.version: a version string of 5000 characters"),
        ({"packages": {"vllm": "0." + "1" * 5000}}, "packages.vllm: a version string"),
    ],
)
def test_facts_of_the_wrong_shape_are_refused_with_their_key(host: dict[str, Any], message: str) -> None:
    with pytest.raises(FactsError, match=message):
        HostFacts.from_dict(_facts(**host))


def test_digit_strings_int_rejects_are_not_counts() -> None:
    facts = HostFacts.from_dict(_facts(hardware={"devices": [{"id": "²", "hbm_total_mb": "６５５３６"}]}))
    assert facts.devices[0].id == 0 and facts.devices[0].hbm_total_mb is None  # not numbers: the defaults
    assert HostFacts.from_dict(_facts(cpu={"cores": " 16 "})).cpu.cores == 16


@pytest.mark.parametrize(
    "host",
    [
        _facts(hardware={"devices": 5}),
        _facts(hardware={"devices": [{"hbm_total_mb": 10**48}]}),
        _facts(cann={"version": "8." + "9" * 5000}),
    ],
)
def test_plan_with_a_hostile_facts_file_is_exit_2_in_one_line(tmp_path: Path, host: dict[str, Any]) -> None:
    facts = tmp_path / "facts.json"
    facts.write_text(json.dumps({"host": host}))
    result = runner.invoke(app, ["plan", str(REPO / "profiles" / "qwen3-32b-w8a8-a2.yaml"), "--facts", str(facts)])
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1 and result.stderr.startswith(f"error: --facts {facts}: ")


# --- version strings ------------------------------------------------------------------------------------------------


def test_version_strings_are_length_bounded() -> None:
    with pytest.raises(InvalidVersion, match="at most 128"):
        versions.parse("0." + "1" * 5000)
    assert versions.parse_or_none("9" * 5000) is None
    assert versions.release_tuple("1" * 5000) is None
    key = versions.cann_release_key("8." + "9" * 5000 + ".rc1")  # no int() of 5,000 digits
    assert key[0] == 8 and key[1] == int("9" * 18)
    assert versions.cann_below("9" * 5000, "8.3.RC1") is False


# --- stdout errors --------------------------------------------------------------------------------------------------


def _cli(*args: str, stdout: Any) -> subprocess.CompletedProcess[bytes]:
    code = "import sys; from ascendctl.cli import main; sys.exit(main())"
    return subprocess.run(
        [sys.executable, "-c", code, *args], stdout=stdout, stderr=subprocess.PIPE, timeout=60, check=False
    )


def test_stdout_on_a_full_disk_is_exit_1_with_a_message() -> None:
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    with open("/dev/full", "wb") as full:
        done = _cli("matrix", "--json", stdout=full)
    assert done.returncode == 1
    assert done.stderr.decode() == "error: cannot write the output: No space left on device\n"


def test_stdout_to_a_closed_pipe_is_exit_1_with_a_message() -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = _cli("validate", str(REPO / "profiles" / "cpu-demo.yaml"), stdout=write_end)
    finally:
        os.close(write_end)
    assert done.returncode == 1
    assert done.stderr.decode() == "error: cannot write the output: Broken pipe\n"


@pytest.mark.parametrize("args", [("schema",), ("matrix",), ("--version",)])
def test_a_closed_stdout_is_exit_1_with_a_message(args: tuple[str, ...]) -> None:
    # `ascendctl schema >&-`: Python starts with sys.stdout None; nothing the command prints could be written
    code = "import sys; from ascendctl.cli import main; sys.exit(main())"
    done = subprocess.run(
        [sys.executable, "-c", code, *args], stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=60,
        check=False, pass_fds=(), close_fds=True, preexec_fn=lambda: os.close(1),
    )  # fmt: skip
    assert done.returncode == 1
    assert done.stderr.decode() == "error: cannot write the output: standard output is closed\n"


@settings(max_examples=60, deadline=None)
@given(st.one_of(st.integers(), st.floats(allow_nan=False), st.text(max_size=30), st.lists(st.integers(), max_size=3)))
def test_any_value_for_a_device_count_is_read_or_refused_never_a_crash(value: object) -> None:
    try:
        facts = HostFacts.from_dict(_facts(hardware={"devices": [{"id": value, "hbm_total_mb": value}]}))
    except FactsError as exc:
        assert "hardware.devices[0]" in str(exc)
    else:
        device = facts.devices[0]
        assert device.hbm_total_mb is None or 0 <= device.hbm_total_mb <= 2**40


def test_the_fit_says_when_the_headers_were_over_the_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = _model(tmp_path)
    for index in range(3):
        tensor = {"dtype": "BF16", "shape": [4096, 4096], "data_offsets": [0, 0]}
        _shard(model / f"model-{index:05d}.safetensors", {f"layers.{index}.{t}.weight": tensor for t in range(20)})
    profile = tmp_path / "p.yaml"
    profile.write_text(
        json.dumps(
            {
                "apiVersion": "ascendctl/v1",
                "kind": "Profile",
                "metadata": {"name": "budget"},
                "model": {"source": str(model), "max_model_len": 4096},
                "target": {"backend": "npu", "hardware": "a2", "devices_per_node": 1},
                "release": "v0.23.0",
            }
        )
    )
    monkeypatch.setattr(model_inspect, "HEADER_BUDGET_BYTES", 3000)
    result = runner.invoke(app, ["fit", str(profile), "--json"])
    assert result.exit_code in (0, 1), result.output
    weights = json.loads(result.stdout)["inputs"]["weights"]
    assert weights.startswith("config.json parameter counts (safetensors headers of ") and "over the budget" in weights
