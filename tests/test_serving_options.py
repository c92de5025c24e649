"""The `serving` section: typed serving options checked at the profile boundary, spelled per era, every flag and
choice checked against the target vLLM's real-parser snapshot (failures name the first vLLM that has it), the
typed-field claims, and the migration rule `profile.migration.typed-field` in `validate` and `plan`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ascendctl.cli import app
from ascendctl.core.errors import DocumentError
from ascendctl.core.yamlio import load_yaml_text
from ascendctl.facts.matrix import hardware_by_id, load_matrix
from ascendctl.facts.matrix.launch import hardware_traits
from ascendctl.plan.planner import plan_profile
from ascendctl.schema.loader import load_profile_with_warnings, validate_profile_document
from ascendctl.schema.profile import Profile
from ascendctl.schema.profile_rules import profile_findings
from ascendctl_engine import typed_fields
from ascendctl_engine.adapters import EngineIntent, HardwareTraits, plan_commands
from ascendctl_engine.adapters.acceptance import acceptance_for
from ascendctl_engine.adapters.intent import intent_from_sections
from ascendctl_engine.adapters.parser_snapshot import snapshot_for, snapshot_versions, value_class

HEAD = "apiVersion: ascendctl/v1\nkind: Profile\nmetadata:\n  name: serve\nmodel:\n  source: org/model\n"
NPU = "target:\n  backend: npu\n  hardware: a2\n  devices_per_node: 4\nrelease: v0.23.0\n"
MATRIX = load_matrix()


def profile(body: str) -> Profile:
    return validate_profile_document(load_yaml_text(HEAD + NPU + body, "s.yaml"))


def refused(body: str) -> list[str]:
    with pytest.raises(DocumentError) as exc:
        profile(body)
    return [i.render() for i in exc.value.issues]


def intent(release: str, **sections: Any) -> EngineIntent:
    """A plain one-device a2 intent on this release with these profile sections (`serving={...}`, ...)."""
    row = next(r for r in MATRIX.releases if r.backend == "npu" and r.version == release)
    document = {"model": {"source": "org/model"}, "target": {"backend": "npu", "hardware": "a2"}, **sections}
    return intent_from_sections(
        document,
        traits=hardware_traits(hardware_by_id(MATRIX, "a2")),
        vllm=row.vllm,
        vllm_ascend=row.vllm_ascend,
    )


def planned(release: str, **serving: Any) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(argv, broken constraints) of a plain intent with these serving options."""
    result = plan_commands(intent(release, serving=serving))
    return result.commands[0].argv, result.unsupported


def adapters(**paths: str) -> list[dict[str, str]]:
    """`serving.lora.adapters` as a profile writes them: name → path, in this order."""
    return [{"name": name, "path": path} for name, path in paths.items()]


def after(argv: tuple[str, ...], flag: str) -> str:
    return argv[argv.index(flag) + 1]


# ------------------------------------------------------------------------------------------- boundary


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ("serving:\n  chat_template: '{{ messages }}'\n", "inline templates are not accepted"),
        ('serving:\n  chat_template: "a\\nb.jinja"\n', "must be one line of text"),
        ("serving:\n  chat_template: -t.jinja\n", "must not start with `-`"),
        ("serving:\n  tool_call_parser: 'hermes --x'\n", "serving.tool_call_parser"),
        ("serving:\n  reasoning_parser: ''\n", "serving.reasoning_parser"),
        ("serving:\n  limit_mm_per_prompt: {Image: 1}\n", "serving.limit_mm_per_prompt"),
        ("serving:\n  limit_mm_per_prompt: {image: -1}\n", "serving.limit_mm_per_prompt.image"),
        ("serving:\n  mm_processor_cache_gb: -1\n", "serving.mm_processor_cache_gb"),
        ("serving:\n  mm_processor_cache_gb: .nan\n", "serving.mm_processor_cache_gb"),
        (
            "serving:\n  lora: {adapters: [{name: 'a b', path: /x}]}\n",
            "serving.lora.adapters[0].name: must be an identifier",
        ),
        (
            "serving:\n  lora: {adapters: [{name: a=b, path: /x}]}\n",
            "serving.lora.adapters[0].name: must be an identifier",
        ),
        ("serving:\n  lora: {adapters: [{name: a, path: -x}]}\n", "must not start with `-`"),
        ("serving:\n  lora: {adapters: [{name: a, path: /x, base_model_name: ''}]}\n", "base_model_name"),
        ("serving:\n  lora: {adapters: [{name: a, path: /x}, {name: a, path: /y}]}\n", "given twice"),
        ("serving:\n  lora: {max_rank: 0}\n", "serving.lora.max_rank"),
        ("serving:\n  structured_outputs_backend: regex\n", "serving.structured_outputs_backend"),
        ("serving:\n  prefill_context_parallel: 0\n", "serving.prefill_context_parallel"),
        ("serving:\n  auto_tool_choice: true\n", "auto_tool_choice needs tool_call_parser"),
        ("engine:\n  parallel: {tensor: 4}\nserving:\n  decode_context_parallel: 3\n", "does not divide"),
        ("engine:\n  parallel: {tensor: 4}\nserving:\n  prefill_context_parallel: 2\n", "4×1×2×1 = 8 ranks"),
        ("serving:\n  tool_parser: hermes\n", "did you mean 'tool_call_parser'"),
    ],
)
def test_the_boundary_refuses(body: str, needle: str) -> None:
    assert any(needle in line for line in refused(body)), refused(body)


def test_a_full_serving_section_is_valid_and_described_in_the_schema() -> None:
    p = profile(
        "engine:\n  parallel: {tensor: 2}\nserving:\n  tool_call_parser: hermes\n  auto_tool_choice: true\n"
        "  reasoning_parser: qwen3\n  chat_template: /srv/t.jinja\n  limit_mm_per_prompt: {image: 1, video: 0}\n"
        "  mm_processor_cache_gb: 0\n  lora: {adapters: [{name: sql-lora, path: /a/sql}], max_rank: 64}\n"
        "  prefill_context_parallel: 2\n  decode_context_parallel: 2\n  structured_outputs_backend: xgrammar\n"
    )
    assert p.serving.lora is not None and p.serving.lora.adapters[0].name == "sql-lora"
    assert [f.id for f in profile_findings(p) if f.status not in ("pass", "skip")] == []
    schema = Profile.model_json_schema()
    assert {"ServingSpec", "LoraSpec", "LoraAdapter"} <= set(schema["$defs"])
    for name in ("ServingSpec", "LoraSpec", "LoraAdapter"):
        props = schema["$defs"][name]["properties"]
        assert all(p.get("description") for p in props.values()), name


# -------------------------------------------------------------------------------------- spelling per era


def test_everything_on_a_recent_release() -> None:
    argv, broken = planned(
        "v0.23.0",
        tool_call_parser="hermes",
        auto_tool_choice=True,
        reasoning_parser="qwen3",
        chat_template="/srv/t.jinja",
        limit_mm_per_prompt={"image": 1, "video": 0},
        mm_processor_cache_gb=0,
        lora={"adapters": adapters(sql="/a/sql", doc="/a/doc"), "max_rank": 64, "max_loras": 2},
        prefill_context_parallel=2,
        decode_context_parallel=2,
        structured_outputs_backend="xgrammar",
    )
    assert broken == ()
    assert after(argv, "--tool-call-parser") == "hermes" and "--enable-auto-tool-choice" in argv
    assert after(argv, "--reasoning-parser") == "qwen3" and "--enable-reasoning" not in argv
    assert after(argv, "--chat-template") == "/srv/t.jinja"
    assert json.loads(after(argv, "--limit-mm-per-prompt")) == {"image": 1, "video": 0}
    assert after(argv, "--mm-processor-cache-gb") == "0"
    i = argv.index("--lora-modules")
    assert argv[i + 1 : i + 3] == ("sql=/a/sql", "doc=/a/doc") and "--enable-lora" in argv
    assert (after(argv, "--max-lora-rank"), after(argv, "--max-loras")) == ("64", "2")
    assert after(argv, "--prefill-context-parallel-size") == after(argv, "--decode-context-parallel-size") == "2"
    assert json.loads(after(argv, "--structured-outputs-config")) == {"backend": "xgrammar"}
    # the whole argv replays cleanly through vLLM 0.23.0's parser snapshot
    assert acceptance_for("npu", "0.23.0", "v0.23.0").argv_problems(argv) == []


LORA_JSON = '{"name":"sql","path":"/a/sql","base_model_name":"org/base"}'


def test_lora_adapters_name_path_cannot_say_are_compact_json_items() -> None:
    # every pinned vLLM's LoRAParserAction reads `name=path` without `,`, any other item as a LoRAModulePath JSON
    lora = {
        "adapters": [
            {"name": "sql", "path": "/a/sql", "base_model_name": "org/base"},
            {"name": "odd", "path": "/a/x=1,2"},
            {"name": "doc", "path": "/a/doc"},
        ]
    }
    for release in ("v0.7.3", "v0.11.0", "v0.21.0rc1", "v0.25.1rc1"):
        argv, broken = planned(release, lora=lora)
        assert broken == (), (release, broken)
        i = argv.index("--lora-modules")
        assert argv[i + 1 : i + 4] == (LORA_JSON, '{"name":"odd","path":"/a/x=1,2"}', "doc=/a/doc"), release


def test_extra_args_lora_json_items_replay_with_the_fields_of_the_release() -> None:
    item_3d = '{"name":"moe","path":"/a/moe","is_3d_lora_weight":true}'
    extra = ["--enable-lora", "--lora-modules", LORA_JSON, item_3d]
    new = plan_commands(intent("v0.22.1rc1", engine={"extra_args": extra}))  # LoRAModulePath gains the key
    assert new.unsupported == (), new.unsupported
    assert new.eras["lora-modules"].startswith("adds is_3d_lora_weight")
    old = plan_commands(intent("v0.21.0rc1", engine={"extra_args": extra}))
    (refusal,) = old.refusals
    assert refusal.fatal and refusal.kind == "parser"
    assert "engine.extra_args:" in refusal.message and "item has is_3d_lora_weight" in refusal.message
    assert "0.21.0:vllm/entrypoints/openai/models/protocol.py" in refusal.message
    lacking = plan_commands(intent("v0.25.1rc1", engine={"extra_args": ["--lora-modules", '{"name":"a","x":1}']}))
    (message,) = lacking.unsupported
    assert "item lacks path and has x" in message


def test_the_replay_judges_lora_json_items_only_with_the_eras_schema() -> None:
    from ascendctl_engine.adapters.eras import era_for_release

    era = era_for_release("lora-modules", "npu", "0.25.1", "v0.25.1rc1")
    assert era is not None
    snapshot = snapshot_for("0.25.1")
    argv = ["--lora-modules", LORA_JSON, "doc=/a/doc"]
    assert snapshot.check_argv(argv, items={"--lora-modules": era.traits["item"]}) == []
    # the snapshot's own sample of a JSON value was `{}`, which LoRAModulePath refuses: alone it cannot tell
    assert [p.kind for p in snapshot.check_argv(argv)] == ["bad-value"]
    (bad,) = snapshot.check_argv(["--lora-modules", "{nope"], items={"--lora-modules": era.traits["item"]})
    assert bad.kind == "bad-json"


def test_reasoning_needs_its_switch_before_vllm_0_9() -> None:
    argv, broken = planned("v0.8.5rc1", reasoning_parser="deepseek_r1")
    assert broken == () and "--enable-reasoning" in argv and after(argv, "--reasoning-parser") == "deepseek_r1"
    argv, broken = planned("v0.9.1", reasoning_parser="deepseek_r1")
    assert broken == () and "--enable-reasoning" not in argv


def test_a_parser_name_outside_the_snapshots_choices_names_the_first_vllm_that_takes_it() -> None:
    _argv, broken = planned("v0.10.0rc1", tool_call_parser="hy_v3")
    [message] = broken
    assert message.startswith("serving.tool_call_parser: vLLM 0.10.0 takes `--tool-call-parser` from deepseek_v3")
    assert (
        "from vLLM 0.10.1.1 the flag takes any name (engine/ascendctl_engine/data/parsers/vllm-0.10.1.1.json)"
        in message
    )
    _argv, broken = planned("v0.11.0", reasoning_parser="hy_v3")
    assert "from vLLM 0.12.0 the flag takes any name" in broken[0]
    argv, broken = planned("v0.23.0", tool_call_parser="hy_v3", reasoning_parser="hy_v3")
    assert broken == () and after(argv, "--tool-call-parser") == "hy_v3"


def test_multimodal_limits_and_cache_per_era() -> None:
    argv, broken = planned("v0.7.3", limit_mm_per_prompt={"image": 2, "video": 0}, mm_processor_cache_gb=0)
    assert broken == ()
    assert after(argv, "--limit-mm-per-prompt") == "image=2,video=0" and "--disable-mm-preprocessor-cache" in argv
    argv, broken = planned("v0.9.1", limit_mm_per_prompt={"image": 2}, mm_processor_cache_gb=0)
    assert broken == () and json.loads(after(argv, "--limit-mm-per-prompt")) == {"image": 2}
    assert "--disable-mm-preprocessor-cache" in argv and "--mm-processor-cache-gb" not in argv
    _argv, broken = planned("v0.9.1", mm_processor_cache_gb=4)
    assert "can only turn the multimodal preprocessor cache off" in broken[0]
    assert "first in vLLM 0.10.1.1 (engine/ascendctl_engine/data/parsers/vllm-0.10.1.1.json)" in broken[0]
    # vLLM 0.10.1.1 reads whole GiB only (an int type): a fraction names the first release that takes one
    _argv, broken = planned("v0.10.1rc1", mm_processor_cache_gb=2.5)
    assert "does not take '2.5'" in broken[0] and "the first vLLM that takes it is 0.10.2" in broken[0]
    argv, broken = planned("v0.13.0", mm_processor_cache_gb=2.5)
    assert broken == () and after(argv, "--mm-processor-cache-gb") == "2.5"
    argv, _ = planned("v0.13.0", mm_processor_cache_gb=4.0)
    assert after(argv, "--mm-processor-cache-gb") == "4"


def test_structured_outputs_backend_per_era() -> None:
    argv, broken = planned("v0.10.2rc1", structured_outputs_backend="xgrammar")
    assert broken == () and after(argv, "--guided-decoding-backend") == "xgrammar"
    argv, broken = planned("v0.11.0", structured_outputs_backend="xgrammar")
    assert broken == () and "--guided-decoding-backend" not in argv
    assert json.loads(after(argv, "--structured-outputs-config")) == {"backend": "xgrammar"}
    _argv, broken = planned("v0.10.1rc1", structured_outputs_backend="lm-format-enforcer")
    assert "takes `--guided-decoding-backend` from auto, guidance, outlines, xgrammar only" in broken[0]
    assert "the first vLLM that takes it is 0.10.2" in broken[0]


def test_lora_rank_choices_and_context_parallel_from_the_snapshots() -> None:
    argv, broken = planned("v0.11.0", lora={"max_rank": 48})
    assert broken == () and after(argv, "--max-lora-rank") == "48"  # no choices before vLLM 0.12
    _argv, broken = planned("v0.13.0", lora={"max_rank": 48})
    assert "takes `--max-lora-rank` from 1, 8, 16, 32, 64, 128, 256, 320, 512 only, not '48'" in broken[0]
    _argv, broken = planned("v0.11.0", prefill_context_parallel=2)
    assert broken == (
        "serving.prefill_context_parallel: vLLM 0.11.0 has no `--prefill-context-parallel-size` "
        "(engine/ascendctl_engine/data/parsers/vllm-0.11.0.json); the first vLLM with it is 0.12.0 "
        "(engine/ascendctl_engine/data/parsers/vllm-0.12.0.json)",
    )
    argv, broken = planned("v0.10.2rc1", decode_context_parallel=2)
    assert broken == () and after(argv, "--decode-context-parallel-size") == "2"
    argv, broken = planned("v0.9.1", prefill_context_parallel=1, decode_context_parallel=1)
    assert broken == () and not {"--prefill-context-parallel-size", "--decode-context-parallel-size"} & set(argv)


def test_scheduler_switches_fill_their_gaps() -> None:
    off = plan_commands(intent("v0.13.0", engine={"scheduler": {"async_scheduling": False}}))
    assert "--no-async-scheduling" in off.commands[0].argv and off.unsupported == ()
    old = plan_commands(intent("v0.9.1", engine={"scheduler": {"async_scheduling": False}}))
    assert not {"--async-scheduling", "--no-async-scheduling"} & set(old.commands[0].argv)
    on = plan_commands(intent("v0.9.1", engine={"scheduler": {"async_scheduling": True}}))
    assert "the first vLLM with it is 0.10.0" in on.unsupported[0]
    # vLLM < 0.8.5 has no `--no-enable-chunked-prefill`: its StoreBoolean flag takes the value
    chunked = plan_commands(intent("v0.8.4rc2", engine={"scheduler": {"chunked_prefill": False}}))
    argv = chunked.commands[0].argv
    assert after(argv, "--enable-chunked-prefill") == "false" and chunked.unsupported == ()


def test_a_relative_chat_template_is_planned_with_a_warning() -> None:
    result = plan_commands(intent("v0.23.0", serving={"chat_template": "./t.jinja"}))
    assert after(result.commands[0].argv, "--chat-template") == "./t.jinja"
    assert any("is a relative path" in w for w in result.warnings)


ROWS = MATRIX.releases


@pytest.mark.parametrize("row", ROWS, ids=[f"{r.backend}-{r.version}" for r in ROWS])
def test_every_release_plans_serving_options_or_says_why(row: Any) -> None:
    """Every release row: what the snapshot rejects is reported, never planned silently; releases whose vLLM
    has every flag plan all of them."""
    serving = {
        "tool_call_parser": "hermes",
        "auto_tool_choice": True,
        "reasoning_parser": "deepseek_r1",
        "chat_template": "/srv/t.jinja",
        "limit_mm_per_prompt": {"image": 1},
        "mm_processor_cache_gb": 0,
        "lora": {"adapters": adapters(sql="/a/sql"), "max_rank": 16, "max_loras": 2},
        "decode_context_parallel": 2,
        "structured_outputs_backend": "xgrammar",
    }
    hardware = "a2" if row.backend == "npu" else None
    target = {"backend": row.backend, "devices_per_node": 2, **({"hardware": hardware} if hardware else {})}
    document = {
        "model": {"source": "org/m"},
        "target": target,
        "engine": {"parallel": {"tensor": 2}},
        "serving": serving,
    }
    result = plan_commands(
        intent_from_sections(
            document,
            traits=hardware_traits(hardware_by_id(MATRIX, hardware)) if hardware else HardwareTraits(),
            vllm=row.vllm,
            vllm_ascend=row.vllm_ascend,
        )
    )
    accepted = acceptance_for(row.backend, row.vllm, row.vllm_ascend)
    argv = result.commands[0].argv
    for problem in accepted.argv_problems(argv):
        assert problem.message in result.unsupported, (row.version, problem.message)
    if accepted.has_flag("--decode-context-parallel-size"):
        assert [u for u in result.unsupported if u.startswith("serving.")] == [], row.version
        assert {"--tool-call-parser", "--chat-template", "--lora-modules", "--limit-mm-per-prompt"} <= set(argv)


# ----------------------------------------------------------------------------------------------- claims


def test_every_serving_and_scheduler_spelling_is_claimed_and_exists() -> None:
    mine = [c for c in typed_fields.claims() if c.field.startswith(("serving.", "engine.scheduler."))]
    fields = {c.field for c in mine}
    serving_fields = set(Profile.model_fields["serving"].annotation.model_fields)  # type: ignore[union-attr]
    assert {f.split(".")[1] for f in fields if f.startswith("serving.")} == serving_fields
    flags = {c.spelling for c in mine if c.kind == "flag"}
    known = {s for v in snapshot_versions("vllm") for opt in snapshot_for(v).options for s in opt.strings}
    assert flags <= known, flags - known
    assert typed_fields.owner("flag", "--tool-call-parser").field == "serving.tool_call_parser"  # type: ignore[union-attr]
    assert typed_fields.owner("flag", "-pcp").field == "serving.prefill_context_parallel"  # type: ignore[union-attr]
    key = typed_fields.owner("key", "ascend_scheduler_config.enable_chunked_prefill")
    assert key is not None and key.field == "engine.scheduler.chunked_prefill"


# -------------------------------------------------------------------------------------- migration rule


def migration(p: Profile) -> Any:
    [finding] = [f for f in profile_findings(p) if f.id == "profile.migration.typed-field"]
    return finding


def test_the_migration_rule_applies_only_with_an_escape_hatch() -> None:
    assert migration(profile("")).status == "skip"
    unclaimed = profile("engine:\n  extra_args: ['--enable-ep-weight-filter']\n")
    assert migration(unclaimed).status == "pass"


def test_the_migration_rule_names_the_field_at_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    # A variable no adapter claims in this checkout, claimed for the test only.
    monkeypatch.setitem(
        typed_fields._CLAIMS,
        ("env", "ASCENDCTL_TEST_SWITCH"),
        typed_fields.Claim("serving.test_switch", "env", "ASCENDCTL_TEST_SWITCH"),
    )
    p = profile(
        "engine:\n  extra_args: ['--max-model-len', '8', '--tool-call-parser=hermes', '--limit-mm-per-prompt.video', "
        "'0']\n  additional_config:\n    ascend_scheduler_config:\n      enable_chunked_prefill: false\n"
        "runtime:\n  env:\n    ASCENDCTL_TEST_SWITCH: '1'\n"
    )
    finding = migration(p)
    assert finding.status == "warn" and finding.at == ("engine", "extra_args", 2)
    assert finding.message == (
        "engine.extra_args `--tool-call-parser`: use serving.tool_call_parser (also engine.extra_args "
        "`--limit-mm-per-prompt`: use serving.limit_mm_per_prompt; engine.additional_config "
        "`ascend_scheduler_config.enable_chunked_prefill`: use engine.scheduler.chunked_prefill; runtime.env "
        "`ASCENDCTL_TEST_SWITCH`: use serving.test_switch)"
    )


def test_a_nested_key_matches_a_claimed_parent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(
        typed_fields._CLAIMS, ("key", "test_config"), typed_fields.Claim("serving.test_config", "key", "test_config")
    )
    p = profile("engine:\n  additional_config:\n    test_config:\n      a: {b: 1}\n")
    finding = migration(p)
    assert finding.at == ("engine", "additional_config", "test_config", "a", "b")
    assert finding.message == "engine.additional_config `test_config.a.b`: use serving.test_config"


VL_EXTRA = HEAD + NPU + "engine:\n  extra_args: ['--mm-processor-cache-gb', '0', '--reasoning-parser', 'qwen3']\n"


def test_validate_prints_the_warning_located(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(VL_EXTRA, encoding="utf-8")
    loaded = load_profile_with_warnings(path)
    [issue] = loaded.warnings
    assert (issue.path, issue.line) == (
        "engine.extra_args[0]",
        VL_EXTRA.count("\n", 0, VL_EXTRA.index("extra_args")) + 1,
    )
    runner = CliRunner()
    text = runner.invoke(app, ["validate", str(path)])
    assert text.exit_code == 0 and text.stdout.startswith(f"ok: {path}")
    assert f"warning: {path}:{issue.line}:{issue.column}: engine.extra_args[0]: engine.extra_args " in text.stderr
    assert "`--mm-processor-cache-gb`: use serving.mm_processor_cache_gb" in text.stderr
    report = json.loads(runner.invoke(app, ["validate", "--json", str(path)]).stdout)
    assert report[0]["valid"] is True and report[0]["warnings"][0]["path"] == "engine.extra_args[0]"


def test_plan_carries_the_warning_in_its_findings(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(VL_EXTRA, encoding="utf-8")
    plan = plan_profile(load_profile_with_warnings(path).profile)
    [finding] = [f for f in plan.deployment.findings if f.id.startswith("profile.")]
    assert finding.id == "profile.migration.typed-field" and finding.status == "warn"
    out = CliRunner().invoke(app, ["plan", str(path)])
    assert out.exit_code == 0
    assert "[warn] profile.migration.typed-field: engine.extra_args `--mm-processor-cache-gb`" in out.stdout
    data = json.loads(CliRunner().invoke(app, ["plan", str(path), "--json"]).stdout)
    assert "profile.migration.typed-field" in [f["id"] for f in data["findings"]]


def test_the_serving_tutorial_fixtures_need_no_migration() -> None:
    from ascendctl.schema.loader import load_profile

    fixtures = sorted((Path(__file__).resolve().parent / "fixtures" / "profiles").glob("tut-serve-*.yaml"))
    assert len(fixtures) >= 3
    for path in fixtures:
        found = migration(load_profile(path))
        assert found.status != "warn", (path, found.message)


# ----------------------------------------------------------------------------------- tutorial helpers


def test_tutorial_helpers_fold_dotted_json_keys_and_read_leading_assignments() -> None:
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent / "planner"))
    from planner_tutorials import flag_map, parse_shell

    env, argv = parse_shell("HCCL_OP_EXPANSION_MODE=AIV \\\nvllm serve m --limit-mm-per-prompt.video 0 \\\n  --x 1\n")
    assert env == {"HCCL_OP_EXPANSION_MODE": "AIV"} and argv[:3] == ["vllm", "serve", "m"]
    dotted = flag_map(["vllm", "serve", "m", "--limit-mm-per-prompt.image", "1", "--limit-mm-per-prompt.video", "0"])
    assert dotted == flag_map(["vllm", "serve", "m", "--limit-mm-per-prompt", '{"image": 1, "video": 0}'])
    assert flag_map(["vllm", "serve", "m", "--speculative-config.method", "mtp"])["--speculative-config"] == {
        "method": "mtp"
    }


def test_key_value_words_are_a_value_class_older_snapshots_did_not_sample() -> None:
    assert value_class("sql=/a/sql") == value_class("image=2,video=0") == "kv"
    assert value_class("abc") == "text" and value_class('{"a": 1}') == "json"
    old = snapshot_for("0.23.0")
    assert "kv" not in old.value_classes  # so the replay does not judge `name=path` for --lora-modules
    assert old.check_argv(["--lora-modules", "sql=/a/sql"]) == []
    assert [p.kind for p in old.check_argv(["--lora-modules", "abc"])] == ["bad-value"]


def test_the_reader_classes_every_sample_the_snapshot_script_feeds(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util
    import sys

    script = Path(__file__).resolve().parents[1] / "scripts" / "snapshot_vllm_parsers.py"
    spec = importlib.util.spec_from_file_location("snapshot_vllm_parsers", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    assert {cls: value_class(sample) for cls, sample in module.TYPE_SAMPLES.items()} == {
        cls: cls for cls in module.TYPE_SAMPLES
    }
