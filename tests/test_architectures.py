"""The architecture → traits table read from vLLM's own registry: the maintainer script's parsing functions
(`scripts/extract_architectures.py`, on registry / model sources written here, no download), the checked-in data
(`ascendctl/facts/data/architectures.json`) through its loader (`ascendctl.facts.architectures`), and the planner's
use of it for a profile's `model.architecture`."""

from __future__ import annotations

import importlib.util
import json
import sys
import textwrap
from importlib.resources import files
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from ascendctl.facts.architectures import architecture_traits, known_versions
from ascendctl.facts.model_inspect import model_traits, parse_model_config
from ascendctl.plan.planner import plan_profile
from ascendctl.schema.profile import Profile

REPO = Path(__file__).resolve().parents[1]


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "extract_architectures", REPO / "scripts" / "extract_architectures.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve their module while the class is built
    spec.loader.exec_module(module)
    return module


x = load_script()


def src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


# ---- registry.py: the registration dicts -------------------------------------------------------------

# the 0.7.x shape: `**{comprehension}` inside the embedding dict, a cross-encoder dict, one merge-only aggregate
OLD_REGISTRY = src(
    """
    _TEXT_GENERATION_MODELS = {
        "AquilaForCausalLM": ("llama", "LlamaForCausalLM"),
        "LlamaForCausalLM": ("llama", "LlamaForCausalLM"),
        "MixtralForCausalLM": ("mixtral", "MixtralForCausalLM"),
        "Qwen2ForCausalLM": ("qwen2", "Qwen2ForCausalLM"),
    }

    _EMBEDDING_MODELS = {
        "BertModel": ("bert", "BertEmbeddingModel"),
        **{
            # Multiple models share the same architecture, so we include them all
            k: (mod, arch) for k, (mod, arch) in _TEXT_GENERATION_MODELS.items()
            if arch == "LlamaForCausalLM"
        },
        "Qwen2ForCausalLM": ("qwen2", "Qwen2ForCausalLM"),
    }

    _CROSS_ENCODER_MODELS = {
        "BertForSequenceClassification": ("bert",
                                          "BertForSequenceClassification"),
    }

    _MULTIMODAL_MODELS = {
        "Qwen2VLForConditionalGeneration": ("qwen2_vl", "Qwen2VLForConditionalGeneration"),  # noqa: E501
    }

    _SPECULATIVE_DECODING_MODELS = {
        "EAGLEModel": ("eagle", "EAGLE"),
    }

    _VLLM_MODELS = {
        **_TEXT_GENERATION_MODELS,
        **_EMBEDDING_MODELS,
        **_CROSS_ENCODER_MODELS,
        **_MULTIMODAL_MODELS,
        **_SPECULATIVE_DECODING_MODELS,
    }
    """
)

# the 0.2x shape: annotated dicts, dotted model packages, split pooling dicts, Transformers dicts, a nested `**{}`
# literal, and dicts that are not registrations (name → version / URL)
NEW_REGISTRY = src(
    """
    _TEXT_GENERATION_MODELS: dict[str, tuple[str, str]] = {
        "DeepseekV4ForCausalLM": ("vllm.models.deepseek_v4", "DeepseekV4ForCausalLM"),
        "GptOssForCausalLM": ("gpt_oss", "GptOssForCausalLM"),
        **{"Qwen3NextForCausalLM": ("qwen3_next", "Qwen3NextForCausalLM")},
    }
    _EMBEDDING_MODELS = {
        "Qwen2VLForConditionalGeneration": ("qwen2_vl", "Qwen2VLForConditionalGeneration"),
    }
    _LATE_INTERACTION_MODELS = {
        "HF_ColBERT": ("colbert", "ColBERTModel"),
    }
    _REWARD_MODELS = {"Qwen2ForRewardModel": ("qwen2_rm", "Qwen2ForRewardModel")}
    _MULTIMODAL_MODELS = {
        "Qwen2VLForConditionalGeneration": (
            "qwen2_vl",
            "Qwen2VLForConditionalGeneration",
        ),
    }
    _TRANSFORMERS_SUPPORTED_MODELS = {
        "OlmoForCausalLM": ("transformers", "TransformersForCausalLM"),
    }
    _VLLM_MODELS = {
        **_TEXT_GENERATION_MODELS,
        **_EMBEDDING_MODELS,
        **_LATE_INTERACTION_MODELS,
        **_REWARD_MODELS,
        **_MULTIMODAL_MODELS,
        **_TRANSFORMERS_SUPPORTED_MODELS,
    }
    _PREVIOUSLY_SUPPORTED_MODELS = {"MotifForCausalLM": "0.10.2"}
    _OOT_SUPPORTED_MODELS = {"BartModel": "https://github.com/vllm-project/bart-plugin"}
    """
)


def line_of(text: str, needle: str, *, last: bool = False) -> int:
    """The line (1-based) of the first (or last) line containing `needle`."""
    found = [i for i, line in enumerate(text.splitlines(), start=1) if needle in line]
    return found[-1] if last else found[0]


def test_old_registry_shape_with_a_comprehension_merge() -> None:
    found = x.registry_dicts(OLD_REGISTRY)
    assert list(found.dicts) == [
        "_TEXT_GENERATION_MODELS",
        "_EMBEDDING_MODELS",
        "_CROSS_ENCODER_MODELS",
        "_MULTIMODAL_MODELS",
        "_SPECULATIVE_DECODING_MODELS",
    ]
    assert found.aggregates == {"_VLLM_MODELS": list(found.dicts)}
    # the comprehension keeps the Llama-class entries of the text dict, with their own lines
    embedding = [e.arch for e in found.dicts["_EMBEDDING_MODELS"]]
    assert embedding == ["BertModel", "AquilaForCausalLM", "LlamaForCausalLM", "Qwen2ForCausalLM"]

    regs = x.registrations(OLD_REGISTRY)
    aquila = regs["AquilaForCausalLM"]
    assert (aquila.module, aquila.cls, aquila.line) == ("llama", "LlamaForCausalLM", line_of(OLD_REGISTRY, "Aquila"))
    assert aquila.dicts == ("_EMBEDDING_MODELS", "_TEXT_GENERATION_MODELS") and not aquila.pooling
    assert regs["BertModel"].pooling and regs["BertForSequenceClassification"].pooling
    # listed in both dicts: the embedding entry wins (later in the merge order), and it is not pooling-only
    qwen2 = regs["Qwen2ForCausalLM"]
    assert qwen2.line == line_of(OLD_REGISTRY, '"Qwen2ForCausalLM": (', last=True)
    assert not qwen2.pooling and not qwen2.multimodal
    assert regs["Qwen2VLForConditionalGeneration"].multimodal
    assert regs["BertForSequenceClassification"].cls == "BertForSequenceClassification"  # a tuple over two lines
    assert set(regs) == {
        "AquilaForCausalLM",
        "LlamaForCausalLM",
        "MixtralForCausalLM",
        "Qwen2ForCausalLM",
        "BertModel",
        "BertForSequenceClassification",
        "Qwen2VLForConditionalGeneration",
        "EAGLEModel",
    }


def test_new_registry_shape() -> None:
    regs = x.registrations(NEW_REGISTRY)
    assert "MotifForCausalLM" not in regs and "BartModel" not in regs  # not registrations
    assert regs["DeepseekV4ForCausalLM"].module == "vllm.models.deepseek_v4"
    assert regs["Qwen3NextForCausalLM"].line == line_of(NEW_REGISTRY, "Qwen3NextForCausalLM")  # nested `**{}`
    vl = regs["Qwen2VLForConditionalGeneration"]
    assert vl.multimodal and not vl.pooling and vl.dicts == ("_EMBEDDING_MODELS", "_MULTIMODAL_MODELS")
    assert vl.line == line_of(
        NEW_REGISTRY, '"Qwen2VLForConditionalGeneration": (', last=True
    )  # the multimodal entry won
    assert regs["HF_ColBERT"].pooling and regs["Qwen2ForRewardModel"].pooling
    assert not regs["OlmoForCausalLM"].pooling and regs["OlmoForCausalLM"].module == "transformers"


def test_an_unknown_merge_shape_is_an_error_not_a_silent_gap() -> None:
    with pytest.raises(ValueError, match="unsupported"):
        x.registry_dicts("_A_MODELS = {'X': ('x', 'X')}\n_B_MODELS = {**make(), 'Y': ('y', 'Y')}\n")


def test_vllm_ascend_registrations() -> None:
    text = src(
        """
        from vllm import ModelRegistry


        def register_model():
            ModelRegistry.register_model(
                "Qwen2VLForConditionalGeneration",
                "vllm_ascend.models.qwen2_vl:AscendQwen2VLForConditionalGeneration")
            if envs.USE_OPTIMIZED_MODEL:
                ModelRegistry.register_model("DeepseekV4ForCausalLM", "vllm_ascend.models.deepseek_v4:AscendV4")
            ModelRegistry.register_model("NotAModel", some_variable)
        """
    )
    found = x.ascend_registrations(text)
    assert [(e.arch, e.module, e.cls, e.line) for e in found] == [
        ("Qwen2VLForConditionalGeneration", "vllm_ascend.models.qwen2_vl", "AscendQwen2VLForConditionalGeneration", 6),
        ("DeepseekV4ForCausalLM", "vllm_ascend.models.deepseek_v4", "AscendV4", 9),
    ]


# ---- model modules: MoE / MLA / hybrid ---------------------------------------------------------------


def test_module_facts_moe_and_mla_signs() -> None:
    moe = x.module_facts("from vllm.model_executor.layers.fused_moe import FusedMoE\n")
    assert moe.moe == 1 and moe.mla is None
    # the 0.3x layer names are not FusedMoE, but they come from the fused_moe package
    routed = x.module_facts("from vllm.model_executor.layers.fused_moe.routed_experts import RoutedExperts\n")
    assert routed.moe == 1
    called = x.module_facts("import m\n\n\ndef f():\n    return m.layers.SharedFusedMoE(8)\n")
    assert called.moe == 5
    mla = x.module_facts("class A:\n    def f(self, config):\n        return config.kv_lora_rank\n")
    assert mla.mla == 3 and mla.moe is None
    assert x.module_facts("r = getattr(config, 'kv_lora_rank', None)\n").mla == 1
    assert x.module_facts("from vllm.v1.attention.backends.mla.sparse_swa import Cache\n").mla == 1
    # the Transformers backend's generic MLA helpers are not an MLA model
    generic = "from vllm.model_executor.layers.attention.mla_attention import get_mla_dims\n"
    generic += "from vllm.model_executor.layers.attention import Attention, MLAAttention\n"
    assert x.module_facts(generic).mla is None
    dense = x.module_facts("from vllm.model_executor.layers.linear import RowParallelLinear\nclass M: pass\n")
    assert (dense.moe, dense.mla, dense.classes) == (None, None, {"M": []})


def test_relative_imports_resolve() -> None:
    assert x.absolute_module("vllm.model_executor.models.qwen3_vl_moe", False, 1, "qwen3_moe") == (
        "vllm.model_executor.models.qwen3_moe"
    )
    assert (
        x.absolute_module("vllm.models.deepseek_v4", True, 1, "nvidia.model") == "vllm.models.deepseek_v4.nvidia.model"
    )
    assert (
        x.absolute_module("vllm.models.deepseek_v4.nvidia.mtp", False, 2, "common") == "vllm.models.deepseek_v4.common"
    )
    assert x.absolute_module("a.b", False, 0, "c.d") == "c.d"


M = "vllm/model_executor/models/"
TREE = {
    # a package that re-exports its platform's class (the class is imported, not defined, in the registry module)
    "vllm/models/foo/__init__.py": "if cuda:\n    from .nvidia.model import FooForCausalLM\nelse:\n"
    "    from .cpu.model import FooForCausalLM\n",
    "vllm/models/foo/nvidia/model.py": "from vllm.model_executor.layers.fused_moe import FusedMoE\n"
    "class FooForCausalLM:\n    pass\n",
    "vllm/models/foo/cpu/model.py": "class FooForCausalLM:\n    def f(self, c):\n        return c.kv_lora_rank\n",
    # a module holding a dense and a MoE variant: decided per module, so both are MoE
    M + "mixed.py": "from vllm.model_executor.layers.fused_moe import FusedMoE\n\n"
    "class DenseEncoder:\n    pass\n\n"
    "class MixedMoE:\n    def __init__(self):\n        self.experts = FusedMoE()\n\n"
    "class MixedForCausalLM:\n    def __init__(self):\n        self.block = MixedMoE()\n",
    # composite modules: one builds the MoE block of another model module, one borrows a dense class from `mixed`
    M + "moe_vl.py": "from .mixed import MixedForCausalLM\n\nclass MoeVL:\n"
    "    def __init__(self):\n        self.lm = MixedForCausalLM()\n",
    M + "dense_vl.py": "from .mixed import DenseEncoder\n\nclass DenseVL:\n"
    "    def __init__(self):\n        self.enc = DenseEncoder()\n",
    # hybrids: directly, through a base of the same module, through an imported base; and a plain model
    M + "interfaces.py": "class IsHybrid:\n    pass\n",
    M + "hy.py": "from .interfaces import IsHybrid, SupportsPP\nfrom vllm.model_executor.models import interfaces\n\n"
    "class HyBase(nn.Module, IsHybrid):\n    pass\n\nclass HyModel(HyBase):\n    pass\n\n"
    "class Dotted(interfaces.IsHybrid):\n    pass\n\nclass Plain(nn.Module, SupportsPP):\n    pass\n",
    M + "hy2.py": "from .hy import HyModel\n\nclass HyVL(HyModel):\n    pass\n\nAliasVL = HyVL\n",
}


def analyzer(tree: dict[str, str], inherit: int = 0) -> Any:
    modules = ["mixed", "moe_vl", "dense_vl", "hy", "hy2", "vllm.models.foo"]
    return x.Analyzer(tree, x.followed_files(tree, modules), inherit)


def test_a_reexported_class_is_read_in_its_defining_modules() -> None:
    a = analyzer(TREE)
    assert a.defining("vllm/models/foo/__init__.py", "FooForCausalLM") == [
        "vllm/models/foo/cpu/model.py",
        "vllm/models/foo/nvidia/model.py",
    ]
    # the package's __init__ says nothing itself; its platform modules do (MoE on one, MLA on the other)
    assert a.facts("vllm/models/foo/__init__.py").moe is None
    assert a.traits("vllm.models.foo", "FooForCausalLM") == {"hybrid": False, "mla": True, "moe": True}
    assert a.traits("no_such_module", "X") is None


def test_moe_per_module_and_one_level_of_composition() -> None:
    a = analyzer(TREE)
    assert a.traits("mixed", "MixedForCausalLM")["moe"]
    assert a.traits("mixed", "DenseEncoder")["moe"]  # per module: the dense class of a MoE module reads as MoE
    assert a.traits("moe_vl", "MoeVL")["moe"]  # builds mixed's MoE model: reaches FusedMoE
    assert not a.traits("dense_vl", "DenseVL")["moe"]  # borrows mixed's dense encoder only


def test_hybrid_through_bases() -> None:
    a = analyzer(TREE)
    assert a.traits("hy", "HyBase")["hybrid"]
    assert a.traits("hy", "HyModel")["hybrid"]  # a base of the same module
    assert a.traits("hy", "Dotted")["hybrid"]  # `interfaces.IsHybrid`
    assert not a.traits("hy", "Plain")["hybrid"]
    assert a.traits("hy2", "HyVL")["hybrid"]  # a base imported from another module: one hop
    assert a.traits("hy2", "AliasVL")["hybrid"]  # `AliasVL = HyVL`


def test_a_vllm_ascend_subclass_inherits_its_vllm_base() -> None:
    tree = {
        **TREE,
        "vllm_ascend/models/ascend_vl.py": "from vllm.model_executor.models.moe_vl import MoeVL\n\n"
        "class AscendMoeVL(MoeVL):\n    pass\n",
    }
    # own module + the base's module (one level) say nothing; the base's own composition does
    assert not analyzer(tree).traits("vllm_ascend.models.ascend_vl", "AscendMoeVL")["moe"]
    assert analyzer(tree, inherit=1).traits("vllm_ascend.models.ascend_vl", "AscendMoeVL")["moe"]


def test_a_model_built_through_the_registry_takes_that_architectures_traits() -> None:
    composite = "class KimiVL:\n    def __init__(self):\n        self.lm = init_vllm_registered_model(\n"
    composite += "            vllm_config=c, architectures=['DeepseekV2ForCausalLM'])\n"
    assert x.module_facts(composite).delegates == {"DeepseekV2ForCausalLM"}
    records = {"KimiVL": {"moe": False, "mla": False}, "DeepseekV2ForCausalLM": {"moe": True, "mla": True}}
    out = x.with_delegates(records, {"KimiVL": {"DeepseekV2ForCausalLM"}}, records)
    assert out["KimiVL"] == {"moe": True, "mla": True} and records["KimiVL"]["moe"] is False


def test_one_version_end_to_end() -> None:
    registry = src(
        """
        _TEXT_GENERATION_MODELS = {
            "MixedForCausalLM": ("mixed", "MixedForCausalLM"),
            "FooForCausalLM": ("vllm.models.foo", "FooForCausalLM"),
        }
        _MULTIMODAL_MODELS = {"HyVL": ("hy2", "HyVL")}
        _VLLM_MODELS = {**_TEXT_GENERATION_MODELS, **_MULTIMODAL_MODELS}
        """
    )
    tree = x.SourceTree("v9.9.9", {**TREE, x.REGISTRY: registry})
    records = x.vllm_records(tree)
    assert records["HyVL"] == {
        "hybrid": True,
        "mla": False,
        "moe": False,
        "multimodal": True,
        "pooling": False,
        "model": "hy2:HyVL",
        "source": "v9.9.9:vllm/model_executor/models/registry.py:5",
    }
    assert records["FooForCausalLM"]["moe"] and records["FooForCausalLM"]["mla"]


# ---- spans and the output ------------------------------------------------------------------------------


def record(moe: bool, source: str, model: str = "m:C") -> dict[str, Any]:
    return {"hybrid": False, "mla": False, "moe": moe, "multimodal": False, "pooling": False, "model": model,
            "source": source}  # fmt: skip


def test_spans_merge_consecutive_releases_with_equal_traits() -> None:
    per = [
        ("0.1.0", {"A": record(False, "v0.1.0:r:1"), "B": record(True, "v0.1.0:r:2")}),
        ("0.2.0", {"A": record(False, "v0.2.0:r:9"), "B": record(True, "v0.2.0:r:3")}),
        ("0.3.0", {"A": record(True, "v0.3.0:r:9")}),  # A turns MoE; B is gone
        ("0.4.0", {"A": record(True, "v0.4.0:r:9"), "B": record(True, "v0.4.0:r:3")}),  # B is back
    ]
    found = x.spans(per)
    assert [(s["from"], s["to"], s["moe"], s["source"]) for s in found["A"]] == [
        ("0.1.0", "0.2.0", False, "v0.1.0:r:1"),  # the span's first release cites
        ("0.3.0", "0.4.0", True, "v0.3.0:r:9"),
    ]
    assert [(s["from"], s["to"]) for s in found["B"]] == [("0.1.0", "0.2.0"), ("0.4.0", "0.4.0")]


def test_render_is_sorted_one_architecture_per_line() -> None:
    data = {"schema": 1, "architectures": {"B": {"vllm": []}, "A": {"vllm": [{"z": 1, "a": 2}]}}, "decisions": []}
    text = x.render(data)
    assert json.loads(text) == data
    lines = text.splitlines()
    assert (
        lines[1] == '"architectures":{'
        and lines[2] == '"A":{"vllm":[{"a":2,"z":1}]},'
        and lines[3] == '"B":{"vllm":[]}'
    )
    assert x.render(json.loads(text)) == text


def test_version_fallbacks() -> None:
    read = ["0.10.2", "0.11.0", "0.12.0"]
    assert x.nearest_earlier("0.11.0rc3", read) == "0.10.2"
    assert x.nearest_earlier("0.9.0", read) == "0.10.2"  # nothing earlier: the oldest
    assert x.context_version("0.11.0rc3", read) == "0.11.0"  # a pre-release: its final's sources
    assert x.context_version("0.11.5", read) == "0.11.0"
    assert x.simple_index_links('<a href="https://f/x/vllm-0.7.1.tar.gz#sha256=ab">vllm-0.7.1.tar.gz</a>') == {
        "vllm-0.7.1.tar.gz": "https://f/x/vllm-0.7.1.tar.gz#sha256=ab"
    }


# ---- the checked-in data, through the loader -----------------------------------------------------------

DATA = files("ascendctl.facts").joinpath("data/architectures.json")


def test_data_is_the_scripts_rendering_and_compact() -> None:
    text = DATA.read_text(encoding="utf-8")
    data = json.loads(text)
    assert x.render(data) == text  # sorted, one architecture per line: reruns diff cleanly
    assert len(text.encode()) < 400 * 1024
    versions = data["vllm_versions"]
    assert tuple(versions) == known_versions() and len(versions) >= 25
    assert "0.11.0rc3" not in versions
    assert any(d["version"] == "0.11.0rc3" and d["use"] == "0.10.2" for d in data["decisions"])
    tags = data["vllm_ascend_tags"]
    for arch, entry in data["architectures"].items():
        for key, allowed in (("vllm", versions), ("vllm_ascend", list(tags))):
            for span in entry.get(key, []):
                assert span["from"] in allowed and span["to"] in allowed, (arch, span)
                tag, path, line = span["source"].split(":")
                assert tag.startswith("v") and path.endswith(".py") and int(line) > 0


def test_gpt_oss_is_moe_where_vllm_has_it() -> None:
    t = architecture_traits("GptOssForCausalLM", "0.11.0")  # the vLLM pin of vllm-ascend v0.11.0
    assert t is not None and (t.arch, t.moe, t.mla, t.multimodal, t.note) == ("moe", True, False, False, None)
    assert t.origin == "vLLM" and t.cite().startswith("vLLM 0.10") and "models/registry.py:" in t.cite()
    before = architecture_traits("GptOssForCausalLM", "0.9.1")  # before vLLM had it: the nearest span, said so
    assert before is not None and before.moe
    assert before.note is not None and "not in vLLM 0.9.1's registry" in before.note and before.first in before.note


def test_known_traits() -> None:
    v3 = architecture_traits("DeepseekV3ForCausalLM", "0.13.0")
    assert v3 is not None and v3.mla and v3.moe and v3.arch == "mla"
    vl = architecture_traits("Qwen2_5_VLForConditionalGeneration", "0.13.0")
    assert vl is not None and vl.multimodal and vl.arch == "dense" and not vl.pooling
    bert = architecture_traits("BertModel", "0.13.0")
    assert bert is not None and bert.pooling
    qwen2 = architecture_traits("Qwen2ForCausalLM", "0.13.0")  # also an embedding entry, but generative
    assert qwen2 is not None and not qwen2.pooling and qwen2.arch == "dense"
    nxt = architecture_traits("Qwen3NextForCausalLM", "0.13.0")
    assert nxt is not None and nxt.hybrid and nxt.moe
    assert architecture_traits("AcmeForCausalLM", "0.13.0") is None


def test_versions_outside_the_data() -> None:
    newest = architecture_traits("GptOssForCausalLM", None)
    assert newest is not None and newest.last == known_versions()[-1] and newest.note is None
    unread = architecture_traits("LlamaForCausalLM", "0.11.0rc3")  # not on PyPI: looked up as 0.10.2
    assert unread is not None and unread.note is not None and "looked up as 0.10.2" in unread.note
    later = architecture_traits("LlamaForCausalLM", "9.0.0")
    assert later is not None and later.note is not None and "newer than the registries read" in later.note


def test_architectures_only_vllm_ascend_registers() -> None:
    pangu = architecture_traits("PanguProMoEForCausalLM", "0.11.0", "v0.11.0")
    assert pangu is not None and pangu.origin == "vllm-ascend" and pangu.moe and pangu.note is None
    assert pangu.cite().startswith("vllm-ascend v") and "registration: vllm_ascend/" in pangu.cite()
    # a tag without it: the nearest span, with a note
    later = architecture_traits("PanguProMoEForCausalLM", "0.18.0", "v0.18.0")
    assert later is not None and later.note is not None and "registered only by vllm-ascend" in later.note


# every entry of the hand-typed table this data replaced, with the traits it gave (KimiK2ForCausalLM is in
# neither registry: Kimi-K2 checkpoints say DeepseekV3ForCausalLM)
FORMER_TABLE = {
    "DeepseekV2ForCausalLM": ("mla", False),
    "DeepseekV3ForCausalLM": ("mla", False),
    "DeepseekV32ForCausalLM": ("mla", False),
    "DeepseekV4ForCausalLM": ("mla", False),
    "GlmMoeDsaForCausalLM": ("mla", False),
    "Qwen3MoeForCausalLM": ("moe", False),
    "Qwen2MoeForCausalLM": ("moe", False),
    "Qwen3NextForCausalLM": ("moe", False),
    "Glm4MoeForCausalLM": ("moe", False),
    "MiniMaxM2ForCausalLM": ("moe", False),
    "MixtralForCausalLM": ("moe", False),
    "Ernie4_5_MoeForCausalLM": ("moe", False),
    "Qwen3VLMoeForConditionalGeneration": ("moe", True),
    "Qwen3VLForConditionalGeneration": ("dense", True),
    "Qwen2_5_VLForConditionalGeneration": ("dense", True),
    "Qwen3ForCausalLM": ("dense", False),
    "Qwen2ForCausalLM": ("dense", False),
    "LlamaForCausalLM": ("dense", False),
    "MistralForCausalLM": ("dense", False),
}


@pytest.mark.parametrize(("arch", "expected"), sorted(FORMER_TABLE.items()))
def test_the_former_table_is_covered(arch: str, expected: tuple[str, bool]) -> None:
    t = architecture_traits(arch, None)
    assert t is not None and (t.arch, t.multimodal) == expected
    assert architecture_traits("KimiK2ForCausalLM", None) is None


# ---- model_traits and the planner ----------------------------------------------------------------------


def test_model_traits_names_the_registry_line() -> None:
    t = model_traits("openai/gpt-oss-20b", None, None, None, "GptOssForCausalLM", "0.11.0", "v0.11.0")
    assert (t.arch, t.multimodal, t.guessed, t.pooling) == ("moe", False, False, False)
    assert t.why.startswith("model.architecture GptOssForCausalLM (vLLM 0.10")
    assert "vllm/model_executor/models/registry.py:" in t.why
    early = model_traits("x/y", None, None, None, "Qwen3VLMoeForConditionalGeneration", "0.10.2")
    assert early.arch == "moe" and early.multimodal and "not in vLLM 0.10.2's registry" in early.why
    hybrid = model_traits("x/y", None, None, None, "Qwen3NextForCausalLM", "0.13.0")
    assert hybrid.hybrid and hybrid.arch == "moe"


def test_config_json_wins_over_a_disagreeing_registry_with_a_note() -> None:
    # config.json without experts for an architecture whose vLLM module is MoE: config.json stays authoritative
    config = parse_model_config({"architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss"}, "/m/config.json")
    t = model_traits("/m", config, None, None, None, "0.13.0")
    assert t.arch == "dense" and t.why.startswith("config.json (/m/config.json)")
    assert "registry entry for GptOssForCausalLM reads as moe" in t.why and "config.json wins" in t.why
    agreeing = parse_model_config({"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3"}, "/q/config.json")
    assert model_traits("/q", agreeing, None, None, None, "0.13.0").why == "config.json (/q/config.json)"


def hub_profile(backend: str, **extra: Any) -> Profile:
    target: dict[str, Any] = {"backend": backend}
    if backend == "npu":
        target.update(hardware="a2", devices_per_node=8)
    return Profile.model_validate(
        {
            "apiVersion": "ascendctl/v1",
            "kind": "Profile",
            "metadata": {"name": "t"},
            "model": {"source": "acme/gpt-oss-fork", "architecture": "GptOssForCausalLM"},
            "target": target,
            **extra,
        }
    )


@pytest.fixture
def empty_caches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No hub cache holds the model: no config.json can be read."""
    for name in ("HF_HUB_CACHE", "MODELSCOPE_CACHE"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))  # empty folders


@pytest.mark.usefixtures("empty_caches")
def test_plan_takes_moe_from_the_registry_for_a_hub_id_without_config() -> None:
    plan = plan_profile(hub_profile("cpu"))
    model = plan.deployment.model
    assert model.config_path is None and model.arch == "moe"
    assert model.traits_from.startswith("model.architecture GptOssForCausalLM (vLLM ")
    assert not any("guessed" in w for w in plan.warnings)


@pytest.mark.usefixtures("empty_caches")
def test_plan_on_npu_uses_the_releases_vllm_pin() -> None:
    plan = plan_profile(hub_profile("npu", release="v0.11.0"))
    model = plan.deployment.model
    assert model.arch == "moe" and "registry.py:" in model.traits_from
    assert "not in vLLM" not in model.traits_from  # vLLM 0.11.0 has it: no fallback note
    old = plan_profile(hub_profile("npu", release="v0.9.1"))  # vLLM 0.9.1 predates gpt-oss
    assert old.deployment.model.arch == "moe" and "not in vLLM 0.9.1's registry" in old.deployment.model.traits_from
    assert not any("guessed" in w for w in old.warnings)
