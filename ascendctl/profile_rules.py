"""Cross-field rules of a profile that need no support matrix and no host. Pure functions."""

from __future__ import annotations

from ascendctl.models.profile import Profile
from ascendctl.yamlio import KeyPath

Problem = tuple[KeyPath, str]


def cross_field_problems(profile: Profile) -> list[Problem]:
    problems: list[Problem] = []
    problems += _target_rules(profile)
    problems += _parallel_rules(profile)
    problems += _eplb_rules(profile)
    problems += _network_rules(profile)
    return problems


def _target_rules(p: Profile) -> list[Problem]:
    out: list[Problem] = []
    t = p.target
    if t.backend == "npu" and t.hardware is None:
        out.append((("target", "hardware"), "backend `npu` needs a hardware family: a2, a3, 300i-duo or 950"))
    if t.backend != "npu" and t.hardware is not None:
        out.append(
            (
                ("target", "hardware"),
                f"hardware families are Ascend NPUs; remove it for backend `{t.backend}`",
            )
        )
    if t.visible_devices is not None:
        if len(t.visible_devices) != t.devices_per_node:
            out.append(
                (
                    ("target", "visible_devices"),
                    f"lists {len(t.visible_devices)} devices but devices_per_node is {t.devices_per_node}",
                )
            )
        if len(set(t.visible_devices)) != len(t.visible_devices):
            out.append((("target", "visible_devices"), "a device id is listed twice"))
    if t.hardware == "300i-duo" and p.model.dtype not in ("auto", "float16"):
        out.append((("model", "dtype"), f"Atlas 300I Duo runs float16 only, not {p.model.dtype}"))
    return out


def _parallel_rules(p: Profile) -> list[Problem]:
    out: list[Problem] = []
    par, t = p.engine.parallel, p.target
    world = par.tensor * par.pipeline * par.data
    capacity = t.devices_per_node * t.nodes
    if world > capacity:
        out.append(
            (
                ("engine", "parallel"),
                f"tensor×pipeline×data = {par.tensor}×{par.pipeline}×{par.data} = {world} ranks, but the target has "
                f"{t.devices_per_node} devices × {t.nodes} nodes = {capacity}",
            )
        )
    if par.data_per_node is not None:
        if par.data % par.data_per_node:
            out.append(
                (
                    ("engine", "parallel", "data_per_node"),
                    f"{par.data_per_node} does not divide data = {par.data}",
                )
            )
        elif par.data_per_node * par.tensor * par.pipeline > t.devices_per_node:
            out.append(
                (
                    ("engine", "parallel", "data_per_node"),
                    f"{par.data_per_node} ranks × tensor {par.tensor} × pipeline {par.pipeline} need more than "
                    f"the {t.devices_per_node} devices of a node",
                )
            )
    elif t.nodes > 1 and par.data > 1 and par.data % t.nodes:
        out.append((("engine", "parallel", "data"), f"data = {par.data} cannot be split evenly over {t.nodes} nodes"))
    return out


def _eplb_rules(p: Profile) -> list[Problem]:
    out: list[Problem] = []
    eplb = p.engine.eplb
    if eplb.mode != "off" and not p.engine.parallel.expert:
        out.append(
            (
                ("engine", "eplb", "mode"),
                "EPLB balances experts across EP ranks: set engine.parallel.expert: true",
            )
        )
    if eplb.mode == "static" and not eplb.expert_map_path:
        out.append((("engine", "eplb", "expert_map_path"), "static EPLB replays an expert map: set expert_map_path"))
    optional = ("expert_map_path", "record_path", "heat_collection_interval", "algorithm_interval", "policy_type")
    given = ["redundant_experts"] if eplb.redundant_experts else []
    given += [name for name in optional if getattr(eplb, name) is not None]
    if eplb.mode == "off" and given:
        out.append((("engine", "eplb", "mode"), f"EPLB settings are given ({', '.join(given)}) but mode is `off`"))
    return out


def _network_rules(p: Profile) -> list[Problem]:
    out: list[Problem] = []
    nodes = p.network.nodes
    if nodes and len(nodes) != p.target.nodes:
        out.append((("network", "nodes"), f"lists {len(nodes)} node addresses but target.nodes is {p.target.nodes}"))
    if p.server.port in (p.network.dp_rpc_port,) and p.target.nodes > 1:
        out.append((("server", "port"), "the API port equals network.dp_rpc_port"))
    return out
