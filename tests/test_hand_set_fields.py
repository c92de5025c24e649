"""Typed fields for what operators used to set by hand in `runtime.env` (issue 26, part 1): each is spelled per era
by its adapter, claimed in `ascendctl_engine.typed_fields` (so `validate` points the hand-written spelling at the
field) and shown in the plan's settings.

- `model.source: modelscope:ORG/NAME` / `hf:ORG/NAME` → the positional `ORG/NAME`, `VLLM_USE_MODELSCOPE=True` for
  ModelScope, config.json from the ModelScope cache;
- `engine.memory.hccl_buffer_mb` → `HCCL_BUFFSIZE`;
- `runtime.cpu.threads` / `runtime.cpu.bind` → `OMP_NUM_THREADS` / `OMP_PROC_BIND`;
- `network.hccl.*` → HCCL's timeouts and intra-node links; `runtime.timeouts.*` → the vLLM timeout variables each
  release reads, in their units;
- `model.allow_long_context` → `VLLM_ALLOW_LONG_MAX_MODEL_LEN=1`, and `plan.model.max-model-len-above-config`;
- `engine.memory.block_size`, `model.tokenizer_mode`, `model.load_strategy` → `--block-size`, `--tokenizer-mode`,
  `--safetensors-load-strategy` (the release's parser, and for the strategy its loader, decide the values).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from ascendctl.core.errors import UserInputError
from ascendctl.core.yamlio import load_yaml_text
from ascendctl.plan.planner import plan_profile
from ascendctl.schema.loader import load_profile, validate_profile_document
from ascendctl.schema.profile import Profile
from ascendctl.schema.profile_rules import profile_findings
from ascendctl_engine import typed_fields
from ascendctl_engine.adapters import plan_commands
from ascendctl_engine.adapters.builder import AdapterResult
from ascendctl_engine.adapters.intent import intent_from_sections
from ascendctl_engine.sections.deployment import ModelSpec

REPO = Path(__file__).resolve().parent.parent
CPU_DEMO = REPO / "profiles" / "cpu-demo.yaml"
QWEN3_VL = REPO / "profiles" / "qwen3-vl-30b-a3b-a3.yaml"

# One release per era of the topics these fields live in (model: every vLLM; env: one era per backend), across the
# vllm-ascend eras that change the engine (V0, V1 required, V1 default), and the upstream engines.
RELEASES = [("npu", "0.7.3", "v0.7.3"), ("npu", "0.9.1", "v0.9.1"), ("npu", "0.13.0", "v0.13.0"),
            ("npu", "0.25.1", "v0.25.1rc1"), ("cpu", "0.32.0", ""), ("cuda", "0.33.0", "")]  # fmt: skip
NPU_RELEASES = [r for r in RELEASES if r[0] == "npu"]


def plan(sections: dict[str, Any], *, backend: str = "npu", vllm: str = "0.13.0", ascend: str = "v0.13.0",
         sources: dict[str, str] | None = None) -> AdapterResult:  # fmt: skip
    target = {"backend": backend, "hardware": "a2"} if backend == "npu" else {"backend": backend}
    document = {"model": {"source": "org/model"}, "target": target, **sections}
    intent = intent_from_sections(
        document, vllm=vllm, vllm_ascend=ascend if backend == "npu" else None, sources=sources or {}
    )
    return plan_commands(intent)


def env_of(result: AdapterResult) -> dict[str, str]:
    assert not result.refusals, result.refusals
    return dict(result.commands[0].env)


HEAD = "apiVersion: ascendctl/v1\nkind: Profile\nmetadata:\n  name: t\nmodel:\n  source: org/model\n"
NPU = "target:\n  backend: npu\n  hardware: a2\nrelease: v0.13.0\n"


def profile(body: str) -> Profile:
    return validate_profile_document(load_yaml_text(HEAD + NPU + body, "p.yaml"))


def migration(p: Profile) -> Any:
    [finding] = [f for f in profile_findings(p) if f.id == "profile.migration.typed-field"]
    return finding


# --------------------------------------------------------------------------------------- model.source schemes


@pytest.mark.parametrize(("backend", "vllm", "ascend"), RELEASES)
def test_a_modelscope_source_loads_the_hub_id_from_modelscope(backend: str, vllm: str, ascend: str) -> None:
    result = plan({"model": {"source": "modelscope:Qwen/Qwen3-8B"}}, backend=backend, vllm=vllm, ascend=ascend,
                  sources={"model.source": "user: model.source"})  # fmt: skip
    command = result.commands[0]
    assert command.argv[:3] == ("vllm", "serve", "Qwen/Qwen3-8B")
    assert env_of(result)["VLLM_USE_MODELSCOPE"] == "True"
    why = result.env_sources[0]["VLLM_USE_MODELSCOPE"]
    assert why.startswith("user: model.source (modelscope:") and "vllm/envs.py" in why


@pytest.mark.parametrize("source", ["hf:Qwen/Qwen3-8B", "Qwen/Qwen3-8B"])
def test_a_hugging_face_source_is_the_hub_id_as_today(source: str) -> None:
    result = plan({"model": {"source": source}})
    assert result.commands[0].argv[2] == "Qwen/Qwen3-8B"
    assert "VLLM_USE_MODELSCOPE" not in env_of(result)


@pytest.mark.parametrize("source", ["modelscope:", "modelscope:Qwen", "hf:/models/x", "modelscope:a/b/c"])
def test_a_hub_scheme_takes_a_hub_id(source: str) -> None:
    with pytest.raises(UserInputError, match=r"model\.source.*takes a hub id ORG/NAME"):
        load_profile(CPU_DEMO, [f"model.source={source}"])


def test_the_source_properties_strip_only_a_hub_scheme() -> None:
    cases = {
        "modelscope:Qwen/Qwen3-8B": ("modelscope", "Qwen/Qwen3-8B"),
        "hf:Qwen/Qwen3-8B": ("hf", "Qwen/Qwen3-8B"),
        "Qwen/Qwen3-8B": (None, "Qwen/Qwen3-8B"),
        "prepared:tiny": (None, "prepared:tiny"),
        "/models/qwen": (None, "/models/qwen"),
    }
    for source, (scheme, location) in cases.items():
        spec = ModelSpec(source=source)
        assert (spec.scheme, spec.location) == (scheme, location), source


def _config(directory: Path, model_type: str) -> None:
    directory.mkdir(parents=True)
    config = {"model_type": model_type, "architectures": ["Qwen3MoeForCausalLM"], "num_attention_heads": 32,
              "num_experts": 128, "max_position_embeddings": 40960}  # fmt: skip
    (directory / "config.json").write_text(json.dumps(config))


def test_the_plan_reads_config_json_from_the_modelscope_cache() -> None:
    modelscope = Path(os.environ["MODELSCOPE_CACHE"])
    _config(modelscope / "models" / "Qwen" / "Qwen3-VL-30B-A3B-Instruct", "qwen3_vl_moe")
    # The Hugging Face cache holds another config under the same id: a `modelscope:` source never reads it.
    hf = Path(os.environ["HF_HUB_CACHE"]) / "models--Qwen--Qwen3-VL-30B-A3B-Instruct"
    (hf / "refs").mkdir(parents=True)
    (hf / "refs" / "main").write_text("0" * 40)
    _config(hf / "snapshots" / ("0" * 40), "hf_copy")
    planned = plan_profile(load_profile(QWEN3_VL))
    assert planned.deployment.model.config_path is not None
    assert planned.deployment.model.config_path.startswith(str(modelscope))
    assert planned.deployment.model.family is not None  # the matrix family is found by the hub id
    assert planned.deployment.model.source == "modelscope:Qwen/Qwen3-VL-30B-A3B-Instruct"
    assert planned.deployment.model.resolved == "Qwen/Qwen3-VL-30B-A3B-Instruct"
    # the same id without the scheme reads the Hugging Face cache first, as before
    bare = plan_profile(load_profile(QWEN3_VL, ["model.source=Qwen/Qwen3-VL-30B-A3B-Instruct"]))
    assert bare.deployment.model.config_path is not None and "models--Qwen" in bare.deployment.model.config_path


def test_the_curated_modelscope_profile_plans_the_tutorial_env() -> None:
    planned = plan_profile(load_profile(QWEN3_VL))
    command = planned.commands[0]
    assert command.argv[2] == "Qwen/Qwen3-VL-30B-A3B-Instruct" and command.env["VLLM_USE_MODELSCOPE"] == "True"
    assert planned.serving.env_sources[0]["VLLM_USE_MODELSCOPE"].startswith("user: model.source")


# ------------------------------------------------------------------------------ engine.memory.hccl_buffer_mb


@pytest.mark.parametrize(("backend", "vllm", "ascend"), NPU_RELEASES)
def test_the_hccl_buffer_is_hccl_buffsize_in_mb(backend: str, vllm: str, ascend: str) -> None:
    result = plan({"engine": {"memory": {"hccl_buffer_mb": 512}}}, vllm=vllm, ascend=ascend,
                  sources={"engine.memory.hccl_buffer_mb": "user: engine.memory.hccl_buffer_mb"})  # fmt: skip
    assert env_of(result)["HCCL_BUFFSIZE"] == "512"
    assert result.hccl_buffer_mb is not None and result.hccl_buffer_mb[0] == 512
    assert result.env_sources[0]["HCCL_BUFFSIZE"].startswith("user: engine.memory.hccl_buffer_mb (MB;")


def test_auto_keeps_todays_buffer() -> None:
    assert "HCCL_BUFFSIZE" not in env_of(plan({}))  # HCCL's own default
    ep = plan({"engine": {"parallel": {"tensor": 2, "expert": True}}, "target": {"backend": "npu", "hardware": "a2",
              "devices_per_node": 2}})  # fmt: skip
    assert env_of(ep)["HCCL_BUFFSIZE"] == "1024" and ep.hccl_buffer_mb is not None and ep.hccl_buffer_mb[0] == 1024
    # the field beats the EP default
    sized = {"engine": {"parallel": {"tensor": 2, "expert": True}, "memory": {"hccl_buffer_mb": 200}},
             "target": {"backend": "npu", "hardware": "a2", "devices_per_node": 2}}  # fmt: skip
    assert env_of(plan(sized))["HCCL_BUFFSIZE"] == "200"


@pytest.mark.parametrize(("backend", "vllm"), [("cpu", "0.32.0"), ("cuda", "0.33.0")])
def test_an_hccl_buffer_off_ascend_is_refused(backend: str, vllm: str) -> None:
    result = plan({"engine": {"memory": {"hccl_buffer_mb": 512}}}, backend=backend, vllm=vllm)
    assert [r.kind for r in result.refusals] == ["env"]
    assert "engine.memory.hccl_buffer_mb" in result.refusals[0].message
    assert "HCCL_BUFFSIZE" not in result.commands[0].env


def test_the_plan_setting_and_the_fit_read_the_field() -> None:
    kimi = REPO / "profiles" / "kimi-k2-5-w4a8-eagle3-a3.yaml"
    planned = plan_profile(load_profile(kimi, ["engine.memory.hccl_buffer_mb=900"]))
    setting = planned.deployment.settings["engine.memory.hccl_buffer_mb"]
    assert setting.value == 900 and setting.source.startswith("user: engine.memory.hccl_buffer_mb")
    assert planned.instances[0].settings.hccl_buffer_mb.value == 900
    assert planned.commands[0].env["HCCL_BUFFSIZE"] == "900"
    # runtime.env still wins over everything the plan sets, the field included
    env = plan_profile(load_profile(kimi, ["engine.memory.hccl_buffer_mb=900", 'runtime.env.HCCL_BUFFSIZE="700"']))
    assert env.instances[0].settings.hccl_buffer_mb.value == 700 and env.commands[0].env["HCCL_BUFFSIZE"] == "700"


@pytest.mark.parametrize("value", ["0", "-1", '"512"', "1.5"])
def test_a_bad_buffer_is_a_located_profile_error(value: str) -> None:
    with pytest.raises(UserInputError, match=r"engine\.memory\.hccl_buffer_mb"):
        load_profile(CPU_DEMO, [f"engine.memory.hccl_buffer_mb={value}"])


# ------------------------------------------------------------------------------------------------ runtime.cpu


@pytest.mark.parametrize(("backend", "vllm", "ascend"), RELEASES)
def test_cpu_threads_and_binding_are_openmp_variables(backend: str, vllm: str, ascend: str) -> None:
    result = plan({"runtime": {"cpu": {"threads": 8, "bind": "close"}}}, backend=backend, vllm=vllm, ascend=ascend)
    env = env_of(result)
    assert (env["OMP_NUM_THREADS"], env["OMP_PROC_BIND"]) == ("8", "close")
    result = plan({"runtime": {"cpu": {"bind": True}}}, backend=backend, vllm=vllm, ascend=ascend)
    assert env_of(result)["OMP_PROC_BIND"] == "true"


def test_unset_keeps_the_ascend_defaults_and_nothing_elsewhere() -> None:
    env = env_of(plan({}))
    assert (env["OMP_NUM_THREADS"], env["OMP_PROC_BIND"]) == ("1", "false")
    for backend, vllm in (("cpu", "0.32.0"), ("cuda", "0.33.0")):
        env = env_of(plan({}, backend=backend, vllm=vllm))
        assert "OMP_NUM_THREADS" not in env and "OMP_PROC_BIND" not in env, backend


def test_the_settings_show_the_resolved_defaults() -> None:
    planned = plan_profile(load_profile(REPO / "profiles" / "qwen3-vl-30b-a3b-a3.yaml", ["runtime.cpu.bind=spread"]))
    settings = planned.deployment.settings
    assert settings["runtime.cpu.threads"].value == 1 and "ascend default" in settings["runtime.cpu.threads"].source
    assert settings["runtime.cpu.bind"].value == "spread"
    assert planned.provenance["env:OMP_PROC_BIND"] == "user: runtime.cpu.bind (OpenMP OMP_PROC_BIND)"


@pytest.mark.parametrize("override", ["runtime.cpu.threads=0", "runtime.cpu.bind=master", 'runtime.cpu.threads="4"'])
def test_bad_cpu_settings_are_located_profile_errors(override: str) -> None:
    with pytest.raises(UserInputError, match=r"runtime\.cpu\."):
        load_profile(CPU_DEMO, [override])


# ------------------------------------------------------------------------------------------------ network.hccl


@pytest.mark.parametrize(("backend", "vllm", "ascend"), NPU_RELEASES)
def test_hccl_timeouts_and_links_are_hccl_variables(backend: str, vllm: str, ascend: str) -> None:
    hccl = {"connect_timeout_s": 600, "exec_timeout_s": 204, "intra_node": "pcie"}
    env = env_of(plan({"network": {"hccl": hccl}}, vllm=vllm, ascend=ascend))
    assert (env["HCCL_CONNECT_TIMEOUT"], env["HCCL_EXEC_TIMEOUT"]) == ("600", "204")
    assert (env["HCCL_INTRA_PCIE_ENABLE"], env["HCCL_INTRA_ROCE_ENABLE"]) == ("1", "0")
    env = env_of(plan({"network": {"hccl": {"intra_node": "roce"}}}, vllm=vllm, ascend=ascend))
    assert env["HCCL_INTRA_ROCE_ENABLE"] == "1" and "HCCL_INTRA_PCIE_ENABLE" not in env


def test_unset_hccl_settings_leave_hccl_its_defaults() -> None:
    env = env_of(plan({}))
    assert not {"HCCL_CONNECT_TIMEOUT", "HCCL_EXEC_TIMEOUT", "HCCL_INTRA_PCIE_ENABLE", "HCCL_INTRA_ROCE_ENABLE"} & set(
        env
    )


@pytest.mark.parametrize(("backend", "vllm"), [("cpu", "0.32.0"), ("cuda", "0.33.0")])
def test_hccl_settings_off_ascend_are_refused(backend: str, vllm: str) -> None:
    hccl = {"connect_timeout_s": 600, "intra_node": "roce"}
    result = plan({"network": {"hccl": hccl}}, backend=backend, vllm=vllm)
    assert sorted(r.message.split(":")[0] for r in result.refusals) == [
        "network.hccl.connect_timeout_s", "network.hccl.intra_node"]  # fmt: skip
    assert not any(name.startswith("HCCL_") for name in result.commands[0].env)


def test_the_two_node_deepseek_profile_plans_the_tutorials_pcie_links() -> None:
    planned = plan_profile(load_profile(REPO / "profiles" / "deepseek-r1-w8a8-2node-a2.yaml"))
    for command in planned.commands:
        assert (command.env["HCCL_INTRA_PCIE_ENABLE"], command.env["HCCL_INTRA_ROCE_ENABLE"]) == ("1", "0")
    assert planned.serving.env_sources[0]["HCCL_INTRA_PCIE_ENABLE"].startswith(
        "user: network.hccl.intra_node (v0.23.0:docs"
    )


# ------------------------------------------------------------------------------------------- runtime.timeouts

TIMEOUTS = {"engine_ready_s": 1200, "execute_model_s": 3000, "rpc_s": 3600, "engine_iteration_s": 120}
# vLLM → what it reads of them (the V0 variables until 0.10.2, the execute-model one from 0.9.2, ready from 0.14)
V1 = {"VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS": "3000", "VLLM_ENGINE_READY_TIMEOUT_S": "1200"}
READ = [
    ("npu", "0.7.3", "v0.7.3", {"VLLM_RPC_TIMEOUT": "3600000", "VLLM_ENGINE_ITERATION_TIMEOUT_S": "120"}),
    ("npu", "0.9.2", "v0.9.2rc1", {"VLLM_RPC_TIMEOUT": "3600000", "VLLM_ENGINE_ITERATION_TIMEOUT_S": "120",
                                   "VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS": "3000"}),
    ("npu", "0.13.0", "v0.13.0", {"VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS": "3000"}),
    ("npu", "0.25.1", "v0.25.1rc1", V1),
    ("cpu", "0.32.0", "", V1),
    ("cuda", "0.33.0", "", V1),
]  # fmt: skip
TIMEOUT_VARIABLES = {"VLLM_RPC_TIMEOUT", "VLLM_ENGINE_ITERATION_TIMEOUT_S", "VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS",
                     "VLLM_ENGINE_READY_TIMEOUT_S"}  # fmt: skip


@pytest.mark.parametrize(("backend", "vllm", "ascend", "expected"), READ, ids=[r[1] for r in READ])
def test_each_timeout_is_the_variable_the_release_reads_in_its_unit(
    backend: str, vllm: str, ascend: str, expected: dict[str, str]
) -> None:
    result = plan({"runtime": {"timeouts": TIMEOUTS}}, backend=backend, vllm=vllm, ascend=ascend)
    env = env_of(result)
    assert {k: v for k, v in env.items() if k in TIMEOUT_VARIABLES} == expected
    # what the release does not read is not set, and said
    unread = len(TIMEOUT_VARIABLES) - len(expected)
    warned = [w for w in result.warnings if w.startswith("runtime.timeouts.") and "not applied" in w]
    assert len(warned) == unread, warned


def test_an_unread_timeout_names_the_releases_that_read_it() -> None:
    result = plan({"runtime": {"timeouts": {"rpc_s": 60}}}, vllm="0.23.0", ascend="v0.23.0")
    assert "VLLM_RPC_TIMEOUT" not in env_of(result)
    [warning] = [w for w in result.warnings if w.startswith("runtime.timeouts.rpc_s")]
    assert warning == (
        "runtime.timeouts.rpc_s not applied: vLLM 0.23.0 reads no VLLM_RPC_TIMEOUT (read by vLLM <0.9.2 and "
        ">=0.9.2,<0.11)"
    )


def test_vllm_ascend_v0_23_0_raises_a_short_execute_model_timeout() -> None:
    short = plan({"runtime": {"timeouts": {"execute_model_s": 600}}}, vllm="0.23.0", ascend="v0.23.0")
    assert env_of(short)["VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS"] == "600"
    assert any("raises any value under 1836 s" in w and "platform.py:1274" in w for w in short.warnings)
    for ascend, vllm, seconds in (("v0.24.0rc1", "0.24.0", 600), ("v0.23.0", "0.23.0", 3000)):
        quiet = plan({"runtime": {"timeouts": {"execute_model_s": seconds}}}, vllm=vllm, ascend=ascend)
        assert not any("raises any value" in w for w in quiet.warnings), ascend


# ------------------------------------------------------------------------------------- model.allow_long_context


@pytest.mark.parametrize(("backend", "vllm", "ascend"), RELEASES)
def test_a_long_context_is_allowed_by_the_variable(backend: str, vllm: str, ascend: str) -> None:
    result = plan({"model": {"source": "org/model", "allow_long_context": True}}, backend=backend, vllm=vllm,
                  ascend=ascend)  # fmt: skip
    assert env_of(result)["VLLM_ALLOW_LONG_MAX_MODEL_LEN"] == "1"
    assert "VLLM_ALLOW_LONG_MAX_MODEL_LEN" not in env_of(plan({}, backend=backend, vllm=vllm, ascend=ascend))


def _long_context(tmp_path: Path, *overrides: str) -> Any:
    model = tmp_path / "model"
    model.mkdir(parents=True)
    config = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "num_attention_heads": 8,
              "max_position_embeddings": 4096}  # fmt: skip
    (model / "config.json").write_text(json.dumps(config))
    planned = plan_profile(load_profile(CPU_DEMO, [f"model.source={model}", *overrides]))
    [finding] = [f for f in planned.deployment.findings if f.id == "plan.model.max-model-len-above-config"]
    return finding, planned


def test_the_plan_suggests_it_above_the_models_own_context(tmp_path: Path) -> None:
    finding, _ = _long_context(tmp_path, "model.max_model_len=8192")
    assert finding.status == "warn" and finding.at == ("model", "max_model_len")
    assert "8192 is above the model's own context (4096 tokens" in finding.message
    assert finding.fix is not None and "model.allow_long_context: true" in finding.fix


def test_within_the_context_or_allowed_it_passes(tmp_path: Path) -> None:
    within, _ = _long_context(tmp_path, "model.max_model_len=4096")
    assert within.status == "pass"
    allowed, planned = _long_context(tmp_path / "a", "model.max_model_len=8192", "model.allow_long_context=true")
    assert allowed.status == "pass" and planned.commands[0].env["VLLM_ALLOW_LONG_MAX_MODEL_LEN"] == "1"
    by_hand, _ = _long_context(
        tmp_path / "b", "model.max_model_len=8192", 'runtime.env.VLLM_ALLOW_LONG_MAX_MODEL_LEN="1"'
    )
    assert by_hand.status == "pass"
    scaled, _ = _long_context(tmp_path / "c", "model.max_model_len=8192",
                              'model.hf_overrides={"rope_scaling": {"rope_type": "yarn", "factor": 4}}')  # fmt: skip
    assert scaled.status == "skip"


# -------------------------------------------- engine.memory.block_size, model.tokenizer_mode, model.load_strategy


def flag(result: AdapterResult, name: str) -> str | None:
    argv = list(result.commands[0].argv)
    return argv[argv.index(name) + 1] if name in argv else None


@pytest.mark.parametrize(("backend", "vllm", "ascend"), RELEASES)
def test_block_size_and_tokenizer_mode_are_engine_flags(backend: str, vllm: str, ascend: str) -> None:
    sections = {"engine": {"memory": {"block_size": 128}}, "model": {"source": "org/model", "tokenizer_mode": "slow"}}
    result = plan(sections, backend=backend, vllm=vllm, ascend=ascend)
    assert not result.refusals, result.refusals
    assert (flag(result, "--block-size"), flag(result, "--tokenizer-mode")) == ("128", "slow")


@pytest.mark.parametrize(
    ("vllm", "ascend", "block", "accepted"),
    [("0.9.1", "v0.9.1", 256, False), ("0.13.0", "v0.13.0", 256, True), ("0.13.0", "v0.13.0", 48, False),
     ("0.18.0", "v0.18.0", 48, True)],
)  # fmt: skip
def test_the_release_parser_decides_the_block_sizes(vllm: str, ascend: str, block: int, accepted: bool) -> None:
    result = plan({"engine": {"memory": {"block_size": block}}}, vllm=vllm, ascend=ascend)
    assert [r.kind for r in result.refusals] == ([] if accepted else ["parser"])


def test_the_release_parser_decides_the_tokenizer_modes() -> None:
    old = plan({"model": {"source": "org/model", "tokenizer_mode": "hf"}}, vllm="0.9.1", ascend="v0.9.1")
    assert [r.kind for r in old.refusals] == ["parser"] and "--tokenizer-mode" in old.refusals[0].message
    new = plan({"model": {"source": "org/model", "tokenizer_mode": "hf"}}, vllm="0.13.0", ascend="v0.13.0")
    assert not new.refusals and flag(new, "--tokenizer-mode") == "hf"


LOAD = [("0.9.1", "v0.9.1", {}), ("0.10.2", "v0.10.2rc1", {"lazy", "eager"}),
        ("0.13.0", "v0.13.0", {"lazy", "eager", "torchao"}),
        ("0.23.0", "v0.23.0", {"lazy", "eager", "prefetch", "torchao"}),
        ("0.25.1", "v0.25.1rc1", {"lazy", "eager", "prefetch", "torchao"})]  # fmt: skip


@pytest.mark.parametrize(("vllm", "ascend", "known"), LOAD, ids=[r[0] for r in LOAD])
def test_each_release_takes_the_load_strategies_its_loader_knows(vllm: str, ascend: str, known: set[str]) -> None:
    for strategy in ("lazy", "eager", "prefetch", "torchao"):
        result = plan({"model": {"source": "org/model", "load_strategy": strategy}}, vllm=vllm, ascend=ascend)
        if strategy in known:
            assert not result.refusals and flag(result, "--safetensors-load-strategy") == strategy, strategy
        else:
            assert [r.kind for r in result.refusals] == ["load-strategy"], (vllm, strategy)
            assert flag(result, "--safetensors-load-strategy") is None


def test_a_profile_plans_the_loading_options_with_provenance() -> None:
    planned = plan_profile(load_profile(CPU_DEMO, ["model.load_strategy=eager", "engine.memory.block_size=32",
                                                   "model.tokenizer_mode=auto"]))  # fmt: skip
    argv = list(planned.commands[0].argv)
    assert argv[argv.index("--safetensors-load-strategy") + 1] == "eager"
    assert planned.provenance["--block-size"] == "user: engine.memory.block_size"
    assert planned.provenance["--safetensors-load-strategy"].startswith("user: model.load_strategy (vLLM 0.18.0:")


# --------------------------------------------------------------------------------------------------- claims


CLAIMED = {
    "VLLM_USE_MODELSCOPE": "model.source",
    "HCCL_BUFFSIZE": "engine.memory.hccl_buffer_mb",
    "OMP_NUM_THREADS": "runtime.cpu.threads",
    "OMP_PROC_BIND": "runtime.cpu.bind",
    "HCCL_CONNECT_TIMEOUT": "network.hccl.connect_timeout_s",
    "HCCL_EXEC_TIMEOUT": "network.hccl.exec_timeout_s",
    "HCCL_INTRA_PCIE_ENABLE": "network.hccl.intra_node",
    "HCCL_INTRA_ROCE_ENABLE": "network.hccl.intra_node",
    "VLLM_ENGINE_READY_TIMEOUT_S": "runtime.timeouts.engine_ready_s",
    "VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS": "runtime.timeouts.execute_model_s",
    "VLLM_RPC_TIMEOUT": "runtime.timeouts.rpc_s",
    "VLLM_ENGINE_ITERATION_TIMEOUT_S": "runtime.timeouts.engine_iteration_s",
    "VLLM_ALLOW_LONG_MAX_MODEL_LEN": "model.allow_long_context",
}


def test_each_variable_is_claimed_by_its_field() -> None:
    for name, field in CLAIMED.items():
        claim = typed_fields.owner("env", name)
        assert claim is not None and claim.field == field, name


def test_validate_points_the_hand_written_variables_at_the_fields() -> None:
    env = "".join(f'    {name}: "1"\n' for name in CLAIMED)
    finding = migration(profile("runtime:\n  env:\n" + env))
    assert finding.status == "warn" and finding.at == ("runtime", "env", "VLLM_USE_MODELSCOPE")
    for name, field in CLAIMED.items():
        if name != "HCCL_INTRA_ROCE_ENABLE":  # one hint per field
            assert f"runtime.env `{name}`: use {field}" in finding.message, name


def test_the_flags_are_claimed_and_pointed_at() -> None:
    for name, field in (("--block-size", "engine.memory.block_size"), ("--tokenizer-mode", "model.tokenizer_mode"),
                        ("--safetensors-load-strategy", "model.load_strategy")):  # fmt: skip
        claim = typed_fields.owner("flag", name)
        assert claim is not None and claim.field == field
    finding = migration(profile("engine:\n  extra_args: ['--block-size', '64', '--safetensors-load-strategy=eager']\n"))
    assert finding.message == (
        "engine.extra_args `--block-size`: use engine.memory.block_size (also engine.extra_args "
        "`--safetensors-load-strategy`: use model.load_strategy)"
    )


def test_a_node_env_is_pointed_at_the_field_too() -> None:
    text = "network:\n  nodes:\n    - address: 192.0.2.1\n      env:\n        HCCL_BUFFSIZE: '256'\n"
    finding = migration(profile(text))
    assert "network.nodes[0].env `HCCL_BUFFSIZE`: use engine.memory.hccl_buffer_mb" in finding.message
