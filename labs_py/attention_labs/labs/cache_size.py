"""Lab: how many bytes a decoder's key/value cache takes, for MHA, GQA and MQA.

Generating with a cache keeps, for every layer and every key/value head, one key row and
one value row of d_head numbers per token of the context:

    bytes = 2 x n_layers x n_kv_heads x d_head x seq_len x bytes_per_number

(2: keys and values). With multi-head attention (MHA) n_kv_heads = n_heads; multi-query
attention (MQA, Shazeer 2019, arXiv:1911.02150) keeps one key/value head for all query
heads; grouped-query attention (GQA, Ainslie et al. 2023, EMNLP) keeps n_kv_heads, a
divisor of n_heads, each shared by a group of n_heads / n_kv_heads query heads.

The models are the decoder presets of the parameter calculator (param_calculator.PRESETS:
n_layers, n_heads, d_model, n_kv_heads; d_head = d_model / n_heads). BERT-base is left out:
it is an encoder and does not generate, so it keeps no cache. Counts are exact Python ints
for one sequence (a batch of B sequences needs B times as much); "kB", "MB", "GB" are
powers of 1000.
"""

from __future__ import annotations

from ..params import LabParameterError, Param
from .param_calculator import PRESETS, count

DECODERS = tuple(name for name in PRESETS if name != "bert-base")  # encoders keep no cache
DTYPES = {"fp32": 4, "fp16": 2, "bf16": 2, "int8": 1}  # bytes per number
SHARING = ("mha", "gqa", "mqa")

SCHEMA = (
    Param(
        "preset",
        "choice",
        "llama2-70b",
        "A published decoder (its n_layers, n_heads and d_head).",
        choices=DECODERS,
        labels={k: PRESETS[k]["label"] for k in DECODERS},
    ),
    Param(
        "sharing",
        "choice",
        "gqa",
        "MHA: a key/value head per query head; GQA: n_kv_heads groups; MQA: one.",
        choices=SHARING,
        labels={
            "mha": "MHA (every query head has its own)",
            "gqa": "GQA (groups share one)",
            "mqa": "MQA (all share one)",
        },
    ),
    Param(
        "n_kv_heads",
        "integer",
        8,
        "Key/value heads with GQA (must divide n_heads).",
        1,
        512,
    ),
    Param("seq_len", "integer", 4096, "Tokens in the cache (the context length).", 1, 2**19),
    Param(
        "dtype",
        "choice",
        "fp16",
        "Number format of the cache.",
        choices=tuple(DTYPES),
        labels={
            "fp32": "fp32 (4 bytes)",
            "fp16": "fp16 (2 bytes)",
            "bf16": "bf16 (2 bytes)",
            "int8": "int8 (1 byte)",
        },
    ),
)

# The heaviest settings (`make bench`): the count is arithmetic, so any will do.
LARGEST = {"preset": "gpt3-175b", "sharing": "mha", "seq_len": 2**19, "dtype": "fp32"}

UNITS = ((1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB"))


def readable_bytes(n: int) -> str:
    """``n`` bytes with a decimal unit and three significant figures: 1342177280 -> '1.34 GB'."""
    for size, unit in UNITS:
        if n >= size:
            v = n / size
            # Rounding may carry to the next unit's size (999.96 MB is 1.00 GB).
            digits = 2 if v < 10 else 1 if v < 100 else 0
            if round(v, digits) >= 1000 and unit != "TB":
                return readable_bytes(int(1000 * size))
            return f"{v:.{digits}f} {unit}"
    return f"{n} B"


def cache_bytes(n_layers: int, n_kv_heads: int, d_head: int, seq_len: int, dtype: str) -> int:
    """2 x n_layers x n_kv_heads x d_head x seq_len x bytes per number (exact int)."""
    return 2 * n_layers * n_kv_heads * d_head * seq_len * DTYPES[dtype]


def divisors(n: int) -> list[int]:
    """The divisors of ``n``, ascending: the n_kv_heads that GQA allows."""
    return [k for k in range(1, n + 1) if n % k == 0]


def kv_heads(preset: dict, sharing: str, n_kv_heads: int) -> int:
    """The key/value heads of ``sharing``; LabParameterError naming n_kv_heads for a GQA
    count that does not divide n_heads."""
    h = preset["n_heads"]
    if sharing == "mha":
        return h
    if sharing == "mqa":
        return 1
    if h % n_kv_heads or n_kv_heads > h:
        raise LabParameterError(
            "n_kv_heads",
            f"n_kv_heads must divide n_heads ({h}) of {preset['label']}: one of "
            f"{', '.join(map(str, divisors(h)))}, got {n_kv_heads}",
        )
    return n_kv_heads


def compute(params: dict) -> dict:
    """The lab's result for validated ``params`` (see :data:`SCHEMA`).

    ``bytes`` (exact) and ``readable`` for the chosen sharing, with the numbers of the
    formula (``n_layers``, ``n_kv_heads``, ``d_head``, ``seq_len``, ``bytes_per_number``);
    ``per_token`` bytes; ``weights_bytes`` the model's parameters in the same dtype;
    ``compare``: MHA, the chosen GQA (when GQA is chosen) and MQA, each with its
    ``n_kv_heads`` and ``bytes``; ``kv_choices`` the divisors of n_heads; ``context`` the
    model's published context length and ``context_note`` a sentence when ``seq_len``
    exceeds it (else None); ``presets`` each decoder's n_heads, published n_kv_heads and
    context (for the widget's preset change).
    """
    name = params["preset"]
    preset = PRESETS[name]
    n_layers, n_heads = preset["n_layers"], preset["n_heads"]
    d_head = preset["d_model"] // n_heads
    sharing, dtype, seq_len = params["sharing"], params["dtype"], params["seq_len"]
    n_kv = kv_heads(preset, sharing, params["n_kv_heads"])
    total = cache_bytes(n_layers, n_kv, d_head, seq_len, dtype)
    compare = [("mha", "MHA", n_heads)]
    if sharing == "gqa":
        compare.append(("gqa", "GQA", n_kv))
    compare.append(("mqa", "MQA", 1))
    context = preset["context"]
    note = None
    if seq_len > context:
        note = (
            f"{preset['label']}'s context is at most {context:,d} tokens: a cache of "
            f"{seq_len:,d} tokens is hypothetical for it."
        )
    weights = count({k: v for k, v in preset.items() if k != "label"})["total"]
    return {
        "preset": name,
        "label": preset["label"],
        "sharing": sharing,
        "dtype": dtype,
        "n_layers": n_layers,
        "n_heads": n_heads,
        "n_kv_heads": n_kv,
        "published_kv_heads": preset["n_kv_heads"],
        "group": n_heads // n_kv,
        "d_head": d_head,
        "seq_len": seq_len,
        "bytes_per_number": DTYPES[dtype],
        "bytes": total,
        "readable": readable_bytes(total),
        "per_token": total // seq_len,
        "per_token_readable": readable_bytes(total // seq_len),
        "weights_bytes": weights * DTYPES[dtype],
        "weights_readable": readable_bytes(weights * DTYPES[dtype]),
        "compare": [
            {
                "name": key,
                "label": f"{label} ({kv} key/value head{'s' if kv > 1 else ''})",
                "n_kv_heads": kv,
                "bytes": cache_bytes(n_layers, kv, d_head, seq_len, dtype),
                "readable": readable_bytes(cache_bytes(n_layers, kv, d_head, seq_len, dtype)),
            }
            for key, label, kv in compare
        ],
        "kv_choices": divisors(n_heads),
        "context": context,
        "context_note": note,
        "presets": {
            k: {
                "n_heads": PRESETS[k]["n_heads"],
                "n_kv_heads": PRESETS[k]["n_kv_heads"],
                "context": PRESETS[k]["context"],
            }
            for k in DECODERS
        },
    }
