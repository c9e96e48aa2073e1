"""Lab: attention computed tile by tile with an online softmax, as FlashAttention does.

Plain attention writes the whole (seq_len, seq_len) score matrix, takes its softmax row by
row and multiplies by V. :func:`tiled_attention` never holds that matrix: it walks the
score grid in tiles of block_q queries by block_k keys and keeps, for each query row, a
running maximum, a running sum of exponentials and a running weighted sum of values,
rescaling them whenever a new tile raises the maximum (the online softmax of Milakov &
Gimelshein 2018, arXiv:1805.02867). The loops are in FlashAttention-2's order (Dao 2023,
arXiv:2307.08691, Algorithm 1): a block of queries outside, the tiles of K and V streaming
past inside, and one division by the running sum at the end. FlashAttention-1 (Dao et al.
2022, NeurIPS, Algorithm 1) has them the other way round: K/V blocks outside, query blocks
inside, with the normalised output and its m and l written back to memory after every
tile. The output is the same as plain attention's (to rounding); the work is the same too;
what shrinks is the largest intermediate array (one score tile instead of the whole grid)
and, on a GPU, the traffic to slow memory.

The lab draws random Q, K, V (stated on the page), runs both, and returns the tile being
read at the chosen step with the running max and sum of its query rows, the memory the
two methods hold, and work and memory against seq_len for a plot.
"""

from __future__ import annotations

import math

import numpy as np

from ..attention import causal_mask, scaled_dot_product_attention
from ..params import LabParameterError, Param
from ..static import Table, Text

SCHEMA = (
    Param("seq_len", "integer", 16, "Number of tokens (queries and keys).", 2, 64),
    Param("d_head", "integer", 8, "Width of queries, keys and values.", 1, 64),
    Param("block_q", "integer", 4, "Query rows per tile.", 1, 64),
    Param("block_k", "integer", 4, "Key columns per tile.", 1, 64),
    Param("causal", "boolean", False, "Causal mask: skip tiles entirely above the diagonal."),
    # 64 x 64 tiles of 1 x 1 at most
    Param("step", "integer", 0, "Which tile to show (0 = the first one read).", 0, 64 * 64 - 1),
    Param("seed", "integer", 0, "Seed for the random Q, K, V.", 0, 2**31 - 1),
)

# The heaviest settings (`make bench`): the most tiles (64 x 64 of 1 x 1) and the widest heads.
LARGEST = {"seq_len": 64, "d_head": 64, "block_q": 1, "block_k": 1}

SWEEP = [2**k for k in range(2, 18)]  # seq_len 4 ... 131,072 for the plot


def tiled_attention(Q, K, V, block_q, block_k, causal=False, on_tile=None):
    """Attention softmax(Q K^T / sqrt(d_head)) V, one tile of the score grid at a time.

    Args:
        Q: queries, (seq_len_q, d_head) float array.
        K: keys, (seq_len_k, d_head).
        V: values, (seq_len_k, d_v).
        block_q, block_k: tile height (query rows) and width (key columns), ints >= 1;
            the last tile of a row or column may be smaller.
        causal: if True, query i sees keys j <= i only (seq_len_q must equal seq_len_k);
            tiles lying entirely above the diagonal are skipped, never read.
        on_tile: optional callback ``on_tile(qb, kb, m, l)`` for each tile read, in the
            order of :func:`tiles_read`, with the tile's block indices and the running max
            ``m`` and sum ``l`` (block rows,) of its query rows just after that tile.

    Returns:
        (seq_len_q, d_v) float64 output, equal to plain attention's to rounding.

    For each block of query rows it keeps m (the largest score seen so far), l (the sum
    of exp(score - m) so far) and acc (the sum of exp(score - m) times the value rows).
    When a tile raises the maximum from m to m_new, the old l and acc are multiplied by
    exp(m - m_new), which is what they would have been with m_new from the start; at the
    end, output = acc / l (Milakov & Gimelshein 2018). Queries outside, keys inside and one
    division at the end: FlashAttention-2's loop order (Dao 2023, Algorithm 1), not
    FlashAttention-1's (Dao et al. 2022, Algorithm 1: K/V blocks outside).
    """
    out, m_after, l_after = tiled_attention_state(Q, K, V, block_q, block_k, causal)
    if on_tile is not None:
        seq_q = out.shape[0]
        for qb, kb in tiles_read_rect(seq_q, np.shape(K)[0], block_q, block_k, causal):
            rows = slice(qb * block_q, min((qb + 1) * block_q, seq_q))
            on_tile(qb, kb, m_after[kb, rows].copy(), l_after[kb, rows].copy())
    return out


def tiled_attention_state(Q, K, V, block_q, block_k, causal=False):
    """:func:`tiled_attention` with its running state kept: (output, m_after, l_after).

    ``output`` is (seq_len_q, d_v); ``m_after`` and ``l_after`` are (n_k_blocks, seq_len_q):
    row kb holds every query row's running max and sum just after its tile in key block kb
    (NaN where causal skipped that tile). Raises ValueError as :func:`tiled_attention`.

    The blocks of query rows never share m, l or acc, so all of them take each key block
    at once, as a GPU runs FlashAttention-2's query blocks side by side: one NumPy step per
    key block, not one Python step per tile (4,096 of them at seq_len 64 with 1 x 1
    tiles). Each row still sees its key blocks in order, with the same arithmetic.
    """
    Q, K, V = (np.asarray(a, dtype=np.float64) for a in (Q, K, V))
    seq_q, d_head = Q.shape  # (seq_len_q, d_head)
    seq_k = K.shape[0]  # K: (seq_len_k, d_head), V: (seq_len_k, d_v)
    if K.shape[1] != d_head or V.shape[0] != seq_k:
        raise ValueError(f"shapes do not fit: Q {Q.shape}, K {K.shape}, V {V.shape}")
    if causal and seq_q != seq_k:
        raise ValueError("causal tiles need as many queries as keys")
    if block_q < 1 or block_k < 1:
        raise ValueError(f"block_q and block_k must be >= 1, got {block_q}, {block_k}")
    scale = 1.0 / math.sqrt(d_head)
    n_k = math.ceil(seq_k / block_k)
    m = np.full(seq_q, -np.inf)  # running max of each row's scores
    l = np.zeros(seq_q)  # running sum of exp(score - m)  # noqa: E741
    acc = np.zeros((seq_q, V.shape[1]))  # running sum of exp(score - m) * value
    m_after = np.full((n_k, seq_q), np.nan)
    l_after = np.full((n_k, seq_q), np.nan)
    rows = np.arange(seq_q)
    for kb in range(n_k):
        k0, k1 = kb * block_k, min((kb + 1) * block_k, seq_k)
        # Causal: the query blocks whose tile here lies wholly above the diagonal (their
        # last row is before key k0) are skipped; the rest form a run of rows to the end.
        q0 = (k0 // block_q) * block_q if causal else 0
        r = slice(q0, seq_q)
        S = Q[r] @ K[k0:k1].T * scale  # (rows, bk): one score tile per query block
        if causal:
            S = np.where(np.arange(k0, k1)[None, :] <= rows[r, None], S, -np.inf)
        m_new = np.maximum(m[r], S.max(axis=1))
        shift = np.where(np.isfinite(m_new), m_new, 0.0)  # a row with nothing seen yet
        rescale = np.exp(m[r] - shift)  # exp(-inf) = 0 on the first tile of a row
        P = np.exp(S - shift[:, None])  # masked entries exactly 0
        l[r] = l[r] * rescale + P.sum(axis=1)
        acc[r] = acc[r] * rescale[:, None] + P @ V[k0:k1]
        m[r] = m_new
        m_after[kb, r], l_after[kb, r] = m[r], l[r]
    return acc / l[:, None], m_after, l_after  # every row has seen key 0, so l > 0


def tiles_read(seq_len, block_q, block_k, causal):
    """The (query block, key block) pairs :func:`tiled_attention` reads, in order."""
    return tiles_read_rect(seq_len, seq_len, block_q, block_k, causal)


def tiles_read_rect(seq_q, seq_k, block_q, block_k, causal):
    """:func:`tiles_read` for ``seq_q`` queries and ``seq_k`` keys (equal when causal)."""
    n_q, n_k = math.ceil(seq_q / block_q), math.ceil(seq_k / block_k)
    return [
        (qb, kb)
        for qb in range(n_q)
        for kb in range(n_k)
        if not (causal and kb * block_k > min((qb + 1) * block_q, seq_q) - 1)
    ]


def random_qkv(seq_len, d_head, seed):
    """Random Q, K, V (seq_len, d_head) with unit-variance entries."""
    rng = np.random.default_rng(seed)
    return rng.standard_normal((3, seq_len, d_head))


def memory_floats(seq_len, d_head, block_q, block_k):
    """Floats each method holds besides its inputs and output.

    plain: the (seq_len, seq_len) scores (the weights can overwrite them);
    tiled: one (block_q, block_k) score tile, the running state of one block of query
    rows (acc: block_q x d_head, m and l: block_q each), and the m and l of every row
    (2 seq_len), which FlashAttention also keeps for the backward pass. Tiles are cut to
    seq_len.
    """
    bq, bk = min(block_q, seq_len), min(block_k, seq_len)
    tile = bq * bk
    return {
        "plain": seq_len * seq_len,
        "tile": tile,
        "tiled": tile + bq * (d_head + 2) + 2 * seq_len,
    }


def work_flops(seq_len, d_head):
    """Multiply-adds of both methods, counted as 2 FLOPs each: Q K^T and weights @ V."""
    return 2 * 2 * seq_len * seq_len * d_head


def compute(params: dict) -> dict:
    """The lab's result for validated ``params`` (see :data:`SCHEMA`).

    ``tiles``: the (query block, key block) pairs read, in order; ``current`` the one at
    ``step``, with ``rows`` and ``cols`` its [start, stop) ranges and ``running_max`` /
    ``running_sum`` of its query rows after it is read; ``output`` and ``plain`` (seq_len,
    d_head) and ``max_abs_diff`` between them; ``memory`` (:func:`memory_floats`);
    ``sweep`` work and memory for seq_len in :data:`SWEEP`. Raises
    :class:`LabParameterError` for a step past the last tile.
    """
    n, d = params["seq_len"], params["d_head"]
    bq, bk, causal = params["block_q"], params["block_k"], params["causal"]
    Q, K, V = random_qkv(n, d, params["seed"])
    tiles = tiles_read(n, bq, bk, causal)
    step = params["step"]
    if step >= len(tiles):
        raise LabParameterError(
            "step",
            f"step must be a whole number from 0 to {len(tiles) - 1} "
            f"(there are {len(tiles)} tiles), got {step}",
        )
    current = tiles[step]
    output, m_after, l_after = tiled_attention_state(Q, K, V, bq, bk, causal)
    plain, _ = scaled_dot_product_attention(Q, K, V, mask=causal_mask(n) if causal else None)
    qb, kb = current
    rows = slice(qb * bq, min((qb + 1) * bq, n))
    running_max, running_sum = m_after[kb, rows], l_after[kb, rows]
    memory = memory_floats(n, d, bq, bk)
    return {
        "seq_len": n,
        "block_q": bq,
        "block_k": bk,
        "n_q_blocks": math.ceil(n / bq),
        "n_k_blocks": math.ceil(n / bk),
        "causal": causal,
        "tiles": [list(t) for t in tiles],
        "step": step,
        "current": list(current),
        "rows": [qb * bq, min((qb + 1) * bq, n)],
        "cols": [kb * bk, min((kb + 1) * bk, n)],
        "running_max": running_max,
        "running_sum": running_sum,
        "output": output,
        "plain": plain,
        "max_abs_diff": float(np.abs(output - plain).max()),
        "memory": memory,
        "sweep": {
            "seq_len": SWEEP,
            "work": [work_flops(s, d) for s in SWEEP],
            "memory_plain": [memory_floats(s, d, bq, bk)["plain"] for s in SWEEP],
            "memory_tiled": [memory_floats(s, d, bq, bk)["tiled"] for s in SWEEP],
        },
    }


def static_view(result: dict, params: dict) -> list[Table | Text]:
    """Without JavaScript: the tiling, its error, and memory against plain attention."""
    m = result["memory"]
    sweep = result["sweep"]
    rows = [
        (f"{n:,d}", (sweep["work"][i], sweep["memory_plain"][i], sweep["memory_tiled"][i]))
        for i, n in enumerate(sweep["seq_len"])
    ]
    return [
        Text(
            f"seq_len {result['seq_len']} in blocks of {result['block_q']} queries and "
            f"{result['block_k']} keys: {len(result['tiles'])} tiles. The tiled output equals "
            f"plain attention up to {result['max_abs_diff']:.1e}. Besides its inputs and "
            f"output it holds {m['tiled']:,d} numbers, where plain attention holds the "
            f"{m['plain']:,d} scores."
        ),
        Table(
            "Work (FLOPs, the same for both methods) and numbers held besides the inputs and "
            "the output, by seq_len.",
            ("seq_len", "Work (FLOPs)", "Held, plain", "Held, tiled"),
            rows,
        ),
    ]
