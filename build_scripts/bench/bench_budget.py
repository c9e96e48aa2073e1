"""`make bench`, page bytes: what each page of the built site sends before a lab starts, and
the lab payload, next to its budget in build_scripts/gates/budget.json (measured by the
site gate, build_scripts/gates/check_site.py, in headless Chromium). A benchmark, not a
test: it asserts nothing (the gate does).

Usage: python -m build_scripts.bench.bench_budget
"""

from __future__ import annotations

import sys
from pathlib import Path

from build_scripts.bench.contract import Row, run_alone

ROOT = Path(__file__).resolve().parents[2]


def rows(args) -> list[Row]:
    """Bytes per page (build_scripts/gates/check_site.py), next to the budget in budget.json."""
    import yaml
    from playwright.sync_api import sync_playwright

    from build_scripts.gates.browser import launch
    from build_scripts.gates.check_site import budget_for, check_site, load_budget

    site_url = yaml.safe_load((ROOT / "mkdocs.yml").read_text("utf-8")).get("site_url")
    budget = load_budget()
    with sync_playwright() as pw:
        browser = launch(pw)
        try:
            report = check_site(ROOT / "site", browser, schemes=("light",), site_url=site_url)
        finally:
            browser.close()
    out = []
    for r in report.bytes:
        limits = budget_for(budget, r.page)
        out.append(
            Row(
                f"page /{r.page}",
                "HTML+CSS+JS before a lab starts",
                f"{r.initial_sent / 1000:.0f} kB sent, {r.initial_raw / 1000:.0f} kB uncompressed",
                f"budget {limits['initial_kb']} kB sent",
            )
        )
        heavy = r.heavy_code_sent()
        out.append(
            Row(
                f"page /{r.page}",
                "explorer, cells and editor code before a lab starts",
                f"{heavy / 1000:.0f} kB sent" if heavy else "none",
                "site code fetched: " + ", ".join(sorted(r.code)),
            )
        )
        if r.payload is not None:
            out.append(
                Row(
                    f"page /{r.page}",
                    "lab payload (Pyodide, NumPy, labs wheel)",
                    f"{r.payload / 1e6:.1f} MB uncompressed",
                    f"budget {limits['lab_payload_mb']} MB",
                )
            )
    return out


def main(argv=None) -> int:
    return run_alone(rows, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
