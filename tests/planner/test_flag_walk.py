"""Walk every release row of the support matrix: each adapter topic has exactly one era for it, and every
planned argv, JSON key, `--additional-config` key and `VLLM_ASCEND_*` variable is accepted by that release's
real-parser snapshot and key table, or the plan reports it as a broken constraint (never silently)."""

from __future__ import annotations

from typing import Any

import pytest

from ascendctl.core.errors import UserInputError
from ascendctl.facts.matrix import hardware_by_id, load_matrix
from ascendctl.facts.matrix.launch import hardware_traits, quantization_launch
from ascendctl_engine.adapters import (
    TOPICS,
    EngineIntent,
    HardwareTraits,
    LoadedModel,
    acceptance_for,
    eras_for,
    plan_commands,
)
from ascendctl_engine.adapters.eras import REGISTRY
from ascendctl_engine.adapters.intent import SECTIONS, intent_from_sections
from ascendctl_engine.mapping import deep_merge

MATRIX = load_matrix()
ROWS = MATRIX.releases
MODEL = {"source": "org/m", "served_name": "m", "max_model_len": 4096}
# Two nodes of eight devices, each with its address and NIC.
TWO_NODES: dict[str, Any] = {
    "target": {"nodes": 2, "devices_per_node": 8},
    "network": {"nodes": [{"address": "10.0.0.1", "interface": "eth0"}, {"address": "10.0.0.2", "interface": "eth0"}]},
}


def base(
    row: Any,
    *,
    model: dict[str, Any] = MODEL,
    loaded: dict[str, Any] | None = None,
    hardware: str | None = None,
    **kw: Any,
) -> EngineIntent:
    """The row's plain intent with these profile sections (`model` replaces the default model whole, the others
    are merged in) and these resolved values (`loaded` model facts beside `model.source`, ...)."""
    hardware = hardware or ("a2" if row.backend == "npu" else None)
    target = {"backend": row.backend, **({"hardware": hardware} if hardware else {})}
    sections = {name: kw.pop(name) for name in SECTIONS if name in kw}
    document = deep_merge({"model": model, "target": target}, sections)[0]
    return intent_from_sections(
        document,
        traits=hardware_traits(hardware_by_id(MATRIX, hardware)) if hardware else HardwareTraits(),
        vllm=row.vllm,
        vllm_ascend=row.vllm_ascend,
        cann=row.cann,
        loaded=LoadedModel(model["source"], **loaded) if loaded is not None else None,
        **kw,
    )


def intents(row: Any) -> list[EngineIntent]:
    npu = row.backend == "npu"
    rich_model = {
        **MODEL,
        "trust_remote_code": True,
        "hf_overrides": {"a": 1},
        "dtype": "bfloat16",
        "quantization": "w8a8" if npu else "none",
    }
    scheduler = {
        "max_num_seqs": 8,
        "max_num_batched_tokens": 2048,
        "prefix_caching": False,
        "chunked_prefill": True,
        "async_scheduling": True,
    }
    out = [
        base(row),
        base(
            row,
            model=rich_model,
            loaded={"quant_method": "ascend" if npu else None},
            engine={
                "graph": {"capture_sizes": [1, 2, 4]},
                "parallel": {"tensor": 2},
                "scheduler": scheduler,
                "speculative": {"method": "ngram", "num_tokens": 2},
                "seed": 1,
                "memory": {"device_utilization": 0.9},
            },
            server={"shutdown_timeout": 10},  # written in the profile: explicit
        ),
        base(row, model={"source": "e", "task": "embed"}, engine={"graph": {"mode": "eager"}}),
        base(row, model={"source": "r", "task": "rerank"}, engine={"scheduler": {"prefix_caching": True}}),
        base(row, engine={"parallel": {"tensor": 4, "data": 4, "expert": True}}, **TWO_NODES),
    ]
    if npu:
        out += [
            base(
                row,
                model={"source": "deepseek"},
                loaded={"arch": "mla"},
                engine={
                    "parallel": {"tensor": 4, "data": 4, "expert": True},
                    "eplb": {"mode": "dynamic", "redundant_experts": 16},
                    "speculative": {"method": "mtp", "num_tokens": 1},
                },
                **TWO_NODES,
            ),
            base(row, engine={"parallel": {"tensor": 8, "pipeline": 2, "executor": "ray"}}, **TWO_NODES),
            base(row, hardware="300i-duo", engine={"graph": {"mode": "full-decode-only"}}),
        ]
    else:
        out.append(base(row, engine={"parallel": {"tensor": 16}}, **TWO_NODES))
    return out


@pytest.mark.parametrize("row", ROWS, ids=[f"{r.backend}-{r.version}" for r in ROWS])
def test_one_era_per_topic(row: Any) -> None:
    chosen = eras_for(base(row))
    topics_for_backend = {e.topic for e in REGISTRY if row.backend in e.backends}
    assert set(chosen) == topics_for_backend
    assert set(chosen) <= set(TOPICS)


@pytest.mark.parametrize("row", ROWS, ids=[f"{r.backend}-{r.version}" for r in ROWS])
def test_nothing_the_release_rejects_is_planned_silently(row: Any) -> None:
    accepted = acceptance_for(row.backend, row.vllm, row.vllm_ascend)
    for intent in intents(row):
        result = plan_commands(intent)
        for command in result.commands:
            if command.argv[0] == "vllm":
                for problem in accepted.argv_problems(command.argv):
                    assert problem.message in result.unsupported, (row.version, problem.message)
            for name in command.env:
                verdict = accepted.judge_env(name, "the env")
                if verdict is not None and verdict.status != "read":  # never silent: a verdict the plan reports
                    assert any(v.name == name and v.reason == verdict.reason for v in result.reads), (row.version, name)
        assert result.provenance["decision:flag-check"].startswith(f"vLLM {accepted.parser.built_from} ")


# `matrix --explain` and `plan` give one answer on how a quantization is launched: the explainer asks the
# adapters' quantization era, and the plan's argv carries exactly what it says (every release × quantization).
QUANTS = [q for q in MATRIX.quantizations if q.method not in ("none", "auto")]


@pytest.mark.parametrize("row", [r for r in ROWS if r.backend == "npu"], ids=lambda r: r.version)
def test_explain_and_plan_launch_every_quantization_alike(row: Any) -> None:
    for qt in QUANTS:
        model = {"source": "m", "quantization": qt.id}
        result = plan_commands(base(row, model=model, loaded={"quant_method": qt.method}))
        argv = result.commands[0].argv
        try:
            launch = quantization_launch(MATRIX, row, qt.id)
        except UserInputError:  # the matrix has no way to load it on this row: neither do the adapters
            assert result.unsupported, (row.version, qt.id)
            continue
        assert ("--quantization" in argv) == ("--quantization" in launch.argv), (row.version, qt.id, launch)
        for flag, value in zip(launch.argv[::2], launch.argv[1::2], strict=True):
            assert flag in argv and argv[argv.index(flag) + 1] == value, (row.version, qt.id, flag, argv)
        if "--quantization" in launch.argv:  # the release's own parser (with its plugin's choices) takes it
            accepted = acceptance_for(row.backend, row.vllm, row.vllm_ascend)
            assert not accepted.argv_problems(["vllm", "serve", "m", *launch.argv]), (row.version, qt.id)
