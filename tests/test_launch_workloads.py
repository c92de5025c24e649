"""`--workload launch:CASE[@TAG[/HARDWARE]]` against the real launch data (ascendctl/facts/data/launches): the
measured performance entries become points (warm-ups skipped, 0 req/s unpaced), the tag and hardware choice, the
one-line errors, the caveat in the bench document, and `ascendctl bench` printing it (with the stand-in load client
of tests/bench_fakes.py). The run against a real engine is tests/e2e/test_serve_e2e.py::test_bench_a_launch_workload.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ascendctl.cli import app
from ascendctl.core.errors import UserInputError
from ascendctl.facts import launches
from ascendctl.facts.launches import Launch, content_of, launch_index
from ascendctl.importer import launch_scripts
from ascendctl.plan import workload as workload_module
from ascendctl.plan.workload import NAMED, WorkloadPoint, parse_workload
from ascendctl_engine.versions import parse as parse_version
from tests.bench_fakes import make_client

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "profiles" / "cpu-demo.yaml"
URL = "http://127.0.0.1:9"  # nothing listens: the stand-in client never connects
MINIMAX_256 = "vllm-ascend/GSM8K-in256-bs1-Minimax"  # the smallest measured load upstream has: 256 in, 1 prompt


# ----------------------------------------------------------------------------------------- the data, read plainly


def is_warm_up(name: str) -> bool:
    return "warm" in name or name == "perf_wram_up"  # upstream spells one warm-up so


@functools.cache  # the helpers below look at every launch more than once
def performance(launch: Launch) -> list[Mapping[str, Any]]:
    return list(content_of(launch)["benchmarks"]["performance"])


def measured(launch: Launch) -> list[Mapping[str, Any]]:
    return [e for e in performance(launch) if not is_warm_up(e["name"])]


def point_of(entry: Mapping[str, Any]) -> WorkloadPoint:
    rate = entry["request_rate"] or None
    return WorkloadPoint(entry["input_len"], entry["max_out_len"], entry["batch_size"], entry["num_prompts"], rate)


def at(case: str, tag: str) -> list[Launch]:
    return [launch for launch in launch_index() if (launch.case, launch.tag) == (case, tag)]


def alone(launch: Launch) -> bool:
    """The only launch of its case at its tag (so the case@tag means exactly this launch)."""
    return at(launch.case, launch.tag) == [launch]


def first(launches: Iterator[Launch], what: str) -> Launch:
    found = next(launches, None)
    assert found is not None, f"the launch data has no {what}"
    return found


def minimax_256() -> Launch:
    """The launch that measures `MINIMAX_256`."""
    return first((la for la in launch_index() if any(e["dataset"] == MINIMAX_256 for e in measured(la))), MINIMAX_256)


def error(text: str) -> str:
    with pytest.raises(UserInputError) as caught:
        parse_workload(text)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"--workload {text}: ")
    return message


# ------------------------------------------------------------------------------------------------ points


def test_the_in256_minimax_case_is_its_one_measured_entry() -> None:
    launch = minimax_256()
    [entry] = measured(launch)
    workload = parse_workload(f"launch:{launch.case}@{launch.tag}")
    assert entry["request_rate"] == 0  # AISBench's "unpaced"
    assert workload.points == (WorkloadPoint(256, entry["max_out_len"], entry["batch_size"], entry["num_prompts"]),)
    assert workload.points[0].request_rate is None
    assert (workload.name, workload.seed) == (f"launch:{launch.case}@{launch.tag}", 0)
    assert workload.source == f"{launch.tag}:{launch.file}:{launch.line} ({MINIMAX_256})"
    assert workload.description.endswith(
        f"input 256 tokens read from the dataset name {MINIMAX_256}; random prompts, not the dataset's text"
    )


def test_several_measured_entries_are_points_in_order_and_warm_ups_are_not() -> None:
    def fits(la: Launch) -> bool:
        points = [point_of(e) for e in measured(la)]
        replayable = all(e["input_len"] for e in measured(la))
        return alone(la) and len(set(points)) == len(points) >= 2 and replayable and len(performance(la)) > len(points)

    launch = first(filter(fits, launch_index()), "case with several measured entries and a warm-up")
    workload = parse_workload(f"launch:{launch.case}@{launch.tag}")
    assert workload.points == tuple(point_of(e) for e in measured(launch))
    warm_ups = [point_of(e) for e in performance(launch) if is_warm_up(e["name"])]
    assert warm_ups and not set(warm_ups) & set(workload.points)


def test_a_paced_entry_keeps_its_request_rate() -> None:
    def paced(la: Launch) -> bool:
        entries = measured(la)
        return alone(la) and len(entries) == 1 and bool(entries[0]["input_len"]) and bool(entries[0]["request_rate"])

    launch = first(filter(paced, launch_index()), "case measured at a fixed request rate")
    [entry] = measured(launch)
    [point] = parse_workload(f"launch:{launch.case}@{launch.tag}").points
    assert point.request_rate == entry["request_rate"] > 0 and point.label.endswith(f"@{entry['request_rate']:g}/s")


def test_the_misspelt_perf_wram_up_is_a_warm_up_too() -> None:
    launch = first((la for la in launch_index() if any(e["name"] == "perf_wram_up" for e in performance(la))), "wram")
    [warm_up] = [e for e in performance(launch) if e["name"] == "perf_wram_up"]
    workload = parse_workload(f"launch:{launch.case}@{launch.tag}")
    assert point_of(warm_up) not in workload.points
    assert workload.points == tuple(point_of(e) for e in measured(launch))


def test_entries_differing_only_in_their_dataset_are_one_point() -> None:
    # prefix0 / prefix75 of one length: the same load with random prompts, and one label (one result file)
    def twins(la: Launch) -> bool:
        points = [point_of(e) for e in measured(la)]
        return alone(la) and all(e["input_len"] for e in measured(la)) and len(set(points)) < len(points)

    launch = first(filter(twins, launch_index()), "case with two entries of one shape")
    workload = parse_workload(f"launch:{launch.case}@{launch.tag}")
    assert workload.points == tuple(dict.fromkeys(point_of(e) for e in measured(launch)))
    assert all(e["dataset"] in workload.source for e in measured(launch))


# ------------------------------------------------------------------------------------------------ tag and hardware


def measured_tags(case: str) -> list[str]:
    tags = {la.tag for la in launch_index() if la.case == case and measured(la)}
    return sorted(tags, key=parse_version, reverse=True)


def test_without_a_tag_the_newest_measured_tag_and_at_tag_that_tag() -> None:
    def older_differs(la: Launch) -> bool:
        if not (measured(la) and alone(la) and all(e["input_len"] for e in measured(la))):
            return False
        [newest] = measured_tags(la.case)[:1]
        return la.tag != newest and all(
            alone(other) and [point_of(e) for e in measured(other)] != [point_of(e) for e in measured(la)]
            for other in at(la.case, newest)
        )

    older = first(filter(older_differs, launch_index()), "case whose workload changed between tags")
    newest = parse_workload(f"launch:{older.case}")
    assert newest.name == f"launch:{older.case}@{measured_tags(older.case)[0]}"
    picked = parse_workload(f"launch:{older.case}@{older.tag}")
    assert picked.name == f"launch:{older.case}@{older.tag}" and picked.source.startswith(f"{older.source} (")
    assert picked.points == tuple(point_of(e) for e in measured(older)) != newest.points
    assert parse_workload(f"launch:{older.case}@{older.tag.removeprefix('v')}") == picked  # pip spelling too


def hardware_split() -> tuple[str, str, dict[str, Launch]]:
    """A case and tag that upstream measures with different loads on two hardware families."""
    for launch in launch_index():
        by_hw = {la.hardware: la for la in at(launch.case, launch.tag) if measured(la)}
        loads = {hw: tuple(point_of(e) for e in measured(la)) for hw, la in by_hw.items()}
        replayable = all(e["input_len"] for la in by_hw.values() for e in measured(la))
        if len(by_hw) == len(at(launch.case, launch.tag)) == 2 and len(set(loads.values())) == 2 and replayable:
            return launch.case, launch.tag, by_hw
    raise AssertionError("the launch data has no case measured differently on two hardware families")


def test_ambiguous_hardware_names_the_choices_and_hardware_picks_one() -> None:
    case, tag, by_hw = hardware_split()
    message = error(f"launch:{case}@{tag}")
    for hw in by_hw:
        assert f"launch:{case}@{tag}/{hw}" in message
    for hw, launch in by_hw.items():
        workload = parse_workload(f"launch:{case}@{tag}/{hw}")
        assert workload.name == f"launch:{case}@{tag}/{hw}" and workload.source.startswith(launch.source)
        assert workload.points == tuple(point_of(e) for e in measured(launch))
        assert parse_workload(workload.name) == workload


def test_hardware_without_a_tag_takes_its_newest() -> None:
    case, _, by_hw = hardware_split()
    hw = sorted(by_hw)[0]
    on_hw = [la.tag for la in launch_index() if la.case == case and la.hardware == hw and measured(la)]
    newest = max(on_hw, key=parse_version)
    assert parse_workload(f"launch:{case}/{hw}").name == f"launch:{case}@{newest}/{hw}"


def test_every_launch_resolves_or_says_why_in_one_line() -> None:
    for case, tag, hw in sorted({(la.case, la.tag, la.hardware) for la in launch_index()}):
        for text in (f"launch:{case}@{tag}/{hw}", f"launch:{case}"):
            try:
                workload = parse_workload(text)
            except UserInputError as exc:
                assert "\n" not in str(exc)
                continue
            labels = [p.label for p in workload.points]
            assert workload.points and len(set(labels)) == len(labels), text
            assert workload.caveat and parse_workload(workload.name) == workload, text


# ------------------------------------------------------------------------------------------------ errors


def test_an_unknown_case_suggests_close_names() -> None:
    launch = minimax_256()
    typo = launch.case[:-1] + ("x" if launch.case[-1] != "x" else "y")
    assert f"did you mean {launch.case}" in error(f"launch:{typo}")


def test_a_case_that_measures_nothing_says_so() -> None:
    never = first((la for la in launch_index() if not measured_tags(la.case)), "case without a measured entry")
    assert "no measured performance entry at any tag" in error(f"launch:{never.case}")
    somewhere = first(
        (la for la in launch_index() if measured_tags(la.case) and not any(measured(o) for o in at(la.case, la.tag))),
        "case measured at one tag and not another",
    )
    message = error(f"launch:{somewhere.case}@{somewhere.tag}")
    assert f"no measured performance entry at {somewhere.tag}" in message
    assert measured_tags(somewhere.case)[0] in message


def test_real_dataset_text_cannot_be_replayed() -> None:
    def real_text_only(la: Launch) -> bool:
        return all(not e["input_len"] for other in at(la.case, la.tag) for e in measured(other)) and bool(measured(la))

    launch = first(filter(real_text_only, launch_index()), "case measured on real dataset text only")
    message = error(f"launch:{launch.case}@{launch.tag}/{launch.hardware}")
    assert "real dataset text cannot be reproduced with random prompts" in message
    assert measured(launch)[0]["dataset"] in message


def test_unknown_tag_hardware_and_malformed_specs() -> None:
    launch = minimax_256()
    message = error(f"launch:{launch.case}@v0.0.1")
    assert "has no launch at v0.0.1; it has launches at " in message and launch.tag in message
    other = next(hw for hw in sorted({la.hardware for la in launch_index()}) if hw != launch.hardware)
    assert f"runs on {launch.hardware}, not {other}" in error(f"launch:{launch.case}@{launch.tag}/{other}")
    for text in ("launch:", "launch:@v0.1.0", f"launch:{launch.case}@", f"launch:{launch.case}@{launch.tag}/"):
        assert "expected launch:CASE[@TAG[/HARDWARE]]" in error(text)


@pytest.mark.parametrize(
    ("bound", "what"),
    [("MAX_TOKENS", "input length"), ("MAX_CONCURRENCY", "batch_size"), ("MAX_REQUESTS", "num_prompts")],
)
def test_values_outside_the_bounds_are_refused(monkeypatch: pytest.MonkeyPatch, bound: str, what: str) -> None:
    launch = minimax_256()
    [entry] = measured(launch)
    value = {"MAX_TOKENS": entry["input_len"], "MAX_CONCURRENCY": entry["batch_size"]}.get(bound, entry["num_prompts"])
    monkeypatch.setattr(workload_module, bound, value - 1 if value > 1 else 0)
    message = error(f"launch:{launch.case}@{launch.tag}")
    assert what in message and launch.source in message


# ------------------------------------------------------------------------------------------------ caveat and CLI


def test_the_caveat_is_in_the_json_and_names_what_differs() -> None:
    launch = minimax_256()
    workload = parse_workload(f"launch:{launch.case}@{launch.tag}")
    caveat = workload.to_json()["caveat"]
    assert caveat == workload.caveat and caveat.startswith("Not comparable to upstream's absolute numbers")
    for said in (launch.model, launch.layout, launch.tag, "random prompts"):
        assert said in caveat
    assert all(w.to_json()["caveat"] == "" for w in NAMED.values())


def test_a_shared_prefix_dataset_says_prefix_caching_is_not_measured() -> None:
    def prefix90(la: Launch) -> bool:
        return alone(la) and bool(measured(la)) and all("prefix90" in e["dataset"] for e in measured(la))

    launch = first(filter(prefix90, launch_index()), "prefix90 case")
    assert "share a 90% prefix" in parse_workload(f"launch:{launch.case}@{launch.tag}").caveat


def test_content_of_is_the_facts_and_still_the_importers() -> None:
    assert launch_scripts.content_of is launches.content_of


def bench(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["bench", *args])
    return result.exit_code, result.stdout, result.stderr


def test_bench_prints_the_caveat_and_old_documents_still_compare(tmp_path: Path) -> None:
    launch = minimax_256()
    spec = f"launch:{launch.case}@{launch.tag}"
    client = make_client(tmp_path / "env")
    code, out, err = bench(str(DEMO), "--url", URL, "--client", str(client), "--workload", spec)
    assert code == 0, err
    caveat = parse_workload(spec).caveat
    assert out.index("E2E latency") < out.index(caveat)  # after the tables
    code, out, err = bench(str(DEMO), "--url", URL, "--client", str(client), "--workload", spec, "--json")
    assert code == 0, err
    new = json.loads(out)
    assert (new["workload"]["name"], new["workload"]["caveat"]) == (spec, caveat)
    old = {**new, "workload": {k: v for k, v in new["workload"].items() if k != "caveat"}}  # before `caveat`
    paths = [tmp_path / "old.json", tmp_path / "new.json"]
    for path, doc in zip(paths, (old, new), strict=True):
        path.write_text(json.dumps(doc))
    code, out, err = bench("--compare", *map(str, paths), "--json")
    assert code == 0, err
    assert [run["workload"] for run in json.loads(out)["runs"]] == [spec, spec]


def test_bench_refuses_a_bad_launch_in_one_line(tmp_path: Path) -> None:
    code, _, err = bench(str(DEMO), "--url", URL, "--client", str(make_client(tmp_path / "env")), "-w", "launch:nope")
    assert code == 2 and err.startswith("error: --workload launch:nope: ") and err.count("\n") == 1, err
