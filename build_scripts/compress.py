"""Write ``file.gz`` beside the big text-like files of a built site.

Static hosts (and build_scripts/serve.py) send these with ``Content-Encoding: gzip`` to
browsers that accept it. Deterministic (mtime 0), so rebuilding gives the same bytes.

Usage: python -m build_scripts.compress [site]
"""

from __future__ import annotations

import gzip
import sys
from pathlib import Path

SUFFIXES = {".wasm", ".js", ".mjs", ".json", ".zip", ".css", ".html", ".whl", ".xml"}
MIN_BYTES = 4096


def compress_site(site: Path) -> tuple[int, int]:
    """Compress every eligible file under ``site``; returns (bytes before, bytes after)."""
    before = after = 0
    for path in sorted(site.rglob("*")):
        if not path.is_file() or path.suffix not in SUFFIXES or path.stat().st_size < MIN_BYTES:
            continue
        data = path.read_bytes()
        packed = gzip.compress(data, compresslevel=6, mtime=0)
        if len(packed) >= len(data) * 0.95:  # already compressed (wheels, zips): skip
            continue
        path.with_name(path.name + ".gz").write_bytes(packed)
        before += len(data)
        after += len(packed)
    return before, after


if __name__ == "__main__":
    site = Path(sys.argv[1] if len(sys.argv) > 1 else "site")
    b, a = compress_site(site)
    print(f"compress: {b / 1e6:.1f} MB -> {a / 1e6:.1f} MB gzip ({site}/)")
