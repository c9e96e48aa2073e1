"""Numbers on the home page are measured, not guessed."""

from __future__ import annotations

from helpers import ROOT


def test_home_page_states_the_size_of_python_a_lab_downloads():
    vendor = ROOT / "docs" / "vendor"
    assert (vendor / "manifest.json").is_file(), "run `make build` first (make test does)"
    # What the worker fetches: the Pyodide core, its lock, NumPy's wheel and the labs wheel.
    files = [p for p in (vendor / "pyodide").iterdir() if p.name != "pyodide.mjs"]
    files += list((vendor / "labs").glob("*.whl"))
    total_mb = sum(p.stat().st_size for p in files) / 1e6
    text = (ROOT / "docs" / "index.md").read_text("utf-8")
    assert f"about {round(total_mb)} MB" in text, f"the labs download {total_mb:.1f} MB"
