"""Lab: the geometry of a score, q . k = |q| |k| cos(theta), in two dimensions.

One query and four keys, each a 2-D vector the reader drags (d_head = 2). The lab returns
every key's score, the dot product q . k (the attention score of Vaswani et al. 2017,
eq. 1, before any scaling), with the lengths and the angle that make it up, and the
softmax of the four scores over the keys (lesson 3 explains softmax). With ``scale`` on
the scores are divided by sqrt(d_head) = sqrt(2) before the softmax, as in the paper.

Shapes: q (2,), K (4, 2) with one key per row, scores (4,) = K @ q, weights (4,) summing
to 1.
"""

from __future__ import annotations

import math

import numpy as np

from ..attention import softmax
from ..params import Param
from ..static import Table, Text

EXTENT = 3.0  # every coordinate lies in [-EXTENT, EXTENT]
N_KEYS = 4
D_HEAD = 2

# The default view: key 1 points the query's way (longer than it, so both heads show), key 2
# is at an angle, key 3 at a right angle to the query (score 0) and key 4 points the opposite
# way (negative score).
DEFAULT_QUERY = (2.0, 1.0)
DEFAULT_KEYS = ((2.6, 1.3), (0.5, 2.0), (-1.0, 2.0), (-2.0, -1.0))


def _coordinate(name: str, default: float, what: str) -> Param:
    return Param(name, "number", default, what, -EXTENT, EXTENT)


SCHEMA = (
    _coordinate("qx", DEFAULT_QUERY[0], "The query's first coordinate."),
    _coordinate("qy", DEFAULT_QUERY[1], "The query's second coordinate."),
    *(
        _coordinate(f"k{i + 1}{axis}", DEFAULT_KEYS[i][a], f"Key {i + 1}'s {which} coordinate.")
        for i in range(N_KEYS)
        for a, (axis, which) in enumerate((("x", "first"), ("y", "second")))
    ),
    Param("scale", "boolean", False, "Divide the scores by sqrt(d_head) before softmax."),
)
LARGEST = {"scale": True}  # every setting costs the same: four 2-D dot products


def compute(params: dict) -> dict:
    """The lab's result for validated ``params`` (see :data:`SCHEMA`).

    Returns ``query`` (2,), ``keys`` (4, 2), ``scores`` (4,) = q . k_j, ``query_length``,
    ``key_lengths`` (4,), ``cosines`` (4,; cos of the angle between q and each key, 0 when
    either is the zero vector), ``angles_deg`` (4,; 0 to 180, 90 for a zero vector),
    ``logits`` (4,; the scores, divided by sqrt(2) when ``scale``) and ``weights`` (4,;
    softmax of the logits, summing to 1), ``top_key`` (the largest weight's index).
    """
    q = np.array([params["qx"], params["qy"]])  # (2,)
    K = np.array([[params[f"k{i + 1}x"], params[f"k{i + 1}y"]] for i in range(N_KEYS)])  # (4, 2)
    scores = K @ q  # (4,): q . k_j for each key j
    q_len = float(np.linalg.norm(q))
    k_len = np.linalg.norm(K, axis=-1)  # (4,)
    lengths = q_len * k_len
    cosines = np.divide(scores, lengths, out=np.zeros(N_KEYS), where=lengths > 0)
    cosines = np.clip(cosines, -1.0, 1.0)  # rounding can leave |cos| a hair above 1
    cross = q[0] * K[:, 1] - q[1] * K[:, 0]  # (4,): |q||k| sin(theta), signed
    logits = scores / math.sqrt(D_HEAD) if params["scale"] else scores
    weights = softmax(logits)  # (4,), sums to 1
    return {
        "query": q,
        "keys": K,
        "scores": scores,
        "query_length": q_len,
        "key_lengths": k_len,
        "cosines": cosines,
        "angles_deg": np.where(lengths > 0, np.degrees(np.arctan2(np.abs(cross), scores)), 90.0),
        "logits": logits,
        "weights": weights,
        "top_key": int(np.argmax(weights)),
    }


def static_view(result: dict, params: dict) -> list[Table | Text]:
    """Without JavaScript: each key's score with its length and angle, and its weight."""
    q = result["query"]
    rows = [
        (
            f"key {j + 1}",
            (f"({k[0]:g}, {k[1]:g})", result["key_lengths"][j], result["angles_deg"][j],
             result["scores"][j], result["weights"][j]),
        )
        for j, k in enumerate(result["keys"])
    ]  # fmt: skip
    caption = (
        f"Query ({q[0]:g}, {q[1]:g}), length {result['query_length']:.2f}: each key's score "
        "q · k = |q| |k| cos(angle), and its weight after the softmax."
    )
    columns = ("Key", "Vector", "Length", "Angle (degrees)", "Score q · k", "Weight")
    return [
        Table(caption, columns, rows, digits=2),
        Text(f"Key {result['top_key'] + 1} gets the most weight."),
    ]
