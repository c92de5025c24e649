"""The era adapters on hand-made intents: each era's spelling, the checks against the flag table, env
defaults that never override the user, secrets kept out of argv."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import pytest

from ascendctl_engine.adapters import EngineIntent, HardwareTraits, LoadedModel, plan_commands
from ascendctl_engine.adapters.intent import SECTIONS, intent_from_sections
from ascendctl_engine.mapping import deep_merge
from ascendctl_engine.spec import NodeAddress, NodeRankBase, SecretRef

VLLM_OF = {  # vllm-ascend → vLLM, as in the support matrix (vllm-ascend versioning_policy.md)
    "v0.7.3": "0.7.3",
    "v0.8.4rc2": "0.8.4",
    "v0.9.1": "0.9.1",
    "v0.9.0rc1": "0.9.0",
    "v0.10.2rc1": "0.10.2",
    "v0.11.0rc0": "0.11.0rc3",
    "v0.11.0": "0.11.0",
    "v0.12.0rc1": "0.12.0",
    "v0.13.0": "0.13.0",
    "v0.14.0rc1": "0.14.1",
    "v0.15.0rc1": "0.15.0",
    "v0.16.0rc1": "0.16.0",
    "v0.18.0": "0.18.0",
    "v0.21.0rc1": "0.21.0",
    "v0.23.0rc1": "0.23.0",
    "v0.23.0": "0.23.0",
    "v0.25.1rc1": "0.25.1",
}


def traits(hardware: str) -> HardwareTraits:
    """The family's limits as the planner passes them: from the support matrix's hardware table."""
    from ascendctl.facts.matrix import hardware_by_id, load_matrix
    from ascendctl.facts.matrix.launch import hardware_traits

    return hardware_traits(hardware_by_id(load_matrix(), hardware))


def intent_of(document: Mapping[str, Any], loaded: Mapping[str, Any] | None, **kw: Any) -> EngineIntent:
    """`document` with the profile sections among `kw` merged in; the other keywords are what the planner
    resolves (`loaded` model facts, `cann`, `driver`, `cpu_cores`, ...)."""
    sections = {name: kw.pop(name) for name in SECTIONS if name in kw}
    document = deep_merge(document, sections)[0]
    model = LoadedModel(**{"source": document["model"]["source"], **loaded}) if loaded is not None else None
    return intent_from_sections(document, loaded=model, **kw)


def npu(
    release: str = "v0.23.0", *, hardware: str = "a2", loaded: Mapping[str, Any] | None = None, **kw: Any
) -> EngineIntent:
    base = {"model": {"source": "org/model"}, "target": {"backend": "npu", "hardware": hardware}}
    kw.setdefault("traits", traits(hardware))
    return intent_of(base, loaded, vllm=VLLM_OF[release], vllm_ascend=release, **kw)


def cpu(*, loaded: Mapping[str, Any] | None = None, **kw: Any) -> EngineIntent:
    base = {"model": {"source": "/m"}, "target": {"backend": "cpu"}}
    return intent_of(base, loaded, vllm=kw.pop("vllm", "0.32.0"), **kw)


def argv(intent: EngineIntent) -> tuple[str, ...]:
    return plan_commands(intent).commands[0].argv


def value(args: tuple[str, ...], flag: str) -> str:
    return args[args.index(flag) + 1]


def config(args: tuple[str, ...], flag: str) -> dict[str, Any]:
    return json.loads(value(args, flag))  # type: ignore[no-any-return]


def graph(mode: str, **more: Any) -> dict[str, Any]:
    """An `engine` section with this graph mode (and `capture_sizes=[...]` when given)."""
    return {"graph": {"mode": mode, **more}}


# ------------------------------------------------------------------------------------------ graph
def test_eager_everywhere() -> None:
    for release in ("v0.7.3", "v0.9.1", "v0.11.0", "v0.23.0"):
        args = argv(npu(release, engine=graph("eager")))
        assert "--enforce-eager" in args and "--compilation-config" not in args


def test_auto_graph_mode_recommendation_per_era() -> None:
    assert "--enforce-eager" in argv(npu("v0.8.4rc2"))  # no graph mode before v0.9.0rc1
    dense_v11 = plan_commands(npu("v0.11.0"))
    assert dense_v11.graph_mode == "piecewise" and "--compilation-config" not in dense_v11.commands[0].argv
    mla: dict[str, Any] = {"model": {"source": "deepseek"}, "loaded": {"arch": "mla"}}
    torchair = config(argv(npu("v0.11.0", **mla)), "--additional-config")
    assert torchair == {"torchair_graph_config": {"enabled": True}, "ascend_scheduler_config": {"enabled": True}}
    rc1 = config(argv(npu("v0.9.0rc1", **mla)), "--additional-config")
    assert rc1["torchair_graph_config"] == {"enabled": True}  # the code reads `enabled` (its docs say `enable`)
    for release in ("v0.12.0rc1", "v0.13.0", "v0.23.0"):
        result = plan_commands(npu(release, **mla))
        assert config(result.commands[0].argv, "--compilation-config") == {"cudagraph_mode": "FULL_DECODE_ONLY"}
        assert result.provenance["--compilation-config.cudagraph_mode"].startswith("auto: ")


def test_pooling_auto_keeps_engine_default() -> None:
    args = argv(npu("v0.23.0", model={"source": "emb", "task": "embed"}))
    assert "--compilation-config" not in args and "--enforce-eager" not in args


def test_full_modes_need_their_release() -> None:
    assert plan_commands(npu("v0.10.2rc1", engine=graph("full-decode-only"))).unsupported
    fdo_v11 = plan_commands(npu("v0.11.0", engine=graph("full-decode-only")))
    assert not fdo_v11.unsupported and any("experimental" in w for w in fdo_v11.warnings)
    assert plan_commands(npu("v0.11.0", engine=graph("full"))).unsupported
    assert not plan_commands(npu("v0.13.0", engine=graph("full"))).unsupported
    fp_old = plan_commands(npu("v0.18.0", engine=graph("full-and-piecewise")))
    assert any("v0.21.0rc1" in u for u in fp_old.unsupported)
    fp_new = plan_commands(npu("v0.23.0", engine=graph("full-and-piecewise")))
    assert not fp_new.unsupported
    assert any("HDK ≥ 25.5.1" in w for w in fp_new.warnings)  # driver not probed
    fine_host = plan_commands(npu("v0.23.0", engine=graph("full-and-piecewise"), driver="25.5.1", cann="9.1.0"))
    assert not any("HDK" in w for w in fine_host.warnings)
    old_host = plan_commands(npu("v0.23.0", engine=graph("full-and-piecewise"), driver="25.2.0", cann="8.3.RC2"))
    assert any("driver (HDK) 25.2.0 < 25.5.1" in w for w in old_host.warnings)
    # PIECEWISE spends the same stream budget: the same minimums, the same warning (one owner, one scope)
    piecewise = plan_commands(npu("v0.23.0", engine=graph("piecewise"), driver="25.2.0", cann="9.1.0"))
    assert any("graph mode piecewise" in w and "25.2.0 < 25.5.1" in w for w in piecewise.warnings)
    decode_only = plan_commands(npu("v0.23.0", engine=graph("full-decode-only"), driver="25.2.0", cann="8.3.RC2"))
    assert not any("25.5.1" in w for w in decode_only.warnings)


def test_capture_sizes_spelling_per_vllm() -> None:
    sizes = [1, 2, 4]
    v11 = argv(npu("v0.11.0", engine=graph("piecewise", capture_sizes=sizes)))
    assert v11[v11.index("--cuda-graph-sizes") + 1 : v11.index("--cuda-graph-sizes") + 4] == ("1", "2", "4")
    v13 = argv(npu("v0.13.0", engine=graph("piecewise", capture_sizes=sizes)))
    assert "--cuda-graph-sizes" not in v13
    assert config(v13, "--compilation-config")["cudagraph_capture_sizes"] == [1, 2, 4]
    # vLLM 0.10.2's real parser has `--cuda-graph-sizes` (its snapshot): emitted, no warning
    v10 = plan_commands(npu("v0.10.2rc1", engine={"graph": {"capture_sizes": sizes}}))
    assert "--cuda-graph-sizes" in v10.commands[0].argv
    assert not any("--cuda-graph-sizes" in w for w in v10.warnings)
    # CPU: no graphs at all
    no_graphs = plan_commands(cpu(engine={"graph": {"capture_sizes": sizes}}))
    assert any("captures no graphs" in w for w in no_graphs.warnings)


def test_300i_duo_rules() -> None:
    duo = plan_commands(npu("v0.23.0", hardware="300i-duo", engine=graph("full-decode-only")))
    args = duo.commands[0].argv
    assert value(args, "--dtype") == "float16"
    assert config(args, "--additional-config") == {"ascend_compilation_config": {"enable_npugraph_ex": False}}
    assert config(args, "--compilation-config")["cudagraph_capture_sizes"] == [1, 2, 4, 8, 16, 32]
    assert "HCCL_OP_EXPANSION_MODE" not in duo.commands[0].env
    v15 = argv(npu("v0.15.0rc1", hardware="300i-duo", engine=graph("full-decode-only")))
    assert config(v15, "--additional-config") == {"npugraph_ex_config": {"enable": False}}
    v14 = argv(npu("v0.14.0rc1", hardware="300i-duo", engine=graph("full-decode-only")))
    assert "--additional-config" not in v14  # npugraph_ex off by default in v0.14
    pool = argv(npu("v0.23.0", hardware="300i-duo", model={"source": "e", "task": "embed"}))
    assert config(pool, "--compilation-config") == {"cudagraph_capture_sizes": [1024, 512]}
    old_cann = plan_commands(npu("v0.23.0", hardware="300i-duo", cann="8.5.1"))
    assert "--enforce-eager" in old_cann.commands[0].argv and old_cann.graph_mode == "eager"
    assert plan_commands(npu("v0.23.0", hardware="300i-duo", cann="8.5.1", engine=graph("full"))).unsupported


def test_950_keeps_four_capture_sizes() -> None:
    sizes = [1, 2, 4, 8, 16, 32, 64, 128]
    result = plan_commands(npu("v0.23.0", hardware="950", engine=graph("full-decode-only", capture_sizes=sizes)))
    assert config(result.commands[0].argv, "--compilation-config")["cudagraph_capture_sizes"] == [
        1,
        4,
        32,
        128,
    ]  # indices round(i × 7/3): 0, 2, 5, 7
    before_cap = argv(npu("v0.21.0rc1", hardware="950", engine=graph("full-decode-only", capture_sizes=sizes)))
    assert config(before_cap, "--compilation-config")["cudagraph_capture_sizes"] == sizes


# ------------------------------------------------------------------------------------ quantization
def quant(release: str, q: str = "w8a8", method: str | None = "ascend") -> Any:
    return plan_commands(npu(release, model={"source": "m", "quantization": q}, loaded={"quant_method": method}))


def test_quantization_eras() -> None:
    mindie = quant("v0.7.3")
    assert "--quantization" not in mindie.commands[0].argv and any("mindie_turbo" in w for w in mindie.warnings)
    assert "--quantization" not in quant("v0.8.4rc2").commands[0].argv  # not a CLI choice before v0.9.0rc2
    for release in ("v0.9.1", "v0.13.0", "v0.16.0rc1"):
        assert value(quant(release).commands[0].argv, "--quantization") == "ascend"
    for release in ("v0.15.0rc1", "v0.23.0"):  # detection eras: kept explicit, marked optional
        result = quant(release)
        assert value(result.commands[0].argv, "--quantization") == "ascend"
        assert "optional" in result.provenance["--quantization"]
    assert "--quantization" not in quant("v0.23.0", "compressed-tensors", "compressed-tensors").commands[0].argv
    assert value(quant("v0.23.0", "w8a8sc").commands[0].argv, "--load-format") == "sharded_state"


def test_quantization_auto() -> None:
    required = quant("v0.13.0", "auto", None)
    assert "--quantization" not in required.commands[0].argv
    assert any("set model.quantization" in w for w in required.warnings)
    detected = quant("v0.23.0", "auto", None)
    assert not detected.warnings and "detects" in detected.provenance["decision:quantization"]
    resolved = quant("v0.13.0", "auto", "ascend")  # the planner found quant_model_description.json
    assert value(resolved.commands[0].argv, "--quantization") == "ascend"


def test_modelslim_weights_are_npu_only() -> None:
    modelslim = cpu(model={"source": "m", "quantization": "w8a8"}, loaded={"quant_method": "ascend"})
    result = plan_commands(modelslim)
    assert any("only on Ascend" in u for u in result.unsupported)


# ------------------------------------------------------------------------------------- pooling etc.
def test_pooling_spelling() -> None:
    embed = {"source": "e", "task": "embed"}
    rerank = {"source": "r", "task": "rerank"}
    assert value(argv(npu("v0.11.0", model=embed)), "--task") == "embed"
    assert value(argv(npu("v0.12.0rc1", model=rerank)), "--task") == "score"
    assert value(argv(npu("v0.13.0", model=embed)), "--runner") == "pooling"
    assert "--task" not in argv(npu("v0.13.0", model=embed))


def test_prefix_caching_spelling() -> None:
    off = {"scheduler": {"prefix_caching": False, "chunked_prefill": False}}
    assert {"--no-enable-prefix-caching", "--no-enable-chunked-prefill"} <= set(argv(npu("v0.13.0", engine=off)))
    cuda = intent_from_sections({"model": {"source": "m"}, "target": {"backend": "cuda"}, "engine": off}, vllm="0.33.0")
    cuda_args = argv(cuda)
    assert {"--disable-prefix-caching", "--disable-chunked-prefill"} <= set(cuda_args)
    assert "--no-enable-prefix-caching" not in cuda_args
    on = argv(npu("v0.13.0", engine={"scheduler": {"prefix_caching": True, "async_scheduling": True}}))
    assert {"--enable-prefix-caching", "--async-scheduling"} <= set(on)


def test_speculative_mtp_name() -> None:
    spec = {"speculative": {"method": "mtp", "num_tokens": 2}}
    assert config(argv(npu("v0.9.1", engine=spec)), "--speculative-config")["method"] == "deepseek_mtp"
    assert config(argv(npu("v0.13.0", engine=spec)), "--speculative-config") == {
        "method": "mtp",
        "num_speculative_tokens": 2,
    }


def test_shutdown_timeout_only_where_it_exists() -> None:
    assert "--shutdown-timeout" in argv(npu("v0.18.0"))
    old = plan_commands(npu("v0.13.0", server={"shutdown_timeout": 60}))  # written in the profile: explicit
    assert "--shutdown-timeout" not in old.commands[0].argv
    assert any("shutdown_timeout not applied" in w for w in old.warnings)
    quiet = plan_commands(npu("v0.13.0"))  # the profile default: noted, not warned
    assert not quiet.warnings and "decision:server.shutdown_timeout" in quiet.provenance


def test_v1_engine_env() -> None:
    assert plan_commands(npu("v0.9.1")).commands[0].env["VLLM_USE_V1"] == "1"
    assert "VLLM_USE_V1" not in plan_commands(npu("v0.13.0")).commands[0].env


# ----------------------------------------------------------------------------------------- parallel
TWO_NODES: dict[str, Any] = {
    "target": {"nodes": 2},
    "network": {"nodes": [{"address": "10.0.0.1", "interface": "eth0"}, {"address": "10.0.0.2", "interface": "eth1"}]},
}


def two_nodes(**kw: Any) -> dict[str, Any]:
    """`TWO_NODES` with more profile sections merged in (e.g. `target={"devices_per_node": 8}`)."""
    return deep_merge(TWO_NODES, kw)[0]


def test_multinode_data_parallel() -> None:
    layout = {"parallel": {"tensor": 4, "data": 4, "expert": True}}
    intent = npu("v0.13.0", engine=layout, **two_nodes(target={"devices_per_node": 8}))
    head, worker = plan_commands(intent).commands
    assert value(head.argv, "--data-parallel-size-local") == "2"
    assert value(head.argv, "--data-parallel-address") == "10.0.0.1"
    assert "--headless" not in head.argv and "--data-parallel-start-rank" not in head.argv
    assert value(worker.argv, "--data-parallel-start-rank") == "2" and "--headless" in worker.argv
    assert "--port" not in worker.argv and worker.health_url is None
    assert head.env["HCCL_IF_IP"] == "10.0.0.1" and worker.env["HCCL_IF_IP"] == "10.0.0.2"
    assert worker.env["HCCL_SOCKET_IFNAME"] == "eth1" and head.env["GLOO_SOCKET_IFNAME"] == "eth0"
    assert head.env["HCCL_BUFFSIZE"] == "1024"  # EP default


def test_multinode_tp_without_dp() -> None:
    layout = {"parallel": {"tensor": 16}}
    old = plan_commands(npu("v0.11.0", engine=layout, **TWO_NODES))
    assert any("needs Ray" in u for u in old.unsupported)
    new = plan_commands(npu("v0.13.0", engine=layout, **TWO_NODES)).commands
    assert value(new[0].argv, "--nnodes") == "2" and value(new[1].argv, "--node-rank") == "1"
    assert value(new[1].argv, "--master-addr") == "10.0.0.1" and "--headless" in new[1].argv


def test_an_unknown_head_address_stays_symbolic() -> None:
    # no network.nodes: the plan still plans, writes the head's address as a placeholder and keeps the reference
    result = plan_commands(npu("v0.13.0", engine={"parallel": {"data": 2}}, target={"nodes": 2}))
    assert not result.unsupported and any("network.nodes[0].address is not set" in w for w in result.warnings)
    worker = result.commands[1]
    assert value(worker.argv, "--data-parallel-address") == "<node0-address>"
    assert worker.symbols is not None and worker.symbols.unresolved == (0,)
    i = worker.argv.index("--data-parallel-address")
    assert worker.symbols.argv[i + 1] == (NodeAddress(0),)  # the same position, as a reference
    j = worker.argv.index("--data-parallel-start-rank")
    assert worker.argv[j + 1] == "1" and worker.symbols.argv[j + 1] == (NodeRankBase(1),)


def test_known_addresses_resolve_in_place() -> None:
    result = plan_commands(npu("v0.13.0", engine={"parallel": {"data": 4}}, **TWO_NODES))
    head, worker = result.commands
    assert head.symbols is not None and head.symbols.unresolved == ()
    assert value(worker.argv, "--data-parallel-address") == "10.0.0.1"
    assert worker.env["HCCL_IF_IP"] == "10.0.0.2" and worker.symbols.env["HCCL_IF_IP"] == (NodeAddress(1),)  # type: ignore[union-attr]
    # a one-node plan refers to no node: no symbols at all
    assert plan_commands(npu("v0.23.0")).commands[0].symbols is None


def test_each_npu_node_advertises_its_own_address_as_vllm_host_ip() -> None:
    # the Ascend multi-node tutorials export VLLM_HOST_IP per node next to HCCL_IF_IP
    # (v0.25.1rc1:docs/source/tutorials/models/GLM5.2.md:970); vLLM reads it as this node's IP (vllm/envs.py)
    result = plan_commands(npu("v0.25.1rc1", engine={"parallel": {"data": 4}}, **TWO_NODES))
    head, worker = result.commands
    assert (head.env["VLLM_HOST_IP"], worker.env["VLLM_HOST_IP"]) == ("10.0.0.1", "10.0.0.2")
    assert worker.symbols is not None and worker.symbols.env["VLLM_HOST_IP"] == (NodeAddress(1),)
    assert "network.nodes[1].address" in result.env_sources[1]["VLLM_HOST_IP"]
    # a default: the profile's own value wins, and one node plans none
    nodes = [{"address": "10.0.0.1"}, {"address": "10.0.0.2", "env": {"VLLM_HOST_IP": "10.9.9.9"}}]
    own: dict[str, Any] = {"target": {"nodes": 2}, "network": {"nodes": nodes}}
    mine = plan_commands(npu("v0.25.1rc1", engine={"parallel": {"data": 4}}, **own))
    assert mine.commands[1].env["VLLM_HOST_IP"] == "10.9.9.9"
    assert "replaces '10.0.0.2'" in mine.env_sources[1]["VLLM_HOST_IP"]
    single = plan_commands(npu("v0.25.1rc1", network={"nodes": [{"address": "10.0.0.1"}]})).commands[0]
    assert "VLLM_HOST_IP" not in single.env and single.env["HCCL_IF_IP"] == "10.0.0.1"


def test_ray_is_refused_on_cpu() -> None:
    result = plan_commands(cpu(engine={"parallel": {"tensor": 2, "executor": "ray"}}))
    assert any("refuses Ray" in u for u in result.unsupported)


# --------------------------------------------------------------------------------------------- eplb
TP16_EP = {"tensor": 16, "expert": True}


def eplb(release: str, **kw: Any) -> Any:
    return plan_commands(npu(release, engine={"parallel": TP16_EP, "eplb": {"mode": "dynamic", **kw}}))


def test_eplb_eras() -> None:
    static_eplb = {"parallel": {"expert": True}, "eplb": {"mode": "static", "expert_map_path": "/m.json"}}
    static = plan_commands(npu("v0.9.1", engine=static_eplb))
    assert config(static.commands[0].argv, "--additional-config") == {"expert_map_path": "/m.json"}
    assert eplb("v0.9.1").unsupported  # dynamic needs v0.11.0rc0
    # the static map from the first release that reads it (v0.9.0rc1:vllm_ascend/ascend_config.py:41), none before
    first = plan_commands(npu("v0.9.0rc1", engine=static_eplb))
    assert not first.unsupported
    assert config(first.commands[0].argv, "--additional-config") == {"expert_map_path": "/m.json"}
    before = plan_commands(npu("v0.8.4rc2", engine=static_eplb))
    assert any("EPLB needs vllm-ascend ≥ v0.9.0rc1 (static map)" in u for u in before.unsupported)
    no_guard = eplb("v0.11.0rc0")
    assert "DYNAMIC_EPLB" not in no_guard.commands[0].env
    guarded = eplb("v0.11.0", record_path="/r.json")
    assert guarded.commands[0].env["DYNAMIC_EPLB"] == "true"
    assert guarded.commands[0].env["EXPERT_MAP_RECORD"] == "true"
    assert config(guarded.commands[0].argv, "--additional-config")["expert_map_record_path"] == "/r.json"
    current = eplb("v0.23.0", redundant_experts=16, policy_type=2)
    add = config(current.commands[0].argv, "--additional-config")
    assert add == {"eplb_config": {"dynamic_eplb": True, "num_redundant_experts": 16, "eplb_policy_type": 2}}
    assert "--enable-eplb" not in current.commands[0].argv


def test_a_static_expert_map_warns_where_the_eplb_guide_schedules_its_removal() -> None:
    # v0.23.0's EPLB guide adds "Static EPLB is scheduled for removal in v0.25.1." (line 174); v0.23.0rc1's has not
    static_eplb = {"parallel": TP16_EP, "eplb": {"mode": "static", "expert_map_path": "/m.json"}}
    for release, warned in (("v0.18.0", False), ("v0.23.0rc1", False), ("v0.23.0", True), ("v0.25.1rc1", True)):
        result = plan_commands(npu(release, engine=static_eplb))
        assert config(result.commands[0].argv, "--additional-config") == {"eplb_config": {"expert_map_path": "/m.json"}}
        notes = [w for w in result.warnings if w.startswith("engine.eplb.expert_map_path:")]
        assert bool(notes) == warned, (release, notes)
        assert not result.unsupported, release  # a warning: the release still loads the map
        if warned:
            assert "schedules static EPLB (loading a recorded expert map) for removal in v0.25.1" in notes[0]
            assert f"{release}:docs/source/user_guide/feature_guide/expert_parallelism_load_balancer.md:174" in notes[0]
    assert not [w for w in eplb("v0.25.1rc1").warnings if "expert_map_path" in w]  # dynamic without a map


def test_upstream_eplb_and_never_mixing() -> None:
    result = eplb("v0.25.1rc1", implementation="upstream", redundant_experts=16)
    assert any("#12804" in u for u in result.unsupported)  # no release has MRv2 EPLB yet
    args = result.commands[0].argv
    assert "--enable-eplb" in args and value(args, "--eplb-config.use_async") == "false"
    assert result.commands[0].env["VLLM_USE_V2_MODEL_RUNNER"] == "1"
    assert "--additional-config" not in args and "DYNAMIC_EPLB" not in result.commands[0].env
    mixed = plan_commands(
        npu(
            "v0.25.1rc1",
            engine={"parallel": TP16_EP, "eplb": {"mode": "dynamic", "implementation": "upstream"}},
            runtime={"env": {"DYNAMIC_EPLB": "true"}},
        )
    )
    assert any("MRv1 EPLB guard" in u for u in mixed.unsupported)
    mrv1_on_v2 = plan_commands(
        npu(
            "v0.23.0",
            engine={"parallel": TP16_EP, "eplb": {"mode": "dynamic"}},
            runtime={"env": {"VLLM_USE_V2_MODEL_RUNNER": "1"}},
        )
    )
    assert any("never mix" in u for u in mrv1_on_v2.unsupported)


# ----------------------------------------------------------------------------------- env and output
def test_env_defaults_never_override_the_user() -> None:
    result = plan_commands(npu("v0.23.0", runtime={"env": {"OMP_NUM_THREADS": "10", "MY_VAR": "x"}}))
    command = result.commands[0]
    assert command.env["OMP_NUM_THREADS"] == "10" and command.env["MY_VAR"] == "x"
    assert command.env["TASK_QUEUE_ENABLE"] == "1"
    assert result.env_sources[0]["OMP_NUM_THREADS"].startswith("user: runtime.env.OMP_NUM_THREADS (replaces")


def test_cpu_env() -> None:
    single = plan_commands(cpu())
    assert single.commands[0].env == {"VLLM_CPU_KVCACHE_SPACE": "2"}  # always set
    frac = plan_commands(cpu(engine={"memory": {"cpu_kv_cache_gib": 1.5}}))
    assert frac.commands[0].env["VLLM_CPU_KVCACHE_SPACE"] == "2" and frac.warnings
    tp2 = plan_commands(cpu(engine={"parallel": {"tensor": 2}}))
    assert tp2.commands[0].env["VLLM_CPU_OMP_THREADS_BIND"] == "0|1"
    cores = plan_commands(cpu(engine={"parallel": {"data": 2}}, cpu_cores=8))
    assert cores.commands[0].env["VLLM_CPU_OMP_THREADS_BIND"] == "0-3|4-7"


def test_api_key_is_a_secret_reference() -> None:
    command = plan_commands(npu("v0.23.0", server={"api_key": {"env": "MY_KEY"}})).commands[0]
    assert command.secret_env == {"VLLM_API_KEY": SecretRef(env="MY_KEY")}
    assert "--api-key" not in command.argv and "VLLM_API_KEY" not in command.env
    assert command.display_env()["VLLM_API_KEY"] == "<redacted>"


def test_additional_config_merge_user_wins() -> None:
    intent = npu(
        "v0.23.0",
        hardware="300i-duo",
        engine={
            **graph("full-decode-only"),
            "additional_config": {"ascend_compilation_config": {"enable_npugraph_ex": True, "fuse_norm_quant": False}},
        },
    )
    result = plan_commands(intent)
    merged = config(result.commands[0].argv, "--additional-config")
    assert merged == {"ascend_compilation_config": {"enable_npugraph_ex": True, "fuse_norm_quant": False}}
    assert any("ascend_compilation_config.enable_npugraph_ex" in w for w in result.warnings)


def test_an_additional_config_key_the_release_ignores_is_a_warning_naming_its_readers() -> None:
    # v0.13.0's AscendConfig ignores a top-level key it does not know; the engine starts without it
    ignored = plan_commands(npu("v0.13.0", engine={"additional_config": {"enable_dsa_cp": True}}))
    assert ignored.refusals == ()
    (verdict,) = [v for v in ignored.reads if v.status == "not-read"]
    assert verdict.origin == "engine.additional_config" and verdict.name == "enable_dsa_cp"
    assert "v0.13.0 does not read `--additional-config` key `enable_dsa_cp`" in verdict.reason
    assert "read by v0.20.2rc1 … v0.25.1rc1" in verdict.reason
    assert config(ignored.commands[0].argv, "--additional-config") == {"enable_dsa_cp": True}  # passed as written
    # a level that raises on a key it does not know stays a refusal the plan cannot allow
    raising = plan_commands(npu("v0.23.0", engine={"additional_config": {"eplb_config": {"no_such_key": 1}}}))
    (refusal,) = raising.refusals
    assert refusal.kind == "keys" and refusal.fatal and "rejects `--additional-config` key" in refusal.message


def test_deep_merge() -> None:
    merged, replaced = deep_merge({"a": {"b": 1, "c": 2}, "d": 1}, {"a": {"b": 1, "e": 3}, "d": 2})
    assert merged == {"a": {"b": 1, "c": 2, "e": 3}, "d": 2}
    assert replaced == ["d"]


def test_extra_args_are_checked() -> None:
    absent = plan_commands(npu("v0.13.0", engine={"extra_args": ["--shutdown-timeout", "5"]}))
    assert any(u.startswith("engine.extra_args: vLLM 0.13.0") and "--shutdown-timeout" in u for u in absent.unsupported)
    unknown = plan_commands(npu("v0.23.0", engine={"extra_args": ["--made-up-flag"]}))
    assert any("no option --made-up-flag" in u for u in unknown.unsupported)  # the real parser would exit 2
    bad_choice = plan_commands(npu("v0.23.0", engine={"extra_args": ["--dtype", "float7"]}))
    assert any("--dtype" in u for u in bad_choice.unsupported)
    repeated = plan_commands(npu("v0.23.0", engine={"extra_args": ["--port", "9000"]}))
    assert any("repeats the planned `--port`" in w for w in repeated.warnings)
    assert repeated.commands[0].argv[-2:] == ("--port", "9000")
    config_file = plan_commands(npu("v0.23.0", engine={"extra_args": ["--config", "x.yaml"]}))
    assert any("drops `false`" in w for w in config_file.warnings)


def test_health_url_uses_loopback_for_wildcards() -> None:
    for host, expected in (("0.0.0.0", "127.0.0.1"), ("10.1.2.3", "10.1.2.3"), ("::1", "[::1]")):
        command = plan_commands(npu("v0.23.0", server={"host": host, "port": 9})).commands[0]
        assert command.health_url == f"http://{expected}:9/health"


@pytest.mark.parametrize("release", sorted(VLLM_OF))
def test_every_result_names_its_eras(release: str) -> None:
    result = plan_commands(npu(release))
    assert {"graph", "quantization", "parallel", "env"} <= set(result.eras)


def test_adapters_read_hardware_traits_not_family_names() -> None:
    # A made-up family limit reaches the plan only through the traits the planner passes in.
    fp16_only = replace(traits("a2"), dtypes=("float16",), hccl_aiv=False, label="Test family")
    args = plan_commands(npu("v0.23.0", traits=fp16_only)).commands[0]
    assert value(args.argv, "--dtype") == "float16" and "HCCL_OP_EXPANSION_MODE" not in args.env
    capped = replace(traits("a2"), max_capture_sizes=2)
    sizes = [1, 2, 4, 8]
    result = plan_commands(npu("v0.23.0", engine=graph("full-decode-only", capture_sizes=sizes), traits=capped))
    assert config(result.commands[0].argv, "--compilation-config")["cudagraph_capture_sizes"] == [1, 8]
    # ... and no adapter module names a hardware family (the vocabulary literal in intent.py aside).
    import re
    from pathlib import Path

    adapters = Path(__file__).resolve().parents[2] / "engine" / "ascendctl_engine" / "adapters"
    for path in adapters.glob("*.py"):
        if path.name in ("intent.py", "docgen.py"):
            continue
        assert not re.search(r"[\"'](300i-duo|950|a2|a3)[\"']", path.read_text()), path.name
