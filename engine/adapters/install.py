"""The `install` topic of the era registry: per range of vllm-ascend releases, the extra package indexes and
packages an engine environment needs. Data only (the eras emit no flags); `ascendctl_engine.install_plan` reads
the chosen era's traits, and its `source` says why those indexes.

Sources: ../shared/reference/vllm-ascend.md §1.1 (versioning policy rows), §1.2 (requirements.txt pins per tag)
and §8.2 (installation docs).
"""

from __future__ import annotations

from ascendctl_engine.adapters.builder import CommandBuilder
from ascendctl_engine.adapters.eras import era
from ascendctl_engine.adapters.intent import EngineIntent

NPU = {"npu"}
# Huawei's package indexes for Ascend wheels (torch-npu dev builds, vllm-ascend, triton-ascend).
# Source: vllm-project/vllm-ascend main `docs/source/installation.md` (pip install step and triton-ascend
# step), `v0.9.1-dev` installation docs (the plain index), see ../shared/reference/vllm-ascend.md §8.2.
HUAWEI_INDEX = "https://mirrors.huaweicloud.com/ascend/repos/pypi"
HUAWEI_VARIANT_INDEX = "https://mirrors.huaweicloud.com/ascend/repos/pypi/variant"


def _nothing_to_plan(intent: EngineIntent, b: CommandBuilder) -> None:
    """Install eras carry data for the install plan; a serving plan takes nothing from them."""


@era(
    "install",
    "pypi torch-npu",
    axis="vllm_ascend",
    spec=">=0.7.0,<0.7.3",
    backends=NPU,
    summary="no extra index",
    source="v0.7.1rc1…v0.7.3rc2 pin PyPI torch-npu (dev builds add the Huawei index, see --pre rule)",
    traits={
        "indexes": (),
    },
)
def install_early(intent: EngineIntent, b: CommandBuilder) -> None:
    _nothing_to_plan(intent, b)


@era(
    "install",
    "mindie-turbo",
    axis="vllm_ascend",
    spec=">=0.7.3,<0.8.0",
    backends=NPU,
    summary="no extra index; `mindie_turbo==2.0rc1` after vllm-ascend",
    source="v0.7.3:requirements.txt pins torch-npu==2.5.1, a PyPI release",
    traits={
        "indexes": (),
        "extra": ("mindie_turbo==2.0rc1",),
        "extra_source": (
            "vllm-ascend v0.7.3:docs/source/installation.md (`pip install mindie_turbo==2.0rc1`) and the "
            "v0.7.3 versioning policy (MindIE Turbo 2.0rc1 column); v0.9.1 release notes: not needed after"
        ),
    },
)
def install_mindie(intent: EngineIntent, b: CommandBuilder) -> None:
    _nothing_to_plan(intent, b)


@era(
    "install",
    "pypi torch-npu 2.5.1",
    axis="vllm_ascend",
    spec=">=0.8.0,<0.9.1rc1",
    backends=NPU,
    summary="no extra index",
    source="v0.8.4rc2…v0.9.0rc2:requirements.txt pin torch-npu==2.5.1, a PyPI release",
    traits={
        "indexes": (),
    },
)
def install_pypi(intent: EngineIntent, b: CommandBuilder) -> None:
    _nothing_to_plan(intent, b)


@era(
    "install",
    "huawei index",
    axis="vllm_ascend",
    spec=">=0.9.1rc1,<0.23.0rc1",
    backends=NPU,
    summary="the Huawei index (torch-npu dev builds)",
    source=(
        "the v0.9.1-dev…v0.11.0-dev installation docs add the Huawei index, where torch-npu builds such as "
        "2.5.1.post1.dev20250528 (v0.9.1rc1:requirements.txt) are published"
    ),
    traits={
        "indexes": (HUAWEI_INDEX,),
    },
)
def install_huawei(intent: EngineIntent, b: CommandBuilder) -> None:
    _nothing_to_plan(intent, b)


@era(
    "install",
    "huawei variant index",
    axis="vllm_ascend",
    spec=">=0.23.0rc1",
    backends=NPU,
    summary="the Huawei variant index, then the Huawei index",
    source="v0.23.0 docs/source/installation.md: `--extra-index-url …/pypi/variant` and `…/pypi`",
    traits={
        "indexes": (HUAWEI_VARIANT_INDEX, HUAWEI_INDEX),
    },
)
def install_variant(intent: EngineIntent, b: CommandBuilder) -> None:
    _nothing_to_plan(intent, b)
