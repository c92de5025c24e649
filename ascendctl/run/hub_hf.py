"""The Hugging Face edge of `ascendctl.run.hub`: `huggingface_hub.snapshot_download` (the optional `hub` extra).

The endpoint (`HF_ENDPOINT`) and the cache (`model_inspect.hf_cache_dir`: `HF_HUB_CACHE`, `HUGGINGFACE_HUB_CACHE`,
else `HF_HOME/hub`, as huggingface_hub resolves them) are
passed explicitly rather than left to the library's import-time constants, so the files land where the plan looks
(`locate_model_dir`) even when the environment changed after the library was imported. An interrupted download
is resumed by the next one with `Range: bytes=N-` (`HfClient._prefetch_blobs` says how and why).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from urllib.parse import urlparse

from huggingface_hub import HfApi, get_hf_file_metadata, hf_hub_url, snapshot_download
from huggingface_hub.file_download import http_get, repo_folder_name
from huggingface_hub.utils import (
    GatedRepoError,
    HfHubHTTPError,
    LocalEntryNotFoundError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
    WeakFileLock,
    are_progress_bars_disabled,
    build_hf_headers,
    disable_progress_bars,
    enable_progress_bars,
    filter_repo_objects,
)

from ascendctl.core.errors import OperationFailed
from ascendctl.facts.model_inspect import hf_cache_dir
from ascendctl.run.hub import RESUME_HINT, first_line, offline_flag

DEFAULT_ENDPOINT = "https://huggingface.co"
# a blob's name in the cache: the git sha1 of a small file or the sha256 of an LFS one (anything else is left to the
# library: it never becomes a path here)
BLOB_ETAG = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")


class HfClient:
    """Downloads from the Hugging Face Hub (or the `HF_ENDPOINT` mirror) into the Hugging Face cache."""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        e = os.environ if env is None else env
        self.endpoint = (e.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")
        self.cache_dir = hf_cache_dir(e)
        self.offline = offline_flag(e)

    def download(self, repo_id: str, *, revision: str | None, patterns: Sequence[str] | None, progress: bool) -> Path:
        if self.offline:
            raise OperationFailed(
                f"{self.offline} is set: the hub is not contacted; unset it to download {repo_id} from {self.endpoint}"
            )
        quiet = not progress and not are_progress_bars_disabled()
        if quiet:
            disable_progress_bars()
        try:
            self._prefetch_blobs(repo_id, revision, patterns)
            return Path(
                snapshot_download(
                    repo_id,
                    revision=revision,
                    allow_patterns=list(patterns) if patterns else None,
                    cache_dir=str(self.cache_dir),
                    endpoint=self.endpoint,
                )
            )
        except GatedRepoError:
            raise OperationFailed(
                f"{repo_id} is gated on {self.endpoint}: accept its terms there and set HF_TOKEN"
            ) from None
        except RepositoryNotFoundError:
            raise OperationFailed(
                f"{repo_id}: no such model on {self.endpoint} (a private one needs HF_TOKEN)"
            ) from None
        except RevisionNotFoundError:
            raise OperationFailed(f"{repo_id}: no revision {revision!r} on {self.endpoint}") from None
        except LocalEntryNotFoundError as exc:  # the listing failed and nothing usable is cached
            cause = exc.__cause__ or exc
            raise OperationFailed(
                f"cannot reach {self.endpoint} for {repo_id} ({type(cause).__name__}: {first_line(cause)}); "
                "check the network or HF_ENDPOINT"
            ) from None
        except HfHubHTTPError as exc:
            raise OperationFailed(
                f"download of {repo_id} from {self.endpoint} failed: {first_line(exc)}; {RESUME_HINT}"
            ) from None
        # The library's transport errors (requests, httpx or httpx2 by its version) and its consistency checks
        # (OSError) have no common base to name here: every other failure of the download is reported as one.
        except Exception as exc:
            raise OperationFailed(
                f"download of {repo_id} from {self.endpoint} failed ({type(exc).__name__}: {first_line(exc)}); "
                f"{RESUME_HINT}"
            ) from None
        finally:
            if quiet:
                enable_progress_bars()

    def _prefetch_blobs(self, repo_id: str, revision: str | None, patterns: Sequence[str] | None) -> None:
        """Fetch each wanted file's blob with a partial file that survives an interrupted pull.

        huggingface_hub resumes a dropped connection within one download (`http_get` retries with a byte range),
        but since huggingface/huggingface_hub#4228 (release 1.18) it writes into a process-unique temporary file
        that it deletes when the download fails: a pull stopped mid-file (Ctrl-C, a dead connection) would start
        that file over. So each blob is fetched here first into `blobs/<etag>.incomplete` (the name older releases
        of the library resume from too), appending from the partial file's size with `Range: bytes=N-` through the
        library's own `http_get`, under the library's per-blob lock; `snapshot_download` then finds the blobs and
        only links them into the snapshot (it also writes `refs/<revision>`)."""
        try:
            info = HfApi(endpoint=self.endpoint).model_info(repo_id, revision=revision)
        # The listing's failures (no network, no such repository) are reported by `snapshot_download`, which runs
        # next and also falls back to a complete cached snapshot when the hub cannot be reached.
        except Exception:
            return
        names = [s.rfilename for s in info.siblings or []]
        folder = repo_folder_name(repo_id=repo_id, repo_type="model")
        headers = build_hf_headers()
        for name in filter_repo_objects(names, allow_patterns=list(patterns) if patterns else None):
            url = hf_hub_url(repo_id, name, revision=info.sha, endpoint=self.endpoint)
            meta = get_hf_file_metadata(url, headers=headers)
            if meta.etag is None or not BLOB_ETAG.match(meta.etag) or meta.size is None:
                continue
            blob = self.cache_dir / folder / "blobs" / meta.etag
            lock = self.cache_dir / ".locks" / folder / f"{meta.etag}.lock"
            if blob.exists():
                continue
            blob.parent.mkdir(parents=True, exist_ok=True)
            lock.parent.mkdir(parents=True, exist_ok=True)
            with WeakFileLock(lock):
                if blob.exists():  # another process finished it while this one waited
                    continue
                target = meta.location or url
                sent = dict(headers)
                if urlparse(target).netloc != urlparse(url).netloc:  # the token is the hub's, not its CDN's
                    sent.pop("authorization", None)
                partial = blob.with_name(f"{meta.etag}.incomplete")
                with partial.open("ab") as out:
                    http_get(target, out, resume_size=out.tell(), headers=sent, expected_size=meta.size,
                             displayed_filename=name)  # fmt: skip
                partial.replace(blob)
