"""The rest of Python's standard library, downloaded on first import (runs in Pyodide).

The site's stdlib zip holds only the modules that start-up, NumPy, the labs and the
lessons' code import; every other stdlib module is in a second zip that this finder
downloads (synchronously: imports are synchronous, and a Web Worker may block) the first
time a reader's code imports one of them. That zip also holds NumPy's subpackages that
start-up never imports (numpy.ma, numpy.polynomial, numpy.testing: ``defer`` in
vendor-lock.json), left out of NumPy's start-up archive. ``MODULES`` is filled in at vendor
time (build_scripts/vendor/precompile_pyodide.py) with that zip's module names.
"""

import importlib
import importlib.abc
import importlib.machinery
import sys

MODULES: frozenset = frozenset()  # replaced at vendor time
ARCHIVE = f"/lib/python{sys.version_info[0]}{sys.version_info[1]}-more.zip"


class MoreStdlibFinder(importlib.abc.MetaPathFinder):
    """Answers only for the modules of the second zip: downloads it on the first import of
    one; after that the path finder finds them (a package imported since, such as NumPy,
    is first told to look in the zip too)."""

    def __init__(self, url: str):
        self.url = url
        self.loaded = False

    def find_spec(self, name, path=None, target=None):
        if name not in MODULES:
            return None
        if not self.loaded:
            self._download()
        elif not _look_in_zip(sys.modules.get(name.rpartition(".")[0])):
            return None  # the path finder finds it (sys.path has the zip)
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
                f"this module is in the rest of Python's standard library and NumPy ({file}), "
                f"which could not be downloaded ({err}); check your connection and run it again"
            ) from None
        if status != 200:
            raise ModuleNotFoundError(
                f"this module is in the rest of Python's standard library and NumPy ({file}), "
                f"which could not be downloaded (HTTP {status} from {self.url}); the site's "
                "copy is missing or broken"
            )
        with open(ARCHIVE, "wb") as f:
            f.write(Uint8Array.new(req.response).to_bytes())
        self.loaded = True
        sys.path.append(ARCHIVE)
        # Packages split between the two zips (encodings, email, numpy...) look in both.
        for module in list(sys.modules.values()):
            _look_in_zip(module)
        importlib.invalidate_caches()


TOP = frozenset(name.split(".")[0] for name in MODULES)


def _look_in_zip(package) -> bool:
    """Add the zip's folder of ``package`` (a package split between the zips, or NumPy,
    whose deferred subpackages are in the zip) to its ``__path__`` once; True if it has
    one now. A package imported after the download is extended on its first such import."""
    parts = getattr(package, "__path__", None)
    name = getattr(package, "__name__", None) if isinstance(parts, list) else None
    if not isinstance(name, str) or name.split(".")[0] not in TOP:
        return False
    folder = f"{ARCHIVE}/{name.replace('.', '/')}"
    if folder not in parts:
        parts.append(folder)
        importlib.invalidate_caches()
    return True


def install(url: str) -> None:
    """Put the finder first on sys.meta_path (it answers only for the second zip's
    modules, before Pyodide's hook calls them missing); ``url``: where that zip is."""
    if not any(isinstance(f, MoreStdlibFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, MoreStdlibFinder(url))
