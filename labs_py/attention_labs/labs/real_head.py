"""Lab: recompute one real head's attention pattern from its exported queries and keys.

The precomputed assets (docs/assets/attention/, see :mod:`..real_maps`) carry, for a few
heads, the model's own query and key vectors ``q``, ``k`` of shape (seq_len, d_head) as
base64 little-endian float32. This lab runs them through the same attention math as every
other lab -- logits ``q k^T / sqrt(d_head) / temperature``, an optional causal mask, a
softmax over keys (Vaswani et al. 2017, "Attention Is All You Need", eq. 1) -- so the reader
can switch the scaling off, change the temperature or the mask and see how the real head
changes.

With ``scale`` on, ``temperature`` 1 and the model's own mask the result is the model's
pattern: pass the stored head (``stored``, the asset's ``attention.data[layer][head]``)
and ``stored_max_abs_diff`` reports the largest difference, at most 1/255 (the stored
weights are rounded to bytes) plus float32 rounding of q and k.
"""

from __future__ import annotations

import base64
import math

import numpy as np

from ..attention import attention_logits, causal_mask, entropy_bits, softmax
from ..params import LabParameterError, Param
from ..real_maps import decode_vectors, pack_vectors, stored_count, unpack_head

MAX_SEQ_LEN = 64  # the asset format's cap (asset.schema.json: seq_len <= 64)
MAX_D_HEAD = 256


def _base64_chars(n_bytes: int) -> int:
    return 4 * math.ceil(n_bytes / 3)


# A tiny hand-made head, so the lab runs with its defaults (tests, a fence without data):
# "cat" and "sat" share a direction, "The" points elsewhere. The explorer passes real heads.
_EXAMPLE_TOKENS = ["The", "cat", "sat"]
_EXAMPLE_Q = np.array([[1.0, 0.0, 0.0, 0.5], [0.0, 2.0, 1.0, 0.0], [0.0, 1.5, 2.0, 0.0]])
_EXAMPLE_K = np.array([[2.0, 0.0, 0.0, 0.0], [0.0, 2.0, 0.5, 0.0], [0.0, 1.0, 2.0, 0.5]])

SCHEMA = (
    Param(
        "tokens",
        "tokens",
        list(_EXAMPLE_TOKENS),
        "The model's tokens as displayed, one per query and key.",
        max_items=MAX_SEQ_LEN,
        max_chars=64,
    ),
    Param(
        "q",
        "base64",
        pack_vectors(_EXAMPLE_Q),
        "Queries: (seq_len, d_head) little-endian float32, row-major, base64.",
        max_chars=_base64_chars(4 * MAX_SEQ_LEN * MAX_D_HEAD),
    ),
    Param(
        "k",
        "base64",
        pack_vectors(_EXAMPLE_K),
        "Keys: (seq_len, d_head) little-endian float32, row-major, base64.",
        max_chars=_base64_chars(4 * MAX_SEQ_LEN * MAX_D_HEAD),
    ),
    Param("d_head", "integer", 4, "Width of each query and key vector.", 1, MAX_D_HEAD),
    Param("scale", "boolean", True, "Divide the logits by sqrt(d_head)."),
    Param("temperature", "number", 1.0, "Divides the logits before softmax.", 0.05, 10.0),
    Param("causal", "boolean", False, "Hide later keys from each query (causal mask)."),
    Param(
        "stored",
        "base64",
        "",
        "Optional: the model's stored weights of this head (uint8 / 255, the asset's "
        "attention.data[layer][head]; full or lower-triangle layout), to compare with.",
        max_chars=_base64_chars(MAX_SEQ_LEN * MAX_SEQ_LEN),
    ),
)

# The heaviest settings the schema allows, for `make bench` (build_scripts/bench/bench_labs.py):
# the asset format's longest sentence, the widest head, the stored weights to compare with.
_LARGEST_Q = np.random.default_rng(0).standard_normal((MAX_SEQ_LEN, MAX_D_HEAD))
LARGEST = {
    "tokens": [f"t{i}" for i in range(MAX_SEQ_LEN)],
    "q": pack_vectors(_LARGEST_Q),
    "k": pack_vectors(_LARGEST_Q[::-1]),
    "d_head": MAX_D_HEAD,
    "stored": base64.b64encode(bytes(MAX_SEQ_LEN * MAX_SEQ_LEN)).decode("ascii"),
}


def _vectors(params: dict, name: str, seq_len: int) -> np.ndarray:
    d_head = params["d_head"]
    try:
        x = decode_vectors(params[name], seq_len, d_head)  # (seq_len, d_head)
    except ValueError:
        got = len(base64.b64decode(params[name]))
        raise LabParameterError(
            name,
            f"{name} must hold seq_len x d_head = {seq_len} x {d_head} float32 values "
            f"({4 * seq_len * d_head} bytes, one row per token); got {got} bytes",
        ) from None
    if not np.all(np.isfinite(x)):
        raise LabParameterError(name, f"{name} must hold finite numbers; it has NaN or infinity")
    return x


def _stored(data: str, seq_len: int) -> np.ndarray | None:
    """The stored head as (seq_len, seq_len) weights, or None when not given. The layout
    follows from the byte count (seq_len² full, seq_len (seq_len + 1) / 2 causal)."""
    if not data:
        return None
    got = len(base64.b64decode(data))
    for causal in (False, True):
        if got == stored_count(seq_len, causal):
            return unpack_head(data, seq_len, causal)
    raise LabParameterError(
        "stored",
        f"stored must hold one byte per weight of a {seq_len}-token head: "
        f"{stored_count(seq_len, False)} bytes (full) or {stored_count(seq_len, True)} "
        f"(lower triangle); got {got} bytes",
    )


def compute(params: dict) -> dict:
    """The lab's result for validated ``params`` (see :data:`SCHEMA`).

    Returns ``tokens``; ``logits`` and ``weights`` as (seq_len, seq_len) float64 arrays
    indexed [query, key] (masked logits are -inf, their weights exactly 0); per query
    ``entropy_bits``, ``max_entropy_bits`` (log2 of the number of visible keys) and
    ``top_key`` (index of the largest weight, the earliest on ties), as the
    attention_pattern lab; ``mean_entropy_bits`` (a float) and ``stored_max_abs_diff``:
    max |weights - stored| over all cells, or None when ``stored`` is empty.

    Raises :class:`..params.LabParameterError` naming ``q``, ``k`` or ``stored`` when
    their byte count does not fit seq_len (the number of tokens) and d_head.
    """
    tokens = params["tokens"]
    seq_len = len(tokens)
    Q = _vectors(params, "q", seq_len)  # (seq_len, d_head)
    K = _vectors(params, "k", seq_len)  # (seq_len, d_head)
    stored = _stored(params["stored"], seq_len)  # (seq_len, seq_len) or None
    # float32 inputs cannot overflow float64 logits (|q.k| < 256 * 3.5e38**2), so the
    # math's own checks cannot fail here.
    logits = attention_logits(Q, K, scale=params["scale"], temperature=params["temperature"])
    mask = causal_mask(seq_len) if params["causal"] else np.ones((seq_len, seq_len), bool)
    weights = softmax(logits, where=mask)  # (seq_len, seq_len), rows sum to 1
    entropy = entropy_bits(weights)  # (seq_len,)
    return {
        "tokens": list(tokens),
        "logits": np.where(mask, logits, -np.inf),
        "weights": weights,
        "entropy_bits": entropy,
        "max_entropy_bits": np.log2(mask.sum(axis=-1)),
        "top_key": weights.argmax(axis=-1),
        "mean_entropy_bits": float(entropy.mean()),
        "stored_max_abs_diff": None if stored is None else float(np.abs(weights - stored).max()),
    }
