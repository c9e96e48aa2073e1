"""Launching Debian's Chromium with Playwright: one place for tools and tests.

``chromium_path()`` finds the browser (no Playwright download, ever) and raises
:class:`BrowserNotFound` naming the package to install; ``CHROMIUM_ARGS`` keep it headless,
off the network and without the browser UI that no page uses; ``launch(playwright)`` does
both. The gates (check_site.py), the benchmarks and tests/conftest.py all import from here.
"""

from __future__ import annotations

import shutil

# Chromium keeps only the last --disable-features on its command line, and Playwright passes
# one of its own, so this one repeats Playwright's (1.65, its chromiumSwitches.ts; what each is
# for is said there) and adds ours; tests/browser/test_chromium.py checks that it still holds
# every feature Playwright disables.
PLAYWRIGHT_DISABLED_FEATURES = (
    "AvoidUnnecessaryBeforeUnloadCheckSync",
    "DestroyProfileOnBrowserClose",
    "HttpsUpgrades",
    "HttpsFirstBalancedModeAutoEnable",
    "LensOverlay",
    "MediaRouter",
    "PaintHolding",
    "ThirdPartyStoragePartitioning",
    "AvoidCorsURLLoaderRestartOnRedirect",
    "TcpPortRandomizationWin",
    "OptimizationHints",
    "NetworkTimeServiceQuerying",
    "AimEnabled",
    "PreconnectToSearch",
    "msForceBrowserSignIn",
    "msEdgeUpdateLaunchServicesPreferredVersion",
)
# Ours: the browser's own UI that no page uses. Each new window (every Playwright context is
# one) starts the address bar's WebUI popup in a renderer of its own, never shown headless.
# Measured: CONTRIBUTING.md, "Workers".
DISABLED_FEATURES = ("WebUIOmniboxPopup", "WebUIOmniboxAimPopup")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # Shared memory in /tmp, not /dev/shm (64 MB in many containers: renderers crashed there).
    "--disable-dev-shm-usage",
    # Without this Chromium itself looks up Google hosts; tests serve on 127.0.0.1 only.
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
    "--disable-features=" + ",".join(PLAYWRIGHT_DISABLED_FEATURES + DISABLED_FEATURES),
]
NOT_FOUND = (
    "Chromium not found: install Debian's package (apt-get install chromium); "
    "the browser tests drive it with Playwright and download no browser."
)


class BrowserNotFound(RuntimeError):
    """No Chromium on PATH; the message says what to install."""


def chromium_path() -> str:
    """The path of Debian's Chromium; BrowserNotFound saying `apt-get install chromium`."""
    for candidate in ("chromium", "chromium-browser"):
        found = shutil.which(candidate)
        if found:
            return found
    raise BrowserNotFound(NOT_FOUND)


def launch(playwright, extra_args=(), **kwargs):
    """``playwright.chromium.launch`` on Debian's Chromium with ``CHROMIUM_ARGS``, then
    ``extra_args`` (the tests' own: tests/conftest.py)."""
    return playwright.chromium.launch(
        executable_path=chromium_path(), args=[*CHROMIUM_ARGS, *extra_args], **kwargs
    )
