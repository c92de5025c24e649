"""tests/data/tutorial_commands.json: the `vllm serve` commands of every vllm-ascend tutorial release, as
scripts/extract_tutorial_commands.py collected them from the mirror. The data and the launch-script parser must
agree (every record parses), the spot checks hold facts read by hand from the mirror, and the extractor's own
markdown and splitting rules are held on small pages written here (the mirror is not needed)."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from packaging.version import Version

from ascendctl.importer.script import parse_launch_script

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "tests" / "data" / "tutorial_commands.json"


@cache
def corpus() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(CORPUS.read_text(encoding="utf-8"))
    return data


@cache
def extractor() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "extract_tutorial_commands", REPO / "scripts" / "extract_tutorial_commands.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def records(path_suffix: str, tag: str | None = None) -> list[dict[str, Any]]:
    return [r for r in corpus()["commands"] if r["path"].endswith(path_suffix) and (tag is None or tag in r["tags"])]


def version(tag: str) -> Version:
    return Version(tag.removeprefix("v"))


# ---------------------------------------------------------------------------------------------------------
# The data.


def test_corpus_loads_with_its_record_shape() -> None:
    data = corpus()
    assert len(data["tags"]) >= 40
    assert len(data["commands"]) > 900
    assert CORPUS.stat().st_size < 2_000_000
    keys = {"id", "tag", "tags", "path", "line", "text", "multi_node", "pd_role", "hardware"}
    ids = set()
    for rec in data["commands"]:
        assert set(rec) == keys
        assert rec["id"] == hashlib.sha256(f"{rec['path']}\0{rec['text']}".encode()).hexdigest()[:16]
        assert rec["tags"] == sorted(rec["tags"], key=version) and rec["tag"] == rec["tags"][-1]
        assert set(rec["tags"]) <= set(data["tags"])
        assert rec["path"].startswith("docs/source/tutorials/") and rec["path"].endswith(".md")
        assert rec["pd_role"] in (None, "prefill", "decode")
        ids.add(rec["id"])
    assert len(ids) == len(data["commands"])
    # distinct (path, text): one record each
    assert len({(r["path"], r["text"]) for r in data["commands"]}) == len(data["commands"])


def test_every_record_parses() -> None:
    """The data and the parser agree: each record is a launch script parse_launch_script reads."""
    for rec in corpus()["commands"]:
        script = parse_launch_script(rec["text"], f"{rec['tag']}:{rec['path']}")
        assert script.argv, rec["id"]
        assert not script.argv[0].startswith("-") or "--model" in script.argv, rec["id"]


def test_corpus_covers_the_kinds_of_command() -> None:
    commands = corpus()["commands"]
    assert sum(r["multi_node"] for r in commands) > 100
    assert {r["pd_role"] for r in commands} == {None, "prefill", "decode"}
    assert any("api_server" in r["text"] for r in commands)


# ---------------------------------------------------------------------------------------------------------
# Spot checks, read by hand from the mirror.


def test_qwen3_next_at_v0_10_2rc1_line_89() -> None:
    # `git show v0.10.2rc1:docs/source/tutorials/multi_npu_qwen3_next.md`, line 89 (the same in v0.11.0, the
    # newest tag that still has the page)
    (rec,) = records("docs/source/tutorials/multi_npu_qwen3_next.md", "v0.10.2rc1")
    assert rec["line"] == 89
    assert rec["tag"] == "v0.11.0"
    assert rec["hardware"] == ["Atlas A2"]
    assert (rec["multi_node"], rec["pd_role"]) == (False, None)
    script = parse_launch_script(rec["text"])
    assert script.argv == (
        "Qwen/Qwen3-Next-80B-A3B-Instruct",
        "--tensor-parallel-size",
        "4",
        "--max-model-len",
        "4096",
        "--gpu-memory-utilization",
        "0.7",
        "--enforce-eager",
    )
    assert script.env == {}


def test_deepseek_v3_2_node1_is_headless_and_multi_node() -> None:
    # v0.25.1rc1:docs/source/tutorials/models/DeepSeek-V3.2.md:234, the A3 series' Node1 (`--headless`)
    (rec,) = [r for r in records("models/DeepSeek-V3.2.md", "v0.25.1rc1") if r["line"] == 234]
    assert rec["multi_node"] is True and rec["pd_role"] is None
    assert {"A2", "A3"} <= set(rec["hardware"])
    script = parse_launch_script(rec["text"])
    assert script.argv[0] == "/root/.cache/modelscope/hub/models/vllm-ascend/DeepSeek-V3.2-W8A8"
    assert "--headless" in script.argv
    assert script.argv[script.argv.index("--data-parallel-start-rank") + 1] == "1"
    assert script.argv[script.argv.index("--data-parallel-address") + 1] == "xxxx"  # node0_ip="xxxx"
    assert script.env["HCCL_IF_IP"] == "xxx"  # export HCCL_IF_IP=$local_ip, local_ip="xxx"


def test_deepseek_v3_2_prefill_template_keeps_its_positional_parameters() -> None:
    # v0.25.1rc1:docs/source/tutorials/models/DeepSeek-V3.2.md:505, the prefill node's run_dp_template.sh
    (rec,) = [r for r in records("models/DeepSeek-V3.2.md", "v0.25.1rc1") if r["line"] == 505]
    assert rec["pd_role"] == "prefill"
    script = parse_launch_script(rec["text"])
    assert script.argv[0] == "/root/.cache/Eco-Tech/DeepSeek-V3.2-w8a8-mtp-QuaRot"
    assert script.argv[script.argv.index("--port") + 1] == "$2"
    assert script.unresolved == ("1", "2", "3", "4", "5", "6", "7")
    assert script.env["ASCEND_RT_VISIBLE_DEVICES"] == "$1"


def test_mixtral_legacy_api_server_command() -> None:
    # v0.25.1rc1:docs/source/tutorials/models/Mixtral-8x7B-Instruct-v0.1.md:181 `python -m
    # vllm.entrypoints.openai.api_server \` with `--model mistralai/Mixtral-8x7B-Instruct-v0.1` on the next line
    (rec,) = [r for r in records("models/Mixtral-8x7B-Instruct-v0.1.md", "v0.25.1rc1") if "api_server" in r["text"]]
    assert rec["line"] == 181
    script = parse_launch_script(rec["text"])
    assert script.argv[:3] == ("mistralai/Mixtral-8x7B-Instruct-v0.1", "--host", "0.0.0.0")
    assert "--model" not in script.argv


# ---------------------------------------------------------------------------------------------------------
# The extractor's rules, on pages written here.

PAGE = """# Multi-Node (DeepSeek)

## Single node deployment

```{code-block} bash
   :substitutions:

export A=1
vllm serve m1 --tensor-parallel-size 8
```

## Two nodes

=== "A3 series"

    **Node0**

    ```shell
    export B=2
    vllm serve m2 --data-parallel-size 2
    ```

=== "A2 series"

    ```bash
    vllm serve m3 --kv-transfer-config '{"kv_role": "kv_consumer"}'

=== "Other"

```python
print("vllm serve not-shell")
```
"""


def test_code_blocks_read_myst_options_mkdocs_tabs_and_unclosed_fences() -> None:
    blocks = list(extractor().code_blocks(PAGE))
    assert [b.text for b in blocks] == [
        "export A=1\nvllm serve m1 --tensor-parallel-size 8\n",
        "export B=2\nvllm serve m2 --data-parallel-size 2\n",
        'vllm serve m3 --kv-transfer-config \'{"kv_role": "kv_consumer"}\'\n',
    ]
    assert [b.line for b in blocks] == [8, 19, 26]
    assert PAGE.splitlines()[7] == "export A=1"
    assert blocks[1].headings == ("Multi-Node (DeepSeek)", "Two nodes") and blocks[1].tab == "A3 series"
    assert blocks[2].tab == "A2 series"  # the tab after the unclosed block was still read


def test_multi_node_and_pd_role() -> None:
    x = extractor()
    one, two, three = x.code_blocks(PAGE)
    assert x.multi_node(parse_launch_script(one.text), one) is False  # nearest heading says single node
    assert x.multi_node(parse_launch_script(two.text), two) is True  # "Two nodes"
    assert x.pd_role(parse_launch_script(three.text).argv) == "decode"
    assert x.pd_role(["m", "--kv-transfer-config={'kv_role': 'kv_producer'}"]) == "prefill"  # not JSON: the regex
    assert x.pd_role(["m", "--kv_transfer_config", '{"kv_role": "kv_both"}']) is None
    headless = parse_launch_script("vllm serve m --headless\n")
    assert x.multi_node(headless, one) is True


def test_a_block_with_two_serve_commands_becomes_two_scripts() -> None:
    text = "export A=1\nvllm serve m \\\n  --node-rank 0\n# node 1\nexport B=2\nvllm serve m --node-rank 1\ncurl x\n"
    scripts = extractor().launch_scripts(text, "page.md")
    assert scripts == [
        (2, "export A=1\nvllm serve m \\\n  --node-rank 0\n"),
        (6, "export A=1\n# node 1\nexport B=2\nvllm serve m --node-rank 1\n"),
    ]
    second = parse_launch_script(scripts[1][1])
    assert second.env == {"A": "1", "B": "2"}
    assert second.line == 4
    single = "export A=1\nvllm serve m\ncurl x\n"
    assert extractor().launch_scripts(single, "page.md") == [(2, single)]


@pytest.mark.parametrize("text", ["vllm serve a & vllm serve b\n"])
def test_serve_commands_sharing_a_line_are_not_split(text: str) -> None:
    with pytest.raises(ValueError, match="share a line"):
        extractor().launch_scripts(text, "page.md")
