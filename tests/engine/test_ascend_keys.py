"""Per-tag vllm-ascend config-key tables (engine/ascendctl_engine/data/ascend_keys) and the script that "
"extracts them."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import sys
import tarfile
import tempfile
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

from ascendctl_engine.adapters.ascend_keys import (
    KeyTableMissing,
    key_table,
    key_tags,
    tags_defining_env,
    tags_reading,
)

REPO = Path(__file__).resolve().parents[2]
MIRROR = Path(os.environ.get("VLLM_ASCEND_MIRROR", "/work/.mirror/vllm-project+vllm-ascend/repo"))
POST = "v0.23.0.post1"  # on PyPI only (no git tag): its table is read from the sdist
SDIST_NAME = "vllm_ascend-0.23.0.post1.tar.gz"
SDIST = Path(os.environ.get("VLLM_ASCEND_SDIST", Path(tempfile.gettempdir()) / "ascendctl-upstream-cache" / SDIST_NAME))

# Every vllm-ascend release from v0.7.1rc1 to v0.25.1rc1, oldest first: the git tags, and the PyPI-only POST.
_TAG_LIST = (
    "v0.7.1rc1 v0.7.3rc1 v0.7.3rc2 v0.7.3 v0.7.3.post1 v0.8.4rc1 v0.8.4rc2 v0.8.5rc1 v0.9.0rc1 v0.9.0rc2 "
    "v0.9.1rc1 v0.9.1rc2 v0.9.1rc3 v0.9.1 v0.9.2rc1 v0.10.0rc1 v0.10.1rc1 v0.10.2rc1 v0.11.0rc0 v0.11.0rc1 "
    "v0.11.0rc2 v0.11.0rc3 v0.11.0 v0.12.0rc1 v0.13.0rc1 v0.13.0rc2 v0.13.0rc3 v0.13.0 v0.14.0rc1 v0.15.0rc1 "
    "v0.16.0rc1 v0.17.0rc1 v0.18.0rc1 v0.18.0 v0.19.1rc1 v0.20.2rc1 v0.21.0rc1 v0.22.1rc1 v0.23.0rc1 v0.23.0 "
    "v0.23.0.post1 v0.24.0rc1 v0.25.1rc1"
)
TAGS = _TAG_LIST.split()


def _from(first: str) -> list[str]:
    return TAGS[TAGS.index(first) :]


def load_script() -> ModuleType:
    name = "extract_ascend_keys"
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / "extract_ascend_keys.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is built
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(name, None)
    return module


# ------------------------------------------------------------------------------------------ the tables
def test_every_release_has_a_table_in_version_order() -> None:
    assert len(TAGS) == 43
    assert key_tags() == tuple(TAGS)
    assert TAGS.index("v0.23.0") + 1 == TAGS.index(POST) == TAGS.index("v0.24.0rc1") - 1
    for tag in TAGS:
        table = key_table(tag)
        assert table.tag == tag
        assert table.source == f"engine/ascendctl_engine/data/ascend_keys/{tag}.json"


def test_every_fact_names_its_tag_file_and_line() -> None:
    # git tags: `TAG:path:line`; the PyPI-only release: `TAG:PyPI:<sdist file>:path:line` (as extract_upstream.py)
    pattern = re.compile(r"^(v[0-9][^:]*)(?::PyPI:([^:/]+\.tar\.gz))?:(vllm_ascend/[\w/.]+\.py):(\d+)$")
    for tag in TAGS:
        data = json.loads(
            (REPO / "engine" / "ascendctl_engine" / "data" / "ascend_keys" / f"{tag}.json").read_text(encoding="utf-8")
        )
        sources = [k["source"] for k in data["keys"]] + [e["source"] for e in data["env"]]
        sources += [p["source"] for p in data["unknown_keys"].values()]
        sources.append(data["quantization_cli_choice"]["source"])
        for source in sources:
            match = pattern.match(source)
            assert match, source
            assert match.group(1) == tag
            assert match.group(2) == (SDIST_NAME if tag == POST else None), source
            assert int(match.group(4)) > 0, source


def test_measured_facts() -> None:
    assert tags_reading("eplb_config.load_collection_phase") == ()
    for tag in TAGS:
        policy = key_table(tag).unknown_policy("eplb_config")
        assert (policy == "error") == (tag in _from("v0.14.0rc1")), (tag, policy)
    stage = key_table("v0.25.1rc1").key("eplb_config.eplb_heat_collection_stage")
    assert stage is not None and stage.default == "all" and stage.type == "str"
    assert not key_table("v0.25.1rc1").reads("eplb_config.eplb_heat_collection_phase")
    v090 = key_table("v0.9.0rc1")
    assert v090.reads("torchair_graph_config.enabled")
    assert not v090.reads("torchair_graph_config.enable")
    assert list(tags_reading("enable_fused_mc2")) == _from("v0.20.2rc1")
    assert tags_reading("ascend_compilation_config")[0] == "v0.12.0rc1"
    assert list(tags_reading("ascend_compilation_config")) == _from("v0.12.0rc1")


def test_key_info_types_defaults_and_env_fallbacks() -> None:
    t = key_table("v0.23.0")
    dyn = t.key("eplb_config.dynamic_eplb")
    assert dyn is not None and dyn.type == "bool" and dyn.default is False
    assert dyn.source.startswith("v0.23.0:vllm_ascend/ascend_config.py:")
    eplb = t.key("eplb_config")
    assert eplb is not None and eplb.mapping and eplb.type == "dict"
    mlapo = key_table("v0.25.1rc1").key("enable_mlapo")
    assert mlapo is not None and mlapo.env_fallback == "VLLM_ASCEND_ENABLE_MLAPO"
    assert mlapo.default_expr == "ascend_envs.VLLM_ASCEND_ENABLE_MLAPO"
    assert key_table("v0.25.1rc1").reads("scheduler_config.enable_balance_scheduling")
    assert key_table("v0.9.1").key("nope") is None


def test_pypi_post_release_has_a_table_read_from_its_sdist() -> None:
    post, base = key_table(POST), key_table("v0.23.0")
    assert post.tag == POST and post.source == f"engine/ascendctl_engine/data/ascend_keys/{POST}.json"
    assert key_table("0.23.0.post1").tag == POST
    dyn = post.key("eplb_config.dynamic_eplb")
    assert dyn is not None and dyn.type == "bool" and dyn.default is False
    assert dyn.source.startswith(f"{POST}:PyPI:{SDIST_NAME}:vllm_ascend/ascend_config.py:")
    # the post release only patches a model runner and a quantization method: what it reads is v0.23.0's
    assert [k.path for k in post.keys] == [k.path for k in base.keys]
    assert post.env_names == base.env_names
    assert post.unknown_policy("eplb_config") == base.unknown_policy("eplb_config") == "error"
    assert post.quantization_cli_choice is base.quantization_cli_choice is True
    readers = tags_reading("eplb_config.dynamic_eplb")
    assert readers[readers.index("v0.23.0") :][:3] == ("v0.23.0", POST, "v0.24.0rc1")
    assert POST in tags_defining_env("VLLM_ASCEND_ENABLE_BATCH_MEMCPY")
    problems = post.check({"eplb_config": {"load_collection_phase": "all"}})
    assert [p.kind for p in problems] == ["rejected"]


def test_check_accepts_keys_the_tag_reads() -> None:
    cfg = {"enable_shared_expert_dp": True, "eplb_config": {"dynamic_eplb": True, "num_redundant_experts": 2}}
    assert key_table("v0.23.0").check(cfg) == []
    # ascend_scheduler_config copies every key through at v0.9.x: vLLM scheduler options are accepted there
    kept = {"ascend_scheduler_config": {"enabled": True, "enable_chunked_prefill": False, "anything": 1}}
    assert key_table("v0.9.1").unknown_policy("ascend_scheduler_config") == "kept"
    assert key_table("v0.9.1").check(kept) == []


def test_check_reports_an_unread_top_level_key_and_who_reads_it() -> None:
    problems = key_table("v0.23.0").check({"torchair_graph_config": {"enabled": True}, "refresh": True})
    assert [p.path for p in problems] == ["torchair_graph_config"]
    problem = problems[0]
    assert problem.kind == "not-read"
    assert "ignored" in problem.message and "\n" not in problem.message
    assert "v0.9.0rc1" in problem.message and "v0.11.0" in problem.message
    assert key_table("v0.23.0").unknown_policy("") == "ignored"


def test_check_rejects_an_unknown_eplb_key_at_v0_23_0() -> None:
    problems = key_table("v0.23.0").check({"eplb_config": {"dynamic_eplb": True, "load_collection_phase": "all"}})
    assert len(problems) == 1
    problem = problems[0]
    assert (problem.path, problem.kind) == ("eplb_config.load_collection_phase", "rejected")
    assert "ValueError" in problem.message and "no vllm-ascend release reads it" in problem.message
    # the same key is only ignored where EplbConfig did not check yet
    old = key_table("v0.13.0").check({"eplb_config": {"load_collection_phase": "all"}})
    assert [p.kind for p in old] == ["not-read"]


def test_check_walks_nested_levels_below_a_read_sub_config() -> None:
    cfg = {"scheduler_config": {"short_request_first_config": {"enabled": True, "typo": 1}}}
    problems = key_table("v0.25.1rc1").check(cfg)
    assert [(p.path, p.kind) for p in problems] == [("scheduler_config.short_request_first_config.typo", "rejected")]


def test_env_variables_per_tag() -> None:
    late = "VLLM_ASCEND_ENABLE_BATCH_MEMCPY"
    assert key_table("v0.23.0").env(late) is not None
    assert key_table("v0.13.0").env(late) is None
    assert tags_defining_env(late)[0] == "v0.19.1rc1"
    assert "VLLM_ASCEND_ENABLE_DBO" in key_table("v0.9.1").env_names
    assert "VLLM_ASCEND_ENABLE_DBO" not in key_table("v0.25.1rc1").env_names
    mlapo_old, mlapo_new = (
        key_table("v0.11.0").env("VLLM_ASCEND_ENABLE_MLAPO"),
        key_table("v0.15.0rc1").env("VLLM_ASCEND_ENABLE_MLAPO"),
    )
    assert mlapo_old is not None and mlapo_old.default == "0"
    assert mlapo_new is not None and mlapo_new.default == "1"
    assert mlapo_new.source.startswith("v0.15.0rc1:vllm_ascend/envs.py:")
    assert key_table("v0.7.1rc1").env_names == frozenset()  # no envs.py at that tag
    assert tags_defining_env("NOT_A_VARIABLE") == ()


def test_quantization_choice_hook() -> None:
    assert key_table("v0.8.5rc1").quantization_cli_choice is False
    assert key_table("v0.9.0rc1").quantization_cli_choice is True
    for tag in TAGS:
        assert key_table(tag).quantization_cli_choice == (tag in _from("v0.9.0rc1")), tag


def test_missing_table_is_a_clear_lookup_error() -> None:
    with pytest.raises(KeyTableMissing, match=r"v0\.99\.0.*extract_ascend_keys") as info:
        key_table("v0.99.0")
    assert isinstance(info.value, LookupError)
    assert key_table("0.13.0") is key_table("0.13.0")
    assert key_table("0.13.0").tag == "v0.13.0"


# ------------------------------------------------------------------------------------------ the script
SYNTHETIC = {
    "vllm_ascend/ascend_config.py": """
        import os
        from vllm_ascend import envs as ascend_envs
        from vllm_ascend.other import external_sink


        class Sub:
            def __init__(self, cfg: dict):
                self.enabled = cfg.get("enabled", False)
                self.size: int = int(cfg.get("size", "4"))


        class Kw:
            def __init__(self, alpha: bool = True, beta: int = 3, **kwargs):
                self.gamma = kwargs.get("gamma", 0.5)


        class Strict:
            def __init__(self, only: str = "x"):
                self.only = only


        class Copying:
            def __init__(self, cfg):
                self.enabled = cfg.get("enabled", False)
                for k, v in cfg.items():
                    if not hasattr(self, k):
                        setattr(self, k, v)


        class Raising:
            _defaults = {"a": 1, "b": None}

            def __init__(self, user):
                self.config = self._defaults.copy()
                for key, value in user.items():
                    if key in self.config:
                        self.config[key] = value
                    else:
                        raise ValueError(f"Config has no attribute '{key}'")


        class WarnOnly:
            def __init__(self, cfg):
                for key in cfg.keys():
                    logger.warning("unknown key %s", key)


        class Config:
            def __init__(self, vllm_config):
                additional_config = vllm_config.additional_config if vllm_config.additional_config is not None else {}
                self.sub = Sub(additional_config.get("sub_config", {}))
                self.kw = Kw(**additional_config.get("kw_config", {}))
                self.strict = Strict(**additional_config.get("strict_config", {}))
                self.copying = Copying(additional_config.get("copy_config", {}))
                self.raising = Raising(additional_config.get("raise_config", {}))
                self.warning = WarnOnly(additional_config.get("warn_config", {}))
                self.flag = additional_config.get("flag", ascend_envs.VLLM_ASCEND_FLAG)
                self.fb = self._get(additional_config, "fallback_key", "VLLM_ASCEND_FB", ascend_envs.VLLM_ASCEND_FB)
                self.req = additional_config["required_key"]
                if "checked" in additional_config:
                    pass
                name = compute()
                self.dyn = additional_config.get(name)
                external_sink(additional_config.get("opaque_config", {}))

            @staticmethod
            def _get(cfg, key, env_key, env_value):
                if key in cfg:
                    return cfg[key]
                if env_key in os.environ:
                    pass
                return env_value
    """,
    "vllm_ascend/envs.py": """
        import os

        env_variables = {
            "VLLM_ASCEND_FLAG": lambda: bool(int(os.getenv("VLLM_ASCEND_FLAG", "0"))),
            "VLLM_ASCEND_SIZE": lambda: int(os.getenv("VLLM_ASCEND_SIZE", 18 * 1024)),
            "VLLM_ASCEND_PATH": lambda: os.getenv("VLLM_ASCEND_PATH", None),
        }
    """,
    "vllm_ascend/platform.py": """
        class NPUPlatform:
            @classmethod
            def pre_register_and_update(cls, parser=None):
                if parser is not None:
                    quant_action = parser._option_string_actions.get("--quantization")
                    if quant_action and quant_action.choices:
                        quant_action.choices.append("ascend")
    """,
}


def _synthetic() -> dict[str, object]:
    script = load_script()
    files = {path: textwrap.dedent(text) for path, text in SYNTHETIC.items()}
    table = script.extract_from_sources("v9.9.9", files)
    assert isinstance(table, dict)
    return table


def test_extractor_follows_sub_configs_kwargs_helpers_and_envs() -> None:
    table = _synthetic()
    keys = {k["path"]: k for k in table["keys"]}  # type: ignore[attr-defined]
    assert keys["sub_config"]["mapping"] is True and keys["sub_config"]["type"] == "dict"
    assert keys["sub_config.enabled"]["default"] is False and keys["sub_config.enabled"]["type"] == "bool"
    assert keys["sub_config.size"]["type"] == "int" and keys["sub_config.size"]["default"] == "4"
    assert keys["sub_config.enabled"]["source"] == "v9.9.9:vllm_ascend/ascend_config.py:9"
    # **kwargs expansion: the __init__ parameters are the keys, and kwargs.get() reads are followed
    assert keys["kw_config.alpha"]["default"] is True and keys["kw_config.alpha"]["type"] == "bool"
    assert keys["kw_config.beta"]["default"] == 3 and keys["kw_config.beta"]["type"] == "int"
    assert keys["kw_config.gamma"]["default"] == 0.5
    assert keys["strict_config.only"]["default"] == "x"
    # env fallbacks: an envs.* default, and a helper that returns its fallback argument
    assert keys["flag"]["env_fallback"] == "VLLM_ASCEND_FLAG" and keys["flag"]["type"] == "bool"
    assert keys["fallback_key"]["env_fallback"] == "VLLM_ASCEND_FB"
    assert keys["fallback_key"]["default_expr"] == "ascend_envs.VLLM_ASCEND_FB"
    assert keys["required_key"].get("required") is True
    assert "checked" in keys
    # dataclass-style known keys of a raise-on-unknown loop
    assert keys["raise_config.a"]["default"] == 1 and keys["raise_config.b"]["default"] is None
    assert "opaque_config" in keys


def test_extractor_unknown_key_policies() -> None:
    table = _synthetic()
    policies = {p: v["policy"] for p, v in table["unknown_keys"].items()}  # type: ignore[attr-defined]
    assert policies[""] == "ignored"
    assert policies["sub_config"] == "ignored"
    assert policies["kw_config"] == "ignored"  # extra keys land in **kwargs
    assert policies["strict_config"] == "error"  # no **kwargs: TypeError
    assert policies["copy_config"] == "kept"
    assert policies["raise_config"] == "error"
    assert policies["warn_config"] == "warned"
    detail = table["unknown_keys"]["raise_config"]  # type: ignore[index]
    assert "Config has no attribute" in detail["detail"]
    assert detail["source"].startswith("v9.9.9:vllm_ascend/ascend_config.py:")


def test_extractor_records_what_it_cannot_follow() -> None:
    table = _synthetic()
    what = " | ".join(u["what"] for u in table["unresolved"])  # type: ignore[attr-defined]
    assert "key computed at run time" in what
    assert "opaque_config" not in what  # never read inside: no mapping level, nothing to say
    files = {path: textwrap.dedent(text) for path, text in SYNTHETIC.items()}
    files["vllm_ascend/ascend_config.py"] += (
        "\n\ndef use(vllm_config):\n    external_sink(vllm_config.additional_config)\n"
    )
    table = load_script().extract_from_sources("v9.9.9", files)
    assert any("external_sink" in u["what"] for u in table["unresolved"])


def test_extractor_envs_and_parser_hook() -> None:
    table = _synthetic()
    env = {e["name"]: e for e in table["env"]}  # type: ignore[attr-defined]
    assert env["VLLM_ASCEND_FLAG"]["default"] == "0" and env["VLLM_ASCEND_FLAG"]["type"] == "bool"
    assert env["VLLM_ASCEND_SIZE"]["default"] == str(18 * 1024) and env["VLLM_ASCEND_SIZE"]["type"] == "int"
    assert env["VLLM_ASCEND_PATH"]["default"] is None and env["VLLM_ASCEND_PATH"]["type"] == "str"
    hook = table["quantization_cli_choice"]
    assert hook == {
        "value": True,
        "source": "v9.9.9:vllm_ascend/platform.py:8",
        "detail": "pre_register_and_update() appends 'ascend' to --quantization choices",
    }
    bare = load_script().extract_from_sources("v0.0.1", {"vllm_ascend/platform.py": "class P:\n    pass\n"})
    assert bare["quantization_cli_choice"]["value"] is False
    assert bare["env"] == [] and "envs.py" in bare["env_note"]


def test_script_imports_without_side_effects(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = sorted(p.name for p in (REPO / "engine" / "ascendctl_engine" / "data" / "ascend_keys").iterdir())
    script = load_script()
    assert callable(script.main) and callable(script.extract_from_sources)
    assert capsys.readouterr().out == ""
    assert sorted(p.name for p in (REPO / "engine" / "ascendctl_engine" / "data" / "ascend_keys").iterdir()) == before
    out = script.write_table({"tag": "v1.2.3", "keys": []}, tmp_path)
    assert out.read_text(encoding="utf-8") == '{\n "keys": [],\n "tag": "v1.2.3"\n}\n'


def test_sdist_tree_strips_the_top_folder_and_spells_pypi_sources(tmp_path: Path) -> None:
    script = load_script()
    sdist = tmp_path / "vllm_ascend-9.9.9.post1.tar.gz"
    members = {
        "vllm_ascend-9.9.9.post1/vllm_ascend/platform.py": SYNTHETIC["vllm_ascend/platform.py"],
        "vllm_ascend-9.9.9.post1/vllm_ascend/envs.py": SYNTHETIC["vllm_ascend/envs.py"],
        "vllm_ascend-9.9.9.post1/vllm_ascend/data.txt": "not python",
        "vllm_ascend-9.9.9.post1/setup.py": "print('not in the package')",
        "vllm_ascend-9.9.9.post1/vllm_ascend.egg-info/SOURCES.txt": "",
    }
    with tarfile.open(sdist, "w:gz") as tar:
        for name, text in members.items():
            (tmp_path / "member").write_text(textwrap.dedent(text), encoding="utf-8")
            tar.add(tmp_path / "member", arcname=name)
    tree = script.SdistTree(sdist, "v9.9.9.post1")
    files = tree.sources()
    assert sorted(files) == ["vllm_ascend/envs.py", "vllm_ascend/platform.py"]
    table = script.extract_from_sources(tree.tag, files, tree.src)
    assert table["tag"] == "v9.9.9.post1"
    hook = table["quantization_cli_choice"]
    assert hook["value"] is True
    assert hook["source"] == "v9.9.9.post1:PyPI:vllm_ascend-9.9.9.post1.tar.gz:vllm_ascend/platform.py:8"
    env = {e["name"]: e["source"] for e in table["env"]}
    assert env["VLLM_ASCEND_FLAG"] == "v9.9.9.post1:PyPI:vllm_ascend-9.9.9.post1.tar.gz:vllm_ascend/envs.py:5"
    # the git spelling is the default, so the same sources through GitTree's `src` give `TAG:path:line`
    plain = script.extract_from_sources("v9.9.9", files)
    assert plain["quantization_cli_choice"]["source"] == "v9.9.9:vllm_ascend/platform.py:8"
    assert script.GitTree(MIRROR, "v9.9.9").src("vllm_ascend/platform.py", 8) == "v9.9.9:vllm_ascend/platform.py:8"


@pytest.mark.skipif(not SDIST.is_file(), reason=f"no {SDIST_NAME} cached on this machine")
def test_checked_in_post_table_matches_a_fresh_extraction_from_the_sdist(tmp_path: Path) -> None:
    script = load_script()
    tree = script.SdistTree(SDIST, POST)
    path = script.write_table(script.extract_from_sources(tree.tag, tree.sources(), tree.src), tmp_path)
    checked_in = REPO / "engine" / "ascendctl_engine" / "data" / "ascend_keys" / f"{POST}.json"
    assert path.read_text(encoding="utf-8") == checked_in.read_text(encoding="utf-8")


@pytest.mark.skipif(not MIRROR.is_dir(), reason="no vllm-ascend git mirror on this machine")
def test_checked_in_tables_match_a_fresh_extraction(tmp_path: Path) -> None:
    script = load_script()
    for tag in ("v0.9.0rc1", "v0.23.0"):
        tree = script.GitTree(MIRROR, tag)
        fresh = script.extract_from_sources(tag, tree.sources(), tree.src)
        path = script.write_table(fresh, tmp_path)
        assert fresh == script.extract_from_sources(tag, script.tag_sources(MIRROR, tag))
        checked_in = REPO / "engine" / "ascendctl_engine" / "data" / "ascend_keys" / f"{tag}.json"
        assert path.read_text(encoding="utf-8") == checked_in.read_text(encoding="utf-8"), tag
