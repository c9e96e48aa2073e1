"""What the FAQ (docs/faq.md) claims, checked: every answer is short and links a lesson,
every paper it cites is in its sources (with the required ones and their venues), its
numbers are what the code computes, and it repeats none of the known errors of the
reference texts (shared/design/CURRICULUM.md, "Known errors")."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
from attention_labs import multi_head_attention
from attention_labs.labs.param_calculator import PRESETS
from helpers import ROOT
from mkdocs.utils import meta

from build_scripts import hooks

SOURCE = (ROOT / "docs" / "faq.md").read_text("utf-8")
RENDERED = hooks.render_page(meta.get_data(SOURCE)[0], "faq.md", kinds=())
TEXT = re.sub(r"\s+", " ", RENDERED)
SECTIONS = dict(re.findall(r"^## (.+?)\n(.*?)(?=^## |\Z)", RENDERED, re.M | re.S))
SOURCES = SECTIONS.pop("Sources")
QUESTIONS = list(SECTIONS)


def claim(phrase):
    phrase = re.sub(r"\s+", " ", phrase)
    assert phrase in TEXT, f"the FAQ no longer says: {phrase!r}"


def test_the_questions_the_issue_asks_for_are_answered():
    topics = ["cross-attention", "√d_head", "heads learn", "FlashAttention", "order",
              "KV cache", "GQA", "not quadratic"]  # fmt: skip
    for topic in topics:
        assert any(topic in q for q in QUESTIONS), f"no question about {topic}"


def prose(body: str) -> str:
    """An answer without its formula, its list and its lesson line."""
    body = re.sub(r"\\\[.*?\\\]", "", body, flags=re.S)
    body = re.split(r"^Lessons?: ", body, flags=re.M)[0]
    return "\n".join(line for line in body.splitlines() if not line.startswith(("- ", "  ")))


@pytest.mark.parametrize("question", QUESTIONS)
def test_each_answer_is_short_and_links_its_lesson(question):
    body = SECTIONS[question]
    lesson_lines = [line for line in body.splitlines() if re.match(r"Lessons?: \[", line)]
    assert lesson_lines, f"{question!r} links no lesson"
    links = re.findall(r"\]\((lessons/[0-9a-z-]+\.md)(?:#[a-z0-9-]+)?\)", body)
    assert links, f"{question!r}: its lesson line has no link to lessons/"
    # 2 to 5 sentences: count sentence ends, not the dots of "et al." or of numbers
    text = re.sub(r"et al\.|e\.g\.|i\.e\.", "", prose(body))
    sentences = re.findall(r"[.!?](?:\)|\*\*)?(?=\s|$)", text)
    assert 2 <= len(sentences) <= 5, f"{question!r} has {len(sentences)} sentences"


def test_every_citation_in_the_answers_is_in_the_sources():
    answers = " ".join(SECTIONS.values())
    cited = set(re.findall(r"([A-Z][a-zé]+)(?: et al\.| & [A-Z][a-z]+)?,? \(?(\d{4})\)?", answers))
    assert len(cited) >= 15, cited
    for name, year in cited:
        assert re.search(rf"^- {name}, .*?\({year}\)", SOURCES, re.M | re.S), (
            f"{name} ({year}) is cited but not in the sources"
        )


@pytest.mark.parametrize(
    "entry",
    [
        r"Katharopoulos, A\..*\(2020\).*Linear Attention\.\* ICML\.",
        r"Wang, S\..*\(2020\).*Linformer.*\* arXiv\.",
        r"Choromanski, K\..*\(2021\).*Performers\.\* ICLR\.",
        r"Gu, A\. & Dao, T\. \(2023\).*Mamba.*\* arXiv \(COLM 2024\)\.",
    ],
)
def test_the_sub_quadratic_sources_have_year_and_venue(entry):
    assert re.search(entry, re.sub(r"\s+", " ", SOURCES)), entry


def test_why_sqrt_d_head_numbers():
    gpt2 = PRESETS["gpt2-small"]
    d_head = gpt2["d_model"] // gpt2["n_heads"]
    rng = np.random.default_rng(0)
    q, k = rng.standard_normal((2, 20_000, d_head))
    dots = np.einsum("nd,nd->n", q, k)
    assert abs(dots.std() / math.sqrt(d_head) - 1) < 0.02  # "close to sqrt(64) = 8"
    claim(f"a standard deviation of {dots.std():.2f}, close to \\(\\sqrt{{ {d_head} }} = 8\\)")
    claim(f"spread back to {(dots / math.sqrt(d_head)).std():.2f}")


def test_without_positions_a_layer_is_permutation_equivariant():
    rng = np.random.default_rng(1)
    for _ in range(3):
        x = rng.standard_normal((6, 16))
        W = rng.standard_normal((4, 16, 16)) / 4
        perm = rng.permutation(6)
        out, _ = multi_head_attention(x, *W, n_heads=4)
        shuffled, _ = multi_head_attention(x[perm], *W, n_heads=4)
        assert np.max(np.abs(shuffled - out[perm])) < 1e-12
        assert np.max(np.abs(shuffled - out)) > 1e-3  # equivariant, not invariant
    assert "permutation-invariant" not in SOURCE
    claim("a layer is permutation-equivariant")


def test_kv_cache_and_gqa_numbers():
    ll = PRESETS["llama2-70b"]
    d_head = ll["d_model"] // ll["n_heads"]
    per_token = 2 * ll["n_layers"] * d_head * 2  # key and value, every layer, 16-bit
    gqa = per_token * ll["n_kv_heads"] * ll["context"]
    mha = per_token * ll["n_heads"] * ll["context"]
    claim(f"that is {gqa / 1e9:.2f} GB per sequence")
    claim(f"it would be {mha / 1e9:.1f} GB")
    heads, groups = ll["n_heads"], ll["n_kv_heads"]
    claim(f"{heads} query heads in {groups} groups of {heads // groups}")
    claim(f"its cache is {mha // gqa} times smaller")
    # the curriculum's known error: Llama 2 as a whole does not use GQA
    claim("Of the Llama 2 models only the two largest sizes, 34B and 70B, use GQA")


def test_flashattention_is_exact_and_still_quadratic():
    claim("It computes exactly the same output as plain attention")
    claim("Its extra memory grows linearly with `seq_len`")
    claim("It does **not** change the amount of arithmetic: that stays quadratic")
    claim(f"still costs {(128 // 2) ** 2:,} times the work")


def test_the_first_token_head_is_what_the_asset_says():
    asset = json.loads(
        (ROOT / "docs/assets/attention/all-minilm-l6-v2/coreference-trophy.json").read_text()
    )
    first = np.array(asset["head_stats"]["first_token"])
    entry = next(h for h in asset["qkv"]["heads"] if "first-token" in h["reason"])
    layer, head = entry["layer"], entry["head"]
    assert asset["tokens"]["text"][0] == "[CLS]"
    # the same head as lesson 12's map on this sentence
    lesson12 = (ROOT / "docs/lessons/12-real-heads.md").read_text(encoding="utf-8")
    assert "sentence: coreference-trophy" in lesson12
    assert f"layer: {layer}\nhead: {head}\n" in lesson12
    claim(f"layer {layer}, head {head} puts {first[layer, head]:.0%} of its weight on `[CLS]`")
    claim("on the sentence of lesson 12")
    claim("Lessons: [Real heads](lessons/12-real-heads.md), where these heads are shown")
    assert first[layer, head] > 0.5  # "most of its weight" is implied by the share shown


def test_equivariance_is_said_to_need_no_causal_mask():
    """Issue 25: permutation-equivariance holds only without a causal mask."""
    from attention_labs import causal_mask

    rng = np.random.default_rng(1)
    d, h, n = 16, 4, 6
    x = rng.standard_normal((n, d))
    W = rng.standard_normal((4, d, d)) / math.sqrt(d)
    perm = rng.permutation(n)
    out, _ = multi_head_attention(x, *W, n_heads=h, mask=causal_mask(n))
    shuffled, _ = multi_head_attention(x[perm], *W, n_heads=h, mask=causal_mask(n))
    assert np.abs(shuffled - out[perm]).max() > 0.01  # the mask breaks it
    claim("Without positional information and without a causal mask, a layer is")
    claim("A causal mask is fixed by position, so it breaks the symmetry")
    assert re.search(r"the same layer's shuffled outputs differ by up to \d\.\d\d", TEXT)


def test_what_heads_learn_depends_on_the_training_objective():
    """Issue 25: MiniLM was trained contrastively, not to predict text."""
    assert "Whatever helped the model predict its training text" not in TEXT
    claim("Whatever helped the model at the task it was trained on")
    claim("was then trained contrastively, to place sentences that belong together close")


def test_sliding_window_and_sparse_attention_are_in_the_sub_quadratic_list():
    """Issue 25: the list lacked sparse and sliding-window attention."""
    section = next(body for q, body in SECTIONS.items() if "not quadratic" in q)
    assert "**Sliding-window attention**" in section and "**Sparse attention**" in section
    claim("Mistral 7B uses a window of 4,096 in every layer (Jiang et al., 2023)")
    claim("(Child et al., 2019)")
    for entry in (
        r"Child, R\..*\(2019\).*Sparse Transformers",
        r"Beltagy, I\..*\(2020\).*Longformer",
    ):
        assert re.search(entry, re.sub(r"\s+", " ", SOURCES)), entry
