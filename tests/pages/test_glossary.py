"""The glossary (docs/glossary.md) against the lessons and the code: every term's "introduced
in" lesson really uses the term, the link's text is that lesson's title, every parameter of
the public functions of attention_labs/attention.py has an entry, and so has every name the
site's conventions fix (CONTRIBUTING.md)."""

from __future__ import annotations

import inspect
import re

import pytest
import yaml
from attention_labs import attention
from helpers import ROOT
from mkdocs.utils import meta

from build_scripts.hooks.glossary import parts  # the names one entry defines, with kinds

DOCS = ROOT / "docs"
PAGE = (DOCS / "glossary.md").read_text("utf-8")
ROW = re.compile(
    r"^\| (?P<term>.+?) \| (?P<meaning>.+?) \| \[(?P<title>[^\]]+)\]\((?P<link>[^)#]+)\) \|$", re.M
)
PLAN = {
    e["name"]: e["title"]
    for e in yaml.safe_load((DOCS / "data" / "lessons.yaml").read_text("utf-8"))["lessons"]
}

ROWS = [m.groupdict() for m in ROW.finditer(PAGE)]
# The names every page uses (CONTRIBUTING.md, "Write the lesson"; the list).
REQUIRED = [
    "d_model", "d_head", "n_heads", "seq_len", "n_kv_heads", "n_layers",
    "W_Q", "W_K", "W_V", "W_O", "Q", "K", "V", "X", "logits", "scores", "weights", "pattern",
    "causal_mask", "softmax", "temperature", "residual stream", "head", "layer", "token",
    "embedding", "query", "key", "value", "mask",
]  # fmt: skip


def names(term_cell: str) -> list[str]:
    return [name for name, _ in parts(term_cell)]


def mentions(text: str, name: str, kind: str) -> bool:
    if kind == "math":  # a matrix symbol, e.g. \\(X\\) or X W_Q in a formula
        return re.search(rf"(?<![A-Za-z\\]){re.escape(name)}(?![A-Za-z])", text) is not None
    if kind == "code" or "_" in name:  # as the code spells it (attention_logits has logits)
        return name in text
    return re.search(rf"\b{re.escape(name)}", text, re.I) is not None


def test_the_page_has_entries():
    assert len(ROWS) >= 50, len(ROWS)
    terms = [names(r["term"])[0] for r in ROWS]
    assert len(terms) == len(set(terms)), "a term is listed twice"


@pytest.mark.parametrize("row", ROWS, ids=[names(r["term"])[0] for r in ROWS])
def test_the_introducing_lesson_uses_the_term(row):
    link = row["link"]
    path = DOCS / link
    if link.startswith("lessons/"):
        name = link.removeprefix("lessons/").removesuffix(".md")
        assert name in PLAN, f"{link} is not a lesson of docs/data/lessons.yaml"
        if not path.is_file():
            # Written on another branch; the build's link check fails until it lands.
            assert row["title"] == PLAN[name], f"link text should be {PLAN[name]!r}"
            pytest.skip(f"{link} is not written yet")
        title = meta.get_data(path.read_text("utf-8"))[1]["title"]
        assert row["title"] in (title, PLAN[name]), f"link text should be {title!r}"
    text = path.read_text("utf-8")
    first, kind = parts(row["term"])[0]
    assert mentions(text, first, kind), f"{link} never mentions {first!r}"


def public_parameters() -> set[str]:
    params = set()
    for fn in attention.__all__:
        params |= set(inspect.signature(getattr(attention, fn)).parameters)
    return params


def glossary_names() -> set[str]:
    return {n for r in ROWS for n in names(r["term"])}


def test_every_parameter_of_the_public_functions_has_an_entry():
    params = public_parameters()
    assert {"Q", "K", "V", "x", "W_Q", "mask", "seq_len"} <= params  # the signatures we read
    # each as a code name (in backticks), the way the code spells it
    code = {m for r in ROWS for m in re.findall(r"`([^`]+)`", r["term"])}
    missing = params - code
    assert not missing, f"parameters of attention.py without a glossary entry: {sorted(missing)}"


def test_every_fixed_name_has_an_entry():
    have = glossary_names()
    missing = [n for n in REQUIRED if n not in have]
    assert not missing, f"names the site fixes but the glossary lacks: {missing}"


def test_the_query_key_convention_is_stated():
    assert "**`[query, key]`.**" in PAGE
    assert "every row sums to 1" in PAGE
