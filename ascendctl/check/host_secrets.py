"""Secret rules: the key files a profile reads at launch (`server.api_key.file`, `runtime.secrets.*.file`).

The one host rule that reads a file itself: key files are named by the profile, not found by the host probe,
and only their mode is read (never their content). With `--root`, an absolute path is read under that root,
like every other host file.
"""

from __future__ import annotations

from ascendctl.check.context import CheckContext
from ascendctl.core.findings import Outcome, passed, problem, rule, skipped
from ascendctl.schema.secrets import chmod_fix, key_file_path, loose_message, open_mode, profile_key_files


@rule("host.secrets.key-file-mode", "warn", "Key files are readable by their owner only")
def key_file_mode(ctx: CheckContext) -> Outcome:
    if ctx.profile is None:
        return skipped("no profile")
    files = profile_key_files(ctx.profile.server.api_key, ctx.profile.runtime.secrets)
    if not files:
        return skipped("the profile reads no secret from a file")
    for key in files:
        try:
            mode = open_mode(key_file_path(key.path, ctx.facts.root))
        except OSError as exc:
            return problem(
                f"{key.label} {key.path}: {exc.strerror or exc}; `serve` reads it at launch",
                f"create it with the secret on its first line, then: {chmod_fix(key.path)}",
            )
        if mode is not None:
            return problem(loose_message(key, mode), chmod_fix(key.path))
    return passed(f"{len(files)} key file{'s' if len(files) != 1 else ''}, mode 0600 or stricter")
