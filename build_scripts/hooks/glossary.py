"""Glossary links: each lesson links the first use of every glossary term to its entry.

The terms are the rows of docs/glossary.md's tables (``| term | meaning | introduced in |``).
A term cell lists one entry's names, comma-separated: `code` names, \\(math\\) symbols and
plain words (``query, \\(Q\\), `Q```). On the glossary page every row gets an anchor,
``term-<first name>`` (``#term-d_model``, ``#term-query``); on a lesson page, after Markdown
has been rendered, the first mention of each entry in the prose becomes a link to it:

* a code name links where an inline ``<code>`` holds exactly that name;
* a plain word links at its first whole-word mention (any case, a plural ``s``/``es``/``ies``
  too), only in lessons from the one that introduces it on (so "source" in lesson 1 is left
  alone), the longest names first ("induction head" before "head");
* math symbols never link (KaTeX renders them in the browser).

Nothing inside a link, a heading, code blocks, math, a lab, a map, a cell or an exercise, an
element of class ``attn-no-glossary`` (a word used in another sense), or the Sources section
is touched, and the rest of the page's HTML is kept byte for byte: the
page is read with the standard library's tokenizer (``html.parser``), which gives each
piece's position, and only text pieces are rewritten.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from mkdocs.utils import get_relative_url

PAGE = "glossary.md"
URL = "glossary/"
CLASS = "attn-glossary-link"
ROW = re.compile(r"^\| (?P<term>.+?) \| (?P<meaning>.+?) \| (?P<where>.+?) \|$", re.M)
LESSON_LINK = re.compile(r"\(lessons/(?P<number>\d{2})-[^)#]*\.md\)")

# Elements whose text is never linked (void elements never hold text).
SKIP_TAGS = {
    "a", "pre", "script", "style", "h1", "h2", "h3", "h4", "h5", "h6", "button", "summary",
    "label", "legend", "select", "option", "textarea", "svg", "math", "figcaption",
}  # fmt: skip
# attn-no-glossary: a lesson's way to keep a word in another sense unlinked, e.g.
# <span class="attn-no-glossary">keys and values</span> of an MLP.
SKIP_CLASSES = {
    "arithmatex", "attn-lab", "attn-map", "attn-cell", "attn-exercise", "katex", "attn-no-glossary",
}  # fmt: skip
SKIP_SECTIONS = {"sources"}  # from this h2 on, nothing is linked
VOID = {
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
    "track", "wbr",
}  # fmt: skip


@dataclass(frozen=True)
class Entry:
    anchor: str  # "term-d_model"
    code: tuple[str, ...]  # names in backticks
    words: tuple[str, ...]  # plain names
    lesson: int  # the number of the lesson that introduces it (99 when none)


def parts(term_cell: str) -> list[tuple[str, str]]:
    """The names one entry defines, each with its kind: "code" (in backticks), "math"
    (in \\( \\)) or "word". ``"query, \\(Q\\), `Q`"`` -> ``[("query", "word"), ("Q", "math"),
    ("Q", "code")]``."""
    out = []
    for part in term_cell.split(", "):
        part = part.strip()
        if m := re.fullmatch(r"`(.+)`", part):
            out.append((m[1], "code"))
        elif m := re.fullmatch(r"\\\((.+)\\\)", part):
            out.append((m[1], "math"))
        else:
            out.append((part, "word"))
    return out


def anchor(term_cell: str) -> str:
    """The row's anchor, from its first name: ``term-`` and the name lowercased, every run of
    characters other than letters, digits and ``_`` a hyphen."""
    first = parts(term_cell)[0][0]
    return "term-" + re.sub(r"[^a-z0-9_]+", "-", first.lower()).strip("-")


def entries(markdown: str) -> list[Entry]:
    """Every table row of the glossary's Markdown as an Entry (the header rows skipped).
    Raises ValueError naming the anchor when two rows would share one."""
    out: list[Entry] = []
    seen: set[str] = set()
    for m in ROW.finditer(markdown):
        if m["term"] == "term" or set(m["term"]) <= set("-: "):
            continue  # the header row and its --- line
        names = parts(m["term"])
        lesson = LESSON_LINK.search(m["where"])
        entry = Entry(
            anchor=anchor(m["term"]),
            code=tuple(n for n, kind in names if kind == "code"),
            words=tuple(n for n, kind in names if kind == "word"),
            lesson=int(lesson["number"]) if lesson else 99,
        )
        if entry.anchor in seen:
            raise ValueError(f"docs/{PAGE}: two entries share the anchor #{entry.anchor}")
        seen.add(entry.anchor)
        out.append(entry)
    return out


def _plural_forms(word: str) -> list[str]:
    forms = [word + "s", word + "es"]
    if word.endswith("y") and word[-2:-1] not in "aeiou":
        forms.append(word[:-1] + "ies")  # query -> queries
    return forms


def word_pattern(words: list[str]) -> re.Pattern:
    """One regex for the plain names (and their plurals), longest first, as whole words
    (a hyphen counts as part of a word: "multi-head" does not mention "head")."""
    forms = sorted({f for w in words for f in [w, *_plural_forms(w)]}, key=len, reverse=True)
    alternatives = "|".join(re.escape(f) for f in forms)
    return re.compile(rf"(?<![\w-])(?:{alternatives})(?![\w-])", re.I)


class _Scanner(HTMLParser):
    """Collects the edits: (start, end, replacement) offsets into the page's HTML."""

    def __init__(self, text: str, code_terms: dict, words, word_terms: dict, href):
        super().__init__(convert_charrefs=False)
        self.text = text
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.code_terms, self.words, self.word_terms = code_terms, words, word_terms
        self.href = href
        self.stack: list[tuple[str, bool]] = []  # (tag, skipped)
        self.done: set[str] = set()  # anchors linked on this page
        self.edits: list[tuple[int, int, str]] = []
        self.stopped = False  # inside a skipped section to the end
        self.code: tuple[int, list[str]] | None = None  # an inline <code>: start, text

    def _at(self) -> int:
        line, col = self.getpos()
        return self.line_starts[line - 1] + col

    def skipping(self) -> bool:
        return self.stopped or any(skip for _, skip in self.stack)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        classes = set((attrs.get("class") or "").split())
        if tag == "h2" and attrs.get("id") in SKIP_SECTIONS:
            self.stopped = True
        if tag in VOID:
            return
        skip = tag in SKIP_TAGS or bool(classes & SKIP_CLASSES)
        if tag == "code" and not self.skipping() and not skip:
            self.code = (self._at(), [])
        self.stack.append((tag, skip))

    def handle_startendtag(self, tag, attrs):
        pass  # <br/>, <input/>: no text inside

    def handle_endtag(self, tag):
        if tag == "code" and self.code is not None:
            start, pieces = self.code
            self.code = None
            name = html.unescape("".join(pieces))
            entry = self.code_terms.get(name)
            end = self.text.index(">", self._at()) + 1
            if entry is not None and entry.anchor not in self.done:
                self.done.add(entry.anchor)
                self.edits.append((start, start, f'<a class="{CLASS}" href="{self.href(entry)}">'))
                self.edits.append((end, end, "</a>"))
        for k in range(len(self.stack) - 1, -1, -1):
            if self.stack[k][0] == tag:
                del self.stack[k:]
                break

    def handle_data(self, data):
        if self.code is not None:
            self.code[1].append(data)
            return
        if self.skipping() or self.words is None:
            return
        start = self._at()
        for m in self.words.finditer(data):
            entry = self.word_terms[_singular(m[0].lower(), self.word_terms)]
            if entry.anchor in self.done:
                continue
            self.done.add(entry.anchor)
            link = f'<a class="{CLASS}" href="{self.href(entry)}">{m[0]}</a>'
            self.edits.append((start + m.start(), start + m.end(), link))

    def handle_entityref(self, name):
        if self.code is not None:
            self.code[1].append(f"&{name};")

    def handle_charref(self, name):
        if self.code is not None:
            self.code[1].append(f"&#{name};")


def _singular(form: str, word_terms: dict) -> str:
    if form in word_terms:
        return form
    for word in word_terms:
        if form in _plural_forms(word):
            return word
    raise KeyError(form)  # the pattern only matches names and their plurals


def link_terms(page_html: str, terms: list[Entry], lesson: int, glossary_href: str) -> str:
    """``page_html`` with the first mention of each entry linked to ``glossary_href#anchor``.
    ``lesson``: the page's lesson number (plain words link only from their lesson on)."""
    code_terms = {name: e for e in terms for name in e.code}
    word_terms = {w.lower(): e for e in terms if e.lesson <= lesson for w in e.words}
    words = word_pattern(list(word_terms)) if word_terms else None
    href = lambda e: f"{glossary_href}#{e.anchor}"  # noqa: E731
    scanner = _Scanner(page_html, code_terms, words, word_terms, href)
    scanner.feed(page_html)
    scanner.close()
    out, at = [], 0
    for start, end, replacement in sorted(scanner.edits, key=lambda e: (e[0], e[1])):
        out += [page_html[at:start], replacement]
        at = end
    out.append(page_html[at:])
    return "".join(out)


class _RowAnchors(HTMLParser):
    """The offsets of each body row's ``<tr>`` and the text of its first cell."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.rows: list[tuple[int, str]] = []
        self.in_tbody = False
        self.cell: list[str] | None = None
        self.row_start: int | None = None

    def handle_starttag(self, tag, attrs):
        line, col = self.getpos()
        if tag == "tbody":
            self.in_tbody = True
        elif tag == "tr" and self.in_tbody:
            self.row_start = self.line_starts[line - 1] + col
        elif tag == "td" and self.row_start is not None and self.cell is None:
            self.cell = []

    def handle_endtag(self, tag):
        if tag == "tbody":
            self.in_tbody = False
        elif tag == "td" and self.cell is not None and self.row_start is not None:
            self.rows.append((self.row_start, "".join(self.cell)))
            self.row_start = None
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)


def anchor_rows(page_html: str, terms: list[Entry]) -> str:
    """The glossary page's HTML with ``id="term-..."`` on each table row, in the order of
    ``terms`` (the Markdown's rows). Raises ValueError if the rendered rows differ in number."""
    parser = _RowAnchors(page_html)
    parser.feed(page_html)
    parser.close()
    if len(parser.rows) != len(terms):
        raise ValueError(
            f"docs/{PAGE}: {len(parser.rows)} table rows rendered, {len(terms)} entries read"
        )
    out, at = [], 0
    for (start, _), entry in zip(parser.rows, terms, strict=True):
        out += [page_html[at : start + len("<tr")], f' id="{entry.anchor}"']
        at = start + len("<tr")
    out.append(page_html[at:])
    return "".join(out)


def configure(config) -> tuple[Entry, ...]:
    """on_config: the glossary's entries (none when the site has no glossary page)."""
    path = Path(config["docs_dir"]) / PAGE
    return tuple(entries(path.read_text("utf-8"))) if path.is_file() else ()


def on_page_content(page_html: str, page, terms) -> str:
    """``page_html`` with the glossary's rows anchored (on the glossary page) or a lesson's
    first use of each of ``terms`` (the build's, ``BuildState.terms``) linked to its row."""
    src = page.file.src_uri
    if not terms:
        return page_html
    if src == PAGE:
        return anchor_rows(page_html, terms)
    m = re.fullmatch(r"lessons/(\d{2})-[^/]+\.md", src)
    if not m:
        return page_html
    href = get_relative_url(URL, page.url)
    return link_terms(page_html, terms, int(m[1]), href)
