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
    EplbIntent,
    HardwareTraits,
    ModelIntent,
    NodeIntent,
    ParallelIntent,
    SchedulerIntent,
    ServerIntent,
    SpeculativeIntent,
    acceptance_for,
    eras_for,
    plan_commands,
)
from ascendctl_engine.adapters.eras import REGISTRY

MATRIX = load_matrix()
ROWS = MATRIX.releases


def base(row: Any, **kw: Any) -> EngineIntent:
    hardware = kw.pop("hardware", "a2" if row.backend == "npu" else None)
    return EngineIntent(
        backend=row.backend,
        hardware=hardware,
        traits=hardware_traits(hardware_by_id(MATRIX, hardware)) if hardware else HardwareTraits(),
        vllm=row.vllm,
        vllm_ascend=row.vllm_ascend,
        cann=row.cann,
        model=kw.pop("model", ModelIntent(source="org/m", served_name="m", max_model_len=4096)),
        **kw,
    )


def intents(row: Any) -> list[EngineIntent]:
    two = (NodeIntent(0, "10.0.0.1", "eth0"), NodeIntent(1, "10.0.0.2", "eth0"))
    rich_model = ModelIntent(
        source="org/m",
        served_name="m",
        max_model_len=4096,
        trust_remote_code=True,
        hf_overrides={"a": 1},
        dtype="bfloat16",
        quantization="w8a8" if row.backend == "npu" else "none",
        quant_method="ascend" if row.backend == "npu" else None,
    )
    out = [
        base(row),
        base(
            row,
            model=rich_model,
            capture_sizes=(1, 2, 4),
            parallel=ParallelIntent(tensor=2),
            scheduler=SchedulerIntent(8, 2048, False, True, True),
            speculative=SpeculativeIntent("ngram", 2),
            seed=1,
            device_utilization=0.9,
            server=ServerIntent(shutdown_timeout=10, shutdown_timeout_explicit=True),
        ),
        base(row, graph_mode="eager", model=ModelIntent(source="e", task="embed")),
        base(row, model=ModelIntent(source="r", task="rerank"), scheduler=SchedulerIntent(prefix_caching=True)),
        base(row, parallel=ParallelIntent(tensor=4, data=4, expert=True), nodes=two, devices_per_node=8),
    ]
    if row.backend == "npu":
        out += [
            base(
                row,
                model=ModelIntent(source="deepseek", arch="mla"),
                parallel=ParallelIntent(tensor=4, data=4, expert=True),
                nodes=two,
                devices_per_node=8,
                eplb=EplbIntent(mode="dynamic", redundant_experts=16),
                speculative=SpeculativeIntent("mtp", 1),
            ),
            base(row, parallel=ParallelIntent(tensor=8, pipeline=2, executor="ray"), nodes=two, devices_per_node=8),
            base(row, hardware="300i-duo", graph_mode="full-decode-only"),
        ]
    else:
        out.append(base(row, parallel=ParallelIntent(tensor=16), nodes=two, devices_per_node=8))
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
                message = accepted.env_problem(name)
                if message is not None:
                    assert any(message in u for u in result.unsupported), (row.version, name)
        assert result.provenance["decision:flag-check"].startswith(f"vLLM {accepted.parser.built_from} ")


# `matrix --explain` and `plan` give one answer on how a quantization is launched: the explainer asks the
# adapters' quantization era, and the plan's argv carries exactly what it says (every release × quantization).
QUANTS = [q for q in MATRIX.quantizations if q.method not in ("none", "auto")]


@pytest.mark.parametrize("row", [r for r in ROWS if r.backend == "npu"], ids=lambda r: r.version)
def test_explain_and_plan_launch_every_quantization_alike(row: Any) -> None:
    for qt in QUANTS:
        model = ModelIntent(source="m", quantization=qt.id, quant_method=qt.method)
        result = plan_commands(base(row, model=model))
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
