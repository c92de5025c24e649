"""Which deployment a benchmark measures, and which client measures it.

In order: `url` when given (the plan is still the profile's, for the report); else the deployment of the
profile recorded running on this host (the state store; a prefill/decode deployment is entered through its
router); else one started here with `ascendctl serve PROFILE --detach` and stopped with `ascendctl stop NAME`
when the benchmark ends (also on errors and Ctrl-C).

A running deployment is measured only when it runs this plan: its engine's command line (read from
/proc/PID/cmdline) must end with the plan's arguments, so `--set` values that the running engine does not
have are refused rather than measured under the wrong label. Where the command line cannot be read the
check is skipped (and said).
"""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

from ascendctl.core.errors import OperationFailed, UserInputError
from ascendctl.plan.planner import plan_profile, require_startable
from ascendctl.plan.types import Plan
from ascendctl.run.bench.client import BenchTarget
from ascendctl.run.deployments import listed
from ascendctl.run.serve import engine_env_for
from ascendctl.run.signals import as_interrupt, ignored
from ascendctl.schema.loader import load_profile
from ascendctl.schema.profile import Profile
from ascendctl.schema.secrets import API_KEY_VAR
from ascendctl_engine.health import probe
from ascendctl_engine.host.facts import HostFacts
from ascendctl_engine.host.gather import gather_host_facts
from ascendctl_engine.host.probe import LocalHostProbe
from ascendctl_engine.launcher import LaunchError, resolve_secret
from ascendctl_engine.state import DeploymentState, StateStore

StatusFn = Callable[[str], None]
START_TIMEOUT_S = 3600.0  # `serve --detach` returns at ready or failure; its own ready_timeout bounds it first
STOP_TIMEOUT_S = 120


@functools.cache
def host_facts_here() -> HostFacts:
    """This host's facts, probed once per process (the plan and the report read the same facts)."""
    return gather_host_facts(LocalHostProbe("/", os.environ))


def plan_for_bench(profile: Profile, allow: Sequence[str] = ()) -> Plan:
    plan = plan_profile(profile, host=host_facts_here(), allow=allow)
    require_startable(plan)
    return plan


def _ascendctl(*args: str) -> list[str]:
    return [sys.executable, "-m", "ascendctl", *args]


def _served_name(profile: Profile, plan: Plan) -> str:
    return profile.model.served_name or plan.deployment.model.resolved  # vLLM serves the loaded path by default


def _api_key_env(plan: Plan, environ: Mapping[str, str]) -> dict[str, str]:
    """OPENAI_API_KEY for the client (vLLM's bench client sends it as a bearer token) when the plan has a key."""
    for command in plan.commands:
        ref = command.secret_env.get(API_KEY_VAR)
        if ref is not None:
            try:
                return {"OPENAI_API_KEY": resolve_secret(ref, environ)}
            except LaunchError as exc:
                raise OperationFailed(f"the deployment's API key ({ref.describe()}): {exc}") from None
    return {}


def _entry_state(plan: Plan, store: StateStore) -> DeploymentState | None:
    """The recorded process that answers requests: the router of a prefill/decode deployment, else node 0."""
    found = [e.state for e in listed(store, plan.deployment.name) if not e.orphaned]
    if plan.disaggregated:
        return next((s for s in found if s.instance_role == "router"), None)
    return next((s for s in found if s.node == 0 and s.endpoint is not None), None)


def _check_runs_this_plan(state: DeploymentState, plan: Plan, on_status: StatusFn) -> None:
    """Refuse a running engine whose command line is not the plan's (other `--set` values, another profile
    version); skip the check, with a note, where /proc is not readable."""
    if plan.disaggregated or state.engine_pid is None:
        return
    try:
        raw = Path(f"/proc/{state.engine_pid}/cmdline").read_bytes()
    except OSError:
        on_status(f"note: cannot read the command line of engine pid {state.engine_pid}; not checked against the plan")
        return
    running = [part.decode("utf-8", errors="replace") for part in raw.split(b"\0") if part]
    wanted = list(plan.commands[0].argv[1:])
    if running[-len(wanted) :] != wanted:
        raise OperationFailed(
            f"{state.name} is running with other settings than this profile and its --set values plan; stop it "
            f"(ascendctl stop {state.name}) to have bench start the planned one, or pass --url to measure it as is"
        )


def _running_url(plan: Plan, store: StateStore, on_status: StatusFn) -> str | None:
    state = _entry_state(plan, store)
    if state is None or state.endpoint is None:
        return None
    if state.health_url is not None and not probe(state.health_url, timeout=2.0).ok:
        raise OperationFailed(
            f"{state.name} is recorded running at {state.endpoint} but is not healthy (see `ascendctl ps`)"
        )
    _check_runs_this_plan(state, plan, on_status)
    return state.endpoint


def _check_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise UserInputError(f"--url {url}: expected http://HOST:PORT")
    return f"{parts.scheme}://{parts.netloc}"


def _start(profile_path: Path, overrides: Sequence[str], allow: Sequence[str], name: str, on_status: StatusFn) -> None:
    args = ["serve", str(profile_path)]
    for text in overrides:
        args += ["--set", text]
    for finding in allow:
        args += ["--allow", finding]
    on_status(f"starting {name} (ascendctl serve --detach); it is stopped when the benchmark ends")
    try:
        done = subprocess.run(
            _ascendctl(*args, "--detach"),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=START_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        _stop(name, on_status)
        raise OperationFailed(f"{name} was not ready within {START_TIMEOUT_S:.0f}s") from None
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()][-8:]
        raise OperationFailed(f"could not start {name} for the benchmark:\n" + "\n".join(lines))
    on_status(f"{name} is ready")


def _stop(name: str, on_status: StatusFn) -> None:
    on_status(f"stopping {name}")
    done = subprocess.run(
        _ascendctl("stop", name, "--timeout", str(STOP_TIMEOUT_S)),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=STOP_TIMEOUT_S + 60,
        check=False,
    )
    if done.returncode != 0:
        on_status(f"warning: ascendctl stop {name} failed: {done.stderr.strip()[-300:]}")


_ENDING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


@contextmanager
def deployment_for_bench(
    profile_path: Path,
    overrides: Sequence[str],
    *,
    url: str | None = None,
    allow: Sequence[str] = (),
    on_status: StatusFn | None = None,
    client: Path | None = None,
) -> Iterator[tuple[Plan, BenchTarget, bool]]:
    """The running deployment of the profile (found through its state), or `url`, or one started here
    (serve --detach) and stopped on exit; the bool says whether it was started here. `client`: another
    `vllm` executable than the profile's engine environment's (e.g. with `url`, a newer vLLM's client)."""
    status: StatusFn = on_status or (lambda _text: None)
    profile = load_profile(profile_path, overrides)
    plan = plan_for_bench(profile, allow)
    client_path = client if client is not None else engine_env_for(profile, profile_path).vllm_executable
    started = False
    base = _check_url(url) if url is not None else _running_url(plan, StateStore(), status)
    # SIGTERM and SIGHUP end a benchmark as Ctrl-C does, so the deployment started for it is stopped (their default
    # action ends the process at once, leaving it running: `tune` under `timeout` did)
    with as_interrupt(_ENDING_SIGNALS):
        if base is None:
            try:
                _start(profile_path, overrides, allow, plan.deployment.name, status)
            except KeyboardInterrupt:  # Ctrl-C, SIGTERM or SIGHUP while it starts: it may be starting still
                with ignored(_ENDING_SIGNALS):
                    _stop(plan.deployment.name, status)
                raise
            started = True
        try:
            if base is None:
                base = _running_url(plan, StateStore(), status)
            if base is None:
                raise OperationFailed(f"{plan.deployment.name} started but recorded no endpoint to benchmark")
            target = BenchTarget(
                base_url=base,
                served_name=_served_name(profile, plan),
                tokenizer=plan.deployment.model.resolved,  # a local directory: the client reads no hub
                client=client_path,
                api_key_env=_api_key_env(plan, os.environ),
            )
            yield plan, target, started
        finally:
            if started:
                with ignored(_ENDING_SIGNALS):  # a second SIGTERM must not cut the stop short
                    _stop(plan.deployment.name, status)


__all__ = ["BenchTarget", "deployment_for_bench", "host_facts_here", "plan_for_bench"]
