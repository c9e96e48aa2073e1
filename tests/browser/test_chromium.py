"""How the tools and tests launch Chromium (build_scripts/gates/browser.py): Playwright's own
disabled features kept, and the browser UI that no page uses left off."""

from __future__ import annotations

import os
from pathlib import Path

from build_scripts.gates.browser import DISABLED_FEATURES, PLAYWRIGHT_DISABLED_FEATURES

SWITCH = "--disable-features="


def our_browsers() -> list[list[str]]:
    """The command lines of the Chromium browser processes that this process started (through
    Playwright's driver), read from /proc."""
    parents = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:  # "pid (name) state ppid ...": the name may hold spaces and parentheses
            parents[int(entry.name)] = int(
                (entry / "stat").read_text().rsplit(")", 1)[1].split()[1]
            )
        except (OSError, ValueError, IndexError):
            continue  # a process that ended meanwhile
    ours, grew = {os.getpid()}, True
    while grew:
        more = {pid for pid, parent in parents.items() if parent in ours} - ours
        ours |= more
        grew = bool(more)
    found = []
    for pid in ours - {os.getpid()}:
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
        except OSError:
            continue
        if "--remote-debugging-pipe" in argv and not any(a.startswith("--type=") for a in argv):
            found.append(argv)
    return found


def test_chromium_keeps_playwrights_disabled_features_and_adds_ours(browser):
    # Chromium applies only the last --disable-features: ours must hold all of Playwright's
    # (its own comes first on the command line), or a Playwright upgrade silently turned
    # some back on: then copy its new list into PLAYWRIGHT_DISABLED_FEATURES.
    (argv,) = our_browsers()
    lists = [a.removeprefix(SWITCH).split(",") for a in argv if a.startswith(SWITCH)]
    playwrights, applied = set(lists[0]), set(lists[-1])
    assert playwrights <= applied, sorted(playwrights - applied)
    assert set(PLAYWRIGHT_DISABLED_FEATURES) == playwrights, "update PLAYWRIGHT_DISABLED_FEATURES"
    assert set(DISABLED_FEATURES) <= applied


def test_a_new_context_starts_no_address_bar_popup(browser):
    context = browser.new_context()
    try:
        context.new_page().goto("data:text/html,<p>A page</p>")
        session = browser.new_browser_cdp_session()
        targets = session.send("Target.getTargets")["targetInfos"]
        session.detach()
    finally:
        context.close()
    # the targets were listed (another module's open page, if any, is no concern here)
    assert "data:text/html,<p>A page</p>" in [t["url"] for t in targets if t["type"] == "page"]
    assert not [t["url"] for t in targets if "omnibox" in t["url"]], targets
