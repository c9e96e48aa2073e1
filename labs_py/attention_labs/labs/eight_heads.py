"""Lab: eight attention heads of one multi-head layer on one sentence, side by side.

A multi-head layer (Vaswani et al. 2017, "Attention Is All You Need", NeurIPS, section
3.2.2) runs n_heads = 8 heads of width d_head = d_model / n_heads = 8 in parallel on the
same embeddings X (seq_len, d_model = 64). Each head has its own pattern (8, seq_len,
seq_len), indexed [head, query, key], every row summing to 1; the lab reports each row's
entropy in bits (H = -sum_j p_j log2 p_j, Shannon 1948) and top key.

The heads are SYNTHETIC, built by hand so that they differ the way heads of trained models
are found to differ (Voita et al. 2019, ACL; Clark et al. 2019, BlackboxNLP):

- Each embedding is [a random word vector (56 numbers) | a position code (8 numbers)]:
  the position code of token p is (cos w_f p, sin w_f p) for four frequencies w_f.
- Head 0, previous token: its query rotates the position code back by one step, so query i
  matches key i - 1. Head 1, first token: a constant query (the query bias b_Q) equal to
  the code of position 0. Head 2, self. Head 3, next token (rotated forward).
- Head 4, same word: W_Q = W_K on the word vector, so a token matches itself and every
  copy of its word. Heads 5-7: random W_Q, W_K on the word vector (random content heads).
- W_V and W_O are random.

The whole layer is attention_labs.multi_head_attention (checked against
torch.nn.MultiheadAttention with the same weights in tests/python/test_lab_eight_heads.py).
"""

from __future__ import annotations

import functools
import math
import zlib

import numpy as np

from ..attention import entropy_bits, multi_head_attention
from ..params import LabParameterError, Param
from ..static import Table, Text

D_MODEL, N_HEADS = 64, 8
D_HEAD = D_MODEL // N_HEADS  # 8
D_WORD, D_POS = 56, 8  # the word vector and the position code of each embedding
FREQUENCIES = np.array([2.7, 1.7, 0.63, 0.33])  # radians per position; one peak within 64
STRENGTH = 7.0  # how sharply the positional heads look for their position
KINDS = (
    "previous token",
    "first token",
    "self",
    "next token",
    "same word",
    "random content",
    "random content",
    "random content",
)

SCHEMA = (
    Param(
        "tokens",
        "tokens",
        ["The", "fluffy", "blue", "creature", "roamed", "the", "verdant", "forest"],
        "The sentence, one token per item.",
        max_items=32,
        max_chars=32,
    ),
    Param("query", "integer", 3, "The query token described under each head (0 = first).", 0, 31),
    Param("seed", "integer", 0, "Seed for the random word vectors and weights.", 0, 2**31 - 1),
)

LARGEST = {"tokens": [f"w{i}" for i in range(32)], "query": 31}


@functools.lru_cache(maxsize=4096)
def _word_vector(token: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng([seed, zlib.crc32(token.casefold().encode("utf-8"))])
    vector = rng.standard_normal(D_WORD)
    vector.flags.writeable = False
    return vector


def position_codes(seq_len: int) -> np.ndarray:
    """(seq_len, 8): (cos w_f p, sin w_f p) for each frequency w_f, interleaved."""
    angle = np.arange(seq_len)[:, None] * FREQUENCIES  # (seq_len, 4)
    return np.stack([np.cos(angle), np.sin(angle)], axis=-1).reshape(seq_len, D_POS)


def _rotation(steps: int) -> np.ndarray:
    """(8, 8): row-vector map taking the code of position p to that of p + steps."""
    R = np.zeros((D_POS, D_POS))
    for f, w in enumerate(FREQUENCIES):
        c, s = math.cos(w * steps), math.sin(w * steps)
        R[2 * f : 2 * f + 2, 2 * f : 2 * f + 2] = [[c, s], [-s, c]]
    return R


def embeddings(tokens: list[str], seed: int) -> np.ndarray:
    """X: (seq_len, d_model) = [word vector | position code]."""
    words = np.stack([_word_vector(t, seed) for t in tokens])  # (seq_len, 56)
    return np.concatenate([words, position_codes(len(tokens))], axis=1)


@functools.lru_cache(maxsize=64)
def layer_weights(seed: int) -> dict[str, np.ndarray]:
    """W_Q, W_K, W_V, W_O (d_model, d_model) and b_Q (d_model,) of the eight heads.

    Head h owns columns h*8 .. h*8+7 of W_Q, W_K, W_V and rows h*8 .. h*8+7 of W_O."""
    rng = np.random.default_rng([seed, 8])
    W_Q, W_K = np.zeros((D_MODEL, D_MODEL)), np.zeros((D_MODEL, D_MODEL))
    b_Q = np.zeros(D_MODEL)
    pos = slice(D_WORD, D_MODEL)  # the rows of the position code
    word = slice(0, D_WORD)

    def cols(h):
        return slice(h * D_HEAD, (h + 1) * D_HEAD)

    for h, steps in ((0, -1), (2, 0), (3, 1)):  # previous token, self, next token
        W_Q[pos, cols(h)] = STRENGTH * _rotation(steps)
        W_K[pos, cols(h)] = np.eye(D_POS)
    b_Q[cols(1)] = STRENGTH * position_codes(1)[0]  # first token: a constant query
    W_K[pos, cols(1)] = np.eye(D_POS)
    same = rng.standard_normal((D_WORD, D_HEAD)) * (2.0 / math.sqrt(D_WORD))
    W_Q[word, cols(4)] = W_K[word, cols(4)] = same  # same word: q_i . k_j = |P w|^2 peaks at j ~ i
    for h in (5, 6, 7):
        W_Q[word, cols(h)] = rng.standard_normal((D_WORD, D_HEAD)) / math.sqrt(D_WORD)
        W_K[word, cols(h)] = rng.standard_normal((D_WORD, D_HEAD)) * (1.5 / math.sqrt(D_WORD))
    W_V = rng.standard_normal((D_MODEL, D_MODEL)) / math.sqrt(D_MODEL)
    W_O = rng.standard_normal((D_MODEL, D_MODEL)) / math.sqrt(D_MODEL)
    out = {"W_Q": W_Q, "W_K": W_K, "W_V": W_V, "W_O": W_O, "b_Q": b_Q}
    for a in out.values():
        a.flags.writeable = False  # shared by the cache
    return out


def layer(tokens: list[str], seed: int):
    """(X, weights, output (seq_len, d_model), pattern (n_heads, seq_len, seq_len))."""
    X = embeddings(tokens, seed)
    W = layer_weights(seed)
    output, pattern = multi_head_attention(X, n_heads=N_HEADS, **W)
    return X, W, output, pattern


def check_query(query: int, seq_len: int) -> None:
    if query >= seq_len:
        raise LabParameterError(
            "query",
            f"query must be a whole number from 0 to {seq_len - 1} (a token of the "
            f"{seq_len}-token sentence), got {query}",
        )


def compute(params: dict) -> dict:
    """The lab's result for validated ``params`` (see :data:`SCHEMA`).

    Returns ``tokens``, ``query``, ``kinds`` (what each head was built to do); ``weights``
    (n_heads, seq_len, seq_len) [head, query, key]; ``entropy_bits`` and ``top_key``
    (n_heads, seq_len); ``mean_entropy_bits`` (n_heads,); ``max_entropy_bits``
    (log2 seq_len); ``d_model``, ``n_heads``, ``d_head``.
    """
    tokens = params["tokens"]
    check_query(params["query"], len(tokens))
    _, _, _, pattern = layer(tokens, params["seed"])
    entropy = entropy_bits(pattern)  # (n_heads, seq_len)
    return {
        "tokens": list(tokens),
        "query": params["query"],
        "kinds": list(KINDS),
        "weights": pattern,
        "entropy_bits": entropy,
        "mean_entropy_bits": entropy.mean(axis=-1),
        "max_entropy_bits": math.log2(len(tokens)),
        "top_key": pattern.argmax(axis=-1),
        "d_model": D_MODEL,
        "n_heads": N_HEADS,
        "d_head": D_HEAD,
    }


def static_view(result: dict, params: dict) -> list[Table | Text]:
    """Without JavaScript: the chosen query's row in every head."""
    q, tokens = result["query"], result["tokens"]
    rows = [
        (f"head {h + 1}: {kind}", result["weights"][h][q]) for h, kind in enumerate(result["kinds"])
    ]
    caption = (
        f"Query “{tokens[q]}” ({q}) in each of the {result['n_heads']} heads "
        f"(d_head {result['d_head']}): its weight on every key; each row sums to 1."
    )
    return [
        Table(caption, ("Head \\ key", *tokens), rows, digits=2, shade=True),
        Text(
            "Mean entropy of each head's rows, in bits (at most "
            f"{result['max_entropy_bits']:.2f}): "
            + ", ".join(f"head {h + 1} {e:.2f}" for h, e in enumerate(result["mean_entropy_bits"]))
            + "."
        ),
    ]
