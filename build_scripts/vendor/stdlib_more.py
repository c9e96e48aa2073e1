"""The rest of Python's standard library, downloaded on first import (runs in Pyodide).

The site's stdlib zip holds only the modules that start-up, NumPy, the labs and the
lessons' code import; every other stdlib module is in a second zip that this finder
downloads (synchronously: imports are synchronous, and a Web Worker may block) the first
time a reader's code imports one of them. ``MODULES`` is filled in at vendor time
(build_scripts/vendor/precompile_pyodide.py) with that zip's module names.
"""

import importlib
import importlib.abc
import importlib.machinery
import sys

MODULES: frozenset = frozenset()  # replaced at vendor time
ARCHIVE = f"/lib/python{sys.version_info[0]}{sys.version_info[1]}-more.zip"


class MoreStdlibFinder(importlib.abc.MetaPathFinder):
    """Answers only for the modules of the second zip, once: then the path finder does."""

    def __init__(self, url: str):
        self.url = url
        self.loaded = False

    def find_spec(self, name, path=None, target=None):
        if self.loaded or name not in MODULES:
            return None
        self._download()
        return importlib.machinery.PathFinder.find_spec(name, path)

    def _download(self):
        from js import Uint8Array, XMLHttpRequest

        file = self.url.rsplit("/", 1)[-1]
        try:
            req = XMLHttpRequest.new()
            req.open("GET", self.url, False)
            req.responseType = "arraybuffer"
            req.send(None)
            status = req.status
        except Exception as err:  # a network error
            raise ModuleNotFoundError(
                f"this module is in the rest of Python's standard library ({file}), which "
                f"could not be downloaded ({err}); check your connection and run it again"
            ) from None
        if status != 200:
            raise ModuleNotFoundError(
                f"this module is in the rest of Python's standard library ({file}), which "
                f"could not be downloaded (HTTP {status} from {self.url}); the site's copy "
                "is missing or broken"
            )
        with open(ARCHIVE, "wb") as f:
            f.write(Uint8Array.new(req.response).to_bytes())
        self.loaded = True
        sys.path.append(ARCHIVE)
        # Packages split between the two zips (encodings, email...) look in both.
        for name, module in list(sys.modules.items()):
            parts = getattr(module, "__path__", None)
            if name.split(".")[0] in TOP and isinstance(parts, list):
                parts.append(f"{ARCHIVE}/{name.replace('.', '/')}")
        importlib.invalidate_caches()


TOP = frozenset(name.split(".")[0] for name in MODULES)


def install(url: str) -> None:
    """Put the finder first on sys.meta_path (it answers only for the second zip's
    modules, before Pyodide's hook calls them missing); ``url``: where that zip is."""
    if not any(isinstance(f, MoreStdlibFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, MoreStdlibFinder(url))
