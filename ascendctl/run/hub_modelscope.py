"""The ModelScope edge of `ascendctl.run.hub`: `modelscope.snapshot_download` (the optional `hub` extra).

The library picks its cache (`MODELSCOPE_CACHE`, else `~/.cache/modelscope/hub`, `models/ORG/NAME` below it), the
one `model_inspect.modelscope_dir` reads; it resumes a partial file with a byte range and draws its own progress
bars. Its endpoint is `MODELSCOPE_DOMAIN` as the library reads it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from modelscope import snapshot_download

from ascendctl.core.errors import OperationFailed
from ascendctl.run.hub import RESUME_HINT, first_line


class ModelScopeClient:
    """Downloads from ModelScope into the ModelScope cache."""

    def download(self, repo_id: str, *, revision: str | None, patterns: Sequence[str] | None, progress: bool) -> Path:
        # `progress` is the library's own: it draws a bar per file and has no switch that every release reads
        del progress
        try:
            return Path(
                snapshot_download(repo_id, revision=revision, allow_patterns=list(patterns) if patterns else None)
            )
        # The library raises requests' errors and its own (not-found, invalid-parameter, file-integrity) without a
        # common base: every failure of the download is reported as one line.
        except Exception as exc:
            raise OperationFailed(
                f"download of {repo_id} from ModelScope failed ({type(exc).__name__}: {first_line(exc)}); {RESUME_HINT}"
            ) from None
