"""The induction-head model in NumPy: a 2-layer attention-only decoder.

The model is trained in the build by build_scripts/induction/train_induction.py (PyTorch);
its weights and its training story ship with this package as JSON
(``attention_labs/data/induction/``). Here it runs with the same functions as every lesson:
token plus position embeddings, then per layer ``x = x + MultiHead(x)`` with a causal mask
(`attention.multi_head_attention`), then the unembedding. No MLP and no layer norm: the
smallest model in which induction heads form (Elhage et al. 2021, "A Mathematical Framework
for Transformer Circuits"; Olsson et al. 2022, "In-context Learning and Induction Heads").

Tokens are the 26 capital letters A..Z, one per token.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache

import numpy as np

from .. import package_file
from ..attention import causal_mask, multi_head_attention
from ..real_maps import decode_vectors, unpack_head

__all__ = ["load_weights", "weights_sha256", "training_story", "encode", "forward", "stored_map"]


def _read(name: str) -> dict:
    try:
        return json.loads(_bytes(name).decode("utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(
            f"{name} is missing from attention_labs/data/induction/: run "
            "`make train-induction` (build_scripts/induction/train_induction.py)"
        ) from None


def _bytes(name: str) -> bytes:
    with open(package_file("data", "induction", name), "rb") as f:
        return f.read()


@cache
def weights_sha256() -> str:
    """sha256 (hex) of the weights' file, attention_labs/data/induction/model.json."""
    return hashlib.sha256(_bytes("model.json")).hexdigest()


@cache
def training_story() -> dict:
    """training.json: config, loss curve, head scores per checkpoint, maps (see its schema)."""
    return _read("training.json")


@cache
def load_weights() -> dict:
    """The trained weights as float64 arrays in the row-vector convention (x @ W):

    ``W_E`` (vocab_size, d_model), ``W_pos`` (seq_len, d_model), ``W_U`` (d_model,
    vocab_size), and per layer ``layers[i]`` = {W_Q, W_K, W_V, W_O} each (d_model,
    d_model); plus ``config``.
    """
    data = _read("model.json")
    cfg = data["config"]
    d = cfg["d_model"]

    def array(name):
        w = data["weights"][name]
        size = int(np.prod(w["shape"]))
        return decode_vectors(w["data"], 1, size).reshape(w["shape"])

    layers = []
    for i in range(cfg["n_layers"]):
        qkv = array(f"layers.{i}.W_QKV.weight")  # torch Linear: (3 d_model, d_model), x @ W.T
        layers.append(
            {
                "W_Q": qkv[:d].T,
                "W_K": qkv[d : 2 * d].T,
                "W_V": qkv[2 * d :].T,
                "W_O": array(f"layers.{i}.W_O.weight").T,
            }
        )
    return {
        "config": cfg,
        "W_E": array("W_E.weight"),
        "W_pos": array("W_pos.weight"),
        "W_U": array("W_U.weight").T,
        "layers": layers,
    }


def encode(text: str) -> list[int]:
    """Token ids of ``text``: one per letter A..Z (case and spaces ignored).

    Raises ValueError naming the first character that is not a letter A..Z, or when there
    are fewer than 2 or more than seq_len (32) letters.
    """
    cfg = load_weights()["config"]
    chars = [c for c in text if not c.isspace()]
    bad = next((c for c in chars if not ("A" <= c.upper() <= "Z")), None)
    letters = [c.upper() for c in chars]
    if bad is not None:
        raise ValueError(f"the sequence may hold only the letters A to Z; {bad!r} is not one")
    if not 2 <= len(letters) <= cfg["seq_len"]:
        raise ValueError(
            f"the sequence must have 2 to {cfg['seq_len']} letters (the model's context); "
            f"got {len(letters)}"
        )
    return [ord(c) - ord("A") for c in letters]


def forward(tokens, ablate=()):
    """Run the model on token ids.

    Args:
        tokens: sequence of seq_len ints in [0, vocab_size), 1 <= seq_len <= 32.
        ablate: (layer, head) pairs whose output is removed: their rows of ``W_O`` are set
            to zero, so the head still computes its pattern but adds nothing to the
            residual stream (a zero ablation).

    Returns:
        (logits ``(seq_len, vocab_size)``: the prediction of each NEXT token, weights
        ``(n_layers, n_heads, seq_len, seq_len)`` ``[query, key]``, causal, rows summing to 1).

    Raises:
        ValueError: a token out of range or a sequence longer than the model's context.
    """
    w = load_weights()
    cfg = w["config"]
    ids = np.asarray(tokens, dtype=np.int64)
    if ids.ndim != 1 or not 1 <= len(ids) <= cfg["seq_len"]:
        raise ValueError(f"tokens must be 1 to {cfg['seq_len']} ids; got shape {ids.shape}")
    if ids.min() < 0 or ids.max() >= cfg["vocab_size"]:
        raise ValueError(f"token ids must be in [0, {cfg['vocab_size']}); got {ids.tolist()}")
    n = len(ids)
    d_head = cfg["d_model"] // cfg["n_heads"]
    off = {(int(layer), int(head)) for layer, head in ablate}
    if any(not (0 <= i < cfg["n_layers"] and 0 <= h < cfg["n_heads"]) for i, h in off):
        raise ValueError(f"ablate names a head that does not exist: {sorted(off)}")
    x = w["W_E"][ids] + w["W_pos"][:n]  # the residual stream (seq_len, d_model)
    patterns = []
    for i, layer in enumerate(w["layers"]):
        W_O = layer["W_O"].copy()  # (d_model, d_model); rows h*d_head.. belong to head h
        for _, h in (pair for pair in off if pair[0] == i):
            W_O[h * d_head : (h + 1) * d_head] = 0.0
        update, weights = multi_head_attention(
            x, layer["W_Q"], layer["W_K"], layer["W_V"], W_O,
            cfg["n_heads"], mask=causal_mask(n),
        )  # fmt: skip
        x = x + update
        patterns.append(weights)  # (n_heads, seq_len, seq_len)
    return x @ w["W_U"], np.stack(patterns)


def stored_map(checkpoint: int) -> np.ndarray:
    """The probe sequence's weights at ``training_story()["maps"][checkpoint]``:
    ``(n_layers, n_heads, seq_len, seq_len)`` float64, within 1/255 of the model's."""
    story = training_story()
    n = len(story["probe"])
    data = story["maps"][checkpoint]["data"]
    return np.array([[unpack_head(h, n, causal=True) for h in layer] for layer in data])
