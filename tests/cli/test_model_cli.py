"""`ascendctl model config|pull|identity` end to end against a fake Hugging Face Hub on 127.0.0.1 (tests/hubfake.py,
`HF_ENDPOINT`), through the real `huggingface_hub` library: what lands in the cache, that the plan's offline lookup
then finds it, a pull interrupted mid-file that the next pull resumes with a byte range, and the errors."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ascendctl.cli import app
from ascendctl.facts.model_inspect import read_model_config
from tests.hubfake import COMMIT, FakeHub

pytest.importorskip("huggingface_hub")

runner = CliRunner()
REPO = "org/tiny"
SHARD1, SHARD2 = "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"
CONFIG = {
    "model_type": "llama",
    "architectures": ["LlamaForCausalLM"],
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "intermediate_size": 128,
    "vocab_size": 1000,
    "max_position_embeddings": 2048,
    "torch_dtype": "bfloat16",
}
INDEX = {"metadata": {"total_size": 300_000}, "weight_map": {"lm_head.weight": SHARD1, "embed.weight": SHARD2}}


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    files = {
        "config.json": json.dumps(CONFIG).encode(),
        "model.safetensors.index.json": json.dumps(INDEX).encode(),
        SHARD1: os.urandom(200_000),
        SHARD2: os.urandom(100_000),
        "tokenizer.json": b"{}",
    }
    fake = FakeHub({REPO: files}).start()
    monkeypatch.setenv("HF_ENDPOINT", fake.endpoint)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setenv("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    yield fake
    fake.stop()


def invoke(*args: str) -> Any:
    return runner.invoke(app, list(args))


def as_json(*args: str) -> dict[str, Any]:
    result = invoke(*args, "--json")
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def snapshot() -> Path:
    return Path(os.environ["HF_HUB_CACHE"]) / "models--org--tiny" / "snapshots" / COMMIT


FETCH_KEYS = {"schema", "source", "hub", "repo_id", "revision", "path", "files", "found_by_plan", "identity"}


def test_config_fetches_only_config_and_index_and_the_plan_then_reads_them(hub: FakeHub) -> None:
    assert read_model_config(REPO) is None  # nothing cached yet: the plan cannot know the shapes
    data = as_json("model", "config", f"hf:{REPO}")
    assert set(data) == FETCH_KEYS | {"shapes"} and data["schema"] == 1
    assert data["files"] == ["config.json", "model.safetensors.index.json"]
    assert data["path"] == str(snapshot()) and data["found_by_plan"] is True
    assert not hub.gets(SHARD1) and not hub.gets("tokenizer.json")  # no weights downloaded
    shapes = data["shapes"]
    assert shapes["hidden_size"] == 64 and shapes["num_key_value_heads"] == 2 and shapes["max_model_len"] == 2048
    assert shapes["architectures"] == ["LlamaForCausalLM"] and shapes["weights_bytes"] == 300_000
    config = read_model_config(REPO)  # the plan's offline lookup (bare id = Hugging Face) now finds it
    assert config is not None and config.hidden_size == 64 and config.num_hidden_layers == 2
    text = invoke("model", "config", REPO)
    assert text.exit_code == 0 and "hidden_size:" in text.stdout and str(snapshot()) in text.stdout


def test_pull_downloads_everything_and_identity_matches_the_files(hub: FakeHub) -> None:
    data = as_json("model", "pull", REPO)
    assert set(data) == FETCH_KEYS
    assert data["files"] == sorted(hub.repos[REPO])
    for name, content in hub.repos[REPO].items():
        assert (snapshot() / name).read_bytes() == content
    expected = {
        "config_sha256": hashlib.sha256(hub.repos[REPO]["config.json"]).hexdigest(),
        "index_sha256": hashlib.sha256(hub.repos[REPO]["model.safetensors.index.json"]).hexdigest(),
        "path": str(snapshot()),
    }
    assert data["identity"] == expected
    # `model identity` reads the same from the cache, offline (what each node of a deployment runs)
    assert as_json("model", "identity", f"hf:{REPO}") == {"schema": 1, "source": f"hf:{REPO}", **expected}
    assert as_json("model", "identity", str(snapshot()))["config_sha256"] == expected["config_sha256"]


def test_include_limits_the_pull_but_config_and_index_always_come(hub: FakeHub) -> None:
    data = as_json("model", "pull", REPO, "--include", "tokenizer*")
    assert data["files"] == ["config.json", "model.safetensors.index.json", "tokenizer.json"]
    assert not hub.gets(SHARD1)


def test_an_interrupted_pull_resumes_with_a_byte_range(hub: FakeHub, monkeypatch: pytest.MonkeyPatch) -> None:
    from huggingface_hub import constants

    # the library hands data to the file in chunks of DOWNLOAD_CHUNK_SIZE (10 MB): small chunks let a 200 kB file
    # be cut partway with some of it already on disk, as a multi-GB shard is in practice
    monkeypatch.setattr(constants, "DOWNLOAD_CHUNK_SIZE", 4096)
    hub.cut_after[SHARD1] = 50_000  # the connection drops after 50 kB, and the server fails until healed
    first = invoke("model", "pull", REPO)
    assert first.exit_code == 1
    (error,) = [line for line in first.output.splitlines() if line.startswith("error:")]  # one line, no traceback
    assert "run the same command again to resume" in error
    blobs = snapshot().parents[1] / "blobs"
    (partial,) = blobs.glob("*.incomplete")
    kept = partial.stat().st_size
    assert 0 < kept <= 50_000
    hub.heal()
    hub.requests.clear()
    data = as_json("model", "pull", REPO)
    (resumed,) = hub.gets(SHARD1)
    assert resumed.range == f"bytes={kept}-"  # only the missing part was asked for
    assert (snapshot() / SHARD1).read_bytes() == hub.repos[REPO][SHARD1]
    assert SHARD1 in data["files"] and not list(blobs.glob("*.incomplete"))


def test_revision_pins_the_snapshot_the_plan_reads(hub: FakeHub) -> None:
    data = as_json("model", "config", REPO, "--revision", COMMIT)
    assert data["revision"] == COMMIT and data["found_by_plan"] is True
    assert read_model_config(REPO, COMMIT) is not None
    missing = invoke("model", "config", REPO, "--revision", "v9")
    assert missing.exit_code == 1 and "no revision 'v9'" in missing.output


def test_unknown_repo_unreachable_endpoint_offline_and_bad_syntax(
    hub: FakeHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    unknown = invoke("model", "pull", "org/nothing")
    assert unknown.exit_code == 1 and "org/nothing: no such model on" in unknown.output
    assert invoke("model", "pull", "hf:not-a-hub-id").exit_code == 2
    assert invoke("model", "config", "prepared:tiny-random").exit_code == 2
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        closed = sock.getsockname()[1]
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{closed}")
    down = invoke("model", "config", REPO)
    assert down.exit_code == 1 and f"cannot reach http://127.0.0.1:{closed}" in down.output
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    offline = invoke("model", "pull", REPO)
    assert offline.exit_code == 1 and "HF_HUB_OFFLINE is set" in offline.output
    assert not hub.gets(SHARD1)


def test_identity_of_a_model_that_is_not_here_fails_clearly() -> None:
    result = invoke("model", "identity", "org/absent")
    assert result.exit_code == 1 and "ascendctl model pull org/absent" in result.output


def test_ctrl_c_mid_file_then_pull_again_resumes(hub: FakeHub) -> None:
    """The operator's case, in a real process: Ctrl-C while a shard is coming in, then the same command again. The
    shard is a little over the library's 10 MB write chunk, so the first chunk is on disk when the transfer stalls."""
    big = os.urandom(10 * 1024 * 1024 + 300_000)
    hub.repos["org/big"] = {"config.json": json.dumps(CONFIG).encode(), SHARD1: big}
    hub.stall_after[SHARD1] = len(big) - 100_000
    argv = [sys.executable, "-m", "ascendctl", "model", "pull", "org/big"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert hub.stalled.wait(60), "the pull never reached the shard"
        blobs = Path(os.environ["HF_HUB_CACHE"]) / "models--org--big" / "blobs"
        deadline = time.monotonic() + 20
        while not any(p.stat().st_size for p in blobs.glob("*.incomplete")) and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)  # our own child, by its handle
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        hub.release.set()
    assert proc.returncode == 130 and "interrupted" in err
    (partial,) = blobs.glob("*.incomplete")
    kept = partial.stat().st_size
    assert kept > 0
    hub.requests.clear()
    data = as_json("model", "pull", "org/big")
    (resumed,) = hub.gets(SHARD1)
    assert resumed.range == f"bytes={kept}-"
    assert hashlib.sha256((Path(data["path"]) / SHARD1).read_bytes()).hexdigest() == hashlib.sha256(big).hexdigest()


@pytest.mark.parametrize("name", ["../../x", "", "x y", "-x"])
def test_prepare_with_an_engine_name_no_environment_can_have_is_exit_2(name: str) -> None:
    # it was EngineEnvError from the engine directory lookup: an internal error, exit 3
    result = runner.invoke(app, ["model", "prepare", "tiny-random", "--engine", name])
    assert result.exit_code == 2, result.output
    assert result.output.strip() == f"error: --engine: {name!r} is not an engine environment name"
