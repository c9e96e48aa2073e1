"""Lab: an ambiguous word's vector moves towards one sense as it reads its context.

A tiny, hand-built embedding space for lesson 1 (docs/lessons/01-why-attention.md). It is
NOT learned: every vector below was placed by hand so that the picture can be drawn in two
dimensions (d_model = 2). Each ambiguous word ("mole", "bank") has its own plane: its
senses (labelled directions), its context-free embedding ``x`` (the same in every sentence,
which is the problem attention solves) and, for each sentence, the vectors of three context
words ``C`` of shape (3, 2).

The reader sets a raw weight in [0, 1] on each context word; the weights are the raw
values divided by their sum (so they are >= 0 and sum to 1; all zero means the word reads
nothing). The update is the weighted sum of the context words' vectors and is ADDED to the
embedding, as a transformer adds each layer's output to its residual stream (He et al.
2016; Elhage et al. 2021):

    weights = raw / sum(raw)          (3,)
    delta   = weights @ C             (2,)
    updated = x + delta               (2,)

In a real attention head the weights come from query-key scores and a softmax (lessons 2
and 3) and each context word contributes a learned projection of its embedding, its value
(lesson 5); here it contributes its embedding itself, so the geometry stays visible.
The lab reports the cosine similarity of ``x`` and of ``updated`` to every sense.
"""

from __future__ import annotations

import math

import numpy as np

from ..params import LabParameterError, Param
from ..static import Table, Text


def _polar(degrees: float, length: float) -> tuple[float, float]:
    a = math.radians(degrees)
    return (round(length * math.cos(a), 4), round(length * math.sin(a), 4))


# Each word's plane: senses as (name, direction in degrees), the embedding as (angle, length).
WORDS = {
    "mole": {
        "senses": (("animal", 90.0), ("chemistry unit", -30.0), ("skin mark", 210.0)),
        "embedding": _polar(15.0, 0.6),  # leans towards the chemistry unit out of context
    },
    "bank": {
        "senses": (("river side", 150.0), ("money", 30.0)),
        "embedding": _polar(65.0, 0.6),  # leans towards money, the commoner sense
    },
}
SENSE_LENGTH = 2.0  # where the sense labels are drawn; cosine ignores length

# sentence id -> (label, tokens, index of the ambiguous word, context words as
# (token index, angle in degrees, length) in the word's plane).
SENTENCES = {
    "mole_animal": (
        "The mole dug a tunnel under the lawn",
        "mole",
        1,
        ((2, 105.0, 1.5), (4, 55.0, 1.7), (7, 140.0, 1.2)),
    ),
    "mole_chemistry": (
        "One mole of carbon weighs twelve grams",
        "mole",
        1,
        ((3, -20.0, 1.7), (4, -55.0, 0.8), (6, -35.0, 1.5)),
    ),
    "mole_skin": (
        "The doctor looked at the mole on her arm",
        "mole",
        5,
        ((1, 205.0, 1.7), (2, 60.0, 0.3), (8, 225.0, 1.7)),
    ),
    "mole_mixed": (
        "The chemist found a mole in her garden",
        "mole",
        4,
        ((1, -25.0, 1.7), (2, 135.0, 0.3), (7, 95.0, 1.7)),
    ),
    "bank_river": (
        "We fished from the grassy bank of the river",
        "bank",
        5,
        ((1, 160.0, 1.5), (4, 130.0, 1.0), (8, 150.0, 1.8)),
    ),
    "bank_money": (
        "She paid the loan back to the bank",
        "bank",
        7,
        ((1, 20.0, 1.5), (3, 40.0, 1.8), (4, 100.0, 0.3)),
    ),
}
N_CONTEXT = 3

SCHEMA = (
    Param(
        "sentence",
        "choice",
        "mole_animal",
        "Which sentence the ambiguous word is read in.",
        choices=tuple(SENTENCES),
        labels={key: value[0] for key, value in SENTENCES.items()},
    ),
    *(
        Param(
            f"w{i + 1}",
            "number",
            1.0,
            f"Raw weight on context word {i + 1} (the weights are these divided by their sum).",
            0.0,
            1.0,
        )
        for i in range(N_CONTEXT)
    ),
)
# Every setting costs the same (three 2-D vectors); make bench needs one other than the defaults.
LARGEST = {"sentence": "bank_money", "w1": 0.5}


def cosine(a, b) -> np.ndarray:
    """Cosine similarity of the rows of ``a`` (..., d) with ``b`` (d,); 0 for a zero row."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    norms = np.linalg.norm(a, axis=-1) * np.linalg.norm(b)
    dots = a @ b
    return np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)


def sentence_space(sentence: str) -> dict:
    """The hand-built vectors of one sentence: tokens, word index, x (2,), C (3, 2), senses."""
    if sentence not in SENTENCES:
        raise LabParameterError(
            "sentence", f"sentence must be one of {', '.join(map(repr, SENTENCES))}"
        )
    label, word, index, context = SENTENCES[sentence]
    plane = WORDS[word]
    return {
        "tokens": label.split(),
        "word": word,
        "word_index": index,
        "context_index": [c[0] for c in context],
        "embedding": np.array(plane["embedding"]),  # (2,), the same in every sentence
        "context_vectors": np.array([_polar(a, r) for _, a, r in context]),  # (3, 2)
        "sense_names": [name for name, _ in plane["senses"]],
        "sense_vectors": np.array([_polar(a, SENSE_LENGTH) for _, a in plane["senses"]]),
    }


def compute(params: dict) -> dict:
    """The lab's result for validated ``params`` (see :data:`SCHEMA`).

    Returns ``tokens`` (the sentence), ``word``, ``word_index``, ``context_index`` and
    ``context_words`` (3 each); ``embedding`` (2,), ``context_vectors`` (3, 2),
    ``raw_weights`` and ``weights`` (3,; weights sum to 1, or are all 0 when every raw
    weight is 0, with ``reads_nothing`` true), ``delta`` (2,) and ``updated`` (2,);
    ``sense_names``, ``sense_vectors`` (n_senses, 2), ``cos_before`` and ``cos_after``
    (n_senses,), ``nearest_before`` and ``nearest_after`` (sense indices).
    """
    space = sentence_space(params["sentence"])
    raw = np.array([params[f"w{i + 1}"] for i in range(N_CONTEXT)], dtype=float)  # (3,)
    total = raw.sum()
    weights = raw / total if total > 0 else np.zeros(N_CONTEXT)  # (3,), sums to 1 or is 0
    x = space["embedding"]  # (2,)
    delta = weights @ space["context_vectors"]  # (3,) @ (3, 2) -> (2,)
    updated = x + delta  # the residual: the update is added, the embedding is kept
    senses = space["sense_vectors"]
    cos_before = cosine(senses, x)  # (n_senses,)
    cos_after = cosine(senses, updated)
    tokens = space["tokens"]
    return {
        "tokens": tokens,
        "word": space["word"],
        "word_index": space["word_index"],
        "context_index": space["context_index"],
        "context_words": [tokens[i] for i in space["context_index"]],
        "embedding": x,
        "context_vectors": space["context_vectors"],
        "raw_weights": raw,
        "weights": weights,
        "reads_nothing": bool(total == 0),
        "delta": delta,
        "updated": updated,
        "sense_names": space["sense_names"],
        "sense_vectors": senses,
        "cos_before": cos_before,
        "cos_after": cos_after,
        "nearest_before": int(np.argmax(cos_before)),
        "nearest_after": int(np.argmax(cos_after)),
    }


def static_view(result: dict, params: dict) -> list[Table | Text]:
    """Without JavaScript: what the word reads, and how close it is to each sense."""
    reads = ", ".join(
        f"“{w}” {x:.2f}" for w, x in zip(result["context_words"], result["weights"], strict=True)
    )

    def point(v):
        return f"({v[0]:.2f}, {v[1]:.2f})"

    senses = result["sense_names"]
    before, after = senses[result["nearest_before"]], senses[result["nearest_after"]]
    text = (
        f"“{result['word']}” reads nothing: its vector stays {point(result['embedding'])}."
        if result["reads_nothing"]
        else f"“{result['word']}” reads {reads}: its vector moves from "
        f"{point(result['embedding'])} to {point(result['updated'])}, nearest to the sense "
        f"“{before}” before and “{after}” after."
    )
    table = Table(
        f"How close “{result['word']}” is to each sense (cosine similarity) before and after.",
        ("Sense", "Before", "After"),
        [
            (s, (b, a))
            for s, b, a in zip(senses, result["cos_before"], result["cos_after"], strict=True)
        ],  # fmt: skip
        digits=2,
    )
    return [Text(text), table]
