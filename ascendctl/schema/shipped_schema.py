"""The profile's JSON Schema as shipped with ascendctl: `profile.schema.json` beside this module.

The schema is derived from the profile models (`ascendctl.schema.profile.profile_json_schema`), but deriving it
loads and builds every section model and asks pydantic to write the schema: about 0.13 s, most of what
`ascendctl schema` took. The file is that output, written by `python -m ascendctl.outputs.profile_doc --write`
together with docs/profile-reference.md, and tests/test_profile_doc.py fails when it is not byte for byte what the
models give, so the models stay its one owner. Editors can point at the installed file (or at `ascendctl schema`'s
output) for completion and validation.
"""

from __future__ import annotations

import json
from pathlib import Path

SHIPPED_SCHEMA = Path(__file__).with_name("profile.schema.json")


def schema_text(schema: dict[str, object]) -> str:
    """The shipped file's text for a schema: what `ascendctl schema` prints."""
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def shipped_schema_text() -> str:
    return SHIPPED_SCHEMA.read_text(encoding="utf-8")
