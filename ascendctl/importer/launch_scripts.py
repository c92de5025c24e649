"""Upstream's CI launches (`ascendctl.facts.launches`) as the launch scripts their runners run, for `import_scripts`.

Each node's argv and environment are the ones upstream's runner sets (the runner's addresses and interfaces
included). An accuracy launch runs `LLM(**llm_kwargs)`: its engine arguments are read as the `vllm serve` options
they spell (`--` + the key with dashes; a switch for True, the `--no-` spelling for False where the parser has one);
keys the release's parser does not know, and the harness's own (`model`: lm-eval's model type, `runner`: the CI
machine), are left out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

# `content_of` lives with the data it reads (the plan reads it too); importers keep finding it here.
from ascendctl.facts.launches import Launch, content_of
from ascendctl.facts.matrix import load_matrix
from ascendctl.facts.matrix.release_pins import release_for_pin
from ascendctl.importer.script import LaunchScript
from ascendctl_engine.adapters.parser_snapshot import parser_distribution, snapshot_for

# `llm_kwargs` keys that are the accuracy harness's own, not engine arguments.
HARNESS_KEYS = frozenset({"model", "runner"})


def scripts_of(row: Mapping[str, Any], content: Mapping[str, Any]) -> list[LaunchScript]:
    """Each node of a launch (`row`: its entry in the data, `content`: its content) as the script its runner runs."""
    out = []
    for i, node in enumerate(content["nodes"]):
        argv = list(node["argv"][2:]) or from_kwargs(content["model"], content.get("llm_kwargs") or {}, row["tag"])
        env = {**node["env"], **node.get("injected_env", {})}
        out.append(LaunchScript(path=f"{row['file']}#{i}", env=env, argv=tuple(argv), unresolved=(), line=1))
    return out


def launch_scripts(launch: Launch) -> list[LaunchScript]:
    return scripts_of(launch.to_row(), content_of(launch))


def from_kwargs(model: str, kwargs: Mapping[str, Any], tag: str) -> list[str]:
    """An accuracy launch's `LLM(**llm_kwargs)` as `vllm serve` options (see the module docstring)."""
    row = release_for_pin(load_matrix(), "npu", tag)
    snapshot = snapshot_for(row.vllm, parser_distribution("npu"))
    argv = [model]
    for key, value in kwargs.items():
        flag = "--" + key.replace("_", "-")
        opt = snapshot.option(flag)
        if opt is None or key in HARNESS_KEYS:
            continue
        if value is True:
            argv.append(flag)
        elif value is False:
            negative = next(iter(opt.negative), None)
            argv += [negative] if negative else []
        else:
            argv += [flag, json.dumps(value) if isinstance(value, dict | list) else str(value)]
    return argv


__all__ = ["content_of", "from_kwargs", "launch_scripts", "scripts_of"]
