"""Profile schema v1: what an operator writes to describe one deployment.

A profile states *intent* (graph mode, parallel layout, EPLB, scheduler limits). It holds no defaults that
depend on the host or the release: the planner turns intent into the flags of a given release. Its sections
are declared once, in `ascendctl_engine.sections` (the era adapters read them as they are); this module
composes them into the document.
"""

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field

from ascendctl.core.findings import is_id
from ascendctl_engine.sections.base import StrictModel
from ascendctl_engine.sections.deployment import (
    EngineSpec,
    ModelSpec,
    NetworkSpec,
    RuntimeSpec,
    ServerSpec,
    TargetSpec,
)
from ascendctl_engine.sections.disaggregation import DisaggregationSpec
from ascendctl_engine.sections.fields import DnsLabel, NonEmptyLine, SingleLine
from ascendctl_engine.sections.serving import ServingSpec

API_VERSION = "ascendctl/v1"


def _finding_id(value: str) -> str:
    if not is_id(value):
        raise ValueError(f"{value!r} is not a finding id (e.g. plan.matrix.combination.quant-w4a8-and-eplb)")
    return value


FindingId = Annotated[str, AfterValidator(_finding_id)]


class Metadata(StrictModel):
    name: Annotated[
        DnsLabel,
        Field(
            description=(
                "Deployment name: used for state, logs and rendered object names (an RFC 1035 label: lower-case "
                "letters, digits and `-`, a letter first, at most 63 characters — what a Kubernetes Service needs)."
            ),
        ),
    ]
    description: Annotated[SingleLine, Field(description="One line of free text: what this deployment is for.")] = ""


class Profile(StrictModel):
    apiVersion: Annotated[Literal["ascendctl/v1"], Field(description="Schema version; must be `ascendctl/v1`.")]
    kind: Annotated[Literal["Profile"], Field(description="Document kind; must be `Profile`.")]
    metadata: Annotated[Metadata, Field(description="Name and description of the deployment.")]
    model: Annotated[ModelSpec, Field(description="The model to serve.")]
    target: Annotated[TargetSpec, Field(description="Where it runs: backend, hardware family, devices, nodes.")]
    release: Annotated[
        NonEmptyLine,
        Field(
            description=(
                "Engine release to pin: a vllm-ascend version (e.g. `v0.13.0`) for npu, the engine row's "
                "version for cpu/cuda, or `latest-stable` (the newest final release of the backend)."
            ),
        ),
    ] = "latest-stable"
    engine: Annotated[EngineSpec, Field(description="Engine intent, translated per release by the planner.")] = (
        EngineSpec()
    )
    network: Annotated[NetworkSpec, Field(description="Multi-node networking.")] = NetworkSpec()
    server: Annotated[ServerSpec, Field(description="The OpenAI-compatible API server.")] = ServerSpec()
    serving: Annotated[
        ServingSpec,
        Field(
            description=(
                "What the API server does with requests: tool calling, reasoning, chat template, multimodal "
                "limits, LoRA, context parallelism, structured outputs (spelled and checked per release)."
            )
        ),
    ] = ServingSpec()
    runtime: Annotated[RuntimeSpec, Field(description="Process environment, readiness and restarts.")] = RuntimeSpec()
    disaggregation: Annotated[
        DisaggregationSpec | None,
        Field(
            description=(
                "Prefill/decode disaggregation: prefill and decode instance groups with KV transfer between them and "
                "a router in front; unset: one instance serves both."
            )
        ),
    ] = None
    allow: Annotated[
        list[FindingId],
        Field(
            description=(
                "Failing plan findings to accept as warnings, by id: one constraint "
                "(`plan.hardware.devices-per-node`, `plan.refused.parallel`) or a rule with all of its constraints "
                "(`plan.refused`). Only `placement` and `known-failure` failures are accepted; an `engine-start` one "
                "(`plan.rejected.*`, `plan.tp.heads-divisible`) never is: the release would not start "
                "(docs/refusal-policy.md). An entry that covers no failing finding is reported as no longer needed."
            )
        ),
    ] = []
    allow_unsupported: Annotated[
        bool,
        Field(
            description=(
                "Deprecated: accept every failing plan finding that can be accepted; the plan prints the ids it "
                "covered, to write in `allow` instead."
            )
        ),
    ] = False


def profile_json_schema() -> dict[str, Any]:
    schema = Profile.model_json_schema()
    schema["$id"] = "https://ascendctl.dev/schema/profile-v1.json"
    schema["title"] = "ascendctl Profile (ascendctl/v1)"
    return schema
