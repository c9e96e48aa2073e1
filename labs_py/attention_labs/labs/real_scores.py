"""Lab: a trained head's scores. Pick a query token of a real sentence; see its query
vector, its score with every key of a real model's head, and that row as weights.

The same view as the random head of ``query_picker`` (lesson 2), on queries and keys that a
trained model computed: the precomputed assets (docs/assets/attention/, :mod:`..maps`) carry
a few heads' own q and k, (seq_len, d_head) each, exactly as the model's attention used them.
The scores are S = Q K^T (Vaswani et al. 2017, "Attention Is All You Need", section 3.2.1);
the picked row's weights are softmax(S[query] * scale), with the model's scale (1/sqrt(d_head))
and, for a decoder, its causal mask. With the model's settings those are the model's own
weights (the assets store them to within 1/255).

The lab carries every exported head of one sentence at once (``q`` and ``k`` stacked,
``labels`` naming them), so switching heads is a recompute, not a download. A fence names
only the model and the sentence:

    ```lab
    lab: real_scores
    model: all-minilm-l6-v2
    sentence: mole-animal
    ```

and the build fills in the rest from the committed asset (:func:`fence_params`, called by
build_scripts/hooks/lab.py before the parameters are checked).
"""

from __future__ import annotations

import base64
import functools
import math

import numpy as np

from ..attention import causal_mask, softmax
from ..maps import decode_vectors, pack_vectors
from ..params import LabParameterError, Param
from ..static import Table, Text

MAX_SEQ_LEN = 64  # the asset format's cap
MAX_D_HEAD = 64  # SmolLM2: 64, MiniLM: 32
MAX_HEADS = 8
SHOWN_DIMS = 8  # how many of the query's components the widget draws


def _base64_chars(n_bytes: int) -> int:
    return 4 * math.ceil(n_bytes / 3)


# A tiny hand-made head so the lab runs without an asset (tests; a fence is filled from one).
_EXAMPLE_TOKENS = ["The", "cat", "sat"]
_EXAMPLE = np.array(
    [
        [[1.0, 0.0, 0.0, 0.5], [0.0, 2.0, 1.0, 0.0], [0.0, 1.5, 2.0, 0.0]],  # q
        [[2.0, 0.0, 0.0, 0.0], [0.0, 2.0, 0.5, 0.0], [0.0, 1.0, 2.0, 0.5]],  # k
    ]
)
_VECTORS = _base64_chars(4 * MAX_HEADS * MAX_SEQ_LEN * MAX_D_HEAD)

SCHEMA = (
    Param(
        "model", "text", "", "The model's slug in docs/assets/attention/index.json.", max_chars=64
    ),
    Param("sentence", "text", "", "The sentence's id in the index.", max_chars=64),
    Param(
        "tokens",
        "tokens",
        list(_EXAMPLE_TOKENS),
        "The model's tokens as displayed, one per query and key.",
        max_items=MAX_SEQ_LEN,
        max_chars=64,
    ),
    Param(
        "labels",
        "tokens",
        ["a hand-made example head"],
        "One name per head carried, e.g. 'layer 0, head 2: highest previous-token score'.",
        max_items=MAX_HEADS,
        max_chars=96,
    ),
    Param(
        "q",
        "base64",
        pack_vectors(_EXAMPLE[0]),
        "Queries of every head carried: (heads, seq_len, d_head) little-endian float32, base64.",
        max_chars=_VECTORS,
    ),
    Param(
        "k",
        "base64",
        pack_vectors(_EXAMPLE[1]),
        "Keys of every head carried: (heads, seq_len, d_head) little-endian float32, base64.",
        max_chars=_VECTORS,
    ),
    Param("d_head", "integer", 4, "Width of each query and key vector.", 1, MAX_D_HEAD),
    Param("causal", "boolean", False, "The model's causal mask (a decoder)."),
    Param("pick", "integer", 0, "Which head carried (0 is the first label).", 0, MAX_HEADS - 1),
    Param("query", "integer", 1, "Which token's query (0 is the first token).", 0, MAX_SEQ_LEN - 1),
)

_LARGEST = np.random.default_rng(0).standard_normal((MAX_HEADS, MAX_SEQ_LEN, MAX_D_HEAD))
LARGEST = {  # for make bench: the longest sentence, the widest heads, all of them carried
    "tokens": [f"t{i}" for i in range(MAX_SEQ_LEN)],
    "labels": [f"head {h}" for h in range(MAX_HEADS)],
    "q": pack_vectors(_LARGEST.reshape(-1, MAX_D_HEAD)),
    "k": pack_vectors(_LARGEST[::-1].reshape(-1, MAX_D_HEAD)),
    "d_head": MAX_D_HEAD,
    "causal": True,
    "pick": MAX_HEADS - 1,
    "query": MAX_SEQ_LEN - 1,
}


def fence_params(params: dict, docs) -> dict:
    """Build time only: a fence's parameters completed from its committed asset.

    ``params`` names ``model`` and ``sentence``; the asset
    ``docs/assets/attention/<model>/<sentence>.json`` supplies ``tokens``, ``labels``
    ("layer L, head H: <why it was exported>"), the stacked ``q`` and ``k`` of every head it
    carries, ``d_head`` and ``causal``. Keys the fence gives (``pick``, ``query``) are kept.
    Raises LabParameterError naming ``model`` or ``sentence`` when there is no such asset
    or it carries no queries and keys. ``docs``: the docs folder (a path).
    """
    import json  # build time only: the browser never reads files
    from pathlib import Path

    model, sentence = params.get("model"), params.get("sentence")
    if not model or not sentence:
        raise LabParameterError(
            "model" if not model else "sentence",
            "a real_scores fence names the asset: 'model: all-minilm-l6-v2' and "
            "'sentence: mole-animal', for example (docs/assets/attention/index.json)",
        )
    path = Path(docs) / "assets" / "attention" / str(model) / f"{sentence}.json"
    if not path.is_file():
        raise LabParameterError(
            "sentence", f"no asset {path.name} for model {model!r} (docs/assets/attention/)"
        )
    asset = json.loads(path.read_text(encoding="utf-8"))
    heads = asset["qkv"]["heads"]
    if not heads:
        raise LabParameterError("sentence", f"{path.name} carries no heads' queries and keys")
    n, d_head = asset["seq_len"], asset["qkv"]["d_head"]

    def stacked(name):
        parts = [decode_vectors(h[name], n, d_head) for h in heads]  # (seq_len, d_head) each
        return pack_vectors(np.concatenate(parts))  # (heads * seq_len, d_head)

    return {
        **params,
        "tokens": list(asset["tokens"]["text"]),
        "labels": [f"layer {h['layer']}, head {h['head']}: {h['reason']}" for h in heads],
        "q": stacked("q"),
        "k": stacked("k"),
        "d_head": d_head,
        "causal": bool(asset["model"]["causal"]),
    }


@functools.lru_cache(maxsize=4)
def _decoded(data: str, rows: int, d_head: int) -> np.ndarray:
    """:func:`decode_vectors`, read-only and remembered: every change of pick or query
    sends the same q and k again."""
    x = decode_vectors(data, rows, d_head)
    x.flags.writeable = False
    return x


def _stack(params: dict, name: str, n_heads: int, seq_len: int) -> np.ndarray:
    d_head = params["d_head"]
    try:
        x = _decoded(params[name], n_heads * seq_len, d_head)
    except ValueError:
        got = len(base64.b64decode(params[name]))
        raise LabParameterError(
            name,
            f"{name} must hold heads x seq_len x d_head = {n_heads} x {seq_len} x {d_head} "
            f"float32 values ({4 * n_heads * seq_len * d_head} bytes); got {got} bytes",
        ) from None
    if not np.all(np.isfinite(x)):
        raise LabParameterError(name, f"{name} must hold finite numbers; it has NaN or infinity")
    return x.reshape(n_heads, seq_len, d_head)


def compute(params: dict) -> dict:
    """The lab's result for validated ``params`` (see :data:`SCHEMA`).

    Returns ``tokens``, ``labels``, ``pick``, ``query``, ``d_head``, ``model``, ``sentence``,
    ``causal``; ``q`` (d_head,), the picked head's query of the picked token, and
    ``shown_dims``; ``scores`` (seq_len,), its dot product with every key (row ``query`` of
    ``S``; a key hidden by the causal mask is None); ``S`` (seq_len, seq_len) = Q K^T,
    [query, key], hidden entries None; ``weights`` (seq_len,), softmax of the row times
    ``scale`` = 1/sqrt(d_head); ``top_key``; ``score_range`` [min, max] of the visible
    scores of the whole grid. Raises LabParameterError naming ``q`` or ``k`` (byte count),
    ``pick`` (beyond the labels) or ``query`` (beyond the tokens).
    """
    tokens, labels = params["tokens"], params["labels"]
    seq_len, n_heads = len(tokens), len(labels)
    pick, query = params["pick"], params["query"]
    if pick >= n_heads:
        raise LabParameterError(
            "pick",
            f"pick must be a whole number from 0 to {n_heads - 1} (one per label), got {pick}",
        )
    if query >= seq_len:
        raise LabParameterError(
            "query",
            f"query must be a whole number from 0 to {seq_len - 1} (the sentence has "
            f"{seq_len} tokens), got {query}",
        )
    Q = _stack(params, "q", n_heads, seq_len)[pick]  # (seq_len, d_head)
    K = _stack(params, "k", n_heads, seq_len)[pick]  # (seq_len, d_head)
    S = Q @ K.T  # (seq_len, seq_len), [query, key]: the plain scores
    visible = causal_mask(seq_len) if params["causal"] else np.ones((seq_len, seq_len), bool)
    scale = 1.0 / math.sqrt(params["d_head"])
    weights = softmax(S[query] * scale, where=visible[query])  # (seq_len,), sums to 1
    shown = np.where(visible, S, -np.inf)  # hidden entries travel as None / -inf
    return {
        "model": params["model"],
        "sentence": params["sentence"],
        "tokens": list(tokens),
        "labels": list(labels),
        "pick": pick,
        "query": query,
        "d_head": params["d_head"],
        "causal": params["causal"],
        "scale": scale,
        "q": Q[query],
        "shown_dims": min(SHOWN_DIMS, params["d_head"]),
        "scores": shown[query],
        "S": shown,
        "weights": weights,
        "top_key": int(np.argmax(weights)),
        "score_range": [float(S[visible].min()), float(S[visible].max())],
    }


def static_view(result: dict, params: dict) -> list[Table | Text]:
    """Without JavaScript: the picked query's score with every key, and its weights."""
    tokens, q = result["tokens"], result["query"]
    rows = [
        (f"{t} ({j})", (result["scores"][j], result["weights"][j])) for j, t in enumerate(tokens)
    ]
    lo, hi = result["score_range"]
    caption = (
        f"A trained head, {result['labels'][result['pick']]}: the query of “{tokens[q]}” "
        f"({q}), its score q · k with every key, and the weights (softmax of the scores "
        f"divided by sqrt({result['d_head']}))."
    )
    return [
        Table(caption, ("Key", "Score", "Weight"), rows, digits=3),
        Text(
            f"It attends most to “{tokens[result['top_key']]}” ({result['top_key']}). Over the "
            f"whole grid this head's scores run from {lo:.1f} to {hi:.1f}."
        ),
    ]
