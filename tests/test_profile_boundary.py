"""Validation at the boundary: what a value *is* is checked once, when the profile loads, with the field and
the rule named (exit 2) — control characters, identifiers, addresses, NIC names, bounds, finite numbers."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from ascendctl.cli import app
from ascendctl.core.errors import DocumentError
from ascendctl.plan.planner import UnsupportedPlan, plan_profile, require_startable
from ascendctl.schema.loader import load_profile

runner = CliRunner()
HEAD = "apiVersion: ascendctl/v1\nkind: Profile\nmetadata: {name: edge}\n"
CPU = "target: {backend: cpu}\n"


def write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "p.yaml"
    path.write_text(body, encoding="utf-8")
    return path


def refused(tmp_path: Path, body: str) -> str:
    path = write(tmp_path, body)
    with pytest.raises(DocumentError) as exc:
        load_profile(path)
    text = "\n".join(i.render() for i in exc.value.issues)
    result = runner.invoke(app, ["validate", str(path)])
    assert result.exit_code == 2 and "Traceback" not in result.output
    return text


@pytest.mark.parametrize(
    ("body", "field", "why"),
    [
        (HEAD + 'model: {source: "org/m\\nrm -rf /"}\n' + CPU, "model.source", "a newline"),
        (HEAD + 'model: {source: "org/m\\u2028x"}\n' + CPU, "model.source", "U+2028"),
        (HEAD + 'model: {source: "org/m\\x1b[2J"}\n' + CPU, "model.source", "U+001B"),
        (HEAD + 'model: {source: m}\n' + CPU + 'engine: {extra_args: ["--x", "a\\nb"]}\n', "engine.extra_args",
         "newline"),
        (HEAD + 'model: {source: m}\n' + CPU + 'runtime: {env: {"BAD NAME": "1"}}\n', "runtime.env", "environment"),
        ("apiVersion: ascendctl/v1\nkind: Profile\nmetadata: {name: 9lives}\nmodel: {source: m}\n" + CPU,
         "metadata.name", "pattern"),
        (HEAD + "model: {source: m}\ntarget: {backend: cpu, nodes: 2}\nnetwork: {nodes: [{address: 10.0.0.300}, "
         "{address: 10.0.0.2}]}\n", "network.nodes[0].address", "not an IPv4"),
        (HEAD + "model: {source: m}\n" + CPU + "network: {interface: averyveryverylongnic0}\n", "network.interface",
         "network interface name"),
        (HEAD + "model: {source: m}\n" + CPU + "network: {interface: 'eth0/x'}\n", "network.interface", "interface"),
        (HEAD + "model: {source: m}\ntarget: {backend: cpu, nodes: 100000}\n", "target.nodes", "less than or equal"),
        (HEAD + "model: {source: m}\ntarget: {backend: cpu, devices_per_node: 1000000}\n", "target.devices_per_node",
         "less than or equal"),
        (HEAD + "model: {source: m}\n" + CPU + "engine: {memory: {cpu_kv_cache_gib: .inf}}\n",
         "engine.memory.cpu_kv_cache_gib", "finite"),
        (HEAD + "model: {source: m}\n" + CPU + "runtime: {ready_timeout: 99999999999}\n", "runtime.ready_timeout",
         "less than or equal"),
        (HEAD + "model: {source: m}\n" + CPU + "runtime: {restart: {backoff_seconds: .nan}}\n",
         "runtime.restart.backoff_seconds", "finite"),
        (HEAD + "model: {source: m}\n" + CPU + 'runtime: {env: {A: "x\\ny"}}\n', "runtime.env.A", "newline"),
        (HEAD + "model: {source: m}\n" + CPU + "server: {host: 'bad host'}\n", "server.host", "host name"),
    ],
)  # fmt: skip
def test_bad_values_are_refused_with_the_field_named(tmp_path: Path, body: str, field: str, why: str) -> None:
    text = refused(tmp_path, body)
    assert field in text and why in text, text


def test_a_lone_surrogate_escape_is_refused_where_it_is_written(tmp_path: Path) -> None:
    # libyaml's scanner refuses the escape itself (PyYAML's pure-Python one let it through to the model, which
    # refused the string): either way no lone surrogate reaches a value
    body = HEAD + 'model: {source: "org/m\\ud800"}\n' + CPU
    text = refused(tmp_path, body)
    line = body.splitlines().index('model: {source: "org/m\\ud800"}') + 1
    assert f"p.yaml:{line}:" in text and ("invalid Unicode character escape" in text or "unicode string" in text), text


def test_good_values_still_load(tmp_path: Path) -> None:
    body = (
        HEAD + "model: {source: /models/Qwen3-8B, served_name: qwen}\n"
        "target: {backend: cpu, nodes: 2}\n"
        "network: {interface: enp189s0f0, nodes: [{address: 192.0.2.10}, {address: 'fd00::2', interface: eth1}]}\n"
        "server: {host: 0.0.0.0}\n"
    )
    profile = load_profile(write(tmp_path, body))
    assert profile.network.nodes[1].address == "fd00::2"


def test_more_devices_than_the_familys_servers_have_is_a_plan_error(tmp_path: Path) -> None:
    body = HEAD + "model: {source: Qwen/Qwen3-8B}\ntarget: {backend: npu, hardware: a2, devices_per_node: 16}\n"
    body += "engine: {parallel: {tensor: 16}}\n"
    with pytest.raises(UnsupportedPlan, match=r"devices_per_node 16 is more than the 8 devices"):
        require_startable(plan_profile(load_profile(write(tmp_path, body))))


def test_validate_refuses_a_fifo_without_waiting(tmp_path: Path) -> None:
    import os

    fifo = tmp_path / "p.yaml"
    os.mkfifo(fifo)
    result = runner.invoke(app, ["validate", str(fifo)])
    assert result.exit_code == 2 and "not a regular file" in result.output
