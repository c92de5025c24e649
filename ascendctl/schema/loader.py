"""Load a profile: YAML boundary → `--set` overrides → schema → cross-field rules, all errors located."""

from __future__ import annotations

import difflib
import re
import types
import typing
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from ascendctl.core.errors import DocumentError, Issue, UserInputError
from ascendctl.core.findings import Finding
from ascendctl.core.yamlio import KeyPath, YamlDocument, dotted, load_yaml_file, load_yaml_text
from ascendctl.schema.profile import API_VERSION, Profile
from ascendctl.schema.profile_rules import profile_findings
from ascendctl_engine.records import record


@record
class Override:
    """One `--set key.path=value` given on the command line."""

    text: str
    path: KeyPath
    value: Any

    @property
    def source(self) -> str:
        # Never the value: any `--set` may carry a secret (an env value, an inline key, a node's env), and a
        # message that repeats it puts it in a terminal, a CI log or a bug report. The key path says where.
        return _shown(self.text.partition("=")[0].strip())

    def hide_value(self, message: str) -> str:
        """`message` without this override's value: each string it holds (quoted or, from 3 characters, as it
        is) becomes `<the --set value>`."""
        for text in sorted(_strings_in(self.value), key=len, reverse=True):
            message = message.replace(repr(text), _HIDDEN)
            if len(text) >= 3:
                message = message.replace(text, _HIDDEN)
        return message


_HIDDEN = "<the --set value>"
_GOT_SUFFIX = re.compile(r", got [^;]*$")


def _strings_in(value: Any) -> Iterator[str]:
    """Every string in a `--set` value (a YAML flow mapping or list holds several)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _strings_in(key)
            yield from _strings_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings_in(item)
    elif isinstance(value, str) and value:
        yield value
    # a number or a boolean is not searched for (`655` would mangle the bound `65535`): messages repeat one only
    # in pydantic's `, got VALUE` suffix, which is dropped


_KEY_TEXT = re.compile(r"[\w.\-\[\]]{1,200}")


def _shown(key: str) -> str:
    """How an override is named in messages: `--set KEY.PATH`, the key as typed when it reads as a key path; a
    key that does not (perhaps a value pasted without `KEY=`) is not repeated either."""
    return f"--set {key}" if _KEY_TEXT.fullmatch(key) else "--set <a key that is not a key path>"


def parse_override(text: str) -> Override:
    key, sep, raw = text.partition("=")
    parts = key.strip().split(".")
    if not sep or not key.strip() or any(not p for p in parts):
        shown = _shown(key.strip()) if sep else "--set <an argument without `=`>"
        raise UserInputError(f"{shown}: expected KEY.PATH=VALUE, e.g. --set server.port=8001")
    path: KeyPath = tuple(int(p) if p.isdecimal() and p.isascii() else p for p in parts)
    try:
        # The value goes through the same bounded YAML boundary as a file (no alias bombs, no Python tags).
        value = load_yaml_text(raw, _shown(key.strip())).data if raw.strip() else ""
    except DocumentError:
        value = raw  # not YAML: take it as the literal string the user typed
    if isinstance(value, (dict, list)) and raw.strip() and raw.strip()[0] not in "[{":
        value = raw
    return Override(text, path, value)


def load_profile(path: Path, overrides: Sequence[str] = ()) -> Profile:
    """The one way to read a profile. Raises `DocumentError` with every located issue."""
    doc = load_yaml_file(path)
    return validate_profile_document(doc, [parse_override(o) for o in overrides])


@record
class LoadedProfile:
    """A valid profile and its warn-level `profile.*` findings, located like errors (`file:line:col`)."""

    profile: Profile
    warnings: tuple[Issue, ...]


def load_profile_with_warnings(path: Path, overrides: Sequence[str] = ()) -> LoadedProfile:
    """`load_profile`, plus the warnings a valid profile still deserves (what `validate` prints). Raises like
    `load_profile`: only failing rules stop loading."""
    doc = load_yaml_file(path)
    parsed = [parse_override(o) for o in overrides]
    profile, findings = _validated(doc, parsed)
    warned = [f for f in findings if f.status == "warn"]
    return LoadedProfile(profile, tuple(_issue(doc, parsed, f.at or (), f.message) for f in warned))


def validate_profile_document(doc: YamlDocument, overrides: Sequence[Override] = ()) -> Profile:
    return _validated(doc, overrides)[0]


def _validated(doc: YamlDocument, overrides: Sequence[Override]) -> tuple[Profile, list[Finding]]:
    """The profile and every `profile.*` finding; raises `DocumentError` for schema errors and failing rules."""
    data = doc.data
    if data is None:
        raise DocumentError(
            [
                Issue(
                    doc.source,
                    1,
                    1,
                    "",
                    f"the document is empty; a profile starts with `apiVersion: {API_VERSION}`",
                )
            ]
        )
    if not isinstance(data, dict):
        kind = "a list" if isinstance(data, list) else f"a {type(data).__name__}"
        raise DocumentError(
            [
                Issue(
                    doc.source,
                    1,
                    1,
                    "",
                    f"expected a mapping (apiVersion, kind, metadata, ...), found {kind}",
                )
            ]
        )
    for override in overrides:
        _apply(data, override)
    version = data.get("apiVersion")
    if version is not None and version != API_VERSION:
        raise DocumentError(
            [
                _issue(
                    doc,
                    overrides,
                    ("apiVersion",),
                    f"unsupported apiVersion {version!r}; this ascendctl reads {API_VERSION!r}",
                )
            ]
        )
    try:
        profile = Profile.model_validate(data)
    except ValidationError as exc:
        raise DocumentError(_schema_issues(doc, overrides, exc, data)) from None
    findings = profile_findings(profile)
    failed = [f for f in findings if f.status == "fail"]
    if failed:
        raise DocumentError([_issue(doc, overrides, f.at or (), f.message) for f in failed])
    return profile, findings


def _apply(data: dict[str, Any], override: Override) -> None:
    node: Any = data
    for i, part in enumerate(override.path[:-1]):
        nxt = override.path[i + 1]
        if isinstance(node, list) and isinstance(part, int):
            if part >= len(node):
                raise _override_error(override, i, f"index {part} is past the end of the list")
            node = node[part]
            continue
        if not isinstance(node, dict):
            raise _override_error(override, i, "is not a mapping")
        child = node.get(str(part))
        if child is None:
            child = [] if isinstance(nxt, int) else {}
            node[str(part)] = child
        node = child
    last = override.path[-1]
    if isinstance(node, list) and isinstance(last, int):
        if last > len(node):
            raise _override_error(override, len(override.path) - 1, f"index {last} is past the end of the list")
        if last == len(node):
            node.append(override.value)
        else:
            node[last] = override.value
    elif isinstance(node, dict):
        node[str(last)] = override.value
    else:
        raise _override_error(override, len(override.path) - 1, "is not a mapping")


def _override_error(override: Override, depth: int, problem: str) -> DocumentError:
    """The override cannot be applied: `override.path[:depth]` is not the container it needs."""
    return DocumentError([Issue(override.source, 0, 0, dotted(override.path[:depth]), problem)])


def _issue(
    doc: YamlDocument, overrides: Sequence[Override], path: KeyPath, message: str, *, at_key: bool = False
) -> Issue:
    # Blame the latest override that touched the problem: one that set this path, a parent or a child of
    # it, or that created the part of the tree holding it (the file does not have that part). No message
    # repeats a `--set` value, whichever issue it is (a cross-field rule may quote another key's value).
    for override in overrides:
        message = override.hide_value(message)
    wanted = tuple(str(p) for p in path)
    in_file = max((n for n in range(len(path) + 1) if path[:n] in doc.marks), default=0)
    for override in reversed(overrides):
        given = tuple(str(p) for p in override.path)
        shorter = min(len(wanted), len(given))
        common = next((i for i in range(shorter) if wanted[i] != given[i]), shorter)
        if wanted and (common == shorter or common > in_file):
            # pydantic's `, got VALUE` suffix repeats the value as it was typed (a number too): dropped
            return Issue(override.source, 0, 0, dotted(path), _GOT_SUFFIX.sub("", message))
    return doc.issue(path, message, at_key=at_key)


def _schema_issues(doc: YamlDocument, overrides: Sequence[Override], exc: ValidationError, data: Any) -> list[Issue]:
    issues: list[Issue] = []
    seen: set[tuple[KeyPath, str]] = set()
    for err in exc.errors(include_url=False):
        loc = _clean_loc(err["loc"], data)
        kind = err["type"]
        if kind == "extra_forbidden":
            message = _unknown_key_message(loc)
            issue = _issue(doc, overrides, loc, message, at_key=True)
        elif kind == "missing":
            issue = _issue(doc, overrides, loc, "required key is missing")
        else:
            message = _friendly(err["msg"], err.get("input"))
            issue = _issue(doc, overrides, loc, message)
        key = (loc, issue.message)
        if key not in seen:
            seen.add(key)
            issues.append(issue)
    issues.sort(key=lambda i: (i.line <= 0, i.line, i.column))
    return issues


def _clean_loc(loc: Iterable[int | str], data: Any) -> KeyPath:
    """The key path of a pydantic error location, walked along the data that was validated.

    Pydantic puts union branch tags ("list[...]", "str", "function-after[...]") into `loc`; they are not
    keys. A part is kept when the data has it (so a user's key that looks like a tag stays), or when it
    does not look like a tag (a missing required key).
    """
    out: list[str | int] = []
    node: Any = data
    for part in loc:
        in_dict = isinstance(node, dict) and part in node
        in_list = isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        if in_dict or in_list:
            node = node[part]
        elif isinstance(part, str) and ("[" in part or part in _UNION_TAGS):
            continue
        else:
            node = None
        out.append(part)
    return tuple(out)


_UNION_TAGS = frozenset({"str", "int", "float", "bool", "none"})


def _friendly(msg: str, value: Any) -> str:
    msg = msg.removeprefix("Value error, ")
    if msg.startswith("Input should be") and value is not None and not isinstance(value, (dict, list)):
        return f"{msg[0].lower()}{msg[1:]}, got {value!r}"
    return msg[0].lower() + msg[1:] if msg else msg


def _unknown_key_message(loc: KeyPath) -> str:
    key = str(loc[-1])
    known = _fields_at(loc[:-1])
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]!r}?)" if close else (f"; allowed: {', '.join(known)}" if known else "")
    return f"unknown key {key!r}{hint}"


def _fields_at(path: KeyPath) -> list[str]:
    """Names of the fields of the model found at `path` inside `Profile` (for did-you-mean)."""
    model: type[BaseModel] | None = Profile
    for part in path:
        if model is None or isinstance(part, int):
            continue
        field = model.model_fields.get(str(part))
        model = _model_in(field.annotation) if field else None
    return sorted(model.model_fields) if model else []


def _model_in(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType, list, typing.Annotated):
        for arg in typing.get_args(annotation):
            found = _model_in(arg)
            if found is not None:
                return found
    return None
