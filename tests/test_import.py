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
    argv = ["Qwen/Qwen3-8B", "-tp", "2", "--served-model-name", "q", "--block-size", "128", "--enforce-eager"]
    draft = draft_profile([_script(argv)], name="x", release="v0.13.0", backend="npu", hardware="a2")
    doc = draft.document
    assert doc["model"] == {"source": "Qwen/Qwen3-8B", "served_name": "q"}
    assert doc["engine"]["parallel"] == {"tensor": 2}
    assert doc["engine"]["graph"] == {"mode": "eager"}
    assert doc["engine"]["extra_args"] == ["--block-size", "128"]
    assert doc["target"]["devices_per_node"] == 2
    assert draft.hatches == ["engine.extra_args: --block-size 128"]


def test_quantization_is_read_from_the_checkpoint_name() -> None:
    assert quantization_from_name("vllm-ascend/Qwen3-32B-W8A8") == "w8a8"
    assert quantization_from_name("/weights/DeepSeek-R1-w4a8") == "w4a8_dynamic"
    assert quantization_from_name("Qwen/Qwen3-8B") is None


def test_a_tutorial_command_is_reproduced_with_one_hatch() -> None:
    script = _script(
        ["Qwen/Qwen3-Next-80B-A3B-Instruct", "--tensor-parallel-size", "4", "--max-model-len", "4096",
         "--gpu-memory-utilization", "0.7", "--enforce-eager"],
        {"VLLM_USE_MODELSCOPE": "True"},
    )  # fmt: skip
    result = import_scripts([script], release="v0.10.2rc1", hardware="a2", read_config=_no_config)
    assert result.reproduced, [d.line() for n in result.nodes for d in n.differences]
    assert result.hatches == ("runtime.env.VLLM_USE_MODELSCOPE=True",)
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
    assert "#   runtime.env.VLLM_USE_MODELSCOPE=True" in text
    data = yaml.safe_load(text)
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
