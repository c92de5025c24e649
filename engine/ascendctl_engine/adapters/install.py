"""The `install` topic of the era registry: per range of vllm-ascend releases, the extra package indexes and
packages an engine environment needs. Data only (the eras emit no flags); `ascendctl_engine.install_plan` reads
the chosen era's traits, and its `source` says why those indexes.

Sources (vllm-project/vllm-ascend): `docs/source/community/versioning_policy.md` (release rows), each tag's
`requirements.txt` (pins) and `docs/source/installation.md` (package indexes), named per era below.
"""

from __future__ import annotations

from typing import Any

from ascendctl_engine.adapters.eras import era, nothing_to_plan

# Huawei's package indexes for Ascend wheels (torch-npu dev builds, vllm-ascend, triton-ascend).
# Source: vllm-project/vllm-ascend main `docs/source/installation.md` (pip install step and triton-ascend
# step), `v0.9.1-dev` installation docs (the plain index).
HUAWEI_INDEX = "https://mirrors.huaweicloud.com/ascend/repos/pypi"
HUAWEI_VARIANT_INDEX = "https://mirrors.huaweicloud.com/ascend/repos/pypi/variant"

# (name, vllm-ascend range, summary, source = why those indexes, traits)
_ERAS: tuple[tuple[str, str, str, str, dict[str, Any]], ...] = (
    (
        "pypi torch-npu",
        ">=0.7.0,<0.7.3",
        "no extra index",
        "v0.7.1rc1…v0.7.3rc2 pin PyPI torch-npu (dev builds add the Huawei index, see --pre rule)",
        {"indexes": ()},
    ),
    (
        "mindie-turbo",
        ">=0.7.3,<0.8.0",
        "no extra index; `mindie_turbo==2.0rc1` after vllm-ascend",
        "v0.7.3:requirements.txt pins torch-npu==2.5.1, a PyPI release",
        {
            "indexes": (),
            "extra": ("mindie_turbo==2.0rc1",),
            "extra_source": (
                "vllm-ascend v0.7.3:docs/source/installation.md (`pip install mindie_turbo==2.0rc1`) and the "
                "v0.7.3 versioning policy (MindIE Turbo 2.0rc1 column); v0.9.1 release notes: not needed after"
            ),
        },
    ),
    (
        "pypi torch-npu 2.5.1",
        ">=0.8.0,<0.9.1rc1",
        "no extra index",
        "v0.8.4rc2…v0.9.0rc2:requirements.txt pin torch-npu==2.5.1, a PyPI release",
        {"indexes": ()},
    ),
    (
        "huawei index",
        ">=0.9.1rc1,<0.23.0rc1",
        "the Huawei index (torch-npu dev builds)",
        "the v0.9.1-dev…v0.11.0-dev installation docs add the Huawei index, where torch-npu builds such as "
        "2.5.1.post1.dev20250528 (v0.9.1rc1:requirements.txt) are published",
        {"indexes": (HUAWEI_INDEX,)},
    ),
    (
        "huawei variant index",
        ">=0.23.0rc1",
        "the Huawei variant index, then the Huawei index",
        "v0.23.0 docs/source/installation.md: `--extra-index-url …/pypi/variant` and `…/pypi`",
        {"indexes": (HUAWEI_VARIANT_INDEX, HUAWEI_INDEX)},
    ),
)


for _name, _spec, _summary, _source, _traits in _ERAS:
    era(
        "install",
        _name,
        axis="vllm_ascend",
        spec=_spec,
        backends={"npu"},
        summary=_summary,
        source=_source,
        traits=_traits,
    )(nothing_to_plan)  # fmt: skip  (data for the install plan)
