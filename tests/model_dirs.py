"""A model directory for a test: the published config.json of a known model (ascendctl/facts/data/model_configs/),
with some keys changed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parents[1] / "ascendctl" / "facts" / "data" / "model_configs"


def model_dir(tmp_path: Path, fixture: str, **overrides: Any) -> Path:
    """`tmp_path/<fixture>/config.json`: the fixture's config with `overrides` applied."""
    directory = tmp_path / fixture
    directory.mkdir(exist_ok=True)
    config = json.loads((FIXTURES / f"{fixture}.json").read_text())
    (directory / "config.json").write_text(json.dumps({**config, **overrides}))
    return directory
