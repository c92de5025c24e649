"""What `ascendctl serve` does before and around the supervisor: gather this host's facts → plan the profile
against them (the same `plan_profile` call as `plan --facts`) → the command for this node, its engine
environment, its supervisor settings; the pre-launch checks; what to print when ready.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

from ascendctl.core.errors import OperationFailed, UserInputError
from ascendctl.plan.planner import plan_profile, require_startable
from ascendctl.plan.types import Plan
from ascendctl.run.deployments import listed
from ascendctl.run.engine_envs import engine_spec_for
from ascendctl.run.units import HostTarget, host_target, require_addresses
from ascendctl.schema.loader import load_profile
from ascendctl.schema.profile import Profile
from ascendctl.schema.secrets import key_file_warnings
from ascendctl_engine.envs import EngineEnv, find_engine
from ascendctl_engine.health import port_in_use
from ascendctl_engine.host.gather import gather_host_facts
from ascendctl_engine.host.probe import LocalHostProbe
from ascendctl_engine.launcher import InvalidSecret, LaunchError, resolve_secrets
from ascendctl_engine.prepared_models import PREPARED_PREFIX, ModelError, resolve_model_source
from ascendctl_engine.records import record
from ascendctl_engine.spec import EngineCommand, Supervision
from ascendctl_engine.state import StateStore, describe_process


@record
class ServeTarget:
    profile: Profile
    profile_path: Path
    overrides: tuple[str, ...]
    allow: tuple[str, ...]  # `--allow ID`s (the profile's own `allow` is in the profile)
    node: int
    command: EngineCommand
    node_count: int
    engine: EngineEnv
    plan: Plan

    @property
    def name(self) -> str:
        return self.profile.metadata.name

    @property
    def supervision(self) -> Supervision:
        """The node's supervision settings (the planner sets them on every command)."""
        if self.command.supervision is None:
            raise OperationFailed(f"the plan gave node {self.node} no supervision settings (a bug in ascendctl)")
        return self.command.supervision

    @property
    def prefix(self) -> str:
        return f"[{self.name}] " if self.node_count == 1 else f"[{self.name}/node{self.node}] "


def plan_here(profile: Profile, allow: Sequence[str] = ()) -> Plan:
    """The profile planned against this host's facts (probed now: NPUs, driver, CANN, CPU cores), so what
    runs is what `ascendctl plan --facts <this host's check --json>` prints; exit 2 on a failing finding left."""
    facts = gather_host_facts(LocalHostProbe("/", os.environ))
    plan = plan_profile(profile, host=facts, allow=allow)
    require_startable(plan)
    return plan


def plan_notes(plan: Plan) -> list[str]:
    """What the plan says before anything starts: its warnings and the plan rules worth a look."""
    notes = [f"warning: {w}" for w in plan.warnings]
    for f in plan.deployment.findings:
        if f.notable and f.status != "fail":
            notes.append(f"{'note' if f.undecided else f.status}: {f.id}: {f.message}")
    notes += [f"warning: {w}" for w in key_file_warnings(plan.commands)]  # others may read these key files
    return notes


def supervisor_argv(
    profile_path: Path, overrides: Sequence[str], allow: Sequence[str], node: int, run_id: str, unit: str | None = None
) -> list[str]:
    """The re-executed `serve` a detached supervisor runs: the same profile, overrides and allowances, one node
    (and, for a prefill/decode deployment, one of its processes there)."""
    argv = [sys.executable, "-m", "ascendctl", "serve", str(profile_path.resolve())]
    for text in overrides:
        argv += ["--set", text]
    for finding_id in allow:
        argv += ["--allow", finding_id]
    argv += ["--node", str(node), "--internal-run-id", run_id]
    if unit is not None:
        argv += ["--internal-unit", unit]
    return argv


def check_prepared_model(profile: Profile) -> None:
    """`prepared:NAME` must exist before anything starts (the engine would only say "Repo id must be ...")."""
    if profile.model.source.startswith(PREPARED_PREFIX):
        try:
            resolve_model_source(profile.model.source)
        except ModelError as exc:
            raise OperationFailed(f"{exc}; {exc.hint}" if exc.hint else str(exc)) from None


def install_command(profile_path: Path) -> str:
    """The exact command that installs the engine environment this profile needs."""
    return f"ascendctl engine install {shlex.quote(str(profile_path))}"


def engine_env_for(profile: Profile, profile_path: Path) -> EngineEnv:
    """The installed engine environment the profile's backend × release needs, or a failure that says how
    to install it."""
    spec = engine_spec_for(profile.target.backend, profile.release)
    env = find_engine(spec.backend, spec.release)
    if env is None or not env.vllm_executable.exists():
        raise OperationFailed(
            f"the {spec.backend} engine environment {spec.name} is not installed; "
            f"install it with: {install_command(profile_path)}"
        )
    return env


def load_serving(
    profile_path: Path, overrides: Sequence[str], node: int | None, allow: Sequence[str] = ()
) -> ServeTarget | HostTarget:
    """What `serve PROFILE [--node N]` runs on this host: the node's engine command, or, for a prefill/decode
    plan, every process host N runs (its instances' commands and, on node 0, the router)."""
    profile = load_profile(profile_path, overrides)
    # The host first: a profile for an accelerator this host lacks is refused as that (`plan.host.backend`), not as
    # an engine environment to install. Then the engine: `ascendctl model prepare` runs inside it.
    plan = plan_here(profile, allow)
    engine = engine_env_for(profile, profile_path)
    check_prepared_model(profile)
    if plan.disaggregated:
        return host_target(profile, profile_path, tuple(overrides), tuple(allow), node, engine, plan)
    commands = list(plan.commands)
    if node is None:
        if len(commands) > 1:
            lines = ", ".join(f"`--node {c.node}` ({c.role})" for c in commands)
            raise UserInputError(
                f"{profile.metadata.name} spans {len(commands)} nodes: run `ascendctl serve {profile_path} "
                f"--node N` on each host ({lines})"
            )
        node = commands[0].node
    chosen = [c for c in commands if c.node == node]
    if not chosen:
        known = ", ".join(str(c.node) for c in commands)
        raise UserInputError(f"--node {node}: {profile.metadata.name} has nodes {known}")
    command = chosen[0]
    require_addresses(command, node)
    return ServeTarget(
        profile, profile_path, tuple(overrides), tuple(allow), node, command, len(commands), engine, plan
    )


def check_secrets(commands: Sequence[EngineCommand]) -> None:
    """Every secret the commands read at launch, read now and dropped: a secret that is not set, a key file that is
    missing, empty or holds a NUL byte is refused before anything starts, in the `serve` the user runs (a detached
    supervisor would meet it only in the background). A NUL byte is invalid input (exit 2), the rest exit 1 as the
    supervisor reports them; the message names the source, never the value."""
    for command in commands:
        try:
            resolve_secrets(command.secret_env, os.environ)
        except InvalidSecret as exc:
            raise UserInputError(str(exc)) from None
        except LaunchError as exc:
            raise OperationFailed(str(exc)) from None


def preflight(target: ServeTarget, store: StateStore) -> None:
    """Refuse to start what cannot start: the same deployment already running here, a busy port, a secret that cannot
    be read (`check_secrets`)."""
    for entry in listed(store, target.name, target.node):
        state = entry.state
        where = f" at {state.endpoint}" if state.endpoint else ""
        raise OperationFailed(
            f"{target.name} (node {target.node}) is already running{where}, supervisor pid {state.supervisor_pid}; "
            f"stop it with: ascendctl stop {target.name}"
        )
    listen = target.command.listen
    if listen is not None:
        host, port = listen.host, listen.port
        problem = port_in_use(host, port)
        if problem is not None:
            raise OperationFailed(
                f"cannot serve on port {port}: {problem}; stop whatever uses it or choose another port "
                f"(--set server.port=N)"
            )
    check_secrets([target.command])


def preflight_host(target: HostTarget, store: StateStore) -> None:
    """`preflight` for each process of a prefill/decode host, and the router's program present here."""
    names = {unit.instance for unit, _ in target.units}
    for entry in listed(store, target.name, target.node):
        state = entry.state
        if state.instance is None or state.instance in names:
            raise OperationFailed(
                f"{describe_process(state.name, state.node, state.instance)} is already running, supervisor pid "
                f"{state.supervisor_pid}; stop it with: ascendctl stop {target.name}"
            )
    for unit, command in target.units:
        if command.listen is not None:
            problem = port_in_use(command.listen.host, command.listen.port)
            if problem is not None:
                raise OperationFailed(
                    f"cannot serve {unit.instance} on port {command.listen.port}: {problem}; stop whatever uses it "
                    "or choose other ports (the disaggregation groups' `port`, disaggregation.router.port)"
                )
        if unit.role == "router":
            check_router_program(target, command)
            check_router_metrics_port(target)
    check_secrets([command for _, command in target.units])


def check_router_metrics_port(target: HostTarget) -> None:
    """The router's metrics port must be free: vllm-router exits when it cannot bind it (a second deployment's router
    on this host, with the same default port)."""
    port = target.plan.services[0].metrics_port
    problem = port_in_use("127.0.0.1", port) if port is not None else None
    if port is not None and problem is not None:
        raise OperationFailed(
            f"cannot serve the router's metrics on port {port}: {problem}; stop whatever uses it or set "
            "disaggregation.router.metrics_port to a free port (another deployment's router on this host uses the "
            "same default)"
        )


def check_router_program(target: HostTarget, command: EngineCommand) -> None:
    """The router's program must be here: in the engine environment (vllm-router, installed with it) or, for a
    release's example proxy, the script its image carries."""
    program = command.argv[0]
    bindir = target.engine.vllm_executable.parent
    service = target.plan.services[0]
    if "/" not in program and not (bindir / program).exists() and shutil.which(program) is None:
        raise OperationFailed(
            f"the router {program} is not installed in the engine environment {bindir.parent}; install it with: "
            f"{install_command(target.profile_path)}"
        )
    script = next((word for word in command.argv[1:2] if word.endswith(".py")), None)
    if script is not None and not Path(script).is_file():
        raise OperationFailed(
            f"the router script {script} is not on this host: it comes with the release's container image "
            f"({service.source}); serve from that image, or put the release's copy of that file at the same path"
        )


def curl_example(profile: Profile, base: str | None) -> str:
    """A copy-paste request for the endpoint at `base`; an API key appears only as a placeholder."""
    if base is None:
        return ""
    model = profile.model.served_name or profile.model.location  # vLLM serves the loaded id by default
    auth = ""
    key = profile.server.api_key
    if key is not None:
        value = f"${key.env}" if key.env else f"$(head -n1 {shlex.quote(str(key.file))})"
        auth = f' -H "Authorization: Bearer {value}"'
    body: dict[str, object]
    if profile.model.task == "embed":
        path, body = "/v1/embeddings", {"model": model, "input": "What is the capital of France?"}
    elif profile.model.task == "rerank":
        path, body = "/v1/rerank", {"model": model, "query": "capital of France", "documents": ["Paris", "Rome"]}
    else:
        path = "/v1/chat/completions"
        body = {
            "model": model,
            "messages": [{"role": "user", "content": "What is the capital of France?"}],
            "max_tokens": 32,
            "temperature": 0,
        }
    return f"curl {base}{path}{auth} -H 'Content-Type: application/json' -d {shlex.quote(json.dumps(body))}"
