"""`make serve`'s parts without a browser (build_scripts/live.py, serve.py's LiveChannel):
what a change rebuilds, the events a page gets, and that only the dev server adds its
script to what it sends. tests/browser/test_live_reload.py drives the whole loop."""

from __future__ import annotations

import threading
import urllib.request

from build_scripts.hooks import preload
from build_scripts.live import plan
from build_scripts.serve import LIVE_PATH, LiveChannel, make_server


def test_the_plan_rebuilds_only_what_a_change_needs(tmp_path):
    root = tmp_path
    (root / "docs" / "lessons").mkdir(parents=True)
    lesson = root / "docs" / "lessons" / "04-x.md"
    lesson.write_text("---\ntitle: X\n---\n# X\n")
    front = {"lessons/04-x.md": "---\ntitle: X\n---"}

    class Modified:
        name = "modified"

    class Added:
        name = "added"

    prose = plan({(Modified, str(lesson))}, root, front)
    assert prose.pages == ["lessons/04-x.md"] and not prose.full
    lesson.write_text("---\ntitle: Y\n---\n# X\n")  # the nav's title changes: every page
    assert plan({(Modified, str(lesson))}, root, front).full
    assert plan({(Added, str(root / "docs" / "lessons" / "05-y.md"))}, root, front).full
    labs = plan({(Modified, str(root / "labs_py" / "attention_labs" / "x.py"))}, root, front)
    assert labs.wheel and labs.restart and labs.full
    (root / "docs" / "lessons" / "06-y.md").write_text("```lab\nlab: masking\n```\n")
    one_lab = plan({(Modified, str(root / "labs_py/attention_labs/labs/masking.py"))}, root, front)
    assert one_lab.wheel and one_lab.restart and not one_lab.full
    assert one_lab.pages == ["lessons/06-y.md"]  # only the pages that name the lab
    hooks = plan({(Modified, str(root / "build_scripts" / "hooks" / "lab.py"))}, root, front)
    assert hooks.restart and not hooks.wheel
    css = plan({(Modified, str(root / "docs" / "stylesheets" / "site.css"))}, root, front)
    assert css.static == ["stylesheets/site.css"] and not css.full
    for inline in preload.INLINE:  # in the heads' text, not a file of the site
        assert plan({(Modified, str(root / "docs" / inline))}, root, front).full, inline
    ignored = {
        (Modified, str(root / "docs" / "vendor" / "katex" / "katex.js")),
        (Modified, str(root / "build_scripts" / "bench" / "bench.py")),
        (Modified, str(root / "docs" / "lessons" / ".04-x.md.swp")),
    }
    assert plan(ignored, root, front).empty


def test_pages_get_hello_then_each_event_and_a_late_page_the_last_failure():
    channel = LiveChannel()
    got: list[bytes] = []
    reader = threading.Thread(target=channel.stream, args=(got.append,), daemon=True)
    reader.start()
    while channel.clients == 0:
        pass
    channel.send("failed", "docs/x.md:3: bad\nsecond line")
    late: list[bytes] = []
    threading.Thread(target=channel.stream, args=(late.append,), daemon=True).start()
    while len(late) < 2:
        pass
    channel.send("reload")
    channel.close()
    reader.join(5)
    assert got[0] == f"event: hello\ndata: {channel.hello}\n\n".encode()
    assert got[1] == b"event: failed\ndata: docs/x.md:3: bad\ndata: second line\n\n"
    assert got[2] == b"event: reload\ndata: \n\n"
    assert late[1].startswith(b"event: failed\n")  # told on connecting, until a reload
    assert channel.problem is None


def test_only_the_dev_server_adds_its_script_and_ignores_stale_compressed_copies(tmp_path):
    page = b"<html><body><p>hi</p></body></html>"
    (tmp_path / "index.html").write_bytes(page)
    (tmp_path / "index.html.gz").write_bytes(b"stale")  # the dev server must not send it
    (tmp_path / "404.html").write_bytes(page)
    plain = make_server(tmp_path, 0)
    live = make_server(tmp_path, 0, isolate=True, live=LiveChannel())
    for server in (plain, live):
        threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{plain.server_address[1]}/"
        with urllib.request.urlopen(url) as r:
            assert r.read() == page
        url = f"http://127.0.0.1:{live.server_address[1]}/"
        request = urllib.request.Request(url, headers={"Accept-Encoding": "gzip"})
        with urllib.request.urlopen(request) as r:
            body = r.read()
            assert r.headers["Cross-Origin-Opener-Policy"] == "same-origin"
            assert r.headers["Cross-Origin-Embedder-Policy"] == "require-corp"
        assert body.startswith(b'<html><body><p>hi</p><script id="attn-live">')
        assert f'new EventSource("/{LIVE_PATH}")'.encode() in body
        assert (tmp_path / "index.html").read_bytes() == page  # the file is untouched
    finally:
        plain.shutdown()
        live.shutdown()
