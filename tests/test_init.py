"""`ascendctl init`: from "this model on this hardware" to a verified, fit-checked profile, on upstream's launch data
(`ascendctl/facts/data/launches/`) and the published model shapes. Nothing here runs on an NPU: every profile is
planned and fit-checked, and the CPU one is served by tests/e2e/test_demo_and_dp_e2e.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from ascendctl.cli import app
from ascendctl.core.errors import UserInputError
from ascendctl.facts.launches import launch_index
from ascendctl.init.build import CPU_DEFAULT, InitRequest, init_profile
from ascendctl.init.rank import Ask, rank, size_of, variants
from ascendctl_engine.host.facts import HostFacts, NpuDevice, NpuSmiInfo

runner = CliRunner()
REPO = Path(__file__).resolve().parents[1]
QWEN32_W8A8 = "vllm-ascend/Qwen3-32B-W8A8"


def init(model: str, **asked: object) -> object:
    return init_profile(InitRequest(model, **asked), None)  # type: ignore[arg-type]


# --- ranking ------------------------------------------------------------------------------------------------


def test_sizes_are_read_from_names() -> None:
    assert size_of("Qwen/Qwen3-235B-A22B") == 235 and size_of("vllm-ascend/Qwen3-32B-W8A8") == 32
    assert size_of("deepseek-ai/DeepSeek-V3") is None


def test_the_same_model_quantization_hardware_and_devices_rank_first() -> None:
    ask = Ask(QWEN32_W8A8, "qwen3-dense", "a2", 4, 1, "v0.23.0")
    ranked = rank(ask, launch_index())
    best = ranked[0].launch
    assert (best.model, best.quant, best.hardware, best.npus, best.tag) == (QWEN32_W8A8, "w8a8", "a2", 4, "v0.23.0")
    # variants: the launches ranked alike, named by upstream's test case
    assert {c.variant for c in variants(ranked)} == {"Qwen3-32B-W8A8-aclgraph-a2", "Qwen3-32B-W8A8-single-a2"}
    # the float checkpoint of the same model ranks after every W8A8 launch on A2
    float_at = next(i for i, c in enumerate(ranked) if c.launch.quant == "none")
    assert all(c.launch.quant == "w8a8" for c in ranked[:float_at])


def test_a_model_without_its_own_launch_takes_its_family_and_size() -> None:
    # no launch serves Qwen3-30B-A3B-Instruct-2507 by that name; the family's 30B launches do (within ±25 %)
    ask = Ask("Qwen/Qwen3-30B-A3B-Instruct-2507", "qwen3-30b-a3b", "a2", 2, 1, "v0.25.1rc1")
    ranked = rank(ask, launch_index())
    assert ranked and "the same family" in ranked[0].why and size_of(ranked[0].launch.model) == 30
    # a family launch of another size is no candidate: Qwen3-8B for a 32B model
    assert all(size_of(c.launch.model) != 8 for c in rank(Ask("Qwen/Qwen3-32B", "qwen3-dense", "a2", 4, 1,
                                                                "v0.25.1rc1"), launch_index()))  # fmt: skip


# --- the profile ----------------------------------------------------------------------------------------------


def test_init_starts_from_the_verified_launch_and_says_where_each_choice_comes_from() -> None:
    result = init(QWEN32_W8A8, hardware="a2", devices=4, release="v0.23.0")
    doc = result.document
    assert result.fits and doc["release"] == "v0.23.0" and doc["target"]["hardware"] == "a2"
    # what upstream's launch sets that a bare profile would not (the example): graphs, batching, memory
    assert doc["engine"]["graph"]["mode"] == "full-decode-only"
    assert doc["engine"]["scheduler"]["max_num_batched_tokens"] == 40960
    assert doc["engine"]["memory"]["device_utilization"] == 0.9
    assert "server" not in doc  # the CI's 0.0.0.0 and test port are not carried: 127.0.0.1:8000
    header = "\n".join(result.header)
    assert "verified at v0.23.0: tests/e2e/nightly/single_node/models/configs/Qwen3-32B-Int8-A2.yaml" in header
    assert "other variants (--variant): Qwen3-32B-W8A8-single-a2" in header
    assert "SERVER_PORT" in header and "SERVER_PORT" not in str(doc)
    chosen = init(QWEN32_W8A8, hardware="a2", devices=4, release="v0.23.0", variant="Qwen3-32B-W8A8-single-a2")
    assert chosen.document["engine"]["graph"]["mode"] != "full-decode-only"
    with pytest.raises(UserInputError, match="no such variant"):
        init(QWEN32_W8A8, hardware="a2", devices=4, release="v0.23.0", variant="nope")


@pytest.mark.parametrize(("devices", "tensor", "data"), [(2, 2, 1), (8, 4, 2)])
def test_fewer_or_more_devices_adapt_the_layout_with_the_fit(devices: int, tensor: int, data: int) -> None:
    result = init(QWEN32_W8A8, hardware="a2", devices=devices, release="v0.23.0")
    parallel = result.document["engine"]["parallel"]
    assert (parallel["tensor"], parallel.get("data", 1)) == (tensor, data)
    assert result.fits and result.trial.plan.fit is not None  # planned and fit-checked
    assert "fits (the KV cache holds" in result.header[-1]


def test_the_nearest_release_with_a_launch_is_named() -> None:
    result = init("Qwen/Qwen3-32B", hardware="a3", release="v0.25.1rc1")
    assert result.document["release"] == "v0.25.1rc1"
    assert any("v0.25.1rc1 has no launch of this model; the nearest tag that has one" in h for h in result.header)


def test_with_no_launch_the_profile_is_derived_and_says_nothing_verified_backs_it() -> None:
    derived = init("mistralai/Mistral-7B-Instruct-v0.3", hardware="a2", devices=1, release="v0.25.1rc1")
    assert any("nothing verified backs it" in h for h in derived.header)
    assert derived.document["engine"]["graph"]["mode"] == "auto" and derived.fits  # unestimated: said, not refused


def test_when_nothing_fits_the_alternatives_are_planned_and_fit_checked() -> None:
    result = init("Qwen/Qwen3-235B-A22B", hardware="a2", devices=4, release="v0.25.1rc1")
    assert not result.fits and "does not fit" in result.header[-1]
    names = [a.name for a in result.alternatives]
    assert any("w8a8 checkpoint vllm-ascend/Qwen3-235B-A22B-W8A8" in n for n in names), names
    assert any(n.startswith("2 nodes") for n in names), names
    for alt in result.alternatives:
        assert alt.trial.fits and alt.command.startswith("ascendctl init ")
    # the command is the one that gives the fitting profile
    command = result.alternatives[0].command.split()[2:]
    again = runner.invoke(app, ["init", *command, "--json", "-o", "/dev/null"])
    assert json.loads(again.stdout)["fits"] is True


def test_cli_exit_codes_and_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    args = ["init", QWEN32_W8A8, "--hardware", "a2", "--devices", "4", "--release", "v0.23.0"]
    first = runner.invoke(app, args)
    assert first.exit_code == 0 and (tmp_path / "qwen3-32b-w8a8.yaml").exists()
    again = runner.invoke(app, args)  # never over an existing file unless -o names it
    assert again.exit_code == 2 and "exists" in again.output
    assert runner.invoke(app, [*args, "-o", "qwen3-32b-w8a8.yaml"]).exit_code == 0
    text = (tmp_path / "qwen3-32b-w8a8.yaml").read_text()
    assert text.startswith("# hardware a2: --hardware\n") and yaml.safe_load(text)["kind"] == "Profile"
    assert runner.invoke(app, ["plan", "qwen3-32b-w8a8.yaml"]).exit_code == 0
    none = runner.invoke(app, ["init", "Qwen/Qwen3-235B-A22B", "--hardware", "a2", "--devices", "4"])
    assert none.exit_code == 1 and "nothing fits" in none.output and not (tmp_path / "qwen3-235b-a22b.yaml").exists()
    listed = runner.invoke(app, [*args, "--list"])
    assert listed.exit_code == 0 and "Qwen3-32B-W8A8-single-a2: TP4 × DP1" in listed.output


def test_an_npu_hosts_facts_say_the_hardware_and_devices() -> None:
    # a fake A2 host (the hardware edge): its family and its 4 NPUs, as `check` reads them from npu-smi
    chips = tuple(NpuDevice(id=i, npu=i, chip=0, name="910B3", health="OK") for i in range(4))
    host = HostFacts(backend="npu", family="a2", npu=NpuSmiInfo(recognized=True, layout="a2", devices=chips))
    result = init_profile(InitRequest(QWEN32_W8A8, release="v0.23.0"), host)
    assert result.document["target"]["hardware"] == "a2" and result.document["target"]["devices_per_node"] == 4
    assert result.header[0] == "hardware a2 × 4 devices: this host's facts"


def test_on_cpu_the_engine_settings_are_the_embedded_defaults() -> None:
    result = init_profile(InitRequest("prepared:smollm2-135m-instruct"), HostFacts(backend="cpu"))
    demo = yaml.safe_load((REPO / "profiles" / "cpu-demo.yaml").read_text())
    assert result.document["engine"] == demo["engine"] == CPU_DEFAULT["engine"]
    assert {k: result.document["model"][k] for k in ("max_model_len", "dtype")} == {
        k: demo["model"][k] for k in ("max_model_len", "dtype")
    }
    assert result.document["target"] == {"backend": "cpu"} and result.fits


def test_on_cpu_the_engine_command_is_the_embedded_defaults_but_its_served_name(tmp_path: Path) -> None:
    # what tests/e2e/test_demo_and_dp_e2e.py serves in place of profiles/cpu-demo.yaml
    from ascendctl.plan.planner import plan_profile
    from ascendctl.schema.loader import load_profile

    result = init_profile(InitRequest("prepared:smollm2-135m-instruct"), HostFacts(backend="cpu"))
    path = tmp_path / "init.yaml"
    path.write_text(result.yaml_text())

    def argv(profile: Path) -> list[str]:
        command = plan_profile(load_profile(profile)).command_for(0)
        words = list(command.argv)
        if "--served-model-name" in words:
            at = words.index("--served-model-name")
            del words[at : at + 2]
        return words

    assert argv(path) == argv(REPO / "profiles" / "cpu-demo.yaml")
