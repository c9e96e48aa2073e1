"""`make bench` writes one Markdown table (build_scripts/bench/bench_report.py) with every
benchmark and the machine; the About page shows the committed copy. Every benchmark keeps
one contract (build_scripts/bench/contract.py): a module whose ``rows(args)`` returns rows,
rendered by one renderer. Nothing here times anything: benchmarks measure, tests check the
report's shape."""

import argparse
import importlib
import inspect
import subprocess

from helpers import ROOT, SITE

from build_scripts.bench import bench_pictures, bench_report, bench_startup, bench_suite, contract
from build_scripts.bench.bench_report import (
    OPT_IN,
    OUT,
    SECTIONS,
    Row,
    machine,
    render,
    section,
    write_report,
)

INFO = {"CPU": "Test CPU", "cores": "2", "OS": "Linux", "browser": "Chromium 1", "Python": "3"}


def test_one_table_with_every_row_and_the_machine(tmp_path):
    rows = [
        Row("lab", "Python ready", "5.5 s (5.0–6.0)", "5 runs"),
        Row("page /", "HTML+CSS+JS", "193 kB", "budget | 500 kB"),
    ]
    out = write_report(rows, INFO, tmp_path / "REPORT.md", when="2026-01-01 00:00 UTC")
    text = out.read_text("utf-8")
    lines = text.splitlines()
    assert lines[0] == "## Benchmark report"
    for key, value in INFO.items():
        assert f"{key} {value}" in text
    table = [line for line in lines if line.startswith("|")]
    assert table[0] == "| benchmark | measure | value | notes |"
    assert table[2] == "| lab | Python ready | 5.5 s (5.0–6.0) | 5 runs |"
    assert table[3] == "| page / | HTML+CSS+JS | 193 kB | budget \\| 500 kB |"  # escaped
    assert len(table) == 2 + len(rows)


def test_a_new_benchmark_is_a_module_whose_rows_function_returns_rows():
    assert {"build", "budget", "lab", "startup", "precompute", "explorer"} <= set(SECTIONS)
    for name, module in SECTIONS.items():
        source = (ROOT / "build_scripts" / "bench" / f"{module}.py").read_text("utf-8")
        # one contract: rows(args) -> list[Row], and no report, global or table of its own
        assert "\ndef rows(args) -> list[Row]:" in source, name
        assert "bench_report import" not in source and "RESULTS" not in source, name
        assert "--out" not in source and "| measure | value |" not in source, name
    assert render([], INFO, "now").count("\n| ") == 2  # header only: sections add the rows


def test_the_report_runs_each_section_by_its_module():
    module = importlib.import_module("build_scripts.bench.bench_startup")
    assert section("startup") is module.rows
    assert inspect.signature(module.rows).parameters.keys() == {"args"}


def test_startup_rows_take_the_site_and_the_baseline_by_name_not_position(monkeypatch):
    """The start-up section's ratios and worker steps come from the variants named BASELINE
    and SITE (from navigation: NAV_BASELINE and NAV_SITE), wherever they are in the
    results."""
    profile = {"steps": [["loadPyodide", 900.0]], "after": [], "downloads": [["a.wasm", 500.0]]}
    site = [{"ok": True, "ms": 2.0, "profile": profile}] * 2

    def variant(cold, extra=()):
        return {"cold": [cold] * 2, "repeat": [cold] * 2, "bytes": 1e6, "extra": list(extra)}

    nav = [
        {"ok": True, "ms": 2400.0, "first": 2600.0, "initial": 700.0, "dcl": 750.0, "start": 90.0}
    ]
    results = {  # the site first, the baselines last: not the order run() gives
        bench_startup.SITE: variant(1000.0, site),
        bench_startup.NAV_SITE: variant(2400.0, nav * 2),
        "other": variant(1500.0),
        bench_startup.BASELINE: variant(4000.0),
        bench_startup.NAV_BASELINE: variant(4800.0),
    }
    monkeypatch.setattr(bench_startup, "run", lambda runs: results)
    rows = bench_startup.rows(argparse.Namespace(runs=2))
    cold = {r.benchmark: r.notes for r in rows if r.measure == "Python ready, cold"}
    assert "0.25× baseline" in cold[f"start-up, {bench_startup.SITE}"]
    assert "baseline" not in cold[f"start-up, {bench_startup.BASELINE}"]
    # from navigation: against the baseline timed from navigation too
    assert "0.50× baseline" in cold[f"start-up, {bench_startup.NAV_SITE}"]
    assert "baseline" not in cold[f"start-up, {bench_startup.NAV_BASELINE}"]
    first = [r for r in rows if r.measure == "first recompute shown, cold"]
    assert len(first) == 1 and "0.54× the baseline's Python ready" in first[0].notes
    assert ("start-up, the site's worker, step by step", "loadPyodide", "900 ms (900–900)") in [
        (r.benchmark, r.measure, r.value) for r in rows
    ]


def test_pictures_has_a_row_for_every_lesson_with_a_lab(monkeypatch):
    """One row per lesson page of the built site with a lab: its first lab's picture over
    its DOMContentLoaded, named with the page and its first lab."""
    lessons = bench_pictures.lesson_pages(SITE)
    assert len(lessons) >= 12 and lessons["lessons/03-attention-pattern/"][0] == "attention_pattern"
    visits = [{"dcl": 1000.0, "picture": 900.0}, {"dcl": 800.0, "picture": 880.0}]
    monkeypatch.setattr(bench_pictures, "run", lambda runs, site: dict.fromkeys(lessons, visits))
    rows = bench_pictures.rows(argparse.Namespace(runs=2))
    assert [r.benchmark for r in rows] == [
        f"first picture, {path.split('/')[1]}" for path in lessons
    ]
    assert {r.measure for r in rows} == {"lab's first picture / page's DOMContentLoaded"}
    assert rows[2].value == "1.00× (0.90–1.10)"
    assert "first lab attention_pattern" in rows[2].notes and "target ≤ 1.0×" in rows[2].notes


def test_a_module_run_alone_prints_the_reports_table(capsys):
    rows = [Row("x", "wall time (median)", "0.5 s"), Row("x", "n", "3", "a | b")]
    assert contract.run_alone(lambda args: rows, "A bench.\n\nMore.", ["--runs", "1"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed == contract.table(rows)
    assert printed[-1] == "| x | n | 3 | a \\| b |"
    # the same lines the report holds
    report = render(rows, INFO, "now").splitlines()
    assert report[-len(printed) :] == printed


def test_machine_names_cpu_cores_os_browser_and_python():
    info = machine(browser="headless Chromium 0")
    assert list(info) == ["CPU", "cores", "OS", "browser", "Python", "load average"]
    assert all(value.strip() for value in info.values())
    assert int(info["cores"]) >= 1


def test_the_report_is_committed_and_shown_on_the_about_page():
    tracked = subprocess.run(
        ["git", "ls-files", "--error-unmatch", str(OUT.relative_to(ROOT))],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert tracked.returncode == 0, "commit bench-results/REPORT.md (make bench writes it)"
    about = (SITE / "about" / "index.html").read_text("utf-8")
    assert "Benchmark report" in about and "<table>" in about
    first_row = next(
        line
        for line in OUT.read_text("utf-8").splitlines()
        if line.startswith("| ") and "---" not in line
    )
    assert first_row.split("|")[1].strip() in about


def test_merge_replaces_the_rerun_benchmarks_in_place_and_keeps_the_rest(tmp_path):
    """``--merge`` (one section rerun after a change): the earlier report's heading and its
    other rows stay; the rows of each benchmark measured again take its old rows' place."""
    out = tmp_path / "REPORT.md"
    old = [
        Row("site build", "warm", "5 s"),
        Row("lab a", "default", "9 ms", "x | y"),
        Row("lab a", "largest", "40 ms"),
        Row("page /", "bytes", "1 kB"),
    ]
    write_report(old, INFO, out, when="2026-01-01 00:00 UTC")
    new = [Row("lab a", "default", "7 ms"), Row("lab b", "default", "3 ms")]
    write_report(
        new, dict(INFO, **{"load average": "0.5"}), out, when="later", merge=True, ran=["labs"]
    )
    text = out.read_text("utf-8")
    assert "Written by `make bench` on 2026-01-01 00:00 UTC" in text
    assert "Rerun on later with `--merge` (load average 0.5): `labs`." in text
    table = [line for line in text.splitlines() if line.startswith("| ")]
    assert table[2:] == [
        "| site build | warm | 5 s |  |",
        "| lab a | default | 7 ms |  |",
        "| page / | bytes | 1 kB |  |",
        "| lab b | default | 3 ms |  |",
    ]


def test_a_plain_bench_carries_the_opt_in_suite_rows_over_until_they_are_rerun(tmp_path):
    """`make bench` leaves out the half-hour suite section (OPT_IN) and keeps its rows from
    the report it replaces; every other old row goes."""
    out = tmp_path / "REPORT.md"
    suite = Row(bench_suite.BENCHMARK, "pytest: every test", "9.5 min", "2,700 passed")
    write_report([Row("site build", "warm", "5 s"), suite], INFO, out, when="before")
    write_report([Row("site build", "warm", "4 s")], INFO, out, when="after", ran=["build"])
    table = [line for line in out.read_text("utf-8").splitlines() if line.startswith("| ")]
    assert table[2:] == [
        "| site build | warm | 4 s |  |",
        f"| {bench_suite.BENCHMARK} | pytest: every test | 9.5 min | 2,700 passed |",
    ]
    # run again, the suite's new rows replace the carried ones
    write_report(
        [Row(bench_suite.BENCHMARK, "pytest: every test", "8 min")],
        INFO,
        out,
        when="x",
        ran=["suite"],
    )
    assert "9.5 min" not in out.read_text("utf-8")


def test_a_plain_bench_runs_every_section_but_the_opt_in_ones(tmp_path, monkeypatch):
    ran = []
    monkeypatch.setattr(bench_report, "machine", lambda: INFO)
    monkeypatch.setattr(bench_report, "section", lambda name: lambda args: ran.append(name) or [])
    assert bench_report.main(["--out", str(tmp_path / "R.md")]) == 0
    assert ran == [name for name in SECTIONS if name not in OPT_IN]
    assert OPT_IN == {"suite": bench_suite.BENCHMARK} and "suite" in SECTIONS


def test_a_merge_on_another_machine_names_what_differs_from_the_headings(tmp_path):
    out = tmp_path / "REPORT.md"
    write_report([Row("lab a", "default", "9 ms")], INFO, out, when="first")
    other = dict(INFO, **{"CPU": "Other CPU", "cores": "24", "load average": "0.1"})
    write_report(
        [Row("lab a", "default", "2 ms")], other, out, when="last", merge=True, ran=["labs"]
    )
    assert (
        "Rerun on last with `--merge` (on another machine: CPU Other CPU; cores 24; "
        "load average 0.1): `labs`." in out.read_text("utf-8")
    )
