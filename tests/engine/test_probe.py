"""The probe interface: the real probe (root prefix, commands, ports), gathering facts from captured hosts,
the engine-interpreter probe, and the facts' JSON round trip."""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path

import pytest

from ascendctl_engine.host import (
    CommandResult,
    EnginePython,
    FakeHostProbe,
    HostFacts,
    LocalHostProbe,
    PortRequest,
    choose_engine_python,
    family_from_build_tag,
    gather_host_facts,
    probe_python_env,
    relevant_env,
)
from ascendctl_engine.host.gather import parse_cpu_list, parse_meminfo, parse_nvidia_smi_csv
from ascendctl_engine.host.pyenv import ENGINE_PYTHON_VAR, find_engine_venv_python, parse_probe_output

# ---- LocalHostProbe --------------------------------------------------------------------------------


def test_root_prefix_follows_absolute_links_inside_the_root(tmp_path: Path) -> None:
    root = tmp_path / "host"
    (root / "usr/local/Ascend/ascend-toolkit/8.5.0").mkdir(parents=True)
    (root / "usr/local/Ascend/ascend-toolkit/8.5.0/f.txt").write_text("inside")
    # An absolute link as installers write it: it must resolve under the root, not on this machine.
    (root / "usr/local/Ascend/ascend-toolkit/latest").symlink_to("/usr/local/Ascend/ascend-toolkit/8.5.0")
    (root / "etc").mkdir()
    (root / "etc/escape").symlink_to("../../../../../../../../etc/hostname")
    probe = LocalHostProbe(root, environ={})
    assert probe.read_text("/usr/local/Ascend/ascend-toolkit/latest/f.txt") == "inside"
    assert probe.list_dir("/usr/local/Ascend/ascend-toolkit") == ["8.5.0", "latest"]
    assert probe.exists("/usr/local/Ascend/ascend-toolkit/latest")
    assert probe.read_text("/usr/local/Ascend/missing") is None
    assert probe.list_dir("/nope") is None
    # `..` never climbs above the root.
    assert probe.host_path("/etc/escape") == root / "etc/hostname"
    with pytest.raises(ValueError, match="absolute"):
        probe.host_path("relative/path")


def test_link_loop_is_an_error_not_a_hang(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to("/b")
    (tmp_path / "b").symlink_to("/a")
    probe = LocalHostProbe(tmp_path, environ={})
    with pytest.raises(OSError, match="too many"):
        probe.read_text("/a/x")
    assert not probe.exists("/a")


def test_read_text_is_bounded_and_tolerant(tmp_path: Path) -> None:
    (tmp_path / "big").write_bytes(b"x" * (2 * 1024 * 1024))
    (tmp_path / "bin").write_bytes(b"ok\xff\xfe")
    probe = LocalHostProbe(tmp_path, environ={})
    assert len(probe.read_text("/big") or "") == 1024 * 1024
    assert (probe.read_text("/bin") or "").startswith("ok")


def test_run_argv_timeouts_and_missing_programs(tmp_path: Path) -> None:
    probe = LocalHostProbe("/", environ={"PATH": "/usr/bin:/bin"})
    ok = probe.run([sys.executable, "-c", "print('hi')"])
    assert ok.ok and ok.stdout.strip() == "hi"
    # Arguments are never interpreted by a shell.
    echoed = probe.run([sys.executable, "-c", "import sys; print(sys.argv[1])", "$(id) ; rm -rf /"])
    assert echoed.stdout.strip() == "$(id) ; rm -rf /"
    failed = probe.run([sys.executable, "-c", "import sys; sys.stderr.write('boom\\n'); sys.exit(3)"])
    assert failed.returncode == 3
    assert "exited with 3: boom" in failed.reason(["x"])
    missing = probe.run([str(tmp_path / "no-such-tool"), "info"])
    assert missing.returncode == 127
    slow = probe.run([sys.executable, "-c", "import time; time.sleep(5)"], timeout=0.3)
    assert slow.returncode == 124
    assert "timed out" in slow.stderr


def test_which_uses_the_probe_environment(tmp_path: Path) -> None:
    tool = tmp_path / "npu-smi"
    tool.write_text("#!/bin/sh\necho hi\n")
    tool.chmod(0o755)
    assert LocalHostProbe("/", environ={"PATH": str(tmp_path)}).which("npu-smi") == str(tool)
    assert LocalHostProbe("/", environ={"PATH": "/nonexistent"}).which("npu-smi") is None


def test_port_in_use_on_loopback() -> None:
    probe = LocalHostProbe("/", environ={})
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        assert probe.port_in_use("127.0.0.1", port)
    assert not probe.port_in_use("127.0.0.1", port)
    with pytest.raises(OSError):
        probe.port_in_use("192.0.2.1", port)  # TEST-NET address: not on this host


# ---- gathering from captured hosts ---------------------------------------------------------------


def _facts(fixture_host, name: str) -> HostFacts:  # type: ignore[no-untyped-def]
    host = fixture_host(name)
    probe = LocalHostProbe(host.root, environ=host.environ)
    facts = gather_host_facts(probe, root=str(host.root))
    python = probe_python_env(probe, EnginePython(str(host.engine_python), "flag"))
    return HostFacts(**{**facts.__dict__, "python": python})


def test_gather_a2_host(fixture_host) -> None:  # type: ignore[no-untyped-def]
    facts = _facts(fixture_host, "a2-910b3x8")
    assert facts.backend == "npu"
    assert facts.family == "a2"
    assert facts.soc_version == "ascend910b3"
    assert len(facts.devices) == 8
    assert facts.device_nodes.davinci == tuple(range(8))
    assert facts.device_nodes.missing_control_nodes == []
    assert (facts.driver.version, facts.driver.source) == ("25.5.0", "/usr/local/Ascend/driver/version.info")
    assert (facts.cann.version, facts.cann.layout, facts.cann.sourced) == ("8.5.0", "toolkit", True)
    assert facts.cann.atb_sourced and facts.cann.nnal_installed
    assert facts.python is not None and facts.python.version == "3.11.10"
    assert facts.packages["vllm-ascend"] == "0.13.0"
    assert facts.python.vllm_ascend_device_type == "A2"
    assert facts.cpu.arch == "aarch64"
    assert (facts.cpu.cores, facts.cpu.numa_nodes) == (192, 4)
    assert facts.cpu.memory_total_mb == 1583000000 // 1024
    assert facts.nics == ("enp189s0f0", "eth0")
    assert facts.probe_errors == {}
    assert facts.env["ASCEND_HOME_PATH"] == "/usr/local/Ascend/ascend-toolkit/latest"


def test_gather_a3_host_reads_soc_from_board_info(fixture_host) -> None:  # type: ignore[no-untyped-def]
    facts = _facts(fixture_host, "a3-16chips")
    assert (facts.family, facts.soc_version) == ("a3", "ascend910_9391")
    assert len(facts.devices) == 16
    assert facts.driver.version == "26.0.rc1"
    assert facts.cann.version == "9.1.0"


def test_gather_310p_host(fixture_host) -> None:  # type: ignore[no-untyped-def]
    facts = _facts(fixture_host, "300i-duo")
    assert (facts.family, facts.soc_version) == ("300i-duo", "ascend310p3")
    assert facts.cpu.arch == "x86_64"
    assert facts.python is not None and facts.python.vllm_ascend_device_type == "A2"


def test_gather_host_without_driver(fixture_host) -> None:  # type: ignore[no-untyped-def]
    facts = _facts(fixture_host, "no-driver")
    assert facts.backend == "cpu"
    assert not facts.npu_smi_found
    assert facts.npu is None
    assert not facts.driver.installed and facts.driver.version is None
    assert not facts.device_nodes.any
    assert facts.cann.version == "8.3.RC2"
    assert facts.probe_errors == {}


def test_driver_version_falls_back_to_npu_smi_title() -> None:
    probe = FakeHostProbe(
        programs={"npu-smi": "/usr/local/bin/npu-smi"},
        commands={("npu-smi", "info"): CommandResult(0, "| npu-smi 25.0.rc1.1   Version: 25.0.rc1.1   |\n")},
    )
    facts = gather_host_facts(probe)
    assert facts.driver.version == "25.0.rc1.1"
    assert facts.driver.source == "npu-smi info"
    assert facts.backend == "npu"  # the driver answered, even with no device listed


def test_failing_probes_become_recorded_errors_not_exceptions() -> None:
    class Exploding(FakeHostProbe):
        def list_dir(self, path: str) -> list[str] | None:
            raise PermissionError(f"denied: {path}")

    probe = Exploding(
        programs={"npu-smi": "/usr/local/bin/npu-smi", "nvidia-smi": "/usr/bin/nvidia-smi"},
        commands={
            ("npu-smi", "info"): CommandResult(255, "", "dcmi module initialize failed. ret is -8005"),
            ("nvidia-smi",): CommandResult(9, "", "NVIDIA-SMI has failed"),
        },
    )
    facts = gather_host_facts(probe)
    assert "dcmi module initialize failed" in facts.probe_errors["npu-smi"]
    assert "NVIDIA-SMI has failed" in facts.probe_errors["nvidia-smi"]
    assert "denied" in facts.probe_errors["device-nodes"]
    assert facts.devices == ()
    assert facts.backend == "cpu"


def test_npu_smi_printing_garbage_is_reported() -> None:
    probe = FakeHostProbe(
        programs={"npu-smi": "/x/npu-smi"}, commands={("npu-smi", "info"): CommandResult(0, "Segmentation fault\n")}
    )
    facts = gather_host_facts(probe)
    assert "no device table" in facts.probe_errors["npu-smi"]


def test_ports_are_probed_and_errors_kept() -> None:
    class Ports(FakeHostProbe):
        def port_in_use(self, host: str, port: int) -> bool:
            if port == 1:
                raise OSError(99, "Cannot assign requested address")
            return super().port_in_use(host, port)

    probe = Ports(busy_ports={8000})
    facts = gather_host_facts(
        probe,
        ports=[PortRequest("127.0.0.1", 8000, "server"), PortRequest("127.0.0.1", 8001, "x"), PortRequest("h", 1, "y")],
    )
    assert [(p.port, p.in_use) for p in facts.ports] == [(8000, True), (8001, False), (1, None)]
    assert "Cannot assign" in (facts.ports[2].error or "")


def test_cuda_facts_from_nvidia_smi() -> None:
    csv = "0, NVIDIA H200, 143771, 0, 570.86.15\n1, NVIDIA H200, 143771, 512, 570.86.15\n"
    probe = FakeHostProbe(
        programs={"nvidia-smi": "/usr/bin/nvidia-smi"}, commands={("nvidia-smi",): CommandResult(0, csv)}
    )
    facts = gather_host_facts(probe)
    assert facts.backend == "cuda"
    assert facts.cuda.driver_version == "570.86.15"
    assert [(g.index, g.name, g.memory_total_mb, g.memory_used_mb) for g in facts.cuda.gpus] == [
        (0, "NVIDIA H200", 143771, 0),
        (1, "NVIDIA H200", 143771, 512),
    ]


def test_small_parsers() -> None:
    assert parse_cpu_list("0-3,8-11\n") == 8
    assert parse_cpu_list("0\n") == 1
    assert parse_cpu_list("garbage") is None
    mem = parse_meminfo("MemTotal:       24576000 kB\nMemAvailable:   12288000 kB\nHugePages_Total: 0\n")
    assert mem == {"MemTotal": 24000, "MemAvailable": 12000}
    assert parse_nvidia_smi_csv("not csv\n") == (None, ())


def test_relevant_env_keeps_ascend_vars_and_redacts_secrets() -> None:
    env = relevant_env(
        {"ASCEND_RT_VISIBLE_DEVICES": "0,1", "VLLM_API_KEY": "s3cret", "HOME": "/root", "HCCL_IF_IP": "10.0.0.1"}
    )
    assert env == {"ASCEND_RT_VISIBLE_DEVICES": "0,1", "VLLM_API_KEY": "<redacted>", "HCCL_IF_IP": "10.0.0.1"}


# ---- the engine interpreter ----------------------------------------------------------------------


def test_probe_this_interpreter_for_real() -> None:
    probe = LocalHostProbe("/")
    env = probe_python_env(probe, EnginePython(sys.executable, "current"))
    assert env.error is None
    assert env.version == ".".join(str(n) for n in sys.version_info[:3])
    # This project's venv has none of the engine packages (they live in engine environments).
    assert "vllm-ascend" not in env.packages
    assert "torch-npu" not in env.packages


def test_probe_never_imports_the_engine_packages(tmp_path: Path) -> None:
    # A `torch` that explodes on import, installed as a distribution: the probe must only read metadata.
    site = tmp_path / "site"
    (site / "torch").mkdir(parents=True)
    (site / "torch" / "__init__.py").write_text("raise SystemExit('torch was imported')\n")
    dist = site / "torch-9.9.9.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 9.9.9\n")
    (site / "vllm_ascend").mkdir()
    (site / "vllm_ascend" / "__init__.py").write_text("raise SystemExit('vllm_ascend was imported')\n")
    (site / "vllm_ascend" / "_build_info.py").write_text("__device_type__ = '_310P'\n")
    probe = LocalHostProbe("/", environ={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"})
    env = probe_python_env(probe, EnginePython(sys.executable, "flag"))
    assert env.error is None
    assert env.packages.get("torch") == "9.9.9"
    assert env.vllm_ascend_device_type == "_310P"
    assert family_from_build_tag("_310P") == "300i-duo"


def test_probe_failures_are_reported(tmp_path: Path) -> None:
    probe = LocalHostProbe("/", environ={"PATH": "/usr/bin:/bin"})
    missing = probe_python_env(probe, EnginePython(str(tmp_path / "nope" / "python"), "flag"))
    assert missing.error is not None and "127" in missing.error
    liar = tmp_path / "liar"
    liar.write_text("#!/bin/sh\necho 'not a report'\n")
    liar.chmod(0o755)
    bad = probe_python_env(probe, EnginePython(str(liar), "flag"))
    assert bad.error is not None and "no probe report" in bad.error


def test_parse_probe_output_takes_the_marked_line() -> None:
    out = 'noise\nASCENDCTL-PROBE {"python": "3.11.1", "packages": {"ray": "2.50.0"}}\n'
    assert parse_probe_output(out)["packages"] == {"ray": "2.50.0"}
    with pytest.raises(ValueError):
        parse_probe_output("nothing here")


def _make_venv(engines: Path, name: str, *, manifest: bool = True) -> Path:
    python = engines / name / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text("")
    if manifest:
        (engines / name / "manifest.json").write_text("{}")
    return python


def test_choose_engine_python_precedence(tmp_path: Path) -> None:
    engines = tmp_path / "engines"
    cpu_old = _make_venv(engines, "cpu-0.31.0")
    cpu_new = _make_venv(engines, "cpu-0.32.0")
    _make_venv(engines, "cpu-0.40.0", manifest=False)  # unfinished install: ignored
    npu = _make_venv(engines, "npu-v0.13.0")
    assert choose_engine_python("/x/python", {ENGINE_PYTHON_VAR: "/y/python"}, engines_dir=engines) == EnginePython(
        "/x/python", "flag"
    )
    assert choose_engine_python(None, {ENGINE_PYTHON_VAR: "/y/python"}, engines_dir=engines).chosen_by == "env"
    assert choose_engine_python(None, {}, engines_dir=engines) == EnginePython(str(cpu_new), "engine-venv")
    assert find_engine_venv_python(engines, "cpu", "0.31.0") == cpu_old
    assert find_engine_venv_python(engines, "npu", "v0.13.0") == npu
    assert find_engine_venv_python(engines, "npu", "0.13.0") == npu
    assert find_engine_venv_python(engines, "cuda") is None
    assert choose_engine_python(None, {}, engines_dir=tmp_path / "none") == EnginePython(sys.executable, "current")


# ---- facts JSON -------------------------------------------------------------------------------------


def test_facts_round_trip_through_json(fixture_host) -> None:  # type: ignore[no-untyped-def]
    facts = _facts(fixture_host, "a2-910b3x8")
    data = json.loads(json.dumps(facts.to_dict()))
    again = HostFacts.from_dict(data)
    assert again.to_dict() == data
    assert again.family == "a2"
    assert again.devices[7].hbm_used_mb == 59402


def test_facts_from_a_minimal_hand_written_document() -> None:
    facts = HostFacts.from_dict(
        {
            "backend": "npu",
            "hardware": {"family": "a3", "devices": [{"id": 0, "name": "Ascend910", "hbm_total_mb": 65536}]},
            "cann": {"version": "9.1.0"},
            "packages": {"vllm-ascend": "0.23.0", "torch": None},
        }
    )
    assert facts.family == "a3"
    assert facts.devices[0].health == "OK"
    assert facts.cann.version == "9.1.0"
    assert facts.packages == {"vllm-ascend": "0.23.0"}
    assert HostFacts.from_dict({"backend": "tpu", "hardware": {"family": "h100"}}).backend == "cpu"


def test_probe_host_in_one_call(fixture_host) -> None:  # type: ignore[no-untyped-def]
    from ascendctl_engine.host import probe_host

    host = fixture_host("a3-16chips")
    facts = probe_host(root=str(host.root), environ={**host.environ, ENGINE_PYTHON_VAR: str(host.engine_python)})
    assert facts.family == "a3"
    assert facts.python is not None and facts.python.chosen_by == "env"
    assert facts.packages["vllm-ascend"] == "0.23.0"
