"""The home page's generated parts (docs/index.md).

* **The lesson plan.** The line ``<!-- lesson-plan -->`` becomes a numbered list of every
  lesson of docs/data/lessons.yaml, in its order, each with its one-sentence "learns". A
  lesson whose file docs/lessons/<name>.md exists is a link titled by its front matter (so a
  new lesson is linked without editing the home page); the others are plain text marked
  "coming", and a line under the list says so (only while a lesson is coming). A lesson file
  the plan does not list (a new or throwaway one) is listed too, by its number, with its
  front matter's summary; tests/pages/test_home.py checks that every lesson of the project
  is in the plan.
* **What a lab downloads.** ``lab_download()`` (available to the page's ```numbers fence):
  the bytes a lab fetches to start Python (the files check_site counts as the lab payload:
  Pyodide, NumPy, the labs wheel, the worker), as sent to a browser that accepts Brotli
  (each file's Brotli size where build_scripts/compress.py writes a .br copy, by its
  rule, ``compress.gzip_copy``; Chromium asks for it on any host that has the copies) and
  unpacked.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import yaml
from mkdocs.exceptions import PluginError
from mkdocs.utils.meta import get_data

from .. import compress
from ..files import write_atomic
from ..vendor.labs_wheel import archive_of
from . import lessons as lesson_files

PLAN = Path("data/lessons.yaml")
MARKER = "<!-- lesson-plan -->"
# The files the worker fetches to start: build_scripts/gates/check_site.py PAYLOAD_PREFIXES
# (pyodide.mjs is the module build of pyodide.js, which the worker loads instead).
PAYLOAD_DIRS = ("vendor/pyodide", "vendor/labs")
PAYLOAD_FILES = ("javascripts/runtime/pyodide-worker.js",)
NOT_FETCHED = {"pyodide.mjs"}

# Brotli of 17 MB takes a minute: sizes are kept by the file's sha256 (a build output, like
# the vendored downloads next to it), and each .br in compress.py's own cache, which
# compress.py then reuses (compress.cache_entry).
SENT_CACHE = Path(__file__).resolve().parents[2] / "build" / "cache" / "brotli-sizes.json"


@dataclass(frozen=True)
class Download:
    sent: int  # bytes on the wire (gzip where the site has a .gz copy)
    raw: int  # bytes unpacked
    files: tuple[str, ...]  # docs-relative paths

    @property
    def sent_mb(self) -> float:
        return self.sent / 1e6

    @property
    def raw_mb(self) -> float:
        return self.raw / 1e6


def sent_size(path: Path, cache: dict | None = None) -> int:
    """Bytes the server sends for ``path`` to a browser that accepts Brotli: its Brotli
    size where compress.py makes a .br copy (a text-like file of at least 4 kB that gzip
    shrinks by 5 % or more), else its size. ``cache`` maps a file's sha256 to that number."""
    data = path.read_bytes()
    if not compress.may_copy(path, len(data)):  # before hashing it for the cache
        return len(data)
    key = f"{path.suffix}:{hashlib.sha256(data).hexdigest()}"
    if cache is not None and key in cache:
        return cache[key]
    copied = compress.gzip_copy(path, data) is not None
    sent = compress.brotli_size(data) if copied else len(data)
    if cache is not None:
        cache[key] = sent
    return sent


def _read_cache() -> dict:
    try:
        data = json.loads(SENT_CACHE.read_text("utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _write_cache(cache: dict) -> None:
    try:
        write_atomic(SENT_CACHE, json.dumps(cache, indent=0, sort_keys=True))
    except OSError:
        pass  # only a cache


def not_fetched(docs: Path) -> set[str]:
    """Names in PAYLOAD_DIRS that a lab does not fetch to start: the ES-module loader and,
    where the stdlib and NumPy were precompiled at vendor time (docs/vendor/manifest.json,
    "precompiled"), the official stdlib, lock file and wheels the worker then skips, and the
    stdlib's second zip (fetched only when reader code first imports a module from it, or
    one of NumPy's subpackages left out of its archive: numpy.ma, polynomial, testing), and
    the labs wheel where its archive is beside it (the worker unpacks that instead)."""
    names = set(NOT_FETCHED)
    for wheel in (docs / "vendor" / "labs").glob("attention_labs-*.whl"):
        if archive_of(wheel).is_file():
            names.add(wheel.name)
    manifest = docs / "vendor" / "manifest.json"
    pre = json.loads(manifest.read_text("utf-8")).get("precompiled") if manifest.is_file() else None
    if pre:
        used = {Path(w).name for w in pre["wheels"].values()}
        official = {p.name for p in (docs / "vendor" / "pyodide").glob("*.whl")} - used
        names |= {"python_stdlib.zip", "pyodide-lock.json", Path(pre["stdlib_more"]).name}
        names |= official
        if pre.get("archives"):  # the worker unpacks the archives instead of these wheels
            names |= used
    return names


def is_compressed_copy(path: Path) -> bool:
    """``x.gz`` or ``x.br`` beside ``x`` (compress.py's copies; an archive is not one)."""
    return path.suffix in (".gz", ".br") and path.with_suffix("").is_file()


def payload_files(docs_dir) -> list[Path]:
    docs = Path(docs_dir)
    skip = not_fetched(docs)
    files = [
        p
        for folder in PAYLOAD_DIRS
        for p in sorted((docs / folder).iterdir())
        if p.is_file() and p.name not in skip and not is_compressed_copy(p)
    ]
    return files + [docs / rel for rel in PAYLOAD_FILES]


def lab_download(docs_dir) -> Download:
    """What a lab of the site built from ``docs_dir`` fetches to start (the first time; the
    browser caches it after)."""
    docs = Path(docs_dir)
    files = payload_files(docs)
    cache = _read_cache()
    before = dict(cache)
    sent = sum(sent_size(p, cache) for p in files)
    if cache != before:
        _write_cache(cache)
    return Download(
        sent=sent,
        raw=sum(p.stat().st_size for p in files),
        files=tuple(p.relative_to(docs).as_posix() for p in files),
    )


# ----------------------------------------------------------------------------
# the lesson plan


def load_plan(docs_dir) -> list[dict]:
    """docs/data/lessons.yaml's lessons; PluginError naming the file when it is malformed."""
    path = Path(docs_dir) / PLAN
    where = f"docs/{PLAN.as_posix()}"
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as err:
        raise PluginError(f"{where}: cannot read the lesson plan: {err}") from None
    items = data.get("lessons") if isinstance(data, dict) else None
    if not isinstance(items, list) or not items:
        raise PluginError(f"{where}: expected a non-empty list under 'lessons:'")
    seen = set()
    for k, item in enumerate(items, 1):
        fields = ("name", "title", "learns")
        if not isinstance(item, dict) or not all(isinstance(item.get(f), str) for f in fields):
            raise PluginError(f"{where}: lesson {k}: needs name, title and learns (text)")
        if not lesson_files.LESSON_NAME.match(item["name"]):
            raise PluginError(f"{where}: lesson {k}: {item['name']!r} is not NN-topic")
        if item["name"] in seen:
            raise PluginError(f"{where}: lesson {item['name']!r} is listed twice")
        seen.add(item["name"])
    return items


def _summary(docs_dir, name: str) -> str:
    path = Path(docs_dir) / lesson_files.LESSONS / f"{name}.md"
    try:
        _, meta = get_data(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        meta = {}
    summary = meta.get("summary")
    return summary if isinstance(summary, str) and summary.strip() else "Published."


COMING_NOTE = "Linked lessons are published; those marked *coming* are not written yet."


def plan_lines(plan: list[dict], published: dict) -> list[str]:
    """The Markdown list (links relative to docs/index.md)."""
    lines = []
    for k, item in enumerate(plan, 1):
        learns = " ".join(item["learns"].split())
        lesson = published.get(item["name"])
        if lesson is not None:
            head = f"[{lesson.title}]({lesson_files.LESSONS}/{item['name']}.md)"
        else:
            head = f"{item['title']} *(coming)*"
        lines.append(f"{k}. {head}: {learns}")
    return lines


def expand(markdown: str, docs_dir) -> str:
    """docs/index.md with its ``<!-- lesson-plan -->`` line replaced by the plan."""
    if MARKER not in markdown:
        return markdown
    plan = load_plan(docs_dir)
    published = lesson_files.discover(docs_dir)
    listed = {item["name"] for item in plan}
    for name in sorted(set(published) - listed):
        plan.append(
            {"name": name, "title": published[name].title, "learns": _summary(docs_dir, name)}
        )
    plan.sort(key=lambda item: item["name"][:2])  # stable: the plan's order within a number
    lines = ["", *plan_lines(plan, published), ""]
    if any(item["name"] not in published for item in plan):
        lines += [COMING_NOTE, ""]  # said only while it is true
    out = []
    for line in markdown.split("\n"):
        out += lines if line.strip() == MARKER else [line]
    return "\n".join(out)
