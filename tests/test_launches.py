"""What upstream runs on hardware (`ascendctl.facts.launches`, data from scripts/extract_launches.py): the whole
checked-in data is read and checked, the index the everyday commands read is its current image, and the verified
marks it yields reach `matrix --explain`, `matrix models` and `plan --why`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ascendctl.cli import app
from ascendctl.facts import launches
from ascendctl.facts.matrix import load_matrix
from ascendctl.facts.matrix.release_pins import releases
from ascendctl_engine.argv_items import parse_args
from ascendctl_engine.versions import parse as parse_version

REPO = Path(__file__).resolve().parents[1]
KIMI_FILE = "tests/e2e/nightly/single_node/models/configs/Kimi-K2.5.yaml"
runner = CliRunner()


@pytest.fixture(scope="module")
def data() -> dict[str, object]:
    return launches.read_data()


def test_the_index_is_the_current_image_of_the_data() -> None:
    text = (launches.data_dir() / launches.DATA_FILE).read_text(encoding="utf-8")
    current = (launches.data_dir() / launches.INDEX_FILE).read_text(encoding="utf-8")
    assert launches.index_text(text, load_matrix()) == current, f"stale: run {launches.COMMAND}"


def test_the_whole_data_holds_together(data: dict[str, object]) -> None:
    assert data["schema"] == 1
    contents, rows, tags = data["contents"], data["launches"], data["tags"]
    assert isinstance(contents, dict) and isinstance(rows, list) and isinstance(tags, dict)
    hardware = {h.id for h in load_matrix().hardware}
    used = set()
    for row in rows:
        assert row["tag"] in tags, row
        assert row["content"] in contents, row
        used.add(row["content"])
        assert row["hardware"] in hardware, row
        assert row["npus_per_node"] >= 1 and row["nodes"] >= 1, row
        assert row["kind"] in ("single-node", "multi-node", "accuracy"), row
        assert row["line"] >= 1 and row["file"].startswith("tests/"), row
        assert row["listed_at"], row  # evidence only where a CI list names it
    assert used == set(contents), "every content is some launch's (de-duplicated, none orphaned)"
    order = [parse_version(r["tag"]) for r in rows]
    assert order == sorted(order)
    # a launch upstream could not load is recorded with its reason and is no launch
    for tag, said in tags.items():
        for bad in said["not_loadable"]:
            assert bad["reason"], (tag, bad)
            assert not any(
                r["tag"] == tag and r["file"] == bad["file"] and r["case"] == bad.get("case") for r in rows
            ), (tag, bad)
        assert said["counts"]["launches"] == sum(1 for r in rows if r["tag"] == tag), tag
    # every content's argv reads as vLLM's parser reads it
    for content in contents.values():
        for node in content["nodes"]:
            argv = node.get("argv") or []
            if argv[:2] == ["vllm", "serve"]:
                parse_args(launches.serve_options(argv))


def test_the_data_stays_within_its_size_budget() -> None:
    size = (launches.data_dir() / launches.DATA_FILE).stat().st_size
    index = (launches.data_dir() / launches.INDEX_FILE).stat().st_size
    assert size < 4_000_000 and index < 1_000_000, (size, index)


def test_the_data_covers_the_newest_release_lines(data: dict[str, object]) -> None:
    tags = data["tags"]
    assert isinstance(tags, dict)
    for tag in ("v0.23.0", "v0.25.1rc1"):
        assert tags[tag]["counts"]["launches"] > 20, tag
        assert tags[tag]["counts"]["multi_node"] > 0, tag


def test_the_kimi_w4a8_launch_is_verified_at_v0_25_1rc1() -> None:
    found = launches.verified("kimi-k2.5", "w4a8_dynamic", "a3", tag="v0.25.1rc1")
    kimi = [launch for launch in found if launch.file == KIMI_FILE]
    assert kimi and kimi[0].npus == 16 and kimi[0].nodes == 1
    assert "ep" in kimi[0].features and "speculative" in kimi[0].features
    result = runner.invoke(
        app, ["matrix", "--explain", "kimi-k2.5", "--quant", "w4a8_dynamic", "--hardware", "a3", "-r", "v0.25.1rc1"]
    )
    assert f"verified at v0.25.1rc1: {KIMI_FILE}:{kimi[0].line}, a3 × 16 NPUs" in result.output, result.output


def test_evidence_of_another_tag_is_named_with_its_tag() -> None:
    every = launches.verified("kimi-k2.5", "w4a8_dynamic", "a3")
    tags = {launch.tag for launch in every}
    rows = [r.version for r in releases(load_matrix(), "npu")]
    without = next(t for t in reversed(rows) if t not in tags and parse_version(t) < parse_version("v0.25.1rc1"))
    own, others = launches.evidence_for("kimi-k2.5", "w4a8_dynamic", "a3", without)
    assert not own and others
    assert others[0].mark(without).startswith(f"verified at {others[0].tag} (another release than {without}): ")


def test_plan_why_and_matrix_models_show_the_evidence() -> None:
    result = runner.invoke(app, ["plan", str(REPO / "profiles" / "kimi-k2-5-w4a8-eagle3-a3.yaml"), "--why"])
    line = next((x for x in result.output.splitlines() if x.strip().startswith("decision:verified:")), "")
    assert "verified at" in line or "no launch at" in line, result.output[-2000:]
    models = runner.invoke(app, ["matrix", "models", "--model", "kimi-k2.5", "--json"])
    row = json.loads(models.stdout)[0]
    assert any(v["hardware"] == "a3" and v["source"].startswith(v["tag"] + ":tests/") for v in row["verified"])


def test_quantization_and_features_are_read_from_the_launch() -> None:
    items = parse_args(["--quantization", "ascend", "--enable-expert-parallel", "--tensor-parallel-size", "4"])
    assert launches.launch_quant("Eco-Tech/Kimi-K2.5-W4A8", items) == "w4a8_dynamic"
    assert launches.launch_quant("vllm-ascend/Qwen3-32B-Int8", items) == "auto"  # ModelSlim, type not named
    assert launches.launch_quant("Qwen/Qwen3-8B", ()) == "none"
    graph = parse_args(["--compilation-config", '{"cudagraph_mode": "FULL_DECODE_ONLY"}', "--kv-transfer-config", "{}"])
    assert launches.launch_features([*items, *graph]) == ("ep", "full-decode-only-graph", "pd", "tp")
