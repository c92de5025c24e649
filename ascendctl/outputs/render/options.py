"""What a renderer is given besides the plan, and what it returns."""

from __future__ import annotations

import re

from ascendctl.core.errors import UserInputError
from ascendctl_engine.records import record

# What each option becomes in a rendered file, and so what it may hold. Each lands in a position where a leading `-`
# would be read as an option (`docker run … IMAGE`, systemd's ExecStart words) or in a Kubernetes field whose
# grammar the API server enforces (kubernetes apimachinery pkg/util/validation/validation.go: IsDNS1123Label for a
# namespace, IsQualifiedName with an optional DNS subdomain prefix for an extended resource such as
# huawei.com/Ascend910).
_DNS1123_LABEL = r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?"
_NAMESPACE = re.compile(rf"^{_DNS1123_LABEL}$")
_RESOURCE = re.compile(rf"^({_DNS1123_LABEL}(\.{_DNS1123_LABEL})*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{{0,61}}[A-Za-z0-9])?$")
# An image reference ([registry[:port]/]name[:tag][@digest], distribution/reference's grammar) in the characters it
# allows; it starts with a letter or digit, so `docker run` never reads it as an option.
_IMAGE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/:@-]{0,511}$")


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


def check_options(options: RenderOptions) -> None:
    """Refuse an option value its rendered position cannot hold (one line naming the option, exit 2): an image or a
    path that would read as an option (`--image=--privileged`, `--installed-profile --dry-run`), a namespace or a
    device resource the Kubernetes API server would reject."""
    if options.image is not None and not _IMAGE.match(options.image):
        raise UserInputError(
            f"--image {options.image!r}: not an image reference (e.g. quay.io/ascend/vllm-ascend:v0.13.0)"
        )
    if options.namespace is not None and not _NAMESPACE.match(options.namespace):
        raise UserInputError(f"--namespace {options.namespace!r}: not a Kubernetes namespace (an RFC 1123 label)")
    if options.resource_name is not None and not _RESOURCE.match(options.resource_name):
        raise UserInputError(
            f"--resource-name {options.resource_name!r}: not a Kubernetes resource name (e.g. huawei.com/Ascend910)"
        )
    for flag, path in (("--installed-profile", options.installed_profile), ("--ascendctl-bin", options.ascendctl_bin)):
        if path is not None and not (path.startswith("/") and path.isprintable()):
            raise UserInputError(f"{flag} {path!r}: an absolute path on the host (systemd starts it as written)")
