"""Deployment defaults, stated once: the profile schema's defaults and the engine intent's defaults both
reference these names (`ascendctl_engine.defaults`), so a port or a timeout is never written twice.

Values: loopback only (a safe default; vLLM itself binds every interface), vLLM's own API port 8000, a 30 s
drain, vLLM's data-parallel RPC port default and Ray's default head port.
"""

from __future__ import annotations

SERVER_HOST = "127.0.0.1"
SERVER_PORT = 8000
SHUTDOWN_TIMEOUT_S = 30
DP_RPC_PORT = 13389
RAY_PORT = 6379
