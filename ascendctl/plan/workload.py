"""Workloads: the request shapes an operator expects, shared by `ascendctl bench` (what load to send) and
`ascendctl fit --workload` (does the KV cache hold that load without preemption).

A workload is a list of points, each a fixed shape: input tokens, output tokens, requests in flight
(concurrency), how many requests in all (bounded), and an optional request rate. It is given on the command
line as one of:

- a NAME from `NAMED` (the shapes operators publish their comparisons at, and a quick one for CPU);
- `INPUT:OUTPUT:CONCURRENCY` (one point; `k` multiplies by 1,024: `2k:256:16`);
- `launch:CASE[@TAG[/HARDWARE]]`: the measured performance workload of one of upstream's CI launches
  (`launch_workloads`), with a caveat that its numbers are not upstream's;
- a FILE (YAML, read through the one YAML boundary, strict keys, errors at `file:line:col`):

      name: my-load          # optional, defaults to the file's stem
      seed: 0                # optional, the random prompts' seed
      points:
        - {input: 2048, output: 256, concurrency: 16, requests: 64, request_rate: 8.0}

Prompts are random token ids of exactly `input` tokens with a fixed seed, and every request generates exactly
`output` tokens, so a point means the same load on every run.
"""

import re
from pathlib import Path

from pydantic import Field, ValidationError

from ascendctl.core.errors import DocumentError, Issue, UserInputError
from ascendctl.core.yamlio import load_yaml_file
from ascendctl.plan.launch_workloads import LAUNCH_PREFIX, MeasuredPoint, read_launch_load
from ascendctl_engine.records import record
from ascendctl_engine.sections.base import StrictModel

# Bounds that keep one point's run finite and its numbers meaningful; a FILE is held to the same bounds.
MAX_TOKENS = 1 << 20  # 1 Mi tokens of input or output per request
MAX_CONCURRENCY = 4096
MAX_REQUESTS = 10_000
MAX_POINTS = 64
MAX_REQUEST_RATE = 1e6  # requests per second
# The random prompts' seed: `vllm bench serve --seed` seeds numpy, which takes 0 … 2**32 - 1 ("Seed must be between 0
# and 2**32 - 1"); kept within a signed 32-bit int, as a workload file and `ascendctl bench --seed` both give it.
SEED_MAX = 2**31 - 1
# Requests per point when none is given: enough rounds of `concurrency` for stable percentiles, never more
# than `DEFAULT_REQUESTS_CAP`.
ROUNDS_PER_POINT = 4
DEFAULT_REQUESTS_MIN = 16
DEFAULT_REQUESTS_CAP = 256


def default_requests(concurrency: int) -> int:
    return min(DEFAULT_REQUESTS_CAP, max(DEFAULT_REQUESTS_MIN, ROUNDS_PER_POINT * concurrency))


@record
class WorkloadPoint:
    input_len: int
    output_len: int
    concurrency: int
    requests: int
    request_rate: float | None = None  # requests per second; None: as fast as concurrency allows

    @property
    def label(self) -> str:
        """`2048:256:16` (and `@8.0/s` when rate-limited): how tables and file names name the point."""
        rate = f"@{self.request_rate:g}/s" if self.request_rate is not None else ""
        return f"{self.input_len}:{self.output_len}:{self.concurrency}{rate}"

    @property
    def tokens_per_sequence(self) -> int:
        return self.input_len + self.output_len

    def to_json(self) -> dict[str, object]:
        return {
            "input_len": self.input_len,
            "output_len": self.output_len,
            "concurrency": self.concurrency,
            "requests": self.requests,
            "request_rate": self.request_rate,
        }


@record
class Workload:
    name: str
    points: tuple[WorkloadPoint, ...]
    description: str = ""
    source: str = ""  # where the shape comes from (an upstream issue, a file)
    seed: int = 0
    caveat: str = ""  # how far its numbers are from the source's own (shown after the results)

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "description": self.description,
            "source": self.source,
            "seed": self.seed,
            "caveat": self.caveat,
            "points": [p.to_json() for p in self.points],
        }


def _point(input_len: int, output_len: int, concurrency: int, requests: int | None = None) -> WorkloadPoint:
    return WorkloadPoint(input_len, output_len, concurrency, requests or default_requests(concurrency))


# The named workloads. The long-context shapes are the ones operators publish vLLM-Ascend vs MindIE comparisons
# at; output is fixed so TPOT is measured over the same number of decode steps everywhere.
NAMED: dict[str, Workload] = {
    w.name: w
    for w in (
        Workload(
            "quick",
            (_point(64, 32, 4, 16),),
            "64 in / 32 out tokens, 4 concurrent, 16 requests: a smoke test a CPU engine finishes in seconds",
        ),
        Workload(
            "2k-16",
            (_point(2048, 256, 16),),
            "2,048 in / 256 out tokens, 16 concurrent (the shape of Qwen3-235B W8A8 on one 8-card server)",
            "https://github.com/vllm-project/vllm-ascend/issues/4395",
        ),
        Workload(
            "8k-16",
            (_point(8192, 256, 16),),
            "8,192 in / 256 out tokens, 16 concurrent",
            "https://github.com/vllm-project/vllm-ascend/issues/4395",
        ),
        Workload(
            "64k-4",
            (_point(65536, 256, 4),),
            "65,536 in / 256 out tokens, 4 concurrent: long context",
        ),
        Workload(
            "7k-2k",
            (_point(7168, 2048, 16),),
            "7,168 in / 2,048 out tokens, 16 concurrent (DeepSeek-R1 4P4D on A2)",
            "https://github.com/vllm-project/vllm-ascend/issues/4295",
        ),
        Workload(
            "sweep-concurrency",
            tuple(_point(1024, 128, c) for c in (1, 4, 16, 64)),
            "1,024 in / 128 out tokens at 1, 4, 16 and 64 concurrent: where latency turns into queueing",
        ),
    )
}

_SHAPE = re.compile(r"(\d{1,9})(k?):(\d{1,9})(k?):(\d{1,6})")


class _PointDoc(StrictModel):
    input: int = Field(ge=1, le=MAX_TOKENS, description="Prompt tokens per request.")
    output: int = Field(ge=1, le=MAX_TOKENS, description="Generated tokens per request (exactly; EOS ignored).")
    concurrency: int = Field(ge=1, le=MAX_CONCURRENCY, description="Requests in flight at most.")
    requests: int | None = Field(
        default=None, ge=1, le=MAX_REQUESTS, description="Requests in all (default: 4 rounds of concurrency)."
    )
    request_rate: float | None = Field(
        default=None,
        gt=0,
        le=MAX_REQUEST_RATE,
        description="Requests per second (default: as fast as concurrency allows).",
    )


class _WorkloadDoc(StrictModel):
    name: str | None = Field(default=None, min_length=1, max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    description: str = Field(default="", max_length=512, description="What the workload stands for.")
    seed: int = Field(default=0, ge=0, le=SEED_MAX, description="Seed of the random prompts.")
    points: list[_PointDoc] = Field(min_length=1, max_length=MAX_POINTS, description="The shapes, run in order.")


def parse_workload(text: str) -> Workload:
    """A workload from the command line's `--workload` value: a NAME, `INPUT:OUTPUT:CONCURRENCY`,
    `launch:CASE[@TAG[/HARDWARE]]`, or a FILE."""
    if text in NAMED:
        return NAMED[text]
    if text.startswith(LAUNCH_PREFIX):
        return _from_launch(text)
    shape = _SHAPE.fullmatch(text.strip().lower())
    if shape is not None:
        return _from_shape(text, shape)
    if ":" in text and not Path(text).exists():
        raise UserInputError(
            f"--workload {text}: expected INPUT:OUTPUT:CONCURRENCY (e.g. 2048:256:16 or 2k:256:16) "
            f"or {LAUNCH_PREFIX}CASE[@TAG]"
        )
    path = Path(text)
    if path.suffix in (".yaml", ".yml", ".json") or path.exists():
        return load_workload_file(path)
    names = ", ".join(NAMED)
    raise UserInputError(
        f"--workload {text}: not a named workload ({names}), INPUT:OUTPUT:CONCURRENCY, "
        f"{LAUNCH_PREFIX}CASE[@TAG], or a file"
    )


def _from_shape(text: str, shape: re.Match[str]) -> Workload:
    def tokens(digits: str, kilo: str) -> int:
        return int(digits) * (1024 if kilo else 1)

    input_len, output_len = tokens(shape[1], shape[2]), tokens(shape[3], shape[4])
    concurrency = int(shape[5])
    for what, value, top in (
        ("INPUT", input_len, MAX_TOKENS),
        ("OUTPUT", output_len, MAX_TOKENS),
        ("CONCURRENCY", concurrency, MAX_CONCURRENCY),
    ):
        if not 1 <= value <= top:
            raise UserInputError(f"--workload {text}: {what} must be between 1 and {top:,}")
    point = _point(input_len, output_len, concurrency)
    return Workload(point.label, (point,), f"{input_len} in / {output_len} out tokens, {concurrency} concurrent")


def _from_launch(text: str) -> Workload:
    """An upstream CI launch's measured load (`launch_workloads` reads it) as a workload: one point per label, in
    upstream's order (entries that differ only in their dataset's text are one load with random prompts, and a
    label names a point's raw result file and its row in `bench --compare`)."""
    load = read_launch_load(text)
    points: dict[str, WorkloadPoint] = {}
    for measured in load.points:
        point = _launch_point(text, measured)
        points.setdefault(point.label, point)
    if len(points) > MAX_POINTS:
        raise UserInputError(f"--workload {text}: {len(points)} points, at most {MAX_POINTS}")
    return Workload(load.name, tuple(points.values()), load.description, load.source, 0, load.caveat)


def _launch_point(text: str, measured: MeasuredPoint) -> WorkloadPoint:
    """A measured entry as a point, held to the bounds a workload file is."""
    where = f"--workload {text}: {measured.dataset} ({measured.source})"
    for what, value, top in (
        ("input length", measured.input_len, MAX_TOKENS),
        ("max_out_len", measured.output_len, MAX_TOKENS),
        ("batch_size (concurrency)", measured.concurrency, MAX_CONCURRENCY),
        ("num_prompts", measured.requests, MAX_REQUESTS),
    ):
        if not 1 <= value <= top:
            raise UserInputError(f"{where}: {what} {value:,} is outside 1 … {top:,}")
    rate = measured.request_rate
    if rate is not None and not 0 < rate <= MAX_REQUEST_RATE:
        raise UserInputError(f"{where}: request_rate {rate:g} is outside 0 … {MAX_REQUEST_RATE:g}")
    return WorkloadPoint(measured.input_len, measured.output_len, measured.concurrency, measured.requests, rate)


def load_workload_file(path: Path) -> Workload:
    doc = load_yaml_file(path)
    try:
        parsed = _WorkloadDoc.model_validate(doc.data)
    except ValidationError as exc:
        issues: list[Issue] = []
        for err in exc.errors(include_url=False):
            loc = tuple(err["loc"])
            if err["type"] == "extra_forbidden":
                issues.append(doc.issue(loc, "unknown key", at_key=True))
            elif err["type"] == "missing":
                issues.append(doc.issue(loc, "required key is missing"))
            else:
                issues.append(doc.issue(loc, err["msg"]))
        raise DocumentError(issues) from None
    points = tuple(
        WorkloadPoint(
            p.input,
            p.output,
            p.concurrency,
            p.requests if p.requests is not None else default_requests(p.concurrency),
            p.request_rate,
        )
        for p in parsed.points
    )
    return Workload(parsed.name or path.stem, points, parsed.description, str(path), parsed.seed)


__all__ = [
    "NAMED",
    "Workload",
    "WorkloadPoint",
    "default_requests",
    "load_workload_file",
    "parse_workload",
]
