"""Regenerate docs/intent-to-flags.md (the "how intent maps to flags per release" table):

    .venv/bin/python -m ascendctl.outputs.intent_doc > docs/intent-to-flags.md

The columns are support-matrix rows; the content comes from the era adapters (`ascendctl_engine.adapters`).
"""

from __future__ import annotations

import sys

from ascendctl.facts.matrix import load_matrix, release_for_pin
from ascendctl.facts.matrix.launch import hardware_traits
from ascendctl_engine.adapters.docgen import ReleaseColumn, render
from ascendctl_engine.adapters.intent import HardwareTraits

COMMAND = "python -m ascendctl.outputs.intent_doc > docs/intent-to-flags.md"
# Releases shown: one per era boundary that changes the most (vllm-ascend), then the CPU and CUDA rows.
NPU_COLUMNS = ("v0.9.1", "v0.11.0", "v0.13.0", "v0.15.0rc1", "v0.18.0", "v0.23.0", "v0.25.1rc1")


def columns() -> list[ReleaseColumn]:
    matrix = load_matrix()
    traits: dict[str, HardwareTraits] = {h.id: hardware_traits(h) for h in matrix.hardware}
    rows = [release_for_pin(matrix, "npu", v) for v in NPU_COLUMNS]
    rows += [release_for_pin(matrix, "cpu", "latest-stable"), release_for_pin(matrix, "cuda", "latest-stable")]
    return [
        ReleaseColumn(
            label=r.version if r.backend == "npu" else f"{r.backend} {r.version}",
            backend=r.backend,
            vllm=r.vllm,
            vllm_ascend=r.vllm_ascend,
            cann=r.cann,
            traits=traits,
        )
        for r in rows
    ]


def generate() -> str:
    return render(columns(), command=COMMAND)


if __name__ == "__main__":  # pragma: no cover
    sys.stdout.write(generate())
