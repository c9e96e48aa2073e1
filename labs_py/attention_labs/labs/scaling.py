"""Lab: why attention divides its scores by sqrt(d_head).

For every width d_head in ``D_HEADS`` (4, 8, ..., 512) the lab draws RANDOM queries and
keys, ``seq_len`` of each, whose components are independent with mean 0 and variance 1.
Each dot product q . k is then a sum of d_head unit-variance products, so it has variance
d_head (Vaswani et al. 2017, "Attention Is All You Need", NeurIPS, section 3.2.1 and
footnote 4). The lab softmaxes every query's row of scores twice, scaled (q . k /
sqrt(d_head)) and unscaled (q . k), and reports per width:

- the mean row entropy in bits (Shannon 1948): high when a row spreads its weight, 0 when
  it puts everything on one key;
- the size of the softmax's gradient. For one row p = softmax(z), the Jacobian
  dp/dz is J = diag(p) - p p^T, a (seq_len, seq_len) matrix; training changes the scores
  z only through it. Its Frobenius norm is computed in closed form,
  ||J||_F^2 = sum_j p_j^2 - 2 sum_j p_j^3 + (sum_j p_j^2)^2, and averaged over the rows.
  It is 0 for a one-hot row, sqrt(1/n - 1/n^2) for a uniform row of n keys, largest
  in between; as a row becomes one-hot it tends to 0: the gradients vanish. The lab
  reports the median over the rows (a few unsaturated rows would dominate a mean).

The widths share their vectors: the queries and keys at width d are the first d
components of one (seq_len, 512) draw, so moving from one width to the next only adds
components. Cost: one matmul per block of new components (8 blocks, seq_len^2 * 512
multiply-adds in all), then every softmax, entropy and norm at once on a
(2, 8, seq_len, seq_len) array.
"""

from __future__ import annotations

import math

import numpy as np

from ..params import LabParameterError, Param
from ..static import Table, Text

D_HEADS = (4, 8, 16, 32, 64, 128, 256, 512)  # the widths plotted, powers of two

SCHEMA = (
    Param("seq_len", "integer", 16, "Number of queries and keys (tokens).", 2, 64),
    Param(
        "d_head",
        "integer",
        64,
        "The width marked on the plots and read out below them (a power of two).",
        D_HEADS[0],
        D_HEADS[-1],
    ),
    Param("seed", "integer", 0, "Seed for the random queries and keys.", 0, 2**31 - 1),
)

LARGEST = {"seq_len": 64}  # the heaviest recompute the schema allows (make bench)


def random_queries_and_keys(seq_len: int, seed: int):
    """Q, K: (seq_len, max(D_HEADS)) float64 with independent N(0, 1) components."""
    rng = np.random.default_rng(seed)
    return rng.standard_normal((2, seq_len, D_HEADS[-1]))


def dot_products(Q: np.ndarray, K: np.ndarray) -> np.ndarray:
    """(len(D_HEADS), seq_len, seq_len): q . k over the first d components, each d.

    Each width adds the block of components since the last one, so the cumulative sum of
    the blocks' products is the dot product at every width (no recomputation)."""
    edges = (0, *D_HEADS)
    blocks = [Q[:, a:b] @ K[:, a:b].T for a, b in zip(edges[:-1], edges[1:], strict=True)]
    return np.cumsum(blocks, axis=0)


def softmax_jacobian(p: np.ndarray) -> np.ndarray:
    """The Jacobian of softmax at its output ``p``: J = diag(p) - p p^T.

    Args: p, (..., n) rows that sum to 1. Returns (..., n, n), J[..., j, k] = dp_j / dz_k.
    (Explicit, for tests and small examples; the lab uses :func:`jacobian_norm`.)"""
    p = np.asarray(p, dtype=float)
    return p[..., :, None] * np.eye(p.shape[-1]) - p[..., :, None] * p[..., None, :]


def jacobian_norm(p: np.ndarray) -> np.ndarray:
    """Frobenius norm of diag(p) - p p^T for each row of ``p`` (..., n) -> (...).

    ||J||_F^2 = sum_j (p_j - p_j^2)^2 + sum_{j != k} p_j^2 p_k^2
              = sum_j p_j^2 - 2 sum_j p_j^3 + (sum_j p_j^2)^2."""
    p2 = p * p
    s2 = p2.sum(axis=-1)
    s3 = (p2 * p).sum(axis=-1)
    return np.sqrt(np.maximum(s2 - 2 * s3 + s2 * s2, 0.0))


def softmax_rows(logits: np.ndarray):
    """Softmax over the last axis and each row's entropy in bits, in one pass.

    The same numbers as :func:`..attention.softmax` and :func:`..attention.entropy_bits`
    (tested), without their argument checks and masks: this runs at every change.
    With z the shifted logits (max 0) and S = sum_j e^z_j, log2 p_j = z_j / ln 2 - log2 S,
    so H = log2 S - sum_j p_j z_j / ln 2: no log of a tiny p is ever taken."""
    z = logits - logits.max(axis=-1, keepdims=True)  # (..., n), each row's max is 0
    e = np.exp(z)
    total = e.sum(axis=-1, keepdims=True)  # >= 1
    p = e / total
    entropy = np.log2(total[..., 0]) - (p * z).sum(axis=-1) / math.log(2)
    return p, np.maximum(entropy, 0.0)


def compute(params: dict) -> dict:
    """The lab's result for validated ``params`` (see :data:`SCHEMA`).

    Returns ``d_heads`` (the widths); per width, for ``scaled`` and ``unscaled``
    softmax: ``entropy_bits`` (mean row entropy, bits), ``gradient`` (Frobenius norm
    of the row Jacobian, median over rows) and ``peaked`` (fraction of rows with a
    weight over 0.9);
    ``max_entropy_bits`` (log2 seq_len, a uniform row); ``max_gradient`` (the norm of a
    uniform row's Jacobian, sqrt(1/n - 1/n^2)); and ``marker``, the chosen width with its
    index in ``d_heads``. Each series is a list of len(D_HEADS) floats.
    """
    d = params["d_head"]
    if d not in D_HEADS:
        raise LabParameterError(
            "d_head", f"d_head must be one of {', '.join(map(str, D_HEADS))}, got {d}"
        )
    seq_len = params["seq_len"]
    Q, K = random_queries_and_keys(seq_len, params["seed"])
    dots = dot_products(Q, K)  # (n_widths, seq_len, seq_len), [width, query, key]
    root = np.sqrt(np.array(D_HEADS, dtype=float))[:, None, None]
    logits = np.stack([dots / root, dots])  # (2, n_widths, seq_len, seq_len): scaled, unscaled
    weights, row_entropy = softmax_rows(logits)  # rows sum to 1
    entropy = row_entropy.mean(axis=-1)  # (2, n_widths)
    gradient = np.median(jacobian_norm(weights), axis=-1)  # (2, n_widths)
    peaked = (weights.max(axis=-1) > 0.9).mean(axis=-1)  # (2, n_widths)
    n = seq_len
    return {
        "d_heads": list(D_HEADS),
        "seq_len": seq_len,
        "scaled": {"entropy_bits": entropy[0], "gradient": gradient[0], "peaked": peaked[0]},
        "unscaled": {"entropy_bits": entropy[1], "gradient": gradient[1], "peaked": peaked[1]},
        "max_entropy_bits": math.log2(n),
        "max_gradient": math.sqrt(1 / n - 1 / n**2),
        "marker": {"d_head": d, "index": D_HEADS.index(d)},
    }


def static_view(result: dict, params: dict) -> list[Table | Text]:
    """Without JavaScript: entropy and gradient by width, scaled and unscaled."""
    s, u = result["scaled"], result["unscaled"]
    rows = [
        (str(d), (s["entropy_bits"][i], u["entropy_bits"][i], s["gradient"][i], u["gradient"][i]))
        for i, d in enumerate(result["d_heads"])
    ]
    caption = (
        f"Random queries and keys, {result['seq_len']} of each: mean row entropy (bits, at most "
        f"{result['max_entropy_bits']:.2f}) and the norm of the softmax's Jacobian, ‖J‖_F "
        "(how much gradient the softmax lets through), with and without dividing by sqrt(d_head)."
    )
    columns = ("d_head", "Entropy, scaled", "Entropy, unscaled", "‖J‖_F, scaled",
               "‖J‖_F, unscaled")  # fmt: skip
    return [Table(caption, columns, rows)]
