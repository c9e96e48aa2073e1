"""`make bench` writes one Markdown table (build_scripts/bench_report.py) with every
benchmark and the machine; the About page shows the committed copy. Nothing here times
anything: benchmarks measure, tests check the report's shape."""

import subprocess

from bench_report import OUT, SECTIONS, Row, machine, render, rows_from_table, write_report
from helpers import ROOT, SITE

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


def test_a_new_benchmark_is_one_function_returning_rows():
    assert {"build", "budget", "lab", "precompute", "explorer"} <= set(SECTIONS)
    assert all(callable(section) for section in SECTIONS.values())
    assert render([], INFO, "now").count("\n| ") == 2  # header only: sections add the rows


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


def test_a_script_with_its_own_two_column_table_becomes_rows():
    text = "## X\n\n| measure | value |\n|---|---|\n| wall time (median) | 0.5 s |\n| n | 3 |\n"
    assert rows_from_table(text, "x") == [
        Row("x", "wall time (median)", "0.5 s"),
        Row("x", "n", "3"),
    ]
