"""`ascendctl import`: launch scripts → a profile, planned back and compared with the scripts.

1. `draft_profile` maps every option a typed field says to that field; the rest stays as written.
2. The typed-only draft is planned once: a script variable the plan already sets to the same value (the Ascend
   defaults ascendctl exports) needs no escape hatch; every other variable goes to `runtime.env` (node 0) or
   `network.nodes[i].env` (where a node's value differs), and a node's options that differ from node 0's go to
   its `extra_args`.
3. The final profile is validated, planned and compared node by node (`compare`): what differs, and why.

Nothing from a script is ever executed; the plan reads no host.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import field, replace
from typing import Any

import yaml

from ascendctl.core.dotted import dotted_get
from ascendctl.core.errors import DocumentError
from ascendctl.core.yamlio import YamlDocument
from ascendctl.facts.matrix import load_matrix
from ascendctl.facts.matrix.release_pins import release_for_pin
from ascendctl.facts.model_inspect import ModelConfig, read_model_config
from ascendctl.importer.argv_options import option_value, take, without_options
from ascendctl.importer.compare import MODEL_KEY, Difference, Verdict, compare, env_same, options
from ascendctl.importer.deployment import ADDRESS_ENV, DEVICES_ENV, KV_FLAG, ScriptDeployment, recognize
from ascendctl.importer.hatches import HatchCount
from ascendctl.importer.hatches import count as count_hatches
from ascendctl.importer.kv_compare import EXTRA, kv_differences
from ascendctl.importer.pd_profile import pd_draft
from ascendctl.importer.profile import Draft, draft_profile, drop, typed_env
from ascendctl.importer.script import LaunchScript
from ascendctl.importer.switches import Meaning, is_meaning_field, meaning, respell, table_of, without
from ascendctl.plan.planner import plan_profile
from ascendctl.plan.types import Plan
from ascendctl.schema.loader import validate_profile_document
from ascendctl.schema.profile import Profile
from ascendctl.schema.secrets import secret_flags
from ascendctl_engine.adapters import quantization_rule
from ascendctl_engine.adapters.acceptance import acceptance_for
from ascendctl_engine.adapters.ascend_keys import KeyTable
from ascendctl_engine.adapters.env import TIMEOUT_VARIABLES
from ascendctl_engine.adapters.eras import era_for_release
from ascendctl_engine.adapters.kv_transfer import unread_extra_keys
from ascendctl_engine.adapters.parser_snapshot import parser_distribution, snapshot_for
from ascendctl_engine.argv_items import parse_args
from ascendctl_engine.json_args import ADDITIONAL_CONFIG, read_json
from ascendctl_engine.records import record
from ascendctl_engine.secret_names import is_posix_name
from ascendctl_engine.sections.fields import is_ip_address
from ascendctl_engine.spec import EngineCommand, is_secret_name
from ascendctl_engine.vocab import PD_ROLES

ConfigReader = Callable[[str], ModelConfig | None]
IMPORT_JSON_SCHEMA = 1


@record
class NodeReport:
    node: int  # the profile node (host) its command runs on
    script: str  # the script's path
    differences: tuple[Difference, ...]
    instance: str = ""  # its instance in a prefill/decode deployment (`prefill-0`), "" otherwise

    @property
    def reproduced(self) -> bool:
        return not any(d.counts for d in self.differences)

    def to_json(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "instance": self.instance or None,
            "script": self.script,
            "reproduced": self.reproduced,
            "differences": [d.to_json() for d in self.differences if d.verdict != "added"],
            "added": [d.to_json() for d in self.differences if d.verdict == "added"],
        }


@record
class ImportResult:
    profile: Profile
    document: dict[str, Any]
    draft: Draft
    plan: Plan
    nodes: tuple[NodeReport, ...]
    hatches: tuple[str, ...] = field(default_factory=tuple)

    @property
    def reproduced(self) -> bool:
        return all(n.reproduced for n in self.nodes)

    @property
    def counted(self) -> HatchCount:
        """Its escape hatches and pass-through variables (`ascendctl.importer.hatches`)."""
        return count_hatches(self.document)

    @property
    def blocking(self) -> tuple[str, ...]:
        return tuple(f"{f.id}: {f.message}" for f in self.plan.blocking)

    def to_json(self, profile_path: str | None) -> dict[str, Any]:
        """`import --json`: the profile (its path, or its text when it was not written), what the scripts needed
        as written, and per node every difference and what the plan adds."""
        counted = self.counted
        return {
            "schema": IMPORT_JSON_SCHEMA,
            "profile_path": profile_path,
            "profile": None if profile_path is not None else self.yaml_text(),
            "reproduced": self.reproduced,
            "blocking": list(self.blocking),
            "escape_hatches": list(counted.hatches),
            "pass_through_env": list(counted.pass_through),
            "notes": list(self.draft.notes),
            "nodes": [n.to_json() for n in self.nodes],
        }

    def yaml_text(self) -> str:
        """The profile, with a header naming its sources, every escape hatch it uses and the variables it passes
        through (`ascendctl.importer.hatches`)."""
        header = ["# Imported by `ascendctl import` from: " + ", ".join(dict.fromkeys(n.script for n in self.nodes))]
        counted = self.counted
        if counted.hatches:
            header.append("# Escape hatches (no typed field says these; written as the scripts wrote them):")
            header += [f"#   {h}" for h in counted.hatches]
        else:
            header.append("# No escape hatch: every option and variable of the scripts is a typed field or a default.")
        if counted.pass_through:
            header.append("# Passed through (CANN, HCCL, OS variables ascendctl gives no meaning): ")
            header[-1] += ", ".join(counted.pass_through)
        header += [f"# note: {n}" for n in self.draft.notes]
        body = yaml.safe_dump(self.document, sort_keys=False, allow_unicode=True, width=100)
        return "\n".join(header) + "\n" + body


def import_scripts(
    scripts: Sequence[LaunchScript],
    *,
    release: str,
    hardware: str | None,
    backend: str = "npu",
    name: str = "imported",
    read_config: ConfigReader = read_model_config,
) -> ImportResult:
    """Recognize the deployment, draft, plan, trim and compare (see the module docstring). Raises `DocumentError`
    when even the draft with every hatch does not validate, `UserInputError` for an unknown release or hardware,
    ValueError for scripts that contradict each other."""
    deployment = recognize(scripts, _registered(release) if backend == "npu" else None)
    instance_draft = functools.partial(
        _instance_draft, release=release, hardware=hardware, backend=backend, name=name, read_config=read_config
    )
    if deployment.disaggregated:
        roles = {
            role: instance_draft([_without_kv(h.merged) for h in deployment.role(role)[0].hosts]) for role in PD_ROLES
        }
        draft = pd_draft(roles, deployment)
        _unread_extra_keys(draft, backend)
    else:
        draft = instance_draft([h.merged for h in deployment.instances[0].hosts])
    draft.notes += deployment.notes
    profile = _validated(draft)
    plan = plan_profile(profile, read_config=read_config)
    reports = _reports(deployment, plan, profile, draft.unread)
    return ImportResult(profile, draft.document, draft, plan, reports, tuple(draft.hatches))


def _unread_extra_keys(draft: Draft, backend: str) -> None:
    """`disaggregation.connector_extra_config` keys the release's connector does not read are left out (reported as
    ignored, with the era's source)."""
    spec = draft.document["disaggregation"]
    extra = spec.get("connector_extra_config") or {}
    if not extra:
        return
    row = release_for_pin(load_matrix(), backend, str(draft.document["release"]))
    for key, why in unread_extra_keys(extra, row.backend, row.vllm, row.version).items():
        extra.pop(key)
        draft.unread[f"{KV_FLAG}.{EXTRA}.{key}"] = why
        draft.hatches[:] = [h for h in draft.hatches if f"connector_extra_config.{key}" not in h]
    if not extra:
        spec.pop("connector_extra_config")


def _registered(release: str) -> dict[str, str]:
    """`module.Class` → the name `release` registers that KV connector under (its key table)."""
    table = table_of(release)
    if table is None:
        return {}
    return {f"{info.module}.{info.cls}": name for name, info in table.kv_connectors.items()}


def _instance_draft(
    scripts: Sequence[LaunchScript],
    *,
    release: str,
    hardware: str | None,
    backend: str,
    name: str,
    read_config: ConfigReader,
) -> Draft:
    """One instance's profile from its hosts' scripts (head first): drafted, planned once, the typed fields the
    plan does not say back returned to hatches, every variable the plan does not set as a hatch."""
    draft = draft_profile(scripts, name=name, release=release, backend=backend, hardware=hardware)
    _nodes(draft, scripts)
    _ray_port(draft, scripts[0])
    from_env = typed_env(draft, scripts[0].env)
    first = _validated(draft)
    baseline = plan_profile(first, read_config=read_config)
    table = table_of(release) if backend == "npu" else None
    missed = _untyped_misses(draft, from_env, scripts[0].env, baseline, table)
    undetected = _undetected_auto(draft, baseline)
    if _unclaimed_flags(draft, scripts[0], baseline) or missed or undetected:
        baseline = plan_profile(_validated(draft), read_config=read_config)
    draft.hatches += _env_hatches(draft, scripts, baseline)
    return draft


def _without_kv(script: LaunchScript) -> LaunchScript:
    """The script without its `--kv-transfer-config`: the `disaggregation` section says it (each instance's own)."""
    return replace(script, argv=tuple(without_options(script.argv, (KV_FLAG,))))


def _ray_port(draft: Draft, head: LaunchScript) -> None:
    """`ray start --head --port P` → `network.ray_port` (the plan starts the head the same way)."""
    port = option_value(head.ray, "--port") if head.ray_head else None
    if port is not None and port.isdigit() and len(port) <= 5:
        draft.document.setdefault("network", {})["ray_port"] = int(port)
        draft.typed["network.ray_port"] = ("ray start --port", port)


def _reports(
    deployment: ScriptDeployment, plan: Plan, profile: Profile, unread: Mapping[str, str]
) -> tuple[NodeReport, ...]:
    """Every script compared with the planned command of its host, instance by instance."""
    pin = plan.deployment.release
    snapshot = snapshot_for(pin.vllm, parser_distribution(pin.backend))
    table = table_of(pin.version) if pin.backend == "npu" else None
    out: list[NodeReport] = []
    for instance, planned in zip(deployment.instances, plan.instances, strict=True):
        label = planned.name if deployment.disaggregated else ""
        later = deployment.disaggregated and instance is not deployment.role(planned.role)[0]  # type: ignore[arg-type]
        for h, host in enumerate(instance.hosts):
            command = planned.commands[h]
            one_node = len(planned.commands) == 1
            same = _node_differences(
                plan, command, host.merged, profile, pin, snapshot, table, one_node=one_node, unread=unread
            )
            if later:
                same = [_numbered(d, planned.role) for d in same]
            for script in host.scripts:
                regrouped = _regrouped(host.merged, script, host.regrouped, snapshot) if host.regrouped else []
                out.append(NodeReport(planned.host_of(command), script.path, (*same, *regrouped), label))
    return tuple(out)


def _node_differences(
    plan: Plan,
    command: EngineCommand,
    script: LaunchScript,
    profile: Profile,
    pin: Any,
    snapshot: Any,
    table: Any,
    *,
    one_node: bool,
    unread: Mapping[str, str],
) -> list[Difference]:
    # a secret is compared by name only: the plan passes it by reference, the script's value is never read
    secret = {name: script.env.get(name, _HIDDEN) for name in command.secret_env}
    serves = command.argv[:2] != ("ray", "start")
    planned_argv = command.argv[2:] if serves else ()
    argv, script_argv = _without_secrets(planned_argv, script.argv, command.secret_env)
    argv, planned_kv = take(argv, (KV_FLAG,))
    script_argv, script_kv = take(script_argv, (KV_FLAG,))
    script_argv, ignored = _without_unread_keys(script_argv, unread)
    # a switch is compared by its meaning: the script's spelling and the plan's, both read by the release
    script_argv, script_env, respelled = respell(script_argv, script.env, plan_switches(plan, command, table), table)
    diffs = compare(
        argv, {**command.env, **secret}, script_argv, script_env, snapshot, plan.provenance,
        headless=command.listen is None, one_node=one_node and serves,
    )  # fmt: skip
    if planned_kv is not None or script_kv is not None:
        registered = _registered(pin.version) if pin.backend == "npu" else {}
        diffs += kv_differences(_object(planned_kv), _object(script_kv), registered)
    diffs += _ray_differences(command, script)
    diffs = [_unread(d, unread) for d in diffs]
    return [*respelled, *ignored, *(_detected(d, profile, pin) for d in diffs)]


def _without_unread_keys(argv: Sequence[str], unread: Mapping[str, str]) -> tuple[list[str], list[Difference]]:
    """The script's `--additional-config` without the keys the release does not read (the profile left them out),
    and an `ignored` difference for each, with the reader's words."""
    prefix = f"{ADDITIONAL_CONFIG}."
    paths = [name[len(prefix) :] for name in unread if name.startswith(prefix)]
    rest, text = take(argv, (ADDITIONAL_CONFIG,))
    config = _object(text)
    if not paths or config is None:
        return list(argv), []
    out = []
    for path in paths:
        value = dotted_get(config, path)
        if value is not None:
            without(config, path)
            out.append(Difference("flag", prefix + path, "ignored", None, value, unread[prefix + path]))
    return ([*rest, ADDITIONAL_CONFIG, json.dumps(config)] if config else rest), out


def _unread(d: Difference, unread: Mapping[str, str]) -> Difference:
    """A script setting the release does not read, left out of the profile: ignored, with the reader's words."""
    if d.verdict == "missing" and d.name in unread:
        return replace(d, verdict="ignored", why=unread[d.name])
    return d


def _object(text: str | None) -> dict[str, Any] | None:
    value = read_json(text) if text is not None else None
    return value if isinstance(value, dict) else None


def _numbered(d: Difference, role: str) -> Difference:
    """A role's second and later instances count their ports up from the first's: a script's other choice there is
    the plan's to derive (`plan.pd.ports` checks that no two share one on a host)."""
    if d.verdict == "differs" and d.name in ("--port", "--data-parallel-rpc-port"):
        why = f"the plan counts {role} instances' ports up from disaggregation.{role}'s (plan.pd.ports checks them)"
        return replace(d, verdict="derived", why=why)
    return d


def _ray_differences(command: EngineCommand, script: LaunchScript) -> list[Difference]:
    """The script's `ray start` against the plan's: the head's (a command before `vllm serve`) or the worker's
    (its process), option by option; `--block`, `--head` and the node's own address are the plan's wiring."""
    if not script.ray:
        return []
    planned = next((c[2:] for c in (command.argv, *command.pre_commands) if c[:2] == ("ray", "start")), ())
    mine, theirs = _ray_options(planned), _ray_options(script.ray)
    out = []
    for name in sorted(set(mine) | set(theirs)):
        if name in _RAY_WIRING or (name in mine and name in theirs and mine[name] == theirs[name]):
            continue
        verdict: Verdict = "added" if name not in theirs else ("missing" if name not in mine else "differs")
        out.append(Difference("flag", f"ray start {name}", verdict, mine.get(name), theirs.get(name), ""))
    return out


_RAY_WIRING = frozenset({"--block", "--head", "--node-ip-address"})


def _ray_options(argv: Sequence[str]) -> dict[str, str | bool]:
    try:
        return {i.flag: (i.value if i.value is not None else True) for i in parse_args(list(argv))}
    except ValueError:
        return {"<unreadable>": " ".join(argv)}


def _regrouped(merged: LaunchScript, script: LaunchScript, why: Sequence[str], snapshot: Any) -> list[Difference]:
    """What one external-DP rank's script says otherwise than the host's one process: its rank, its own API port
    and devices are the regrouping (`regrouped`, with why); anything else differs between ranks of one host."""
    port = option_value(script.argv, "--port")
    out = []
    for d in compare(merged.argv, merged.env, script.argv, script.env, snapshot, {}):
        rank_only = d.name in _REGROUPED or (d.kind == "env" and port is not None and d.script == port)
        out.append(replace(d, verdict="regrouped", why=why[0]) if rank_only else d)
    return out


_REGROUPED = frozenset(
    {
        "--data-parallel-rank", "--data-parallel-size-local", "--headless", "--data-parallel-start-rank", "--port",
        DEVICES_ENV,
    }
)  # fmt: skip


def plan_switches(plan: Plan, command: EngineCommand, table: KeyTable | None) -> dict[str, Meaning]:
    """field → how the plan spells each `engine.ascend` switch in `command` (its provenance's origin), its value."""
    instance = next((i for i in plan.instances if command in i.commands), plan.instances[0])
    argv = list(command.argv)
    at = argv.index(ADDITIONAL_CONFIG) if ADDITIONAL_CONFIG in argv else -1
    config = read_json(argv[at + 1]) if 0 <= at < len(argv) - 1 else None  # the plan writes it spelled in full
    out: dict[str, Meaning] = {}
    for key, origin in instance.origins.items():
        if not is_meaning_field(origin):
            continue
        if key.startswith("env:") and key[4:] in command.env:
            said = meaning(table, "env", key[4:], command.env[key[4:]])
        elif key.startswith("--additional-config.") and isinstance(config, dict):
            path = key[len("--additional-config.") :]
            said = meaning(table, "key", path, dotted_get(config, path))
        else:
            continue
        if said is not None:
            out[said.field] = said
    return out


def _untyped_misses(
    draft: Draft, from_env: dict[str, str], env: dict[str, str], baseline: Plan, table: KeyTable | None
) -> bool:
    """A variable read into a typed field whose plan does not set the script's value back goes back to being a
    variable (an escape hatch): the field did not say what the script said — unless the plan says the same switch
    by another spelling the release also reads (the round trip compares meanings)."""
    planned = baseline.command_for(0).env
    switches = plan_switches(baseline, baseline.command_for(0), table)
    missed = [
        name
        for name in from_env
        if not env_same(name, planned.get(name), env[name])
        and not _respelled(meaning(table, "env", name, env[name]), switches)
    ]
    for name in missed:
        path = from_env.pop(name)
        if path == "model.source":  # back to the bare hub id; the variable stays as written
            source = str(draft.document["model"]["source"]).removeprefix("modelscope:")
            draft.document["model"]["source"] = source
            draft.typed["model.source"] = (source,)
            continue
        draft.typed.pop(path, None)
        drop(draft.document, path)
    return bool(missed)


def _undetected_auto(draft: Draft, baseline: Plan) -> bool:
    """`model.quantization: auto` read from `--quantization ascend` (a directory not on this machine) stands for the
    flag only where the release detects ModelSlim weights itself; elsewhere the flag goes back as written."""
    if draft.document.get("model", {}).get("quantization") != "auto" or "model.quantization" not in draft.typed:
        return False
    pin = baseline.deployment.release
    if pin.backend != "npu" or quantization_rule(pin.backend, pin.vllm, pin.vllm_ascend).auto_detect:
        return False
    tokens = draft.typed.pop("model.quantization")
    drop(draft.document, "model.quantization")
    _extra(draft.document).extend(tokens)
    draft.hatches.append(f"engine.extra_args: {' '.join(tokens)} ({pin.version} does not detect ModelSlim weights)")
    return True


def _detected(diff: Difference, profile: Profile, pin: Any) -> Difference:
    """The script's `--quantization ascend` where the plan leaves `auto` to a release that detects ModelSlim weights
    itself: the same load, no difference."""
    if diff.name != "--quantization" or diff.verdict != "missing" or profile.model.quantization != "auto":
        return diff
    rule = quantization_rule(pin.backend, pin.vllm, pin.vllm_ascend)
    if not rule.auto_detect:
        return diff
    return replace(diff, verdict="default", why=f"{rule.era} detects ModelSlim weights itself ({rule.source})")


def _respelled(said: Meaning | None, planned: dict[str, Meaning]) -> bool:
    plan = planned.get(said.field) if said is not None else None
    return said is not None and plan is not None and plan.on == said.on


def _unclaimed_flags(draft: Draft, script: LaunchScript, baseline: Plan) -> bool:
    """An option read into a field through its claim whose plan does not emit the script's value goes back to
    `engine.extra_args` as written."""
    if not draft.claimed:
        return False
    pin = baseline.deployment.release
    snapshot = snapshot_for(pin.vllm, parser_distribution(pin.backend))
    planned = options(baseline.command_for(0).argv[2:], snapshot)
    back: list[str] = []
    for path, tokens in list(draft.claimed.items()):
        wanted = options(["m", *tokens], snapshot)
        wanted.pop(MODEL_KEY, None)
        if all(planned.get(k) == v or (k not in planned and _is_default(snapshot, k, v)) for k, v in wanted.items()):
            continue
        draft.claimed.pop(path)
        draft.typed.pop(path, None)
        drop(draft.document, path)
        back += tokens
        draft.hatches.append(f"engine.extra_args: {' '.join(tokens)}")
    if back:
        _extra(draft.document).extend(back)
    return bool(back)


def _is_default(snapshot: Any, flag: str, value: Any) -> bool:
    """Whether `value` is the release parser's own default of `flag` (a plan that leaves it out says the same)."""
    opt = snapshot.option(flag)
    return opt is not None and opt.default is not None and str(opt.default) == str(value)


def _nodes(draft: Draft, scripts: Sequence[LaunchScript]) -> None:
    """Multi-node: each node's address from its script's own variables; node i's options that differ from node
    0's as its `extra_args` (the planner adds the role-aware ones itself; the comparison shows what remains)."""
    if len(scripts) < 2:
        return
    nodes: list[dict[str, Any]] = []
    for i, script in enumerate(scripts):
        address = next((script.env[k] for k in ADDRESS_ENV if script.env.get(k)), None)
        if i == 0 and (address is None or not is_ip_address(address)):
            address = option_value(script.argv, "--data-parallel-address") or address
        if address is None or not is_ip_address(address):
            stand_in = f"192.0.2.{i + 1}"  # RFC 5737 documentation range: never a real host
            said = f"{address!r} is not an IP address" if address else f"none of {', '.join(ADDRESS_ENV)} is set"
            draft.notes.append(f"node {i} ({script.path}): {said}; network.nodes[{i}].address {stand_in}: replace it")
            address = stand_in
        node: dict[str, Any] = {"address": address}
        utilization = option_value(script.argv, "--gpu-memory-utilization")
        head = option_value(scripts[0].argv, "--gpu-memory-utilization")
        if i > 0 and utilization is not None and utilization != head:
            node["device_utilization"] = _fraction(utilization, script)
        nodes.append(node)
    draft.document.setdefault("network", {})["nodes"] = nodes


# What a difference line shows for a secret: the comparison never holds the value itself.
_HIDDEN = "<secret>"


def _without_secrets(
    planned: Sequence[str], script: Sequence[str], secret_env: Mapping[str, object]
) -> tuple[list[str], list[str]]:
    """Both sides of the comparison with no secret's value in them (a difference line prints values): each of the
    script's secret-valued flags, in any spelling vLLM reads (`--api_key=V`, `--api-k V`), reads `FLAG <secret>`;
    where the plan passes the same secret by reference (`--api-key` is `server.api_key`, exported as
    `VLLM_API_KEY`), the plan's side gets the same, so the two agree without the value being read."""
    tokens = list(script)
    model = [tokens.pop(0)] if tokens and not tokens[0].startswith("-") else []
    try:
        items = parse_args(tokens)
    except ValueError:  # `compare` refuses the same argv with parse_args' own message
        return list(planned), list(script)
    secrets = {found.index: found for found in secret_flags(items)}
    if not secrets:
        return list(planned), list(script)
    out, extra = list(model), list(planned)
    for item in items:
        found = secrets.get(item.index)
        if found is None:
            out += item.tokens
            continue
        out += [found.flag, _HIDDEN]
        if found.variable in secret_env and found.flag not in extra:
            extra += [found.flag, _HIDDEN]
    return extra, out


def _fraction(text: str, script: LaunchScript) -> float:
    """A node's `--gpu-memory-utilization`, refused in the importer's words (not float()'s) when not a number."""
    try:
        return float(text)
    except ValueError:
        raise ValueError(
            f"{script.path}:{script.line}: --gpu-memory-utilization {text[:40]!r} is not a number"
        ) from None


def _env_hatches(draft: Draft, scripts: Sequence[LaunchScript], baseline: Plan) -> list[str]:
    """Each script variable the baseline plan does not already set to the same value, as an escape hatch:
    `runtime.env` for node 0's, `network.nodes[i].env` for another node's own value. A `VLLM_*` variable the release
    does not read is left out (`draft.unread`, reported as ignored with why)."""
    typed = {t.split("=", 1)[0] for tokens in draft.typed.values() for t in tokens if "=" in t}
    pin = baseline.deployment.release
    acceptance = acceptance_for(pin.backend, pin.vllm, pin.vllm_ascend)
    hatches: list[str] = []
    head_env: dict[str, str] = {}
    for i, script in enumerate(scripts):
        planned = baseline.command_for(i).env
        for key, value in script.env.items():
            if key in typed or env_same(key, planned.get(key), value):
                continue
            if is_secret_name(key):
                _secret(draft, key)
                continue
            verdict = acceptance.judge_env(key, "the script")
            unread = verdict.reason if verdict is not None and verdict.status == "not-read" else _no_reader(key, pin)
            if not is_posix_name(key):  # set through a process environment (upstream's CI harness), never a shell
                unread = f"`{key}` is no name a shell can set; vLLM and vllm-ascend read none by it (theirs use `_`)"
            if unread is not None:
                draft.unread[key] = unread
                continue
            if i == 0:
                head_env[key] = value
                hatches.append(f"runtime.env.{key}={value}")
            elif head_env.get(key) != value:
                draft.document["network"]["nodes"][i].setdefault("env", {})[key] = value
                hatches.append(f"network.nodes[{i}].env.{key}={value}")
    if head_env:
        draft.document.setdefault("runtime", {}).setdefault("env", {}).update(head_env)
    return hatches


def _no_reader(name: str, pin: Any) -> str | None:
    """Why a `runtime.timeouts` variable vLLM still defines is read by nothing in the pinned vLLM (the `timeouts`
    era's readers), None for any other variable or one that is read."""
    field = next((f for f, (variable, _) in TIMEOUT_VARIABLES.items() if variable == name), None)
    chosen = era_for_release("timeouts", pin.backend, pin.vllm, pin.vllm_ascend) if field is not None else None
    if field is None or chosen is None or field in chosen.traits["reads"]:
        return None
    return f"vLLM {pin.vllm} defines `{name}` but nothing reads it (the V0 engine that did is gone; {chosen.source})"


def _secret(draft: Draft, name: str) -> None:
    """A secret the script exports (`HF_TOKEN=...`) is never copied into the profile: it becomes a reference,
    `runtime.secrets.NAME: {env: NAME}`, read from the environment `ascendctl serve` runs in."""
    secrets = draft.document.setdefault("runtime", {}).setdefault("secrets", {})
    if name not in secrets:
        secrets[name] = {"env": name}
        draft.notes.append(f"{name}: a secret; the profile reads it from ${name} at launch (its value was not copied)")


def _validated(draft: Draft) -> Profile:
    """The draft as a `Profile`; a typed field the schema refuses goes back to the options it came from (an
    escape hatch) and the draft is validated again."""
    for _ in range(len(draft.typed) + 1):
        try:
            return validate_profile_document(YamlDocument("<import>", draft.document))
        except DocumentError as exc:
            if not _demote(draft, exc.issues):
                raise
    return validate_profile_document(YamlDocument("<import>", draft.document))


# Fields with no escape hatch: the listen address belongs to `server` (a placeholder such as `<your_server_ip>`
# leaves the profile's default, and the comparison shows the difference).
_NO_HATCH = ("server.host", "server.port", "target.visible_devices")


def _demote(draft: Draft, issues: Sequence[Any]) -> bool:
    demoted = False
    for issue in issues:
        path = next((p for p in draft.typed if issue.path == p or issue.path.startswith(p + ".")), None)
        if path is None or path == "model.source":
            continue
        tokens = draft.typed.pop(path)
        drop(draft.document, path)
        demoted = True
        if path in _NO_HATCH:
            draft.notes.append(f"{path}: {' '.join(tokens)} is not usable ({issue.message}); the default stays")
            continue
        if all("=" in t and not t.startswith("-") for t in tokens):
            continue  # read from a variable: it stays a variable (`_env_hatches` keeps it as written)
        extra = _extra(draft.document)
        extra += list(tokens)
        draft.hatches.append(f"engine.extra_args: {' '.join(tokens)} ({issue.message})")
    return demoted


def _extra(doc: dict[str, Any]) -> list[str]:
    engine = doc.setdefault("engine", {})
    extra = engine.setdefault("extra_args", [])
    return extra  # type: ignore[no-any-return]


def report_lines(result: ImportResult) -> list[str]:
    """What `ascendctl import` prints after writing the profile: per node, every difference and why."""
    out: list[str] = []
    for node in result.nodes:
        counted = [d for d in node.differences if d.counts]
        state = "reproduced" if not counted else f"{len(counted)} difference(s)"
        where = f"{node.instance} on node {node.node}" if node.instance else f"node {node.node}"
        out.append(f"{where} ({node.script}): {state}")
        out += [f"  {d.line()}" for d in node.differences if d.counts]
        out += [f"  {d.line()} (does not count)" for d in node.differences if d.verdict in ("default", "ignored")]
        out += [f"  {d.line()}" for d in node.differences if d.verdict in ("respelled", "derived", "regrouped")]
        added = [d for d in node.differences if d.verdict == "added"]
        if added:
            out.append(f"  plan adds ({len(added)}, defaults that do not count):")
            out += [f"    {d.name}={_show(d.planned)}  [default: {d.why or 'planned'}]" for d in added]
    out += [f"blocking: {b}" for b in result.blocking]
    return out


def _show(value: Any) -> str:
    return value if isinstance(value, str) else repr(value)


__all__ = ["ImportResult", "NodeReport", "import_scripts", "report_lines"]
