"""A lab's first result without JavaScript (labs_py/attention_labs/static.py, the
static_view contract; build_scripts/hooks/lab_static.py, its HTML): every lab, at the
parameters of its lesson fence (its defaults when no lesson has one), writes well-formed
markup with a table or a sentence, every table with a caption and header cells; tokens
stay text; the markup survives the site's Markdown at top level and in an admonition."""

import html
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml
from attention_labs.labs import get_lab, lab_names, run_lab, static_view
from attention_labs.static import MAX_SIDE, Table, Text, default_view, spread, weights_table
from helpers import ROOT, site_markdown

from build_scripts.hooks import lab_static, scanner
from build_scripts.hooks.lab import render as render_fence


def lesson_fences() -> dict[str, dict]:
    """Each lab's parameters in the first lesson fence that uses it."""
    out = {}
    for path in sorted((ROOT / "docs" / "lessons").glob("*.md")):
        for fence in scanner.find_fences(path.read_text("utf-8"), ("lab",)):
            spec = yaml.safe_load(fence.body)
            out.setdefault(spec.pop("lab"), spec)
    return out


FENCES = lesson_fences()


def markup_of(name, params=None):
    params = FENCES.get(name, {}) if params is None else params
    fill = getattr(get_lab(name), "fence_params", None)  # as the build fills a fence
    if fill is not None:
        params = fill(params, ROOT / "docs")
    out = run_lab(name, params)
    return "\n".join(lab_static.static_html(name, out)), out


def parse(markup: str) -> ET.Element:
    """The markup as XML: it is written well-formed, with numeric character references only
    (an error here is markup that a browser would have to guess at)."""
    return ET.fromstring(markup)


def text_of(node: ET.Element) -> str:
    return "".join(node.itertext())


def test_every_lab_is_in_a_lesson_or_made_at_run_time():
    # real_head has no fence: the explorer's recompute panel makes it (mountLab).
    assert set(lab_names()) - set(FENCES) <= {"real_head"}
    assert len(lab_names()) >= 21


@pytest.mark.parametrize("name", lab_names())
def test_every_labs_static_markup_is_valid_and_says_what_it_shows(name):
    markup, out = markup_of(name)
    root = parse(markup)  # raises on markup that is not well-formed
    assert root.tag == "div" and root.get("class") == "attn-static"
    intro = root.find("p")
    assert text_of(intro) == lab_static.INTRO
    assert "needs JavaScript" in lab_static.INTRO and "built" in lab_static.INTRO
    parts = static_view(name, out["result"], out["params"])
    tables = root.findall(".//table")
    assert len(tables) == sum(isinstance(p, Table) for p in parts)
    # Meaningful: a table of numbers, or a sentence with one.
    assert tables or any(re.search(r"\d", p.text) for p in parts if isinstance(p, Text))
    for table in tables:
        caption = table.find("caption")
        assert caption is not None and len(text_of(caption)) > 15
        header = table.findall("./thead/tr/th")
        assert len(header) >= 2 and all(th.get("scope") == "col" for th in header)
        rows = table.findall("./tbody/tr")
        assert rows
        for tr in rows:
            first, *cells = list(tr)
            assert first.tag == "th" and first.get("scope") == "row"
            assert len(cells) == len(header) - 1 and all(c.tag == "td" for c in cells)
        scroller = [d for d in root.iter("div") if table in list(d)]
        assert scroller and scroller[0].get("role") == "region"
        assert scroller[0].get("tabindex") == "0" and scroller[0].get("aria-label")
    # One line per part: a blank line would end the raw HTML block.
    assert "\n\n" not in markup
    assert len(markup) < 12_000, "a static view this big would weigh on the page"


def test_the_default_view_is_the_weights_or_the_numbers():
    res = run_lab("real_head")["result"]
    (table,) = default_view(res)
    assert table.shade and table.columns[1:] == tuple(res["tokens"])
    (numbers,) = default_view({"seq_len": 16, "ratio": 0.5, "name": "x", "flag": True})
    assert [r[0] for r in numbers.rows] == ["seq len", "ratio", "name"]  # no booleans
    (empty,) = default_view({"rows": [[1, 2]]})
    assert isinstance(empty, Text)


def test_weights_wider_than_the_limit_show_each_querys_top_key():
    n = MAX_SIDE + 1
    tokens = [f"t{i}" for i in range(n)]
    weights = [[1.0 if k == (q + 1) % n else 0.0 for k in range(n)] for q in range(n)]
    table = weights_table("Wide.", tokens, tokens, weights)
    assert table.columns == ("Query", "Top key", "Weight") and not table.shade
    assert table.rows[0] == ("t0", ("t1", 1.0)) and len(table.rows) == n


def test_masked_weights_show_a_dash_and_shaded_cells_carry_their_weight():
    markup, out = markup_of("masking")
    root = parse(markup)
    first_row = root.find(".//tbody/tr")
    cells = [c for c in first_row if c.tag == "td"]
    assert text_of(cells[0]) == "1.00" and cells[0].get("style") == "--attn-w:1.000"
    assert all(text_of(c) == "—" and c.get("class") == "attn-static__masked" for c in cells[1:])


@pytest.mark.parametrize(
    "token", ["<b>x</b>", "</div>", "&amp;", "<!--", "*em*", "$x$", "\\(y\\)", "a_b_", "`c`"]
)
def test_tokens_are_text_never_markup(token):
    tokens = [token, "b", "c"]
    markup, _ = markup_of("attention_pattern", {"tokens": tokens})
    root = parse(markup)
    header = [text_of(th) for th in root.findall(".//thead/tr/th")]
    assert header[1:] == tokens
    assert [text_of(tr[0]) for tr in root.findall(".//tbody/tr")] == tokens
    assert "<b>" not in markup and "<!--" not in markup and "*em*" not in markup


@pytest.mark.parametrize("indent", ["", "    "], ids=["top level", "in an admonition"])
def test_the_static_table_survives_the_sites_markdown(indent):
    tokens = ["$x$", "*em*", "_u_", "`c`", "\\(y\\)", "</td>"]
    fence = ["```lab", "lab: attention_pattern", f"tokens: {json.dumps(tokens)}", "```"]
    head = '!!! note "Lab"\n    Text.\n\n' if indent else "Text.\n\n"
    text = head + "\n".join(indent + line for line in fence) + "\n\nAfter.\n"
    from build_scripts import hooks

    rendered = site_markdown(hooks.render_page(text, "lessons/x.md", 0, kinds=("lab",)))
    assert rendered.count("<table") == 1 and "<em>" not in rendered and "<code>" not in rendered
    headers = re.findall(r'<th scope="col">(.*?)</th>', rendered)
    assert [html.unescape(h) for h in headers[1:]] == tokens
    assert "<p>After.</p>" in rendered


def test_the_placeholder_holds_the_static_form_inside_the_lab():
    (fence,) = scanner.find_fences("```lab\nlab: kv_cache\n```\n", ("lab",))
    out = render_fence(fence, scanner.Page("lessons/x.md"))
    assert out.startswith('<div class="attn-lab"') and out.rstrip().endswith("</div>")
    inner = out.split("\n", 1)[1]
    assert inner.startswith('<div class="attn-static" data-static="kv&#95;cache">')
    assert "This lab needs JavaScript; its first result is computed when the page loads" not in out


def test_a_static_view_that_returns_nothing_is_refused(monkeypatch):
    from attention_labs.labs import get_lab

    module = get_lab("rope")
    monkeypatch.setattr(module, "static_view", lambda result, params: [], raising=True)
    with pytest.raises(TypeError, match="labs/rope.py: static_view"):
        static_view("rope", run_lab("rope")["result"], {})


def test_tables_refuse_a_row_of_the_wrong_length_and_an_empty_caption():
    with pytest.raises(ValueError, match="row 'a' has 1 cells, expected 2"):
        Table("A caption.", ("x", "y", "z"), [("a", (1,))])
    with pytest.raises(ValueError, match="caption"):
        Table(" ", ("x", "y"), [])


def test_spread_keeps_the_ends():
    assert spread(5, 10) == [0, 1, 2, 3, 4]
    picked = spread(129, 12)
    assert picked[0] == 0 and picked[-1] == 128 and len(picked) == 12


def test_the_stylesheet_styles_the_static_form():
    css = Path(ROOT / "docs" / "stylesheets" / "labs.css").read_text("utf-8")
    for rule in (".attn-static__scroll { overflow-x: auto;", "--attn-w", ".attn-static__table"):
        assert rule in css, rule
