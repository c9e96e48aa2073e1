"""Lab: values and the update of one attention head, for one picked query.

Each token's embedding x (a row of X, shape (seq_len, d_model)) is projected three times:
to a query q = x W_Q, a key k = x W_K and a value v = x W_V, each of width d_head. The
pattern A = softmax(Q K^T / sqrt(d_head)) (rows = queries, each summing to 1) says how much
each query reads from each key; the values say WHAT it reads. Query i's head output is the
weighted sum o_i = sum_j A_ij v_j (width d_head); the output projection W_O (d_head,
d_model) takes it back to the model's width, and the result, the update
Delta_i = o_i W_O, is ADDED to the embedding: x_i + Delta_i (the residual stream).
W_V W_O is a (d_model, d_model) matrix of rank at most d_head: the value map is low rank.
Source: Vaswani et al. 2017, "Attention Is All You Need", NeurIPS, eq. 1 and section 3.2.2.

Everything here is synthetic. Each token's embedding is a fixed random vector for its word
(case-folded: "The" and "the" are one word) plus a random vector for its position, scaled
by 1/sqrt(2) so that its components keep unit variance: the convention of every synthetic
lab of lessons 2 to 6. W_Q, W_K, W_V, W_O are random matrices, scaled so that projected
components keep unit variance. For the picture the lab projects
d_model-dimensional vectors onto the plane through the origin, the query's embedding x_i and
its updated embedding x_i + Delta_i (first direction: x_i; second: the part of Delta_i at
right angles to it), so those three are drawn exactly; other vectors are shown by their
projections, and a projection of a weighted sum is the weighted sum of the projections.
"""

from __future__ import annotations

import math

import numpy as np

from ..attention import entropy_bits, matmul, scaled_dot_product_attention
from ..params import LabParameterError, Param
from ..static import Table, Text
from . import _synthetic

D_MODEL = 16  # the synthetic embeddings' width: small enough to print, wide enough to matter
MAX_TOKENS = 64  # the schema's max_items: one position vector each

SCHEMA = (
    Param(
        "tokens",
        "tokens",
        ["The", "fluffy", "blue", "creature", "roamed", "the", "verdant", "forest"],
        "The sentence, one token per item.",
        max_items=MAX_TOKENS,
        max_chars=32,
    ),
    Param("query", "integer", 3, "The query token (0 = the first token).", 0, 63),
    Param(
        "d_head", "integer", 4, f"Width of queries, keys and values (d_model is {D_MODEL}).", 1, 16
    ),
    Param("seed", "integer", 0, "Seed for the random embeddings and weights.", 0, 2**31 - 1),
)

# The heaviest computation the schema allows (for make bench).
LARGEST = {"tokens": [f"w{i}" for i in range(64)], "query": 63, "d_head": D_MODEL}


def embeddings(tokens: list[str], seed: int) -> np.ndarray:
    """X: (seq_len, d_model): each token's word vector (case-folded) plus its position's,
    divided by sqrt(2) so that every component keeps unit variance."""
    return _synthetic.embeddings(tokens, seed, D_MODEL, MAX_TOKENS)


def weights(d_head: int, seed: int) -> dict[str, np.ndarray]:
    """Random W_Q, W_K, W_V (d_model, d_head) and W_O (d_head, d_model).

    Var(W) = 1 / (input width) keeps every projected component at unit variance."""
    rng = np.random.default_rng([seed, 5])
    W_Q, W_K, W_V = (rng.standard_normal((D_MODEL, d_head)) / math.sqrt(D_MODEL) for _ in "qkv")
    W_O = rng.standard_normal((d_head, D_MODEL)) / math.sqrt(d_head)
    return {"W_Q": W_Q, "W_K": W_K, "W_V": W_V, "W_O": W_O}


def head_output(X, W_Q, W_K, W_V, W_O):
    """One head, every step kept: a dict of Q, K, V (seq_len, d_head), logits and pattern
    (seq_len, seq_len) [query, key], weighted values O = A V (seq_len, d_head) and the
    update delta = O W_O (seq_len, d_model)."""
    Q, K, V = matmul(X, W_Q), matmul(X, W_K), matmul(X, W_V)  # (seq_len, d_head) each
    out, A = scaled_dot_product_attention(Q, K, V)  # (seq_len, d_head), (seq_len, seq_len)
    logits = matmul(Q, K.T) / math.sqrt(Q.shape[-1])  # (seq_len, seq_len), as inside the line above
    delta = matmul(out, W_O)  # (seq_len, d_model)
    return {"Q": Q, "K": K, "V": V, "logits": logits, "pattern": A, "O": out, "delta": delta}


def _plane(x: np.ndarray, delta: np.ndarray) -> np.ndarray:
    """(2, d_model): an orthonormal basis of the plane through the origin, x and x + delta.

    The first direction is x's, the second the part of delta at right angles to x, so x,
    delta and x + delta are drawn exactly (any other vector is shown by its projection).
    If delta is parallel to x (or zero), the second direction is any one at right angles."""
    e1 = x / np.linalg.norm(x)
    rest = delta - (delta @ e1) * e1
    if np.linalg.norm(rest) < 1e-12 * max(np.linalg.norm(delta), 1.0):
        rest = np.eye(len(x))[np.abs(e1).argmin()]  # the axis least like x
        rest = rest - (rest @ e1) * e1
    return np.stack([e1, rest / np.linalg.norm(rest)])


def compute(params: dict) -> dict:
    """The lab's result for validated ``params`` (see :data:`SCHEMA`).

    Returns ``tokens``, ``query``, ``d_model``, ``d_head``; ``pattern`` (seq_len, seq_len)
    and ``row`` (the query's weights, seq_len); ``values`` (seq_len, d_head), ``output``
    (the query's weighted sum of values, d_head), ``delta``, ``x`` and ``updated``
    (d_model each, for the query); ``value_rank`` (rank of W_V W_O) and ``update_rank``
    (rank of the (seq_len, d_model) matrix of every token's update); ``plane``: the 2-D
    coordinates of every token's embedding, every value mapped to the model's width
    (v_j W_O), the query's x, Delta and x + Delta (exact), and ``kept`` (seq_len,: the
    share of each v_j W_O's squared length the plane shows); ``shapes``: each step's name and shape.
    Raises LabParameterError for a query that is not a token of the sentence.
    """
    tokens = params["tokens"]
    seq_len, d_head, i = len(tokens), params["d_head"], params["query"]
    if i >= seq_len:
        raise LabParameterError(
            "query",
            f"query must be a whole number from 0 to {seq_len - 1} (a token of the "
            f"{seq_len}-token sentence), got {i}",
        )
    X = embeddings(tokens, params["seed"])  # (seq_len, d_model)
    W = weights(d_head, params["seed"])
    head = head_output(X, **W)
    delta = head["delta"]  # (seq_len, d_model)
    updated = X + delta  # (seq_len, d_model): the residual stream after the head
    basis = _plane(X[i], delta[i])  # (2, d_model)
    moved = head["V"] @ W["W_O"]  # (seq_len, d_model): each value at the model's width
    # The share of each value's squared length (at the model's width) the plane shows.
    kept = np.sum((moved @ basis.T) ** 2, axis=1) / np.maximum(np.sum(moved**2, axis=1), 1e-300)
    shapes = [
        ("X", X.shape),
        ("W_Q", W["W_Q"].shape),
        ("W_K", W["W_K"].shape),
        ("W_V", W["W_V"].shape),
        ("Q", head["Q"].shape),
        ("K", head["K"].shape),
        ("V", head["V"].shape),
        ("scores", head["logits"].shape),
        ("pattern", head["pattern"].shape),
        ("weighted values", head["O"].shape),
        ("W_O", W["W_O"].shape),
        ("delta", delta.shape),
        ("updated", updated.shape),
    ]
    row = head["pattern"][i]
    return {
        "tokens": list(tokens),
        "query": i,
        "d_model": D_MODEL,
        "d_head": d_head,
        "pattern": head["pattern"],
        "row": row,
        "entropy_bits": float(entropy_bits(row)),
        "top_key": int(row.argmax()),
        "values": head["V"],
        "output": head["O"][i],
        "x": X[i],
        "delta": delta[i],
        "updated": updated[i],
        "value_rank": int(np.linalg.matrix_rank(W["W_V"] @ W["W_O"])),
        "update_rank": int(np.linalg.matrix_rank(delta)),
        "plane": {
            "embeddings": X @ basis.T,  # (seq_len, 2)
            "values": moved @ basis.T,  # (seq_len, 2)
            "x": basis @ X[i],
            "delta": basis @ delta[i],
            "updated": basis @ updated[i],
            "kept": kept,  # (seq_len,)
        },
        "shapes": [{"name": n, "shape": list(s)} for n, s in shapes],
    }


def static_view(result: dict, params: dict) -> list[Table | Text]:
    """Without JavaScript: the query's weights, every value row, and its output."""
    tokens, q = result["tokens"], result["query"]
    d_head = result["d_head"]
    rows = [(f"{t} ({j})", (result["row"][j], *result["values"][j])) for j, t in enumerate(tokens)]
    caption = (
        f"Query “{tokens[q]}” ({q}): its weight on every token, and each token's value "
        f"v (d_head = {d_head})."
    )
    columns = ("Token", "Weight", *(f"v[{i}]" for i in range(d_head)))
    out = ", ".join(f"{x:.3f}" for x in result["output"])
    return [
        Table(caption, columns, rows),
        Text(
            f"The output is the weighted sum of the values: ({out}). Mapped to d_model = "
            f"{result['d_model']} by W_O, it is added to the token's vector."
        ),
    ]
