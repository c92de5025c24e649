"""The `serving` section of a profile: what the OpenAI-compatible server does with requests — tool calling,
reasoning output, the chat template, multimodal limits, LoRA adapters, context parallelism and the
structured-output backend.

These are the options operators set daily and used to pass through `engine.extra_args`. Each is typed here and
spelled per release by `ascendctl_engine.adapters.serving`, which checks every flag and choice against the
real-parser snapshot of the target vLLM. Values are checked at this boundary for what they are: names are
identifiers, paths are one line, and nothing can be read by vLLM's parser as a flag or by a shell as syntax.
"""

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, field_validator

from ascendctl_engine.sections.base import StrictModel
from ascendctl_engine.sections.fields import ARGV_WORD, INT32_MAX, MAX_PARALLEL, ArgvLine, NonEmptyLine


def _word(pattern: str, what: str) -> AfterValidator:
    """A name checked against `pattern`, refused with a message that says what the name may hold (the value is
    not echoed: it may be anything pasted into the wrong key)."""
    compiled = re.compile(pattern)

    def check(value: str) -> str:
        if not compiled.fullmatch(value):
            raise ValueError(f"must be {what}")
        return value

    return AfterValidator(check)


# Parser names as vLLM registers them (`hermes`, `llama3_json`, `granite-20b-fc`, `GptOss`): one word.
ParserName = Annotated[
    str,
    ARGV_WORD,
    _word(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}", "a parser name: letters, digits, `_`, `-`, `.` (one word)"),
]
# Modalities are the keys of vLLM's multimodal registry (`image`, `video`, `audio`, `vision_chunk`).
ModalityName = Annotated[
    str, _word(r"[a-z][a-z0-9_]{0,63}", "a modality name such as `image` or `video` (lower-case, digits, `_`)")
]
# A LoRA name is what clients send as `model`: an identifier, so `name=path` stays one unambiguous word.
LoraName = Annotated[
    str,
    ARGV_WORD,  # `name=path` starts with it
    _word(r"[A-Za-z_][A-Za-z0-9_.-]{0,127}", "an identifier: letters, digits, `_`, `-`, `.`, a letter or `_` first"),
]
StructuredOutputsBackend = Literal["auto", "xgrammar", "guidance", "outlines", "lm-format-enforcer"]
# vLLM's --max-lora-rank is an int32; a rank or adapter count above a few thousand is a typo.
MAX_LORA = 65536


def _template_path(value: str) -> str:
    # vLLM's load_chat_template reads a value holding `{` or `}` that is not an existing file as the template
    # text itself; only a path is accepted here, so a template never travels inside an argv or a script line.
    if "{" in value or "}" in value:
        raise ValueError(
            "is a path to a chat template file; inline templates are not accepted (save the template to a file)"
        )
    return value


TemplatePath = Annotated[ArgvLine, AfterValidator(_template_path)]
# A path holding `=` or `,` is passed as a JSON item (vLLM reads `name=path` only without `,`, and splits at `=`).
AdapterPath = ArgvLine


class LoraAdapter(StrictModel):
    name: Annotated[
        LoraName,
        Field(
            description=(
                "Name clients request the adapter by (the OpenAI `model` field): letters, digits, `_`, `-`, `.`, "
                "a letter or `_` first."
            )
        ),
    ]
    path: Annotated[
        AdapterPath,
        Field(description="Directory (or hub id) of the LoRA adapter weights, one line."),
    ]
    # vLLM keeps it only when it names a served model (0.25.1:vllm/entrypoints/openai/models/serving.py:191) and
    # lists it as the adapter's `parent` in /v1/models (…/serving.py:157).
    base_model_name: Annotated[
        NonEmptyLine | None,
        Field(
            description=(
                "Served model name `/v1/models` lists as the adapter's parent (`base_model_name` of the JSON "
                "item; vLLM keeps it only when it is one of the served model names); unset: the first served name."
            )
        ),
    ] = None


class LoraSpec(StrictModel):
    adapters: Annotated[
        list[LoraAdapter],
        Field(
            max_length=MAX_LORA,
            description=(
                "Adapters loaded at start (`--lora-modules name=path ...`; an adapter with base_model_name, or a "
                'path holding `=` or `,`, as a compact JSON item `{"name":…,"path":…}`); empty: LoRA is on and '
                "adapters are loaded later through the API."
            ),
        ),
    ] = []
    max_rank: Annotated[
        int | None,
        Field(
            ge=1,
            le=MAX_LORA,
            description=(
                "Highest adapter rank served (`--max-lora-rank`); recent vLLM takes only its listed ranks "
                "(1, 8, 16, 32, 64, 128, 256, 320, 512), checked per release."
            ),
        ),
    ] = None
    max_loras: Annotated[
        int | None,
        Field(ge=1, le=MAX_LORA, description="Adapters served in one batch (`--max-loras`)."),
    ] = None

    @field_validator("adapters")
    @classmethod
    def _names_are_unique(cls, value: list[LoraAdapter]) -> list[LoraAdapter]:
        seen: set[str] = set()
        for adapter in value:
            if adapter.name in seen:
                raise ValueError(f"adapter name {adapter.name!r} is given twice")
            seen.add(adapter.name)
        return value


class ServingSpec(StrictModel):
    tool_call_parser: Annotated[
        ParserName | None,
        Field(
            description=(
                "Tool-call parser for the model's output format (`--tool-call-parser`, e.g. `hermes`, "
                "`qwen3_coder`); checked against the release's parser choices where its snapshot lists them."
            )
        ),
    ] = None
    auto_tool_choice: Annotated[
        bool,
        Field(
            description=(
                "Let the model decide when to call tools (`--enable-auto-tool-choice`); needs tool_call_parser."
            )
        ),
    ] = False
    reasoning_parser: Annotated[
        ParserName | None,
        Field(
            description=(
                "Reasoning parser that separates the model's thinking from its answer (`--reasoning-parser`, "
                "plus `--enable-reasoning` where the release needs it)."
            )
        ),
    ] = None
    chat_template: Annotated[
        TemplatePath | None,
        Field(
            description=(
                "Path of a Jinja chat template file (`--chat-template`); a path only, never the template text. "
                "A relative path is resolved by vLLM against the engine's working directory."
            ),
        ),
    ] = None
    limit_mm_per_prompt: Annotated[
        dict[ModalityName, Annotated[int, Field(ge=0, le=INT32_MAX)]],
        Field(
            description=(
                "Most items of each modality in one prompt (`--limit-mm-per-prompt` JSON), e.g. "
                "`{image: 1, video: 0}`; 0 turns a modality off and saves the memory reserved for it."
            )
        ),
    ] = {}
    mm_processor_cache_gb: Annotated[
        float | None,
        Field(
            ge=0,
            le=1 << 20,
            allow_inf_nan=False,
            description=(
                "Multimodal processor cache size in GiB (`--mm-processor-cache-gb`); 0 turns the cache off "
                "(older vLLM: `--disable-mm-preprocessor-cache`, which can only turn it off)."
            ),
        ),
    ] = None
    lora: Annotated[
        LoraSpec | None,
        Field(description="Serve LoRA adapters (`--enable-lora`); unset: LoRA off."),
    ] = None
    prefill_context_parallel: Annotated[
        int | None,
        Field(
            ge=1,
            le=MAX_PARALLEL,
            description=(
                "Prefill context-parallel size (`--prefill-context-parallel-size`): ranks that split a long "
                "prompt; it multiplies the ranks needed (tensor × pipeline × this × data)."
            ),
        ),
    ] = None
    decode_context_parallel: Annotated[
        int | None,
        Field(
            ge=1,
            le=MAX_PARALLEL,
            description=(
                "Decode context-parallel size (`--decode-context-parallel-size`): splits the KV cache over the "
                "tensor-parallel ranks, so it must divide engine.parallel.tensor."
            ),
        ),
    ] = None
    allowed_local_media_path: Annotated[
        ArgvLine | None,
        Field(
            description=(
                "A directory the API may read images and videos from by `file://` URL "
                "(`--allowed-local-media-path`); unset: no local media (vLLM's default)."
            )
        ),
    ] = None
    mm_encoder_tp_mode: Annotated[
        Literal["weights", "data"] | None,
        Field(
            description=(
                "How a multimodal encoder uses the tensor-parallel ranks (`--mm-encoder-tp-mode`, vLLM >= 0.10.2): "
                "`weights` shards its weights (vLLM's default), `data` runs it whole on each rank on part of the batch."
            )
        ),
    ] = None
    cp_kv_cache_interleave_size: Annotated[
        int | None,
        Field(
            ge=1,
            le=INT32_MAX,
            description=(
                "Tokens stored together on one context-parallel rank (`--cp-kv-cache-interleave-size`, vLLM >= "
                "0.12.0); vLLM's default 1 interleaves token by token."
            ),
        ),
    ] = None
    structured_outputs_backend: Annotated[
        StructuredOutputsBackend | None,
        Field(
            description=(
                "Backend for JSON-schema / grammar constrained output: `auto`, `xgrammar`, `guidance`, "
                "`outlines`, `lm-format-enforcer` (`--structured-outputs-config` backend; older vLLM: "
                "`--guided-decoding-backend`)."
            )
        ),
    ] = None
