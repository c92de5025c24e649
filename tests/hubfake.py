"""A fake Hugging Face Hub on 127.0.0.1: just the endpoints `huggingface_hub` calls for `snapshot_download` and
`hf_hub_download`, selected with `HF_ENDPOINT`.

- `GET /api/models/ORG/NAME[/revision/REV]`: {id, sha, siblings}; an unknown repo is 404 `X-Error-Code: RepoNotFound`,
  an unknown revision 404 `RevisionNotFound` (as `hf_raise_for_status` reads them);
- `GET /api/models/ORG/NAME/tree/REV`: the file list (one page: no `Link` header);
- `HEAD|GET /ORG/NAME/resolve/REV/FILE`: `X-Repo-Commit`, `ETag` (the sha256: the blob's name in the cache),
  `Content-Length`, and `Range: bytes=N-` answered 206 with `Content-Range`.

`cut_after` makes the next GET of a file send that many bytes and close the connection mid-body, and every
later GET answer 500 until `heal()`: a download that stops partway and cannot resume in the same run.
`stall_after` makes the next GET send that many bytes, set `stalled` and hold the connection until `release` is
set (or 30 s): a download in progress to interrupt. Every request is recorded (method, path, Range header).
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote, urlparse

COMMIT = "0123456789abcdef0123456789abcdef01234567"


@dataclass
class Request:
    method: str
    path: str
    range: str | None


@dataclass
class FakeHub:
    repos: dict[str, dict[str, bytes]]  # repo id → file name → content
    commit: str = COMMIT
    requests: list[Request] = field(default_factory=list)
    cut_after: dict[str, int] = field(default_factory=dict)  # file name → bytes sent before the connection drops
    broken: set[str] = field(default_factory=set)  # files that answer 500 (after a cut) until heal()
    stall_after: dict[str, int] = field(default_factory=dict)  # file name → bytes sent before the server stalls
    stalled: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)
    server: ThreadingHTTPServer | None = None

    @property
    def endpoint(self) -> str:
        assert self.server is not None
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    def heal(self) -> None:
        self.broken.clear()

    def gets(self, name: str) -> list[Request]:
        return [r for r in self.requests if r.method == "GET" and r.path.endswith(f"/{name}")]

    def start(self) -> FakeHub:
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def do_HEAD(self) -> None:
                hub._serve(self, head=True)

            def do_GET(self) -> None:
                hub._serve(self, head=False)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self.release.set()
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()

    # ---------------------------------------------------------------------------------------------
    def _serve(self, h: BaseHTTPRequestHandler, *, head: bool) -> None:
        path = unquote(urlparse(h.path).path)
        self.requests.append(Request("HEAD" if head else "GET", path, h.headers.get("Range")))
        parts = path.strip("/").split("/")
        if parts[:2] == ["api", "models"] and len(parts) >= 4:
            self._api(h, parts[2:])
        elif len(parts) >= 5 and parts[2] == "resolve":
            self._resolve(h, "/".join(parts[:2]), parts[3], "/".join(parts[4:]), head=head)
        else:
            self._send(h, 404, b"{}", {"X-Error-Code": "EntryNotFound"})

    def _api(self, h: BaseHTTPRequestHandler, parts: list[str]) -> None:
        repo, rest = "/".join(parts[:2]), parts[2:]
        if repo not in self.repos:
            return self._send(h, 404, b'{"error": "Repository not found"}', {"X-Error-Code": "RepoNotFound"})
        files = self.repos[repo]
        revision = rest[1] if len(rest) >= 2 else "main"
        if revision not in ("main", self.commit):
            return self._send(h, 404, b'{"error": "Invalid rev id"}', {"X-Error-Code": "RevisionNotFound"})
        if rest[:1] == ["tree"]:
            tree = [{"type": "file", "oid": _sha1(c), "size": len(c), "path": n} for n, c in files.items()]
            return self._send(h, 200, json.dumps(tree).encode(), {"Content-Type": "application/json"})
        info = {"id": repo, "modelId": repo, "sha": self.commit, "siblings": [{"rfilename": n} for n in files]}
        return self._send(h, 200, json.dumps(info).encode(), {"Content-Type": "application/json"})

    def _resolve(self, h: BaseHTTPRequestHandler, repo: str, revision: str, name: str, *, head: bool) -> None:
        content = self.repos.get(repo, {}).get(name)
        if content is None:
            return self._send(
                h, 404, b"{}", {"X-Error-Code": "RepoNotFound" if repo not in self.repos else "EntryNotFound"}
            )
        if revision not in ("main", self.commit):
            return self._send(h, 404, b"{}", {"X-Error-Code": "RevisionNotFound"})
        if not head and name in self.broken:
            return self._send(h, 500, b"{}", {})
        meta = {"X-Repo-Commit": self.commit, "ETag": f'"{hashlib.sha256(content).hexdigest()}"',
                "Accept-Ranges": "bytes"}  # fmt: skip
        start = 0
        wanted = h.headers.get("Range")
        if wanted and not head and wanted.startswith("bytes=") and wanted.endswith("-"):
            start = int(wanted[len("bytes=") : -1])
        body = content[start:]
        headers = {**meta, "Content-Length": str(len(body))}
        if start:
            headers["Content-Range"] = f"bytes {start}-{len(content) - 1}/{len(content)}"
        h.send_response(206 if start else 200)
        for key, value in headers.items():
            h.send_header(key, value)
        h.end_headers()
        if head:
            return None
        stall = self.stall_after.pop(name, None)
        if stall is not None:  # send part of the body, then hold the connection open until released
            h.wfile.write(body[:stall])
            h.wfile.flush()
            self.stalled.set()
            self.release.wait(30)
            h.close_connection = True
            return None
        cut = self.cut_after.pop(name, None)
        if cut is not None:  # send part of the body, then drop the connection: the client sees it end early
            h.wfile.write(body[:cut])
            h.wfile.flush()
            self.broken.add(name)
            h.close_connection = True
            return None
        h.wfile.write(body)
        return None

    @staticmethod
    def _send(h: BaseHTTPRequestHandler, status: int, body: bytes, headers: dict[str, str]) -> None:
        h.send_response(status)
        for key, value in {**headers, "Content-Length": str(len(body))}.items():
            h.send_header(key, value)
        h.end_headers()
        if h.command != "HEAD":
            h.wfile.write(body)


def _sha1(content: bytes) -> str:
    return hashlib.sha1(content).hexdigest()
