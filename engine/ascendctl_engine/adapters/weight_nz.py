"""Weight NZ eras (`engine.weight_nz`): whether vllm-ascend casts weights to the FRACTAL_NZ layout at load.

The mode is one number in every release that reads it — 0 off, 1 quantized weights only (the default), 2 float
(bf16/fp16) weights too (v0.13.0:vllm_ascend/utils.py:134-146; v0.25.1rc1:vllm_ascend/ascend_config.py:217-224 and
vllm_ascend/utils.py:268-279) — and the release spells it:

- v0.11.0rc1 … v0.19.1rc1: the variable `VLLM_ASCEND_ENABLE_NZ` (int, default 1; v0.13.0:vllm_ascend/envs.py:122).
- v0.20.2rc1 on: the `--additional-config` key `weight_nz_mode`, the variable only as a fallback its code says it
  will drop (v0.25.1rc1:vllm_ascend/ascend_config.py:283-294): the plan writes the key.
- Before v0.11.0rc1 no release reads a mode (v0.9.1's `enable_weight_nz_layout` key is another switch, on its own
  branch): the field is not applied, with a warning (the engine would ignore it).

310P casts supported weights to NZ whatever the mode (v0.25.1rc1:vllm_ascend/utils.py:262-264).
"""

from __future__ import annotations

from ascendctl_engine.adapters.builder import CommandBuilder
from ascendctl_engine.adapters.eras import Apply, era
from ascendctl_engine.adapters.intent import EngineIntent

TOPIC = "weight-nz"
FIELD = "engine.weight_nz"
VARIABLE = "VLLM_ASCEND_ENABLE_NZ"
KEY = "weight_nz_mode"
# the field's words → the number the release reads
MODES = {"off": 0, "quantized": 1, "all": 2}
NPU = {"npu"}


@era(
    TOPIC,
    "not read",
    axis="vllm_ascend",
    spec="<0.11.0rc1",
    backends=NPU,
    summary="engine.weight_nz not applied (no release before v0.11.0rc1 reads a mode)",
    source="engine/ascendctl_engine/data/ascend_keys/ (no `VLLM_ASCEND_ENABLE_NZ` or `weight_nz_mode` before "
    "v0.11.0rc1)",
)
def nz_unread(intent: EngineIntent, b: CommandBuilder) -> None:
    if intent.engine.weight_nz is not None:
        b.warn(
            f"{FIELD} {intent.engine.weight_nz} not applied: vllm-ascend {intent.vllm_ascend} reads no NZ mode "
            f"(`{VARIABLE}` from v0.11.0rc1, `{KEY}` from v0.20.2rc1)"
        )


def _spelled(kind: str) -> Apply:
    """Plan the mode as the era spells it: the variable, or the `--additional-config` key."""

    def apply(intent: EngineIntent, b: CommandBuilder) -> None:
        mode = intent.engine.weight_nz
        if mode is None:
            return
        if kind == "env":
            b.env_default(VARIABLE, str(MODES[mode]), why=intent.source(FIELD), origin=FIELD)
        else:
            b.additional_key(KEY, MODES[mode], why=intent.source(FIELD), origin=FIELD)

    return apply


era(
    TOPIC, "variable", axis="vllm_ascend", spec=">=0.11.0rc1,<0.20.2rc1", backends=NPU,
    summary=f"`{VARIABLE}=0|1|2` (off | quantized | all)",
    source="v0.13.0:vllm_ascend/envs.py:122-123, vllm_ascend/utils.py:134-146",
)(_spelled("env"))  # fmt: skip
era(
    TOPIC, "key", axis="vllm_ascend", spec=">=0.20.2rc1", backends=NPU,
    summary=f'`--additional-config {{"{KEY}": 0|1|2}}` (off | quantized | all)',
    source="v0.25.1rc1:vllm_ascend/ascend_config.py:217-224,283-294 (the variable a deprecated fallback)",
)(_spelled("key"))  # fmt: skip
