"""Lab: the attention pattern of one head on a short sentence.

The reader picks a head style, a temperature, a causal mask and whether the logits are
divided by sqrt(d_head); the lab returns the [query, key] weights with, for each query,
its entropy in bits and the key it attends to most.

Queries and keys are synthetic but honest: every component has unit variance, so that
q . k has variance d_head (Vaswani et al. 2017, footnote 4) and the sqrt(d_head) toggle
shows what it was made for.

- ``content``: each token's embedding is the sum of a random vector for its text and a
  random vector for its position, scaled by 1/sqrt(2) so its components keep unit
  variance (real models add a position embedding too: GPT-2 learns one per position;
  Vaswani et al. 2017 use fixed sinusoids). Random W_Q and W_K project it to a query and
  a key. Words are case-folded ("The" and "the" are one word, as for MiniLM's uncased
  tokenizer; the convention of every synthetic lab of lessons 2 to 6), so the same word at
  two positions gets two related keys (half of each embedding is shared) and two different
  words never share one.
- ``previous_token`` / ``first_token`` / ``self``: each position has a random code and
  key j is the code of j; query i is half the code of the position it should find
  (i - 1, 0 or i) plus independent noise, so the wanted key scores about d_head / 2 and
  the others about 0 +- sqrt(d_head): a clear preference that scaling keeps soft.
"""

from __future__ import annotations

import math

import numpy as np

from ..attention import attention_logits, causal_mask, entropy_bits, matmul, softmax
from ..params import Param
from ..static import Table, Text, weights_table
from ._synthetic import embeddings

MAX_TOKENS = 128  # the schema's max_items: one position vector each

SCHEMA = (
    Param(
        "tokens",
        "tokens",
        ["The", "fluffy", "blue", "creature", "roamed", "the", "verdant", "forest"],
        "The sentence, one token per item.",
        max_items=MAX_TOKENS,
        max_chars=32,
    ),
    Param(
        "preset",
        "choice",
        "content",
        "Which kind of head to imitate.",
        choices=("content", "previous_token", "first_token", "self"),
        labels={
            "content": "Content (random W_Q, W_K)",
            "previous_token": "Previous token",
            "first_token": "First token",
            "self": "Self",
        },
    ),
    Param("temperature", "number", 1.0, "Divides the logits before softmax.", 0.05, 10.0),
    Param("causal", "boolean", False, "Hide later keys from each query (causal mask)."),
    Param("scale", "boolean", True, "Divide the logits by sqrt(d_head)."),
    Param("d_head", "integer", 64, "Width of queries and keys.", 2, 256),
    Param("seed", "integer", 0, "Seed for the random vectors.", 0, 2**31 - 1),
)

# The heaviest settings the schema allows, for `make bench` (build_scripts/bench/bench_labs.py).
LARGEST = {"tokens": [f"t{i}" for i in range(128)], "d_head": 256}

D_MODEL = 64  # width of the synthetic word embeddings of the content preset
STRENGTH = 0.5  # how much of a positional query is the code it looks for


def queries_and_keys(tokens: list[str], preset: str, d_head: int, seed: int):
    """Synthetic Q, K of shape (seq_len, d_head) with unit-variance components."""
    seq_len = len(tokens)
    rng = np.random.default_rng(seed)
    if preset == "content":
        # Word plus position, each unit variance: / sqrt(2) keeps the sum unit variance.
        E = embeddings(tokens, seed, D_MODEL, MAX_TOKENS)  # (seq_len, d_model)
        # Var(W) = 1/d_model keeps each projected component at unit variance.
        W_Q = rng.standard_normal((D_MODEL, d_head)) / math.sqrt(D_MODEL)
        W_K = rng.standard_normal((D_MODEL, d_head)) / math.sqrt(D_MODEL)
        return matmul(E, W_Q), matmul(E, W_K)  # (seq_len, d_head) each
    codes = rng.standard_normal((seq_len, d_head))  # one random code per position
    position = np.arange(seq_len)
    target = {
        "previous_token": np.maximum(position - 1, 0),
        "first_token": np.zeros_like(position),
        "self": position,
    }[preset]
    noise = rng.standard_normal((seq_len, d_head))
    # STRENGTH**2 + (1 - STRENGTH**2) = 1: query components keep unit variance.
    queries = STRENGTH * codes[target] + math.sqrt(1 - STRENGTH**2) * noise
    return queries, codes  # query i looks for key target[i]


def compute(params: dict) -> dict:
    """The lab's result for validated ``params`` (see :data:`SCHEMA`).

    Returns ``tokens``; ``logits`` and ``weights`` as (seq_len, seq_len) float64 arrays
    indexed [query, key] (masked logits are -inf, their weights exactly 0); per query
    ``entropy_bits``, ``max_entropy_bits`` (log2 of the number of visible keys) and
    ``top_key`` (index of the largest weight, the earliest on ties). See
    :func:`..run_lab` for the JSON forms.
    """
    tokens = params["tokens"]
    seq_len = len(tokens)
    Q, K = queries_and_keys(tokens, params["preset"], params["d_head"], params["seed"])
    logits = attention_logits(Q, K, scale=params["scale"], temperature=params["temperature"])
    mask = causal_mask(seq_len) if params["causal"] else np.ones((seq_len, seq_len), bool)
    weights = softmax(logits, where=mask)  # (seq_len, seq_len), rows sum to 1
    return {
        "tokens": list(tokens),
        "logits": np.where(mask, logits, -np.inf),
        "weights": weights,
        "entropy_bits": entropy_bits(weights),
        "max_entropy_bits": np.log2(mask.sum(axis=-1)),
        "top_key": weights.argmax(axis=-1),
    }


def static_view(result: dict, params: dict) -> list[Table | Text]:
    """Without JavaScript: the weights as a table, and what each query attends to most."""
    preset = {
        "content": "content head (random W_Q and W_K)",
        "previous_token": "previous-token head",
        "first_token": "first-token head",
        "self": "self head",
    }[params["preset"]]
    how = [
        f"temperature {params['temperature']:g}",
        "logits divided by sqrt(d_head)" if params["scale"] else "logits not scaled",
        "causal mask" if params["causal"] else "no mask",
    ]
    tokens = result["tokens"]
    masked = [[x is None for x in row] for row in result["logits"]]
    caption = (
        f"Attention weights of a {preset} head ({', '.join(how)}), d_head {params['d_head']}: "
        "one row per query, one column per key; each row sums to 1."
    )
    tops = "; ".join(f"{t} → {tokens[k]}" for t, k in zip(tokens, result["top_key"], strict=True))
    return [
        weights_table(caption, tokens, tokens, result["weights"], masked=masked),
        Text(f"Each query's top key: {tops}."),
    ]
