"""The jinja2 environment of the shell and systemd templates, which refuses unquoted values.

The templates only lay text out. Each `{{ ... }}` must produce either an integer or a `Quoted` string —
the result of one of the quoting filters registered below — and `finalize` raises `UnquotedValue` for
anything else, so a template line cannot interpolate a raw profile string (a model path, an env value)
into a script by accident. Plain text belongs outside `{{ }}`.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import jinja2

from ascendctl.outputs.quoting import Quoted, one_line, sh_join, sh_word, shell_name
from ascendctl.outputs.render import systemd_syntax


class UnquotedValue(TypeError):
    """A template interpolated a value no quoting filter produced (a bug in a template)."""


def refuse_unquoted(value: object) -> object:
    """jinja2's `finalize` hook: pass `Quoted` text and integers, refuse everything else."""
    if isinstance(value, Quoted) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    raise UnquotedValue(
        f"a template interpolates an unquoted {type(value).__name__} ({value!r:.80}); "
        "pass it through a quoting filter (sh, shjoin, name, comment, systemd_text, systemd_path)"
    )


# Filter name → function; every one returns `Quoted`.
FILTERS: dict[str, Any] = {
    "sh": sh_word,
    "shjoin": sh_join,
    "name": shell_name,
    "comment": one_line,
    "systemd_text": systemd_syntax.text,
    "systemd_path": systemd_syntax.path,
}


@cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("ascendctl.outputs.render", "templates"),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=refuse_unquoted,
        autoescape=False,  # noqa: S701 - output is shell/ini; values are quoted by the filters, `finalize` enforces it
    )
    env.filters.update(FILTERS)
    return env


def render_template(name: str, **values: object) -> str:
    return environment().get_template(name).render(**values)
