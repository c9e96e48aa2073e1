"""Write ``file.gz`` and ``file.br`` beside the big text-like files of a built site.

Static hosts (and build_scripts/serve.py) send these with ``Content-Encoding: gzip`` or
``br`` to browsers that accept it (Chromium asks for Brotli even over plain HTTP; Firefox
and Safari only over HTTPS). Deterministic (gzip mtime 0, Brotli at quality 11), so
rebuilding gives the same bytes.

Brotli at quality 11 is slow (about 30 s for Pyodide's 10 MB wasm, which it sends as
2.3 MB instead of gzip's 3.2 MB), so each ``.br`` is kept in build/cache/brotli/ by its
source's sha256 (``<sha256>-q11.br``): only a changed file is compressed again.

The one place of the rule (which files get copies, the cache's names): the home page's
download figure (build_scripts/hooks/home.py) counts what this writes.

Usage: python -m build_scripts.compress [site]
"""

from __future__ import annotations

import gzip
import hashlib
import sys
from pathlib import Path

import brotli

from build_scripts.files import write_atomic

SUFFIXES = {".wasm", ".js", ".mjs", ".json", ".zip", ".css", ".html", ".whl", ".xml"}
MIN_BYTES = 4096
MIN_GAIN = 0.95  # gzip must shrink the file to under 95 %: wheels and zips are not copied
BROTLI_QUALITY = 11
CACHE = Path(__file__).resolve().parents[1] / "build" / "cache" / "brotli"


def may_copy(path: Path, size: int) -> bool:
    """Whether ``path`` (of ``size`` bytes) is a candidate: a text-like suffix
    (``SUFFIXES``) and at least 4 kB. ``gzip_copy`` then decides."""
    return path.suffix in SUFFIXES and size >= MIN_BYTES


def gzip_copy(path: Path, data: bytes) -> bytes | None:
    """The ``.gz`` copy of ``path`` (whose bytes are ``data``), or None when it gets no
    copies: not a candidate (``may_copy``) or already compressed (gzip saves under 5 %).
    A file with a ``.gz`` copy gets a ``.br`` one too."""
    if not may_copy(path, len(data)):
        return None
    packed = gzip.compress(data, compresslevel=6, mtime=0)
    return packed if len(packed) < len(data) * MIN_GAIN else None


def cache_entry(data: bytes, cache: Path = CACHE) -> Path:
    """Where ``data``'s Brotli bytes are kept: ``<cache>/<sha256>-q11.br``."""
    return cache / f"{hashlib.sha256(data).hexdigest()}-q{BROTLI_QUALITY}.br"


def _brotli(data: bytes, cache: Path, keep_going: bool) -> tuple[Path, bytes | None]:
    key = cache_entry(data, cache)
    if key.is_file():
        return key, None
    packed = brotli.compress(data, quality=BROTLI_QUALITY)
    try:
        write_atomic(key, packed)  # parallel builds never read a half-written entry
    except OSError:
        if not keep_going:
            raise
    return key, packed


def brotli_bytes(data: bytes, cache: Path = CACHE) -> bytes:
    """``data`` compressed by Brotli (quality 11), from ``cache`` when it was done before."""
    key, packed = _brotli(data, cache, keep_going=False)
    return key.read_bytes() if packed is None else packed


def brotli_size(data: bytes, cache: Path = CACHE) -> int:
    """``len(brotli_bytes(data))``, without reading a cached entry; a cache that cannot be
    written is skipped (the size is still right)."""
    key, packed = _brotli(data, cache, keep_going=True)
    return key.stat().st_size if packed is None else len(packed)


def compress_site(site: Path, cache: Path = CACHE) -> tuple[int, int, int]:
    """Compress every eligible file under ``site``; returns (bytes before, after gzip,
    after Brotli)."""
    before = after = after_br = 0
    for path in sorted(site.rglob("*")):
        if not path.is_file() or not may_copy(path, path.stat().st_size):
            continue
        data = path.read_bytes()
        packed = gzip_copy(path, data)
        if packed is None:  # already compressed (wheels, zips): skip
            continue
        path.with_name(path.name + ".gz").write_bytes(packed)
        squeezed = brotli_bytes(data, cache)
        path.with_name(path.name + ".br").write_bytes(squeezed)
        before += len(data)
        after += len(packed)
        after_br += len(squeezed)
    return before, after, after_br


if __name__ == "__main__":
    site = Path(sys.argv[1] if len(sys.argv) > 1 else "site")
    b, a, br = compress_site(site)
    print(
        f"compress: {b / 1e6:.1f} MB -> {a / 1e6:.1f} MB gzip, {br / 1e6:.1f} MB Brotli ({site}/)"
    )
