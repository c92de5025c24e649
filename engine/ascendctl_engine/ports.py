"""Whether a TCP address can be bound right now: one check for `serve`'s preflight and `check`'s port rule."""

from __future__ import annotations

import socket


def bind_error(host: str, port: int) -> OSError | None:
    """Bind `host:port` the way vLLM's server does (SO_REUSEADDR, so sockets in TIME_WAIT do not count),
    close at once, and return the error (None when the bind succeeds)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            return exc
    return None
