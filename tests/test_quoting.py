"""The quoting functions every renderer uses, each checked against the consumer that reads its output back:
the shell, systemd (its own rules, and `systemd-analyze verify` where installed), Kubernetes, compose, YAML.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from consumers import compose_unescape, k8s_expand, systemd_words
from hypothesis import given
from hypothesis import strategies as st

from ascendctl.core.errors import UserInputError
from ascendctl.outputs.quoting import Quoted, one_line, sh_join, sh_word, shell_name, shell_product, shell_var
from ascendctl.outputs.render import systemd_syntax
from ascendctl.outputs.render.kubernetes import k8s_literal
from ascendctl.outputs.render.templating import UnquotedValue, environment

NASTY = [
    "",
    " ",
    "a b",
    "it's",
    "'$(reboot)'",
    '"; reboot; "',
    "a\nrm -rf /",
    "$HOME ${HOME} $(id) `id`",
    "\\",
    "tail\\",
    "%n %% %",
    "$$ $",
    "; & | < > * ? [ ] { } ~ #",
    "x\n---\nkind: Pod",
    "\t\r\x0b\x0c\x1b[31m",
    "ünïcödé ✓",
]
# Random text is mostly harmless letters: mix in the pieces each consumer treats specially.
SPECIAL = [
    "$",
    "$$",
    "(",
    ")",
    "$(HOME)",
    "$(POD_IP)",
    "${HOME}",
    "$HOME",
    "%",
    "%n",
    "%%",
    "\\",
    '"',
    "'",
    ";",
    " ",
    "`",
]


def _text_with(pieces: list[str], chars: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(pieces) | st.text(chars, max_size=3)).map("".join)


ANY_TEXT = _text_with([*SPECIAL, "\n", "\r", "\x85", "\u2028"], st.characters())
# Text a shell argument can carry (no NUL byte).
SHELL_TEXT = _text_with([*SPECIAL, "\n"], st.characters(blacklist_characters="\x00", codec="utf-8"))
# Text a systemd line can carry (no control characters, which are refused).
UNIT_TEXT = _text_with(SPECIAL, st.characters(blacklist_categories=("Cc", "Cs")))


# --- shell --------------------------------------------------------------------------------------------


@given(SHELL_TEXT)
def test_sh_word_reads_back_as_one_unchanged_word(value: str) -> None:
    assert shlex.split(sh_word(value)) == [value]


def test_sh_join_words_reach_a_real_shell_unchanged() -> None:
    script = "printf '%s\\0' " + sh_join(NASTY)
    out = subprocess.run(["sh", "-c", script], capture_output=True, check=True, timeout=30).stdout
    assert out.decode().split("\0")[:-1] == NASTY


def test_shell_names_must_be_identifiers() -> None:
    assert shell_name("VLLM_API_KEY") == "VLLM_API_KEY"
    for bad in ("", "1X", "X-Y", "X}; reboot; #", "é", "A B"):
        with pytest.raises(UserInputError):
            shell_name(bad)
    assert shell_var("POD_IP") == '"${POD_IP}"'
    assert shell_product("LWS_WORKER_INDEX", 2) == '"$((LWS_WORKER_INDEX * 2))"'


# --- comments -----------------------------------------------------------------------------------------


@given(ANY_TEXT)
def test_one_line_text_cannot_end_a_comment(value: str) -> None:
    line = one_line(value)
    assert len(f"# {line}".splitlines()) == 1
    assert yaml.safe_load(f"# {line}\nkey: 1\n") == {"key": 1}


def test_one_line_keeps_the_text_readable() -> None:
    assert one_line("x\n---\nkind: Pod") == "x\\n---\\nkind: Pod"
    assert one_line("a\u2028b\x85c") == "a\\u2028b\\x85c"


# --- Kubernetes and compose ---------------------------------------------------------------------------


@given(ANY_TEXT)
def test_k8s_literal_survives_kubernetes_expansion(value: str) -> None:
    assert k8s_expand(k8s_literal(value), {"HOME": "/root", "POD_IP": "10.0.0.1"}) == value


@given(ANY_TEXT)
def test_compose_escaping_survives_interpolation(value: str) -> None:
    from ascendctl.outputs.render.compose import _escape

    assert compose_unescape(_escape(value)) == value


# --- systemd ------------------------------------------------------------------------------------------


@given(st.lists(UNIT_TEXT, max_size=5))
def test_systemd_exec_arguments_split_back_into_the_argv(args: list[str]) -> None:
    argv = ["/usr/local/bin/ascendctl", *args]
    assert systemd_words(systemd_syntax.exec_line(argv)) == argv


def test_systemd_escapes_specifiers_dollars_and_quotes() -> None:
    assert systemd_syntax.exec_arg("plain-word_1.0") == "plain-word_1.0"
    assert systemd_syntax.exec_arg('%n $HOME "q" \\ ;') == '"%%n $$HOME \\"q\\" \\\\ ;"'
    assert systemd_syntax.exec_arg(";") == '";"'  # a bare `;` would start a second command
    assert systemd_syntax.exec_path("/opt/my tools/%i/ascendctl") == '"/opt/my tools/%%i/ascendctl"'
    assert systemd_syntax.text("50% of %n") == "50%% of %%n"


@pytest.mark.parametrize(
    ("call", "value"),
    [
        (systemd_syntax.exec_path, "relative/ascendctl"),
        (systemd_syntax.exec_path, "-/usr/bin/ascendctl"),
        (systemd_syntax.exec_path, "/opt/$HOME/ascendctl"),
        (systemd_syntax.exec_path, '/opt/"q"/ascendctl'),
        (systemd_syntax.exec_path, "/opt/a\\b"),
        (systemd_syntax.exec_arg, "a\nExecStartPre=/bin/reboot"),
        (systemd_syntax.text, "ok\nExecStartPre=/bin/reboot"),
        (systemd_syntax.text, "joins the next line\\"),
        (systemd_syntax.path, "relative.env"),
    ],
)
def test_systemd_refuses_what_it_cannot_express(call: object, value: str) -> None:
    with pytest.raises(UserInputError):
        call(value)  # type: ignore[operator]


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
def test_systemd_analyze_accepts_every_escaped_setting(tmp_path: Path) -> None:
    # A real executable whose path needs quoting and a specifier escape: verify fails if systemd reads
    # the path differently (it checks the file exists).
    tool = tmp_path / "bin dir %n" / "tool"
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    hostile = [w for w in NASTY if not any(ord(c) < 0x20 for c in w)]
    unit = tmp_path / "escapes.service"
    unit.write_text(
        "[Unit]\n"
        f"Description={systemd_syntax.text('50% of ' + hostile[-1])}\n"
        "[Service]\n"
        f"ExecStart={systemd_syntax.exec_line([str(tool), *hostile])}\n"
        + f"EnvironmentFile=-{systemd_syntax.path(str(tmp_path / '%i.env'))}\n"
    )
    result = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, timeout=60)
    problems = [line for line in result.stderr.splitlines() if unit.name in line]
    assert result.returncode == 0 and not problems, result.stderr


# --- the template guard -------------------------------------------------------------------------------


def test_templates_refuse_a_raw_string() -> None:
    template = environment().from_string("export X={{ value }}\n")
    with pytest.raises(UnquotedValue, match="unquoted str"):
        template.render(value="$(reboot)")
    with pytest.raises(UnquotedValue):
        template.render(value=True)
    with pytest.raises(UnquotedValue):
        environment().from_string("{{ 'literal' }}").render()
    with pytest.raises(UnquotedValue):
        environment().from_string("{{ a ~ b }}").render(a=Quoted("x"), b=Quoted("y"))


def test_templates_pass_quoted_text_and_integers() -> None:
    template = environment().from_string("export X={{ value | sh }} # {{ note | comment }} {{ port }}\n")
    assert template.render(value="$(reboot)", note="a\nb", port=8000) == "export X='$(reboot)' # a\\nb 8000\n"
