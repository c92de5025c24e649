"""How each consumer reads a rendered artifact back, written from the consumers' documented rules (not from
the renderer's code), so tests can compare what a consumer sees with what the planner planned.

- `k8s_expand`: Kubernetes' `$(VAR)` expansion of command, args and env values
  (k8s.io/kubernetes third_party/forked/golang/expansion/expand.go).
- `compose_unescape`: compose's interpolation for a value with no variables (`$$` → `$`; any other `$`
  would be a variable, which this helper refuses).
- `systemd_words`: systemd's splitting of an ExecStart= value (systemd.syntax(7) "Quoting",
  systemd.service(5) "Command lines", systemd.unit(5) "Specifiers").
"""

from __future__ import annotations

import json
import stat
import subprocess
from collections.abc import Mapping
from pathlib import Path


def k8s_expand(text: str, env: Mapping[str, str]) -> str:
    """`$$` → `$`; `$(NAME)` → env[NAME] when defined, else kept as written; any other `$` kept."""
    out: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char != "$" or i + 1 == len(text):
            out.append(char)
            i += 1
            continue
        following = text[i + 1]
        if following == "$":
            out.append("$")
            i += 2
        elif following == "(" and (end := text.find(")", i + 2)) != -1:
            name = text[i + 2 : end]
            out.append(env.get(name, f"$({name})"))
            i = end + 1
        else:
            out.append("$" + following)
            i += 2
    return "".join(out)


def compose_unescape(text: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(text):
        if text[i] == "$":
            if text[i + 1 : i + 2] != "$":
                raise AssertionError(f"compose would interpolate {text[i:]!r}")
            out.append("$")
            i += 2
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


_C_ESCAPES = {"\\": "\\", '"': '"', "'": "'", "n": "\n", "t": "\t", "r": "\r", "s": " ", "a": "\a", "b": "\b"}


def systemd_words(value: str) -> list[str]:
    """Split an ExecStart= value into argv the way systemd does, for the syntax used here: bare words,
    double-quoted words with C escapes; then `%%` → `%` everywhere and `$$` → `$` after the first word.
    Any other specifier or `$` is refused (it would be expanded)."""
    words = [_resolve_specifiers(w) for w in _split(value)]
    return words[:1] + [_resolve_dollars(w) for w in words[1:]]


def _split(value: str) -> list[str]:
    words: list[str] = []
    i = 0
    while i < len(value):
        if value[i].isspace():
            i += 1
            continue
        word: list[str] = []
        quoted = value[i] == '"'
        i += 1 if quoted else 0
        while i < len(value):
            char = value[i]
            if char == "\\":
                word.append(_C_ESCAPES[value[i + 1]])
                i += 2
            elif quoted and char == '"':
                i += 1
                assert i == len(value) or value[i].isspace(), f"a quote must end a word: {value!r}"
                break
            elif not quoted and char.isspace():
                break
            else:
                assert quoted or char not in "\"'", f"unexpected quote inside a bare word: {value!r}"
                word.append(char)
                i += 1
        else:
            assert not quoted, f"unterminated quote: {value!r}"
        words.append("".join(word))
    return words


def _resolve_specifiers(word: str) -> str:
    return _resolve_doubled(word, "%", "specifier")


def _resolve_dollars(word: str) -> str:
    return _resolve_doubled(word, "$", "variable")


def _resolve_doubled(word: str, marker: str, what: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(word):
        if word[i] == marker:
            if word[i + 1 : i + 2] != marker:
                raise AssertionError(f"systemd would expand the {what} in {word[i:]!r}")
            out.append(marker)
            i += 2
        else:
            out.append(word[i])
            i += 1
    return "".join(out)


def run_worker_shell(script: str, tmp_path: Path, env: dict[str, str]) -> list[str]:
    """Run a rendered `sh -c` script as a pod would (Kubernetes expands it first) with a fake `vllm` that
    records the argv it was given."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    fake = bin_dir / "vllm"
    fake.write_text('#!/usr/bin/env python3\nimport json, sys\nprint(json.dumps(["vllm", *sys.argv[1:]]))\n')
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    out = subprocess.run(
        ["/bin/sh", "-c", k8s_expand(script, env)],
        env={"PATH": f"{bin_dir}:/usr/bin:/bin", **env},
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    return json.loads(out.stdout)
