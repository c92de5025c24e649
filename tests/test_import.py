"""`ascendctl import`: launch scripts → profile → plan → what still differs (ascendctl.importer).

The scripts are vllm-ascend tutorial commands (cited per test); the plan is the real planner, the comparison reads
both sides through the release's real-parser snapshot.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from ascendctl.cli import app
from ascendctl.importer.compare import options
from ascendctl.importer.profile import draft_profile, quantization_from_name
from ascendctl.importer.run import import_scripts
from ascendctl.importer.script import LaunchScript
from ascendctl_engine.adapters.parser_snapshot import snapshot_for

# v0.10.2rc1:docs/source/tutorials/multi_npu_qwen3_next.md:38,89
QWEN3_NEXT = """\
export VLLM_USE_MODELSCOPE=True
vllm serve Qwen/Qwen3-Next-80B-A3B-Instruct --tensor-parallel-size 4 --max-model-len 4096 \\
  --gpu-memory-utilization 0.7 --enforce-eager
"""
# v0.13.0:docs/source/tutorials/Qwen3-Dense.md (Qwen3-32B-W8A8, TP4), the shape of the curated qwen3-32b profile
QWEN3_32B = """\
export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export TASK_QUEUE_ENABLE=1
export HCCL_OP_EXPANSION_MODE="AIV"
vllm serve vllm-ascend/Qwen3-32B-W8A8 --served-model-name qwen3 --trust-remote-code --quantization ascend \\
  --tensor-parallel-size 4 --max-model-len 5500 --max-num-batched-tokens 40960 \\
  --compilation-config '{"cudagraph_mode": "FULL_DECODE_ONLY"}' --port 8000 --gpu-memory-utilization 0.9
"""


def _script(argv: list[str], env: dict[str, str] | None = None, path: str = "node0.sh") -> LaunchScript:
    return LaunchScript(path=path, env=env or {}, argv=tuple(argv), unresolved=(), line=1)


def _no_config(_source: str) -> None:
    return None


def test_options_read_every_spelling_as_the_release_does() -> None:
    snap = snapshot_for("0.10.2")
    one = options(["m", "-tp", "4", "--max_model_len=4096", "--enforce-eager"], snap)
    two = options(["m", "--tensor-parallel-size", "4", "--max-model-len", "4096", "--enforce-eager"], snap)
    assert (
        one
        == two
        == {"<model>": "m", "--tensor-parallel-size": "4", "--max-model-len": "4096", "--enforce-eager": True}
    )
    folded = options(["m", "--compilation-config.cudagraph_mode", "FULL_DECODE_ONLY"], snap)
    assert folded["--compilation-config"] == {"cudagraph_mode": "FULL_DECODE_ONLY"}


def test_the_draft_uses_typed_fields_and_keeps_the_rest_as_written() -> None:
    argv = [
        "Qwen/Qwen3-8B",
        "-tp",
        "2",
        "--served-model-name",
        "q",
        "--seed",
        "7",
        "--block-size",
        "128",
        "--enforce-eager",
        "--disable-log-stats",
    ]
    draft = draft_profile([_script(argv)], name="x", release="v0.13.0", backend="npu", hardware="a2")
    doc = draft.document
    assert doc["model"] == {"source": "Qwen/Qwen3-8B", "served_name": "q"}
    assert doc["engine"]["parallel"] == {"tensor": 2}
    assert doc["engine"]["graph"] == {"mode": "eager"}
    assert doc["engine"]["memory"] == {"block_size": 128}  # claimed by engine.memory.block_size (typed_fields)
    assert doc["engine"]["seed"] == 7  # claimed by engine.seed
    assert doc["engine"]["extra_args"] == ["--disable-log-stats"]
    assert doc["target"]["devices_per_node"] == 2
    assert draft.hatches == ["engine.extra_args: --disable-log-stats"]


def test_quantization_is_read_from_the_checkpoint_name() -> None:
    assert quantization_from_name("vllm-ascend/Qwen3-32B-W8A8") == "w8a8"
    assert quantization_from_name("/weights/DeepSeek-R1-w4a8") == "w4a8_dynamic"
    assert quantization_from_name("Qwen/Qwen3-8B") is None


def test_a_tutorial_command_is_reproduced_without_a_hatch() -> None:
    script = _script(
        ["Qwen/Qwen3-Next-80B-A3B-Instruct", "--tensor-parallel-size", "4", "--max-model-len", "4096",
         "--gpu-memory-utilization", "0.7", "--enforce-eager"],
        {"VLLM_USE_MODELSCOPE": "True"},
    )  # fmt: skip
    result = import_scripts([script], release="v0.10.2rc1", hardware="a2", read_config=_no_config)
    assert result.reproduced, [d.line() for n in result.nodes for d in n.differences]
    # `VLLM_USE_MODELSCOPE=True` with a hub id is the source `modelscope:ORG/NAME`, which exports it again
    assert result.hatches == ()
    assert result.document["model"]["source"] == "modelscope:Qwen/Qwen3-Next-80B-A3B-Instruct"
    # what the plan adds on its own is listed with its reason, and does not count
    added = {d.name: d.why for d in result.nodes[0].differences}
    assert added["--host"].startswith("profile default")
    assert added["TASK_QUEUE_ENABLE"].startswith("ascend default")


def test_the_ascend_defaults_a_script_exports_need_no_hatch() -> None:
    script = _script(
        ["vllm-ascend/Qwen3-32B-W8A8", "--served-model-name", "qwen3", "--trust-remote-code", "--quantization",
         "ascend", "--tensor-parallel-size", "4", "--max-model-len", "5500", "--max-num-batched-tokens", "40960",
         "--compilation-config", '{"cudagraph_mode": "FULL_DECODE_ONLY"}', "--port", "8000",
         "--gpu-memory-utilization", "0.9"],
        {"ASCEND_RT_VISIBLE_DEVICES": "0,1,2,3", "PYTORCH_NPU_ALLOC_CONF": "expandable_segments:True",
         "TASK_QUEUE_ENABLE": "1", "HCCL_OP_EXPANSION_MODE": "AIV"},
    )  # fmt: skip
    result = import_scripts([script], release="v0.13.0", hardware="a2", read_config=_no_config)
    assert result.hatches == ()
    assert result.document["model"]["quantization"] == "w8a8"
    assert result.document["engine"]["graph"]["mode"] == "full-decode-only"
    assert result.reproduced, [d.line() for n in result.nodes for d in n.differences]


def test_a_difference_is_reported_flag_by_flag() -> None:
    # a flag the release's parser lacks: planned from extra_args, but the plan refuses it
    script = _script(["Qwen/Qwen3-8B", "--no-such-flag", "1"])
    result = import_scripts([script], release="v0.13.0", hardware="a2", read_config=_no_config)
    assert result.blocking and "--no-such-flag" in " ".join(result.blocking)


@pytest.fixture
def tutorial(tmp_path: Path) -> Path:
    path = tmp_path / "qwen3-next.sh"
    path.write_text(QWEN3_NEXT, encoding="utf-8")
    return path


def test_cli_writes_the_profile_and_exits_0_when_reproduced(tutorial: Path, tmp_path: Path) -> None:
    out = tmp_path / "profile.yaml"
    result = CliRunner().invoke(
        app, ["import", str(tutorial), "--release", "v0.10.2rc1", "--hardware", "a2", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    text = out.read_text()
    assert text.startswith("# Imported by `ascendctl import` from: ")
    assert "# No escape hatch" in text
    data = yaml.safe_load(text)
    assert data["model"]["source"] == "modelscope:Qwen/Qwen3-Next-80B-A3B-Instruct"
    assert data["engine"]["parallel"]["tensor"] == 4 and data["release"] == "v0.10.2rc1"
    assert "node 0 (" in result.output and "reproduced" in result.output


def test_cli_exit_2_for_a_script_without_a_serve_command(tmp_path: Path) -> None:
    bad = tmp_path / "bad.sh"
    bad.write_text("export A=1\necho hello\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["import", str(bad), "--release", "v0.13.0", "--hardware", "a2"])
    assert result.exit_code == 2
    assert str(bad) in result.output and "Traceback" not in result.output


def test_cli_exit_1_when_a_script_option_is_not_reproduced(tmp_path: Path) -> None:
    script = tmp_path / "s.sh"
    script.write_text("vllm serve Qwen/Qwen3-8B --no-such-flag 1\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["import", str(script), "--release", "v0.13.0", "--hardware", "a2"])
    assert result.exit_code == 1, result.output


# v0.11.0:docs/source/tutorials/multi_node.md:121,165 (DeepSeek DP4 x TP4 over two A3 nodes), addresses filled in
NODE0 = """\
export HCCL_IF_IP=10.0.0.1
vllm serve vllm-ascend/DeepSeek-V3.1-W8A8 --host 0.0.0.0 --port 8004 --data-parallel-size 4 \\
  --data-parallel-size-local 2 --data-parallel-address 10.0.0.1 --data-parallel-rpc-port 13389 \\
  --tensor-parallel-size 4 --enable-expert-parallel --gpu-memory-utilization 0.9 --trust-remote-code
"""
NODE1 = """\
export HCCL_IF_IP=10.0.0.2
vllm serve vllm-ascend/DeepSeek-V3.1-W8A8 --host 0.0.0.0 --port 8004 --headless --data-parallel-size 4 \\
  --data-parallel-size-local 2 --data-parallel-start-rank 2 --data-parallel-address 10.0.0.1 \\
  --data-parallel-rpc-port 13389 --tensor-parallel-size 4 --enable-expert-parallel --gpu-memory-utilization 0.92 \\
  --trust-remote-code
"""


def test_two_node_scripts_become_one_profile_with_per_node_overrides() -> None:
    from ascendctl.importer.script import parse_launch_script

    scripts = [parse_launch_script(NODE0, "node0.sh"), parse_launch_script(NODE1, "node1.sh")]
    result = import_scripts(scripts, release="v0.11.0", hardware="a3", read_config=_no_config)
    network = result.document["network"]
    assert [n["address"] for n in network["nodes"]] == ["10.0.0.1", "10.0.0.2"]
    assert network["dp_rpc_port"] == 13389
    assert network["nodes"][1]["device_utilization"] == 0.92  # node 1's own value, a per-node override
    assert result.document["engine"]["parallel"] == {"data": 4, "data_per_node": 2, "tensor": 4, "expert": True}
    # the wiring (address, start rank, headless) is derived by the planner, not kept as an escape hatch
    assert "extra_args" not in result.document["engine"]
    assert result.reproduced, [d.line() for n in result.nodes for d in n.differences if d.counts]
    # node 1 serves no API: its --host / --port are left out, and that does not count
    ignored = {d.name for d in result.nodes[1].differences if d.verdict == "ignored"}
    assert ignored == {"--host", "--port"}


def test_a_variable_a_typed_field_claims_becomes_that_field_where_the_plan_sets_it_back() -> None:
    from ascendctl.importer.script import parse_launch_script

    text = "export VLLM_ASCEND_ENABLE_FLASHCOMM1=1\nvllm serve Qwen/Qwen3-32B --tensor-parallel-size 4\n"
    script = parse_launch_script(text, "s.sh")
    typed = import_scripts([script], release="v0.13.0", hardware="a2", read_config=_no_config)
    assert typed.document["engine"]["ascend"] == {"flashcomm1": True} and typed.hatches == ()
    assert typed.reproduced
    # v0.25.1rc1 says the switch as an --additional-config key and still reads the variable: the same switch,
    # spelled another way by the plan (tests/test_import_meaning.py)
    respelled = import_scripts([script], release="v0.25.1rc1", hardware="a2", read_config=_no_config)
    assert respelled.document["engine"]["ascend"] == {"flashcomm1": True} and respelled.hatches == ()
    assert respelled.reproduced
    assert [d.verdict for d in respelled.nodes[0].differences if d.name == "VLLM_ASCEND_ENABLE_FLASHCOMM1"] == [
        "respelled"
    ]


def test_secrets_in_a_script_become_references_and_are_never_printed(tmp_path: Path) -> None:
    script = tmp_path / "secret.sh"
    script.write_text(
        "export HF_TOKEN=hf_do_not_print\nvllm serve Qwen/Qwen3-8B --api-key sk-do-not-print\n", encoding="utf-8"
    )
    out = tmp_path / "p.yaml"
    result = CliRunner().invoke(
        app, ["import", str(script), "--release", "v0.13.0", "--hardware", "a2", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    text = out.read_text()
    assert "do_not_print" not in text and "do-not-print" not in text
    assert "do_not_print" not in result.output and "do-not-print" not in result.output
    data = yaml.safe_load(text)
    assert data["runtime"]["secrets"] == {"HF_TOKEN": {"env": "HF_TOKEN"}}
    assert data["server"]["api_key"] == {"env": "VLLM_API_KEY"}
