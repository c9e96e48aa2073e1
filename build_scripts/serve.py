"""Serve the built site on 127.0.0.1, the way a good static host would.

- correct types for Pyodide (``.wasm`` must be ``application/wasm`` or it never starts);
- a precompressed ``file.br`` or ``file.gz`` is sent with ``Content-Encoding: br`` or
  ``gzip`` when the browser accepts it, Brotli first (see build_scripts/compress.py);
- ``sitemap.xml`` has the configured ``site_url`` replaced by this server's own address,
  so Material's instant navigation works on any port;
- every file has a ``Last-Modified`` date and a request that already has it
  (``If-Modified-Since``) gets ``304 Not Modified``, so a browser downloads Pyodide once and
  then only checks it (``Cache-Control: no-cache``: a rebuilt file is fetched again);
- a missing file gets the site's own ``404.html`` with status 404, as GitHub Pages and
  most static hosts send it;
- ``--prefix /repo/`` serves the site under that path only, with nothing at the host root,
  as a project site on GitHub Pages is (``https://user.github.io/repo/``);
- ``--isolate`` adds the COOP/COEP headers that make a page cross-origin isolated;
- with a ``LiveChannel`` (``make serve``, build_scripts/live.py: the site rebuilt as you edit)
  every HTML page it sends gets one small script (``LIVE_SCRIPT``) that listens at
  ``<prefix>__live/events`` (server-sent events) and reloads the page after each rebuild, or
  shows why the build failed. Only this server adds it, to what it sends: the files of the
  built site never hold it. Precompressed copies are then ignored (a rebuilt page has none).

Usage: python -m build_scripts.serve [--port 8000] [--dir site] [--site-url URL] [--prefix /]
"""

from __future__ import annotations

import argparse
import email.utils
import functools
import json
import os
import queue
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

TYPES = {
    ".wasm": "application/wasm",
    ".mjs": "text/javascript",
    ".js": "text/javascript",
    ".json": "application/json",
    ".whl": "application/octet-stream",
    ".zip": "application/zip",
    ".woff2": "font/woff2",
}


LIVE_PATH = "__live/events"
# The dev server's one addition to a page (only to what it sends): reload on "reload", show
# a failed build's message on "failed", and reload when the server that answers is a new
# one (its "hello" differs: the rebuild happened while the page was not listening).
LIVE_SCRIPT = """<script id="attn-live">(() => {
  if (window.attnLive) return;
  const live = (window.attnLive = { hello: null, reloads: 0 });
  const events = new EventSource(%(url)s);
  events.addEventListener("hello", (e) => {
    if (live.hello !== null && live.hello !== e.data) location.reload();
    live.hello = e.data;
  });
  events.addEventListener("reload", () => location.reload());
  events.addEventListener("failed", (e) => {
    let box = document.getElementById("attn-live-error");
    if (!box) {
      box = document.createElement("pre");
      box.id = "attn-live-error";
      box.setAttribute("role", "alert");
      box.style.cssText = "position:fixed;inset:auto 1em 1em 1em;z-index:9;max-height:40vh;" +
        "overflow:auto;margin:0;padding:1em;background:#fff3f3;color:#700;" +
        "border:2px solid #b00;white-space:pre-wrap;font-size:.75rem";
      document.body.append(box);
    }
    box.textContent = "The build failed (the page shows the last good build):\\n" + e.data;
  });
})();</script>"""


class LiveChannel:
    """Server-sent events to every page open on the dev server: ``send("reload")`` after a
    rebuild, ``send("failed", message)`` when it failed. ``hello`` (a new value each time the
    server starts) is sent to each page as it connects."""

    def __init__(self):
        self.hello = f"{os.getpid()}-{id(self)}"
        self._clients: list[queue.Queue] = []
        self._lock = threading.Lock()
        self.closed = threading.Event()
        self.problem: str | None = None  # the last build's failure, for pages opened later

    def send(self, event: str, data: str = "") -> int:
        """Send ``event`` to every connected page; returns how many there are. "failed"
        is also told to each page that connects until the next "reload"."""
        with self._lock:
            if event in ("failed", "reload"):
                self.problem = data if event == "failed" else None
            for client in self._clients:
                client.put((event, data))
            return len(self._clients)

    @property
    def clients(self) -> int:
        with self._lock:
            return len(self._clients)

    def close(self) -> None:
        self.closed.set()
        self.send("close")

    def stream(self, write) -> None:
        """Write events to one page (``write(bytes)``) until it goes away or ``close``."""
        mine: queue.Queue = queue.Queue()
        with self._lock:
            self._clients.append(mine)
        try:
            write(_event("hello", self.hello))
            if self.problem is not None:
                write(_event("failed", self.problem))
            while True:  # every event in order, until "close" (sent by close())
                try:
                    event, data = mine.get(timeout=15)
                except queue.Empty:
                    if self.closed.is_set():
                        return
                    write(b": still here\n\n")  # a comment: keeps the connection open
                    continue
                if event == "close":
                    return
                write(_event(event, data))
        except OSError:
            return  # the page went away
        finally:
            with self._lock:
                self._clients.remove(mine)


def _event(event: str, data: str) -> bytes:
    lines = "".join(f"data: {line}\n" for line in (data.split("\n") if data else [""]))
    return f"event: {event}\n{lines}\n".encode()


class SiteHandler(SimpleHTTPRequestHandler):
    extensions_map = {**SimpleHTTPRequestHandler.extensions_map, **TYPES}
    site_url = "http://127.0.0.1:8000/"
    prefix = "/"  # the URL path the site is served under; other paths are 404
    isolate = False
    quiet = False
    gzip = True
    stats: dict | None = None  # if a dict: {"bytes": body bytes sent, "requests": count}
    stats_lock = threading.Lock()
    # For failure tests: requests whose path ends with one of these get 503.
    unavailable: set[str] = set()
    live: LiveChannel | None = None  # the dev server's: pages get LIVE_SCRIPT

    def end_headers(self):
        self.send_header("Cache-Control", "no-cache")
        if self.isolate:
            self.send_header("Cross-Origin-Opener-Policy", "same-origin")
            self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
        super().end_headers()

    def translate_path(self, path):
        # Under a prefix, only its paths map to the site; anything else maps to no file.
        route = path.split("?", 1)[0].split("#", 1)[0]
        if self.prefix != "/":
            if not (route + "/").startswith(self.prefix):
                return str(Path(self.directory) / ".outside-prefix" / "none")
            path = "/" + path[len(self.prefix) :]
        return super().translate_path(path)

    def send_error(self, code, message=None, explain=None):
        # A missing file under the site gets the site's 404 page, as static hosts send it.
        page = Path(self.directory) / "404.html"
        route = self.path.split("?", 1)[0]
        inside = (route + "/").startswith(self.prefix)
        if code == 404 and inside and page.is_file() and self.command in ("GET", "HEAD"):
            body = self._with_live_script(page.read_bytes())
            self.send_response(404, message)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command == "GET":
                self.wfile.write(body)
                self._count(len(body))
            return
        super().send_error(code, message, explain)

    def do_GET(self):
        if any(self.path.split("?")[0].endswith(end) for end in self.unavailable):
            return self.send_error(503, "Service Unavailable (failure test)")
        path = Path(self.translate_path(self.path))
        if path.name == "sitemap.xml" and path.is_file():
            return self._send_sitemap(path)
        if self.live is not None:
            route = self.path.split("?", 1)[0]
            if route == self.prefix + LIVE_PATH:
                return self._send_events()
            if route.endswith("/") and (path / "index.html").is_file():
                path = path / "index.html"
            if path.suffix == ".html" and path.is_file():
                body = self._with_live_script(path.read_bytes())
                return self._send_bytes(body, "text/html; charset=utf-8")
        accepts = self.headers.get("Accept-Encoding", "")
        for suffix, encoding in ((".br", "br"), (".gz", "gzip")):
            packed = path.with_name(path.name + suffix)
            if self.gzip and encoding in accepts and path.is_file() and packed.is_file():
                if self._not_modified(packed):
                    return None
                return self._send_file(packed, self.guess_type(str(path)), encoding=encoding)
        return super().do_GET()

    def _with_live_script(self, body: bytes) -> bytes:
        """``body`` (an HTML page) with LIVE_SCRIPT before ``</body>`` when live."""
        if self.live is None:
            return body
        script = LIVE_SCRIPT % {"url": json.dumps(self.prefix + LIVE_PATH)}
        at = body.rfind(b"</body>")
        at = len(body) if at < 0 else at
        return body[:at] + script.encode() + body[at:]

    def _send_events(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()

        def write(data: bytes) -> None:
            self.wfile.write(data)
            self.wfile.flush()

        self.live.stream(write)
        self.close_connection = True

    def _not_modified(self, path: Path) -> bool:
        """Answer 304 if the browser's copy (If-Modified-Since) is as new as ``path``."""
        since = self.headers.get("If-Modified-Since")
        if not since:
            return False
        try:
            cached = email.utils.parsedate_to_datetime(since).timestamp()
        except (TypeError, ValueError, IndexError, OverflowError):
            return False
        if int(path.stat().st_mtime) > cached:
            return False
        self.send_response(304)
        self.send_header("Vary", "Accept-Encoding")
        self.end_headers()
        return True

    def _send_sitemap(self, path: Path):
        origin = f"http://{self.headers.get('Host', '127.0.0.1')}{self.prefix}"
        body = path.read_text("utf-8").replace(self.site_url, origin).encode("utf-8")
        self._send_bytes(body, "application/xml")

    def _send_file(self, path: Path, ctype: str, encoding: str):
        modified = self.date_time_string(int(path.stat().st_mtime))
        self._send_bytes(path.read_bytes(), ctype, encoding, modified)

    def _send_bytes(
        self, body: bytes, ctype: str, encoding: str | None = None, modified: str | None = None
    ):
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        if modified:
            self.send_header("Last-Modified", modified)
        if encoding:
            self.send_header("Content-Encoding", encoding)
            self.send_header("Vary", "Accept-Encoding")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
            self._count(len(body))

    def copyfile(self, source, outputfile):
        start = source.tell()
        super().copyfile(source, outputfile)
        self._count(source.tell() - start)

    def _count(self, n: int):
        if self.stats is None:
            return
        with self.stats_lock:
            self.stats["bytes"] = self.stats.get("bytes", 0) + n
            self.stats["requests"] = self.stats.get("requests", 0) + 1

    def log_request(self, code="-", size="-"):
        # Only failures: a page load makes ~30 requests that would bury the address.
        if not self.quiet and str(code)[:1] in ("4", "5"):
            super().log_request(code, size)

    def log_message(self, format, *args):
        if not self.quiet:
            super().log_message(format, *args)


class SiteServer(ThreadingHTTPServer):
    """The threading server, quiet when a browser drops a connection mid-answer (a page
    left, a download cancelled, a worker stopped): nothing is wrong then, and the standard
    server would print a traceback for each."""

    def handle_error(self, request, client_address):
        if isinstance(sys.exc_info()[1], ConnectionError):  # reset, broken pipe, aborted
            return
        super().handle_error(request, client_address)


def make_server(
    directory: str | os.PathLike,
    port: int = 0,
    site_url: str | None = None,
    isolate: bool = False,
    quiet: bool = True,
    gzip: bool = True,
    stats: dict | None = None,
    prefix: str = "/",
    live: LiveChannel | None = None,
) -> SiteServer:
    """A server for ``directory`` on 127.0.0.1 (port 0: any free port); not yet started.

    ``gzip=False`` ignores the precompressed files; a ``stats`` dict is filled with the
    bytes and requests served (for benchmarks). ``prefix`` ("/repo/") serves the site under
    that path, with nothing (404) elsewhere. ``live``: the dev server's channel (pages get
    LIVE_SCRIPT; precompressed files are ignored). Tests can make paths fail with
    ``server.RequestHandlerClass.func.unavailable.add(path_suffix)``."""
    directory = Path(directory)
    if not (directory / "index.html").is_file():
        raise SystemExit(
            f"serve: {directory}/index.html not found: build the site first (make build)"
        )
    if not (prefix.startswith("/") and prefix.endswith("/")):
        raise ValueError(f"serve: prefix {prefix!r} must start and end with '/', e.g. /repo/")
    attrs = {
        "prefix": prefix,
        "isolate": isolate,
        "quiet": quiet,
        "gzip": gzip and live is None,
        "stats": stats,
        "unavailable": set(),
        "live": live,
    }
    if site_url:
        attrs["site_url"] = site_url
    handler = type("Handler", (SiteHandler,), attrs)
    return SiteServer(("127.0.0.1", port), functools.partial(handler, directory=str(directory)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8000, help="port on 127.0.0.1 (0: any free)")
    parser.add_argument("--dir", default="site", help="the built site (default: site)")
    parser.add_argument("--site-url", default=None, help="site_url from mkdocs.yml")
    parser.add_argument("--isolate", action="store_true", help="send COOP/COEP headers")
    parser.add_argument("--prefix", default="/", help="serve under this path only, e.g. /repo/")
    args = parser.parse_args(argv)
    try:
        server = make_server(
            args.dir, args.port, args.site_url, args.isolate, quiet=False, prefix=args.prefix
        )
    except OSError as err:
        print(
            f"serve: cannot listen on 127.0.0.1:{args.port}: {err.strerror}. "
            "Try another port: make serve PORT=8001",
            file=sys.stderr,
        )
        return 1
    host, port = server.server_address[:2]
    print(f"Serving {args.dir}/ at http://{host}:{port}{args.prefix}  (Ctrl+C to stop)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
