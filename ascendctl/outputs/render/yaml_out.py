"""YAML artifacts: objects built as Python data, serialized by PyYAML's safe dumper.

No YAML text is assembled by hand, so no value can end a line, open a new key or start a new document:
the dumper quotes whatever needs it. Strings carrying a line break or another non-printable character are
written double-quoted with escapes (`"x\\n---\\nkind: Pod"`), on one line, instead of PyYAML's folded
single-quoted form, so a reviewer sees them plainly. The only hand-written text is the leading comment
block, and its lines must be `Quoted` (built with `ascendctl.outputs.quoting.one_line`).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

import yaml

from ascendctl.outputs.quoting import Quoted

# Never fold long lines: an argv word or a JSON flag value stays on one line, as it is in the plan.
_NO_FOLDING = 1 << 30


def dump_documents(header: Sequence[Quoted], documents: Sequence[Mapping[str, Any]]) -> str:
    """`# header` lines, then each document, separated by explicit `---` lines."""
    comments = "".join(f"# {line}\n" if line else "#\n" for line in header)
    return comments + "---\n".join(_dump(doc) for doc in documents)


def _dump(document: Mapping[str, Any]) -> str:
    text = yaml.dump(
        document,
        Dumper=_dumper(),
        sort_keys=False,
        default_flow_style=False,
        allow_unicode=True,
        width=_NO_FOLDING,
    )
    return str(text)


@cache
def _dumper() -> Any:
    # libyaml's emitter when PyYAML was built with it (the same text, several times faster than the pure-Python one)
    class Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
        def ignore_aliases(self, data: Any) -> bool:
            return True  # a shared dict is written out each time: no `&id001` anchors for readers to follow

    Dumper.add_representer(str, _represent_str)
    return Dumper


def _represent_str(dumper: Any, value: str) -> Any:
    style = '"' if any(_breaks_lines(c) for c in value) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


def _breaks_lines(char: str) -> bool:
    return unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp") and char != "\t"
