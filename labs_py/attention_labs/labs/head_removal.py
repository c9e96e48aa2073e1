"""Lab: switch heads of a trained model off and watch its maps and its output change.

The model is the 2-layer attention-only decoder trained on repeated random letters
(build_scripts/induction/train_induction.py; :mod:`..models.induction`, 2 layers of 2 heads):
layer 0, head 0 became a previous-token head and the layer-1 heads induction heads, which
continue a repeated stretch of letters. Switching a head off is a zero ablation: its rows of
``W_O`` are set to zero, so it still computes its pattern but writes nothing into the
residual stream (``induction.forward(..., ablate=...)``).

What the reader sees, for any set of heads switched off:

- every head's pattern: a head's own pattern and those of earlier layers never change, but
  a layer-1 head reads what layer 0 wrote, so removing a layer-0 head changes the layer-1
  maps (``changed``: the largest change of each weight from the intact model);
- the model's output: its next-letter guess after every letter and, where a repeat makes the
  next letter knowable, the probability it gives the right one; over those positions, how
  often its top guess is right (``copy_accuracy``) and its mean loss in nats (``loss``,
  -ln p of the right letter; ln 26 for a uniform guess), with the intact model's beside them;
- ``single``: the same two numbers with each head removed alone, the experiment of Michel,
  Levy and Neubig (2019, "Are Sixteen Heads Really Better than One?", NeurIPS), who removed
  the heads of trained translation and BERT models one at a time at test time.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from .. import maps
from ..attention import softmax
from ..models import induction
from ..params import LabParameterError, Param
from ..static import Table, Text

DEFAULT = list("QWERTYUIOPQWERTYUIOP")  # a stretch of ten letters, written twice
HEADS = ((0, 0), (0, 1), (1, 0), (1, 1))  # (layer, head) of the model's four heads


def param_name(layer: int, head: int) -> str:
    """The boolean parameter that switches head (layer, head) off: ``off_l0h1``..."""
    return f"off_l{layer}h{head}"


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
    *(
        Param(
            param_name(layer, head),
            "boolean",
            False,
            f"Switch layer {layer}, head {head} off (its output set to zero).",
        )
        for layer, head in HEADS
    ),
)

LARGEST = {"tokens": list("ABCDEFGHIJKLMNOP" * 2), "off_l0h0": True, "off_l1h1": True}


def load_vocab_size() -> int:
    """The model's vocabulary (26 letters)."""
    return int(induction.load_weights()["config"]["vocab_size"])


def _knowable(ids: list[int]) -> list[int]:
    """Positions whose next letter repeats what followed an earlier occurrence of their own
    letter: the letters a model that continues repeats can know."""
    n = len(ids)
    targets = maps.induction_targets(ids)
    return [q for q, keys in targets.items() if q + 1 < n and ids[q + 1] in {ids[k] for k in keys}]


def _score(logits: np.ndarray, ids: list[int], knowable: list[int]) -> dict:
    """Copy accuracy and mean loss (nats) over the knowable positions; None when none."""
    if not knowable:
        return {"copy_accuracy": None, "loss": None}
    probs = softmax(logits, axis=-1)  # (seq_len, vocab)
    right = [probs[q, ids[q + 1]] for q in knowable]
    return {
        "copy_accuracy": float(np.mean([probs[q].argmax() == ids[q + 1] for q in knowable])),
        "loss": float(-np.mean(np.log(right))),
    }


@lru_cache(maxsize=8)
def _baseline(ids: tuple[int, ...]) -> tuple[np.ndarray, dict, list[dict]]:
    """What depends on the letters alone, computed once per sequence (switching heads on and
    off then costs one forward pass): the intact weights, the intact scores and the scores
    with each head removed alone."""
    knowable = _knowable(list(ids))
    intact_logits, intact_weights = induction.forward(ids)
    single = [
        {
            "layer": layer,
            "head": head,
            **_score(induction.forward(ids, ablate=[(layer, head)])[0], ids, knowable),
        }
        for layer, head in HEADS
    ]
    intact_weights.setflags(write=False)  # shared by the calls that hit the cache
    return intact_weights, _score(intact_logits, ids, knowable), single


def compute(params: dict) -> dict:
    """The lab's result for validated ``params`` (see :data:`SCHEMA`).

    Returns ``tokens``; ``heads``: for each of the four heads ``layer``, ``head``, ``off``,
    ``weights`` (seq_len, seq_len) [query, key], causal, rows summing to 1 (with the heads
    switched off), its ``induction`` score (None when no letter repeats) and
    ``previous_token`` score, and ``changed``, the largest absolute change of a weight from
    the intact model; ``masked`` (the causal mask's hidden cells); ``predicted`` (the most
    likely next letter after each position), ``p_right`` (the probability of the actual next
    letter, None where it is not knowable), ``knowable`` (those positions); ``copy_accuracy``
    and ``loss`` (mean -ln p_right, nats) now, ``intact`` (the same for the intact model),
    ``chance_loss`` (ln vocab_size); ``single``: {layer, head, copy_accuracy, loss} with each
    head removed alone. Raises LabParameterError (param ``tokens``) for a letter outside A..Z.
    """
    tokens = [t.upper() for t in params["tokens"]]
    try:
        ids = induction.encode("".join(tokens))
    except ValueError as err:
        raise LabParameterError("tokens", str(err)) from None
    n = len(ids)
    off = [(layer, head) for layer, head in HEADS if params[param_name(layer, head)]]
    logits, weights = induction.forward(ids, ablate=off)  # (seq_len, vocab), (L, H, q, k)
    intact_weights, intact, single = _baseline(tuple(ids))
    knowable = _knowable(ids)
    induction_scores = maps.induction_score(weights, ids)  # (L, H) or None
    previous = maps.previous_token_score(weights)  # (L, H)
    changed = np.abs(weights - intact_weights).max(axis=(-2, -1))  # (L, H)
    probs = softmax(logits, axis=-1)
    p_right = [None] * n
    for q in knowable:
        p_right[q] = float(probs[q, ids[q + 1]])
    vocab = load_vocab_size()
    return {
        "tokens": tokens,
        "heads": [
            {
                "layer": layer,
                "head": head,
                "off": (layer, head) in off,
                "weights": weights[layer, head],
                "induction": (
                    None if induction_scores is None else float(induction_scores[layer, head])
                ),
                "previous_token": float(previous[layer, head]),
                "changed": float(changed[layer, head]),
            }
            for layer, head in HEADS
        ],
        "masked": np.triu(np.ones((n, n), dtype=bool), k=1),
        "predicted": [chr(ord("A") + int(p)) for p in probs.argmax(axis=-1)],
        "p_right": p_right,
        "knowable": knowable,
        **_score(logits, ids, knowable),
        "intact": dict(intact),
        "chance_loss": math.log(vocab),
        "single": [dict(s) for s in single],
    }


def static_view(result: dict, params: dict) -> list[Table | Text]:
    """Without JavaScript: what the model does with the chosen heads off, every head's
    scores, and each head removed alone."""
    off = [f"layer {h['layer']}, head {h['head']}" for h in result["heads"] if h["off"]]
    who = f"With {' and '.join(off)} switched off" if off else "With every head on"
    pct = lambda x: "—" if x is None else f"{100 * x:.0f}%"  # noqa: E731
    parts = []
    if result["copy_accuracy"] is not None:
        parts.append(
            Text(
                f"{who}, the model continues the repeat right {pct(result['copy_accuracy'])} "
                f"of the time (intact: {pct(result['intact']['copy_accuracy'])}), with a loss "
                f"of {result['loss']:.2f} nats on those letters (a uniform guess: "
                f"{result['chance_loss']:.2f})."
            )
        )
    parts.append(
        Table(
            "Every head: switched off or not, its induction and previous-token scores, and "
            "the largest change of its weights from the intact model.",
            ("Head", "Off", "Induction", "Previous token", "Largest change"),
            [
                (
                    f"layer {h['layer']}, head {h['head']}",
                    (
                        "yes" if h["off"] else "no",
                        h["induction"],
                        h["previous_token"],
                        h["changed"],
                    ),
                )
                for h in result["heads"]
            ],
            digits=2,
        )
    )
    parts.append(
        Table(
            "Each head removed alone (the others on): how often the model continues the "
            "repeat right, and its loss in nats.",
            ("Removed", "Continues right", "Loss (nats)"),
            [("none (intact)", (pct(result["intact"]["copy_accuracy"]), result["intact"]["loss"]))]
            + [
                (f"layer {s['layer']}, head {s['head']}", (pct(s["copy_accuracy"]), s["loss"]))
                for s in result["single"]
            ],
            digits=2,
        )
    )
    return parts
