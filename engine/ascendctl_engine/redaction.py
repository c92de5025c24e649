"""Keeping secret values out of what is printed and logged: the one minimum length of a secret, the strings the
engine log replaces (a secret's whole value and each of its lines), and key-bearing text of logs we did not
write (`ascendctl diagnose LOGFILE`).

Why a minimum: redaction replaces every occurrence of the value. A one-character secret would turn every `a` of
the log into `<redacted>`, which shows the secret instead of hiding it, and a short one matches ordinary words.
A secret (or a line of one) shorter than `MIN_SECRET_CHARS` is refused when the launcher reads it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ascendctl_engine.spec import REDACTED, is_secret_name

MIN_SECRET_CHARS = 8  # the shortest secret (and line of a multi-line one) the launcher accepts


def too_short(value: str) -> str | None:
    """Why `value` cannot be a secret this tool can redact (None: it can): the whole value, or one of its
    non-blank lines, is shorter than `MIN_SECRET_CHARS`. The value is never part of the answer."""
    if len(value.strip()) < MIN_SECRET_CHARS:
        return f"is shorter than {MIN_SECRET_CHARS} characters, the minimum (a shorter one cannot be redacted safely)"
    if any(0 < len(line.strip()) < MIN_SECRET_CHARS for line in value.splitlines()):
        return (
            f"has a line shorter than {MIN_SECRET_CHARS} characters, the minimum for each line of a multi-line "
            "secret (each line is redacted on its own)"
        )
    return None


def secret_needles(values: Iterable[str]) -> list[str]:
    """What the log replaces for these secrets, longest first: each value whole and, for a multi-line one, each
    of its lines (stripped) of at least `MIN_SECRET_CHARS` — the log is written line by line, so a whole
    multi-line value never appears in one log line."""
    needles: set[str] = set()
    for value in values:
        if value:
            needles.add(value)
        for line in value.splitlines():
            if len(line.strip()) >= MIN_SECRET_CHARS:
                needles.add(line.strip())
    return sorted(needles, key=len, reverse=True)


def redact(text: str, needles: Iterable[str]) -> str:
    for needle in needles:
        text = text.replace(needle, REDACTED)
    return text


# Key-bearing text in a log of unknown origin. Each pattern is linear (no nested quantifiers) and replaces the
# value only, so the line still says what it was.
# A flag's value as a shell or a log writes it: "in double quotes", 'in single quotes' (spaces and all), or a word.
_SECRET_FLAG = re.compile(r"(?i)(--(?:api[-_]key|hf[-_]token)(?:=|\s+))(\"[^\"]*\"|'[^']*'|[^\s'\",]+)")
_BEARER = re.compile(r"(?i)\b(bearer\s+)([A-Za-z0-9._~+/=-]+)")
_AUTH_HEADER = re.compile(
    r"(?i)(\b(?:proxy-)?authorization['\"]?\s*[:=]\s*['\"]?(?:(?:bearer|basic|digest|token)\s+)?)([^\s'\",]+)"
)
# NAME=VALUE, NAME: VALUE, 'name': 'value', "name"="value": the name decides (`spec.is_secret_name`).
# A list's first item counts as the value (vLLM logs `non-default args: {'api_key': ['sk-…']}`).
_ASSIGNMENT = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)(['\"]?\s*[:=]\s*\[?\s*['\"]?)([^\s'\",}\]]+)")
# The password of a URL's user information (`https://user:PASSWORD@host/`, RFC 3986 section 3.2.1).
_URL_PASSWORD = re.compile(r"(?i)(\b[a-z][a-z0-9+.-]*://[^\s:/@]+:)([^\s@/]+)(@)")


def _assignment(match: re.Match[str]) -> str:
    name, sep, value = match.groups()
    if not is_secret_name(name) or value == REDACTED or value.lower() in _NOT_A_VALUE:
        return match[0]
    return f"{name}{sep}{REDACTED}"


# What follows a secret's name without being its value: a switch, a placeholder, an empty marker.
_NOT_A_VALUE = frozenset({"0", "1", "true", "false", "yes", "no", "on", "off", "none", "null", "<redacted>"})


def redact_key_material(line: str) -> str:
    """`line` with the values of key-bearing text replaced: `--api-key X` (quoted too), `*_TOKEN=X`, `*_KEY: X`,
    `'api_key': 'X'` (or `['X']`), `Authorization: Bearer X`, a URL's `user:PASSWORD@`."""
    line = _SECRET_FLAG.sub(lambda m: m[1] + REDACTED, line)
    line = _BEARER.sub(lambda m: m[1] + REDACTED, line)
    line = _AUTH_HEADER.sub(lambda m: m[1] + (m[2] if m[2] == REDACTED else REDACTED), line)
    line = _URL_PASSWORD.sub(lambda m: m[1] + REDACTED + m[3], line)
    return _ASSIGNMENT.sub(_assignment, line)
