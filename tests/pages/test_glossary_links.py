"""Lessons link their first use of each glossary term (build_scripts/hooks/glossary.py): the
rules on small pages, then the built site (every link lands on a row of the glossary, every
lesson links the names it introduces, nothing is linked inside math, code blocks, headings,
labs or the Sources section, and the rest of the HTML is unchanged)."""

from __future__ import annotations

import re

import pytest
from bs4 import BeautifulSoup
from helpers import ROOT, SITE

from build_scripts.hooks import glossary

TERMS = glossary.entries((ROOT / "docs" / "glossary.md").read_text("utf-8"))
LINK = re.compile(r'<a class="attn-glossary-link" href="(?P<href>[^"]+)">(?P<text>.*?)</a>', re.S)
LESSONS = sorted((SITE / "lessons").glob("[0-9][0-9]-*/index.html"))


def link(page: str, lesson: int = 12) -> str:
    return glossary.link_terms(page, TERMS, lesson, "../../glossary/")


def links(page_html: str) -> list[tuple[str, str]]:
    return [(m["href"].split("#")[1], m["text"]) for m in LINK.finditer(page_html)]


def unlinked(page_html: str) -> str:
    return LINK.sub(lambda m: m["text"], page_html)


# --- the rules ------------------------------------------------------------------------


def test_every_row_of_the_glossary_is_an_entry_with_its_own_anchor():
    anchors = [t.anchor for t in TERMS]
    assert len(anchors) >= 50 and len(set(anchors)) == len(anchors)
    by_anchor = {t.anchor: t for t in TERMS}
    assert by_anchor["term-d_model"].code == ("d_model",)
    assert by_anchor["term-query"].words == ("query",) and by_anchor["term-query"].code == ("Q",)
    assert by_anchor["term-weights"].words == ("pattern",)
    assert by_anchor["term-attention-sink"].lesson == 12


def test_two_rows_with_one_anchor_are_refused():
    rows = "| a | b | c |\n| --- | --- | --- |\n| `mask` | x | y |\n| mask | z | w |\n"
    with pytest.raises(ValueError, match="#term-mask"):
        glossary.entries(rows)


def test_only_the_first_use_of_an_entry_links_and_plurals_count():
    page = "<p>Two queries and a query; the keys, then a key.</p>"
    out = link(page)
    assert links(out) == [("term-query", "queries"), ("term-key", "keys")]
    assert unlinked(out) == page


def test_code_names_link_on_an_exact_inline_code_only():
    page = (
        "<p>Use <code>d_model</code> and <code>d_model + 1</code>.</p>"
        "<pre><code>d_head</code></pre>"
    )
    out = link(page)
    assert links(out) == [("term-d_model", "<code>d_model</code>")]
    assert out.count('href="../../glossary/#term-d_model"') == 1
    assert "<pre><code>d_head</code></pre>" in out


def test_longer_names_win_and_a_hyphen_joins_words():
    page = "<p>An induction head, a multi-head layer, then a head.</p>"
    assert links(link(page)) == [
        ("term-induction-head", "induction head"),
        ("term-layer", "layer"),
        ("term-head", "head"),
    ]


@pytest.mark.parametrize(
    "page",
    [
        '<h2 id="keys">The key</h2>',
        '<p><a href="x">the key</a></p>',
        '<p><span class="arithmatex">\\(key\\)</span></p>',
        '<div class="attn-lab" data-lab="x"><p>key 1</p></div>',
        '<div class="attn-exercise"><p>the key</p></div>',
        '<p>a table of <span class="attn-no-glossary">keys</span></p>',
        '<h2 id="sources">Sources</h2><p>the key paper</p>',
    ],
    ids=["heading", "link", "math", "lab", "exercise", "opt-out", "sources"],
)
def test_nothing_is_linked_where_it_should_not_be(page):
    assert links(link(page)) == []


def test_plain_words_link_only_from_the_lesson_that_introduces_them():
    page = "<p>The source of the trouble, and <code>seq_len</code>.</p>"
    assert links(link(page, lesson=3)) == [("term-seq_len", "<code>seq_len</code>")]
    assert ("term-source", "source") in links(link(page, lesson=11))


def test_the_glossary_page_gets_one_anchor_per_row():
    page = (SITE / "glossary" / "index.html").read_text("utf-8")
    ids = re.findall(r'<tr id="(term-[^"]+)"', page)
    assert ids == [t.anchor for t in TERMS]


# --- the built site -------------------------------------------------------------------


def test_every_lesson_links_terms_and_every_link_lands_on_a_row():
    written = sorted((ROOT / "docs" / "lessons").glob("[0-9][0-9]-*.md"))
    assert [p.parent.name for p in LESSONS] == [p.stem for p in written], (
        "run `make build` first (make test does)"
    )
    anchors = {t.anchor for t in TERMS}
    for page in LESSONS:
        found = links(page.read_text("utf-8"))
        assert len(found) >= 5, f"{page.parent.name}: only {len(found)} glossary links"
        bad = [a for a, _ in found if a not in anchors]
        assert not bad, f"{page.parent.name}: links to missing entries {bad}"
        hrefs = {m["href"].split("#")[0] for m in LINK.finditer(page.read_text("utf-8"))}
        assert hrefs == {"../../glossary/"}, hrefs


# Entries their lesson introduces where the hook does not link: a code name the lesson
# writes as a formula (\\(W_V\\)) or as an ordinary word (logits, mask), or a name met first
# in a heading or a lab. Listed, so a lesson that stops linking what it teaches is caught.
NOT_LINKED_WHERE_INTRODUCED = {
    "02-queries-and-keys": {"term-x"},
    "03-attention-pattern": {"term-scale", "term-temperature", "term-logits", "term-axis"},
    "04-masking": {"term-mask", "term-where"},
    "05-values-and-the-update": {"term-w_v", "term-w_o"},
    "06-multi-head-attention": {"term-self-attention"},
    "10-position": {"term-positional-encoding", "term-positions", "term-base"},
}


def test_each_lesson_links_the_names_it_introduces():
    for page in LESSONS:
        name = page.parent.name
        linked = {a for a, _ in links(page.read_text("utf-8"))}
        missing = {t.anchor for t in TERMS if t.lesson == int(name[:2])} - linked
        assert missing <= NOT_LINKED_WHERE_INTRODUCED.get(name, set()), f"{name}: {sorted(missing)}"


def test_no_link_inside_math_headings_code_blocks_labs_or_sources():
    for page in LESSONS:
        soup = BeautifulSoup(page.read_text("utf-8"), "html.parser")
        for a in soup.select("a.attn-glossary-link"):
            inside = [p.name for p in a.parents]
            inside += [c for p in a.parents for c in p.get("class") or []]
            for forbidden in ("pre", "h1", "h2", "h3", "arithmatex", "attn-lab", "attn-exercise"):
                assert forbidden not in inside, f"{page.parent.name}: {a} inside {forbidden}"
        sources = soup.find("h2", id="sources")
        if sources is not None:
            after = "".join(str(s) for s in sources.find_all_next())
            assert "attn-glossary-link" not in after, page.parent.name
