"""Lab: how many bytes a decoder's key/value cache takes, for MHA, GQA and MQA.

Generating with a cache keeps, for every layer and every key/value head, one key row and
one value row of d_head numbers per token of the context:

    bytes = 2 x n_layers x n_kv_heads x d_head x seq_len x bytes_per_number

(2: keys and values). With multi-head attention (MHA) n_kv_heads = n_heads; multi-query
attention (MQA, Shazeer 2019, arXiv:1911.02150) keeps one key/value head for all query
heads; grouped-query attention (GQA, Ainslie et al. 2023, EMNLP) keeps n_kv_heads, a
divisor of n_heads, each shared by a group of n_heads / n_kv_heads query heads.

A sliding window caps the cache. With sliding-window attention of ``window`` keys no query
reads further back than the last ``window`` tokens, so each layer keeps only those, in a
rolling buffer where a new token's entry overwrites the oldest (Mistral 7B: window 4,096,
Jiang et al. 2023, arXiv:2310.06825, section 2 and Table 1): the cache holds
min(seq_len, window) tokens per layer, and seq_len in the formula becomes that.

The models are the decoder presets of the parameter calculator (param_calculator.PRESETS:
n_layers, n_heads, d_model, n_kv_heads, context, window; d_head = d_model / n_heads; the
sources of their numbers are in that module's docstring): GPT-2 small to XL, GPT-3 175B,
Llama-2-7B and 70B, Mistral-7B and Llama-3-8B. BERT-base is left out: it is an encoder and
does not generate, so it keeps no cache. "custom" is the reader's own model: n_layers,
n_heads, d_head and, with GQA, n_kv_heads. Counts are exact Python ints for one sequence (a
batch of B sequences needs B times as much); "kB", "MB", "GB" are powers of 1000.
"""

from __future__ import annotations

from ..params import LabParameterError, Param
from ..static import Table, Text, plural
from .param_calculator import PRESETS, count, spec_of

DECODERS = tuple(name for name in PRESETS if name != "bert-base")  # encoders keep no cache
CUSTOM_LABEL = "Your own model"
DTYPES = {"fp32": 4, "fp16": 2, "bf16": 2, "int8": 1}  # bytes per number
SHARING = ("mha", "gqa", "mqa")

SCHEMA = (
    Param(
        "preset",
        "choice",
        "llama2-70b",
        "A published decoder (its n_layers, n_heads and d_head), or custom: the fields below.",
        choices=(*DECODERS, "custom"),
        labels={**{k: PRESETS[k]["label"] for k in DECODERS}, "custom": CUSTOM_LABEL},
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
    Param(
        "sliding", "boolean", False, "Sliding-window attention: the cache keeps `window` tokens."
    ),
    Param(
        "window",
        "integer",
        4096,
        "Sliding window, in tokens: the most keys a query reads (with sliding on).",
        1,
        2**19,
    ),
    # The reader's own model (preset "custom"); the published models ignore these.
    Param("n_layers", "integer", 80, "Layers of your own model.", 1, 256),
    Param("n_heads", "integer", 64, "Query heads per layer of your own model.", 1, 512),
    Param("d_head", "integer", 128, "Width of one head of your own model.", 1, 1024),
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
    """The key/value heads of ``sharing`` for ``preset`` ({label, n_heads}); LabParameterError
    naming n_kv_heads for a GQA count that does not divide n_heads."""
    h = preset["n_heads"]
    if sharing == "mha":
        return h
    if sharing == "mqa":
        return 1
    if h % n_kv_heads or n_kv_heads > h:
        who = "your own model" if preset["label"] == CUSTOM_LABEL else preset["label"]
        raise LabParameterError(
            "n_kv_heads",
            f"n_kv_heads must divide n_heads ({h}) of {who}: one of "
            f"{', '.join(map(str, divisors(h)))}, got {n_kv_heads}",
        )
    return n_kv_heads


def model_of(params: dict) -> dict:
    """The model whose cache is counted: {label, n_layers, n_heads, d_head, published
    n_kv_heads, context, window} of a preset, or the reader's fields for "custom" (its
    published n_kv_heads is the one asked for; no context, no window of its own)."""
    name = params["preset"]
    if name == "custom":
        return {
            "label": CUSTOM_LABEL,
            "n_layers": params["n_layers"],
            "n_heads": params["n_heads"],
            "d_head": params["d_head"],
            "n_kv_heads": params["n_kv_heads"],
            "context": None,
            "window": None,
        }
    p = PRESETS[name]
    return {
        "label": p["label"],
        "n_layers": p["n_layers"],
        "n_heads": p["n_heads"],
        "d_head": p["d_model"] // p["n_heads"],
        "n_kv_heads": p["n_kv_heads"],
        "context": p["context"],
        "window": p["window"],
    }


def cached_tokens(seq_len: int, window: int | None) -> int:
    """Tokens each layer's cache holds: all ``seq_len``, or the last ``window`` of them."""
    return seq_len if window is None else min(seq_len, window)


def compute(params: dict) -> dict:
    """The lab's result for validated ``params`` (see :data:`SCHEMA`).

    ``bytes`` (exact) and ``readable`` for the chosen sharing, with the numbers of the
    formula (``n_layers``, ``n_kv_heads``, ``d_head``, ``cached_tokens``,
    ``bytes_per_number``); ``cached_tokens`` is ``seq_len``, or min(seq_len, ``window``)
    when ``sliding`` is on (``capped``: the window is what limits it); ``per_token``
    bytes per cached token; ``weights_bytes`` the model's parameters in the same dtype
    (None for a custom model, which gives no d_model or d_ff); ``compare``: MHA, the chosen
    GQA (when GQA is chosen) and MQA, each with its ``n_kv_heads`` and ``bytes``;
    ``kv_choices`` the divisors of n_heads; ``context`` the model's published context
    length (None for a custom model) and ``context_note`` a sentence when ``seq_len``
    exceeds it (else None); ``window_note`` a sentence when the window caps the cache;
    ``presets`` each decoder's n_layers, n_heads, d_head, published n_kv_heads, context and
    window (None: no sliding window), for the widget's preset change. Raises
    LabParameterError naming ``n_kv_heads`` when GQA's n_kv_heads does not divide n_heads.
    """
    name = params["preset"]
    model = model_of(params)
    n_layers, n_heads, d_head = model["n_layers"], model["n_heads"], model["d_head"]
    sharing, dtype, seq_len = params["sharing"], params["dtype"], params["seq_len"]
    n_kv = kv_heads(model, sharing, params["n_kv_heads"])
    window = params["window"] if params["sliding"] else None
    tokens = cached_tokens(seq_len, window)
    total = cache_bytes(n_layers, n_kv, d_head, tokens, dtype)
    compare = [("mha", "MHA", n_heads)]
    if sharing == "gqa":
        compare.append(("gqa", "GQA", n_kv))
    compare.append(("mqa", "MQA", 1))
    context = model["context"]
    note = None
    if context is not None and seq_len > context:
        note = (
            f"{model['label']}'s context is at most {context:,d} tokens: a cache of "
            f"{seq_len:,d} tokens is hypothetical for it."
        )
    capped = tokens < seq_len
    window_note = None
    if capped:
        full = cache_bytes(n_layers, n_kv, d_head, seq_len, dtype)
        window_note = (
            f"The sliding window of {window:,d} tokens caps the cache: each layer keeps the "
            f"last {window:,d} of the {seq_len:,d} tokens (a rolling buffer), "
            f"{readable_bytes(total)} instead of {readable_bytes(full)}."
        )
    weights = count(spec_of(name))["total"] if name != "custom" else None
    return {
        "preset": name,
        "label": model["label"],
        "sharing": sharing,
        "dtype": dtype,
        "n_layers": n_layers,
        "n_heads": n_heads,
        "n_kv_heads": n_kv,
        "published_kv_heads": model["n_kv_heads"],
        "group": n_heads // n_kv,
        "d_head": d_head,
        "seq_len": seq_len,
        "sliding": params["sliding"],
        "window": window,
        "published_window": model["window"],
        "cached_tokens": tokens,
        "capped": capped,
        "bytes_per_number": DTYPES[dtype],
        "bytes": total,
        "readable": readable_bytes(total),
        "per_token": total // tokens,
        "per_token_readable": readable_bytes(total // tokens),
        "weights_bytes": None if weights is None else weights * DTYPES[dtype],
        "weights_readable": None if weights is None else readable_bytes(weights * DTYPES[dtype]),
        "compare": [
            {
                "name": key,
                "label": f"{label} ({kv} key/value head{'s' if kv > 1 else ''})",
                "n_kv_heads": kv,
                "bytes": cache_bytes(n_layers, kv, d_head, tokens, dtype),
                "readable": readable_bytes(cache_bytes(n_layers, kv, d_head, tokens, dtype)),
            }
            for key, label, kv in compare
        ],
        "kv_choices": divisors(n_heads),
        "context": context,
        "context_note": note,
        "window_note": window_note,
        "presets": {
            k: {
                "n_layers": PRESETS[k]["n_layers"],
                "n_heads": PRESETS[k]["n_heads"],
                "d_head": PRESETS[k]["d_model"] // PRESETS[k]["n_heads"],
                "n_kv_heads": PRESETS[k]["n_kv_heads"],
                "context": PRESETS[k]["context"],
                "window": PRESETS[k]["window"],
            }
            for k in DECODERS
        },
    }


def static_view(result: dict, params: dict) -> list[Table | Text]:
    """Without JavaScript: the formula with its numbers, and MHA / GQA / MQA compared."""
    r = result
    tokens = f"{r['cached_tokens']:,d} tokens"
    if r["window"] is not None:
        tokens = f"min({r['seq_len']:,d}, window {r['window']:,d}) = {tokens}"
    formula = (
        f"{r['label']}, {r['sharing'].upper()}, {r['dtype']}: 2 × {plural(r['n_layers'], 'layer')}"
        f" × {plural(r['n_kv_heads'], 'key/value head')} × {r['d_head']} (d_head) × {tokens}"
        f" × {plural(r['bytes_per_number'], 'byte')} = {r['bytes']:,d} bytes ≈ {r['readable']}."
    )
    parts = [Text(formula)]
    parts += [Text(n) for n in (r["window_note"], r["context_note"]) if n]
    rows = [(c["label"], (c["bytes"], c["readable"])) for c in r["compare"]]
    parts.append(
        Table(
            f"Key/value cache of one sequence of {r['seq_len']:,d} tokens with MHA, GQA and MQA.",
            ("Sharing", "Bytes", "About"),
            rows,
        )
    )
    return parts
