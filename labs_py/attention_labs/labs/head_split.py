"""Lab: splitting one attention layer into 1, 2, 4 or 8 heads.

A multi-head layer of width d_model with n_heads heads gives each head d_head =
d_model / n_heads numbers (Vaswani et al. 2017, "Attention Is All You Need", NeurIPS,
section 3.2.2: 8 heads of 64 for d_model = 512). W_Q, W_K, W_V and W_O stay
(d_model, d_model) whatever n_heads is: the heads only cut their columns (rows, for W_O)
into n_heads blocks, so the layer has 4 d_model^2 weights, plus 4 d_model biases where it
uses them, for every n_heads. The lab counts them per matrix and lists the shapes of one
forward pass for the picked n_heads. No weights are drawn: it is arithmetic on shapes.
"""

from __future__ import annotations

from ..params import LabParameterError, Param
from ..static import Table, Text

SPLITS = (1, 2, 4, 8)  # the head counts compared side by side
MATRICES = ("W_Q", "W_K", "W_V", "W_O")

SCHEMA = (
    Param("d_model", "integer", 512, "Width of the embeddings (a multiple of 8).", 8, 16384),
    Param("n_heads", "integer", 8, "Number of heads whose shapes are listed.", 1, 128),
    Param("bias", "boolean", False, "Count the biases b_Q, b_K, b_V, b_O too."),
    Param("seq_len", "integer", 10, "Sentence length, for the shapes.", 1, 4096),
)
LARGEST = {"d_model": 16384, "n_heads": 128, "seq_len": 4096}


def parameter_count(d_model: int, bias: bool) -> dict[str, int]:
    """Parameters of each of W_Q, W_K, W_V, W_O (with its bias if ``bias``); n_heads does
    not appear."""
    return {m: d_model * d_model + (d_model if bias else 0) for m in MATRICES}


def shapes(d_model: int, n_heads: int, seq_len: int) -> list[dict]:
    """One forward pass of self-attention, step by step: name and shape."""
    d_head = d_model // n_heads
    steps = [
        ("X", (seq_len, d_model)),
        ("W_Q, W_K, W_V (each)", (d_model, d_model)),
        ("X W_Q (and K, V)", (seq_len, d_model)),
        ("reshape", (seq_len, n_heads, d_head)),
        ("transpose", (n_heads, seq_len, d_head)),
        ("scores, pattern", (n_heads, seq_len, seq_len)),
        ("heads' outputs", (n_heads, seq_len, d_head)),
        ("concatenate", (seq_len, d_model)),
        ("W_O", (d_model, d_model)),
        ("output", (seq_len, d_model)),
    ]
    return [{"name": n, "shape": list(s)} for n, s in steps]


def compute(params: dict) -> dict:
    """The lab's result for validated ``params`` (see :data:`SCHEMA`).

    Returns ``splits``: for n_heads = 1, 2, 4, 8 and the picked n_heads (in order, once
    each), its ``d_head``, ``parts`` (parameters per
    matrix) and ``total``; ``n_heads``, ``d_head`` and ``shapes`` for the picked n_heads;
    ``formula_total`` = 4 d_model^2 (+ 4 d_model). Raises LabParameterError when d_model is
    not a multiple of 8 or n_heads does not divide it.
    """
    d_model, n_heads, bias = params["d_model"], params["n_heads"], params["bias"]
    if d_model % SPLITS[-1]:
        raise LabParameterError(
            "d_model",
            f"d_model must be a multiple of 8 from 8 to 16384 (so 1, 2, 4 and 8 heads all "
            f"divide it), got {d_model}",
        )
    if d_model % n_heads:
        raise LabParameterError(
            "n_heads",
            f"n_heads must be a whole number from 1 to 128 that divides d_model = {d_model}, "
            f"got {n_heads}",
        )
    parts = parameter_count(d_model, bias)
    splits = [
        {"n_heads": h, "d_head": d_model // h, "parts": parts, "total": sum(parts.values())}
        for h in sorted({*SPLITS, n_heads})
    ]
    return {
        "d_model": d_model,
        "bias": bias,
        "splits": splits,
        "n_heads": n_heads,
        "d_head": d_model // n_heads,
        "per_head": {m: d_model * (d_model // n_heads) for m in MATRICES},
        "shapes": shapes(d_model, n_heads, params["seq_len"]),
        "formula_total": 4 * d_model**2 + (4 * d_model if bias else 0),
    }


def static_view(result: dict, params: dict) -> list[Table | Text]:
    """Without JavaScript: the parameters of W_Q, W_K, W_V and W_O for each split."""
    rows = [
        (
            f"{s['n_heads']} head{'s' if s['n_heads'] > 1 else ''}",
            (s["d_head"], *(s["parts"][m] for m in ("W_Q", "W_K", "W_V", "W_O")), s["total"]),
        )
        for s in result["splits"]
    ]
    caption = (
        f"Parameters of one attention layer with d_model = {result['d_model']}"
        f"{' and biases' if result['bias'] else ''}, split into more or fewer heads."
    )
    columns = ("n_heads", "d_head", "W_Q", "W_K", "W_V", "W_O", "Total")
    return [
        Table(caption, columns, rows),
        Text(f"Every split has the same total: {result['formula_total']:,d} parameters."),
    ]
