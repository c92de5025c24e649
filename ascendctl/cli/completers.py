"""Shell completion of option and argument values (`typer.Option(autocompletion=...)`), each from its one owner.

- `render -t`: the render targets (`ascendctl.outputs.targets`, the registry `ascendctl.outputs.render` pairs with
  its renderers);
- `--release`: the pins and every release of the support matrix (`ascendctl.facts.matrix`); `--hardware`: the
  matrix's hardware ids (`matrix VIEW` completes its views from `ascendctl.cli.matrix.VIEWS`, beside them);
- `stop`, `logs`, `status NAME`: the deployments recorded on this host (`ascendctl_engine.state.StateStore`);
- `model prepare NAME`: the models ascendctl prepares (`ascendctl_engine.prepared_models.CATALOG`);
- `--set`: the profile's dotted key paths down to the leaves of its JSON Schema (the shipped copy,
  `ascendctl.schema.shipped_schema`, which tests/test_profile_doc.py holds equal to the models' own); a free-form
  map (`runtime.env`, `engine.additional_config`) ends at the map (`runtime.env.`), its keys being the user's;
- `--allow`: the ids of the rules an `allow` can accept (`ascendctl.core.findings.RULES`, filled by the rule
  modules `ascendctl.outputs.rules_doc` imports).

A shell runs the completion at each TAB (`_ASCENDCTL_COMPLETE=complete_bash ascendctl`), so a completer reads what
it needs when it is asked and never fails: whatever goes wrong (a state directory that cannot be read, a broken
install) gives no candidates rather than a traceback in the user's prompt. Every import is inside the completer:
typer only inspects these functions' signatures when it builds a command, which every start does.

The annotations are not postponed (no `from __future__ import annotations`): typer reads each completer's
signature at every start (see `ascendctl.cli`).
"""

import functools
from collections.abc import Callable, Iterator
from typing import Annotated, Any, TypeAlias

import typer

# A candidate: the value, or the value and a line of help (shown by zsh and fish).
Candidate: TypeAlias = str | tuple[str, str]

# JSON Schema keywords whose alternatives a profile value may take (`anyOf` of a model and null, say).
_ALTERNATIVES = ("anyOf", "oneOf", "allOf")


def _never_fails(completer: Callable[[str], list[Candidate]]) -> Callable[[str], list[Candidate]]:
    @functools.wraps(completer)
    def complete(incomplete: str) -> list[Candidate]:
        try:
            return [c for c in completer(incomplete) if (c if isinstance(c, str) else c[0]).startswith(incomplete)]
        except Exception:  # a completion offers nothing rather than a traceback at the prompt
            return []

    return complete


@_never_fails
def render_targets(incomplete: str) -> list[Candidate]:
    """`render -t`: every render target, with its one-line help."""
    from ascendctl.outputs.targets import TARGETS_BY_NAME

    return [(name, target.help) for name, target in TARGETS_BY_NAME.items()]


@_never_fails
def releases(incomplete: str) -> list[Candidate]:
    """`--release`: the pins (`latest-stable`, `latest`), then every release row of the support matrix, newest first."""
    from ascendctl.facts.matrix import LATEST, LATEST_STABLE, load_matrix

    found: dict[str, str] = {
        LATEST_STABLE: "the newest final release of the backend",
        LATEST: "the newest release of the backend, release candidates included",
    }
    for row in load_matrix().releases:
        found.setdefault(row.version, f"{row.backend} ({row.status})")
    return list(found.items())


@_never_fails
def hardware_ids(incomplete: str) -> list[Candidate]:
    """`--hardware`: the hardware families of the support matrix."""
    from ascendctl.facts.matrix import load_matrix

    return [(hardware.id, hardware.name) for hardware in load_matrix().hardware]


def _ignore(message: str) -> None:
    return None


@_never_fails
def deployment_names(incomplete: str) -> list[Candidate]:
    """`stop`, `logs`, `status NAME`: the deployments recorded on this host (running ones; nothing is cleaned up)."""
    from ascendctl_engine.state import StateStore

    return sorted({entry.state.name for entry in StateStore(warn=_ignore).entries(clean=False)})


# `stop NAME` / `logs NAME`: the one way a command names a deployment it acts on
DeploymentName: TypeAlias = Annotated[
    str,
    typer.Argument(
        help="Deployment name (metadata.name of its profile).", show_default=False, autocompletion=deployment_names
    ),
]


@_never_fails
def preparable_models(incomplete: str) -> list[Candidate]:
    """`model prepare NAME`: the models ascendctl can prepare, with their descriptions."""
    from ascendctl_engine.prepared_models import CATALOG

    return [(name, recipe.description) for name, recipe in sorted(CATALOG.items())]


@_never_fails
def allowable_rule_ids(incomplete: str) -> list[Candidate]:
    """`--allow`: the id of every rule whose failures an `allow` can accept, with its title."""
    import ascendctl.outputs.rules_doc  # noqa: F401  (imports every rule module, which registers its rules)
    from ascendctl.core.findings import RULES

    return [(rule_id, rule.title) for rule_id, rule in sorted(RULES.items()) if rule.allowable]


@_never_fails
def profile_paths(incomplete: str) -> list[Candidate]:
    """`--set`: every dotted key path of a profile down to the schema's leaves; a free-form map ends with `.`."""
    if "=" in incomplete:  # the value is being typed: nothing to offer
        return []
    import json

    from ascendctl.schema.shipped_schema import shipped_schema_text

    schema = json.loads(shipped_schema_text())
    return list(dict.fromkeys(schema_paths(schema, schema)))


def schema_paths(
    node: Any, root: dict[str, Any], prefix: str = "", seen: frozenset[str] = frozenset()
) -> Iterator[str]:
    """The dotted paths under `node` (a JSON Schema in `root`): a leaf's path, a free-form map's path and a `.`.

    A model's fields are walked into (`$ref`, and the alternatives of `anyOf`: a model or null); an array is a leaf
    (its value is a list); a map of arbitrary keys ends the path with a `.`, the keys being the user's."""
    if not isinstance(node, dict):
        return
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        if ref in seen:  # a model that contains itself: stop where it starts again
            return
        target = root.get("$defs", {}).get(ref.removeprefix("#/$defs/"))
        yield from schema_paths(target, root, prefix, seen | {ref})
        return
    properties = node.get("properties")
    alternatives = [
        a for key in _ALTERNATIVES for a in node.get(key, ()) if isinstance(a, dict) and a.get("type") != "null"
    ]
    if isinstance(properties, dict) and properties:
        for name, child in properties.items():
            yield from schema_paths(child, root, f"{prefix}.{name}" if prefix else name, seen)
        return
    if alternatives:
        for alternative in alternatives:
            yield from schema_paths(alternative, root, prefix, seen)
        return
    if not prefix:
        return
    extra = node.get("additionalProperties")
    if node.get("type") == "object" and extra is not False:
        yield f"{prefix}."  # a free-form map: its keys are the user's
        return
    yield prefix
