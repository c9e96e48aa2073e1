"""Lab: how the heads' outputs become one output, for one picked query.

Each of the n_heads = 8 heads of the eight_heads lab (the same synthetic layer, see
labs/eight_heads.py) gives query i an output of width d_head = 8. Concatenated, they form
one row of width d_model = 64; W_O (d_model, d_model) maps it to the layer's output. Cut
W_O into n_heads row blocks W_O^h (d_head, d_model): then

    output_i = concat_h(o_i^h) W_O = sum_h o_i^h W_O^h,

so the layer's output is a SUM of one contribution per head (Vaswani et al. 2017, "Attention
Is All You Need", NeurIPS, section 3.2.2; Elhage et al. 2021, "A Mathematical Framework for
Transformer Circuits", Transformer Circuits Thread, write heads this way). The lab returns
each head's contribution and its length.
"""

from __future__ import annotations

import numpy as np

from ..params import Param
from ..static import Table, Text
from .eight_heads import D_HEAD, D_MODEL, KINDS, N_HEADS, check_query, layer
from .eight_heads import SCHEMA as EIGHT_SCHEMA

SCHEMA = tuple(
    Param(p.name, p.kind, p.default, "The query token whose output is split.", p.minimum, p.maximum)
    if p.name == "query"
    else p
    for p in EIGHT_SCHEMA
)
LARGEST = {"tokens": [f"w{i}" for i in range(32)], "query": 31}


def compute(params: dict) -> dict:
    """The lab's result for validated ``params`` (see :data:`SCHEMA`).

    Returns ``tokens``, ``query``, ``kinds``; ``head_outputs`` (n_heads, d_head): each
    head's output for the query; ``widths`` (each head's width in the concatenation) and
    ``offsets`` (where it starts); ``contributions`` (n_heads, d_model): o^h W_O^h;
    ``norms`` (n_heads,) their lengths; ``output`` (d_model,) the layer's output row;
    ``sum_error``: max |sum of contributions - output|.
    """
    tokens, i = params["tokens"], params["query"]
    check_query(i, len(tokens))
    X, W, output, pattern = layer(tokens, params["seed"])
    V = (X @ W["W_V"]).reshape(len(tokens), N_HEADS, D_HEAD)  # (seq_len, n_heads, d_head)
    head_outputs = np.einsum("hk,khd->hd", pattern[:, i, :], V)  # (n_heads, d_head)
    blocks = W["W_O"].reshape(N_HEADS, D_HEAD, D_MODEL)  # W_O^h: (n_heads, d_head, d_model)
    contributions = np.einsum("hd,hdm->hm", head_outputs, blocks)  # (n_heads, d_model)
    return {
        "tokens": list(tokens),
        "query": i,
        "kinds": list(KINDS),
        "head_outputs": head_outputs,
        "widths": [D_HEAD] * N_HEADS,
        "offsets": [h * D_HEAD for h in range(N_HEADS)],
        "d_model": D_MODEL,
        "contributions": contributions,
        "norms": np.linalg.norm(contributions, axis=-1),
        "output": output[i],
        "sum_error": float(np.max(np.abs(contributions.sum(axis=0) - output[i]))),
    }


def static_view(result: dict, params: dict) -> list[Table | Text]:
    """Without JavaScript: each head's share of the query's output row."""
    q = result["query"]
    rows = [
        (f"head {h + 1}", (kind, result["widths"][h], result["offsets"][h], result["norms"][h]))
        for h, kind in enumerate(result["kinds"])
    ]
    caption = (
        f"Query “{result['tokens'][q]}” ({q}): each head's output o^h, its place in the "
        "concatenation, and the length of its contribution o^h W_O^h to the output."
    )
    columns = ("Head", "Built to", "Width (d_head)", "Starts at", "Length of o^h W_O^h")
    return [
        Table(caption, columns, rows),
        Text(
            f"The {len(rows)} contributions add up to the layer's output row of d_model = "
            f"{result['d_model']} numbers (largest difference {result['sum_error']:.1e})."
        ),
    ]
