"""Write ``file.gz`` and ``file.br`` beside the big text-like files of a built site.

Static hosts (and build_scripts/serve.py) send these with ``Content-Encoding: gzip`` or
``br`` to browsers that accept it (Chromium asks for Brotli even over plain HTTP; Firefox
and Safari only over HTTPS). Deterministic (gzip mtime 0, Brotli at quality 11), so
rebuilding gives the same bytes.

Brotli at quality 11 is slow (about 30 s for Pyodide's 10 MB wasm, which it sends as
2.3 MB instead of gzip's 3.2 MB), so each ``.br`` is kept in build/cache/brotli/ by its
source's sha256: only a changed file is compressed again.

Usage: python -m build_scripts.compress [site]
"""

from __future__ import annotations

import gzip
import hashlib
import os
import sys
from pathlib import Path

import brotli

SUFFIXES = {".wasm", ".js", ".mjs", ".json", ".zip", ".css", ".html", ".whl", ".xml"}
MIN_BYTES = 4096
BROTLI_QUALITY = 11
CACHE = Path(__file__).resolve().parents[1] / "build" / "cache" / "brotli"


def brotli_bytes(data: bytes, cache: Path = CACHE) -> bytes:
    """``data`` compressed by Brotli (quality 11), from ``cache`` when it was done before."""
    key = cache / f"{hashlib.sha256(data).hexdigest()}-q{BROTLI_QUALITY}.br"
    if key.is_file():
        return key.read_bytes()
    packed = brotli.compress(data, quality=BROTLI_QUALITY)
    cache.mkdir(parents=True, exist_ok=True)
    tmp = key.with_name(f".{key.name}.{os.getpid()}")
    tmp.write_bytes(packed)
    os.replace(tmp, key)  # parallel builds never read a half-written entry
    return packed


def compress_site(site: Path, cache: Path = CACHE) -> tuple[int, int, int]:
    """Compress every eligible file under ``site``; returns (bytes before, after gzip,
    after Brotli)."""
    before = after = after_br = 0
    for path in sorted(site.rglob("*")):
        if not path.is_file() or path.suffix not in SUFFIXES or path.stat().st_size < MIN_BYTES:
            continue
        data = path.read_bytes()
        packed = gzip.compress(data, compresslevel=6, mtime=0)
        if len(packed) >= len(data) * 0.95:  # already compressed (wheels, zips): skip
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
