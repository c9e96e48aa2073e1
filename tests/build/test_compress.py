"""build_scripts/compress.py and build_scripts/serve.py: each big text-like file gets a
.gz and a .br copy, and the server sends the best one the browser accepts."""

from __future__ import annotations

import gzip
import hashlib
import threading
import urllib.request

import brotli

from build_scripts.compress import compress_site
from build_scripts.serve import make_server

TEXT = ("attention weights are a softmax over the keys; " * 400).encode()


def small_site(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_bytes(b"<!doctype html><title>t</title>" + TEXT)
    (site / "app.js").write_bytes(TEXT)
    (site / "tiny.js").write_bytes(b"let x = 1;\n")  # under 4 kB: sent as it is
    return site


def test_big_text_files_get_gzip_and_brotli_copies_cached_by_content(tmp_path):
    site, cache = small_site(tmp_path), tmp_path / "cache"
    before, after_gz, after_br = compress_site(site, cache)
    assert gzip.decompress((site / "app.js.gz").read_bytes()) == TEXT
    assert brotli.decompress((site / "app.js.br").read_bytes()) == TEXT
    assert not (site / "tiny.js.br").exists() and not (site / "tiny.js.gz").exists()
    assert before > after_gz > after_br > 0
    # A second build takes the Brotli copies from the cache, keyed by the content's sha256.
    assert len(list(cache.iterdir())) == 2  # index.html and app.js
    (entry,) = cache.glob(f"{hashlib.sha256(TEXT).hexdigest()}-*.br")
    entry.write_bytes(brotli.compress(b"from the cache"))
    compress_site(site, cache)
    assert brotli.decompress((site / "app.js.br").read_bytes()) == b"from the cache"


def test_server_sends_brotli_then_gzip_then_the_file(tmp_path):
    site = small_site(tmp_path)
    compress_site(site, tmp_path / "cache")
    httpd = make_server(site, 0)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}/app.js"
    try:
        for accept, encoding, decode in (
            ("gzip, deflate, br, zstd", "br", brotli.decompress),
            ("gzip, deflate", "gzip", gzip.decompress),
            ("identity", None, bytes),
        ):
            request = urllib.request.Request(url, headers={"Accept-Encoding": accept})
            with urllib.request.urlopen(request) as response:
                assert response.headers.get("Content-Encoding") == encoding, accept
                assert response.headers.get("Content-Type", "").startswith("text/javascript")
                assert decode(response.read()) == TEXT
    finally:
        httpd.shutdown()
