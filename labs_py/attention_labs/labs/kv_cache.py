"""Lab: generation token by token with a key/value cache, checked against full causal attention.

A decoder generates one token per step. At step t the new token's embedding x_t (d_model)
gives its query rows (one per query head), and its key and value rows (one per key/value
head); the keys and values of the earlier tokens do not change, so they are kept in a
**cache** instead of being recomputed. The step appends the new key and value rows to the
cache (which then holds t + 1 rows per key/value head) and lets each query row attend to
all of them. The result must equal row t of full causal attention over the whole sentence:
the lab computes both and returns their largest difference at every step (float64).

Shapes: x (seq_len, d_model) with d_model = n_heads * d_head; W_Q (d_model, n_heads * d_head);
W_K and W_V (d_model, n_kv_heads * d_head); the cache K and V (n_kv_heads, t + 1, d_head).
Query head h reads key/value head h // (n_heads // n_kv_heads): n_kv_heads = n_heads is
ordinary multi-head attention, n_kv_heads = 1 is multi-query attention (Shazeer 2019,
arXiv:1911.02150), anything between is grouped-query attention (Ainslie et al. 2023, EMNLP).
The weights and the embeddings are random (seeded); no trained model is involved, so the
tokens of the sentence are fed in one by one as if the model had generated them.
"""

from __future__ import annotations

import math

import numpy as np

from ..attention import causal_mask
from ..params import LabParameterError, Param
from ..static import Table, Text

SCHEMA = (
    Param(
        "tokens",
        "tokens",
        ["The", "fluffy", "blue", "creature", "roamed", "the"],
        "The sentence, fed in one token per step.",
        min_items=1,
        max_items=16,
        max_chars=16,
    ),
    Param("step", "integer", 3, "Which step to show (0 = the first token).", 0, 15),
    Param("n_heads", "integer", 4, "Query heads.", 1, 8),
    Param(
        "n_kv_heads",
        "integer",
        4,
        "Key/value heads, shared by groups of query heads (must divide n_heads).",
        1,
        8,
    ),
    Param("d_head", "integer", 4, "Width of each head's queries, keys and values.", 1, 16),
    Param("seed", "integer", 0, "Seed for the random embeddings and weights.", 0, 2**31 - 1),
)

# The heaviest settings (`make bench`): the longest sentence, the most heads, the widest.
LARGEST = {
    "tokens": [f"t{i}" for i in range(16)],
    "step": 15,
    "n_heads": 8,
    "n_kv_heads": 8,
    "d_head": 16,
}


def check_heads(n_heads: int, n_kv_heads: int) -> int:
    """The group size n_heads // n_kv_heads; LabParameterError naming n_kv_heads if it
    does not divide n_heads."""
    if n_kv_heads > n_heads or n_heads % n_kv_heads:
        divisors = [k for k in range(1, n_heads + 1) if n_heads % k == 0]
        raise LabParameterError(
            "n_kv_heads",
            f"n_kv_heads must divide n_heads ({n_heads}): one of "
            f"{', '.join(map(str, divisors))}, got {n_kv_heads}",
        )
    return n_heads // n_kv_heads


def random_model(seq_len, n_heads, n_kv_heads, d_head, seed):
    """Random embeddings x (seq_len, d_model) and W_Q, W_K, W_V, entries of variance 1/d_model.

    The draw does not depend on ``n_kv_heads``: the full multi-head W_K and W_V (one
    key/value head per query head) are drawn from the seed, and key/value head g keeps the
    columns of the first query head of its group, head g * (n_heads // n_kv_heads). So MHA,
    GQA and MQA with the same seed share x and W_Q, and every query head that is first in
    its group keeps exactly its MHA keys and values (MQA keeps head 1's)."""
    d_model = n_heads * d_head
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((seq_len, d_model))
    s = 1 / math.sqrt(d_model)
    W_Q = rng.standard_normal((d_model, n_heads * d_head)) * s
    W_K = rng.standard_normal((d_model, n_heads * d_head)) * s
    W_V = rng.standard_normal((d_model, n_heads * d_head)) * s
    group = n_heads // n_kv_heads
    keep = heads(np.arange(n_heads * d_head), n_heads)[::group].reshape(-1)  # first of each group
    return x, W_Q, W_K[:, keep], W_V[:, keep]


def heads(t, n):
    """Split the last axis into n heads: (n * d_head,) -> (n, d_head) and
    (seq_len, n * d_head) -> (n, seq_len, d_head)."""
    t = np.asarray(t)
    if t.ndim == 1:
        return t.reshape(n, -1)
    return t.reshape(t.shape[0], n, -1).transpose(1, 0, 2)


def _softmax_rows(scores):
    """Softmax over the last axis (no masked entries here: every row sees a key)."""
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def decode_step(q, k, v, K_cache, V_cache):
    """One step of generation with a key/value cache.

    Args:
        q: the new token's query rows, (n_heads, d_head).
        k, v: its key and value rows, (n_kv_heads, d_head).
        K_cache, V_cache: the earlier tokens' keys and values, (n_kv_heads, t, d_head);
            t may be 0 (the first step).

    Returns:
        (out, weights, K_cache, V_cache): out (n_heads, d_head), the new query rows' outputs;
        weights (n_heads, t + 1), their weights over the cached keys (each row sums to 1);
        the caches with the new rows appended, (n_kv_heads, t + 1, d_head).

    Query head h attends to key/value head h // (n_heads // n_kv_heads). The new token is
    the last one, so nothing in the cache is in its future: no mask is needed.
    """
    n_heads, d_head = q.shape
    n_kv = k.shape[0]
    group = n_heads // n_kv
    K_cache = np.concatenate([K_cache, k[:, None, :]], axis=1)  # (n_kv, t + 1, d_head)
    V_cache = np.concatenate([V_cache, v[:, None, :]], axis=1)
    Kq = np.repeat(K_cache, group, axis=0)  # (n_heads, t + 1, d_head): head h -> kv h // group
    Vq = np.repeat(V_cache, group, axis=0)
    scores = (Kq @ q[:, :, None])[:, :, 0] / math.sqrt(d_head)  # (n_heads, t + 1)
    weights = _softmax_rows(scores)  # each row sums to 1
    out = (weights[:, None, :] @ Vq)[:, 0, :]  # (n_heads, d_head)
    return out, weights, K_cache, V_cache


def full_causal_attention(x, W_Q, W_K, W_V, n_heads, n_kv_heads):
    """All rows at once with the causal mask: outputs (n_heads, seq_len, d_head) and
    weights (n_heads, seq_len, seq_len). Key/value heads are repeated for their group."""
    group = n_heads // n_kv_heads
    Q = heads(x @ W_Q, n_heads)  # (n_heads, seq_len, d_head)
    K = np.repeat(heads(x @ W_K, n_kv_heads), group, axis=0)  # (n_heads, seq_len, d_head)
    V = np.repeat(heads(x @ W_V, n_kv_heads), group, axis=0)
    d_head = Q.shape[-1]
    scores = Q @ K.transpose(0, 2, 1) / math.sqrt(d_head)
    scores = np.where(causal_mask(x.shape[0]), scores, -np.inf)  # before the softmax
    weights = _softmax_rows(scores)  # the diagonal is always visible: no empty row
    return weights @ V, weights


def generate_with_cache(x, W_Q, W_K, W_V, n_heads, n_kv_heads):
    """Feed the rows of x one at a time through :func:`decode_step`.

    Returns (outs, weights, K_cache, V_cache): outs (seq_len, n_heads, d_head), one per
    step; weights a list of (n_heads, t + 1) arrays; the final caches. Each step computes
    the projections of its own token only.
    """
    d_head = W_Q.shape[1] // n_heads
    K_cache = np.zeros((n_kv_heads, 0, d_head))
    V_cache = np.zeros((n_kv_heads, 0, d_head))
    outs, weights = [], []
    for x_t in x:  # (d_model,): one new token per step
        q = heads(x_t @ W_Q, n_heads)  # (n_heads, d_head)
        k = heads(x_t @ W_K, n_kv_heads)  # (n_kv_heads, d_head)
        v = heads(x_t @ W_V, n_kv_heads)
        out, w, K_cache, V_cache = decode_step(q, k, v, K_cache, V_cache)
        outs.append(out)
        weights.append(w)
    return np.stack(outs), weights, K_cache, V_cache


def compute(params: dict) -> dict:
    """The lab's result for validated ``params`` (see :data:`SCHEMA`).

    ``step`` t; ``K_cache`` / ``V_cache`` (n_kv_heads, t + 1, d_head): the cache after
    step t; ``query`` (n_heads, d_head) the new token's query rows; ``weights`` (n_heads,
    t + 1) and ``out`` (n_heads, d_head) of the step; ``full_out`` (n_heads, d_head) row t
    of full causal attention; ``diffs`` (seq_len,) the largest |cached - full| at every
    step and ``max_diff`` their maximum; ``cache_floats`` (seq_len,) the floats the cache
    holds after each step; ``kv_rows`` the key/value rows each step projects, with the
    cache (1 per key/value head) and without it (t + 1). Raises
    :class:`LabParameterError` naming ``step`` past the sentence or ``n_kv_heads`` that
    does not divide ``n_heads``.
    """
    tokens = params["tokens"]
    n = len(tokens)
    t = params["step"]
    if t >= n:
        raise LabParameterError(
            "step",
            f"step must be a whole number from 0 to {n - 1} (the sentence has {n} tokens), got {t}",
        )
    n_heads, n_kv, d_head = params["n_heads"], params["n_kv_heads"], params["d_head"]
    group = check_heads(n_heads, n_kv)
    x, W_Q, W_K, W_V = random_model(n, n_heads, n_kv, d_head, params["seed"])
    outs, weights, K_all, V_all = generate_with_cache(x, W_Q, W_K, W_V, n_heads, n_kv)
    full, _ = full_causal_attention(x, W_Q, W_K, W_V, n_heads, n_kv)  # (n_heads, seq, d_head)
    diffs = np.abs(outs - full.transpose(1, 0, 2)).max(axis=(1, 2))  # (seq_len,)
    steps = np.arange(1, n + 1)
    return {
        "tokens": tokens,
        "step": t,
        "n_heads": n_heads,
        "n_kv_heads": n_kv,
        "group": group,
        "d_head": d_head,
        "d_model": n_heads * d_head,
        "kv_head_of": [h // group for h in range(n_heads)],
        "query": heads(x[t] @ W_Q, n_heads),
        "K_cache": K_all[:, : t + 1],
        "V_cache": V_all[:, : t + 1],
        "weights": weights[t],
        "out": outs[t],
        "full_out": full[:, t],
        "diffs": diffs,
        "max_diff": float(diffs.max()),
        "cache_floats": [int(2 * n_kv * s * d_head) for s in steps],
        "kv_rows": {"with_cache": n_kv, "without_cache": n_kv * (t + 1)},
        "scores": n_heads * (t + 1),
    }


def static_view(result: dict, params: dict) -> list[Table | Text]:
    """Without JavaScript: what the cache of key/value head 1 holds at this step."""
    tokens, t = result["tokens"], result["step"]
    readers = [h for h, kv in enumerate(result["kv_head_of"]) if kv == 0]
    rows = []
    for j, token in enumerate(tokens):
        state = "cached" if j < t else "new: appended" if j == t else "not generated yet"
        weights = [result["weights"][h][j] if j <= t else None for h in readers]
        rows.append((token, (state, *weights)))
    caption = (
        f"The cache of key/value head 1 at step {t + 1} of {len(tokens)}, and the weight "
        "each query head that reads it puts on every cached key."
    )
    columns = ("Token", "Row", *(f"w, head {h + 1}" for h in readers))
    return [
        Text(
            f"Step {t + 1} of {len(tokens)}: “{tokens[t]}” is the new token. The cached "
            f"step equals full causal attention up to {result['max_diff']:.1e} at every step."
        ),
        Table(caption, columns, rows, digits=3),
    ]
