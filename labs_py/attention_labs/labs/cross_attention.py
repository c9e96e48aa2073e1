"""Lab: cross-attention from a target sentence (queries) to a source sentence (keys, values).

A short translation pair, e.g. the English source "the black cat sleeps" and its French
target "le chat noir dort". The decoder's tokens make the queries, Q = X_t W_Q with shape
(seq_q, d_head); the encoder's tokens make the keys and values, K = X_s W_K and
V = X_s W_V with shape (seq_k, d_head). The pattern is rectangular, (seq_q, seq_k),
indexed [target query, source key]; softmax runs over the source keys, so each row sums
to 1 (Vaswani et al. 2017, NeurIPS, section 3.2.3, "encoder-decoder attention").

Nothing here is a trained translator. Embeddings are random vectors per token text and
per position, and W_Q, W_K, W_V are random (seeded) matrices; the ``random`` pattern
says nothing about which words translate which. The ``aligned`` preset is built by hand:
each target query is made to point at the key of the source word it translates (its dot
product with that key is 3 sqrt(d_head) above its dot product with any other key, plus
0.4 of the random query as noise), so that pattern is an alignment BY CONSTRUCTION, not
something learned.

Masks, True = the query may read the key:

- the source padding mask: the source is followed by ``pad`` PAD tokens (as in a batch
  with a longer source sentence); with ``source_padding_mask`` on, every query gets weight
  exactly 0 on them (torch.nn.MultiheadAttention's ``key_padding_mask`` is its negation);
- ``causal``: a causal mask put, wrongly, into cross-attention: target query i may read
  source keys j <= i only. Target and source positions do not correspond, and the whole
  source is known before the first target word, so this only hides words for nothing;
- the decoder's own self-attention (target x target) IS causal; the lab returns it too.

Shapes: seq_q = len(target) <= 5, seq_k = len(source) + pad <= 9, d_model = 32,
d_head = 16.
"""

from __future__ import annotations

import functools
import math
import zlib

import numpy as np

from ..attention import (
    causal_mask,
    entropy_bits,
    scaled_dot_product_attention,
)
from ..params import LabParameterError, Param
from ..static import Table, Text, weights_table

D_MODEL = 32  # width of the random token embeddings
D_HEAD = 16  # width of queries, keys and values
BOOST = 3.0 * math.sqrt(D_HEAD)  # aligned preset: the aligned key's extra score, x sqrt(d_head)
NOISE = 0.4  # aligned preset: how much of the random query is kept, as noise
MAX_PAD = 4
PAD = "PAD"

# Each pair: source (English) tokens, target tokens, and for the aligned preset the source
# word that each target word translates (hand-written; used by nothing else).
PAIRS = {
    "en-fr": {
        "languages": ("English", "French"),
        "source": ["the", "black", "cat", "sleeps"],
        "target": ["le", "chat", "noir", "dort"],
        "align": [0, 2, 1, 3],  # le-the, chat-cat, noir-black, dort-sleeps
    },
    "en-de": {
        "languages": ("English", "German"),
        "source": ["I", "have", "seen", "the", "film"],
        "target": ["ich", "habe", "den", "Film", "gesehen"],
        "align": [0, 1, 3, 4, 2],  # the participle goes last in German
    },
    "en-de-short": {
        "languages": ("English", "German"),
        "source": ["it", "is", "raining"],
        "target": ["es", "regnet"],
        "align": [0, 2],  # es-it, regnet-raining
    },
}
MAX_TARGET = max(len(p["target"]) for p in PAIRS.values())

SCHEMA = (
    Param(
        "pair",
        "choice",
        "en-fr",
        "The translation pair: a source sentence and its target.",
        choices=tuple(PAIRS),
        # each option names its sentences, e.g. "it is raining → es regnet"
        labels={
            name: f"{' '.join(p['source'])} → {' '.join(p['target'])}" for name, p in PAIRS.items()
        },
    ),
    Param("query", "integer", 1, "Which target query (row) to inspect.", 0, MAX_TARGET - 1),
    Param("temperature", "number", 1.0, "Divides the logits before softmax.", 0.05, 10.0),
    Param("pad", "integer", 2, "PAD tokens after the source sentence (a batch).", 0, MAX_PAD),
    Param(
        "source_padding_mask",
        "boolean",
        True,
        "Hide the source's PAD keys from every query (the source padding mask).",
    ),
    Param(
        "causal",
        "boolean",
        False,
        "Put a causal mask into cross-attention (a mistake): query i reads source keys j <= i.",
    ),
    Param(
        "preset",
        "choice",
        "random",
        "Random W_Q, W_K, or queries built by hand to point at the aligned source word.",
        choices=("random", "aligned"),
        labels={"random": "Random W_Q, W_K", "aligned": "Aligned by construction"},
    ),
    Param("seed", "integer", 0, "Seed for the random embeddings and matrices.", 0, 2**31 - 1),
)

LARGEST = {"pair": "en-de", "pad": MAX_PAD, "causal": True}  # for make bench


@functools.lru_cache(maxsize=256)
def _word(token: str, seed: int) -> np.ndarray:
    """A random unit-variance embedding for a token's text (crc32: stable across runs)."""
    v = np.random.default_rng([seed, zlib.crc32(token.encode("utf-8"))]).standard_normal(D_MODEL)
    v.flags.writeable = False
    return v


@functools.lru_cache(maxsize=16)
def _positions(seed: int, stream: int) -> np.ndarray:
    """(16, D_MODEL) random position vectors; stream 0 for the source, 1 for the target."""
    v = np.random.default_rng([seed, 2**32 + stream]).standard_normal((16, D_MODEL))
    v.flags.writeable = False
    return v


def embed(tokens: list[str], seed: int, stream: int) -> np.ndarray:
    """(len(tokens), D_MODEL): word plus position, / sqrt(2) for unit variance."""
    words = np.stack([_word(t, seed) for t in tokens])
    return (words + _positions(seed, stream)[: len(tokens)]) / math.sqrt(2)


@functools.lru_cache(maxsize=16)
def weights_for(seed: int) -> dict[str, np.ndarray]:
    """Random (D_MODEL, D_HEAD) matrices, variance 1/D_MODEL: unit-variance q, k, v."""
    rng = np.random.default_rng(seed)
    names = ("W_Q", "W_K", "W_V", "W_Q_self", "W_K_self", "W_V_self")
    out = {n: rng.standard_normal((D_MODEL, D_HEAD)) / math.sqrt(D_MODEL) for n in names}
    for w in out.values():
        w.flags.writeable = False
    return out


def inputs(params: dict) -> dict:
    """Everything the lab computes from: tokens, X_t, X_s, W's, Q, K, V and the masks."""
    pair = PAIRS[params["pair"]]
    target = list(pair["target"])
    source = list(pair["source"]) + [PAD] * params["pad"]
    seq_q, seq_k = len(target), len(source)
    seed = params["seed"]
    X_t = embed(target, seed, 1)  # (seq_q, d_model)
    X_s = embed(source, seed, 0)  # (seq_k, d_model)
    W = weights_for(seed)
    Q = X_t @ W["W_Q"]  # (seq_q, d_head): from the target
    K = X_s @ W["W_K"]  # (seq_k, d_head): from the source, once
    V = X_s @ W["W_V"]  # (seq_k, d_head)
    if params["preset"] == "aligned":
        # By construction: D = pinv(K)^T has D[a] . K[j] = 1 if j == a else 0, so query i
        # scores the key of the word it translates BOOST higher than any other key, plus
        # a little of the random query as noise.
        D = np.linalg.pinv(K).T  # (seq_k, d_head)
        Q = BOOST * D[pair["align"]] + NOISE * Q
    source_mask = np.arange(seq_k) < len(pair["source"])  # (seq_k,) True = real token
    if not params["source_padding_mask"]:
        source_mask = np.ones(seq_k, dtype=bool)
    mask = np.broadcast_to(source_mask, (seq_q, seq_k))  # the same keys for every query
    if params["causal"]:
        mask = mask & np.tri(seq_q, seq_k, dtype=bool)  # key j <= query i: the mistake
    return {
        "pair": pair,
        "target": target,
        "source": source,
        "X_t": X_t,
        "X_s": X_s,
        "W": W,
        "Q": Q,
        "K": K,
        "V": V,
        "source_mask": source_mask,
        "mask": np.ascontiguousarray(mask),
    }


def compute(params: dict) -> dict:
    """The lab's result for validated ``params`` (see :data:`SCHEMA`).

    Returns ``tokens`` (the target: rows, queries) and ``key_tokens`` (the source with its
    PAD tokens: columns, keys and values); ``logits`` and ``weights`` (seq_q, seq_k)
    [query, key] (masked logits -inf, their weights exactly 0; rows sum to 1);
    ``row_sums``, ``top_key``, ``entropy_bits``, ``max_entropy_bits``; ``row`` (the
    chosen query's weights); ``unseen_keys`` (source keys that no query can read);
    ``self`` (the decoder's causal self-attention on the target: tokens, weights, logits,
    top_key, entropy_bits, max_entropy_bits); ``shapes``; ``languages``. Raises
    LabParameterError (param ``query``) unless query < seq_q.
    """
    ins = inputs(params)
    target, source = ins["target"], ins["source"]
    seq_q, seq_k = len(target), len(source)
    q = params["query"]
    if q >= seq_q:
        raise LabParameterError(
            "query", f"query must be a whole number from 0 to {seq_q - 1} for this pair, got {q}"
        )
    mask = ins["mask"]
    temp = params["temperature"]
    out, weights = scaled_dot_product_attention(
        ins["Q"], ins["K"], ins["V"], mask=mask, temperature=temp
    )  # out (seq_q, d_head); weights (seq_q, seq_k)
    logits = ins["Q"] @ ins["K"].T / math.sqrt(D_HEAD) / temp  # (seq_q, seq_k)
    visible = mask.sum(axis=-1)

    # The decoder's own self-attention: queries AND keys from the target, causal.
    W = ins["W"]
    causal = causal_mask(seq_q)
    Qs, Ks = ins["X_t"] @ W["W_Q_self"], ins["X_t"] @ W["W_K_self"]
    _, self_w = scaled_dot_product_attention(
        Qs, Ks, ins["X_t"] @ W["W_V_self"], mask=causal, temperature=temp
    )
    self_logits = Qs @ Ks.T / math.sqrt(D_HEAD) / temp
    return {
        "tokens": target,
        "key_tokens": source,
        "languages": list(ins["pair"]["languages"]),
        "target_lengths": {name: len(p["target"]) for name, p in PAIRS.items()},
        "query": q,
        "logits": np.where(mask, logits, -np.inf),
        "weights": weights,
        "row_sums": weights.sum(axis=-1),
        "top_key": weights.argmax(axis=-1),
        "entropy_bits": entropy_bits(weights),
        "max_entropy_bits": np.log2(np.maximum(visible, 1)),
        "row": weights[q],
        "unseen_keys": [int(j) for j in np.flatnonzero(~mask.any(axis=0))],
        "pad_weight": float(weights[:, len(ins["pair"]["source"]) :].sum()),
        "self": {
            "tokens": target,
            "weights": self_w,
            "logits": np.where(causal, self_logits, -np.inf),
            "top_key": self_w.argmax(axis=-1),
            "entropy_bits": entropy_bits(self_w),
            "max_entropy_bits": np.log2(causal.sum(axis=-1)),
        },
        "shapes": [
            {"name": "Q", "shape": [seq_q, D_HEAD], "note": "from the target"},
            {"name": "K", "shape": [seq_k, D_HEAD], "note": "from the source"},
            {"name": "V", "shape": [seq_k, D_HEAD], "note": "from the source"},
            {"name": "weights", "shape": [seq_q, seq_k], "note": "[query, key]"},
            {"name": "output", "shape": list(out.shape), "note": "one row per target token"},
        ],
        "preset": params["preset"],
        "causal": params["causal"],
        "source_padding_mask": params["source_padding_mask"],
    }


def static_view(result: dict, params: dict) -> list[Table | Text]:
    """Without JavaScript: the cross-attention weights, target queries by source keys."""
    masked = [[x is None for x in row] for row in result["logits"]]
    caption = (
        "Cross-attention weights: one row per target token (the queries), one column per "
        "source token (the keys and values); each row sums to 1."
    )
    parts = [
        weights_table(
            caption, result["tokens"], result["key_tokens"], result["weights"], masked=masked
        )  # fmt: skip
    ]
    if result["unseen_keys"]:
        unseen = ", ".join(result["key_tokens"][k] for k in result["unseen_keys"])
        parts.append(Text(f"No query can read the masked source keys ({unseen})."))
    return parts
