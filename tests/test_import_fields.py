"""Fields for what upstream's launches set, read back by `import`; what the release does not read left out and
reported; what counts as an escape hatch (`ascendctl.importer.hatches`); `import --json`.

Each case is a setting found in ten or more of upstream's CI launches (`tests/launch_corpus.py`), imported for the
tag that runs it and planned back.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from ascendctl.cli import app
from ascendctl.importer.hatches import count
from ascendctl.importer.run import ImportResult, import_scripts
from ascendctl.importer.script import LaunchScript
from ascendctl.plan.planner import plan_profile
from ascendctl.schema.profile import Profile

runner = CliRunner()
QWEN = ["Qwen/Qwen3-30B-A3B", "--tensor-parallel-size", "2"]


def imported(argv: list[str], env: dict[str, str] | None = None, release: str = "v0.25.1rc1") -> ImportResult:
    script = LaunchScript(path="node0.sh", env=env or {}, argv=tuple(argv), unresolved=(), line=1)
    return import_scripts([script], release=release, hardware="a2", read_config=lambda _s: None)


def diff(result: ImportResult, name: str) -> Any:
    return next(d for d in result.nodes[0].differences if d.name == name)


def test_recurring_options_are_typed_fields_and_planned_back() -> None:
    argv = [*QWEN, "--seed", "1024", "--no-trust-remote-code", "--allowed-local-media-path", "/data/media",
            "--mm-encoder-tp-mode", "data", "--hf-overrides", '{"rope_scaling": {"factor": 4}}']  # fmt: skip
    result = imported(argv, {"VLLM_WORKER_MULTIPROC_METHOD": "spawn"})
    doc = result.document
    assert doc["engine"]["seed"] == 1024 and doc["model"]["trust_remote_code"] is False
    assert doc["serving"] == {"allowed_local_media_path": "/data/media", "mm_encoder_tp_mode": "data"}
    assert doc["model"]["hf_overrides"] == {"rope_scaling": {"factor": 4}}
    assert doc["runtime"]["worker_start"] == "spawn"
    assert result.reproduced and not result.counted.hatches, result.counted


def test_values_compare_as_their_readers_read_them() -> None:
    # OpenMP reads its values ignoring case; vLLM lower-cases VLLM_USE_MODELSCOPE; vllm-ascend lower-cases DYNAMIC_EPLB
    result = imported(QWEN, {"OMP_PROC_BIND": "False", "VLLM_USE_MODELSCOPE": "true"})
    assert result.document["model"]["source"] == "modelscope:Qwen/Qwen3-30B-A3B"
    assert result.document["runtime"]["cpu"] == {"bind": False}
    assert result.reproduced and not result.counted.hatches


def test_what_the_release_does_not_read_is_left_out_and_reported() -> None:
    env = {"VLLM_USE_V1": "1", "VLLM-ASCEND_ENABLE_NZ": "1"}  # unread by vLLM 0.25.1; a name no shell can set
    result = imported(QWEN, env)
    assert "runtime" not in result.document
    assert diff(result, "VLLM_USE_V1").verdict == "ignored" and "does not read" in diff(result, "VLLM_USE_V1").why
    assert diff(result, "VLLM-ASCEND_ENABLE_NZ").verdict == "ignored"
    assert result.reproduced


def test_a_timeout_variable_is_read_in_its_unit_or_reported_where_nothing_reads_it() -> None:
    old = imported(QWEN, {"VLLM_RPC_TIMEOUT": "3600000"}, release="v0.9.1")  # vLLM 0.9.1's V0 client: ms
    assert old.document["runtime"]["timeouts"] == {"rpc_s": 3600} and old.reproduced
    new = imported(QWEN, {"VLLM_RPC_TIMEOUT": "3600000"}, release="v0.16.0rc1")  # defined, read by nothing
    assert "runtime" not in new.document
    assert "nothing reads it" in diff(new, "VLLM_RPC_TIMEOUT").why


def test_hccl_intra_node_links_are_one_setting() -> None:
    result = imported(QWEN, {"HCCL_INTRA_PCIE_ENABLE": "1", "HCCL_INTRA_ROCE_ENABLE": "0"})
    assert result.document["network"]["hccl"] == {"intra_node": "pcie"}
    assert result.reproduced and not result.counted.hatches


def test_the_nz_weight_layout_is_a_mode_in_either_spelling() -> None:
    # v0.18.0 reads the variable; v0.25.1rc1 prefers the key and falls back to the variable
    older = imported(QWEN, {"VLLM_ASCEND_ENABLE_NZ": "2"}, release="v0.18.0")
    assert older.document["engine"]["weight_nz"] == "all" and older.reproduced
    newer = imported(QWEN, {"VLLM_ASCEND_ENABLE_NZ": "0"})
    assert newer.document["engine"]["weight_nz"] == "off" and newer.reproduced
    respelled = diff(newer, "VLLM_ASCEND_ENABLE_NZ")
    assert respelled.verdict == "respelled" and "weight_nz_mode" in respelled.why
    key = imported([*QWEN, "--additional-config", '{"weight_nz_mode": true}'])  # Python's 1 to the code
    assert key.document["engine"]["weight_nz"] == "quantized" and key.reproduced


def test_the_nz_mode_is_planned_per_release(tmp_path: Path) -> None:
    def plan(release: str) -> Any:
        data = {"apiVersion": "ascendctl/v1", "kind": "Profile", "metadata": {"name": "nz"}, "release": release,
                "model": {"source": "Qwen/Qwen3-8B"}, "target": {"backend": "npu", "hardware": "a2"},
                "engine": {"weight_nz": "all"}}  # fmt: skip
        return plan_profile(Profile.model_validate(data), read_config=lambda _s: None)

    assert plan("v0.18.0").command_for(0).env["VLLM_ASCEND_ENABLE_NZ"] == "2"
    argv = plan("v0.25.1rc1").command_for(0).argv
    assert json.loads(argv[argv.index("--additional-config") + 1])["weight_nz_mode"] == 2
    assert any("engine.weight_nz all not applied" in w for w in plan("v0.9.1").warnings)


def test_compiler_switches_and_eplb_keys_are_fields() -> None:
    config = ('{"ascend_compilation_config": {"enable_npugraph_ex": true, "enable_static_kernel": false},'
              ' "eplb_config": {"dynamic_eplb": true, "expert_heat_collection_interval": 512}}')  # fmt: skip
    result = imported([*QWEN, "--enable-expert-parallel", "--additional-config", config])
    assert result.document["engine"]["ascend"] == {"npugraph_ex": True, "static_kernel": False}
    assert result.document["engine"]["eplb"] == {"mode": "dynamic", "heat_collection_interval": 512}
    assert result.reproduced and not result.counted.hatches, result.counted


def test_an_option_at_the_parsers_default_needs_no_hatch() -> None:
    result = imported([*QWEN, "--no-enable-log-requests", "--load-format", "auto", "--max-logprobs", "20"])
    assert "extra_args" not in result.document["engine"]
    verdicts = {d.name: d.verdict for d in result.nodes[0].differences if d.verdict != "added"}
    assert verdicts == {"--enable-log-requests": "default", "--load-format": "default", "--max-logprobs": "default"}
    assert result.reproduced
    # an option vLLM leaves undecided (default None) says something: kept as written
    kept = imported([*QWEN, "--no-disable-hybrid-kv-cache-manager"])
    assert kept.document["engine"]["extra_args"] == ["--no-disable-hybrid-kv-cache-manager"]


def test_escape_hatches_and_pass_through_variables_are_counted_apart() -> None:
    doc = {
        "engine": {"extra_args": ["--foo", "1", "--bar"], "additional_config": {"x": 1}},
        "runtime": {"env": {"VLLM_X": "1", "HCCL_BUFFSIZE": "9", "ASCEND_A3_ENABLE": "1"}},
        "network": {"nodes": [{"address": "10.0.0.1", "env": {"LD_LIBRARY_PATH": "/x"}}]},
        "disaggregation": {"connector_extra_config": {"k": 1}, "decode": {"engine": {"extra_args": ["--z"]}}},
    }
    counted = count(doc)
    assert counted.hatches == (
        "engine.extra_args: --foo 1",
        "engine.extra_args: --bar",
        "engine.additional_config.x",
        "disaggregation.decode.engine.extra_args: --z",
        "disaggregation.connector_extra_config.k",
        "env VLLM_X",
        "env HCCL_BUFFSIZE",  # a typed field says it (engine.memory.hccl_buffer_mb)
    )
    assert counted.pass_through == ("ASCEND_A3_ENABLE", "LD_LIBRARY_PATH")


def test_import_json_reports_nodes_hatches_and_pass_through(tmp_path: Path) -> None:
    script = tmp_path / "q.sh"
    script.write_text("export ASCEND_A3_ENABLE=1\nvllm serve Qwen/Qwen3-8B --seed 3 --disable-log-stats\n")
    out = tmp_path / "q.yaml"
    result = runner.invoke(
        app, ["import", str(script), "--release", "v0.25.1rc1", "--hardware", "a3", "-o", str(out), "--json"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["profile_path"] == str(out) and report["profile"] is None and out.exists()
    assert report["escape_hatches"] == ["engine.extra_args: --disable-log-stats"]
    assert report["pass_through_env"] == ["ASCEND_A3_ENABLE"]
    [node] = report["nodes"]
    assert node["reproduced"] and node["script"] == str(script)
    assert {"--host", "--port"} <= {d["name"] for d in node["added"]}
