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
  Jiang et al. 2023);
- ``causal_padding``: both at once, as a decoder reads a padded batch: a key is visible
  only if the causal mask AND the padding mask allow it.

``pad_side`` puts the padding at the ``end`` (right padding) or at the ``start`` (left
padding, as some decoders batch prompts). Causal + left padding leaves the first ``pad``
queries with NO visible key: a fully masked row.

``fill`` says what the hidden scores become before softmax (``apply`` = ``before``), the
three conventions of lesson 4 side by side:

- ``skip``: this project's ``softmax(scores, where=mask)``, the same as -inf with a softmax
  that gives a fully masked row all zeros (torch's scaled_dot_product_attention does too);
- ``neg_inf``: -inf and a plain softmax, exp(s - max) / sum: a fully masked row is
  exp(-inf - (-inf)) = NaN. The lab computes that NaN and reports the row in ``nan_rows``
  (its weights are sent as 0, since no NaN may reach the page);
- ``neg_1e9``: the large negative number -1e9 and a plain softmax: a fully masked row is
  uniform over ALL keys, the hidden ones included.

On every row that has a visible key the three give the same weights (exp(-1e9 - max)
underflows to exactly 0), which ``fill_agreement`` measures.

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
L(L - pad) (either side), sliding window L*w - w(w-1)/2 for L >= w (L(L+1)/2 below),
causal + padding r(r+1)/2 + pad*r at the end and r(r+1)/2 at the start, with r = L - pad.
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
        choices=("none", "causal", "padding", "sliding_window", "causal_padding"),
        labels={
            "none": "None",
            "causal": "Causal",
            "padding": "Padding",
            "sliding_window": "Sliding window",
            "causal_padding": "Causal + padding",
        },
    ),
    Param("pad", "integer", 2, "Padding: how many tokens are padding.", 0, MAX_LEN - 1),
    Param(
        "pad_side",
        "choice",
        "end",
        "Padding: where the padding goes, after the real tokens or before them.",
        choices=("end", "start"),
        labels={"end": "At the end (right)", "start": "At the start (left)"},
    ),
    Param("window", "integer", 3, "Sliding window: keys each query sees.", 1, MAX_LEN),
    Param(
        "apply",
        "choice",
        "before",
        "Where the mask acts: on the scores before softmax, or on the weights after it.",
        choices=("before", "after"),
        labels={"before": "Before softmax (score −∞)", "after": "After softmax (weight set to 0)"},
    ),
    Param(
        "fill",
        "choice",
        "skip",
        "Before softmax: what a hidden score becomes (differs only on a fully masked row).",
        choices=("skip", "neg_inf", "neg_1e9"),
        labels={
            "skip": "−∞, an empty row gives 0s (this site)",
            "neg_inf": "−∞, plain softmax",
            "neg_1e9": "−10⁹, plain softmax",
        },
    ),
    Param("seed", "integer", 0, "Seed for the random scores.", 0, 2**31 - 1),
)
BIG_NEGATIVE = -1e9  # the "large negative number" convention
PADDED = ("padding", "causal_padding")

LARGEST = {"seq_len": MAX_LEN, "mask": "sliding_window", "window": 8}  # for make bench


def real_keys(seq_len: int, pad: int, pad_side: str = "end") -> np.ndarray:
    """(seq_len,) booleans, True for a real token: ``pad`` padding tokens at the end or at
    the start (:func:`..attention.padding_mask`, reversed for the start)."""
    keys = padding_mask([seq_len - pad], seq_len)[0]  # (seq_len,): real tokens first
    return keys[::-1].copy() if pad_side == "start" else keys


def build_mask(kind: str, seq_len: int, pad: int, window: int, pad_side: str = "end") -> np.ndarray:
    """The (seq_len, seq_len) boolean mask of ``kind``, indexed [query, key]."""
    if kind == "causal":
        return causal_mask(seq_len)
    if kind in PADDED:
        keys = real_keys(seq_len, pad, pad_side)  # (seq_len,): the real keys
        grid = np.broadcast_to(keys, (seq_len, seq_len)).copy()  # every query, same keys
        return grid & causal_mask(seq_len) if kind == "causal_padding" else grid
    if kind == "sliding_window":
        return sliding_window_mask(seq_len, window)
    return np.ones((seq_len, seq_len), dtype=bool)


def kept_entries(
    kind: str, lengths: np.ndarray, pad: int, window: int, pad_side: str = "end"
) -> np.ndarray:
    """How many entries the mask keeps at each length (closed forms; see the docstring)."""
    L = np.asarray(lengths, dtype=np.int64)
    if kind == "causal":
        return L * (L + 1) // 2
    if kind == "padding":
        return L * (L - pad)
    if kind == "causal_padding":
        r = L - pad  # real tokens
        return r * (r + 1) // 2 + (pad * r if pad_side == "end" else 0)
    if kind == "sliding_window":
        w = window
        return np.where(L <= w, L * (L + 1) // 2, L * w - w * (w - 1) // 2)
    return L * L


def plain_softmax(filled: np.ndarray) -> np.ndarray:
    """softmax over the last axis as most code writes it, exp(s - max) / sum, with no mask
    and no care for empty rows: a row of -inf gives exp(-inf - (-inf)) = NaN (computed
    here, warnings silenced), which is the point of the ``neg_inf`` fill."""
    with np.errstate(invalid="ignore", divide="ignore"):
        shifted = filled - filled.max(axis=-1, keepdims=True)
        e = np.exp(shifted)
        return e / e.sum(axis=-1, keepdims=True)


def fill_weights(scores: np.ndarray, mask: np.ndarray, fill: str) -> np.ndarray:
    """Weights of ``scores`` under ``mask``, the hidden scores filled by convention ``fill``
    (``skip``, ``neg_inf`` or ``neg_1e9``; see the module docstring). May hold NaN rows
    (``neg_inf`` on a fully masked row)."""
    if fill == "skip":
        return softmax(scores, where=mask)  # masked scores count as -inf; empty rows 0
    value = -np.inf if fill == "neg_inf" else BIG_NEGATIVE
    return plain_softmax(np.where(mask, scores, value))


def empty_row_notes(fill: str, n: int) -> str:
    """The heatmap's note for a row that sees no key, under ``fill`` (n keys)."""
    return {
        "skip": "→ nothing: all 0",
        "neg_inf": "→ NaN (0/0)",
        "neg_1e9": f"→ uniform, 1/{n} each",
    }[fill]


def compute(params: dict) -> dict:
    """The lab's result for validated ``params`` (see :data:`SCHEMA`).

    Returns ``tokens`` (``t1``... and ``PAD`` for padding); ``logits`` (seq_len, seq_len),
    hidden entries -inf (they get weight exactly 0 under every fill), except in a fully
    masked row with ``fill`` ``neg_1e9``, where they are -1e9 (and get 1/seq_len each);
    ``weights`` (rows that see a key sum
    to 1 when ``apply`` is ``before``; a NaN row is sent as 0s and listed in ``nan_rows``);
    per query ``row_sums`` (None for a NaN row), ``top_key``, ``row_notes`` (a note for a
    fully masked row, else None) and, before softmax only, ``entropy_bits`` (None for a NaN
    row) and ``max_entropy_bits`` (log2 of the keys that can get weight; None when none
    can), both None after softmax (those rows are not distributions); ``empty_rows`` (queries
    with no visible key) and ``nan_rows``; ``fill_compare``: the first empty row's weights
    under each fill, side by side (``row`` None when no row is empty; ``neg_inf`` None: a
    NaN row), and ``fill_agreement``, the largest difference between the ``neg_inf`` and
    ``neg_1e9`` weights over the rows that see a key (0.0: they agree); ``counts`` (total,
    kept, masked entries and the % blocked); and ``cost``: ``lengths``
    2..64 (from pad + 1 with padding), ``kept`` and ``full`` entries at each. Raises
    LabParameterError (param ``pad``) unless pad < seq_len when the mask pads.
    """
    n, kind, pad, window = params["seq_len"], params["mask"], params["pad"], params["window"]
    side, fill = params["pad_side"], params["fill"]
    if kind in PADDED and pad >= n:
        raise LabParameterError(
            "pad", f"pad must be a whole number from 0 to seq_len - 1 = {n - 1}, got {pad}"
        )
    rng = np.random.default_rng(params["seed"])
    scores = params["spread"] * rng.standard_normal((n, n))  # (seq_len, seq_len) [query, key]
    mask = build_mask(kind, n, pad, window, side)
    empty = ~mask.any(axis=-1)  # (seq_len,): queries that may see no key
    before = params["apply"] == "before"
    if before:
        weights = fill_weights(scores, mask, fill)  # (seq_len, seq_len); NaN rows possible
    else:
        weights = softmax(scores) * mask  # the mistake: zeroed after, rows sum to < 1
    nan = np.isnan(weights).any(axis=-1)  # (seq_len,)
    weights = np.where(nan[:, None], 0.0, weights)  # no NaN leaves the lab
    sums = weights.sum(axis=-1)
    kept = int(mask.sum())
    total = n * n
    tokens = [f"t{i + 1}" for i in range(n)]
    if kind in PADDED:
        tokens = [
            t if real else "PAD" for t, real in zip(tokens, real_keys(n, pad, side), strict=True)
        ]
    start = max(2, pad + 1) if kind in PADDED else 2
    lengths = np.arange(start, MAX_LEN + 1)
    uniform = before and fill == "neg_1e9"  # masked keys of an empty row get weight too
    # hidden entries: -inf (drawn blank), except the -1e9 of an empty row, whose hidden keys
    # all get weight (drawn with it); elsewhere every fill gives hidden keys exactly 0
    hidden = np.where(empty[:, None] & uniform, BIG_NEGATIVE, -np.inf)
    filled = np.where(mask, scores, hidden)
    if before:
        can_weigh = np.where(empty & uniform, n, mask.sum(axis=-1))  # keys that can get weight
        entropy = [
            None if bad else float(h) for bad, h in zip(nan, entropy_bits(weights), strict=True)
        ]
        max_entropy = [float(np.log2(c)) if c else None for c in can_weigh]
    else:
        entropy = max_entropy = None
    first = int(np.flatnonzero(empty)[0]) if empty.any() else None
    by_fill = {f: fill_weights(scores, mask, f) for f in ("skip", "neg_inf", "neg_1e9")}
    seen = ~empty
    agreement = float(np.abs(by_fill["neg_inf"][seen] - by_fill["neg_1e9"][seen]).max(initial=0))
    note = empty_row_notes(fill if before else "skip", n)
    return {
        "tokens": tokens,
        "logits": filled,
        "weights": weights,
        "row_sums": [None if bad else float(s) for bad, s in zip(nan, sums, strict=True)],
        "top_key": weights.argmax(axis=-1),
        "row_notes": [note if e else None for e in empty],
        "entropy_bits": entropy,
        "max_entropy_bits": max_entropy,
        "empty_rows": np.flatnonzero(empty).tolist(),
        "nan_rows": np.flatnonzero(nan).tolist(),
        "fill_compare": {
            "row": first,
            "scores": None if first is None else scores[first],
            "skip": None if first is None else by_fill["skip"][first],
            "neg_inf": None,  # NaN: 0/0 (computed in by_fill, never sent)
            "neg_inf_is_nan": None
            if first is None
            else bool(np.isnan(by_fill["neg_inf"][first]).all()),
            "neg_1e9": None if first is None else by_fill["neg_1e9"][first],
        },
        "fill_agreement": agreement,
        "counts": {
            "total": total,
            "kept": kept,
            "masked": total - kept,
            "blocked_percent": 100 * (total - kept) / total,
        },
        "cost": {
            "lengths": lengths.tolist(),
            "kept": kept_entries(kind, lengths, pad, window, side).tolist(),
            "full": (lengths * lengths).tolist(),
        },
        "apply": params["apply"],
        "fill": fill,
        "mask": kind,
    }


def static_view(result: dict, params: dict) -> list[Table | Text]:
    """Without JavaScript: the masked weights, how many entries the mask keeps and, when a
    query sees no key, that row under the three fills side by side."""
    nan = set(result["nan_rows"])
    masked = [[x is None or q in nan for x in row] for q, row in enumerate(result["logits"])]
    when = "before" if result["apply"] == "before" else "after"
    caption = (
        f"Weights with the {result['mask']} mask applied {when} the softmax: one row per "
        "query, one column per key; — is a masked entry."
    )
    c = result["counts"]
    parts = [
        weights_table(
            caption, result["tokens"], result["tokens"], result["weights"], masked=masked
        ),  # fmt: skip
        Text(
            f"The mask keeps {c['kept']} of the {c['total']} entries and blocks "
            f"{c['masked']} ({c['blocked_percent']:.1f}%)."
        ),
    ]
    cmp = result["fill_compare"]
    if cmp["row"] is not None:
        tokens, q = result["tokens"], cmp["row"]
        empty = ", ".join(str(e + 1) for e in result["empty_rows"])
        parts.append(
            Text(
                f"Queries {empty} may see no key. Query {q + 1}'s weights under the three ways "
                "of filling a hidden score: −∞ with a plain softmax gives NaN (0/0), −10⁹ a "
                "uniform row over every key, and this site's softmax a row of zeros."
            )
        )
        rows = [
            ("−∞, plain softmax", ["NaN"] * len(tokens)),
            ("−10⁹, plain softmax", list(cmp["neg_1e9"])),
            ("−∞, an empty row gives 0s (this site)", list(cmp["skip"])),
        ]
        parts.append(
            Table(
                f"Query {q + 1} ({tokens[q]}), which may see no key: its weights per fill.",
                ("Hidden score", *tokens),
                rows,
                digits=3,
            )
        )
    return parts
