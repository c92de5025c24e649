"""Build a tiny random-weight Qwen2 chat model, byte-identical for a given seed.

Run in an engine interpreter (it needs `numpy`, `tokenizers` and `transformers`, which vLLM brings):

    <env python> tiny_model.py OUT_DIR [--seed N]

Shape (checked by tests/engine/test_tiny_model.py): Qwen2, hidden 256, 4 layers,
4 attention heads (head_dim 64), 2 KV heads, intermediate 512, tied embeddings, bf16 safetensors.
Tokenizer: byte-level BPE trained on generated pseudo-text, ChatML template, eos `<|im_end|>`, and
`vocab_size == len(tokenizer)` so every id the random model samples can be decoded.
Weights come from numpy and are written as safetensors by hand (bf16 by rounding float32), so no torch.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import random
import struct
import sys
from pathlib import Path
from typing import Any

HIDDEN = 256
LAYERS = 4
HEADS = 4
KV_HEADS = 2
HEAD_DIM = HIDDEN // HEADS
INTERMEDIATE = 512
TARGET_VOCAB = 4096
MAX_POSITIONS = 4096
SPECIAL = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)


def _corpus(seed: int) -> list[str]:
    """Pseudo-sentences over many distinct pseudo-words, so BPE can fill the whole vocabulary."""
    rng = random.Random(seed)  # noqa: S311 (reproducible text, not secrets)
    onsets = ["b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z"]
    onsets += ["br", "ch", "cl", "dr", "fl", "gr", "kr", "pl", "pr", "sh", "st", "th", "tr"]
    vowels = ["a", "e", "i", "o", "u", "ai", "ea", "io", "ou", "y"]
    codas = ["", "", "n", "r", "s", "t", "l", "m", "nd", "st", "rk"]
    words: list[str] = []
    seen: set[str] = set()
    while len(words) < 12000:
        word = "".join(rng.choice(onsets) + rng.choice(vowels) + rng.choice(codas) for _ in range(rng.randint(1, 3)))
        if word not in seen:
            seen.add(word)
            words.append(word)
    marks = [".", ".", ".", "?", "!", ","]
    lines = []
    for _ in range(20000):
        sentence = " ".join(rng.choice(words) for _ in range(rng.randint(4, 14)))
        lines.append(sentence.capitalize() + rng.choice(marks) + f" {rng.randint(0, 9999)}")
    return lines


def _train_tokenizer(seed: int) -> Any:
    tk = importlib.import_module("tokenizers")
    tokenizer = tk.Tokenizer(tk.models.BPE())
    tokenizer.pre_tokenizer = tk.pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = tk.decoders.ByteLevel()
    trainer = tk.trainers.BpeTrainer(
        vocab_size=TARGET_VOCAB,
        special_tokens=list(SPECIAL),
        initial_alphabet=tk.pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(_corpus(seed), trainer=trainer)
    return tokenizer


def _bf16_bytes(array: Any) -> bytes:
    np = importlib.import_module("numpy")
    bits = np.ascontiguousarray(array, dtype="<f4").view("<u4")
    rounded = (bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)
    return bytes(rounded.astype("<u2").tobytes())


def _weights(vocab: int, seed: int) -> dict[str, Any]:
    np = importlib.import_module("numpy")
    rng = np.random.default_rng(seed)

    def normal(*shape: int) -> Any:
        return rng.standard_normal(shape, dtype=np.float32) * np.float32(0.02)

    tensors: dict[str, Any] = {"model.embed_tokens.weight": normal(vocab, HIDDEN)}
    kv = KV_HEADS * HEAD_DIM
    for i in range(LAYERS):
        p = f"model.layers.{i}."
        tensors[p + "input_layernorm.weight"] = np.ones(HIDDEN, dtype=np.float32)
        tensors[p + "post_attention_layernorm.weight"] = np.ones(HIDDEN, dtype=np.float32)
        tensors[p + "self_attn.q_proj.weight"] = normal(HIDDEN, HIDDEN)
        tensors[p + "self_attn.q_proj.bias"] = normal(HIDDEN)
        tensors[p + "self_attn.k_proj.weight"] = normal(kv, HIDDEN)
        tensors[p + "self_attn.k_proj.bias"] = normal(kv)
        tensors[p + "self_attn.v_proj.weight"] = normal(kv, HIDDEN)
        tensors[p + "self_attn.v_proj.bias"] = normal(kv)
        tensors[p + "self_attn.o_proj.weight"] = normal(HIDDEN, HIDDEN)
        tensors[p + "mlp.gate_proj.weight"] = normal(INTERMEDIATE, HIDDEN)
        tensors[p + "mlp.up_proj.weight"] = normal(INTERMEDIATE, HIDDEN)
        tensors[p + "mlp.down_proj.weight"] = normal(HIDDEN, INTERMEDIATE)
    tensors["model.norm.weight"] = np.ones(HIDDEN, dtype=np.float32)
    return tensors


def _write_safetensors(path: Path, tensors: dict[str, Any]) -> None:
    header: dict[str, Any] = {"__metadata__": {"format": "pt"}}
    blobs: list[bytes] = []
    offset = 0
    for name in sorted(tensors):
        data = _bf16_bytes(tensors[name])
        header[name] = {
            "dtype": "BF16",
            "shape": list(tensors[name].shape),
            "data_offsets": [offset, offset + len(data)],
        }
        blobs.append(data)
        offset += len(data)
    raw = json.dumps(header, sort_keys=True, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)
    with path.open("wb") as out:
        out.write(struct.pack("<Q", len(raw)))
        out.write(raw)
        for blob in blobs:
            out.write(blob)


def config_json(vocab: int = TARGET_VOCAB, *, bos: int = 0, eos: int = 2, pad: int = 0) -> dict[str, Any]:
    """The model's config.json (stdlib only, so the memory-fit tests and benchmark read the same shapes)."""
    return {
        "architectures": ["Qwen2ForCausalLM"],
        "model_type": "qwen2",
        "hidden_size": HIDDEN,
        "intermediate_size": INTERMEDIATE,
        "num_hidden_layers": LAYERS,
        "num_attention_heads": HEADS,
        "num_key_value_heads": KV_HEADS,
        "head_dim": HEAD_DIM,
        "hidden_act": "silu",
        "max_position_embeddings": MAX_POSITIONS,
        "rms_norm_eps": 1e-6,
        "rope_theta": 10000.0,
        "tie_word_embeddings": True,
        "torch_dtype": "bfloat16",
        "vocab_size": vocab,
        "bos_token_id": bos,
        "eos_token_id": eos,
        "pad_token_id": pad,
        "use_sliding_window": False,
        "attention_dropout": 0.0,
        "initializer_range": 0.02,
    }


def build(out: Path, seed: int) -> None:
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = _train_tokenizer(seed)
    transformers = importlib.import_module("transformers")
    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        eos_token="<|im_end|>",  # noqa: S106 (a token, not a password)
        pad_token="<|endoftext|>",  # noqa: S106
        additional_special_tokens=["<|im_start|>", "<|im_end|>"],
        model_max_length=MAX_POSITIONS,
        clean_up_tokenization_spaces=False,
    )
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(str(out))
    vocab = len(fast)
    ids = {token: tokenizer.token_to_id(token) for token in SPECIAL}
    config = config_json(vocab, bos=ids["<|endoftext|>"], eos=ids["<|im_end|>"], pad=ids["<|endoftext|>"])
    (out / "config.json").write_text(json.dumps(config, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    generation = {"bos_token_id": config["bos_token_id"], "eos_token_id": config["eos_token_id"]}
    (out / "generation_config.json").write_text(json.dumps(generation, indent=2, sort_keys=True) + "\n")
    _write_safetensors(out / "model.safetensors", _weights(vocab, seed))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    build(args.out, args.seed)
    print(f"tiny model written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
