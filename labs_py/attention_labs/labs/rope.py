"""Lab: rotary position embeddings (RoPE; Su et al. 2021, "RoFormer", arXiv:2104.09864).

A query q and a key k (random, fixed by ``seed``; with ``same_vector`` the key is the
query itself) are rotated by their positions, pair of dimensions by pair, with
:func:`..attention.apply_rope`. The lab puts the key at position ``key_a`` (then
``key_b``) and the query ``offset`` places after it, for every offset from 0 to
``max_offset``, and returns the two curves of score against offset. The score is
q_m . k_n / sqrt(d_head), the scaled logit of lesson 3.

Because rotating q by m and k by n leaves their dot product equal to q . R(n - m) k, the
two curves coincide: the score depends on the offset m - n only (``curve_diff`` is the
largest difference between them, 0 up to float rounding).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ..attention import apply_rope
from ..params import LabParameterError, Param
from ..static import Table, Text, spread

SCHEMA = (
    Param("d_head", "integer", 64, "Width of the query and the key (even).", 2, 128),
    Param(
        "base", "number", 10000.0, "Base of the rotation frequencies (10000 in RoFormer).", 2.0, 1e6
    ),
    Param("key_a", "integer", 0, "Position of the key, first curve.", 0, 4096),
    Param("key_b", "integer", 300, "Position of the key, second curve.", 0, 4096),
    Param("max_offset", "integer", 128, "Largest offset m - n plotted.", 1, 512),
    Param("same_vector", "boolean", True, "Use the query as the key too (k = q)."),
    Param("seed", "integer", 0, "Seed of the random query and key.", 0, 9999),
)

LARGEST = {"d_head": 128, "max_offset": 512}


@functools.lru_cache(maxsize=32)
def query_and_key(d_head: int, seed: int, same_vector: bool):
    """A random query and key of width d_head, unit-variance components (read-only)."""
    rng = np.random.default_rng(seed)
    q = rng.standard_normal(d_head)
    k = q.copy() if same_vector else rng.standard_normal(d_head)
    q.flags.writeable = k.flags.writeable = False
    return q, k


def scores(q, k, key_position, offsets, base):
    """Score of q at key_position + offset against k at key_position, for each offset."""
    offsets = np.asarray(offsets, dtype=float)
    q_rot = apply_rope(np.broadcast_to(q, (len(offsets), len(q))), key_position + offsets, base)
    k_rot = apply_rope(k, key_position, base)
    return q_rot @ k_rot / math.sqrt(len(q))  # (n_offsets,)


def compute(params: dict) -> dict:
    """``offsets`` (0..max_offset); ``score_a``, ``score_b``: the score at each offset
    with the key at ``key_a`` and at ``key_b``; ``curve_diff``: their largest difference;
    ``unrotated``: the score without RoPE (the same at every offset)."""
    d_head = params["d_head"]
    if d_head % 2:
        raise LabParameterError(
            "d_head", f"d_head must be an even whole number from 2 to 128, got {d_head}"
        )
    q, k = query_and_key(d_head, params["seed"], params["same_vector"])
    offsets = np.arange(params["max_offset"] + 1)
    a = scores(q, k, params["key_a"], offsets, params["base"])
    b = scores(q, k, params["key_b"], offsets, params["base"])
    return {
        "offsets": offsets,
        "score_a": a,
        "score_b": b,
        "curve_diff": float(np.abs(a - b).max()),
        "unrotated": float(q @ k / math.sqrt(d_head)),
        "key_a": params["key_a"],
        "key_b": params["key_b"],
    }


def static_view(result: dict, params: dict) -> list[Table | Text]:
    """Without JavaScript: the two score curves at a few offsets."""
    a, b = result["key_a"], result["key_b"]
    rows = [
        (str(result["offsets"][i]), (result["score_a"][i], result["score_b"][i]))
        for i in spread(len(result["offsets"]), 12)
    ]
    caption = (
        "The score q · k / sqrt(d_head) with RoPE, by how far the query is after the key "
        f"(d_head {params['d_head']}, base {params['base']:g})."
    )
    columns = ("Offset", f"Key at position {a}", f"Key at position {b}")
    return [
        Table(caption, columns, rows),
        Text(
            f"The two curves differ by at most {result['curve_diff']:.1e}: the score depends "
            f"only on the offset. Without RoPE it is {result['unrotated']:.3f} at every offset."
        ),
    ]
