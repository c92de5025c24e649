"""scripts/new_release.py: the maintainer path for a new release row (run on copies of the data)."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from types import ModuleType

import pytest
import yaml

from ascendctl.matrix import matrix_from_data, release_for_pin


def _load_yaml(text: str) -> object:
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


REPO = Path(__file__).resolve().parents[1]


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("new_release", REPO / "scripts" / "new_release.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def copies(tmp_path: Path) -> tuple[Path, Path]:
    data = tmp_path / "matrix.yaml"
    shutil.copy(REPO / "ascendctl" / "data" / "matrix.yaml", data)
    return data, tmp_path / "compatibility.md"


ARGS = ["--vllm", "0.26.0", "--cann", "9.1.0", "--torch-npu", "2.10.0.post4", "--triton", "3.2.2",
        "--date", "2026-09-01", "--source", "test: main:docs/source/community/versioning_policy.md"]  # fmt: skip


def test_adds_a_validated_row_and_regenerates_docs(
    copies: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    data, docs = copies
    script = load_script()
    assert script.main(["v0.26.0rc1", *ARGS, "--matrix", str(data), "--docs", str(docs), "--write"]) == 0
    m = matrix_from_data(_load_yaml(data.read_text()))
    row = release_for_pin(m, "npu", "latest")
    assert (row.version, row.status, row.vllm, row.cann, row.torch_npu) == (
        "v0.26.0rc1",
        "rc",
        "0.26.0",
        "9.1.0",
        "2.10.0.post4",
    )
    assert row.torch == "2.10.0" and row.python == ">=3.10,<3.13"  # copied from the newest row
    assert row.images["950"] == "quay.io/ascend/vllm-ascend:v0.26.0rc1-a5"
    assert row.base_image == "quay.io/ascend/cann:9.1.0-910b-ubuntu22.04-py3.12"
    assert "| v0.26.0rc1 | rc |" in docs.read_text()
    assert "wrote" in capsys.readouterr().err


def test_dry_run_leaves_files_alone(copies: tuple[Path, Path]) -> None:
    data, docs = copies
    before = data.read_text()
    assert load_script().main(["0.26.0", *ARGS, "--matrix", str(data), "--docs", str(docs)]) == 0
    assert data.read_text() == before and not docs.exists()


def test_rejects_a_duplicate_or_unknown_template(copies: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    data, docs = copies
    script = load_script()
    assert script.main(["v0.23.0", *ARGS, "--matrix", str(data), "--docs", str(docs), "--write"]) == 1
    assert "listed twice" in capsys.readouterr().err
    assert script.main(["v0.26.0rc1", *ARGS, "--like", "v0.99.0", "--matrix", str(data), "--docs", str(docs)]) == 2
