"""What a renderer is given besides the plan, and what it returns."""

from __future__ import annotations

from ascendctl_engine.records import record


@record
class RenderOptions:
    installed_profile: str | None = None  # where systemd units expect the profile; default /etc/ascendctl/<name>.yaml
    ascendctl_bin: str = "/usr/local/bin/ascendctl"
    resource_name: str | None = None
    namespace: str | None = None
    image: str | None = None
    api_key_secret: str | None = None  # k8s Secret holding the key (key `api-key`); default <name>-api-key
    secrets_secret: str | None = None  # k8s Secret holding runtime.secrets (key = variable); default <name>-secrets


@record
class RenderedFile:
    name: str
    content: str
    executable: bool = False  # scripts are written 0755, everything else 0644
