"""`ascendctl import` on hostile scripts: bounded expansion, secrets in any spelling never shown, integers too long
for int() refused in the tool's words. Each refusal is one line naming the script (and its line), exit 2."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from ascendctl.cli import app
from ascendctl.importer.run import import_scripts, report_lines
from ascendctl.importer.script import MAX_EXPANDED_CHARS, MAX_VALUE_CHARS, ScriptError, parse_launch_script
from tests.test_import import NODE0, NODE1

SECRET = "SECRETLIT12345"
runner = CliRunner()


def _import(tmp_path: Path, text: str, *extra: str) -> tuple[int, str, str]:
    """(exit code, everything printed, the profile written) of importing `text` as q.sh."""
    script = tmp_path / "q.sh"
    script.write_text(text, encoding="utf-8")
    out = tmp_path / "p.yaml"
    result = runner.invoke(
        app, ["import", str(script), *extra, "--release", "v0.13.0", "--hardware", "a2", "-o", str(out)]
    )
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.output, out.read_text() if out.exists() else ""


def _one_line_refusal(code: int, output: str, where: str) -> str:
    assert code == 2, output
    lines = output.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in output, output
    assert where in lines[0], lines[0]
    return lines[0]


# --- expansion is bounded ---------------------------------------------------------------------------------------

DOUBLINGS = {
    "quoted": 'A="$A$A"',
    "export-braces": "export A=${A}${A}",
    "append": 'A+="$A"',
}


@pytest.mark.parametrize("line", DOUBLINGS.values(), ids=DOUBLINGS.keys())
def test_a_value_doubled_line_after_line_is_refused_at_the_line_that_crosses_the_bound(
    tmp_path: Path, line: str
) -> None:
    # 40 doublings of one byte is a terabyte; the script is a few hundred bytes (it was killed for memory)
    text = "A=x\n" + (line + "\n") * 40 + 'vllm serve "$A"\n'
    started = time.monotonic()
    code, output, _ = _import(tmp_path, text)
    assert time.monotonic() - started < 30
    crossing = 1 + (MAX_VALUE_CHARS.bit_length())  # line 1 sets 1 char; line k+1 holds 2**k
    message = _one_line_refusal(code, output, f"q.sh:{crossing}: ")
    assert f"a value longer than {MAX_VALUE_CHARS // 1024} KiB once its variables are expanded" in message


def test_many_references_to_one_large_value_add_up_to_the_script_bound() -> None:
    big = "A=" + "x" * (MAX_VALUE_CHARS - 10) + "\n"
    refs = " $A" * (MAX_EXPANDED_CHARS // MAX_VALUE_CHARS + 2)
    for text in (big + f"vllm serve m{refs}\n", big + f"B=${{C:-{refs.replace(' ', '')}}}\nvllm serve m\n"):
        with pytest.raises(ScriptError, match=r"^s\.sh:2: the script's variable expansions add up to more than"):
            parse_launch_script(text, "s.sh")


def test_values_under_the_bounds_expand_as_before() -> None:
    text = "A=" + "x" * (MAX_VALUE_CHARS // 2) + '\nB="$A$A"\nexport B\nvllm serve m --x "$A" ${C:-$A}\n'
    script = parse_launch_script(text, "s.sh")
    assert len(script.env["B"]) == MAX_VALUE_CHARS and script.argv[2] == script.argv[3] == "x" * (MAX_VALUE_CHARS // 2)


def test_notes_about_many_ignored_lines_cost_linear_time() -> None:
    # each ignored command's line was looked up in a list of every earlier one: 100 000 lines took minutes
    started = time.monotonic()
    script = parse_launch_script("x\n" * 100_000 + "vllm serve m\n", "s.sh")
    assert time.monotonic() - started < 45
    assert script.notes == ("lines 1, 2, 3, 4, 5, 6, 7, 8, ... (100000 in all): `x` not run: only assignments, "
                            "exports and the serve command are read",)  # fmt: skip


# --- secret-valued flags: any spelling vLLM reads becomes a reference ------------------------------------------

SPELLINGS = {
    "underscore-equals": f"--api_key={SECRET}",
    "equals": f"--api-key={SECRET}",
    "separate": f"--api-key {SECRET}",
    "abbreviated": f"--api-k {SECRET}",
    "abbreviated-underscore-equals": f"--api_ke={SECRET}",
}


@pytest.mark.parametrize("spelling", SPELLINGS.values(), ids=SPELLINGS.keys())
def test_every_spelling_of_the_api_key_is_a_reference_and_never_printed(tmp_path: Path, spelling: str) -> None:
    code, output, profile = _import(tmp_path, f"vllm serve Qwen/Qwen3-8B {spelling}\n")
    assert SECRET not in output and SECRET not in profile
    assert code == 0, output  # the plan passes the key by reference: the same option
    assert yaml.safe_load(profile)["server"]["api_key"] == {"env": "VLLM_API_KEY"}
    assert "engine" not in yaml.safe_load(profile) or "extra_args" not in yaml.safe_load(profile)["engine"]


def test_an_api_key_from_a_variable_is_never_printed(tmp_path: Path) -> None:
    code, output, profile = _import(tmp_path, "T=hf_x9SECRETVAR\nvllm serve Qwen/Qwen3-8B --api_key=$T\n")
    assert code == 0, output
    assert "SECRETVAR" not in output and "SECRETVAR" not in profile


@pytest.mark.parametrize("spelling", [f"--hf_token={SECRET}", f"--hf-t {SECRET}", f"--hf-token {SECRET}"])
def test_an_hf_token_flag_becomes_a_runtime_secret(tmp_path: Path, spelling: str) -> None:
    code, output, profile = _import(tmp_path, f"vllm serve Qwen/Qwen3-8B {spelling}\n")
    assert SECRET not in output and SECRET not in profile
    assert code == 0, output
    assert yaml.safe_load(profile)["runtime"]["secrets"] == {"HF_TOKEN": {"env": "HF_TOKEN"}}


def test_a_secret_flag_on_another_node_is_compared_without_its_value() -> None:
    node1 = NODE1.replace("--trust-remote-code", f"--trust-remote-code --api_key={SECRET}")
    scripts = [parse_launch_script(NODE0, "node0.sh"), parse_launch_script(node1, "node1.sh")]
    result = import_scripts(scripts, release="v0.11.0", hardware="a3", read_config=lambda _: None)
    lines = report_lines(result)
    assert SECRET not in "\n".join(lines)
    assert any("--api-key" in line and "<secret>" in line for line in lines), lines


# --- a secret inside --additional-config ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "path"),
    [
        (f'--additional-config \'{{"api_key": "{SECRET}"}}\'', "api_key"),
        (f'--additional_config=\'{{"x": {{"hf_token": "{SECRET}"}}}}\'', "x.hf_token"),
        (f'--additional-c \'{{"db_password": "{SECRET}"}}\'', "db_password"),
        (f"--additional-config.api_key {SECRET}", "api_key"),
    ],
)
def test_a_secret_in_additional_config_is_refused_at_its_line_without_its_value(
    tmp_path: Path, args: str, path: str
) -> None:
    code, output, profile = _import(tmp_path, f"export A=1\nvllm serve Qwen/Qwen3-8B \\\n  {args}\n")
    message = _one_line_refusal(code, output, "q.sh:2: ")
    assert f"holds `{path}`" in message and SECRET not in output and profile == ""


def test_additional_config_without_secrets_is_still_imported(tmp_path: Path) -> None:
    code, output, profile = _import(
        tmp_path, 'vllm serve Qwen/Qwen3-8B --additional-config \'{"pa_shape_list": [1], "x": {"token": 1}}\'\n'
    )
    assert code == 0, output
    # no switch in it: what v0.13.0 reads joins the plan's own `--additional-config` (engine.additional_config);
    # a key it does not read is left out and reported as ignored
    assert yaml.safe_load(profile)["engine"]["additional_config"] == {"pa_shape_list": [1]}
    assert "flag --additional-config.x: ignored" in output


# --- integers too long for int() ---------------------------------------------------------------------------


def test_an_integer_too_long_for_int_is_refused_in_the_tools_words(tmp_path: Path) -> None:
    code, output, _ = _import(tmp_path, "export A=1\nvllm serve Qwen/Qwen3-8B --max-model-len 1" + "0" * 5000 + "\n")
    message = _one_line_refusal(code, output, "q.sh: line 2: `--max-model-len`: ")
    assert "an integer of 5001 digits" in message
    assert "set_int_max_str_digits" not in output and "4300" not in output


@pytest.mark.parametrize(
    ("text", "where"),
    [
        (
            "export ASCEND_RT_VISIBLE_DEVICES=0,1" + "0" * 5000 + "\nvllm serve Qwen/Qwen3-8B\n",
            "ASCEND_RT_VISIBLE_DEVICES",
        ),
        ("vllm serve Qwen/Qwen3-8B --block-size 1" + "0" * 5000 + "\n", "--block-size"),
    ],
)
def test_long_integers_elsewhere_are_refused_the_same_way(tmp_path: Path, text: str, where: str) -> None:
    code, output, _ = _import(tmp_path, text)
    assert "an integer of 5001 digits" in _one_line_refusal(code, output, f"`{where}`: ")


def test_a_digit_int_does_not_read_is_left_as_written(tmp_path: Path) -> None:
    # `²` is a digit to str.isdigit(), not to int(): it was int()'s "invalid literal" message
    _, output, profile = _import(tmp_path, "vllm serve Qwen/Qwen3-8B --max-model-len ²\n")
    assert "invalid literal" not in output
    assert yaml.safe_load(profile)["engine"]["extra_args"] == ["--max-model-len", "²"], output
