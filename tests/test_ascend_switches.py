"""engine.ascend: vllm-ascend feature switches as typed profile fields, spelled per release from the key tables.

The eras are re-derived here from `engine/ascendctl_engine/data/ascend_keys/` (the one owner of what a tag reads), so
a table that
moves a spelling fails these tests until the era registry says so too. Then: each switch on / off / unset on old
and new releases, the failure that names the first release, a v0.18.0-era profile planned for v0.25.1rc1, the
JSON Schema, the migration claims, `matrix --explain --feature`, the npu-only profile rule and the jemalloc host
rule.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any, get_args

import pytest

from ascendctl.check import CheckContext, host_findings
from ascendctl.core.errors import DocumentError
from ascendctl.core.yamlio import load_yaml_text
from ascendctl.facts.matrix import load_matrix
from ascendctl.facts.matrix.explainer import explain
from ascendctl.plan.planner import plan_profile
from ascendctl.schema.loader import load_profile, validate_profile_document
from ascendctl.schema.profile import Profile, profile_json_schema
from ascendctl_engine import typed_fields
from ascendctl_engine.adapters import EngineIntent, plan_commands
from ascendctl_engine.adapters.ascend_keys import key_table, key_tags, tags_defining_env, tags_reading
from ascendctl_engine.adapters.ascend_switches import (
    JEMALLOC_TOPIC,
    SWITCH_FIELDS,
    SWITCHES,
    Spelling,
    Switch,
    spelling_for,
    switch,
)
from ascendctl_engine.adapters.eras import TOPICS, era_for_release, in_range
from ascendctl_engine.adapters.intent import LoadedModel, intent_from_sections
from ascendctl_engine.host.facts import HostFacts
from ascendctl_engine.host.gather import gather_host_facts
from ascendctl_engine.host.probe import LocalHostProbe
from ascendctl_engine.sections.ascend import AscendSpec
from ascendctl_engine.versions import parse
from ascendctl_engine.vocab import ModelArch

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures" / "profiles"
MATRIX = load_matrix()
NPU_ROWS = [r for r in MATRIX.releases if r.backend == "npu"]
ROW = {r.version: r for r in NPU_ROWS}
JEMALLOC = "/usr/lib/aarch64-linux-gnu/libjemalloc.so.2"


# --------------------------------------------------------------------------------------------------------------
# the eras are what the key tables say


def _reads(tag: str, s: Spelling) -> tuple[bool, bool, str | None]:
    """(read, deprecated, source) of one spelling in one tag's table."""
    table = key_table(tag)
    if s.kind == "env":
        info = table.env(s.name)
        return info is not None, False, info.source if info else None
    k = table.key(s.name)
    return k is not None, bool(k and k.deprecated), k.source if k else None


def _preferred(sw: Switch, tag: str) -> Spelling | None:
    """What the tag's code prefers among the switch's spellings: a later spelling over an earlier one (the key over
    the variable it falls back to), one not marked deprecated over one that is."""
    read = [s for s in sw.spellings() if _reads(tag, s)[0]]
    live = [s for s in read if not _reads(tag, s)[1]]
    return (live or read or [None])[-1]


def _era_index(sw: Switch, tag: str) -> int:
    return next(i for i, e in enumerate(sw.eras) if in_range(e.spec, parse(tag)))


@pytest.mark.parametrize("sw", SWITCHES, ids=lambda s: s.field)
def test_each_era_spells_what_its_tags_read(sw: Switch) -> None:
    tags = key_tags()
    for tag in tags:
        index = _era_index(sw, tag)  # the ranges cover every tag (StopIteration otherwise)
        assert sum(in_range(e.spec, parse(tag)) for e in sw.eras) == 1, (sw.field, tag)
        assert sw.eras[index].spelling == _preferred(sw, tag), (sw.field, tag)
    for e in sw.eras:
        inside = [t for t in tags if in_range(e.spec, parse(t))]
        assert inside[0] == e.first, (sw.field, e.spec)
        # an open range reaches past the newest table the era was written against: a new tag needs no edit here
        assert e.last == inside[-1] if "<" in e.spec else e.last in inside, (sw.field, e.spec)
        if e.spelling is not None:  # `source=` cites the first and the last tag's read, as the tables give it
            cited = [c.strip() for c in e.source.split(" … ")]
            want = [_reads(e.first, e.spelling)[2], _reads(e.last, e.spelling)[2]]
            assert cited == list(dict.fromkeys(want)), (sw.field, e.spec)


@pytest.mark.parametrize("sw", SWITCHES, ids=lambda s: s.field)
def test_the_first_era_of_each_spelling_starts_where_the_tables_first_read_it(sw: Switch) -> None:
    for s in sw.spellings():
        readers = tags_defining_env(s.name) if s.kind == "env" else tags_reading(s.name)
        first_era = next(e for e in sw.eras if e.spelling == s)
        assert readers and readers[0] == first_era.first, s


def test_every_switch_is_a_topic_an_intent_field_and_a_profile_field() -> None:
    ascend_topics = [t for t in TOPICS if t.startswith("ascend.")]
    assert ascend_topics == [*(s.topic for s in SWITCHES), JEMALLOC_TOPIC]
    assert list(AscendSpec.model_fields) == [*SWITCH_FIELDS, "jemalloc"]
    # one spelling per concept end to end: the intent carries the profile's section itself
    assert intent("v0.23.0", mlapo=True).engine.ascend == AscendSpec(mlapo=True)


# --------------------------------------------------------------------------------------------------------------
# on / off / unset per release


def intent(release: str, **ascend: Any) -> EngineIntent:
    """A one-device a3 intent with these `engine.ascend` switches."""
    return engine_intent(release, {"ascend": ascend})


def engine_intent(release: str, engine: dict[str, Any]) -> EngineIntent:
    """A one-device a3 intent with this `engine` section."""
    row = ROW[release]
    document = {"model": {"source": "org/m"}, "target": {"backend": "npu", "hardware": "a3"}, "engine": engine}
    return intent_from_sections(document, vllm=row.vllm, vllm_ascend=row.vllm_ascend, cann=row.cann)


def planned(release: str, **ascend: Any) -> tuple[dict[str, str], dict[str, Any], tuple[str, ...], tuple[str, ...]]:
    """(env, --additional-config, unsupported, warnings) of a one-device plan with these switches."""
    result = plan_commands(intent(release, **ascend))
    command = result.commands[0]
    argv = list(command.argv)
    extra = json.loads(argv[argv.index("--additional-config") + 1]) if "--additional-config" in argv else {}
    return dict(command.env), extra, result.unsupported, result.warnings


def _lookup(config: dict[str, Any], path: str) -> Any:
    node: Any = config
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


# (switch, release) → how that release spells it on (and off): documented cases across the renames
SPELLED = [
    ("flashcomm1", "v0.9.1", "env", "VLLM_ASCEND_ENABLE_FLASHCOMM", "1", "0"),
    ("flashcomm1", "v0.13.0", "env", "VLLM_ASCEND_ENABLE_FLASHCOMM1", "1", "0"),
    ("flashcomm1", "v0.18.0", "env", "VLLM_ASCEND_ENABLE_FLASHCOMM1", "1", "0"),
    ("flashcomm1", "v0.23.0", "key", "enable_flashcomm1", True, False),
    ("flashcomm1", "v0.25.1rc1", "key", "enable_flashcomm1", True, False),
    ("mlapo", "v0.13.0", "env", "VLLM_ASCEND_ENABLE_MLAPO", "1", "0"),
    ("mlapo", "v0.25.1rc1", "key", "enable_mlapo", True, False),
    ("fused_mc2", "v0.18.0", "env", "VLLM_ASCEND_ENABLE_FUSED_MC2", "1", "0"),
    ("fused_mc2", "v0.23.0", "key", "enable_fused_mc2", 1, 0),  # the code casts it with int()
    ("balance_scheduling", "v0.13.0", "env", "VLLM_ASCEND_BALANCE_SCHEDULING", "1", "0"),
    ("balance_scheduling", "v0.23.0", "key", "enable_balance_scheduling", True, False),
    ("balance_scheduling", "v0.25.1rc1", "key", "scheduler_config.enable_balance_scheduling", True, False),
    ("recompute_scheduler", "v0.23.0", "key", "recompute_scheduler_enable", True, False),
    ("recompute_scheduler", "v0.25.1rc1", "key", "scheduler_config.recompute_scheduler_enable", True, False),
    ("cpu_binding", "v0.9.1", "key", "enable_cpu_binding", True, False),
    ("cpu_binding", "v0.25.1rc1", "key", "enable_cpu_binding", True, False),
    ("multistream_overlap_shared_expert", "v0.13.0", "key", "multistream_overlap_shared_expert", True, False),
    ("weight_prefetch", "v0.13.0", "key", "weight_prefetch_config.enabled", True, False),
    ("weight_prefetch", "v0.23.0", "key", "weight_prefetch_config.enabled", True, False),
    ("shared_expert_dp", "v0.11.0", "key", "enable_shared_expert_dp", True, False),
    ("dsa_cp", "v0.23.0", "key", "enable_dsa_cp", True, False),
    ("reduce_sample", "v0.25.1rc1", "key", "enable_reduce_sample", True, False),
    ("mc2_hierarchy_comm", "v0.18.0", "key", "enable_mc2_hierarchy_comm", True, False),
    ("dp_allreduce_on_npu", "v0.23.0", "key", "dp_allreduce_on_npu", True, False),
    ("prefetch_mlp", "v0.13.0", "env", "VLLM_ASCEND_ENABLE_PREFETCH_MLP", "1", "0"),
    ("topk_optimize", "v0.9.1", "env", "VLLM_ASCEND_ENABLE_TOPK_OPTIMIZE", "1", "0"),
    # the graph fusion passes of `ascend_compilation_config`
    ("fuse_norm_quant", "v0.12.0rc1", "key", "ascend_compilation_config.fuse_norm_quant", True, False),
    ("fuse_norm_quant", "v0.25.1rc1", "key", "ascend_compilation_config.fuse_norm_quant", True, False),
    ("fuse_qknorm_rope", "v0.13.0", "key", "ascend_compilation_config.fuse_qknorm_rope", True, False),
    ("fuse_allreduce_rms", "v0.14.0rc1", "key", "ascend_compilation_config.fuse_allreduce_rms", True, False),
    ("fuse_allreduce_rms", "v0.24.0rc1", "key", "ascend_compilation_config.fuse_allreduce_rms", True, False),
    ("fuse_muls_add", "v0.23.0", "key", "ascend_compilation_config.fuse_muls_add", True, False),
]


@pytest.mark.parametrize(("field", "release", "kind", "name", "on", "off"), SPELLED)
def test_on_off_unset(field: str, release: str, kind: str, name: str, on: Any, off: Any) -> None:
    env0, extra0, bad0, _ = planned(release)
    for value, want in ((True, on), (False, off)):
        env, extra, bad, _ = planned(release, **{field: value})
        assert bad == bad0 == (), (field, release, bad)
        got = env.get(name) if kind == "env" else _lookup(extra, name)
        assert got == want and type(got) is type(want), (field, release, value, got)
    # unset: the release's own default, nothing spelled by any era of the switch
    sw = switch(field)
    assert sw is not None
    for s in sw.spellings():
        assert (env0.get(s.name) if s.kind == "env" else _lookup(extra0, s.name)) is None


# (switch, release) → a release without it, and the release the error names
MISSING = [
    ("flashcomm1", "v0.8.5rc1", "the first release that reads one is v0.9.1rc2"),
    ("flashcomm1", "v0.10.0rc1", "read by v0.9.1rc2 … v0.9.1, v0.10.2rc1 and later"),
    ("mlapo", "v0.10.2rc1", "the first release that reads one is v0.11.0rc0"),
    ("fused_mc2", "v0.11.0", "the first release that reads one is v0.13.0rc1"),
    ("balance_scheduling", "v0.11.0", "the first release that reads one is v0.13.0rc1"),
    ("dsa_cp", "v0.18.0", "the first release that reads one is v0.20.2rc1"),
    ("weight_prefetch", "v0.25.1rc1", 'last as `--additional-config {"weight_prefetch_config": {"enabled": true}}`'),
    ("prefetch_mlp", "v0.23.0", "last as `VLLM_ASCEND_ENABLE_PREFETCH_MLP=1` in v0.17.0rc1"),
    ("topk_optimize", "v0.25.1rc1", "last as `VLLM_ASCEND_ENABLE_TOPK_OPTIMIZE=1` in v0.9.1"),
    ("dp_allreduce_on_npu", "v0.25.1rc1", 'last as `--additional-config {"dp_allreduce_on_npu": true}` in v0.24.0rc1'),
    ("fuse_norm_quant", "v0.11.0", "the first release that reads one is v0.12.0rc1"),
    ("fuse_qknorm_rope", "v0.12.0rc1", "the first release that reads one is v0.13.0rc1"),
    ("fuse_muls_add", "v0.15.0rc1", "the first release that reads one is v0.16.0rc1"),
    ("fuse_allreduce_rms", "v0.25.1rc1", "no longer reads a matmul all-reduce + RMSNorm fusion pass switch"),
]


@pytest.mark.parametrize(("field", "release", "names"), MISSING)
def test_a_missing_switch_fails_naming_the_releases_that_have_it(field: str, release: str, names: str) -> None:
    env, extra, bad, _ = planned(release, **{field: True})
    assert len(bad) == 1 and bad[0].startswith(f"engine.ascend.{field}: vllm-ascend {release} "), bad
    assert names in bad[0], bad[0]
    sw = switch(field)
    assert sw is not None
    assert not any(s.name in env or _lookup(extra, s.name) is not None for s in sw.spellings())
    # off is what such a release does anyway: nothing to plan, no failure
    assert planned(release, **{field: False})[2] == ()


def _why(release: str, **ascend: Any) -> dict[str, str]:
    return plan_commands(intent(release, **ascend)).provenance


def test_tutorial_spellings_the_code_overrides_are_said_in_why_not_warned() -> None:
    """The typed switch is the recommended spelling: how the tutorials spell it instead is `--why` material, never a
    warning; a spelling the release does not read at all still fails."""
    _env, extra, _bad, warnings = planned("v0.23.0", weight_prefetch=True)
    assert extra == {"weight_prefetch_config": {"enabled": True}} and warnings == ()
    why = _why("v0.23.0", weight_prefetch=True)["--additional-config.weight_prefetch_config.enabled"]
    assert "weight_prefetch_config.enable`" in why and "never reads" in why
    _env, _extra, bad, _w = planned("v0.23.0", topk_optimize=True)
    assert "tutorials still export `VLLM_ASCEND_ENABLE_TOPK_OPTIMIZE=1`" in bad[0]
    assert planned("v0.25.1rc1", flashcomm1=True)[3] == ()
    assert (
        "the tutorials' `VLLM_ASCEND_ENABLE_FLASHCOMM1=1`"
        in _why("v0.25.1rc1", flashcomm1=True)["--additional-config.enable_flashcomm1"]
    )
    assert planned("v0.18.0", flashcomm1=True)[3] == ()  # there the variable is the code's own spelling


def test_a_graph_fusion_pass_in_an_eager_engine_is_warned() -> None:
    warned = [w for w in planned("v0.23.0", fuse_qknorm_rope=False)[3] if "graph fusion pass" in w]
    assert warned == []  # off, or with graphs: nothing to say
    intent = intent_from_sections(
        {"model": {"source": "org/model"}, "target": {"backend": "npu", "hardware": "a2"},
         "engine": {"graph": {"mode": "eager"}, "ascend": {"fuse_norm_quant": True}}},
        vllm="0.23.0", vllm_ascend="v0.23.0",
    )  # fmt: skip
    result = plan_commands(intent)
    assert any(w.startswith("engine.ascend.fuse_norm_quant: a graph fusion pass runs when vLLM compiles")
               for w in result.warnings)  # fmt: skip


def test_the_w4a4_tutorial_turns_norm_quant_fusion_off_by_its_field() -> None:
    p = load_profile(FIXTURES / "qwen3-32b-w4a4-a2.yaml")
    assert p.engine.ascend.fuse_norm_quant is False and not p.engine.additional_config
    argv = plan_profile(p).commands[0].argv
    config = json.loads(argv[argv.index("--additional-config") + 1])
    assert config == {"ascend_compilation_config": {"fuse_norm_quant": False}}


def test_a_switch_without_what_it_builds_on_is_warned() -> None:
    assert any("engine.ascend.dsa_cp: DSA context parallelism builds on FlashComm1" in w
               for w in planned("v0.23.0", dsa_cp=True)[3])  # fmt: skip
    assert not any("builds on FlashComm1" in w for w in planned("v0.23.0", dsa_cp=True, flashcomm1=True)[3])
    assert any(
        "without engine.parallel.expert it has no effect" in w for w in planned("v0.23.0", shared_expert_dp=True)[3]
    )
    with_ep = engine_intent(
        "v0.23.0", {"parallel": {"tensor": 2, "expert": True}, "ascend": {"shared_expert_dp": True}}
    )
    assert not any("without engine.parallel.expert" in w for w in plan_commands(with_ep).warnings)


@pytest.mark.parametrize("row", NPU_ROWS, ids=lambda r: r.version)
def test_every_release_plans_every_switch_on_and_off_or_says_why(row: Any) -> None:
    """All switches together, on and off: whatever is planned is accepted by the release (the builder's key-table
    and variable checks find nothing), and an `on` the release cannot do is one failure per switch."""
    for value in (True, False):
        result = plan_commands(intent(row.version, **dict.fromkeys(SWITCH_FIELDS, value)))
        lacking = [sw for sw in SWITCHES if spelling_for(sw, str(row.vllm_ascend))[0].status != "read"]
        if value:
            assert len(result.unsupported) == len(lacking), (row.version, result.unsupported)
            assert all(u.startswith("engine.ascend.") for u in result.unsupported)
        else:
            assert result.unsupported == (), (row.version, result.unsupported)


# --------------------------------------------------------------------------------------------------------------
# profiles


HEAD = """apiVersion: ascendctl/v1
kind: Profile
metadata:
  name: switches
model:
  source: vllm-ascend/DeepSeek-R1-W8A8
  quantization: w8a8
  trust_remote_code: true
target:
  backend: npu
  hardware: a3
  devices_per_node: 16
"""
V018_ERA = (
    HEAD
    + """release: v0.18.0
engine:
  parallel: {tensor: 4, data: 4, expert: true}
  ascend:
    flashcomm1: true
    mlapo: true
    fused_mc2: true
    balance_scheduling: true
    cpu_binding: false
"""
)


def _profile(text: str, tmp_path: Path) -> Profile:
    path = tmp_path / "p.yaml"
    path.write_text(text, encoding="utf-8")
    return load_profile(path)


def test_a_v0_18_era_profile_planned_for_v0_25_1rc1_shows_the_renamed_spellings(tmp_path: Path) -> None:
    profile = _profile(V018_ERA, tmp_path)
    old = plan_profile(profile).commands[0]
    assert {k: v for k, v in old.env.items() if k.startswith("VLLM_ASCEND_")} == {
        "VLLM_ASCEND_ENABLE_FLASHCOMM1": "1",
        "VLLM_ASCEND_ENABLE_MLAPO": "1",
        "VLLM_ASCEND_ENABLE_FUSED_MC2": "1",
        "VLLM_ASCEND_BALANCE_SCHEDULING": "1",
    }
    argv = list(old.argv)
    assert json.loads(argv[argv.index("--additional-config") + 1]) == {"enable_cpu_binding": False}

    new_plan = plan_profile(profile, release="v0.25.1rc1")
    new = new_plan.commands[0]
    assert not [k for k in new.env if k.startswith("VLLM_ASCEND_")]
    argv = list(new.argv)
    assert json.loads(argv[argv.index("--additional-config") + 1]) == {
        "enable_flashcomm1": True,
        "enable_mlapo": True,
        "enable_fused_mc2": 1,
        "scheduler_config": {"enable_balance_scheduling": True},
        "enable_cpu_binding": False,
    }
    # the provenance names the field and the tag:path:line of the spelling
    why = new_plan.provenance["--additional-config.scheduler_config.enable_balance_scheduling"]
    assert why.startswith("user: engine.ascend.balance_scheduling") and "ascend_config.py:871" in why


def test_the_plan_warns_naming_the_first_release(tmp_path: Path) -> None:
    # a switch the release does not read is ignored by its engine: the plan warns (the refusal policy), naming the
    # first release that reads it, and plans nothing for it
    profile = _profile(HEAD + "release: v0.11.0\nengine:\n  ascend:\n    balance_scheduling: true\n", tmp_path)
    plan = plan_profile(profile)
    assert not [f for f in plan.blocking if f.id.startswith("plan.refused.ascend")]
    [warned] = [f for f in plan.deployment.findings if f.id == "plan.refused.ascend-balance-scheduling"]
    assert warned.status == "warn" and warned.clause is None
    assert "engine.ascend.balance_scheduling" in warned.message and "v0.13.0rc1" in warned.message
    assert "VLLM_ASCEND_BALANCE_SCHEDULING" not in plan.commands[0].env


def test_jemalloc_is_preloaded_and_checked_for_shape(tmp_path: Path) -> None:
    profile = _profile(HEAD + f"release: v0.23.0\nengine:\n  ascend:\n    jemalloc: {JEMALLOC}\n", tmp_path)
    plan = plan_profile(profile)
    assert plan.commands[0].env["LD_PRELOAD"] == JEMALLOC
    assert plan.serving.env_sources[0]["LD_PRELOAD"].startswith("user: engine.ascend.jemalloc")
    for bad in ("libjemalloc.so.2", "/a.so:/b.so", "/a b.so"):
        with pytest.raises(DocumentError):
            validate_profile_document(load_yaml_text(HEAD + f"engine:\n  ascend:\n    jemalloc: '{bad}'\n", "p.yaml"))


def test_runtime_env_still_wins(tmp_path: Path) -> None:
    text = V018_ERA + "runtime:\n  env:\n    VLLM_ASCEND_ENABLE_MLAPO: '0'\n"
    command = plan_profile(_profile(text, tmp_path)).command_for(0)
    assert command.env["VLLM_ASCEND_ENABLE_MLAPO"] == "0"


def test_switches_are_npu_only() -> None:
    text = HEAD.replace("backend: npu\n  hardware: a3\n", "backend: cpu\n") + "engine:\n  ascend:\n    mlapo: true\n"
    with pytest.raises(DocumentError) as exc:
        validate_profile_document(load_yaml_text(text, "p.yaml"))
    issue = exc.value.issues[0]
    assert "engine.ascend.mlapo is a vllm-ascend setting" in issue.message
    assert issue.line == text.count("\n")  # the `mlapo:` line


def test_the_schema_documents_every_field() -> None:
    schema = profile_json_schema()
    spec = schema["$defs"]["AscendSpec"]
    assert set(spec["properties"]) == set(AscendSpec.model_fields)
    for name, prop in spec["properties"].items():
        assert len(prop.get("description", "")) > 40, name
    engine = schema["$defs"]["EngineSpec"]["properties"]["ascend"]
    assert engine["description"]


def test_the_schema_command_prints_it(capsys: pytest.CaptureFixture[str]) -> None:
    from ascendctl.cli import main

    assert main(["schema"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert "flashcomm1" in printed["$defs"]["AscendSpec"]["properties"]


# --------------------------------------------------------------------------------------------------------------
# migration help: every spelling of every era is claimed by its field


def test_every_spelling_is_claimed() -> None:
    for sw in SWITCHES:
        for s in sw.spellings():
            found = typed_fields.owner("env" if s.kind == "env" else "key", s.name)
            assert found is not None and found.field == sw.path, (sw.field, s)
    assert typed_fields.owner("env", "VLLM_ASCEND_ENABLE_FLASHCOMM").field == "engine.ascend.flashcomm1"  # type: ignore[union-attr]
    assert typed_fields.owner("key", "weight_prefetch_config.enable").field == "engine.ascend.weight_prefetch"  # type: ignore[union-attr]
    assert typed_fields.owner("env", "LD_PRELOAD").field == "engine.ascend.jemalloc"  # type: ignore[union-attr]
    assert typed_fields.owner("key", "weight_prefetch_config.prefetch_ratio") is None  # not a switch


def test_the_switch_claims_are_exactly_the_switch_spellings() -> None:
    # The claims table is data (validate reads it without the adapters): it names no spelling no era spells,
    # besides the tutorials' prefetch misspelling and jemalloc's LD_PRELOAD.
    spelled = {(sw.path, s.kind, s.name) for sw in SWITCHES for s in sw.spellings()}
    spelled |= {
        ("engine.ascend.weight_prefetch", "key", "weight_prefetch_config.enable"),
        ("engine.ascend.jemalloc", "env", "LD_PRELOAD"),
    }
    claimed = {(c.field, c.kind, c.spelling) for c in typed_fields.claims() if c.field.startswith("engine.ascend.")}
    assert claimed == spelled


def test_the_switch_tutorials_use_no_escape_hatch_for_a_switch() -> None:
    from ascendctl.schema.profile_rules import _key_paths

    profiles = sorted(FIXTURES.glob("tut-ascend-*.yaml"))
    assert len(profiles) >= 4
    for path in profiles:
        p = load_profile(path)
        e = p.engine
        assert not e.extra_args and not e.additional_config, path
        assert any(getattr(e.ascend, f) is not None for f in SWITCH_FIELDS), path
        claimed = [n for n in p.runtime.env if typed_fields.owner("env", n) is not None]
        claimed += [".".join(k) for k in _key_paths(e.additional_config) if typed_fields.owner("key", ".".join(k))]
        assert claimed == [], (path, claimed)


# --------------------------------------------------------------------------------------------------------------
# matrix --explain --feature SWITCH


def test_explain_names_the_spelling_and_every_era() -> None:
    v = explain(MATRIX, model="DeepSeek-R1", hardware="a3", release="v0.25.1rc1", features=["balance-scheduling"])
    assert v.supported
    lines = [r.message for r in v.reasons]
    assert any("reads `--additional-config {\"scheduler_config\": {\"enable_balance_scheduling\": true}}`" in m
               for m in lines)  # fmt: skip
    per_era = next(m for m in lines if "per vllm-ascend release" in m)
    assert "v0.13.0rc1 … v0.19.1rc1: VLLM_ASCEND_BALANCE_SCHEDULING=1" in per_era
    assert 'v0.20.2rc1 … v0.24.0rc1: --additional-config {"enable_balance_scheduling": true}' in per_era


def test_explain_warns_of_a_release_without_the_switch() -> None:
    v = explain(MATRIX, model="DeepSeek-R1", hardware="a3", release="v0.13.0", features=["engine.ascend.dsa_cp"])
    assert v.supported  # the release ignores the switch: a warning, never a refusal
    assert any(r.level == "warning" and "first release that reads one is v0.20.2rc1" in r.message for r in v.reasons)
    assert "use release v0.20.2rc1 or newer for engine.ascend.dsa_cp" in v.suggestions


def test_explain_takes_matrix_features_and_switches_alike() -> None:
    v = explain(MATRIX, model="DeepSeek-R1", hardware="a3", release="v0.23.0", features=["mlapo", "eplb"])
    assert any("engine.ascend.mlapo: v0.23.0 reads" in r.message for r in v.reasons)
    from ascendctl.core.errors import UserInputError

    with pytest.raises(UserInputError, match="did you mean flashcomm1"):
        explain(MATRIX, model="DeepSeek-R1", hardware="a3", release="v0.23.0", features=["flashcom"])


def test_explain_and_plan_agree() -> None:
    for row in NPU_ROWS:
        for sw in SWITCHES:
            chosen, text = spelling_for(sw, str(row.vllm_ascend))
            assert chosen.era is era_for_release(sw.topic, "npu", row.vllm, row.vllm_ascend)
            env, extra, bad, _ = planned(row.version, **{sw.field: True})
            if chosen.status == "read":
                s = sw.eras[_era_index(sw, str(row.vllm_ascend))].spelling
                assert s is not None and text == s.shown()
                assert (env.get(s.name) if s.kind == "env" else _lookup(extra, s.name)) == s.value(True)
            else:
                assert bad and text in bad[0], (row.version, sw.field)


def test_the_intent_doc_lists_every_switch() -> None:
    doc = (REPO / "docs" / "intent-to-flags.md").read_text(encoding="utf-8")
    for sw in SWITCHES:
        assert f"| engine.ascend.{sw.field} true |" in doc
        assert f"### {sw.topic}" in doc
    assert re.search(r"\| engine\.ascend\.jemalloc \S+ \| `env LD_PRELOAD=", doc)


# --------------------------------------------------------------------------------------------------------------
# the jemalloc host rule


def _check(facts: HostFacts, profile: Profile | None) -> Any:
    ctx = CheckContext(facts, MATRIX, profile, None, "profile")
    return {f.id: f for f in host_findings(ctx)}["host.ascend.jemalloc"]


def test_host_rule_reads_the_probed_facts(tmp_path: Path) -> None:
    profile = _profile(HEAD + f"release: v0.23.0\nengine:\n  ascend:\n    jemalloc: {JEMALLOC}\n", tmp_path)
    npu = HostFacts(backend="npu", family="a3")
    assert _check(npu, None).status == "skip"
    assert _check(npu, _profile(HEAD + "release: v0.23.0\n", tmp_path)).status == "skip"
    undecided = _check(npu, profile)
    assert undecided.status == "skip" and undecided.undecided
    assert _check(dataclasses.replace(npu, files={JEMALLOC: True}), profile).status == "pass"
    missing = _check(dataclasses.replace(npu, files={JEMALLOC: False}), profile)
    assert missing.status == "warn" and "does not exist" in missing.message and missing.fix


def test_the_probe_looks_at_the_profile_paths_under_its_root(tmp_path: Path) -> None:
    library = tmp_path / JEMALLOC.lstrip("/")
    library.parent.mkdir(parents=True)
    library.write_bytes(b"\x7fELF")
    facts = gather_host_facts(LocalHostProbe(tmp_path, {}), root=str(tmp_path), files=[JEMALLOC, "/no/such.so"])
    assert facts.files == {JEMALLOC: True, "/no/such.so": False}
    assert HostFacts.from_dict(facts.to_dict()).files == facts.files  # `check --json` → `--facts` round trip


def test_check_probes_the_jemalloc_path(tmp_path: Path) -> None:
    from ascendctl.check.service import run_check

    path = tmp_path / "p.yaml"
    path.write_text(HEAD + f"release: v0.23.0\nengine:\n  ascend:\n    jemalloc: {JEMALLOC}\n", encoding="utf-8")
    root = tmp_path / "root"
    root.mkdir()
    report = run_check(path, root=str(root), environ={}, engine_python="/nonexistent/python")
    finding = next(f for f in report.results if f.id == "host.ascend.jemalloc")
    assert finding.status == "warn" and f"does not exist under {root}" in finding.message
    (root / JEMALLOC.lstrip("/")).parent.mkdir(parents=True)
    (root / JEMALLOC.lstrip("/")).write_bytes(b"\x7fELF")
    report = run_check(path, root=str(root), environ={}, engine_python="/nonexistent/python")
    assert next(f for f in report.results if f.id == "host.ascend.jemalloc").status == "pass"


def _warnings_for(release: str, arch: str, **ascend: Any) -> tuple[str, ...]:
    loaded = LoadedModel("org/m", arch=arch)  # type: ignore[arg-type]
    return plan_commands(dataclasses.replace(intent(release, **ascend), loaded=loaded)).warnings


@pytest.mark.parametrize("field", [sw.field for sw in SWITCHES if sw.models])
def test_a_switch_of_other_models_layers_is_warned_and_not_on_its_own(field: str) -> None:
    """A switch only MoE / MLA layers read does nothing on another model: the plan says so, with the source."""
    sw = next(s for s in SWITCHES if s.field == field)
    release = next(r for r in ("v0.23.0", "v0.21.0rc1") if spelling_for(sw, ROW[r].vllm_ascend)[0].status == "read")
    for arch in get_args(ModelArch):
        said = [w for w in _warnings_for(release, arch, **{field: True}) if "model layers only" in w]
        if arch in sw.models:
            assert not said, (field, arch)
        else:
            assert said and sw.models_source.split(",")[0] in said[0] and f"this model is {arch}" in said[0]
