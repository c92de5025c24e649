"""The tiny random model builder, run for real in the CPU engine interpreter: byte-identical per seed."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from ascendctl_engine.inenv import script_path
from ascendctl_engine.prepared_models import tree_digest

pytestmark = pytest.mark.e2e


def build(python: Path, out: Path, seed: int) -> str:
    subprocess.run(
        [str(python), str(script_path("tiny_model")), str(out), "--seed", str(seed)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return tree_digest(out)[0]


def test_tiny_model_is_byte_identical_per_seed_and_decodable(cpu_engine: object, tmp_path: Path) -> None:
    python = cpu_engine.python  # type: ignore[attr-defined]
    first = build(python, tmp_path / "a", 0)
    assert build(python, tmp_path / "b", 0) == first
    assert build(python, tmp_path / "c", 1) != first

    config = json.loads((tmp_path / "a" / "config.json").read_text())
    assert (config["model_type"], config["hidden_size"], config["num_hidden_layers"]) == ("qwen2", 256, 4)
    assert (config["num_attention_heads"], config["num_key_value_heads"]) == (4, 2)
    assert (config["intermediate_size"], config["tie_word_embeddings"]) == (512, True)
    # every id the model can sample decodes: the embedding rows match the tokenizer's length
    check = (
        "import json, sys, struct; from transformers import AutoTokenizer; d = sys.argv[1]; "
        "t = AutoTokenizer.from_pretrained(d); raw = open(d + '/model.safetensors', 'rb').read(); "
        "n = struct.unpack('<Q', raw[:8])[0]; h = json.loads(raw[8:8 + n]); "
        "print(json.dumps({'len': len(t), 'eos': t.eos_token, 'embed': h['model.embed_tokens.weight'], "
        "'prompt': t.apply_chat_template([{'role': 'user', 'content': 'hi'}], tokenize=False, "
        "add_generation_prompt=True)}))"
    )
    out = subprocess.run([str(python), "-c", check, str(tmp_path / "a")], check=True, capture_output=True, text=True)
    facts = json.loads(out.stdout.strip().splitlines()[-1])
    assert facts["len"] == config["vocab_size"] == facts["embed"]["shape"][0]
    assert facts["embed"]["dtype"] == "BF16" and facts["embed"]["shape"][1] == 256
    assert facts["eos"] == "<|im_end|>"
    assert facts["prompt"] == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
