"""What a profile leaves out that upstream's closest verified launch sets: the `plan.recipe.*` advice.

`plan` plans exactly what a profile says. Upstream's CI runs its own launch of most models on real hardware every
night (`ascendctl.facts.launches`), and those launches set what makes the model fast there: graph capture sizes,
batch limits, vllm-ascend switches, variables. This rule finds the launch `ascendctl init` would start from (its
ranking: `ascendctl.init.rank`), reads it as a profile (`ascendctl import`, retargeted like `init` does) and lists
each setting it makes that the profile neither says nor gets from the plan's defaults — with the launch's
`tag:path:line` and the profile line that would say it. Advice is printed, never applied.

Of a launch's variants (the equally ranked launches: a throughput and a low-latency one, eager and graph) the one
closest to the profile contradicts the fewest settings the profile says (an eager launch is no recipe for a profile
that captures graphs), then has the least advice. What is left out, and why:

- the layout (tensor / data / pipeline sizes): the devices and the fit decide it, `ascendctl init` and `fit` say it;
- the benchmark's own conditions (`_BENCHMARK_CONDITIONS`), which are not serving advice;
- model, server, network, timeouts and escape hatches: the model and where it is served are the operator's, and a
  raw `extra_args` item is no recipe;
- prefill/decode profiles (their launches are whole deployments; `ascendctl import` compares those).

Applied on demand (`plan`, `check PROFILE`, `tune --suggest`), never inside the planner: reading a launch plans it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import replace
from typing import Any

import yaml

from ascendctl.core.errors import AscendctlError
from ascendctl.core.findings import Each, Finding, Outcome, advise, findings_of, kebab, passed, rule, skipped
from ascendctl.facts.launches import family_of, launch_index
from ascendctl.facts.model_inspect import ModelConfig, read_model_config
from ascendctl.importer.compare import env_same
from ascendctl.init.compose import from_launch
from ascendctl.init.rank import Ask, Candidate, rank, variants
from ascendctl.plan.types import EngineSettings, Plan
from ascendctl.schema.profile import Profile
from ascendctl_engine.records import record

ConfigReader = Callable[[str], ModelConfig | None]
RULE_ID = "plan.recipe"

# The parts of a launch read as advice (dotted prefixes of the profile)
_ADVISED = ("engine.", "serving.", "runtime.env.", "runtime.cpu.", "model.hf_overrides.")
# ... and what under them is not: the layout, and what an escape hatch carries
_NOT_ADVISED = (
    "engine.parallel.tensor",
    "engine.parallel.data",
    "engine.parallel.data_per_node",
    "engine.parallel.pipeline",
    "engine.extra_args",
    "engine.additional_config",
    # which local files a request may name is a security decision (CI images allow `/`), not a recipe
    "serving.allowed_local_media_path",
)
# Settings upstream's performance launches make for the benchmark, not for serving
_BENCHMARK_CONDITIONS = {
    # every benchmark prompt is fresh: the cache would serve repeated prefixes and flatter the numbers
    "engine.scheduler.prefix_caching": False,
    # a fixed sampling seed makes the nightly accuracy comparable run to run
    "engine.seed": None,
}


@record(eq=False)
class RecipeInput:
    profile: Profile
    plan: Plan
    read_config: ConfigReader = read_model_config


@record(eq=False)
class _Advice:
    candidate: Candidate
    document: Mapping[str, Any]  # the launch read as a profile, retargeted
    items: tuple[Each, ...]
    contradicted: int  # settings the profile says that the launch sets otherwise

    @property
    def distance(self) -> tuple[int, int]:
        return self.contradicted, len(self.items)


@rule(
    RULE_ID,
    "info",
    "What the closest verified upstream launch sets that the profile does not (advice, never applied)",
    source="vllm-ascend's nightly CI launches (tests/e2e/**/configs/*.yaml of each tag; ascendctl.facts.launches)",
    on_demand=True,
)
def recipe(ctx: RecipeInput) -> Outcome | list[Each]:
    why_not = _not_advised(ctx.profile)
    if why_not:
        return skipped(why_not)
    ask = ask_of(ctx.profile, ctx.plan)
    found = closest(ask, ctx)
    if found is None:
        return skipped(f"no verified upstream launch of {ask.model} (or its family and size) to compare with")
    if not found.items:
        launch = found.candidate.launch
        return passed(f"the profile sets what {launch.case} ({launch.source}) sets")
    return list(found.items)


def recipe_advice(profile: Profile, plan: Plan, read_config: ConfigReader = read_model_config) -> list[Finding]:
    """The `plan.recipe.*` findings of a planned profile: advice, or one pass / skip saying why there is none."""
    return findings_of(RULE_ID, RecipeInput(profile, plan, read_config))


def with_advice(plan: Plan, advice: list[Finding]) -> Plan:
    """The plan with its advice among its findings (what `plan --json` prints)."""
    deployment = replace(plan.deployment, findings=(*plan.deployment.findings, *advice))
    return replace(plan, deployment=deployment)


def launch_settings(
    profile: Profile, plan: Plan, read_config: ConfigReader = read_model_config
) -> tuple[str, dict[str, Any]] | None:
    """The closest verified launch's `tag:path:line` and its advised settings by dotted path (what `tune --suggest`
    tries first); None when there is none to compare with."""
    if _not_advised(profile):
        return None
    found = closest(ask_of(profile, plan), RecipeInput(profile, plan, read_config))
    if found is None:
        return None
    return found.candidate.launch.source, {path: v for path, v in leaves(found.document) if _advised(path)}


def ask_of(profile: Profile, plan: Plan) -> Ask:
    model = profile.model.source.removeprefix("modelscope:")
    target = profile.target
    hardware = target.hardware or ""
    return Ask(
        model, family_of(model), hardware, target.devices_per_node, target.nodes, plan.deployment.release.version
    )


def closest(ask: Ask, ctx: RecipeInput) -> _Advice | None:
    """The best-ranked launch's variant the profile is closest to (the least advice), with that advice."""
    ranked = [c for c in rank(ask, launch_index()) if "pd" not in c.launch.features]
    found: list[_Advice] = []
    for candidate in variants(ranked):
        document = launch_document(candidate, ask, ctx.read_config)
        if document is not None:
            advised = [(path, value) for path, value in leaves(document) if _advised(path)]
            contradicted = sum(_said(ctx.plan, path) and not _planned_alike(ctx.plan, path, v) for path, v in advised)
            found.append(_Advice(candidate, document, tuple(_missing(advised, candidate, ctx)), contradicted))
    return min(found, key=lambda a: a.distance) if found else None


def launch_document(candidate: Candidate, ask: Ask, read_config: ConfigReader) -> dict[str, Any] | None:
    """The launch read as a profile, retargeted to what is asked (None when the import cannot read it)."""
    try:
        document, _ = from_launch(candidate, ask, read_config)
    except (AscendctlError, ValueError):
        return None
    return document


def _not_advised(profile: Profile) -> str:
    if profile.target.backend != "npu" or profile.target.hardware is None:
        return "upstream's launches run on Ascend hardware: a profile without target.hardware has none to compare"
    if profile.disaggregation is not None:
        return "a prefill/decode profile is a whole deployment: compare it with upstream's by `ascendctl import`"
    return ""


def leaves(document: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Every (dotted path, value) of a profile document; a list, and an empty mapping, is one value."""
    for key, value in document.items():
        path = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            yield from leaves(value, f"{path}.")
        else:
            yield path, value


def _advised(path: str) -> bool:
    return path.startswith(_ADVISED) and not path.startswith(_NOT_ADVISED) and path not in _BENCHMARK_CONDITIONS


def _missing(advised: Iterable[tuple[str, Any]], candidate: Candidate, ctx: RecipeInput) -> Iterator[Each]:
    launch = candidate.launch
    for path, value in advised:
        if _said(ctx.plan, path) or _planned_alike(ctx.plan, path, value) or "$" in str(value):
            continue  # `$X`: the CI runner's shell expands it from its own environment, no profile value
        line = f"{path}: {_flow(value)}"
        message = f"{launch.case} ({launch.mark(ctx.plan.deployment.release.version)}) sets {line}; this profile "
        message += "does not"
        yield Each(kebab(path), advise(message, line), launch.source)


def _setting(plan: Plan, path: str) -> tuple[str, Any, str] | None:
    """The dotted settings view's entry at `path` or above it: (its key, value, source)."""
    settings = plan.deployment.settings
    parts = path.split(".")
    for n in range(len(parts), 0, -1):
        key = ".".join(parts[:n])
        if key in settings:
            return key, settings[key].value, settings[key].source
    return None


def _said(plan: Plan, path: str) -> bool:
    """Whether the profile says this setting itself (any value: advice never overrides a choice)."""
    found = _setting(plan, path)
    if found is None:
        return False
    key, value, source = found
    if key == path:
        return source.startswith("user:")
    if isinstance(value, Mapping):  # runtime.env, model.hf_overrides: the profile's own keys
        return path[len(key) + 1 :] in value
    return source.startswith("user:") and value is not None


def _planned_alike(plan: Plan, path: str, value: Any) -> bool:
    """Whether the plan already gets the launch's value by itself (a default, the graph era, an exported variable)."""
    instance = plan.instances[0]
    if path.startswith("runtime.env."):
        name = path.removeprefix("runtime.env.")
        planned = instance.commands[0].env.get(name)
        return env_same(name, planned, str(value))
    for attr, dotted in EngineSettings.paths.items():
        if dotted == path:
            return _alike(getattr(instance.settings, attr).value, value)
    found = _setting(plan, path)
    return found is not None and found[0] == path and _alike(found[1], value)


def _alike(planned: Any, value: Any) -> bool:
    if isinstance(planned, (list, tuple)) and isinstance(value, (list, tuple)):
        return list(planned) == list(value)
    return bool(planned == value)


def _flow(value: Any) -> str:
    """A value as the one-line YAML a profile would hold."""
    return yaml.safe_dump(value, default_flow_style=True, width=10_000).strip().removesuffix("\n...").strip()


__all__ = [
    "RULE_ID",
    "RecipeInput",
    "ask_of",
    "closest",
    "launch_settings",
    "leaves",
    "recipe",
    "recipe_advice",
    "with_advice",
]
