#!/usr/bin/env python3
"""Extract the launches vllm-ascend's CI runs on real A2 / A3 / 300I Duo hardware, every tag, into one JSON file.

    python scripts/extract_launches.py --repo /work/.mirror/vllm-project+vllm-ascend/repo   # every tag
    python scripts/extract_launches.py --repo REPO --tags v0.25.1rc1 --out /tmp/l.json       # some tags only
    python scripts/extract_launches.py --check                                               # compare, write nothing

Maintainer script, run by hand (CI has no mirror). Every file is read from git objects (`git ls-tree` +
`git cat-file --batch` on `TAG:path`; nothing is checked out) and the output is
`ascendctl/facts/data/launches/launches.json`. Standard library + PyYAML; the parser check uses the project's own
real-parser snapshots (`ascendctl_engine.adapters.parser_snapshot`).

The layouts, as read from the tags v0.10.1rc1 … v0.25.1rc1 (`layout` of each tag in the output):

- `accuracy-only` (v0.10.1rc1, v0.10.2rc1, v0.11.0rc0, v0.11.0rc2, v0.11.0rc3, v0.11.0): offline accuracy configs
  `tests/e2e/models/configs/*.yaml` (`model_name`, `hardware`, LLM kwargs, tasks with metric baselines), listed by
  the `include:` matrix (`model_name`, `runner`) of `.github/workflows/accuracy_test.yaml` (v0.11.0rc0 on through
  `_accuracy_test.yaml`). The multi-node configs these v0.11 tags carry are not run (see below).
- `schedule-workflows` (v0.11.0rc1, v0.12.0rc1 … v0.22.1rc1): the lists are job matrices of the scheduled
  workflows (`vllm_ascend_test_nightly.yaml` v0.11.0rc1 — pytest files only —, `vllm_ascend_test_nightly_a2/a3.yaml`
  v0.12.0rc1, `nightly_test_a2/a3.yaml` v0.13.0rc1 … v0.14.0rc1, `schedule_nightly_test_a2/a3.yaml` from
  v0.15.0rc1, `schedule_weekly_test_a3.yaml` from v0.20.2rc1, `schedule_weekly_test_a2.yaml` from v0.21.0rc1):
  `{name, os, tests | config_file_path}` for single node, `{name, config_file_path, size}` for multi-node,
  `{os, model_list}` for accuracy (v0.19.1rc1 … v0.22.1rc1 read from `tests/e2e/models/configs/
  accuracy_groups_a2.json` with `jq`), plus the accuracy report / PR-label workflows.
  Multi-node serve YAML: `tests/e2e/nightly/multi_node/config/models/` (v0.11.0rc1 … v0.13.0rc1),
  `tests/e2e/nightly/multi_node/config/` (v0.13.0rc2 … v0.19.1rc1), `tests/e2e/{nightly,weekly}/multi_node/
  {internal_dp,external_dp}/config/` (v0.20.2rc1 on). Single-node serve YAML (`test_cases:`):
  `tests/e2e/nightly/single_node/models/configs/` from v0.16.0rc1, `tests/e2e/weekly/single_node/configs/` from
  v0.20.2rc1. Before v0.16.0rc1 single-node launches are pytest files (`tests:` entries).
  At v0.11.0rc1 … v0.11.0 the multi-node workflow (`multi_node_test.yaml`) installs `tests/e2e/multi_node/scripts/
  run.sh` / `lws.yaml`, paths that do not exist at those tags: their configs are `not_read` with that reason.
- `config-lists` (v0.23.0rc1 on): `.github/workflows/configs/nightly_config.yaml` / `weekly_config.yaml`
  (sections `a2`, `a3`, `a3-560t`, `310p`), named by the workflows' `MATRIX_FILE` / `MATRIX_OUTPUTS`; the base
  path of each job's configs is the workflow's `config_base_path` (hard-coded per job in the weekly workflows).

How a launch is read, per the runner code of the tag (read, not imported):
- the workflow job gives the runner label, the SoC (`soc_version`), `size`, `config_base_path`; a matrix entry's
  `${{ matrix.* }}` references are substituted; `fromJson(needs.J.outputs.K)` is followed to `MATRIX_OUTPUTS` /
  the `jq` script of job J. The schedule is `nightly` or `weekly` from the workflow's cron (a day-of-week field ≠
  `*` is weekly), else from its file name (dispatch-only workflows); a job run only on a PR label or a
  `/nightly <name>` filter (the report / accuracy workflows without cron, `pr_only` accuracy groups) says `pr`.
  Single-node NPUs per node: the count ending the runner label; multi-node: `npus_said` keeps the job's
  `npu_per_node` (16 for a3, else 8, `_e2e_nightly_multi_node*.yaml`) and the config's, and `npus_per_node` is the
  agreed value or, when they disagree, the launch's own layout (TP × PP × PCP × local DP per node from its argv).
- single node (`single_node_config.py`): yaml.safe_load of the file, `test_cases` required, non-empty, per case the
  required fields (`name`, `model`, `envs`, `server_cmd`, or `epd_server_cmds` + `epd_proxy_args` for
  `service_mode: epd`), `server_cmd + server_cmd_extra`; the port keys (`SERVER_PORT`, `ENCODE_PORT`, `PD_PORT`,
  `PROXY_PORT`) that are `DEFAULT_PORT` or absent get an open port — here stand-ins 8000, 8001, … in that order,
  listed in `open_ports` when a command uses them; `$VAR` / `${VAR}` expanded from `envs`. argv is
  `vllm serve MODEL *server_cmd` (RemoteOpenAIServer); an EPD case is one entry per `epd_server_cmds` item,
  `vllm serve *item`. The runner passes `envs` to subprocess unchanged, so a value that is not a string cannot
  start (Popen rejects it): such a case is `not_loadable`.
- multi-node internal DP (`multi_node_config.py`): `env_common` (until v0.19.1rc1) merged with the node's
  `envs` (v0.13.0rc2 on), the root fields the tag's `_validate_root` requires, `len(deployment) == num_nodes`; per
  node the runner sets `HCCL_IF_IP`, `HCCL_SOCKET_IFNAME`, `GLOO_SOCKET_IFNAME`, `TP_SOCKET_IFNAME`, `LOCAL_IP`,
  `NIC_NAME`, `MASTER_IP` (node 0; with disaggregated prefill, the first decode node for decode nodes),
  `LD_LIBRARY_PATH` (v0.12.0rc1 / v0.13.0rc1), and RemoteOpenAIServer `VLLM_WORKER_MULTIPROC_METHOD=spawn`;
  `$VAR` / `${VAR}` of `server_cmd` expanded, then shlex-split.
  Node addresses are the documentation addresses 192.0.2.(10+node), NIC `eth0`.
- multi-node external DP (`external_dp/scripts/`): one process per data-parallel rank, `RankResolver` and
  `ServerCommandBuilder` semantics (`${DP_RANK}`, `${DP_SIZE}`, `${TP_SIZE}`, `${PORT}`, `${VISIBLE_DEVICES}`,
  `${NODE_<i>_IP}`, …; `$VAR` from the rendered envs); an env reference to the container's own environment
  (`$LD_LIBRARY_PATH`) is kept as written. `routing.type` must be one the tag's loader knows.
- accuracy (`tests/e2e/models/configs/<model>.yaml`): `llm_kwargs` is the config's `serve:` mapping (or its top
  level engine keys in older configs) as written, not upstream's build_model_args output; `nodes[0].argv` is empty
  (an offline `LLM(...)`, no serve command, no parser check).
- pytest single-node files (`tests:` entries): the argv is read only when the `RemoteOpenAIServer(...)` call gets a
  literal model and a literal list (ast); otherwise the file is `not_read` with the reason.

"Verified at T" = listed in T's CI lists, loaded by the loader semantics above, and every node's argv (after the
model) accepted by the real-parser snapshot of T's vLLM pin (`ascendctl.facts.matrix`; `--quantization ascend`
added as the platform does); a problem of severity `error` makes the launch `not_loadable`. A tag the matrix does
not know skips the parser check (said in its `parser`). Nothing here says a run passed.

Output (schema 1): `{schema, generated_by, runner_families, tags, contents, launches}`.
`tags[T]`: `layout`, `lists` (`T:path` of every CI list read), `parser`, `counts {launches, multi_node, pd,
not_loadable, not_read}`, `not_loadable [{file, case, reason}]`, `not_read [{file, reason}]`.
`launches[]`: `{tag, file, line, case, kind, schedule, hardware, runners, listed_at, npus_per_node, npus_said,
nodes, content}`; one per (tag, file, case, hardware): a file listed again on another cluster of the same family
(`a3-560t`) or in another schedule is one launch naming every runner. `contents[id]`: `{model, nodes [{node, role,
argv, env, injected_env}], open_ports, benchmarks {accuracy, performance}, llm_kwargs (accuracy only)}`; `id` =
first 16 hex digits of sha256 of the content's canonical JSON, so identical launches across tags share it.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import itertools
import json
import posixpath
import re
import shlex
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "ascendctl" / "facts" / "data" / "launches" / "launches.json"
DEFAULT_REPO = Path("/work/.mirror/vllm-project+vllm-ascend/repo")
sys.path.insert(0, str(ROOT / "scripts"))
from extract_ascend_keys import git, read_blobs, release_tags  # noqa: E402

FIRST_TAG = "v0.10.1rc1"
LAST_TAG = "v0.25.1rc1"
SCHEMA = 1
GENERATED_BY = "scripts/extract_launches.py"
MAX_BYTES = 4_000_000
WORKFLOWS = ".github/workflows/"
READ_PREFIXES = (".github/workflows/", "tests/e2e/")
ACCURACY_DIR = "tests/e2e/models/configs"
SINGLE_NODE_LOADER = "tests/e2e/nightly/single_node/models/scripts/single_node_config.py"
SINGLE_NODE_DEFAULT_BASE = "tests/e2e/nightly/single_node/models/configs"
MULTI_NODE_LOADERS = (  # newest first: the first one a tag has is its loader
    "tests/e2e/nightly/multi_node/internal_dp/scripts/multi_node_config.py",
    "tests/e2e/nightly/multi_node/scripts/multi_node_config.py",
    "tests/e2e/nightly/multi_node/config/multi_node_config.py",
)
MULTI_NODE_UTILS = "tests/e2e/nightly/multi_node/scripts/utils.py"
EXTERNAL_DP_LOADER = "tests/e2e/nightly/multi_node/external_dp/scripts/external_dp_config.py"
CONFIG_DIRS = (  # where launch configs live, for "listed in no CI list"
    "tests/e2e/nightly/single_node/models/configs/",
    "tests/e2e/weekly/single_node/configs/",
    "tests/e2e/nightly/multi_node/config/models/",
    "tests/e2e/nightly/multi_node/config/",
    "tests/e2e/nightly/multi_node/internal_dp/config/",
    "tests/e2e/nightly/multi_node/external_dp/config/",
    "tests/e2e/weekly/multi_node/internal_dp/config/",
    "tests/e2e/weekly/multi_node/external_dp/config/",
    ACCURACY_DIR + "/",
)
FAMILY_HARDWARE = {"a2b3": "a2", "a2": "a2", "a3": "a3", "a3-560t": "a3", "310p": "300i-duo"}
ACCURACY_HARDWARE = (("a3", "a3"), ("a2", "a2"), ("300i", "300i-duo"), ("310p", "300i-duo"))
PORT_KEYS = ("SERVER_PORT", "ENCODE_PORT", "PD_PORT", "PROXY_PORT")
FIRST_STAND_IN_PORT = 8000
NIC = "eth0"
SPAWN = {"VLLM_WORKER_MULTIPROC_METHOD": "spawn"}
ASCEND_SITE = "/usr/local/Ascend/ascend-toolkit/latest/python/site-packages"
ACCURACY_META = frozenset(
    (
        "model_name",
        "model_type",
        "hardware",
        "tasks",
        "num_fewshot",
        "apply_chat_template",
        "fewshot_as_multiturn",
        "batch_size",
        "limit",
        "serve",
        "rtol",
        "gen_kwargs",
    )
)
_VAR = re.compile(r"\$(\w+)|\$\{(\w+)\}")
_TEMPLATE_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_ENV_VAR = re.compile(r"(?<!\$)\$([A-Za-z_][A-Za-z0-9_]*)")
_CLUSTER = re.compile(r"\$\{(NODE_(\d+)_IP|LOCAL_IP|MASTER_IP|LWS_WORKER_INDEX)\}")
_EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
_RUNNER_COUNT = re.compile(r"-(\d+)(?:-cn\d+-\d+)?$")
_INPUT_LEN = re.compile(r"(?:^|[-_/])in[-_]?(\d+)(k?)(?=$|[-_./])", re.IGNORECASE)


# ----------------------------------------------------------------------------------------------- git reading
# `git` and `release_tags` are the key extractor's (this script's tags are a range of the same tag list)


def version_key(tag: str) -> Any:
    from packaging.version import InvalidVersion, Version

    try:
        return (0, Version(tag))
    except InvalidVersion:
        return (1, tag)


@dataclass
class Tree:
    """One tag's files: every path, and the text of those under READ_PREFIXES."""

    tag: str
    paths: frozenset[str]
    texts: dict[str, str]

    def read(self, path: str) -> str | None:
        return self.texts.get(path)

    def has(self, path: str) -> bool:
        return path in self.paths

    def is_dir(self, path: str) -> bool:
        prefix = path.rstrip("/") + "/"
        return any(p.startswith(prefix) for p in self.paths)

    def listdir(self, folder: str, suffix: str = ".yaml") -> list[str]:
        prefix = folder.rstrip("/") + "/"
        return sorted(
            p for p in self.paths if p.startswith(prefix) and "/" not in p[len(prefix) :] and p.endswith(suffix)
        )


def git_tree(repo: Path, tag: str) -> Tree:
    listing = git(repo, "ls-tree", "-r", "-z", "--name-only", tag).decode("utf-8", errors="replace")
    paths = [p for p in listing.split("\0") if p]
    wanted = [p for p in paths if p.startswith(READ_PREFIXES) and p.endswith((".yaml", ".yml", ".py", ".json", ".sh"))]
    return Tree(tag, frozenset(paths), read_blobs(repo, tag, wanted))


# ---------------------------------------------------------------------------------------------- YAML with lines
class LDict(dict[Any, Any]):
    """A YAML mapping that remembers its 1-based start line."""

    line: int = 1


class LList(list[Any]):
    line: int = 1


class _LineLoader(yaml.SafeLoader):
    """yaml.SafeLoader (same acceptance) whose mappings and sequences carry their line."""


def _construct_map(loader: _LineLoader, node: yaml.MappingNode) -> Iterator[LDict]:
    data = LDict()
    data.line = node.start_mark.line + 1
    yield data
    data.update(loader.construct_mapping(node))


def _construct_seq(loader: _LineLoader, node: yaml.SequenceNode) -> Iterator[LList]:
    data = LList()
    data.line = node.start_mark.line + 1
    yield data
    data.extend(loader.construct_sequence(node))


_LineLoader.add_constructor("tag:yaml.org,2002:map", _construct_map)
_LineLoader.add_constructor("tag:yaml.org,2002:seq", _construct_seq)


class LoadError(Exception):
    """A file upstream's runner cannot load; the message is the recorded reason."""


def load_yaml(text: str) -> Any:
    """yaml.safe_load semantics, mappings / sequences with `.line`; LoadError with a one-line reason."""
    try:
        return yaml.load(text, Loader=_LineLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise LoadError(f"yaml.safe_load fails: {yaml_error_text(exc)}") from exc


def yaml_error_text(exc: yaml.YAMLError) -> str:
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark
        where = f" (line {mark.line + 1})" if mark is not None else ""
        return f"{exc.context + ': ' if exc.context else ''}{exc.problem}{where}"
    return " ".join(str(exc).split())


def line_of(value: Any, default: int = 1) -> int:
    return int(getattr(value, "line", default))


def plain(value: Any) -> Any:
    """LDict / LList → dict / list (for JSON and hashing)."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


# ----------------------------------------------------------------------------------- runner labels and expressions
def runner_family(label: str, soc: str | None = None) -> str | None:
    """The runner family of a label (or, for a multi-node controller, of the SoC the job names)."""
    low = (label or "").lower()
    if soc:
        s = soc.lower()
        if "560t" in s or "cn12-001" in low:
            return "a3-560t"
        if s.startswith("a3"):
            return "a3"
        if s.startswith("a2"):
            return "a2b3"
        if "310p" in s:
            return "310p"
    if "310p" in low:
        return "310p"
    if "cn12-001" in low or "560t" in low:
        return "a3-560t"
    if re.search(r"(^|-)a3(-|$)", low) or "-a3-" in low or "nightly-a3" in low:
        return "a3"
    if "a2b3" in low:
        return "a2b3"
    if re.search(r"(^|-)a2(-|$)", low):
        return "a2"
    return None


def runner_npus(label: str) -> int | None:
    """The NPU count at the end of a runner label: linux-aarch64-a2b3-4 → 4, linux-aarch64-a3-16-cn12-001 → 16."""
    match = _RUNNER_COUNT.search(label or "")
    return int(match.group(1)) if match else None


def eval_expr(expr: str, row: dict[str, Any]) -> Any:
    """A GitHub expression over `matrix`: `matrix.a.b`, `toJson(x)`, `'lit'`, `x || y`; None when unknown."""
    for term in (t.strip() for t in expr.split("||")):
        value: Any = None
        inner = re.fullmatch(r"to[Jj][Ss][Oo][Nn]\((.*)\)", term)
        if inner:
            term = inner.group(1).strip()
        if re.fullmatch(r"'[^']*'", term):
            value = term[1:-1]
        elif term.startswith("matrix."):
            value = row
            for part in term.split(".")[1:]:
                value = value.get(part) if isinstance(value, dict) else None
        if value not in (None, ""):
            return value
    return None


def render(value: Any, row: dict[str, Any]) -> Any:
    """Substitute `${{ matrix.* }}` in a workflow value; a whole-string expression keeps its type."""
    if not isinstance(value, str):
        return value
    whole = _EXPR.fullmatch(value.strip())
    if whole:
        return eval_expr(whole.group(1), row)

    def repl(match: re.Match[str]) -> str:
        got = eval_expr(match.group(1), row)
        return match.group(0) if got is None else str(got)

    return _EXPR.sub(repl, value)


def cron_schedule(triggers: Any, path: str) -> str:
    """`weekly` / `nightly` from a workflow's cron (day-of-week ≠ `*` is weekly), else from its file name; `pr`
    for a workflow with neither (PR-label accuracy runs)."""
    crons: list[str] = []
    if isinstance(triggers, dict):
        for item in triggers.get("schedule") or []:
            if isinstance(item, dict) and isinstance(item.get("cron"), str):
                crons.append(item["cron"])
    if not crons:  # dispatched by another workflow (or a /nightly command): the file name says which run
        name = posixpath.basename(path)
        return "weekly" if "weekly" in name else "nightly" if "nightly" in name else "pr"
    if all(len(c.split()) == 5 and c.split()[4] != "*" for c in crons):
        return "weekly"
    return "nightly"


def input_len(dataset: str | None) -> int | None:
    """The input length a dataset name states: `GSM8K-in3500-bs400` → 3500, `…_in131072_…` → 131072."""
    if not dataset:
        return None
    match = _INPUT_LEN.search(dataset.rsplit("/", 1)[-1])
    if not match:
        return None
    return int(match.group(1)) * (1024 if match.group(2) else 1)


def expand_vars(text: str, env: dict[str, str]) -> str:
    """Upstream's `$VAR` / `${VAR}` expansion: a name not in `env` stays as written."""
    return _VAR.sub(lambda m: env.get(m.group(1) or m.group(2), m.group(0)), text)


def content_id(content: dict[str, Any]) -> str:
    canonical = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def doc_ip(node: int) -> str:
    return f"192.0.2.{10 + node}"


def dist_envs(node: int, master: int) -> dict[str, str]:
    """What the multi-node runner (DistEnvBuilder / build_dist_envs) sets on each node."""
    ip = doc_ip(node)
    return {
        "HCCL_IF_IP": ip,
        "HCCL_SOCKET_IFNAME": NIC,
        "GLOO_SOCKET_IFNAME": NIC,
        "TP_SOCKET_IFNAME": NIC,
        "LOCAL_IP": ip,
        "NIC_NAME": NIC,
        "MASTER_IP": doc_ip(master),
    }


# ------------------------------------------------------------------------------------------------- benchmarks
def benchmarks_of(raw: Any) -> dict[str, list[dict[str, Any]]]:
    """The aisbench cases of a serve config, kept as the accuracy baselines and performance workloads."""
    out: dict[str, list[dict[str, Any]]] = {"accuracy": [], "performance": []}
    if not isinstance(raw, dict):
        return out
    for name, case in raw.items():
        if not isinstance(case, dict):
            continue
        dataset = case.get("dataset_path") or case.get("dataset_conf")
        if case.get("case_type") == "accuracy":
            item: dict[str, Any] = {
                "name": str(name),
                "dataset": dataset,
                "baseline": case.get("baseline"),
                "threshold": case.get("threshold"),
            }
            if case.get("metric") is not None:
                item["metric"] = case.get("metric")
            out["accuracy"].append(item)
        elif case.get("case_type") == "performance":
            length = input_len(str(dataset) if dataset else None)
            out["performance"].append(
                {
                    "name": str(name),
                    "dataset": dataset,
                    "num_prompts": case.get("num_prompts"),
                    "max_out_len": case.get("max_out_len"),
                    "batch_size": case.get("batch_size"),
                    "request_rate": case.get("request_rate"),
                    "input_len": length,
                    "input_len_from": "dataset name" if length is not None else None,
                }
            )
    return plain(out)  # type: ignore[no-any-return]


def accuracy_benchmarks(config: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The metric baselines of an offline accuracy config (lm-eval tasks)."""
    out: dict[str, list[dict[str, Any]]] = {"accuracy": [], "performance": []}
    for task in config.get("tasks") or []:
        if not isinstance(task, dict):
            continue
        for metric in task.get("metrics") or []:
            if isinstance(metric, dict):
                out["accuracy"].append(
                    {
                        "name": str(task.get("name")),
                        "dataset": task.get("name"),
                        "metric": metric.get("name"),
                        "baseline": metric.get("value"),
                        "threshold": config.get("rtol"),
                    }
                )
    return plain(out)  # type: ignore[no-any-return]


# ------------------------------------------------------------------------------------------------ CI listings
@dataclass
class Listing:
    """One entry of a CI list: what it runs, where, and where the list says so."""

    kind: str  # single | multi | accuracy | tests
    config: str  # config_file_path, model name, or pytest path
    runner: str
    family: str | None
    schedule: str
    where: str  # TAG:path:line of the entry
    source: str  # TAG:path of the list
    base: str | None = None
    soc: str | None = None
    size: int | None = None
    job_npus: int | None = None


def _matrix_rows(
    tree: Tree, wf_path: str, job: dict[str, Any], jobs: dict[str, Any], lists: set[str]
) -> list[tuple[dict[str, Any], str, str]]:
    """(row, TAG:path:line, TAG:path of the list) for each matrix combination of a job."""
    strategy = job.get("strategy") if isinstance(job.get("strategy"), dict) else {}
    matrix = strategy.get("matrix") if isinstance(strategy, dict) else None
    if not isinstance(matrix, dict):
        return [({}, f"{tree.tag}:{wf_path}:{line_of(job)}", f"{tree.tag}:{wf_path}")]
    axes: list[list[tuple[str, Any, str, str]]] = []
    for key, value in matrix.items():
        if key == "include":
            continue
        if isinstance(value, list):
            axes.append(
                [(key, v, f"{tree.tag}:{wf_path}:{line_of(v, line_of(value))}", f"{tree.tag}:{wf_path}") for v in value]
            )
        elif isinstance(value, str) and key == "test_config":
            axes.append([(key, v, w, s) for v, w, s in _resolve_from_json(tree, value, jobs, lists)])
    rows: list[tuple[dict[str, Any], str, str]] = []
    for combo in itertools.product(*axes) if axes else [()]:
        row = {k: v for k, v, _, _ in combo}
        where = next(
            (w for k, _, w, _ in combo if k in ("test_config", "os")), f"{tree.tag}:{wf_path}:{line_of(matrix)}"
        )
        src = next((s for k, _, _, s in combo if k == "test_config"), f"{tree.tag}:{wf_path}")
        if combo:
            rows.append((row, where, src))
    for inc in matrix.get("include") or []:
        if isinstance(inc, dict):
            rows.append((dict(inc), f"{tree.tag}:{wf_path}:{line_of(inc)}", f"{tree.tag}:{wf_path}"))
    return rows


def _resolve_from_json(tree: Tree, expr: str, jobs: dict[str, Any], lists: set[str]) -> list[tuple[Any, str, str]]:
    """Follow `${{ fromJson(needs.J.outputs.K) }}` to the config file job J reads."""
    match = re.search(r"from[Jj][Ss][Oo][Nn]\(\s*needs\.([\w-]+)\.outputs\.(\w+)\s*\)", expr)
    if not match:
        return []
    job = jobs.get(match.group(1))
    if not isinstance(job, dict):
        return []
    key = match.group(2)
    for step in job.get("steps") or []:
        if not isinstance(step, dict):
            continue
        env: dict[str, Any] = step["env"] if isinstance(step.get("env"), dict) else {}
        outputs = env.get("MATRIX_OUTPUTS")
        if isinstance(outputs, str):
            sections = json.loads(outputs)
            files = [
                f for f in re.findall(r"'([^']*)'", str(env.get("MATRIX_FILE", ""))) if f.endswith((".yaml", ".yml"))
            ]
            path = posixpath.normpath(files[-1]) if files else ".github/workflows/configs/nightly_config.yaml"
            if key in sections:
                return _section_entries(tree, path, str(sections[key]), lists)
        run = step.get("run")
        if isinstance(run, str) and "jq" in run:
            cfg = re.search(r'CONFIG_FILE="([^"]+)"', run)
            var = re.search(rf'echo "{key}=\$\{{?(\w+)\}}?"', run)
            if cfg and var:
                jq = re.search(rf"{var.group(1)}=\$\(jq -c '\.([\w.-]+)'", run)
                if jq:
                    return _json_entries(tree, cfg.group(1), jq.group(1), lists)
    return []


def _section_entries(tree: Tree, path: str, dotted: str, lists: set[str]) -> list[tuple[Any, str, str]]:
    text = tree.read(path)
    if text is None:
        return []
    lists.add(f"{tree.tag}:{path}")
    try:
        data: Any = load_yaml(text)
    except LoadError:
        return []
    for part in dotted.split("."):
        data = data.get(part) if isinstance(data, dict) else None
    if not isinstance(data, list):
        return []
    return [(e, f"{tree.tag}:{path}:{line_of(e)}", f"{tree.tag}:{path}") for e in data]


def _json_entries(tree: Tree, path: str, dotted: str, lists: set[str]) -> list[tuple[Any, str, str]]:
    text = tree.read(path)
    if text is None:
        return []
    lists.add(f"{tree.tag}:{path}")
    try:
        data: Any = json.loads(text)
    except ValueError:
        return []
    for part in dotted.split("."):
        data = data.get(part) if isinstance(data, dict) else None
    if not isinstance(data, list):
        return []
    lines = text.splitlines()
    out = []
    for entry in data:
        name = entry.get("name") if isinstance(entry, dict) else None
        line = next((i + 1 for i, ln in enumerate(lines) if name and f'"{name}"' in ln), 1)
        out.append((entry, f"{tree.tag}:{path}:{line}", f"{tree.tag}:{path}"))
    return out


def job_npus(tree: Tree, reusable: str, soc: str | None) -> int | None:
    """NPUs per node a multi-node reusable workflow gives the pods (`npu_per_node=16` for a3, else 8)."""
    text = tree.read(reusable) or ""
    values = [int(v) for v in re.findall(r"npu_per_node=(\d+)", text)]
    if len(values) == 1:
        return values[0]
    if len(values) >= 2:
        cond = re.search(r'inputs\.soc_version \}\}"?\s*==?\s*"([\w-]+)"', text)
        return values[0] if cond and soc == cond.group(1) else values[1]
    return None


def workflow_listings(tree: Tree, lists: set[str], families: dict[str, str]) -> list[Listing]:
    """Every CI list entry of the tag's top-level workflows."""
    out: list[Listing] = []
    for wf_path in sorted(tree.texts):
        name = wf_path[len(WORKFLOWS) :]
        if (
            not wf_path.startswith(WORKFLOWS)
            or "/" in name
            or name.startswith("_")
            or not name.endswith((".yaml", ".yml"))
        ):
            continue
        try:
            wf = load_yaml(tree.texts[wf_path])
        except LoadError:
            continue
        if not isinstance(wf, dict) or not isinstance(wf.get("jobs"), dict):
            continue
        triggers = wf.get("on", wf.get(True))
        schedule = cron_schedule(triggers, wf_path)
        jobs = wf["jobs"]
        for job_id, job in jobs.items():
            if isinstance(job, dict):
                out += _job_listings(tree, wf_path, str(job_id), job, jobs, schedule, lists, families)
    return out


def _job_listings(
    tree: Tree,
    wf_path: str,
    job_id: str,
    job: dict[str, Any],
    jobs: dict[str, Any],
    schedule: str,
    lists: set[str],
    families: dict[str, str],
) -> list[Listing]:
    uses = str(job.get("uses") or "")
    reusable = uses.removeprefix("./") if uses.startswith("./.github/workflows/") else ""
    base_name = posixpath.basename(reusable)
    steps_text = json.dumps(plain(job.get("steps") or []))
    accuracy_steps = not reusable and "models/configs/" in steps_text and "matrix.model_name" in steps_text
    if not (base_name.startswith("_e2e_nightly") or base_name == "_accuracy_test.yaml" or accuracy_steps):
        return []
    with_ = job.get("with") if isinstance(job.get("with"), dict) else {}
    pr_job = "pr_only" in json.dumps(plain(job.get("strategy") or {})) or "pr-only" in job_id
    out: list[Listing] = []
    for row, where, source in _matrix_rows(tree, wf_path, job, jobs, lists):
        got = {k: render(v, row) for k, v in with_.items()} if isinstance(with_, dict) else {}
        runner = str(got.get("runner") or render(job.get("runs-on"), row) or "")
        sched = "pr" if pr_job else schedule
        lists.add(source)
        if "multi_node" in base_name:
            soc = str(got.get("soc_version") or "")
            fam = runner_family(runner, soc)
            _note_family(families, fam, where)
            size = got.get("size")
            out.append(
                Listing(
                    "multi",
                    str(got.get("config_file_path") or ""),
                    runner,
                    fam,
                    sched,
                    where,
                    source,
                    base=str(got.get("config_base_path") or "") or None,
                    soc=soc,
                    size=int(str(size)) if str(size or "").isdigit() else None,
                    job_npus=job_npus(tree, reusable, soc),
                )
            )
            continue
        fam = runner_family(runner)
        _note_family(families, fam, where)
        if "models" in base_name or base_name == "_accuracy_test.yaml" or accuracy_steps:
            models = got.get("model_list") or row.get("model_list") or [got.get("model_name") or row.get("model_name")]
            if isinstance(models, str):
                try:
                    models = json.loads(models)
                except ValueError:
                    models = [models]
            for model in models or []:
                if model:
                    out.append(Listing("accuracy", str(model), runner, fam, sched, where, source))
            continue
        if got.get("config_file_path"):
            base = str(got.get("config_base_path") or "") or None
            out.append(Listing("single", str(got["config_file_path"]), runner, fam, sched, where, source, base=base))
        if got.get("tests"):
            out.append(Listing("tests", str(got["tests"]), runner, fam, sched, where, source))
    return out


def _note_family(families: dict[str, str], family: str | None, where: str) -> None:
    if family:
        families[family] = where


# ----------------------------------------------------------------------------------------------------- records
@dataclass
class TagResult:
    tag: str
    layout: str = "accuracy-only"
    lists: set[str] = field(default_factory=set)
    parser: str = ""
    launches: dict[tuple[str, str, str], dict[str, Any]] = field(default_factory=dict)
    contents: dict[str, dict[str, Any]] = field(default_factory=dict)
    not_loadable: list[dict[str, Any]] = field(default_factory=list)
    not_read: list[dict[str, Any]] = field(default_factory=list)

    def unloadable(self, file: str, case: str | None, reason: str) -> None:
        item = {"file": file, "case": case, "reason": reason}
        if item not in self.not_loadable:
            self.not_loadable.append(item)

    def unread(self, file: str, reason: str) -> None:
        item = {"file": file, "reason": reason}
        if item not in self.not_read:
            self.not_read.append(item)


@dataclass
class Launch:
    """What one config case launches, before it is merged with the other listings of the same case."""

    file: str
    line: int
    case: str
    kind: str
    content: dict[str, Any]
    npus_said: dict[str, int | None] | None = None
    layout_npus: int | None = None


def add_launch(result: TagResult, launch: Launch, listing: Listing) -> None:
    hardware = FAMILY_HARDWARE.get(listing.family or "")
    if hardware is None:
        result.unread(launch.file, f"runner {listing.runner!r} names no known hardware family")
        return
    cid = content_id(launch.content)
    result.contents[cid] = launch.content
    key = (launch.file, launch.case, hardware)
    nodes = len({n["node"] for n in launch.content["nodes"]}) or 1
    if launch.kind == "multi-node" and launch.npus_said is not None:
        said = [v for v in launch.npus_said.values() if v is not None]
        agree = said and all(v == said[0] for v in said)
        npus = said[0] if agree else (launch.layout_npus or (said[0] if said else 0))
    elif launch.kind == "accuracy" and not listing.runner:
        npus = int(launch.content.get("llm_kwargs", {}).get("tensor_parallel_size") or 1)
    else:
        npus = runner_npus(listing.runner) or 0
    record = result.launches.get(key)
    if record is None:
        result.launches[key] = {
            "tag": result.tag,
            "file": launch.file,
            "line": launch.line,
            "case": launch.case,
            "kind": launch.kind,
            "schedule": [listing.schedule],
            "hardware": hardware,
            "runners": [listing.runner] if listing.runner else [],
            "listed_at": [listing.where],
            "npus_per_node": npus,
            "npus_said": launch.npus_said,
            "nodes": nodes,
            "content": cid,
        }
        return
    for name, value in (("schedule", listing.schedule), ("runners", listing.runner), ("listed_at", listing.where)):
        if value and value not in record[name]:
            record[name].append(value)
    record["schedule"].sort(key=("nightly", "weekly", "pr").index)


# ------------------------------------------------------------------------------------------------ parser check
class ParserCheck:
    """The real-parser snapshot of a tag's vLLM pin, or a reason there is none."""

    def __init__(self, tag: str) -> None:
        self.snapshot: Any = None
        self.note = ""
        try:
            sys.path[:0] = [str(ROOT), str(ROOT / "engine")]
            from ascendctl.facts.matrix import load_matrix, releases
            from ascendctl_engine.adapters.parser_snapshot import SnapshotMissing, snapshot_for
        except ImportError as exc:  # pragma: no cover - the project is importable where this runs
            self.note = f"parser check skipped: {exc}"
            return
        pins = [r.vllm for r in releases(load_matrix(), "npu") if r.version == tag]
        if not pins:
            self.note = "parser check skipped: the release matrix does not know this tag"
            return
        try:
            self.snapshot = snapshot_for(pins[0])
        except SnapshotMissing as exc:
            self.note = f"parser check skipped: {exc}"
            return
        self.note = f"vllm {pins[0]} real-parser snapshot ({self.snapshot.source})"

    def errors(self, argv: Sequence[str]) -> list[str]:
        if self.snapshot is None or not argv:
            return []
        # the flags after the model; an EPD command names its model with --model instead: checked whole
        tokens = list(argv[3:]) if len(argv) > 2 and not argv[2].startswith("-") else list(argv)
        problems = self.snapshot.check_argv(tokens, extra_choices={"--quantization": ["ascend"]})
        return [p.message for p in problems if p.severity == "error"]


def check_nodes(check: ParserCheck, content: dict[str, Any]) -> str | None:
    """The first parser error of any node's argv, as a reason."""
    for node in content["nodes"]:
        errors = check.errors(node["argv"])
        if errors:
            return f"node {node['node']}: vLLM's parser rejects the argv: {errors[0]}"
    return None


# ------------------------------------------------------------------------------------------------ single node
@dataclass(frozen=True)
class SingleNodeRules:
    """What a tag's single_node_config.py checks and fills."""

    base: str = SINGLE_NODE_DEFAULT_BASE
    port_keys: tuple[str, ...] = PORT_KEYS
    epd: bool = True
    extra: bool = True

    @classmethod
    def from_source(cls, src: str | None) -> SingleNodeRules:
        if src is None:
            return cls()
        base = re.search(r'CONFIG_BASE_PATH\s*=\s*(?:os\.getenv\([^)]*\)\s*or\s*)?"([^"]+)"', src)
        ports = re.search(r"port_keys\s*=\s*\[([^\]]*)\]", src)
        keys = tuple(re.findall(r'"(\w+)"', ports.group(1))) if ports else ("SERVER_PORT",)
        return cls(
            base=base.group(1) if base else SINGLE_NODE_DEFAULT_BASE,
            port_keys=keys,
            epd="epd_server_cmds" in src,
            extra="server_cmd_extra" in src,
        )


def single_node_cases(text: str, rules: SingleNodeRules) -> list[dict[str, Any]]:
    """The `test_cases` the loader accepts (LoadError: the whole file is refused, as the loader raises)."""
    config = load_yaml(text)
    if not isinstance(config, dict) or "test_cases" not in config:
        raise LoadError("test_cases field is required in config yaml")
    cases = config.get("test_cases")
    if not isinstance(cases, list):
        raise LoadError("test_cases must be a list")
    if not cases:
        raise LoadError("test_cases is empty")
    for case in cases:
        if not isinstance(case, dict):
            raise LoadError("a test case is not a mapping")
        mode = case.get("service_mode", "openai")
        required = ["name", "model", "envs"]
        required += ["epd_server_cmds", "epd_proxy_args"] if mode == "epd" and rules.epd else ["server_cmd"]
        missing = [k for k in required if k not in case]
        if missing:
            raise LoadError(f"Missing required config fields: {missing} (case {case.get('name')!r})")
        if not isinstance(case["name"], str) or not case["name"].strip():
            raise LoadError("test case field 'name' must be a non-empty string")
    return cases


def single_node_content(case: dict[str, Any], rules: SingleNodeRules) -> dict[str, Any]:
    """The launch of one accepted test case (LoadError when the runner cannot start it)."""
    model = str(case["model"])
    envs = dict(case.get("envs") or {})
    stand_in = FIRST_STAND_IN_PORT
    filled: list[str] = []
    for key in rules.port_keys:
        if envs.get(key) in ("DEFAULT_PORT", None):
            envs[key] = str(stand_in)
            filled.append(key)
            stand_in += 1
    bad = sorted(k for k, v in envs.items() if not isinstance(v, str))
    if bad:
        raise LoadError(
            f"envs {', '.join(bad)} are not strings ({type(envs[bad[0]]).__name__}): the runner hands envs to "
            "subprocess.Popen unchanged, which rejects them"
        )
    env = {str(k): v for k, v in envs.items()}
    mode = case.get("service_mode", "openai")
    if mode == "epd" and rules.epd:
        cmds = [[expand_vars(str(a), env) for a in cmd] for cmd in case.get("epd_server_cmds") or []]
        argvs = [["vllm", "serve", *cmd] for cmd in cmds]
        used_text = json.dumps([case.get("epd_server_cmds"), case.get("epd_proxy_args")])
    else:
        raw = list(case.get("server_cmd") or [])
        if rules.extra:
            raw += list(case.get("server_cmd_extra") or [])
        argvs = [["vllm", "serve", model, *(expand_vars(str(a), env) for a in raw)]]
        used_text = json.dumps(raw) + " $SERVER_PORT"
    used = {m.group(1) or m.group(2) for m in _VAR.finditer(used_text)}
    open_ports = [k for k in filled if k in used]
    nodes = [{"node": 0, "role": None, "argv": argv, "env": env, "injected_env": dict(SPAWN)} for argv in argvs]
    return {
        "model": model,
        "nodes": nodes,
        "open_ports": open_ports,
        "benchmarks": benchmarks_of(case.get("benchmarks")),
    }


def read_single_node(
    result: TagResult, tree: Tree, listing: Listing, check: ParserCheck, rules: SingleNodeRules
) -> str:
    path = posixpath.normpath(posixpath.join(listing.base or rules.base, listing.config))
    text = tree.read(path)
    if text is None:
        result.unloadable(path, None, missing_reason(listing.config, path))
        return path
    try:
        cases = single_node_cases(text, rules)
    except LoadError as exc:
        result.unloadable(path, None, str(exc))
        return path
    for case in cases:
        name = str(case["name"])
        try:
            content = single_node_content(case, rules)
        except LoadError as exc:
            result.unloadable(path, name, str(exc))
            continue
        reason = check_nodes(check, content)
        if reason:
            result.unloadable(path, name, reason)
            continue
        add_launch(result, Launch(path, line_of(case), name, "single-node", content), listing)
    return path


def missing_reason(name: str, path: str) -> str:
    """Why a listed config cannot be opened: the resolved path does not exist (an invisible character, say)."""
    hidden = [f"U+{ord(c):04X}" for c in name if c in "\u200b\u200c\u200d\u200e\u200f\ufeff"]
    tail = f"; the name ends in an invisible {', '.join(hidden)}" if hidden else ""
    return f"the CI list names {name!r}, resolved to {path!r}, which does not exist at this tag{tail}"


# ------------------------------------------------------------------------------------------------- multi-node
@dataclass(frozen=True)
class MultiNodeRules:
    """What a tag's internal-DP multi_node_config.py reads and injects."""

    base: str
    common_envs: bool
    node_envs: bool
    node_envs_required: bool
    required: tuple[str, ...]
    ld_library_path: bool
    strict_disagg: bool

    @classmethod
    def from_source(cls, src: str, utils: str | None) -> MultiNodeRules:
        base = re.search(r'CONFIG_BASE_PATH\s*=\s*"([^"]+)"', src) or re.search(
            r'CONFIG_BASE_PATH\s*=\s*"([^"]+)"', utils or ""
        )
        return cls(
            base=base.group(1) if base else "tests/e2e/nightly/multi_node/config/",
            common_envs='"env_common"' in src,
            node_envs='deploy.get("envs"' in src or 'deploy["envs"]' in src,
            node_envs_required="envs is required" in src,
            required=required_fields(src),
            ld_library_path='"LD_LIBRARY_PATH"' in src,
            strict_disagg="_validate(" in src,
        )


def required_fields(src: str) -> tuple[str, ...]:
    """The `required = [...]` list of the loader's `_validate_root`."""
    try:
        module = ast.parse(src)
    except SyntaxError:
        return ()
    for node in ast.walk(module):
        if isinstance(node, ast.FunctionDef) and node.name == "_validate_root":
            for sub in ast.walk(node):
                if isinstance(sub, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "required" for t in sub.targets
                ):
                    try:
                        return tuple(ast.literal_eval(sub.value))
                    except ValueError:
                        return ()
    return ()


def _size(argv: Sequence[str], *names: str) -> int | None:
    for i, tok in enumerate(argv):
        for name in names:
            if tok == name and i + 1 < len(argv) and argv[i + 1].isdigit():
                return int(argv[i + 1])
            if tok.startswith(name + "=") and tok.split("=", 1)[1].isdigit():
                return int(tok.split("=", 1)[1])
    return None


def argv_npus(argv: Sequence[str]) -> int:
    """NPUs one serve process takes: TP × PP × PCP × local DP (DP local defaults to DP when not split)."""
    tp = _size(argv, "--tensor-parallel-size", "-tp") or 1
    pp = _size(argv, "--pipeline-parallel-size", "-pp") or 1
    pcp = _size(argv, "--prefill-context-parallel-size", "-pcp") or 1
    local = _size(argv, "--data-parallel-size-local", "-dpl")
    if local is None:
        external = _size(argv, "--data-parallel-rank", "-dpn") is not None
        local = 1 if external else (_size(argv, "--data-parallel-size", "-dp") or 1)
    return tp * pp * pcp * local


def layout_npus(nodes: list[dict[str, Any]]) -> int:
    per: dict[int, int] = {}
    for node in nodes:
        per[node["node"]] = per.get(node["node"], 0) + argv_npus(node["argv"])
    return max(per.values()) if per else 0


def internal_dp_content(config: Any, rules: MultiNodeRules) -> dict[str, Any]:
    """One launch per node, as the internal-DP runner starts it."""
    if not isinstance(config, dict):
        raise LoadError("config must be a mapping")
    missing = [k for k in rules.required if k not in config]
    if missing:
        raise LoadError(f"Missing required config fields: {missing}")
    num_nodes = config.get("num_nodes", 2)
    deployments = config.get("deployment") or []
    if not isinstance(deployments, list) or len(deployments) != num_nodes:
        raise LoadError(
            f"deployment size ({len(deployments) if isinstance(deployments, list) else 0}) != num_nodes ({num_nodes})"
        )
    common = dict(config.get("env_common") or {}) if rules.common_envs else {}
    disagg = config.get("disaggregated_prefill")
    prefill: list[int] = []
    decode: list[int] = []
    if disagg:
        prefill = list(disagg.get("prefiller_host_index") or [])
        decode = list(disagg.get("decoder_host_index") or [])
        if not decode:
            raise LoadError("decoder_host_index must be provided")
        if rules.strict_disagg:
            if set(prefill) & set(decode):
                raise LoadError(f"Prefiller and decoder overlap: {set(prefill) & set(decode)}")
            if any(i >= num_nodes for i in prefill + decode):
                raise LoadError("Disaggregated prefill index out of range")
    nodes = []
    for idx, deploy in enumerate(deployments):
        if not isinstance(deploy, dict):
            raise LoadError(f"deployment[{idx}] is not a mapping")
        if rules.node_envs_required and deploy.get("envs") is None:
            raise LoadError(f"deployment[{idx}].envs is required for multi-node configs")
        own = dict(deploy.get("envs") or {}) if rules.node_envs else {}
        env = {str(k): str(v) for k, v in {**common, **own}.items()}
        role = None
        master = 0
        if disagg:
            is_prefill = idx in prefill if rules.strict_disagg else idx < decode[0]
            role = "prefill" if is_prefill else ("decode" if idx in decode or not rules.strict_disagg else None)
            master = 0 if is_prefill else decode[0]
        injected = {**dist_envs(idx, master), **SPAWN}
        if rules.ld_library_path:
            injected["LD_LIBRARY_PATH"] = f"{ASCEND_SITE}:{env.get('LD_LIBRARY_PATH', '$LD_LIBRARY_PATH')}"
        full = {**env, **{k: v for k, v in injected.items() if k != "VLLM_WORKER_MULTIPROC_METHOD"}}
        cmd = expand_vars(str(deploy.get("server_cmd") or ""), full)
        try:
            argv = shlex.split(cmd)
        except ValueError as exc:
            raise LoadError(f"deployment[{idx}].server_cmd cannot be split: {exc}") from exc
        nodes.append({"node": idx, "role": role, "argv": argv, "env": env, "injected_env": injected})
    return {
        "model": str(config.get("model", "")),
        "nodes": nodes,
        "open_ports": [],
        "benchmarks": benchmarks_of(config.get("benchmarks")),
    }


def external_dp_content(config: Any, routing_types: frozenset[str]) -> dict[str, Any]:
    """One launch per data-parallel rank process, as external_dp/scripts/runtime.py renders it."""
    if not isinstance(config, dict):
        raise LoadError("external DP config must be a mapping")
    required = ["model", "num_nodes", "npu_per_node", "routing", "config", "templates", "benchmarks"]
    missing = [k for k in required if k not in config]
    if missing:
        raise LoadError(f"Missing required external DP config fields: {missing}")
    try:
        return _external_dp(config, routing_types)
    except (KeyError, ValueError, TypeError, AttributeError) as exc:
        raise LoadError(f"external DP loader/runtime refuses it: {type(exc).__name__}: {exc}") from exc


def _cluster(value: str, ips: list[str], node: int) -> str:
    def repl(m: re.Match[str]) -> str:
        token, idx = m.group(1), m.group(2)
        if idx is not None:
            if int(idx) >= len(ips):
                raise ValueError(f"Cluster placeholder ${{{token}}} is out of range")
            return ips[int(idx)]
        return {"MASTER_IP": ips[0], "LOCAL_IP": ips[node], "LWS_WORKER_INDEX": str(node)}.get(token, m.group(0))

    return _CLUSTER.sub(repl, value)


def _external_dp(config: dict[str, Any], routing_types: frozenset[str]) -> dict[str, Any]:
    num_nodes = int(config["num_nodes"])
    npu_per_node = int(config["npu_per_node"])
    ips = [doc_ip(i) for i in range(num_nodes)]
    model = str(config["model"])
    routing = config["routing"]
    if str(routing["type"]) not in routing_types:
        raise ValueError(f"Unsupported routing.type: {routing['type']}")
    groups = {str(k): [int(i) for i in v] for k, v in (routing.get("groups") or {}).items()}
    role_of: dict[int, str] = {}
    for role, indices in groups.items():
        for i in indices:
            if i < 0 or i >= num_nodes:
                raise ValueError(f"routing.groups.{role} index out of range: {i}")
            if i in role_of:
                raise ValueError(f"node index {i} appears in both {role_of[i]} and {role}")
            role_of[i] = role
    if routing["type"] == "disaggregated_prefill" and (not groups.get("prefiller") or not groups.get("decoder")):
        raise ValueError("disaggregated_prefill routing requires prefiller and decoder groups")
    if len(config["config"]) != num_nodes or len(config["templates"]) != num_nodes:
        raise ValueError(f"config / templates size != num_nodes ({num_nodes})")
    missing = [i for i in range(num_nodes) if i not in role_of]
    if missing:
        raise ValueError(f"routing.groups does not assign role for node indices: {missing}")
    nodes: list[dict[str, Any]] = []
    for index, raw in enumerate(config["config"]):
        if raw.get("node_index") is not None and int(raw["node_index"]) != index:
            raise ValueError(f"config[{index}].node_index must equal {index}")
        info = {k: _cluster(v, ips, index) if isinstance(v, str) else v for k, v in raw.items()}
        sizes = {
            k: int(info.get(k, 1)) for k in ("dp_size", "dp_size_local", "tp_size", "cp_size", "sp_size", "pp_size")
        }
        if any(v < 1 for v in sizes.values()):
            raise ValueError(f"node {index} parallel sizes must be >= 1")
        per_rank = sizes["tp_size"] * sizes["cp_size"] * sizes["sp_size"] * sizes["pp_size"]
        if sizes["dp_size_local"] * per_rank > npu_per_node:
            raise ValueError(
                f"node {index} uses {sizes['dp_size_local'] * per_rank} NPUs, but npu_per_node is {npu_per_node}"
            )
        rank_start = int(info.get("dp_rank_start", 0))
        if rank_start + sizes["dp_size_local"] > sizes["dp_size"]:
            raise ValueError(f"node {index} dp rank range exceeds dp_size")
        template = config["templates"][index]
        if template.get("envs") is None or template.get("server_cmd_template") is None:
            raise KeyError(f"templates[{index}] must contain envs and server_cmd_template")
        if not isinstance(template["server_cmd_template"], list):
            raise TypeError(f"templates[{index}].server_cmd_template must be a list")
        injected = dist_envs(index, 0)
        node_role: str | None = {"prefiller": "prefill", "decoder": "decode"}.get(role_of[index])
        for local in range(sizes["dp_size_local"]):
            port = int(info["port_start"]) + local
            variables = {
                "MODEL": model,
                "PORT_START": str(int(info["port_start"])),
                "PORT": str(port),
                "DP_SIZE": str(sizes["dp_size"]),
                "DP_SIZE_LOCAL": str(sizes["dp_size_local"]),
                "DP_RANK_START": str(rank_start),
                "DP_RANK": str(rank_start + local),
                "LOCAL_RANK": str(local),
                "TP_SIZE": str(sizes["tp_size"]),
                "CP_SIZE": str(sizes["cp_size"]),
                "SP_SIZE": str(sizes["sp_size"]),
                "PP_SIZE": str(sizes["pp_size"]),
                "DP_ADDRESS": str(info["dp_address"]),
                "DP_RPC_PORT": str(int(info["dp_rpc_port"])),
                "VISIBLE_DEVICES": ",".join(str(d) for d in range(local * per_rank, (local + 1) * per_rank)),
                "NODE_INDEX": str(index),
                "CONFIG_INDEX": str(index),
            }
            merged = {**dict(template["envs"]), **injected}
            rendered: dict[str, str] = {}
            for key, value in merged.items():
                if isinstance(value, str):
                    value = _render(value, ips, index, variables, rendered, allow_missing=True)
                rendered[str(key)] = str(value)
            argv = [
                "vllm",
                "serve",
                model,
                *(
                    _render(str(a), ips, index, variables, rendered, allow_missing=False)
                    for a in template["server_cmd_template"]
                ),
            ]
            env = {k: v for k, v in rendered.items() if k in {str(x) for x in template["envs"]}}
            nodes.append({"node": index, "role": node_role, "argv": argv, "env": env, "injected_env": injected})
    return {"model": model, "nodes": nodes, "open_ports": [], "benchmarks": benchmarks_of(config.get("benchmarks"))}


def _render(
    value: str, ips: list[str], node: int, variables: dict[str, str], env: dict[str, str], *, allow_missing: bool
) -> str:
    value = _cluster(value, ips, node)

    def braced(m: re.Match[str]) -> str:
        if m.group(1) not in variables:
            raise KeyError(f"Unknown external DP template variable: {m.group(1)}")
        return variables[m.group(1)]

    def unbraced(m: re.Match[str]) -> str:
        if m.group(1) in env:
            return env[m.group(1)]
        if allow_missing:
            return m.group(0)  # the container's own environment: kept as written
        raise KeyError(f"Unknown external DP template variable: {m.group(1)}")

    return _ENV_VAR.sub(unbraced, _TEMPLATE_VAR.sub(braced, value))


def read_multi_node(result: TagResult, tree: Tree, listing: Listing, check: ParserCheck) -> str | None:
    loader_path = next((p for p in MULTI_NODE_LOADERS if tree.has(p)), None)
    if loader_path is None:
        return None
    rules = MultiNodeRules.from_source(tree.read(loader_path) or "", tree.read(MULTI_NODE_UTILS))
    base = listing.base or rules.base
    path = posixpath.normpath(posixpath.join(base, listing.config))
    text = tree.read(path)
    if text is None:
        result.unloadable(path, None, missing_reason(listing.config, path))
        return path
    external = "external_dp/config" in path
    try:
        config = load_yaml(text)
        if external:
            src = tree.read(EXTERNAL_DP_LOADER) or ""
            types = {"disaggregated_prefill"} | ({"generic_dp"} if "ROUTING_GENERIC_DP:" in src else set())
            content = external_dp_content(config, frozenset(types))
        else:
            content = internal_dp_content(config, rules)
    except LoadError as exc:
        result.unloadable(path, None, str(exc))
        return path
    case = str(config.get("test_name") or posixpath.splitext(posixpath.basename(path))[0])
    reason = check_nodes(check, content)
    if reason:
        result.unloadable(path, case, reason)
        return path
    said_config = config.get("npu_per_node")
    said = {"job": listing.job_npus, "config": int(said_config) if isinstance(said_config, int) else None}
    launch = Launch(path, 1, case, "multi-node", content, npus_said=said, layout_npus=layout_npus(content["nodes"]))
    add_launch(result, launch, listing)
    return path


# --------------------------------------------------------------------------------------------------- accuracy
def accuracy_content(config: Any) -> dict[str, Any]:
    if not isinstance(config, dict) or "model_name" not in config:
        raise LoadError("accuracy config without model_name")
    serve = config.get("serve")
    kwargs = dict(serve) if isinstance(serve, dict) else {k: v for k, v in config.items() if k not in ACCURACY_META}
    return {
        "model": str(config["model_name"]),
        "nodes": [{"node": 0, "role": None, "argv": [], "env": {}, "injected_env": {}}],
        "llm_kwargs": plain(kwargs),
        "open_ports": [],
        "benchmarks": accuracy_benchmarks(config),
    }


def accuracy_family(hardware: Any) -> str | None:
    text = str(hardware or "").lower()
    for needle, hw in ACCURACY_HARDWARE:
        if needle in text:
            return {"a2": "a2", "a3": "a3", "300i-duo": "310p"}[hw]
    return None


def read_accuracy(result: TagResult, tree: Tree, listing: Listing) -> str:
    path = f"{ACCURACY_DIR}/{listing.config}.yaml"
    text = tree.read(path)
    if text is None:
        result.unloadable(path, None, missing_reason(listing.config, path))
        return path
    try:
        config = load_yaml(text)
        content = accuracy_content(config)
    except LoadError as exc:
        result.unloadable(path, None, str(exc))
        return path
    add_launch(result, Launch(path, 1, listing.config, "accuracy", content), listing)
    return path


# ----------------------------------------------------------------------------------------------- pytest files
def literal_launch(src: str) -> tuple[str, list[str], dict[str, str]] | str:
    """(model, args, env) of a pytest file whose RemoteOpenAIServer call is all literals, else the reason."""
    try:
        module = ast.parse(src)
    except SyntaxError as exc:
        return f"not valid Python: {exc.msg}"
    calls = [
        n
        for n in ast.walk(module)
        if isinstance(n, ast.Call) and getattr(n.func, "id", getattr(n.func, "attr", "")) == "RemoteOpenAIServer"
    ]
    if not calls:
        return "no RemoteOpenAIServer launch in the file (not a serve test)"
    if len(calls) > 1:
        return f"{len(calls)} RemoteOpenAIServer launches built at run time"
    call = calls[0]
    assigned: dict[str, list[ast.expr]] = {}
    for node in ast.walk(module):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    assigned.setdefault(target.id, []).append(node.value)

    def literal(expr: ast.expr | None) -> Any:
        if isinstance(expr, ast.Name) and len(assigned.get(expr.id, [])) == 1:
            expr = assigned[expr.id][0]
        if expr is None:
            return None
        try:
            return ast.literal_eval(expr)
        except ValueError:
            return None

    args = literal(
        call.args[1]
        if len(call.args) > 1
        else next((k.value for k in call.keywords if k.arg == "vllm_serve_args"), None)
    )
    model = literal(call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "model"), None))
    env = literal(next((k.value for k in call.keywords if k.arg == "env_dict"), None)) or {}
    mutated = any(isinstance(n, ast.Attribute) and n.attr in ("append", "extend", "insert") for n in ast.walk(module))
    if not isinstance(model, str) or not isinstance(args, list) or not all(isinstance(a, str) for a in args) or mutated:
        return "server argv built at run time (parametrized / computed), not a literal list"
    return model, list(args), {str(k): str(v) for k, v in dict(env).items()}


def read_tests(result: TagResult, tree: Tree, listing: Listing, check: ParserCheck) -> str:
    path = listing.config.rstrip("/")
    if not tree.has(path):
        reason = (
            "pytest directory target (op / functional tests), not a launch config"
            if tree.is_dir(path)
            else ("the listed pytest target does not exist at this tag")
        )
        result.unread(path, reason)
        return path
    got = literal_launch(tree.read(path) or "")
    if isinstance(got, str):
        result.unread(path, got)
        return path
    model, args, env = got
    content = {
        "model": model,
        "nodes": [
            {"node": 0, "role": None, "argv": ["vllm", "serve", model, *args], "env": env, "injected_env": dict(SPAWN)}
        ],
        "open_ports": [],
        "benchmarks": {"accuracy": [], "performance": []},
    }
    problem = check_nodes(check, content)
    if problem:
        result.unloadable(path, None, problem)
        return path
    add_launch(result, Launch(path, 1, posixpath.basename(path), "single-node", content), listing)
    return path


# ------------------------------------------------------------------------------------------------------- a tag
def extract_tag(tree: Tree, families: dict[str, str], check: ParserCheck | None = None) -> TagResult:
    result = TagResult(tree.tag)
    check = check or ParserCheck(tree.tag)
    result.parser = check.note
    listings = workflow_listings(tree, result.lists, families)
    touched: set[str] = set()
    rules = SingleNodeRules.from_source(tree.read(SINGLE_NODE_LOADER))
    has_accuracy_list = any(item.kind == "accuracy" for item in listings)
    for item in listings:
        got: str | None
        if item.kind == "single":
            got = read_single_node(result, tree, item, check, rules)
        elif item.kind == "multi":
            got = read_multi_node(result, tree, item, check)
        elif item.kind == "accuracy":
            got = read_accuracy(result, tree, item)
        else:
            got = read_tests(result, tree, item, check)
        if got:
            touched.add(got)
    if not has_accuracy_list:
        for path in tree.listdir(ACCURACY_DIR):
            _accuracy_by_hardware(result, tree, path, touched)
    broken = broken_multi_node_workflow(tree)
    for folder in CONFIG_DIRS:
        for path in tree.listdir(folder):
            if path in touched:
                continue
            if broken and "/multi_node/" in path:
                result.unread(path, broken)
            else:
                result.unread(path, "listed in no CI list")
    sources = {s.split(":", 1)[1] for s in result.lists}
    if any(s.startswith(WORKFLOWS + "configs/") for s in sources):
        result.layout = "config-lists"
    elif any(item.kind in ("single", "multi", "tests") for item in listings):
        result.layout = "schedule-workflows"
    return result


def _accuracy_by_hardware(result: TagResult, tree: Tree, path: str, touched: set[str]) -> None:
    try:
        config = load_yaml(tree.read(path) or "")
        content = accuracy_content(config)
    except LoadError as exc:
        result.unloadable(path, None, str(exc))
        touched.add(path)
        return
    family = accuracy_family(config.get("hardware"))
    if family is None:
        return
    result.lists.add(f"{tree.tag}:{path} (no CI list: its own hardware field)")
    listing = Listing("accuracy", path, "", family, "pr", f"{tree.tag}:{path}:1", f"{tree.tag}:{path}")
    add_launch(result, Launch(path, 1, posixpath.basename(path)[:-5], "accuracy", content), listing)
    touched.add(path)


def broken_multi_node_workflow(tree: Tree) -> str | None:
    """The v0.11 multi-node workflow names scripts that do not exist at the tag: why its configs are not read."""
    path = WORKFLOWS + "multi_node_test.yaml"
    text = tree.read(path)
    if text is None:
        return None
    named = sorted(set(re.findall(r"(tests/e2e/[\w/]+\.(?:sh|yaml))", text)))
    missing = [p for p in named if not tree.has(p)]
    if not missing:
        return None
    return f"run only by {path}, which uses {', '.join(missing)}: not at this tag, so the job cannot run"


# ---------------------------------------------------------------------------------------------------- output
def tag_record(result: TagResult) -> dict[str, Any]:
    launches = list(result.launches.values())
    multi = [item for item in launches if item["kind"] == "multi-node"]
    pd = [
        item
        for item in launches
        if any(n["role"] in ("prefill", "decode") for n in result.contents[item["content"]]["nodes"])
    ]
    return {
        "layout": result.layout,
        "lists": sorted(result.lists),
        "parser": result.parser,
        "counts": {
            "launches": len(launches),
            "multi_node": len(multi),
            "pd": len(pd),
            "not_loadable": len(result.not_loadable),
            "not_read": len(result.not_read),
        },
        "not_loadable": sorted(result.not_loadable, key=lambda d: (d["file"], d["case"] or "")),
        "not_read": sorted(result.not_read, key=lambda d: (d["file"], d["reason"])),
    }


def build(results: Iterable[TagResult], families: dict[str, str]) -> dict[str, Any]:
    tags: dict[str, Any] = {}
    contents: dict[str, Any] = {}
    launches: list[dict[str, Any]] = []
    for result in results:
        tags[result.tag] = tag_record(result)
        contents.update(result.contents)
        launches += result.launches.values()
    launches.sort(key=lambda d: (version_key(d["tag"]), d["file"], d["case"], d["hardware"]))
    used = {item["content"] for item in launches}
    return {
        "schema": SCHEMA,
        "generated_by": GENERATED_BY,
        "runner_families": {
            fam: {"hardware": FAMILY_HARDWARE[fam], "source": where} for fam, where in sorted(families.items())
        },
        "tags": tags,
        "contents": {k: v for k, v in sorted(contents.items()) if k in used},
        "launches": launches,
    }


def dump(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--repo", type=Path, default=DEFAULT_REPO, help="vllm-ascend git repository, bare is fine")
    parser.add_argument("--tags", nargs="*", help=f"tags to extract (default: every tag {FIRST_TAG} … {LAST_TAG})")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output file (default: %(default)s)")
    parser.add_argument(
        "--check", action="store_true", help="compare with --out and write nothing (exit 1 if it differs)"
    )
    args = parser.parse_args(argv)
    tags = list(args.tags or release_tags(args.repo, FIRST_TAG, LAST_TAG))
    families: dict[str, str] = {}
    results = []
    for tag in sorted(tags, key=version_key):
        result = extract_tag(git_tree(args.repo, tag), families)
        counts = tag_record(result)["counts"]
        print(
            f"{tag:<12} {result.layout:<18} launches={counts['launches']:<3} multi={counts['multi_node']:<3} "
            f"pd={counts['pd']:<3} not_loadable={counts['not_loadable']:<3} not_read={counts['not_read']}",
            file=sys.stderr,
            flush=True,
        )
        results.append(result)
    data = build(results, families)
    text = dump(data)
    for tag, record in data["tags"].items():
        counts = record["counts"]
        print(f"{tag:<12} " + " ".join(f"{k}={v}" for k, v in counts.items()))
    if args.check:
        current = args.out.read_text(encoding="utf-8") if args.out.exists() else ""
        same = current == text
        print(f"{args.out}: {'up to date' if same else 'differs from a fresh extraction'}")
        return 0 if same else 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    size = len(text.encode())
    print(f"{args.out}: {size} bytes ({size / 1e6:.2f} MB){' — over the 4 MB budget' if size > MAX_BYTES else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
