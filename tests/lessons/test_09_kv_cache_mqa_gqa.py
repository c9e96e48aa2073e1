"""Every claim of docs/lessons/09-kv-cache-mqa-gqa.md, computed here with attention_labs.

Numbers in the prose come from the lesson's ```numbers fence at build time; this file
checks what the prose says in words about them and about the lab (see
tests/lessons/test_03_attention_pattern.py for a complete example)."""

from pathlib import Path

import numpy as np
from attention_labs import softmax

ROOT = Path(__file__).resolve().parents[2]
LESSON = ROOT / "docs" / "lessons" / "09-kv-cache-mqa-gqa.md"


def test_the_lesson_exists_with_its_title():
    assert LESSON.read_text(encoding="utf-8").startswith("---\ntitle: ")


def test_softmax_weights_sum_to_one():
    # Replace with the lesson's own claims, e.g. "every row sums to 1".
    weights = softmax(np.array([2.0, 1.0, 0.1]))
    assert abs(weights.sum() - 1) < 1e-12
