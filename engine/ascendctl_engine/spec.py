"""The engine's own input/output types. `ascendctl` builds these; `ascendctl_engine` never imports `ascendctl`.

`EngineCommand` is the hand-off from planning to running: one process to start on one node, as an argv
list (never a shell string) plus the environment ascendctl sets on top of the inherited one, and, as typed
fields, what its consumers need to know about it — where it listens, how it is supervised — so no launcher,
renderer or check parses the argv back to recover the plan's own values.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import Literal

from ascendctl_engine.records import record
from ascendctl_engine.vocab import Role

REDACTED = "<redacted>"


@record
class SecretRef:
    """Where a secret comes from at launch time; its value is never stored in a plan, state or log."""

    env: str | None = None  # read from this variable of the launching environment
    file: str | None = None  # or from the first line of this file

    def describe(self) -> str:
        return f"env:{self.env}" if self.env else f"file:{self.file}"


# Which environment variable names hold secrets: the name, split on `_`, has a part that is exactly KEY,
# APIKEY, TOKEN or SECRET(S), or a part containing PASSWORD / PASSWD (PGPASSWORD). Whole parts, so
# TOKENIZERS_PARALLELISM, MAX_TOKENS or KEYRING_BACKEND are not secrets while HF_TOKEN, VLLM_API_KEY,
# AWS_SECRET_ACCESS_KEY and DB_PASSWORD are. One rule for every consumer: the profile refuses such names
# in `runtime.env` (inline values), and `check --json` redacts their values.
SECRET_NAME_PARTS = frozenset({"KEY", "APIKEY", "TOKEN", "SECRET", "SECRETS"})
SECRET_NAME_INFIXES = ("PASSWORD", "PASSWD")


def secret_name_part(name: str) -> str | None:
    """The part of `name` that makes it a secret's name (see above), or None."""
    for part in name.upper().split("_"):
        if part in SECRET_NAME_PARTS or any(infix in part for infix in SECRET_NAME_INFIXES):
            return part
    return None


def is_secret_name(name: str) -> bool:
    return secret_name_part(name) is not None


@record
class NodeAddress:
    """Node N's address, kept symbolic in the plan and resolved by the consumer: the launcher with the
    profile's node list, the Kubernetes renderer with the leader's or the pod's own address."""

    node: int

    @property
    def placeholder(self) -> str:
        """How the plan writes it where the profile names no address (`network.nodes[N].address`)."""
        return f"<node{self.node}-address>"


@record
class NodeRankBase:
    """This node's first data-parallel rank: its index × the ranks each node runs (one pod template serves
    every Kubernetes worker, so the renderer computes it from the worker index)."""

    per_node: int


@record
class Joined:
    """One word made of literal text and references (e.g. Ray's `HEAD:PORT`)."""

    parts: tuple[str | NodeAddress | NodeRankBase, ...]


Part = str | NodeAddress | NodeRankBase
Word = tuple[Part, ...]  # one argv word or env value: literal text and references, in order


@record
class Symbols:
    """A command with its references kept (multi-node commands only): what a consumer that knows the
    addresses differently (Kubernetes) substitutes, position by position, instead of searching the argv."""

    argv: tuple[Word, ...]
    env: Mapping[str, Word]  # only the variables whose value holds a reference
    pre_commands: tuple[tuple[Word, ...], ...]
    unresolved: tuple[int, ...] = ()  # nodes whose address the plan does not know (written as placeholders)


@record
class Listen:
    """Where a node's API server binds (the planner passes the same host and port to vLLM as flags)."""

    host: str
    port: int
    health_path: str = "/health"  # vLLM's; a router polls where its program answers (`pd-router` era trait)

    @property
    def poll_host(self) -> str:
        """The address a client on this host uses: a wildcard bind is reached on loopback; IPv6 in brackets."""
        host = self.host
        if host in ("0.0.0.0", "", "::"):  # noqa: S104 - the address polled, not the one bound
            host = "127.0.0.1"
        return f"[{host}]" if ":" in host and not host.startswith("[") else host

    @property
    def endpoint(self) -> str:
        return f"http://{self.poll_host}:{self.port}"

    @property
    def health_url(self) -> str:
        return f"{self.endpoint}{self.health_path}"


@record
class Unit:
    """One supervised process of a prefill/decode deployment on one host: an instance's command there, or the
    router. A single-instance deployment has none (its processes are told apart by node alone)."""

    instance: str  # the plan's instance name (`prefill-0`, `decode-1`) or the service's (`router`)
    role: str  # prefill | decode | router
    host: int  # the profile node (host) it runs on


@record
class RestartPolicy:
    """What the supervisor does when the engine exits unasked (the profile's `runtime.restart`, same names)."""

    policy: Literal["never", "on-failure"]
    max_restarts: int
    backoff_seconds: float
    backoff_max_seconds: float

    def delay(self, attempt: int) -> float:
        """Wait before restart number `attempt` (1-based): backoff, 2×backoff, 4×backoff, … capped."""
        return float(min(self.backoff_seconds * (2 ** max(attempt - 1, 0)), self.backoff_max_seconds))


@record
class Supervision:
    """How a node's engine is supervised (the profile's `runtime.ready_timeout`, `server.shutdown_timeout`,
    `runtime.restart`)."""

    ready_timeout: float
    shutdown_timeout: float
    restart: RestartPolicy


@record
class EngineCommand:
    """One engine process on one node."""

    node: int  # 0 = head
    role: Role
    # argv[0] is the logical program ("vllm"); the launcher resolves it inside the engine environment.
    argv: tuple[str, ...]
    # Variables ascendctl sets (user overrides already applied); merged over the inherited environment.
    env: Mapping[str, str] = field(default_factory=dict)
    # Variables whose values are secrets, resolved only at launch (e.g. VLLM_API_KEY).
    secret_env: Mapping[str, SecretRef] = field(default_factory=dict)
    # Where the API server binds; None for headless workers that serve no HTTP.
    listen: Listen | None = None
    # How the supervisor runs it; None only for commands built by hand (tests, renderers' previews).
    supervision: Supervision | None = None
    # Commands that must run on this node before `argv` (e.g. `ray start`), as argv lists.
    pre_commands: tuple[tuple[str, ...], ...] = ()
    # argv, env and pre_commands above are resolved with the addresses the plan knows; `symbols` keeps the
    # references (None: the command refers to no node address or rank).
    symbols: Symbols | None = None

    @property
    def health_url(self) -> str | None:
        """Where readiness is polled (None: this node serves no HTTP)."""
        return self.listen.health_url if self.listen is not None else None

    @property
    def endpoint(self) -> str | None:
        """The base URL clients use."""
        return self.listen.endpoint if self.listen is not None else None

    def display_env(self) -> dict[str, str]:
        """The environment for printing: secrets shown as `<redacted>`."""
        shown = dict(self.env)
        shown.update(dict.fromkeys(self.secret_env, REDACTED))
        return shown
