"""Extract which `VLLM_*` environment variables each pinned vLLM reads, from its published wheel.

Maintainer script; its output is checked-in data (`engine/ascendctl_engine/data/vllm_envs.json`, read by
`ascendctl_engine.adapters.vllm_envs`). For every vLLM version the parser snapshots pin
(`engine/ascendctl_engine/data/parsers/<distribution>-<version>.json`) it reads `vllm/envs.py` out of that version's
wheel on PyPI with HTTP range requests (only the zip's directory and that one member travel, a few hundred KB, not the
133-509 MB wheel), and records, with `ast`:

- the keys of the module's `environment_variables` dict (what `vllm.envs` reads; every other `VLLM_*` is unknown
  to that vLLM), each with the line it is defined at;
- `validate_environ`: where the function is that logs "Unknown vLLM environment variable detected" for a
  `VLLM_`-prefixed variable the dict lacks (and raises instead when `--fail-on-environ-validation` asks it to):
  `vllm/envs.py` from 0.17, the platform interface later; null where the version has none (it then says nothing
  about unknown variables).

Format (`schema` 1): `{"schema", "generated_by", "versions": {"<dist>-<version>": {"source", "validate_environ"}},
"names": {"VLLM_X": [[first, last, line], ...]}}` — each run is consecutive versions (in the order of
`versions`) defining the name, `line` its line in `first`'s envs.py. A source is
`<wheel file>:vllm/envs.py:<line>`.

    python scripts/extract_vllm_envs.py                 # every pinned version (needs the package index)
    python scripts/extract_vllm_envs.py --check         # compare with the checked-in file, write nothing
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import sys
import urllib.request
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PARSERS = ROOT / "engine" / "ascendctl_engine" / "data" / "parsers"
OUT = ROOT / "engine" / "ascendctl_engine" / "data" / "vllm_envs.json"
INDEX = "https://pypi.org/simple/{name}/"
MEMBER = "vllm/envs.py"
PLATFORM = "vllm/platforms/interface.py"  # where validate_environ moved (a platform may override it)
WARNING = "Unknown vLLM environment variable detected"


class RangeFile(io.RawIOBase):
    """A remote file read with HTTP range requests: just what `zipfile` needs (seek, tell, read)."""

    def __init__(self, url: str, size: int) -> None:
        self.url, self.size, self.pos = url, size, 0

    def seekable(self) -> bool:
        return True

    def readable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = 0) -> int:
        self.pos = {0: offset, 1: self.pos + offset, 2: self.size + offset}[whence]
        return self.pos

    def readinto(self, buffer: Any) -> int:
        end = min(self.size, self.pos + len(buffer))
        if end <= self.pos:
            return 0
        request = urllib.request.Request(self.url, headers={"Range": f"bytes={self.pos}-{end - 1}"})  # noqa: S310
        with urllib.request.urlopen(request, timeout=120) as response:  # noqa: S310 (the package index)
            data: bytes = response.read()
        buffer[: len(data)] = data
        self.pos += len(data)
        return len(data)


def _wheel(dist: str, version: str) -> tuple[str, str, int]:
    """(file name, url, size) of one wheel of `dist==version` (Linux x86_64 first)."""
    accept = {"Accept": "application/vnd.pypi.simple.v1+json"}
    request = urllib.request.Request(INDEX.format(name=dist), headers=accept)  # noqa: S310 (the package index)
    with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310
        files = json.load(response)["files"]
    norm = dist.replace("-", "_")
    wheels = [f for f in files if f["filename"].startswith(f"{norm}-{version}-") and f["filename"].endswith(".whl")]
    if not wheels:
        raise SystemExit(f"no wheel of {dist}=={version} on the package index")
    wheels.sort(key=lambda f: ("x86_64" not in f["filename"], f["filename"]))
    chosen = wheels[0]
    return chosen["filename"], chosen["url"], int(chosen["size"])


def read_members(dist: str, version: str) -> tuple[str, dict[str, str]]:
    """(wheel file name, {member: text}) for vllm/envs.py and, where the wheel has it, the platform interface."""
    name, url, size = _wheel(dist, version)
    with zipfile.ZipFile(io.BufferedReader(RangeFile(url, size), buffer_size=1 << 16)) as wheel:
        present = set(wheel.namelist())
        return name, {m: wheel.read(m).decode("utf-8") for m in (MEMBER, PLATFORM) if m in present}


def validate_line(text: str) -> int | None:
    """The line of a `validate_environ` (module function or method) that logs the unknown-variable warning."""
    for node in ast.walk(ast.parse(text)):
        named = isinstance(node, ast.FunctionDef) and node.name == "validate_environ"
        if named and WARNING in (ast.get_source_segment(text, node) or ""):
            return node.lineno  # type: ignore[attr-defined]
    return None


def analyse(text: str) -> dict[str, int]:
    """The `environment_variables` keys of vllm/envs.py with their lines."""
    tree = ast.parse(text)
    names: dict[str, int] = {}
    for node in tree.body:
        target, value = None, None
        if isinstance(node, ast.AnnAssign):
            target, value = node.target, node.value
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        if isinstance(target, ast.Name) and target.id == "environment_variables" and isinstance(value, ast.Dict):
            for key in value.keys:
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    names[key.value] = key.lineno
    if not names:
        raise SystemExit("vllm/envs.py defines no environment_variables dict: the extractor needs a new reading")
    return names


def pinned() -> list[tuple[str, str]]:
    """(distribution, version) of every parser snapshot, in the snapshots' version order."""
    out = []
    for path in PARSERS.glob("*.json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        out.append((str(data["distribution"]), str(data["version"])))

    def key(item: tuple[str, str]) -> tuple[int, ...]:
        parts = []
        for part in item[1].replace("post", "").split("."):
            parts.append(int(part) if part.isdigit() else 0)
        return tuple(parts)

    return sorted(out, key=key)


def build(progress: bool = True) -> dict[str, Any]:
    versions: dict[str, Any] = {}
    per_name: dict[str, list[list[Any]]] = {}
    order = pinned()
    for i, (dist, version) in enumerate(order):
        label = f"{dist}-{version}"
        if progress:
            print(f"[{i + 1}/{len(order)}] {label}", file=sys.stderr, flush=True)
        wheel, texts = read_members(dist, version)
        names = analyse(texts[MEMBER])
        validate = None
        for member, text in texts.items():
            line = validate_line(text)
            if line is not None:
                validate = f"{wheel}:{member}:{line}"
                break
        versions[label] = {"source": f"{wheel}:{MEMBER}", "validate_environ": validate}
        for name, line in names.items():
            runs = per_name.setdefault(name, [])
            previous = order[i - 1] if i else None
            if runs and previous is not None and runs[-1][1] == f"{previous[0]}-{previous[1]}":
                runs[-1][1] = label
            else:
                runs.append([label, label, line])
    return {
        "schema": 1,
        "generated_by": "scripts/extract_vllm_envs.py",
        "versions": versions,
        "names": dict(sorted(per_name.items())),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the checked-in file, write nothing")
    args = parser.parse_args(argv)
    text = json.dumps(build(), indent=1, sort_keys=False) + "\n"
    if args.check:
        same = OUT.is_file() and OUT.read_text(encoding="utf-8") == text
        print("up to date" if same else f"{OUT} differs from what the wheels say")
        return 0 if same else 1
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
