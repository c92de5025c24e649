"""What a planned command still differs from an operator's script: flag by flag, env by env, each with why.

Both sides are read the way the release's vLLM reads them: every spelling of an option (`-tp 4`,
`--tensor_parallel_size=4`, `--tensor-parallel-size 4`) is the option of the release's real-parser snapshot; a
switch is True (`--no-X` / `--disable-X` False); a JSON option is its parsed object, dotted keys folded in
(`--compilation-config.level 3`); other values compare as text. "Reproduced" means the script's options and env
all appear in the plan with the same values; what the plan adds beyond the script is listed with its reason (the
plan's provenance: a default ascendctl adds) and does not count.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Literal

from ascendctl_engine.adapters.parser_snapshot import ParserSnapshot
from ascendctl_engine.argv_items import parse_args
from ascendctl_engine.records import record

MODEL_KEY = "<model>"
Kind = Literal["flag", "env"]
# missing: the script has it, the plan not; differs: both, other values; added: the plan only (a default it adds);
# default: the script writes the release's own default of an option the plan leaves out (vLLM reads the same)
# ignored: an option vLLM does not use where the node runs: an API-server option on a headless node, the
# data-parallel wiring of an instance whose ranks all run on one node
# respelled: a vllm-ascend switch the plan spells another way the release also reads, meaning the same
# (`ascendctl.importer.switches`)
# derived: a value the plan derives per instance (a KV port, an engine id, the API port of a role's next instance)
# where the scripts chose another, consistent one (`ascendctl.importer.kv_compare`)
# regrouped: what planning external data-parallel ranks as one process per host changed (`importer.deployment`)
Verdict = Literal["missing", "differs", "added", "default", "ignored", "respelled", "derived", "regrouped"]
# the verdicts that do not keep a script from being reproduced
_AGREE = ("added", "default", "ignored", "respelled", "derived", "regrouped")


@record
class Difference:
    """One option or variable the plan and the script do not agree on."""

    kind: Kind
    name: str  # the option's long flag (`--tensor-parallel-size`), `<model>`, or the variable
    verdict: Verdict
    planned: Any
    script: Any
    why: str  # the plan's provenance for what it emits ("" when it emits nothing)

    @property
    def counts(self) -> bool:
        """Whether it keeps the script from being reproduced (what the plan adds on its own does not)."""
        return self.verdict not in _AGREE

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "name": self.name,
            "verdict": self.verdict,
            "counts": self.counts,
            "planned": self.planned,
            "script": self.script,
            "why": self.why,
        }

    def line(self) -> str:
        show = {
            "missing": f"script {self.script!r}, plan omits it",
            "differs": "",
            "added": f"plan {self.planned!r}",
            "default": f"script {self.script!r} is the release's default; the plan leaves it to vLLM",
            "ignored": f"script {self.script!r}: not used there, the plan leaves it out",
            "respelled": (
                f"{'on' if self.script else 'off'} in both"
                if isinstance(self.script, bool)
                else f"plan {self.planned!r}, script {self.script!r}: the same"
            ),
            "derived": f"script {self.script!r}, plan {self.planned!r}",
            "regrouped": f"script {self.script!r}" if self.script is not None else f"plan {self.planned!r}",
        }
        text = show[self.verdict] or f"plan {self.planned!r}, script {self.script!r}"
        reason = f" ({self.why})" if self.why else ""
        return f"{self.kind} {self.name}: {self.verdict}: {text}{reason}"


def options(argv: Sequence[str], snapshot: ParserSnapshot) -> dict[str, Any]:
    """`vllm serve` arguments (after `serve`) as {long flag: value}; the positional model under `<model>`."""
    tokens = list(argv)
    out: dict[str, Any] = {}
    if tokens and not tokens[0].startswith("-"):
        out[MODEL_KEY] = tokens.pop(0)
    for item in parse_args(tokens):
        opt = snapshot.option(item.tokens[0])
        name = opt.flag if opt is not None else item.flag
        if opt is not None and item.flag in opt.negative:
            out[name] = False
        elif item.key is not None:
            folded = out.setdefault(name, {})
            if isinstance(folded, dict):
                _fold(folded, item.key, item.value)
        elif not item.values:
            out[name] = True
        elif opt is not None and opt.json:
            out[name] = _json_or_text(item.values[0])
        else:
            out[name] = item.values[0] if len(item.values) == 1 else tuple(item.values)
    return out


def _fold(target: dict[str, Any], dotted: str, value: str | None) -> None:
    *parents, leaf = dotted.split(".")
    for part in parents:
        target = target.setdefault(part, {})
    target[leaf] = _json_or_text(value) if value is not None else True


def _json_or_text(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def compare(
    planned_argv: Sequence[str],
    planned_env: Mapping[str, str],
    script_argv: Sequence[str],
    script_env: Mapping[str, str],
    snapshot: ParserSnapshot,
    provenance: Mapping[str, str],
    *,
    headless: bool = False,
    one_node: bool = False,
) -> list[Difference]:
    """Every difference between one node's planned command (argv after `vllm serve`) and its script; `one_node`:
    the command runs all its instance's data-parallel ranks on its own node."""
    planned, script = options(planned_argv, snapshot), options(script_argv, snapshot)
    flags = [_as_default(d, snapshot) for d in _diff("flag", planned, script, lambda name: provenance.get(name, ""))]
    flags = [_on_headless(d, snapshot) if headless else _head_start(d) for d in flags]
    if one_node:
        flags = [_on_one_node(d, planned.get(DP_SIZE, 1)) for d in flags]
    return flags + _diff("env", dict(planned_env), dict(script_env), lambda name: provenance.get(f"env:{name}", ""))


def _on_headless(d: Difference, snapshot: ParserSnapshot) -> Difference:
    if d.verdict == "missing" and snapshot.is_api_server_flag(d.name):
        return replace(d, verdict="ignored", why="a headless node serves no API")
    return d


DP_SIZE = "--data-parallel-size"
# With every data-parallel rank on one node vLLM takes the local size to be the whole size
# (vLLM 0.32.0:vllm/engine/arg_utils.py:2494) and its engines hand-shake over local IPC, never the RPC port or the
# address (0.32.0:vllm/v1/engine/utils.py:1307, `handshake_local_only`; vllm/v1/utils.py:153).
_LOCAL_IPC = "one node: its engines hand-shake over local IPC (vLLM 0.32.0:vllm/v1/engine/utils.py:1307)"
_ONE_NODE_UNUSED = {"--data-parallel-rpc-port": _LOCAL_IPC, "--data-parallel-address": _LOCAL_IPC}


def _head_start(d: Difference) -> Difference:
    """A head's `--data-parallel-start-rank 0`: the head holds the first ranks (vLLM's own start)."""
    if d.verdict == "missing" and d.name == "--data-parallel-start-rank" and _same(str(d.script), "0"):
        return replace(d, verdict="default", why="the head's ranks start at 0")
    return d


def _on_one_node(d: Difference, data: Any) -> Difference:
    if d.verdict != "missing":
        return d
    if d.name == "--data-parallel-size-local" and _same(str(d.script), str(data)):
        why = "one node: vLLM's local size is the data-parallel size (vLLM 0.32.0:vllm/engine/arg_utils.py:2494)"
        return replace(d, verdict="default", why=why)
    unused = _ONE_NODE_UNUSED.get(d.name)
    return replace(d, verdict="ignored", why=unused) if unused is not None else d


def _as_default(d: Difference, snapshot: ParserSnapshot) -> Difference:
    """A `missing` option whose script value is the release parser's own default is no difference vLLM sees."""
    if d.verdict != "missing":
        return d
    opt = snapshot.option(d.name)
    if opt is None or opt.default is None or str(opt.default).startswith("repr:"):
        return d
    default = opt.default
    if isinstance(d.script, bool):
        same = isinstance(default, bool) and d.script == default  # `--no-X` where X is off by default
    else:
        same = _same(str(d.script), str(default))
    return replace(d, verdict="default") if same else d


def env_same(name: str, planned: str | None, script: str | None) -> bool:
    """Two values of variable `name` its reader takes alike: OpenMP reads its variables' values ignoring case and
    surrounding blanks (the OpenMP specification, "Environment Variables"); a boolean read by lower-casing its
    text (`_TRUE_WORDS`) is the same boolean in any case."""
    if planned is None or script is None:
        return planned == script
    if name.startswith("OMP_"):
        return planned.strip().lower() == script.strip().lower()
    if name in _TRUE_WORDS:
        true = _TRUE_WORDS[name]
        return (planned.strip().lower() in true) == (script.strip().lower() in true)
    return _same(planned, script)


# Variables read as a boolean by lower-casing the text: the words that mean true.
_TRUE_WORDS = {
    "VLLM_USE_MODELSCOPE": ("1", "true"),  # vLLM 0.32.0:vllm/envs.py:734-736
    "DYNAMIC_EPLB": ("true", "1"),  # v0.25.1rc1:vllm_ascend/ascend_config.py:818
}


def _diff(kind: Kind, planned: Mapping[str, Any], script: Mapping[str, Any], why: Any) -> list[Difference]:
    out: list[Difference] = []
    for name in sorted(set(planned) | set(script)):
        mine, theirs = planned.get(name), script.get(name)
        same = env_same(name, mine, theirs) if kind == "env" else _same(mine, theirs)
        if name in planned and name in script and same:
            continue
        if name not in script or _covers(mine, theirs):
            verdict: Verdict = "added"  # the plan's own option, or keys it adds to the script's JSON object
        else:
            verdict = "missing" if name not in planned else "differs"
        out.append(Difference(kind, name, verdict, mine, theirs, why(name) if name in planned else ""))
    return out


def _covers(planned: Any, script: Any) -> bool:
    """Whether a JSON object the plan emits holds every key of the script's with the same value (and more)."""
    if not isinstance(planned, dict) or not isinstance(script, dict):
        return False
    return all(k in planned and (_same(planned[k], v) or _covers(planned[k], v)) for k, v in script.items())


def _same(a: Any, b: Any) -> bool:
    """Equal as vLLM reads them: `"0.90"` is `"0.9"`, `"True"` is a switch's True."""
    if a == b:
        return True
    if isinstance(a, str) and isinstance(b, str):
        try:
            return float(a) == float(b)
        except ValueError:
            return a.strip("\"'") == b.strip("\"'")
    return False
