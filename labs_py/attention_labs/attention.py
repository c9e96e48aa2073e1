"""Scaled dot-product and multi-head attention in plain NumPy.

This is the math core of the labs. It imports only NumPy and the standard
library so that it runs the same on CPython and in the browser (Pyodide).
Everything is computed in float64.

Conventions used throughout:

- Attention matrices are indexed [query, key]: row i holds the weights that
  query i gives to every key, so softmax runs over the LAST axis and each
  row sums to 1 (or is all zeros when the query may attend to nothing).
- Masks are boolean with True = "this query may attend to this key", the
  same convention as the boolean ``attn_mask`` of
  ``torch.nn.functional.scaled_dot_product_attention``.
- Weight matrices act on row vectors: ``x @ W_Q``, so each W is
  (d_model, d_model) with input features on the first axis.

Source: Vaswani et al. 2017, "Attention Is All You Need", NeurIPS,
arXiv:1706.03762. Scaled dot-product attention is eq. 1 (section 3.2.1);
multi-head attention is section 3.2.2.
"""

import math
import numbers
import sys

import numpy as np

__all__ = [
    "softmax",
    "causal_mask",
    "attention_logits",
    "scaled_dot_product_attention",
    "multi_head_attention",
    "entropy_bits",
    "padding_mask",
    "sliding_window_mask",
    "sinusoidal_positions",
    "rope_frequencies",
    "apply_rope",
    "cross_attention",
]


# ----------------------------------------------------------------------------
# private helpers: argument checks shared by the public functions


def _as_finite_array(name, value, min_ndim=0, allow_neg_inf=False):
    """Convert `value` to a float64 array; raise ValueError naming `name` if it
    is not real numbers, has fewer than `min_ndim` axes or holds NaN/inf."""
    if np.iscomplexobj(value):
        raise ValueError(f"{name} must hold real numbers, got a complex array")
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{name} must be an array of real numbers ({err})") from None
    if arr.ndim < min_ndim:
        raise ValueError(
            f"{name} must have at least {min_ndim} dimension(s), got shape {arr.shape}"
        )
    bad = np.isnan(arr) | (arr == np.inf) if allow_neg_inf else ~np.isfinite(arr)
    if np.any(bad):
        allowed = "finite numbers or -inf" if allow_neg_inf else "finite numbers"
        raise ValueError(f"{name} must contain only {allowed} (found NaN or inf)")
    return arr


def _as_bool_mask(name, value, shape):
    """Check that `value` is a boolean array broadcastable to `shape`; return the
    broadcast (read-only) view."""
    mask = np.asarray(value)
    if mask.dtype != np.bool_:
        raise ValueError(
            f"{name} must be a boolean array (True = may attend), got dtype {mask.dtype}"
        )
    try:
        return np.broadcast_to(mask, shape)
    except ValueError:
        raise ValueError(
            f"{name} of shape {mask.shape} is not broadcastable to shape {shape}"
        ) from None


def _check_axis(axis, ndim):
    """Return `axis` as a non-negative int, or raise ValueError."""
    if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, numbers.Integral):
        raise ValueError(f"axis must be an int, got {axis!r}")
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis must be in [-{ndim}, {ndim}) for a {ndim}-D array, got {axis}")
    return int(axis) % ndim


def _check_temperature(temperature):
    """Return `temperature` as a float, or raise ValueError unless finite and > 0."""
    ok = isinstance(temperature, numbers.Real) and not isinstance(temperature, bool)
    if not ok or not math.isfinite(temperature) or temperature <= 0:
        raise ValueError(f"temperature must be a finite number > 0, got {temperature!r}")
    return float(temperature)


def _check_scale(scale):
    """Return `scale` as a bool, or raise ValueError."""
    if not isinstance(scale, (bool, np.bool_)):
        raise ValueError(
            "scale must be True or False (divide the logits by sqrt(d_head) or not); "
            f"use temperature for any other factor, got {scale!r}"
        )
    return bool(scale)


def _leading_shape(shape_a, name_a, shape_b, name_b):
    """Broadcast the leading (batch, head) dimensions of two arrays, or raise."""
    try:
        return np.broadcast_shapes(shape_a[:-2], shape_b[:-2])
    except ValueError:
        raise ValueError(
            f"{name_b} has leading (batch/head) dimensions {shape_b[:-2]} that do not "
            f"match or broadcast with {name_a}'s {shape_a[:-2]}"
        ) from None


# NumPy in Pyodide (the browser) has no BLAS: its matmul falls back to a plain loop that
# walks the right operand down its columns, 3 to 6 times slower there than einsum's
# sum-of-products loops from 30k multiply-adds up (a 128 x 256 by 256 x 128 product:
# 6-25 ms against 2 ms; make bench). CPython keeps BLAS. The sums come out in another order:
# the results differ in the last bits (1e-14 at most for these sizes), as BLAS's already do.
_NO_BLAS = sys.platform == "emscripten"
_EINSUM_FROM = 32 * 32 * 32  # multiply-adds; below this einsum's parsing costs more


def matmul(a, b):
    """``a @ b`` for float arrays with ndim >= 2 (leading dimensions broadcast, as with
    ``@``); in the browser, large products go through einsum instead of NumPy's BLAS-less
    matmul (same values up to rounding, several times faster there)."""
    if _NO_BLAS:
        a, b = np.asarray(a), np.asarray(b)
        if (
            a.ndim >= 2
            and b.ndim >= 2
            and a.dtype.kind == "f"
            and b.dtype.kind == "f"
            and a.shape[-2] * a.shape[-1] * b.shape[-1] >= _EINSUM_FROM
        ):
            return np.einsum("...ik,...kj->...ij", a, b)
    return a @ b


# ----------------------------------------------------------------------------
# public API


def softmax(logits, axis=-1, where=None):
    """Numerically stable softmax, with an optional boolean mask.

    softmax(z)_j = exp(z_j - m) / sum_k exp(z_k - m), where m is the maximum of
    the allowed entries. Subtracting m changes nothing mathematically but keeps
    every exp() <= 1, so huge logits (e.g. 1e4) do not overflow.

    Args:
        logits: array-like of real numbers, any shape with ndim >= 1. Converted
            to float64. -inf is allowed and behaves like a masked entry.
        axis: the axis to normalise over (default -1; for attention matrices
            indexed [query, key] this is the keys).
        where: optional boolean array broadcastable to logits' shape;
            True = the entry takes part, False = it gets weight exactly 0.

    Returns:
        float64 array of logits' shape. Along `axis` the entries are >= 0 and
        sum to 1 -- except for a row in which no entry is allowed (all masked,
        or all -inf): that row is all zeros.

        Fully masked rows are a deliberate choice: a query that may attend to
        nothing receives no weights and, in attention, a zero output. The
        common alternatives behave worse: filling masked logits with -inf
        gives exp(-inf - (-inf)) = NaN for such a row (what a plain softmax,
        e.g. torch.softmax or torch.nn.MultiheadAttention, returns), and
        filling them with a large negative number such as -1e9 gives a uniform
        distribution over keys the query was never allowed to see. (Recent
        torch.nn.functional.scaled_dot_product_attention also returns zeros.)

    Raises:
        ValueError: logits are not real numbers, are 0-D, or contain NaN or +inf;
            axis is not an int in range; where is not boolean or not
            broadcastable to logits' shape.
    """
    logits = _as_finite_array("logits", logits, min_ndim=1, allow_neg_inf=True)
    axis = _check_axis(axis, logits.ndim)
    allowed = logits > -np.inf  # -inf logits behave as masked
    if where is not None:
        allowed = allowed & _as_bool_mask("where", where, logits.shape)

    # max over allowed entries only; -inf for a row with none allowed
    m = np.max(logits, axis=axis, where=allowed, initial=-np.inf, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)  # fully masked rows: any finite shift will do
    shifted = np.where(allowed, logits - m, 0.0)  # allowed entries are <= 0
    e = np.where(allowed, np.exp(shifted), 0.0)  # masked entries are exactly 0
    total = np.sum(e, axis=axis, keepdims=True)  # >= 1 unless the row is fully masked
    # a fully masked row has e == 0 throughout: 0 / 1 keeps it at 0 (a divide with where=
    # gives the same values but takes NumPy's slower masked loop)
    return e / np.where(total > 0, total, 1.0)


def causal_mask(seq_len):
    """Boolean causal (autoregressive) mask for decoder self-attention.

    Query i may attend to key j only if j <= i: a position sees itself and the
    past, never the future (Vaswani et al. 2017, section 3.2.3, "preventing
    leftward information flow").

    Args:
        seq_len: int >= 1 (a bool is not accepted).

    Returns:
        bool array of shape (seq_len, seq_len), indexed [query, key]; True on
        and below the diagonal (may attend), False above it.

    Raises:
        ValueError: seq_len is not an int >= 1.
    """
    if isinstance(seq_len, (bool, np.bool_)) or not isinstance(seq_len, numbers.Integral):
        raise ValueError(f"seq_len must be an int >= 1, got {seq_len!r}")
    if seq_len < 1:
        raise ValueError(f"seq_len must be an int >= 1, got {seq_len}")
    n = int(seq_len)
    return np.tril(np.ones((n, n), dtype=bool))  # (seq_len, seq_len)


def attention_logits(Q, K, scale=True, temperature=1.0):
    """Attention logits (scores before softmax): Q K^T / sqrt(d_head) / temperature.

    This is the argument of the softmax in eq. 1 of Vaswani et al. 2017. The
    1/sqrt(d_head) factor keeps the dot products' variance near 1 when the
    entries of Q and K have unit variance (section 3.2.1, footnote 4).
    temperature > 1 flattens the resulting weights, < 1 sharpens them.

    Args:
        Q: queries, array-like (..., seq_q, d_head), real and finite.
        K: keys, array-like (..., seq_k, d_head), real and finite. Leading
            dimensions must match Q's or broadcast with them.
        scale: True (default) to divide by sqrt(d_head), False to skip it.
        temperature: finite number > 0 (default 1.0); logits are divided by it.

    Returns:
        float64 array (..., seq_q, seq_k), indexed [query, key].

    Raises:
        ValueError: Q or K has ndim < 2, is not real, or contains NaN/inf;
            d_head is 0 or differs between Q and K; leading dimensions do not
            broadcast; scale is not a bool; temperature is not a finite
            number > 0; the logits overflow float64.
    """
    Q = _as_finite_array("Q", Q, min_ndim=2)  # (..., seq_q, d_head)
    K = _as_finite_array("K", K, min_ndim=2)  # (..., seq_k, d_head)
    scale = _check_scale(scale)
    temperature = _check_temperature(temperature)
    d_head = Q.shape[-1]
    if K.shape[-1] != d_head:
        raise ValueError(
            f"K must have the same last dimension (d_head) as Q: "
            f"Q has {d_head}, K has {K.shape[-1]}"
        )
    if d_head == 0:
        raise ValueError("Q and K must have a last dimension (d_head) >= 1, got 0")
    _leading_shape(Q.shape, "Q", K.shape, "K")

    with np.errstate(over="ignore", invalid="ignore"):
        logits = matmul(Q, np.swapaxes(K, -1, -2))  # (..., seq_q, seq_k)
        if scale:
            logits = logits / math.sqrt(d_head)
        logits = logits / temperature
    if not np.all(np.isfinite(logits)):
        raise ValueError("Q @ K^T overflowed float64: Q and K values are too large")
    return logits


def scaled_dot_product_attention(Q, K, V, mask=None, scale=True, temperature=1.0):
    """Scaled dot-product attention: softmax(Q K^T / sqrt(d_head)) V.

    Eq. 1 of Vaswani et al. 2017, "Attention Is All You Need" (section
    3.2.1), with an optional boolean mask and a temperature. Each output row
    is a weighted average of the rows of V, with weights from one row of the
    attention matrix.

    Args:
        Q: queries (..., seq_q, d_head). 2-D (seq, d) or batched, e.g.
            (batch, n_heads, seq, d); any leading dimensions that match or
            broadcast across Q, K and V.
        K: keys (..., seq_k, d_head).
        V: values (..., seq_k, d_v).
        mask: optional boolean array broadcastable to (..., seq_q, seq_k);
            True = query may attend to key (as torch's boolean attn_mask).
        scale: True (default) to divide the logits by sqrt(d_head).
        temperature: finite number > 0 (default 1.0) dividing the logits.

    Returns:
        (output, weights), both float64:
        output (..., seq_q, d_v); weights (..., seq_q, seq_k), each row summing
        to 1. A query whose mask row is all False gets all-zero weights and an
        all-zero output row (see `softmax`), never NaN.

    Raises:
        ValueError: any argument checked by `attention_logits`; V has ndim < 2,
            is not real, or contains NaN/inf; V's seq_k differs from K's; V's
            leading dimensions do not broadcast with Q's and K's; mask is not
            boolean or not broadcastable to the logits' shape.
    """
    logits = attention_logits(Q, K, scale=scale, temperature=temperature)  # (..., seq_q, seq_k)
    K_shape = np.shape(K)
    V = _as_finite_array("V", V, min_ndim=2)  # (..., seq_k, d_v)
    if V.shape[-2] != K_shape[-2]:
        raise ValueError(
            f"V must have the same number of rows (seq_k) as K: "
            f"K has {K_shape[-2]}, V has {V.shape[-2]}"
        )
    _leading_shape(logits.shape, "Q and K", V.shape, "V")
    if mask is not None:
        mask = _as_bool_mask("mask", mask, logits.shape)  # (..., seq_q, seq_k)
    weights = softmax(logits, axis=-1, where=mask)  # (..., seq_q, seq_k)
    output = matmul(weights, V)  # (..., seq_q, d_v)
    return output, weights


def multi_head_attention(
    x, W_Q, W_K, W_V, W_O, n_heads, mask=None, b_Q=None, b_K=None, b_V=None, b_O=None
):
    """Multi-head self-attention (Vaswani et al. 2017, section 3.2.2).

    MultiHead(x) = Concat(head_1, ..., head_h) W_O, with
    head_i = Attention(x W_Q^i, x W_K^i, x W_V^i). As in most implementations
    the h per-head projections are one (d_model, d_model) matrix each for
    Q, K and V whose output columns are split into n_heads blocks of
    d_head = d_model // n_heads. Each head uses 1/sqrt(d_head) scaling.

    Row-vector convention: projections are x @ W (+ b). (torch.nn.Linear and
    torch.nn.MultiheadAttention store the transpose and compute x @ W^T.)

    Args:
        x: (seq_len, d_model) or (batch, seq_len, d_model), real and finite.
        W_Q, W_K, W_V, W_O: each (d_model, d_model), real and finite.
        n_heads: int >= 1 that divides d_model.
        mask: optional boolean array, True = may attend. For 2-D x it must
            broadcast to (n_heads, seq_len, seq_len), e.g. (seq_len, seq_len).
            For 3-D x it must be (seq_len, seq_len) or broadcast to
            (batch, n_heads, seq_len, seq_len), e.g. (batch, 1, seq_len,
            seq_len); a 3-D mask is refused for 3-D x because
            (batch, seq_len, seq_len) would silently line up with the heads.
        b_Q, b_K, b_V, b_O: optional biases, each (d_model,).

    Returns:
        (output, weights), both float64: output has x's shape; weights are
        (n_heads, seq_len, seq_len) for 2-D x or
        (batch, n_heads, seq_len, seq_len) for 3-D x.

    Raises:
        ValueError: x is not 2-D or 3-D, not real, or contains NaN/inf;
            n_heads is not an int >= 1 or does not divide d_model; a W is not
            (d_model, d_model) or a bias not (d_model,), or either contains
            NaN/inf; mask is not boolean, not broadcastable to the weights'
            shape, or 3-D while x is 3-D.
    """
    x = _as_finite_array("x", x)
    if x.ndim not in (2, 3):
        raise ValueError(
            f"x must have shape (seq_len, d_model) or (batch, seq_len, d_model), got {x.shape}"
        )
    seq_len, d_model = x.shape[-2:]
    if isinstance(n_heads, (bool, np.bool_)) or not isinstance(n_heads, numbers.Integral):
        raise ValueError(f"n_heads must be an int >= 1, got {n_heads!r}")
    if n_heads < 1:
        raise ValueError(f"n_heads must be an int >= 1, got {n_heads}")
    if d_model % n_heads != 0:
        raise ValueError(f"n_heads must divide d_model: d_model={d_model}, n_heads={n_heads}")
    n_heads = int(n_heads)
    d_head = d_model // n_heads
    lead = x.shape[:-2]  # () or (batch,)

    def weight(name, W):
        W = _as_finite_array(name, W)
        if W.shape != (d_model, d_model):
            raise ValueError(
                f"{name} must have shape (d_model, d_model) = ({d_model}, {d_model}), got {W.shape}"
            )
        return W

    def bias(name, b):
        if b is None:
            return np.zeros(d_model)
        b = _as_finite_array(name, b)
        if b.shape != (d_model,):
            raise ValueError(f"{name} must have shape (d_model,) = ({d_model},), got {b.shape}")
        return b

    W_Q, W_K, W_V, W_O = (
        weight(n, W) for n, W in (("W_Q", W_Q), ("W_K", W_K), ("W_V", W_V), ("W_O", W_O))
    )
    b_Q, b_K, b_V, b_O = (
        bias(n, b) for n, b in (("b_Q", b_Q), ("b_K", b_K), ("b_V", b_V), ("b_O", b_O))
    )
    if mask is not None and x.ndim == 3 and np.ndim(mask) == 3:
        raise ValueError(
            "mask for batched x must be (seq_len, seq_len) or 4-D, e.g. "
            f"(batch, 1, seq_len, seq_len); got a 3-D mask of shape {np.shape(mask)}"
        )

    def split_heads(t):  # (..., seq_len, d_model) -> (..., n_heads, seq_len, d_head)
        t = t.reshape(*lead, seq_len, n_heads, d_head)  # (..., seq_len, n_heads, d_head)
        return np.swapaxes(t, -3, -2)  # (..., n_heads, seq_len, d_head)

    q = split_heads(matmul(x, W_Q) + b_Q)  # (..., n_heads, seq_len, d_head)
    k = split_heads(matmul(x, W_K) + b_K)  # (..., n_heads, seq_len, d_head)
    v = split_heads(matmul(x, W_V) + b_V)  # (..., n_heads, seq_len, d_head)
    heads, weights = scaled_dot_product_attention(q, k, v, mask=mask)
    # heads: (..., n_heads, seq_len, d_head); weights: (..., n_heads, seq_len, seq_len)
    concat = np.swapaxes(heads, -3, -2).reshape(*lead, seq_len, d_model)  # (..., seq_len, d_model)
    output = matmul(concat, W_O) + b_O  # (..., seq_len, d_model)
    return output, weights


def entropy_bits(weights, axis=-1):
    """Shannon entropy of each attention row, in bits: H = -sum_j p_j log2 p_j.

    Shannon 1948, "A Mathematical Theory of Communication", Bell System
    Technical Journal 27, section 6. Uses the convention 0 log 0 = 0. A
    one-hot row (attention on a single key) has H = 0; a uniform row over n
    keys has H = log2(n), the maximum. An all-zero row (a fully masked
    query, see `softmax`) gives 0. Rows are not renormalised: pass
    probability distributions.

    Args:
        weights: array-like of non-negative finite numbers, ndim >= 1.
        axis: the axis holding each distribution (default -1: the keys).

    Returns:
        float64 array of weights' shape with `axis` removed (a NumPy float64
        scalar for 1-D input).

    Raises:
        ValueError: weights are not real, are 0-D, contain NaN/inf or negative
            entries; axis is not an int in range.
    """
    p = _as_finite_array("weights", weights, min_ndim=1)
    axis = _check_axis(axis, p.ndim)
    if np.any(p < 0):
        raise ValueError("weights must be non-negative (probabilities)")
    log2p = np.log2(p, out=np.zeros_like(p), where=p > 0)  # 0 where p == 0
    return -np.sum(p * log2p, axis=axis) + 0.0  # + 0.0 turns -0.0 into 0.0


def _check_count(name, value, minimum):
    """Return `value` as an int >= `minimum`, or raise ValueError naming `name`."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an int >= {minimum}, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {value}")
    return int(value)


def padding_mask(lengths, seq_len):
    """Boolean key-padding mask for a batch of sentences padded to one length.

    Sentence b has ``lengths[b]`` real tokens followed by padding up to
    ``seq_len``. Key j of sentence b may be attended to only if it is a real
    token, j < lengths[b]; pad keys are hidden from every query. This is the
    ``attention_mask`` of BERT-style models (Devlin et al. 2019, NAACL; 1 for a
    real token, 0 for padding), with True for 1.

    Args:
        lengths: 1-D sequence of ints, each 0 <= lengths[b] <= seq_len (a
            length of 0 hides every key: its rows are fully masked, and
            `softmax` gives them all-zero weights).
        seq_len: int >= 1, the padded length.

    Returns:
        bool array of shape (batch, seq_len), True = a real token (may be
        attended to). To mask a batch of logits (batch, seq_q, seq_k) index it
        as ``mask[:, None, :]`` (the same keys hidden from every query); for
        (batch, n_heads, seq_q, seq_k) use ``mask[:, None, None, :]``.
        torch.nn.MultiheadAttention's ``key_padding_mask`` is its negation
        (True = ignore).

    Raises:
        ValueError: seq_len is not an int >= 1; lengths is not a 1-D sequence
            of ints, or one is below 0 or above seq_len.
    """
    seq_len = _check_count("seq_len", seq_len, 1)
    arr = np.asarray(lengths)
    if arr.ndim != 1:
        raise ValueError(f"lengths must be a 1-D sequence of ints, got shape {arr.shape}")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"lengths must hold ints, got dtype {arr.dtype}")
    arr = arr.astype(np.int64)
    bad = (arr < 0) | (arr > seq_len)
    if np.any(bad):
        raise ValueError(
            f"each length must be from 0 to seq_len = {seq_len}, got {int(arr[bad][0])}"
        )
    return np.arange(seq_len) < arr[:, None]  # (batch, seq_len)


def sliding_window_mask(seq_len, window):
    """Boolean causal sliding-window mask: each query sees itself and the
    ``window - 1`` keys before it.

    Query i may attend to key j only if i - window < j <= i. A window of 1 is
    attention to oneself only; a window >= seq_len is `causal_mask`. The
    number of visible entries grows linearly with seq_len (at most
    seq_len * window), not quadratically. Local windows: Child et al. 2019
    ("Generating Long Sequences with Sparse Transformers", arXiv:1904.10509),
    Beltagy et al. 2020 ("Longformer", arXiv:2004.05150; a window around each
    token in an encoder); this causal form is the one of Mistral 7B (Jiang et
    al. 2023, arXiv:2310.06825).

    Args:
        seq_len: int >= 1.
        window: int >= 1, how many keys (itself included) each query sees.

    Returns:
        bool array of shape (seq_len, seq_len), indexed [query, key].

    Raises:
        ValueError: seq_len or window is not an int >= 1.
    """
    seq_len = _check_count("seq_len", seq_len, 1)
    window = _check_count("window", window, 1)
    offset = np.arange(seq_len)[:, None] - np.arange(seq_len)[None, :]  # i - j
    return (offset >= 0) & (offset < window)  # (seq_len, seq_len)


def _check_base(base):
    """Return `base` as a float > 1, or raise ValueError naming it."""
    if isinstance(base, (bool, np.bool_)) or not isinstance(base, numbers.Real):
        raise ValueError(f"base must be a number > 1, got {base!r}")
    base = float(base)
    if not (math.isfinite(base) and base > 1):
        raise ValueError(f"base must be a finite number > 1, got {base}")
    return base


def _check_even_width(name, width):
    if isinstance(width, (bool, np.bool_)) or not isinstance(width, numbers.Integral):
        raise ValueError(f"{name} must be an even int >= 2, got {width!r}")
    if width < 2 or width % 2:
        raise ValueError(f"{name} must be an even int >= 2, got {width}")
    return int(width)


def sinusoidal_positions(positions, d_model, base=10000.0):
    """The fixed sinusoidal position encodings of Vaswani et al. 2017 (section 3.5).

    Dimension pair i (columns 2i and 2i + 1) holds a sine and a cosine of the position
    at the angular frequency ``base ** (-2i / d_model)``, so the wavelengths run from
    2 pi (pair 0) to almost ``2 pi * base`` (the last pair):

        PE[p, 2i] = sin(p / base^(2i / d_model)),  PE[p, 2i+1] = cos(p / base^(2i / d_model)).

    Args:
        positions: 1-D array-like of finite numbers (usually 0, 1, ..., seq_len - 1).
        d_model: even int >= 2, the width of each encoding.
        base: finite number > 1 (10000 in the paper).

    Returns:
        float64 array of shape (len(positions), d_model); row p is position p's encoding,
        to be added to that token's embedding.

    Raises:
        ValueError: positions is not 1-D or not finite; d_model is not an even int >= 2;
            base is not a finite number > 1.
    """
    pos = _as_finite_array("positions", positions)
    if pos.ndim != 1:
        raise ValueError(f"positions must be 1-D, got shape {pos.shape}")
    d_model = _check_even_width("d_model", d_model)
    angles = pos[:, None] * rope_frequencies(d_model, base)[None, :]  # (n, d_model / 2)
    out = np.empty((pos.shape[0], d_model))
    out[:, 0::2] = np.sin(angles)
    out[:, 1::2] = np.cos(angles)
    return out


def rope_frequencies(d_head, base=10000.0):
    """The angular frequencies theta_i = base^(-2i / d_head), i = 0 .. d_head / 2 - 1.

    One per pair of dimensions: rotary embeddings turn pair i by ``position * theta_i``
    radians (Su et al. 2021, eq. 15); the sinusoidal encodings use the same frequencies.

    Returns:
        float64 array of shape (d_head // 2,), from 1 down to base^(-(d_head - 2) / d_head).

    Raises:
        ValueError: d_head is not an even int >= 2; base is not a finite number > 1.
    """
    d_head = _check_even_width("d_head", d_head)
    base = _check_base(base)
    return base ** (-np.arange(0, d_head, 2) / d_head)


def apply_rope(x, positions, base=10000.0):
    """Rotary position embedding (RoPE): rotate each pair of dimensions of `x` by an
    angle proportional to its position.

    Pair i of a vector at position m, the components (2i, 2i + 1), is turned by the angle
    ``m * theta_i`` (theta from :func:`rope_frequencies`). Rotations preserve lengths, and
    rotating a query by m and a key by n leaves their dot product a function of m - n
    only: ``apply_rope(q, m) . apply_rope(k, n) = q . apply_rope(k, n - m)``. Applied to
    queries and keys (never to values), after W_Q and W_K. Source: Su et al. 2021,
    "RoFormer: Enhanced Transformer with Rotary Position Embedding", arXiv:2104.09864,
    eq. 34 (adjacent pairs). Hugging Face's Llama pairs dimension j with j + d_head / 2
    instead (``rotate_half``): the same rotation with the dimensions in another order.

    Args:
        x: array of shape (..., d_head), d_head even; e.g. (seq_len, d_head) queries.
        positions: finite numbers broadcastable to x.shape[:-1] (e.g. shape (seq_len,)).
        base: finite number > 1 (10000 in the paper and in Llama 2).

    Returns:
        float64 array of the shape of `x`.

    Raises:
        ValueError: x has no last axis of even length >= 2, or is not finite; positions
            are not finite or do not broadcast; base is not a finite number > 1.
    """
    x = _as_finite_array("x", x, min_ndim=1)
    d_head = x.shape[-1]
    if d_head < 2 or d_head % 2:
        raise ValueError(f"x's last axis (d_head) must have even length >= 2, got {d_head}")
    pos = _as_finite_array("positions", positions)
    try:
        pos = np.broadcast_to(pos, x.shape[:-1])
    except ValueError:
        raise ValueError(
            f"positions of shape {pos.shape} do not broadcast to x's leading shape {x.shape[:-1]}"
        ) from None
    angles = pos[..., None] * rope_frequencies(d_head, base)  # (..., d_head / 2)
    cos, sin = np.cos(angles), np.sin(angles)
    even, odd = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = even * cos - odd * sin
    out[..., 1::2] = even * sin + odd * cos
    return out


def cross_attention(x, source, W_Q, W_K, W_V, W_O=None, n_heads=1, source_mask=None, mask=None):
    """Cross-attention: queries from `x`, keys and values from `source`.

    The encoder-decoder attention of Vaswani et al. 2017 ("Attention Is All You
    Need", NeurIPS, section 3.2.3): each position of the target sequence `x`
    (the decoder) reads the source sequence (the encoder's output). The same
    scaled dot-product attention as self-attention, with Q = x W_Q but
    K = source W_K and V = source W_V, so the weights are rectangular,
    (seq_q, seq_k), indexed [query, key]. Self-attention is the special case
    ``source = x``. K and V depend only on the source: a decoder computes them
    once and reuses them for every target token it generates.

    Row-vector convention (x @ W). torch.nn.MultiheadAttention(embed_dim,
    n_heads, kdim=d_kv, vdim=d_kv) computes the same thing with the
    transposes of these matrices as its q/k/v_proj_weight and out_proj.

    Args:
        x: target (seq_q, d_q) or (batch, seq_q, d_q), real and finite.
        source: (seq_k, d_kv) or (batch, seq_k, d_kv), with x's batch if any.
        W_Q: (d_q, n_heads * d_head). W_K: (d_kv, n_heads * d_head).
        W_V: (d_kv, n_heads * d_v).
        W_O: optional (n_heads * d_v, d_out); without it the output is the
            heads' outputs concatenated, (..., seq_q, n_heads * d_v).
        n_heads: int >= 1 dividing the widths of W_Q, W_K and W_V.
        source_mask: optional boolean (seq_k,) or (batch, seq_k), True = a
            real source token (e.g. `padding_mask(lengths, seq_k)`); pad keys
            get weight exactly 0 from every query. A source with no real token
            gives all-zero weights and a zero output (see `softmax`).
        mask: optional boolean, broadcastable to (seq_q, seq_k) (or to the
            weights' shape), True = may attend, combined with source_mask.

    Returns:
        (output, weights), float64: output (..., seq_q, d_out or n_heads * d_v);
        weights (..., n_heads, seq_q, seq_k), rows summing to 1 (0 if empty).

    Raises:
        ValueError: x or source not 2-D/3-D, not real, NaN/inf, or their batch
            sizes differ; a W of the wrong shape; n_heads not an int >= 1 or
            not dividing the projection widths; a mask not boolean or of the
            wrong shape.
    """
    x = _as_finite_array("x", x)
    source = _as_finite_array("source", source)
    if x.ndim not in (2, 3):
        raise ValueError(f"x must have shape (seq_q, d_q) or (batch, seq_q, d_q), got {x.shape}")
    if source.ndim != x.ndim or source.shape[:-2] != x.shape[:-2]:
        want = "(batch, seq_k, d_kv), with x's batch" if x.ndim == 3 else "(seq_k, d_kv)"
        raise ValueError(f"source must have shape {want} (x is {x.shape}), got {source.shape}")
    if isinstance(n_heads, (bool, np.bool_)) or not isinstance(n_heads, numbers.Integral):
        raise ValueError(f"n_heads must be an int >= 1, got {n_heads!r}")
    if n_heads < 1:
        raise ValueError(f"n_heads must be an int >= 1, got {n_heads}")
    n_heads = int(n_heads)
    lead = x.shape[:-2]  # () or (batch,)
    seq_q, d_q = x.shape[-2:]
    seq_k, d_kv = source.shape[-2:]

    def weight(name, W, rows):
        W = _as_finite_array(name, W)
        if W.ndim != 2 or W.shape[0] != rows:
            raise ValueError(f"{name} must have shape ({rows}, width), got {W.shape}")
        if W.shape[1] == 0 or W.shape[1] % n_heads:
            raise ValueError(
                f"n_heads = {n_heads} must divide the width of {name}, got {W.shape[1]}"
            )
        return W

    W_Q, W_K, W_V = weight("W_Q", W_Q, d_q), weight("W_K", W_K, d_kv), weight("W_V", W_V, d_kv)
    if W_K.shape[1] != W_Q.shape[1]:
        raise ValueError(
            f"W_K must have the width of W_Q (n_heads * d_head = {W_Q.shape[1]}), "
            f"got {W_K.shape[1]}"
        )

    def split(t):  # (..., seq, n_heads * d) -> (..., n_heads, seq, d)
        t = t.reshape(*t.shape[:-1], n_heads, t.shape[-1] // n_heads)
        return np.swapaxes(t, -3, -2)

    q = split(matmul(x, W_Q))  # (..., n_heads, seq_q, d_head)
    k = split(matmul(source, W_K))  # (..., n_heads, seq_k, d_head): once per source
    v = split(matmul(source, W_V))  # (..., n_heads, seq_k, d_v)
    shape = (*lead, n_heads, seq_q, seq_k)
    allowed = np.ones(shape, dtype=bool)
    if source_mask is not None:
        sm = np.asarray(source_mask)
        if sm.dtype != np.bool_ or sm.shape != (*lead, seq_k):
            raise ValueError(
                f"source_mask must be a boolean array of shape {(*lead, seq_k)} "
                f"(True = a real source token), got {sm.dtype} {sm.shape}"
            )
        allowed = allowed & sm[..., None, None, :]  # the same keys for every query
    if mask is not None:
        allowed = allowed & _as_bool_mask("mask", mask, shape)
    heads, weights = scaled_dot_product_attention(q, k, v, mask=allowed)
    concat = np.swapaxes(heads, -3, -2).reshape(*lead, seq_q, -1)  # (..., seq_q, n_heads*d_v)
    if W_O is None:
        return concat, weights
    W_O = _as_finite_array("W_O", W_O)
    if W_O.ndim != 2 or W_O.shape[0] != concat.shape[-1]:
        raise ValueError(
            f"W_O must have shape ({concat.shape[-1]}, d_out) (n_heads * d_v rows), got {W_O.shape}"
        )
    return matmul(concat, W_O), weights
