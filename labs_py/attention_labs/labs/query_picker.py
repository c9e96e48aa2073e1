"""Lab: pick a query token; see its query vector, its score with every key, and its row.

A synthetic head for lesson 2 (docs/lessons/02-queries-and-keys.md). Nothing here is
learned:

- each distinct word, case-folded ("The" and "the" are one word, as for MiniLM's uncased
  tokenizer; the convention of every synthetic lab of lessons 2 to 6), gets a fixed random
  embedding of d_model = 64 standard normal components, and each position a smaller random
  vector (standard deviation 0.5) that is added to it, so that a repeated word is told
  apart by where it is;
- ``W_Q`` and ``W_K`` are random (d_model, d_head) matrices with entries of variance
  1 / d_model, so each component of a query or key has a variance near 1.25.

Then, as in Vaswani et al. 2017 (section 3.2.1):

    X (seq_len, d_model) -> Q = X W_Q (seq_len, d_head), K = X W_K (seq_len, d_head)
    S = Q K^T (seq_len, seq_len), indexed [query, key]

The picked query's row of S is turned into weights by a softmax over the keys of
S / sqrt(d_head) (lesson 3 explains both steps).
"""

from __future__ import annotations

import math

import numpy as np

from ..attention import matmul, softmax
from ..params import LabParameterError, Param
from ..static import Table, Text
from ._synthetic import word_vectors

D_MODEL = 64
MAX_TOKENS = 32
POSITION_STD = 0.5
SHOWN_DIMS = 8  # how many of the query's components the widget draws

SCHEMA = (
    Param(
        "tokens",
        "tokens",
        ["The", "mole", "dug", "a", "tunnel", "under", "the", "lawn"],
        "The sentence, one token per item.",
        max_items=MAX_TOKENS,
        max_chars=32,
    ),
    Param("query", "integer", 1, "Which token's query (0 is the first token).", 0, MAX_TOKENS - 1),
    Param("d_head", "integer", 16, "Width of queries and keys (d_head).", 2, D_MODEL),
    Param("seed", "integer", 1, "Seed for the random embeddings and W_Q, W_K.", 0, 2**31 - 1),
)
LARGEST = {"tokens": [f"t{i}" for i in range(MAX_TOKENS)], "query": MAX_TOKENS - 1, "d_head": 64}


def token_embeddings(tokens: list[str], seed: int) -> np.ndarray:
    """Each token's fixed random embedding, (seq_len, d_model), standard normal components
    (:func:`._synthetic.word_vectors`: the case-folded word and the seed only)."""
    return word_vectors(tokens, seed, D_MODEL)


def embeddings(tokens: list[str], seed: int) -> np.ndarray:
    """X, shape (seq_len, d_model): each token's random embedding plus its position's."""
    positions = np.random.default_rng([seed, 1]).standard_normal((len(tokens), D_MODEL))
    return token_embeddings(tokens, seed) + POSITION_STD * positions


def projections(d_head: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Random W_Q, W_K, each (d_model, d_head), entries of variance 1 / d_model."""
    rng = np.random.default_rng([seed, 2])
    W_Q = rng.standard_normal((D_MODEL, d_head)) / math.sqrt(D_MODEL)
    W_K = rng.standard_normal((D_MODEL, d_head)) / math.sqrt(D_MODEL)
    return W_Q, W_K


def compute(params: dict) -> dict:
    """The lab's result for validated ``params`` (see :data:`SCHEMA`).

    Returns ``tokens``, ``query`` (the picked index), ``seed``, ``d_model``, ``d_head``, ``shapes``
    (name -> [rows, cols] for X, W_Q, W_K, Q, K, S); ``q`` (d_head,), the picked query;
    ``shown_dims`` (how many of its first components to draw); ``scores`` (seq_len,),
    its dot product with every key (row ``query`` of ``S``); ``S`` (seq_len, seq_len),
    indexed [query, key]; ``weights`` (seq_len,), softmax of scores / sqrt(d_head);
    ``top_key``. Raises LabParameterError for a ``query`` outside the sentence.
    """
    tokens = params["tokens"]
    seq_len, d_head, query = len(tokens), params["d_head"], params["query"]
    if query >= seq_len:
        raise LabParameterError(
            "query",
            f"query must be a whole number from 0 to {seq_len - 1} (the sentence has "
            f"{seq_len} tokens), got {query}",
        )
    X = embeddings(tokens, params["seed"])  # (seq_len, d_model)
    W_Q, W_K = projections(d_head, params["seed"])  # (d_model, d_head) each
    Q = matmul(X, W_Q)  # (seq_len, d_head)
    K = matmul(X, W_K)  # (seq_len, d_head)
    S = matmul(Q, K.T)  # (seq_len, seq_len), [query, key]
    scores = S[query]  # (seq_len,): q . k_j for every key j
    weights = softmax(scores / math.sqrt(d_head))  # (seq_len,), sums to 1
    return {
        "tokens": list(tokens),
        "query": query,
        "seed": params["seed"],
        "d_model": D_MODEL,
        "d_head": d_head,
        "shapes": {
            "X": [seq_len, D_MODEL],
            "W_Q": [D_MODEL, d_head],
            "W_K": [D_MODEL, d_head],
            "Q": [seq_len, d_head],
            "K": [seq_len, d_head],
            "S": [seq_len, seq_len],
        },
        "q": Q[query],
        "shown_dims": min(SHOWN_DIMS, d_head),
        "scores": scores,
        "S": S,
        "weights": weights,
        "top_key": int(np.argmax(weights)),
    }


def static_view(result: dict, params: dict) -> list[Table | Text]:
    """Without JavaScript: the picked query's score with every key, and its weights."""
    tokens, q = result["tokens"], result["query"]
    rows = [
        (f"{t} ({j})", (result["scores"][j], result["weights"][j])) for j, t in enumerate(tokens)
    ]
    caption = (
        f"Query “{tokens[q]}” ({q}), d_head {result['d_head']}: its score q · k with every "
        "key, and the weights (softmax of the scores divided by sqrt(d_head))."
    )
    return [
        Table(caption, ("Key", "Score", "Weight"), rows, digits=3),
        Text(f"It attends most to “{tokens[result['top_key']]}” ({result['top_key']})."),
    ]
