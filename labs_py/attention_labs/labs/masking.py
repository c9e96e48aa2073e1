"""Lab: what a mask does to an attention pattern, and how many scores it leaves.

The scores are RANDOM: a (seq_len, seq_len) grid [query, key] of independent normal
numbers with standard deviation ``spread`` (no trained head is involved). The lab applies
one mask (True = the query may attend to the key):

- ``none``: every query sees every key;
- ``causal``: query i sees keys j <= i (:func:`..attention.causal_mask`; Vaswani et al.
  2017, NeurIPS, section 3.2.3);
- ``padding``: the last ``pad`` tokens are padding, hidden as keys from every query
  (:func:`..attention.padding_mask`; the attention mask of BERT, Devlin et al. 2019,
  NAACL). Pad tokens still have query rows, over the real keys;
- ``sliding_window``: query i sees itself and the ``window - 1`` keys before it
  (:func:`..attention.sliding_window_mask`; Child et al. 2019, Beltagy et al. 2020,
  Jiang et al. 2023).

``apply`` says where the mask acts: ``before`` softmax (masked scores become -inf, so the
visible keys share the whole weight and every row sums to 1; what attention does) or
``after`` it (the full softmax is computed, then masked weights are set to 0, so the rows
no longer sum to 1: the mistake the lesson warns about).

It also counts the grid's entries (total, kept, masked) and gives the cost curve: for
every length from 2 to 64, how many score entries the chosen mask keeps, against the full
length^2. "Cost" here is entries of the score grid that must be computed and kept: a plain
implementation computes all length^2 and throws the masked ones away; kernels that skip
masked blocks (causal FlashAttention, banded sliding-window kernels) compute only the kept
ones. Closed forms, tested against the masks: none L^2, causal L(L+1)/2, padding
L(L - pad), sliding window L*w - w(w-1)/2 for L >= w (L(L+1)/2 below).
"""

from __future__ import annotations

import numpy as np

from ..attention import causal_mask, entropy_bits, padding_mask, sliding_window_mask, softmax
from ..params import LabParameterError, Param
from ..static import Table, Text, weights_table

MAX_LEN = 64

SCHEMA = (
    Param("seq_len", "integer", 8, "Number of tokens (queries and keys).", 2, MAX_LEN),
    Param("spread", "number", 2.0, "Standard deviation of the random scores.", 0.0, 8.0),
    Param(
        "mask",
        "choice",
        "causal",
        "Which keys each query may see.",
        choices=("none", "causal", "padding", "sliding_window"),
        labels={
            "none": "None",
            "causal": "Causal",
            "padding": "Padding",
            "sliding_window": "Sliding window",
        },
    ),
    Param("pad", "integer", 2, "Padding: how many tokens at the end are padding.", 0, MAX_LEN - 1),
    Param("window", "integer", 3, "Sliding window: keys each query sees.", 1, MAX_LEN),
    Param(
        "apply",
        "choice",
        "before",
        "Where the mask acts: on the scores before softmax, or on the weights after it.",
        choices=("before", "after"),
        labels={"before": "Before softmax (score −∞)", "after": "After softmax (weight set to 0)"},
    ),
    Param("seed", "integer", 0, "Seed for the random scores.", 0, 2**31 - 1),
)

LARGEST = {"seq_len": MAX_LEN, "mask": "sliding_window", "window": 8}  # for make bench


def build_mask(kind: str, seq_len: int, pad: int, window: int) -> np.ndarray:
    """The (seq_len, seq_len) boolean mask of ``kind``, indexed [query, key]."""
    if kind == "causal":
        return causal_mask(seq_len)
    if kind == "padding":
        keys = padding_mask([seq_len - pad], seq_len)  # (1, seq_len): the real keys
        return np.broadcast_to(keys, (seq_len, seq_len)).copy()  # every query, same keys
    if kind == "sliding_window":
        return sliding_window_mask(seq_len, window)
    return np.ones((seq_len, seq_len), dtype=bool)


def kept_entries(kind: str, lengths: np.ndarray, pad: int, window: int) -> np.ndarray:
    """How many entries the mask keeps at each length (closed forms; see the docstring)."""
    L = np.asarray(lengths, dtype=np.int64)
    if kind == "causal":
        return L * (L + 1) // 2
    if kind == "padding":
        return L * (L - pad)
    if kind == "sliding_window":
        w = window
        return np.where(L <= w, L * (L + 1) // 2, L * w - w * (w - 1) // 2)
    return L * L


def compute(params: dict) -> dict:
    """The lab's result for validated ``params`` (see :data:`SCHEMA`).

    Returns ``tokens`` (``t1``... and ``PAD`` for padding); ``logits`` (seq_len,
    seq_len) with masked entries -inf; ``weights`` (rows sum to 1 when ``apply`` is
    ``before``); per query ``row_sums``, ``top_key`` and, before softmax only,
    ``entropy_bits`` and ``max_entropy_bits`` (None after: those rows are not
    distributions); ``counts`` (total, kept, masked entries and the % blocked); and
    ``cost``: ``lengths`` 2..64 (from pad + 1 for padding), ``kept`` and ``full``
    entries at each. Raises LabParameterError (param ``pad``) unless pad < seq_len.
    """
    n, kind, pad, window = params["seq_len"], params["mask"], params["pad"], params["window"]
    if kind == "padding" and pad >= n:
        raise LabParameterError(
            "pad", f"pad must be a whole number from 0 to seq_len - 1 = {n - 1}, got {pad}"
        )
    rng = np.random.default_rng(params["seed"])
    scores = params["spread"] * rng.standard_normal((n, n))  # (seq_len, seq_len) [query, key]
    mask = build_mask(kind, n, pad, window)
    before = params["apply"] == "before"
    if before:
        weights = softmax(scores, where=mask)  # masked scores count as -inf: rows sum to 1
    else:
        weights = softmax(scores) * mask  # the mistake: zeroed after, rows sum to < 1
    kept = int(mask.sum())
    total = n * n
    tokens = [f"t{i + 1}" for i in range(n)]
    if kind == "padding":
        tokens[n - pad :] = ["PAD"] * pad
    start = max(2, pad + 1) if kind == "padding" else 2
    lengths = np.arange(start, MAX_LEN + 1)
    return {
        "tokens": tokens,
        "logits": np.where(mask, scores, -np.inf),
        "weights": weights,
        "row_sums": weights.sum(axis=-1),
        "top_key": weights.argmax(axis=-1),
        "entropy_bits": entropy_bits(weights) if before else None,
        "max_entropy_bits": np.log2(mask.sum(axis=-1)) if before else None,
        "counts": {
            "total": total,
            "kept": kept,
            "masked": total - kept,
            "blocked_percent": 100 * (total - kept) / total,
        },
        "cost": {
            "lengths": lengths.tolist(),
            "kept": kept_entries(kind, lengths, pad, window).tolist(),
            "full": (lengths * lengths).tolist(),
        },
        "apply": params["apply"],
        "mask": kind,
    }


def static_view(result: dict, params: dict) -> list[Table | Text]:
    """Without JavaScript: the masked weights, and how many entries the mask keeps."""
    masked = [[x is None for x in row] for row in result["logits"]]
    when = "before" if result["apply"] == "before" else "after"
    caption = (
        f"Weights with the {result['mask']} mask applied {when} the softmax: one row per "
        "query, one column per key; — is a masked entry."
    )
    c = result["counts"]
    return [
        weights_table(
            caption, result["tokens"], result["tokens"], result["weights"], masked=masked
        ),  # fmt: skip
        Text(
            f"The mask keeps {c['kept']} of the {c['total']} entries and blocks "
            f"{c['masked']} ({c['blocked_percent']:.1f}%)."
        ),
    ]
