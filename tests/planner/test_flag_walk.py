"""Walk every release row of the support matrix: each adapter topic has exactly one era for it, and no
planned argv carries a flag the row's vLLM rejects (flags not verified for that vLLM come with a warning)."""

from __future__ import annotations

from typing import Any

import pytest

from ascendctl.errors import UserInputError
from ascendctl.matrix import load_matrix, quantization_launch
from ascendctl_engine.adapters import (
    TOPICS,
    EngineIntent,
    EplbIntent,
    ModelIntent,
    NodeIntent,
    ParallelIntent,
    SchedulerIntent,
    ServerIntent,
    SpeculativeIntent,
    eras_for,
    plan_commands,
)
from ascendctl_engine.adapters.eras import REGISTRY
from ascendctl_engine.adapters.flags import canonical_flag, flag_tokens, load_flag_table

MATRIX = load_matrix()
ROWS = MATRIX.releases


def base(row: Any, **kw: Any) -> EngineIntent:
    hardware = kw.pop("hardware", "a2" if row.backend == "npu" else None)
    return EngineIntent(
        backend=row.backend,
        hardware=hardware,
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
def test_no_rejected_flag_is_ever_emitted(row: Any) -> None:
    table = load_flag_table()
    for intent in intents(row):
        result = plan_commands(intent)
        for command in result.commands:
            if command.argv[0] != "vllm":
                continue
            for token in flag_tokens(command.argv):
                state = table.state(token, row.vllm)
                assert state != "no", f"{row.version}: {token} is rejected by vLLM {row.vllm}"
                if state == "unknown":
                    name = canonical_flag(token) or token
                    assert any(name in w for w in result.warnings), (row.version, token, result.warnings)


# The matrix's quantization_launch rules and the quantization eras agree, except where the adapters follow
# the code at the tag: before v0.9.0rc2 `ascend` was not a choice of vLLM's `--quantization` CLI option
# (v0.9.0rc2:vllm_ascend/platform.py adds it "for online serving"), so the adapters plan no flag there.
CLI_CHOICE_ADDED_IN = "v0.9.0rc2"


@pytest.mark.parametrize("row", [r for r in ROWS if r.backend == "npu"], ids=lambda r: r.version)
def test_quantization_eras_agree_with_the_matrix(row: Any) -> None:
    result = plan_commands(base(row, model=ModelIntent(source="m", quantization="w8a8", quant_method="ascend")))
    try:
        launch = quantization_launch(MATRIX, row, "w8a8")
    except UserInputError:  # the matrix has no way to load w8a8 on this row: neither do the adapters
        assert result.unsupported
        return
    emitted = "--quantization" in result.commands[0].argv
    if row.key < load_version(CLI_CHOICE_ADDED_IN):
        assert not emitted, "no --quantization flag before the CLI accepts `ascend`"
        return
    if launch.flag_required:
        assert emitted, f"{row.version}: the matrix requires --quantization ascend"
    if launch.auto_detect and emitted:
        assert "optional" in result.provenance["--quantization"]


def load_version(text: str) -> Any:
    from ascendctl.models.matrix import parse_version

    return parse_version(text)
