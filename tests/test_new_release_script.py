"""scripts/new_release.py: a new release is built from its own extract (here: a fake extractor that writes one
for a made-up tag), never copied from the previous row; a dry run leaves the tree alone."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[1]
UPSTREAM = REPO / "ascendctl" / "facts" / "data" / "upstream"
KEYS = REPO / "engine" / "ascendctl_engine" / "data" / "ascend_keys"


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("new_release", REPO / "scripts" / "new_release.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fake_extractor(cann: str, readme_cann: str | None = None, *, unbuilt: bool = False) -> object:
    """Writes an extract for v0.26.0rc1: v0.25.1rc1's files re-tagged, with its CANN pins replaced (and, if given,
    a README line stating another CANN). Its workflows build every root Dockerfile unless `unbuilt` keeps
    v0.25.1rc1's Dockerfile.a5 that no workflow builds."""

    def run(tag: str, upstream_out: Path, keys_out: Path) -> None:
        text = (UPSTREAM / "v0.25.1rc1.json").read_text().replace("v0.25.1rc1", tag)
        data = json.loads(text)
        if not unbuilt:
            data["dockerfiles_unbuilt"] = {}
        for pin in data["pins"]["cann"]:
            pin["value"] = cann
        if readme_cann:
            data["pins"]["cann"].append({"value": readme_cann, "source": f"{tag}:README.md:60"})
        (upstream_out / f"{tag}.json").write_text(json.dumps(data))
        (keys_out / f"{tag}.json").write_text((KEYS / "v0.25.1rc1.json").read_text().replace("v0.25.1rc1", tag))

    return run


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path, Path]:
    matrix = tmp_path / "matrix.yaml"
    shutil.copy(REPO / "ascendctl" / "facts" / "data" / "matrix.yaml", matrix)
    shutil.copytree(UPSTREAM, tmp_path / "upstream")
    shutil.copytree(KEYS, tmp_path / "keys")
    return matrix, tmp_path / "upstream", tmp_path / "keys"


def test_the_row_comes_from_the_new_tags_extract(tree: tuple[Path, Path, Path]) -> None:
    matrix, up, keys = tree
    lines: list[str] = []
    code = load_script().add_release(
        "v0.26.0rc1", fake_extractor("9.0.1"), matrix=matrix, upstream_dir=up, keys_dir=keys, write=True,
        out=lines.append,
    )  # fmt: skip
    assert code == 0, lines
    assert lines[0] == "v0.26.0rc1 (rc)"
    assert any(line.startswith("  cann: 9.0.1  [v0.26.0rc1:Dockerfile:") for line in lines), lines
    assert "  - version: v0.26.0rc1\n    backend: npu\n" in matrix.read_text()
    assert (up / "v0.26.0rc1.json").exists() and (keys / "v0.26.0rc1.json").exists()


def test_a_disagreement_is_reported_for_a_decision(tree: tuple[Path, Path, Path]) -> None:
    matrix, up, keys = tree
    lines: list[str] = []
    code = load_script().add_release(
        "v0.26.0rc1", fake_extractor("9.1.0", "9.0.1"), matrix=matrix, upstream_dir=up, keys_dir=keys, write=False,
        out=lines.append,
    )  # fmt: skip
    assert code == 1
    assert any(line.startswith("decide: v0.26.0rc1: upstream disagrees on `cann`") for line in lines), lines


def test_a_dockerfile_no_workflow_builds_asks_for_a_decision(tree: tuple[Path, Path, Path]) -> None:
    matrix, up, keys = tree
    lines: list[str] = []
    code = load_script().add_release(
        "v0.26.0rc1", fake_extractor("9.0.1", unbuilt=True), matrix=matrix, upstream_dir=up, keys_dir=keys,
        write=False, out=lines.append,
    )  # fmt: skip
    assert code == 1
    assert any("Dockerfile.a5:1 is the Dockerfile of image '950'" in line for line in lines), lines


def test_dry_run_leaves_the_tree_alone(tree: tuple[Path, Path, Path]) -> None:
    matrix, up, keys = tree
    before = matrix.read_text()
    load_script().add_release(
        "v0.26.0rc1", fake_extractor("9.0.1"), matrix=matrix, upstream_dir=up, keys_dir=keys, out=lambda _: None
    )
    assert matrix.read_text() == before
    assert not (up / "v0.26.0rc1.json").exists() and not (keys / "v0.26.0rc1.json").exists()
