"""Lab: run the trained induction-head model on the reader's own letters.

The 2-layer attention-only decoder of build_scripts/induction/train_induction.py runs here in
NumPy (:mod:`attention_labs.models.induction`, the lessons' own `multi_head_attention` with
a causal mask). The reader types letters A..Z (one token each); a repeat of an earlier
stretch is what the model has learned to continue. The lab returns one head's pattern, its
induction and previous-token scores on this sequence (None when no letter repeats), and
the model's most likely next letter after every position with its probability. The chosen
head can be switched off (zero ablation) to see what the model loses without it.
"""

from __future__ import annotations

import numpy as np

from .. import real_maps
from ..attention import entropy_bits, softmax
from ..models import induction
from ..params import LabParameterError, Param
from ..static import Table, Text

DEFAULT = list("QWERTYUIOPQWERTYUIOP")

SCHEMA = (
    Param(
        "tokens",
        "tokens",
        DEFAULT,
        "The sequence: 2 to 32 letters A to Z, one token each.",
        min_items=2,
        max_items=32,
        max_chars=1,
    ),
    Param("layer", "integer", 1, "Layer of the head (0 or 1).", 0, 1),
    Param("head", "integer", 0, "Head within the layer (0 or 1).", 0, 1),
    Param("ablate", "boolean", False, "Switch the chosen head off (its output set to zero)."),
)

LARGEST = {"tokens": list("ABCDEFGHIJKLMNOP" * 2)}


def compute(params):
    """Returns {tokens, weights [query, key] of the chosen head (causal, rows sum to 1),
    masked, top_key, entropy_bits, max_entropy_bits, induction and previous_token (this head's
    scores; induction None when no letter repeats), heads (every head's scores), predicted
    (the most likely next letter after each position), confidence (its probability),
    copy_accuracy (share of repeated positions whose next letter is predicted right, None
    when nothing repeats)}."""
    tokens = [t.upper() for t in params["tokens"]]
    try:
        ids = induction.encode("".join(tokens))
    except ValueError as err:
        raise LabParameterError("tokens", str(err)) from None
    layer, head = params["layer"], params["head"]
    off = [(layer, head)] if params["ablate"] else []
    logits, weights = induction.forward(ids, ablate=off)  # (seq_len, vocab), (L, H, q, k)
    probs = softmax(logits, axis=-1)
    w = weights[layer, head]
    n = len(ids)
    scores_ind = real_maps.induction_score(weights, ids) if n > 1 else None
    scores_prev = real_maps.previous_token_score(weights)
    # positions whose next letter repeats what followed an earlier occurrence: knowable
    targets = real_maps.induction_targets(ids)
    knowable = [
        q for q, keys in targets.items() if q + 1 < n and ids[q + 1] in {ids[k] for k in keys}
    ]
    predicted = probs.argmax(axis=-1)
    return {
        "tokens": tokens,
        "weights": w,
        "masked": np.triu(np.ones((n, n), dtype=bool), k=1),
        "top_key": w.argmax(axis=-1),
        "entropy_bits": entropy_bits(w),
        "max_entropy_bits": np.log2(np.arange(1, n + 1)),
        "induction": None if scores_ind is None else float(scores_ind[layer, head]),
        "previous_token": float(scores_prev[layer, head]),
        "heads": [
            {
                "layer": i,
                "head": j,
                "induction": None if scores_ind is None else float(scores_ind[i, j]),
                "previous_token": float(scores_prev[i, j]),
            }
            for i in range(weights.shape[0])
            for j in range(weights.shape[1])
        ],
        "predicted": [chr(ord("A") + int(p)) for p in predicted],
        "confidence": probs.max(axis=-1),
        "copy_accuracy": (
            float(np.mean([predicted[q] == ids[q + 1] for q in knowable])) if knowable else None
        ),
    }


def static_view(result: dict, params: dict) -> list[Table | Text]:
    """Without JavaScript: every head's scores, and the model's next-letter guesses."""
    heads = Table(
        "Every head's induction and previous-token scores on this sequence.",
        ("Head", "Induction", "Previous token"),
        [
            (f"layer {h['layer']}, head {h['head']}", (h["induction"], h["previous_token"]))
            for h in result["heads"]
        ],
    )
    tokens = result["tokens"]
    guesses = Table(
        "After each letter, the letter the model predicts next, and its probability.",
        ("Position", "Letter", "Next (actual)", "Predicted", "Probability"),
        [
            (
                str(i),
                (
                    t,
                    tokens[i + 1] if i + 1 < len(tokens) else None,
                    result["predicted"][i],
                    result["confidence"][i],
                ),
            )
            for i, t in enumerate(tokens)
        ],  # fmt: skip
        digits=2,
    )
    parts = [heads, guesses]
    if result["copy_accuracy"] is not None:
        parts.append(
            Text(
                f"Of the repeated positions, {100 * result['copy_accuracy']:.0f}% have their "
                "next letter predicted right."
            )
        )
    return parts
