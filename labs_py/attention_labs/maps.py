"""Attention maps: THE asset format, its one writer (`build_asset`) and its readers.

An asset (docs/assets/attention/asset.schema.json) holds every layer and head of one model
on one text: the tokens, the weights as bytes, per-head statistics, a few heads' queries,
keys and values, and where it came from. Every source of maps writes it here, with the same
code in CPython and in the browser (Pyodide):

* the precompute (build_scripts/precompute/: PyTorch and transformers, offline), whose
  assets are committed under docs/assets/attention/;
* the explorer's "Your own sentence" (attention_labs.models.own_sentence: all-MiniLM-L6-v2
  in NumPy) and "your letters" (attention_labs.models.own_letters: the induction-head model);

and the build, the tests and the browser read it back with `decode_attention` and
`decode_vectors`. The number format:

* weights are quantised row by row to integers that sum to exactly 255 per query row
  (`quantise_rows`), one byte per stored weight, and decoded as ``byte / 255``
  (`decode_attention`): each decoded weight is within 1/255 of the float weight and every
  decoded row sums to exactly 1;
* a causal model stores only the lower triangle (key <= query), row after row;
* query, key and value vectors travel as little-endian float32 (`decode_vectors`).

The head statistics (`head_statistics`) are the share of a head's attention on one expected
key per query, the "mul" scoring of TransformerLens' head detector (Nanda and Bloom,
TransformerLens, 2022, ``transformer_lens.head_detector``): a score of 1 means every query
puts all of its weight on the expected key. Induction heads: Olsson et al. 2022, "In-context
Learning and Induction Heads" (Transformer Circuits Thread); Elhage et al. 2021, "A
Mathematical Framework for Transformer Circuits".

Shapes: ``weights`` is ``(..., seq_len, seq_len)`` indexed ``[query, key]`` (for example
``(n_layers, n_heads, seq_len, seq_len)``); every score function returns the leading shape
``(...)``.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field

import numpy as np

from . import __version__
from .attention import entropy_bits

SCHEMA_VERSION = 1  # asset.schema.json's schema_version (and index.json's)
QUANT_DENOMINATOR = 255
QKV_HEADS = 4  # heads per model whose query, key and value vectors an asset carries

__all__ = [
    "QKV_HEADS",
    "QKV_REASONS",
    "QUANT_DENOMINATOR",
    "SCHEMA_VERSION",
    "STATISTICS",
    "ModelInfo",
    "Provenance",
    "Tokens",
    "build_asset",
    "choose_qkv_heads",
    "decode_attention",
    "decode_vectors",
    "dumps",
    "first_token_score",
    "head_statistics",
    "induction_score",
    "induction_targets",
    "kv_heads",
    "longest_repeat",
    "mean_entropy_bits",
    "pack_vectors",
    "previous_token_score",
    "quantise_rows",
    "self_score",
    "stored_count",
    "unpack_head",
]


def _pattern(weights, min_len=1):
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim < 2 or w.shape[-1] != w.shape[-2]:
        raise ValueError(f"weights must be (..., seq_len, seq_len); got shape {w.shape}")
    if w.shape[-1] < min_len:
        raise ValueError(f"weights need seq_len >= {min_len}; got {w.shape[-1]}")
    if not np.all(np.isfinite(w)):
        raise ValueError("weights contain NaN or infinite values")
    return w


def mean_entropy_bits(weights):
    """Mean over query rows of each row's entropy in bits, shape ``(...)``.

    0 when every query puts all its weight on one key; log2(seq_len) when every row is
    uniform. Uses `entropy_bits` (Shannon 1948).
    """
    return entropy_bits(_pattern(weights)).mean(axis=-1)


def previous_token_score(weights):
    """Share of attention on the previous token: mean of ``weights[i, i-1]`` for i >= 1.

    Query 0 has no previous token and is left out. Raises ValueError for seq_len < 2.
    """
    w = _pattern(weights, min_len=2)
    n = w.shape[-1]
    return w[..., np.arange(1, n), np.arange(0, n - 1)].mean(axis=-1)


def first_token_score(weights):
    """Share of attention on the first key (the "attention sink"): mean of ``weights[i, 0]``
    for i >= 1.

    Query 0 is left out: under a causal mask it can only attend to itself.
    Raises ValueError for seq_len < 2.
    """
    w = _pattern(weights, min_len=2)
    return w[..., 1:, 0].mean(axis=-1)


def self_score(weights):
    """Share of attention on the query's own position (the diagonal): mean of
    ``weights[i, i]`` for i >= 1 (query 0 left out, as in `first_token_score`).

    Raises ValueError for seq_len < 2.
    """
    w = _pattern(weights, min_len=2)
    n = w.shape[-1]
    idx = np.arange(1, n)
    return w[..., idx, idx].mean(axis=-1)


def induction_targets(token_ids, ignore=None):
    """For each query whose token appeared before, the keys an induction head attends to.

    An induction head, at a token that occurred earlier at position k, attends to position
    k + 1: the token that followed the earlier occurrence (Olsson et al. 2022).

    Args:
        token_ids: sequence of seq_len ints.
        ignore: optional sequence of seq_len bools; True marks tokens (such as [CLS] or
            <|endoftext|>) that never count as a repetition.

    Returns:
        dict {query: sorted list of target keys}, each target <= query; empty when no token
        repeats.
    """
    ids = [int(t) for t in token_ids]
    skip = [False] * len(ids) if ignore is None else [bool(s) for s in ignore]
    if len(skip) != len(ids):
        raise ValueError(f"ignore must have {len(ids)} entries (one per token); got {len(skip)}")
    targets = {}
    for query, token in enumerate(ids):
        if skip[query]:
            continue
        keys = [k + 1 for k in range(query) if ids[k] == token and not skip[k] and k + 1 <= query]
        if keys:
            targets[query] = keys
    return targets


def longest_repeat(token_ids, ignore=None):
    """Length of the longest run of tokens that occurs twice in ``token_ids`` (the two
    copies may overlap); 0 when no token repeats.

    The induction score (`induction_score`) measures copying only where a sequence repeats:
    on a lone repeated word it averages one or two queries. The explorer shows it when this
    is 3 or more (docs/javascripts/explorer/parts.js computes the same).

    Args:
        token_ids: sequence of seq_len ints.
        ignore: optional sequence of seq_len bools; True marks tokens (such as [CLS] or
            <|endoftext|>) that never count as a repetition and end a run.

    Raises ValueError when ``ignore`` does not have one entry per token.
    """
    ids = [int(t) for t in token_ids]
    skip = [False] * len(ids) if ignore is None else [bool(s) for s in ignore]
    if len(skip) != len(ids):
        raise ValueError(f"ignore must have {len(ids)} entries (one per token); got {len(skip)}")
    n = len(ids)
    longest = 0
    for query in range(n):
        for key in range(query):
            run = 0
            while (
                query + run < n
                and ids[key + run] == ids[query + run]
                and not skip[key + run]
                and not skip[query + run]
            ):
                run += 1
            longest = max(longest, run)
    return longest


def induction_score(weights, token_ids, ignore=None):
    """Share of attention on induction targets (see `induction_targets`), averaged over the
    queries that have one; ``None`` when no token repeats.

    Returns a float64 array of shape ``(...)`` or None. Raises ValueError when the number
    of token ids is not seq_len.
    """
    w = _pattern(weights)
    if len(token_ids) != w.shape[-1]:
        raise ValueError(
            f"token_ids must have seq_len = {w.shape[-1]} entries; got {len(token_ids)}"
        )
    targets = induction_targets(token_ids, ignore)
    if not targets:
        return None
    per_query = [w[..., q, keys].sum(axis=-1) for q, keys in sorted(targets.items())]
    return np.mean(per_query, axis=0)


STATISTICS = ("entropy_bits", "previous_token", "first_token", "self", "induction")


def head_statistics(weights, token_ids, special=None) -> dict:
    """Every head's statistics, the asset's ``head_stats``: each an ``(n_layers, n_heads)``
    list rounded to 4 decimals, ``induction`` None when no token repeats.

    Args:
        weights: ``(n_layers, n_heads, seq_len, seq_len)`` float weights (before quantising).
        token_ids: seq_len ints; special: seq_len bools (special tokens never repeat).

    Raises ValueError as the score functions do (seq_len < 2, bad shape, NaN).
    """
    w = np.asarray(weights, dtype=np.float64)
    stats = {
        "entropy_bits": mean_entropy_bits(w),
        "previous_token": previous_token_score(w),
        "first_token": first_token_score(w),
        "self": self_score(w),
        "induction": induction_score(w, token_ids, special),
    }
    return {k: None if v is None else np.round(v, 4).tolist() for k, v in stats.items()}


# Which heads an asset carries q, k and v of: the strongest of each statistic, in this order.
QKV_REASONS = (
    ("previous_token", "highest previous-token score"),
    ("induction", "highest induction score"),
    ("first_token", "highest first-token score"),
    ("self", "highest self score"),
)


def choose_qkv_heads(stats: list[dict], n_heads: int, limit: int = QKV_HEADS) -> list[dict]:
    """Up to ``limit`` heads worth recomputing, the same for every text of a model: the
    strongest previous-token, induction, first-token and self head (means over the texts'
    `head_statistics` where the score exists), skipping repeats.

    Returns ``[{"layer", "head", "reason"}, ...]`` for `build_asset`'s ``qkv_heads``.
    """
    chosen, seen = [], set()
    for name, reason in QKV_REASONS:
        values = [np.array(s[name]) for s in stats if s[name] is not None]
        if not values:
            continue
        mean = np.mean(values, axis=0)
        order = np.argsort(-mean, axis=None, kind="stable")
        for flat in order:
            layer, head = divmod(int(flat), n_heads)
            if (layer, head) not in seen:
                seen.add((layer, head))
                chosen.append({"layer": layer, "head": head, "reason": reason})
                break
        if len(chosen) == limit:
            break
    return chosen


def quantise_rows(weights, causal=False):
    """Quantise attention rows to bytes whose integers sum to exactly 255 per row.

    Each row is scaled to 255, floored, and the units still missing go to the entries with
    the largest remainders (ties to the lower key index): the largest-remainder method
    (Hamilton's apportionment). Every integer is within 1 of 255 * weight, so a decoded
    weight ``byte / 255`` is within 1/255 of the float one, and a decoded row sums to 1
    exactly. Plain rounding would drift (up to about 0.03 per row at 64 keys).

    Args:
        weights: ``(..., seq_len, seq_len)`` finite non-negative rows, each summing to 1
            (within float error; rows are renormalised before scaling).
        causal: store only keys <= query (the lower triangle, row after row).

    Returns:
        ``(..., stored)`` uint8 array: stored = seq_len * seq_len, or
        seq_len * (seq_len + 1) / 2 when causal.

    Raises:
        ValueError: bad shape, NaN/inf, a negative weight, a row summing to 0, or (causal)
            weight above the diagonal.
    """
    w = _pattern(weights)
    n = w.shape[-1]
    if np.any(w < 0):
        raise ValueError("weights must be non-negative")
    upper = np.triu(np.ones((n, n), dtype=bool), k=1)
    if causal and np.any(w[..., upper] > 1e-6):
        raise ValueError("causal=True but weights above the diagonal are not 0")
    if causal:
        w = np.where(upper, 0.0, w)
    sums = w.sum(axis=-1, keepdims=True)
    if np.any(sums <= 0):
        raise ValueError("every row must have a positive sum")
    scaled = w / sums * QUANT_DENOMINATOR
    base = np.floor(scaled)
    remainder = scaled - base
    missing = QUANT_DENOMINATOR - base.sum(axis=-1).astype(np.int64)  # 0 <= missing < n
    # rank of each entry by descending remainder (stable: lower key first on ties)
    order = np.argsort(-remainder, axis=-1, kind="stable")
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(n), axis=-1)
    q = base + (rank < missing[..., None])
    q = q.astype(np.uint8)
    if causal:
        return q[..., ~upper]  # row-major lower triangle
    return q.reshape(*q.shape[:-2], n * n)


def stored_count(seq_len, causal):
    """Number of bytes one head stores: seq_len² (full) or seq_len (seq_len + 1) / 2."""
    return seq_len * (seq_len + 1) // 2 if causal else seq_len * seq_len


def unpack_head(data, seq_len, causal):
    """Decode one head's bytes (`quantise_rows` output, raw or base64 text) to weights.

    Returns a ``(seq_len, seq_len)`` float64 array, ``weights[q, k] = byte / 255``, zero
    above the diagonal when causal. Raises ValueError when the byte count is not
    `stored_count`.
    """
    raw = base64.b64decode(data, validate=True) if isinstance(data, str) else bytes(data)
    expected = stored_count(seq_len, causal)
    if len(raw) != expected:
        raise ValueError(
            f"a head of seq_len {seq_len} ({'causal' if causal else 'full'}) stores "
            f"{expected} bytes; got {len(raw)}"
        )
    q = np.frombuffer(raw, dtype=np.uint8).astype(np.float64) / QUANT_DENOMINATOR
    if not causal:
        return q.reshape(seq_len, seq_len)
    out = np.zeros((seq_len, seq_len))
    out[np.tril_indices(seq_len)] = q  # row-major, like quantise_rows
    return out


def decode_attention(asset):
    """All weights of a precomputed asset (a dict parsed from its JSON).

    Returns ``(n_layers, n_heads, seq_len, seq_len)`` float64; see the module docstring for
    the format. Raises ValueError (naming layer and head) on a malformed head, or for a
    schema_version this reader does not know.
    """
    version = asset.get("schema_version", SCHEMA_VERSION)
    if version != SCHEMA_VERSION:
        raise ValueError(
            f"asset schema_version {version!r}: this reader reads version {SCHEMA_VERSION}"
        )
    seq_len = int(asset["seq_len"])
    causal = bool(asset["model"]["causal"])
    layers = []
    for layer, heads in enumerate(asset["attention"]["data"]):
        decoded = []
        for head, data in enumerate(heads):
            try:
                decoded.append(unpack_head(data, seq_len, causal))
            except ValueError as err:
                raise ValueError(f"layer {layer}, head {head}: {err}") from None
        layers.append(decoded)
    return np.array(layers, dtype=np.float64).reshape(len(layers), -1, seq_len, seq_len)


def pack_vectors(x):
    """Base64 text of an array as little-endian float32, row-major (see `decode_vectors`)."""
    return base64.b64encode(np.ascontiguousarray(x, dtype="<f4").tobytes()).decode("ascii")


def decode_vectors(data, seq_len, d_head):
    """Decode base64 little-endian float32 vectors to a ``(seq_len, d_head)`` float64 array.

    Raises ValueError when the byte count is not 4 * seq_len * d_head.
    """
    raw = base64.b64decode(data, validate=True)
    if len(raw) != 4 * seq_len * d_head:
        raise ValueError(
            f"vectors of shape ({seq_len}, {d_head}) need {4 * seq_len * d_head} bytes; "
            f"got {len(raw)}"
        )
    return np.frombuffer(raw, dtype="<f4").astype(np.float64).reshape(seq_len, d_head)


# ------------------------------------------------------------------------------ the writer


@dataclass
class Tokens:
    """A text's tokens as an asset lists them (``tokens`` and ``bos_added``).

    ``text`` is what a reader sees for each token, ``offsets`` its ``[start, end)`` characters
    in the text (``[0, 0]`` for a token not from the text), ``special`` marks the model's
    special tokens, ``added`` lists each token not from the text: ``{"position", "id",
    "text", "by"}`` ("tokenizer", or the source that added it).
    """

    ids: list[int]
    text: list[str]
    offsets: list[list[int]]
    special: list[bool]
    bos_added: bool
    added: list[dict] = field(default_factory=list)


@dataclass(frozen=True)
class ModelInfo:
    """What an asset says of its model (``model``; n_layers and n_heads come from the
    weights). ``n_kv_heads`` below ``n_heads`` means grouped-query attention: query head h
    reads key/value head ``h // (n_heads // n_kv_heads)``; None: as many as query heads."""

    id: str
    slug: str
    architecture: str
    model_type: str
    d_model: int
    d_head: int
    max_positions: int | None
    weights_sha256: str
    weights_files: list[str]
    source: str
    n_kv_heads: int | None = None


@dataclass(frozen=True)
class Provenance:
    """How an asset was made (``provenance``; the attention_labs version is added here)."""

    script: str
    torch: str
    transformers: str
    device: str
    dtype: str = "float32"


def kv_heads(n_heads: int, n_kv_heads: int) -> list[int]:
    """The key/value head each query head reads: ``h // (n_heads // n_kv_heads)``."""
    return [h // (n_heads // n_kv_heads) for h in range(n_heads)]


def build_asset(
    *,
    sentence: dict,
    model: ModelInfo,
    tokens: Tokens,
    weights,
    causal: bool,
    provenance: Provenance,
    stats: dict | None = None,
    scale: float | None = None,
    qkv_heads: list[dict] = (),
    q=None,
    k=None,
    v=None,
) -> dict:
    """The asset (a dict ready for JSON, asset.schema.json) of one model on one text.

    Args:
        sentence: ``{"id", "lesson", "text"}``.
        model: the model's description; tokens: its tokens of the text.
        weights: ``(n_layers, n_heads, seq_len, seq_len)`` float weights, rows summing to 1;
            quantised here (`quantise_rows`), lower triangle only when ``causal``.
        stats: `head_statistics` of these weights, when the caller has them already (the
            precompute needs them first to choose the q/k/v heads); else computed here.
        scale: the softmax scale of ``q kᵀ`` (None: not known for this architecture).
        qkv_heads: `choose_qkv_heads`' choice; for each, the asset carries q of that head
            and k, v of the key/value head it reads, from ``q`` ``(n_layers, n_heads,
            seq_len, d_head)`` and ``k``, ``v`` ``(n_layers, n_kv_heads, seq_len, d_head)``.

    Raises ValueError for weights of the wrong shape (not ``seq_len`` tokens) or that
    `quantise_rows` refuses.
    """
    weights = np.asarray(weights, dtype=np.float64)
    if weights.ndim != 4 or weights.shape[-1] != len(tokens.ids):
        raise ValueError(
            f"weights must be (n_layers, n_heads, {len(tokens.ids)}, {len(tokens.ids)}) for "
            f"{len(tokens.ids)} tokens; got shape {weights.shape}"
        )
    n_layers, n_heads = (int(n) for n in weights.shape[:2])
    n_kv = model.n_kv_heads or n_heads
    reads = kv_heads(n_heads, n_kv)
    packed = quantise_rows(weights, causal=causal)  # (n_layers, n_heads, stored) uint8
    vectors = []
    for choice in qkv_heads:
        layer, head = choice["layer"], choice["head"]
        kv = reads[head]
        vectors.append(
            {
                **choice,
                "kv_head": kv,
                "q": pack_vectors(q[layer, head]),
                "k": pack_vectors(k[layer, kv]),
                "v": pack_vectors(v[layer, kv]),
            }
        )
    return {
        "schema_version": SCHEMA_VERSION,
        "sentence": {"id": sentence["id"], "lesson": sentence["lesson"], "text": sentence["text"]},
        "model": {
            "id": model.id,
            "slug": model.slug,
            "architecture": model.architecture,
            "model_type": model.model_type,
            "n_layers": n_layers,
            "n_heads": n_heads,
            "n_kv_heads": n_kv,
            "kv_heads": reads,
            "d_model": model.d_model,
            "d_head": model.d_head,
            "causal": causal,
            "max_positions": model.max_positions,
            "weights_sha256": model.weights_sha256,
            "weights_files": list(model.weights_files),
            "source": model.source,
        },
        "seq_len": len(tokens.ids),
        "bos_added": tokens.bos_added,
        "tokens": {
            "text": tokens.text,
            "ids": tokens.ids,
            "offsets": tokens.offsets,
            "special": tokens.special,
            "added": tokens.added,
        },
        "attention": {
            "encoding": "uint8-base64",
            "layout": "lower-triangle" if causal else "full",
            "denominator": QUANT_DENOMINATOR,
            "data": [
                [base64.b64encode(head.tobytes()).decode("ascii") for head in heads]
                for heads in packed
            ],
        },
        "head_stats": head_statistics(weights, tokens.ids, tokens.special)
        if stats is None
        else stats,
        "qkv": {
            "encoding": "float32-le-base64",
            "d_head": model.d_head,
            "scale": scale,
            "heads": vectors,
        },
        "provenance": {
            "script": provenance.script,
            "attention_labs": __version__,
            "torch": provenance.torch,
            "transformers": provenance.transformers,
            "device": provenance.device,
            "dtype": provenance.dtype,
        },
    }


def dumps(data: dict) -> str:
    """An asset's (or the index's) JSON text: compact and deterministic (key order as built,
    no timestamps), so the same inputs give the same bytes."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n"
