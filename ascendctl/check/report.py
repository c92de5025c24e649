"""The result of `ascendctl check`: host facts + rule results, its JSON shape and the next command.

JSON contract (pinned by tests/cli/test_check_cli.py; keys may be added, never removed):
`{"headline": "accelerator: …; judging the … backend (…)", "host": {"backend", "hardware": {"family", "devices":
[{"id", "chip", "name", "health", "hbm_total_mb", "hbm_used_mb"}]}, "driver": {"version"}, "cann": {"version",
"path"}, "python": {"version"}, "packages": {name: version}}, "results": [{"id", "severity", "status", "title",
"message", "fix", "source"}], ...}`.
`results` holds the `host.*` findings, then (with a profile that plans) the `plan.*` findings. A renamed or
removed key, or a value that changes meaning, bumps `CHECK_JSON_SCHEMA` (2: rule ids gained the `host.`
scope, plan findings joined `results`). `check PROFILE --fabric` adds `"fabric": {"node", "tool", "devices": [{"device",
"link", "net_health", "netdetect", "gateway", "ip", "netmask", "tls", "errors"}], "pings": [{"device", "address",
"peer", "sent", "received", "error", "ok", "kind", "peer_device"}], "ping_pairs": {kind: n}, "interface",
"interface_present", "ports": [...], "peers": [...]}`;
`check PROFILE --lock LOCK` adds `"lock": {"path", "drifts": [{"what", "locked", "now"}]}`.
"""

from __future__ import annotations

from ascendctl.check.context import CheckContext
from ascendctl.core.findings import Finding
from ascendctl_engine.host.facts import HostFacts
from ascendctl_engine.records import record

# 3: every result carries `clause` (the refusal policy, docs/refusal-policy.md; null when it does not fail).
CHECK_JSON_SCHEMA = 3


@record
class CheckReport:
    facts: HostFacts
    results: tuple[Finding, ...]
    target: str
    profile_path: str | None = None
    profile_name: str | None = None
    release: str | None = None
    release_source: str = "none"
    rerun: str = "ascendctl check"
    fabric: dict[str, object] | None = None  # `--fabric`: this node's fabric facts (what `--peer-facts` reads)
    lock: dict[str, object] | None = None  # `--lock`: the lock file and what drifted since

    @classmethod
    def build(cls, ctx: CheckContext, results: list[Finding], rerun: str) -> CheckReport:
        return cls(
            facts=ctx.facts,
            results=tuple(results),
            target=ctx.target,
            profile_path=ctx.profile_path,
            profile_name=ctx.profile.metadata.name if ctx.profile is not None else None,
            release=ctx.release.version if ctx.release is not None else None,
            release_source=ctx.release_source,
            rerun=rerun,
            fabric=ctx.fabric.to_dict() if ctx.fabric is not None else None,
            lock=ctx.lock.to_json() if ctx.lock is not None else None,
        )

    @property
    def headline(self) -> str:
        """The first line `check` prints: which accelerator this host has (or none) and which backend is judged."""
        f = self.facts
        if f.devices:
            names = "/".join(sorted({d.name for d in f.devices}))
            found = f"{len(f.devices)} × Ascend {names}" + (f" ({f.family})" if f.family else "")
        elif f.cuda.gpus:
            found = f"{len(f.cuda.gpus)} × NVIDIA {'/'.join(sorted({g.name for g in f.cuda.gpus}))}"
        elif f.backend == "npu":
            found = "an Ascend driver but no NPU listed by npu-smi"
        else:
            why = "npu-smi not on PATH" if not f.npu_smi_found else "npu-smi lists none"
            found = f"none (no Ascend NPU: {why}; no NVIDIA GPU)"
        judged = "the profile's target" if self.profile_path else "what this host has"
        return f"accelerator: {found}; judging the {self.target} backend ({judged})"

    def counts(self) -> dict[str, int]:
        out = {"pass": 0, "warn": 0, "fail": 0, "skip": 0, "advice": 0}
        for r in self.results:
            out[r.status] += 1
        return out

    def blocking(self, strict: bool = False) -> list[Finding]:
        """Results that make the check fail: every `fail`, plus every `warn` under --strict (advice never)."""
        return [r for r in self.results if r.status == "fail" or (strict and r.status == "warn")]

    def ok(self, strict: bool = False) -> bool:
        return not self.blocking(strict)

    def next_command(self, strict: bool = False) -> str:
        blocking = self.blocking(strict)
        if blocking:
            fix = blocking[0].fix or "fix the failures above"
            return f"{fix}; then rerun `{self.rerun}`"
        if self.profile_path:
            return f"ascendctl serve {self.profile_path}"
        return "ascendctl check PROFILE.yaml (does this host run a given deployment?)"

    def to_dict(self, strict: bool = False) -> dict[str, object]:
        return {
            "schema": CHECK_JSON_SCHEMA,
            "headline": self.headline,
            "host": self.facts.to_dict(),
            "target": self.target,
            "profile": {"path": self.profile_path, "name": self.profile_name} if self.profile_path else None,
            "release": {"version": self.release, "source": self.release_source} if self.release else None,
            "results": [r.to_dict() for r in self.results],
            "summary": self.counts(),
            "strict": strict,
            "ok": self.ok(strict),
            "next": self.next_command(strict),
            **({"fabric": self.fabric} if self.fabric is not None else {}),
            **({"lock": self.lock} if self.lock is not None else {}),
        }
