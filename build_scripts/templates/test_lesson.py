"""Every claim of docs/lessons/$name.md, checked against the lesson's own numbers.

The prose's numbers come from the lesson's ```numbers fence at build time (``{{ expr }}``);
this file runs that fence as the build does (``lesson_text.numbers``) and checks what the
prose says in words about those numbers, so an edit of the numbers that makes a sentence
wrong fails here. Replace the example claim with the lesson's own (see
tests/lessons/test_03_attention_pattern.py for a complete example)."""

import lesson_text
import numpy as np
from attention_labs import softmax
from mkdocs.utils import meta

PAGE = "lessons/$name.md"
SOURCE, RENDERED, TEXT = lesson_text.read(PAGE)  # the file, as built, whitespace-normalised
NUMBERS = lesson_text.numbers(PAGE)  # what its ```numbers fence defines
claim = lesson_text.claimer(TEXT)  # claim(phrase): the built lesson says ``phrase``


def test_the_front_matter_has_a_title():
    assert meta.get_data(SOURCE)[1]["title"].strip()


def test_the_largest_score_takes_more_than_half_of_the_weight():
    scores, weights = NUMBERS["scores"], NUMBERS["weights"]
    assert np.allclose(weights, softmax(scores))  # the weights shown are the scores' softmax
    claim(f"the largest score takes {weights.max():.3f}, more than half of the weight")
    assert weights.max() > 0.5, "the prose says more than half: change the words or the scores"
