"""ascendctl/importer/script.py: a launch script is read, never run -- its environment and serve argv come out
resolved from its own variables, what it does not carry over is noted, and a script it cannot read is an
error naming PATH:LINE."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ascendctl.importer.script import LaunchScript, ScriptError, parse_launch_script, serve_spans


def parse(text: str) -> LaunchScript:
    return parse_launch_script(text, "start.sh")


def notes_with(script: LaunchScript, fragment: str) -> list[str]:
    return [n for n in script.notes if fragment in n]


# ---------------------------------------------------------------------------------------------------------
# Lexing: comments, blank lines, continuations, quotes.


def test_comments_blank_lines_and_continuations() -> None:
    script = parse(
        "#!/bin/bash\n"
        "# a comment line\n"
        "\n"
        "export A=1  # trailing comment\n"
        "vllm serve Qwen/Qwen3-8B \\\n"
        "  --port 8000 \\\n"
        "  --served-model-name q#3   # hash inside a word is not a comment\n"
    )
    assert script.env == {"A": "1"}
    assert script.argv == ("Qwen/Qwen3-8B", "--port", "8000", "--served-model-name", "q#3")
    assert script.line == 5
    assert script.notes == ()


def test_hash_inside_quotes_is_not_a_comment() -> None:
    script = parse("vllm serve m --chat-template '# {{x}}' --x \"a # b\"\n")
    assert script.argv == ("m", "--chat-template", "# {{x}}", "--x", "a # b")


def test_json_in_single_quotes_stays_one_token_even_across_lines() -> None:
    script = parse(
        "vllm serve m \\\n"
        '  --compilation-config \'{"cudagraph_mode": "FULL_DECODE_ONLY"}\' \\\n'
        "  --kv-transfer-config \\\n"
        '  \'{"kv_role": "kv_producer",\n'
        '    "kv_port": "30000"}\' \\\n'
        "  --enforce-eager\n"
    )
    assert script.argv == (
        "m",
        "--compilation-config",
        '{"cudagraph_mode": "FULL_DECODE_ONLY"}',
        "--kv-transfer-config",
        '{"kv_role": "kv_producer",\n    "kv_port": "30000"}',
        "--enforce-eager",
    )


def test_double_quote_escapes() -> None:
    script = parse('vllm serve m --a "x\\"y" --b "\\$HOME" --c "back\\\\slash" --d "\\n" --e ""\n')
    assert script.argv == ("m", "--a", 'x"y', "--b", "$HOME", "--c", "back\\slash", "--d", "\\n", "--e", "")
    assert script.unresolved == ()


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.text(st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\ufffd"), min_size=1),
        max_size=6,
    )
)
def test_any_argv_quoted_with_shlex_comes_back_unchanged(argv: list[str]) -> None:
    text = "vllm serve " + " ".join(shlex.quote(arg) for arg in argv) + "\n"
    assert parse(text).argv == tuple(argv)


# ---------------------------------------------------------------------------------------------------------
# Variables: exports, assignments, prefixes, expansion.


def test_exports_assignments_and_prefixes_in_order() -> None:
    script = parse(
        "export A=1 B=2\n"
        'export C="three words"\n'
        "D='$A'\n"
        "export E=${A}x$B\n"
        "export F\n"
        "G=shell-only\n"
        "export D\n"
        "VLLM_USE_V1=1 HCCL_BUFFSIZE=$B vllm serve m\n"
    )
    assert script.env == {
        "A": "1",
        "B": "2",
        "C": "three words",
        "E": "1x2",
        "D": "$A",  # single quotes: no expansion; exported after it was set
        "VLLM_USE_V1": "1",
        "HCCL_BUFFSIZE": "2",
    }
    # a variable never exported (G) does not reach the serve command
    assert list(script.env) == ["A", "B", "C", "E", "D", "VLLM_USE_V1", "HCCL_BUFFSIZE"]


def test_variables_resolve_in_double_quotes_and_bare_words_not_single_quotes() -> None:
    script = parse(
        'nic_name="eth0"\n'
        "local_ip=10.0.0.2\n"
        "export HCCL_IF_IP=$local_ip\n"
        "vllm serve /models/x --host \"$local_ip\" --name ${nic_name}-a --raw '$local_ip'\n"
    )
    assert script.env["HCCL_IF_IP"] == "10.0.0.2"
    assert script.argv == ("/models/x", "--host", "10.0.0.2", "--name", "eth0-a", "--raw", "$local_ip")


def test_unresolved_names_stay_as_written_and_are_listed() -> None:
    script = parse(
        "export LD_PRELOAD=/usr/lib/libjemalloc.so.2:$LD_PRELOAD\n"
        'vllm serve $MODEL_PATH --port ${PORT} --data-parallel-rank $4 --host "$HOST"\n'
    )
    assert script.env == {"LD_PRELOAD": "/usr/lib/libjemalloc.so.2:$LD_PRELOAD"}
    assert script.argv == ("$MODEL_PATH", "--port", "${PORT}", "--data-parallel-rank", "$4", "--host", "$HOST")
    assert script.unresolved == ("LD_PRELOAD", "MODEL_PATH", "PORT", "4", "HOST")


def test_unquoted_expansion_splits_into_arguments_quoted_does_not() -> None:
    script = parse('EXTRA="--tp 2  --pp 1"\nEMPTY=\nvllm serve m $EXTRA "$EXTRA" $EMPTY "$EMPTY"\n')
    assert script.argv == ("m", "--tp", "2", "--pp", "1", "--tp 2  --pp 1", "")


def test_defaults_and_alternatives() -> None:
    script = parse(
        "SET=a\nexport P=${PYTHONPATH:-}/x\nvllm serve m --port ${PORT:-8000} --a ${SET:+yes} --b ${SET:-no}\n"
    )
    assert script.env["P"] == "/x"
    assert script.argv == ("m", "--port", "8000", "--a", "yes", "--b", "a")
    assert script.unresolved == ()
    assert notes_with(script, "`PORT` is not set by the script: its default `8000` used")


def test_command_substitution_is_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    script = parse(
        f"local_ip=$(touch {marker}; hostname -I)\n"
        "export HCCL_IF_IP=$local_ip\n"
        f"vllm serve m --host `touch {marker}` --x $(touch {marker})\n"
    )
    assert not marker.exists()
    assert "local_ip" not in script.env  # set, never exported
    assert script.env["HCCL_IF_IP"] == "$local_ip"
    assert "local_ip" in script.unresolved
    assert script.argv == ("m", "--host", f"`touch {marker}`", "--x", f"$(touch {marker})")
    assert notes_with(script, "not run: its output is unknown here")


def test_unset_removes_and_later_exports_do_not_reach_the_command() -> None:
    script = parse("export http_proxy=x A=1\nunset http_proxy\nvllm serve m\nexport LATE=1\n")
    assert script.env == {"A": "1"}
    assert notes_with(script, "`unset http_proxy`")
    assert notes_with(script, "line 4: assignments after the serve command do not reach it")


def test_prefix_assignments_on_other_commands_are_not_exported() -> None:
    script = parse("FOO=1 python bench.py\nvllm serve m\n")
    assert script.env == {}


# ---------------------------------------------------------------------------------------------------------
# The serve command: what is dropped around it.


def test_nohup_redirections_and_background_are_dropped_with_notes() -> None:
    script = parse("nohup vllm serve m --port 8000 > /tmp/serve.log 2>&1 &\ntail -f /tmp/serve.log\n")
    assert script.argv == ("m", "--port", "8000")
    assert script.line == 1
    assert notes_with(script, "line 1: dropped `nohup` before the serve command")
    assert notes_with(script, "line 1: dropped `> /tmp/serve.log 2>&1` after the serve command")
    assert notes_with(script, "line 1: dropped the trailing `&`")
    assert notes_with(script, "line 2: `tail` not run")


def test_pipe_after_the_serve_command_is_dropped() -> None:
    script = parse("vllm serve m \\\n  --port 1 2>&1 | tee serve.log\n")
    assert script.argv == ("m", "--port", "1")
    assert notes_with(script, "dropped the pipe around the serve command: `<serve> | tee serve.log`")
    assert notes_with(script, "dropped `2>&1`")


def test_other_lines_are_ignored_with_one_note_per_kind() -> None:
    script = parse(
        "set -e\n"
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh\n"
        "cd /workspace\n"
        "ulimit -n 65536\n"
        "echo performance | tee /sys/x\n"
        "sysctl -w vm.swappiness=0\n"
        "sysctl -w kernel.numa_balancing=0\n"
        "vllm serve m\n"
    )
    assert script.argv == ("m",)
    assert script.env == {}
    assert notes_with(script, "line 1: `set` not run")
    assert notes_with(script, "line 2: `source` not read")
    assert notes_with(script, "line 3: `cd` not run")
    assert notes_with(script, "line 4: `ulimit` not run")
    assert notes_with(script, "line 5: `echo` not run")
    assert notes_with(script, "lines 6, 7: `sysctl` not run")
    assert len(notes_with(script, "sysctl")) == 1


@pytest.mark.parametrize("python", ["python", "python3", "/usr/bin/python3.11"])
@pytest.mark.parametrize("model_args", [["--model", "Qwen/Qwen2.5-7B"], ["--model=Qwen/Qwen2.5-7B"]])
def test_legacy_api_server_becomes_serve_argv_with_the_model_first(python: str, model_args: list[str]) -> None:
    text = f"{python} -m vllm.entrypoints.openai.api_server --port 8000 {' '.join(model_args)} --tp 2\n"
    script = parse(text)
    assert script.argv == ("Qwen/Qwen2.5-7B", "--port", "8000", "--tp", "2")
    assert notes_with(script, "the legacy `vllm.entrypoints.openai.api_server` entry point read as `vllm serve")


def test_model_options_that_only_start_with_model_are_left_alone() -> None:
    script = parse("python -m vllm.entrypoints.openai.api_server --model-impl vllm --model m\n")
    assert script.argv == ("m", "--model-impl", "vllm")


def test_serve_without_positional_model_keeps_its_argv() -> None:
    assert parse("vllm serve --model m --port 1\n").argv == ("--model", "m", "--port", "1")


def test_docker_run_env_options_are_read_and_the_rest_noted() -> None:
    script = parse(
        "export IMAGE=quay.io/ascend/vllm-ascend:v0.11.0\n"
        "docker run --rm --device /dev/davinci0 -e VLLM_USE_MODELSCOPE=True -it $IMAGE \\\n"
        "vllm serve Qwen/Qwen3-8B --max_model_len 26240\n"
    )
    assert script.argv == ("Qwen/Qwen3-8B", "--max_model_len", "26240")
    assert script.env == {"IMAGE": "quay.io/ascend/vllm-ascend:v0.11.0", "VLLM_USE_MODELSCOPE": "True"}
    assert notes_with(script, "runs inside `docker`")


@pytest.mark.parametrize(
    "text",
    [
        "vllm bench serve --model m\nvllm serve m\n",
        "echo vllm serve x\nvllm serve m\n",
        "# vllm serve x\nvllm serve m\n",
    ],
)
def test_lookalikes_are_not_serve_commands(text: str) -> None:
    assert parse(text).argv == ("m",)


# ---------------------------------------------------------------------------------------------------------
# What hand-written scripts get wrong, read as meant (with a note).


def test_placeholders_are_words_not_redirections() -> None:
    script = parse("export MODEL_PATH=<MODEL_PATH>\nvllm serve <path_to_model>/Qwen --host <host_ip>\n")
    assert script.env == {"MODEL_PATH": "<MODEL_PATH>"}
    assert script.argv == ("<path_to_model>/Qwen", "--host", "<host_ip>")
    assert notes_with(script, "`<host_ip>` read as a placeholder")


def test_commented_out_argument_inside_a_continued_command() -> None:
    script = parse("vllm serve m \\\n  # --enforce-eager \\\n  --port 8000\n")
    assert script.argv == ("m", "--port", "8000")
    assert notes_with(script, "line 2: a commented-out line inside a continued command was skipped")


def test_whitespace_after_the_continuation_backslash() -> None:
    script = parse("vllm serve m \\  \n  --port 8000\n")
    assert script.argv == ("m", "--port", "8000")
    assert notes_with(script, "line 1: whitespace after the trailing `\\`")


def test_a_missing_backslash_is_reported_not_guessed() -> None:
    script = parse("vllm serve m \\\n  --port 8000\n  --enforce-eager\n")
    assert script.argv == ("m", "--port", "8000")
    assert notes_with(script, "line 3: `--enforce-eager` is not a command")


def test_crlf_line_ends() -> None:
    script = parse("export A=1\r\nvllm serve m \\\r\n  --port 1\r\n")
    assert script.env == {"A": "1"}
    assert script.argv == ("m", "--port", "1")
    assert notes_with(script, "CRLF")


# ---------------------------------------------------------------------------------------------------------
# Control flow and heredocs: skipped, and an error when the serve command is inside.


def test_if_block_is_skipped_with_a_note() -> None:
    script = parse(
        "if [ -f /usr/lib64/libjemalloc.so.2 ]; then\n"
        "    export LD_PRELOAD=/usr/lib64/libjemalloc.so.2:$LD_PRELOAD\n"
        "elif [ -f /x ]; then\n"
        "    export LD_PRELOAD=/x\n"
        "fi\n"
        "export A=1\n"
        "vllm serve m\n"
    )
    assert script.env == {"A": "1"}
    assert script.unresolved == ()
    assert notes_with(script, "line 1: an `if` block skipped")


def test_heredoc_body_is_not_read() -> None:
    script = parse("cat > cfg.yaml <<EOF\nexport NOT_ME=1\nEOF\nvllm serve m\n")
    assert script.env == {}
    assert notes_with(script, "line 2: a heredoc body")


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("for i in 0 1; do\n  vllm serve m --port 800$i &\ndone\n", 2, "inside a `for` loop starting at line 1"),
        ("if [ $RANK = 0 ]; then\n  vllm serve m\nfi\n", 2, "inside an `if` block starting at line 1"),
        ("start() {\n  vllm serve m\n}\nstart\n", 2, "inside a `{ ... }` group (or function body)"),
        ("(cd /x && vllm serve m)\n", 1, "inside a `( ... )` subshell"),
        ("cat > run.sh <<'EOF'\nvllm serve m\nEOF\nbash run.sh\n", 2, "inside a heredoc"),
    ],
)
def test_serve_inside_control_flow_or_a_heredoc_is_an_error(text: str, line: int, fragment: str) -> None:
    with pytest.raises(ScriptError, match=rf"^start\.sh:{line}: ") as caught:
        parse(text)
    assert fragment in str(caught.value)


# ---------------------------------------------------------------------------------------------------------
# Errors: PATH:LINE: why.


@pytest.mark.parametrize(
    ("text", "where", "fragment"),
    [
        ("export A=1\necho done\n", "start.sh:1", "no serve command"),
        ("", "start.sh:1", "no serve command"),
        (
            "vllm serve a\nexport B=1\nvllm serve b \\\n --port 2\n",
            "start.sh:3",
            "more than one serve command (lines 1, 3)",
        ),
        ("export A=1\nvllm serve m --x 'abc\n--y 1\n", "start.sh:2", "a single quote opens here and never closes"),
        ('vllm serve m \\\n  --x "abc\n', "start.sh:2", "a double quote opens here and never closes"),
        ("vllm serve m --x `date\n", "start.sh:1", "a backquote opens here"),
        ("vllm serve m --x ${A\n", "start.sh:1", "unbalanced `${`"),
        ("export A=1\nvllm serve m\0\n", "start.sh:2", "a NUL byte: this is not a text file"),
        ("\x7fELF\x02\x01\x01\nvllm serve m\n", "start.sh:1", "not a text file"),
        ("vllm serve m \ufffd\n", "start.sh:1", "not a text file"),
    ],
)
def test_errors_name_path_and_line(text: str, where: str, fragment: str) -> None:
    with pytest.raises(ScriptError) as caught:
        parse(text)
    message = str(caught.value)
    assert message.startswith(where + ": "), message
    assert fragment in message
    assert isinstance(caught.value, ValueError)


def test_default_path_label() -> None:
    with pytest.raises(ScriptError, match=r"^<script>:1: no serve command"):
        parse_launch_script("echo hi\n")


# ---------------------------------------------------------------------------------------------------------
# serve_spans: where each serve command sits (for splitting a block with several).


def test_serve_spans_lists_every_serve_command() -> None:
    text = "export A=1\nvllm serve a \\\n  --x '{\"k\":\n 1}'\nexport B=2\nnohup vllm serve b > log &\n"
    assert serve_spans(text) == ((2, 4), (6, 6))
    assert serve_spans("echo hi\n") == ()
