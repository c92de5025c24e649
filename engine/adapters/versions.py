"""Version comparison of host-side component versions (CANN, HDK driver), which follow their own
schemes (`8.3.RC2`, `9.1.0-beta.1`, `25.5.1`, `26.0.rc1`); PEP 440 parsing normalises all of these."""

from __future__ import annotations

from packaging.version import InvalidVersion, Version


def parse_loose(text: str | None) -> Version | None:
    if not text:
        return None
    cleaned = text.strip().lstrip("vV")
    try:
        return Version(cleaned)
    except InvalidVersion:
        return None


def below(version: str | None, threshold: str) -> bool | None:
    """Whether `version` is older than `threshold`; None when the version is unknown or unparseable."""
    parsed = parse_loose(version)
    if parsed is None:
        return None
    return parsed < Version(threshold)
