"""The one fence scanner of the build: one pass over a page's Markdown.

A fence opens with 3+ backticks or tildes and an info string, and closes on a line of at
least as many of the same character. Fences nested in other fences (a lesson showing fence
syntax inside a ```` ```` ```` block) are skipped: only top-level fences are yielded. A
backtick fence's info string has no backtick (CommonMark), so "```` ```lab ````" at the
start of a line is inline code, not a fence.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from mkdocs.exceptions import PluginError

from .state import BuildState

FENCE_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}(?!.*`)|~{3,})[ \t]*(?P<info>[^\s`]*)")
# The kind as the lesson checks read it: attribute style ``{.pycell}`` counts as ``pycell``.
KIND = re.compile(r"^\{?\.?(?P<kind>[\w-]*)")


class FenceError(PluginError):
    """A fence that cannot be built; the message starts with ``docs/<file>:<line>:``."""


@dataclass(frozen=True)
class Fence:
    """One top-level fence. ``start``/``end``: line indexes (end exclusive, None when the
    fence is never closed); ``line_no``: 1-based line of the opener in the text scanned;
    ``info``: the info string's first word as written; ``kind``: that word without
    attribute braces (``{.pycell}`` -> ``pycell``); ``body``: the lines inside, dedented
    by the opener's indent."""

    start: int
    end: int | None
    indent: str
    body: str
    line_no: int
    info: str
    kind: str


def scan(markdown: str) -> Iterator[Fence]:
    """Every top-level fence of ``markdown``, in order."""
    lines = markdown.split("\n")
    i = 0
    while i < len(lines):
        m = FENCE_OPEN.match(lines[i])
        if not m:
            i += 1
            continue
        fence, indent = m["fence"], m["indent"]
        close = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        j = i + 1
        while j < len(lines) and not close.match(lines[j]):
            j += 1
        body = "\n".join(line[len(indent) :] for line in lines[i + 1 : j])
        end = j + 1 if j < len(lines) else None
        kind = KIND.match(m["info"])["kind"]
        yield Fence(i, end, indent, body, i + 1, m["info"], kind)
        i = j + 1


def find_fences(markdown: str, names=("lab",)) -> Iterator[Fence]:
    """The top-level fences whose info string is one of ``names``."""
    return (f for f in scan(markdown) if f.info in names)


def outside_fences(markdown: str) -> list[str]:
    """The lines of ``markdown`` with every top-level fence (opener to closer) blanked."""
    out = markdown.split("\n")
    for f in scan(markdown):
        stop = len(out) if f.end is None else f.end
        out[f.start : stop] = [""] * (stop - f.start)
    return out


def front_matter_lines(markdown: str, source: str | None) -> int:
    """How many lines of the file come before ``markdown`` (the front matter MkDocs cut,
    and the blank lines after it): added to every line number reported for the page."""
    if source is None or not markdown or not source.endswith(markdown):
        return 0
    return source[: -len(markdown)].count("\n")


@dataclass
class Page:
    """What the fence kinds share while one page is rendered: its path (docs-relative),
    the lines before the scanned text (``offset``), counters kept across its fences, and
    what the build read once (``build``: runtime, map index...)."""

    src_path: str
    offset: int = 0
    n_cells: int = 0  # pycell fences rendered so far
    exercise_ids: dict = field(default_factory=dict)  # exercise id -> where first used
    build: BuildState = field(default_factory=BuildState)

    def where(self, fence: Fence) -> str:
        """``docs/<file>:<line>`` of the fence's opening line in the file."""
        return f"docs/{self.src_path}:{fence.line_no + self.offset}"
