"""Lab: shuffle a sentence's tokens and watch one head's pattern permute with them.

Each token's embedding is a random vector for its text (the same text, the same vector)
and, when ``positions`` is on, plus the sinusoidal encoding of its place in the sentence
(Vaswani et al. 2017, section 3.5, scaled to unit variance). A random head (random W_Q,
W_K, W_V, not trained) turns the embeddings into queries, keys and values, and the lab
computes the pattern and the head's output twice: for the sentence as written and for
the shuffled one.

Shuffling the rows of X by a permutation P (X' = P X) gives Q' = P Q, K' = P K,
V' = P V, so the pattern becomes A' = P A P^T and the output O' = P O: attention without
positions is permutation-EQUIVARIANT (the outputs move with their tokens), not invariant.
The lab un-permutes A' and O' and reports the largest difference from A and O: 0 up to
float rounding without positions, clearly non-zero with them.

Shapes: ``tokens`` has seq_len items; every matrix is (seq_len, seq_len) [query, key];
outputs are (seq_len, d_head). ``order[i]`` is the index, in the sentence as written, of
the token the shuffled sentence has at place i.
"""

from __future__ import annotations

import functools
import math
import zlib

import numpy as np

from ..attention import attention_logits, matmul, sinusoidal_positions, softmax
from ..params import LabParameterError, Param
from ..static import Table, Text, weights_table

MAX_TOKENS = 32
D_MODEL = 64  # width of the random word embeddings

SCHEMA = (
    Param(
        "tokens",
        "tokens",
        ["the", "dog", "bit", "the", "man"],
        "The sentence, one token per item.",
        max_items=MAX_TOKENS,
        max_chars=24,
    ),
    Param(
        "shuffle",
        "integer",
        1,
        "Seed of the shuffle (0: the order as written).",
        0,
        9999,
    ),
    Param(
        "order",
        "tokens",
        [],
        "Explicit order (token indices of the sentence as written); empty: use the shuffle seed.",
        min_items=0,
        max_items=MAX_TOKENS,
        max_chars=2,
    ),
    Param("positions", "boolean", False, "Add a position encoding to each embedding."),
    Param("d_head", "integer", 16, "Width of queries, keys and values.", 2, 64),
    Param("seed", "integer", 0, "Seed of the random embeddings and W_Q, W_K, W_V.", 0, 9999),
)

# "order" emptied: a page's explicit order lists its own sentence's indices, not 32 of them.
LARGEST = {
    "tokens": [f"t{i}" for i in range(MAX_TOKENS)],
    "order": [],
    "positions": True,
    "d_head": 64,
}


@functools.lru_cache(maxsize=1024)
def _word_embedding(token: str, seed: int) -> np.ndarray:
    # crc32, not hash(): Python salts str hashes per process; the page must match CPython.
    rng = np.random.default_rng([seed, zlib.crc32(token.encode("utf-8"))])
    vector = rng.standard_normal(D_MODEL)
    vector.flags.writeable = False
    return vector


@functools.lru_cache(maxsize=64)
def _head(seed: int, d_head: int):
    # [seed, 2**32]: a stream that no token's [seed, crc32] can be.
    rng = np.random.default_rng([seed, 2**32])
    # Var(W) = 1/d_model keeps each projected component at unit variance.
    return tuple(rng.standard_normal((D_MODEL, d_head)) / math.sqrt(D_MODEL) for _ in range(3))


def resolve_order(params: dict) -> np.ndarray:
    """The permutation the lab applies: ``order`` if given, else the seeded shuffle."""
    seq_len = len(params["tokens"])
    order = params["order"]
    if order:
        try:
            perm = np.array([int(i) for i in order])
        except ValueError:
            perm = None
        if perm is None or sorted(perm.tolist()) != list(range(seq_len)):
            raise LabParameterError(
                "order",
                f"order must list each of 0 to {seq_len - 1} once (a permutation of the "
                f"{seq_len} tokens), got {list(order)!r}",
            )
        return perm
    if params["shuffle"] == 0:
        return np.arange(seq_len)
    return np.random.default_rng(params["shuffle"]).permutation(seq_len)


def embed(tokens: list[str], positions: bool, seed: int) -> np.ndarray:
    """(seq_len, D_MODEL) embeddings: word vectors, plus position encodings if asked."""
    X = np.stack([_word_embedding(t, seed) for t in tokens])
    if positions:
        # sin and cos have variance 1/2: times sqrt(2) gives unit variance like the words.
        X = X + math.sqrt(2) * sinusoidal_positions(np.arange(len(tokens)), D_MODEL)
    return X


def head(X: np.ndarray, seed: int, d_head: int):
    """The random head on embeddings X: (weights [query, key], output (seq_len, d_head))."""
    W_Q, W_K, W_V = _head(seed, d_head)
    weights = softmax(attention_logits(matmul(X, W_Q), matmul(X, W_K)))  # (seq_len, seq_len)
    return weights, matmul(weights, matmul(X, W_V))


def compute(params: dict) -> dict:
    """The pattern and output for the sentence as written and shuffled (see module doc).

    Returns ``tokens``, ``order`` and ``shuffled_tokens``; ``weights`` and ``output``
    (as written), ``shuffled_weights`` and ``shuffled_output`` (shuffled, rows and columns
    in the shuffled order); ``pattern_diff`` and ``output_diff``: the largest absolute
    difference between the shuffled results, un-permuted, and the original ones.
    """
    tokens = params["tokens"]
    order = resolve_order(params)
    seq_len = len(tokens)
    shuffled = [tokens[i] for i in order]
    weights, output = head(
        embed(tokens, params["positions"], params["seed"]), params["seed"], params["d_head"]
    )
    s_weights, s_output = head(
        embed(shuffled, params["positions"], params["seed"]), params["seed"], params["d_head"]
    )
    back = np.empty(seq_len, dtype=int)
    back[order] = np.arange(seq_len)  # place of original token j in the shuffled sentence
    return {
        "tokens": list(tokens),
        "order": order,
        "shuffled_tokens": shuffled,
        "weights": weights,
        "output": output,
        "shuffled_weights": s_weights,
        "shuffled_output": s_output,
        "top_key": weights.argmax(axis=-1),
        "shuffled_top_key": s_weights.argmax(axis=-1),
        "pattern_diff": float(np.abs(s_weights[back][:, back] - weights).max()),
        "output_diff": float(np.abs(s_output[back] - output).max()),
    }


def static_view(result: dict, params: dict) -> list[Table | Text]:
    """Without JavaScript: the pattern as written, and how the shuffled one compares."""
    tokens = result["tokens"]
    caption = "Weights of the sentence as written: one row per query, one column per key."
    return [
        weights_table(caption, tokens, tokens, result["weights"]),
        Text(
            f"Shuffled to “{' '.join(result['shuffled_tokens'])}”, the pattern and the "
            "outputs are the same ones, moved with their tokens: after un-shuffling they "
            f"differ by at most {result['pattern_diff']:.1e} and {result['output_diff']:.1e}."
        ),
    ]
