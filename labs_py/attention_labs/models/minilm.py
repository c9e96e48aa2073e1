"""all-MiniLM-L6-v2, a real trained BERT encoder, in NumPy: read it from top to bottom.

The model: 6 layers, 12 heads of d_head 32, d_model 384, an MLP of 1536, 30,522 WordPiece
tokens, bidirectional (no mask) and post-LN, as BERT (Devlin et al. 2019, "BERT: Pre-training
of Deep Bidirectional Transformers for Language Understanding", NAACL, section 3). Its weights
were distilled from a larger model by deep self-attention distillation (Wang et al. 2020,
"MiniLM: Deep Self-Attention Distillation for Task-Agnostic Compression of Pre-Trained
Transformers", NeurIPS) and then trained as a sentence embedder by the sentence-transformers
team (Reimers and Gurevych 2019, "Sentence-BERT"; Apache-2.0).

    x = LayerNorm(word[ids] + position[0..seq_len) + token_type[0])          (embeddings)
    for each of the 6 layers:
        x = LayerNorm(x + MultiHead(x) W_O^T + b_O)                     (`attention_block`)
        x = LayerNorm(x + GELU(x W_1^T + b_1) W_2^T + b_2)                        (the MLP)

The maps need less than all of it: the last layer's values, W_O and MLP change no attention
weight, so `forward` stops at that layer's queries and keys (`attention_weights`) unless the
hidden states are asked for: a sixth less work.

Each head's attention is `attention.scaled_dot_product_attention`, the function the lessons
build (float64 inside); the projections, the MLP and LayerNorm run in float32. Weight matrices
stay as PyTorch's Linear stores them, W (d_out, d_in), and `linear` computes x W^T + b.

The weights come as a safetensors file (`read_safetensors`): either the original float32
``model.safetensors`` or the int8 file the build writes (build_scripts/minilm/quantise.py):
every matrix as int8 with one float16 scale per group of 64 consecutive values
(`quantise_groups`, `dequantise_groups`), vectors (biases, LayerNorm) in float32.

Shapes: seq_len is the number of tokens, [CLS] and [SEP] included (at most 128 here).
"""

from __future__ import annotations

import json
import math

import numpy as np

from ..attention import attention_logits, scaled_dot_product_attention, softmax
from .wasm_kernels import matmul_nt

__all__ = [
    "CONFIG",
    "GROUP",
    "read_safetensors",
    "write_safetensors",
    "quantise_groups",
    "dequantise_groups",
    "load_weights",
    "layer_norm",
    "gelu",
    "linear",
    "embed",
    "split_heads",
    "attention_block",
    "attention_weights",
    "encoder_layer",
    "forward",
]

# config.json of all-MiniLM-L6-v2 (hidden_act "gelu" is the erf form in transformers)
CONFIG = {
    "n_layers": 6,
    "n_heads": 12,
    "d_model": 384,
    "d_mlp": 1536,
    "vocab_size": 30522,
    "max_positions": 512,
    "layer_norm_eps": 1e-12,
}
GROUP = 64  # values per int8 scale

_DTYPES = {"F32": "<f4", "F16": "<f2", "I8": "i1", "U8": "u1", "F64": "<f8", "I64": "<i8"}


# ------------------------------------------------------------------------- the weights file


def read_safetensors(data) -> dict[str, np.ndarray]:
    """Tensors of a safetensors file (bytes-like): 8-byte little-endian header length, a
    JSON header {name: {dtype, shape, data_offsets}}, then the raw little-endian data.

    Returns {name: read-only array} viewing `data` (no copy). Raises ValueError for a
    truncated file or a dtype other than F32, F16, F64, I8, U8, I64.
    """
    view = memoryview(data).cast("B")
    if len(view) < 8:
        raise ValueError(f"not a safetensors file: {len(view)} bytes")
    n = int.from_bytes(view[:8], "little")
    if 8 + n > len(view):
        raise ValueError(f"safetensors header of {n} bytes runs past the file ({len(view)})")
    header = json.loads(bytes(view[8 : 8 + n]))
    header.pop("__metadata__", None)
    body = view[8 + n :]
    out = {}
    for name, info in header.items():
        if info["dtype"] not in _DTYPES:
            raise ValueError(f"tensor {name!r}: dtype {info['dtype']} is not supported")
        start, end = info["data_offsets"]
        if end > len(body):
            raise ValueError(f"tensor {name!r} runs past the end of the file (truncated?)")
        arr = np.frombuffer(body[start:end], dtype=_DTYPES[info["dtype"]])
        out[name] = arr.reshape(info["shape"])
    return out


def write_safetensors(tensors: dict[str, np.ndarray], metadata: dict | None = None) -> bytes:
    """The safetensors bytes of `tensors` (F32, F16, I8, U8), names sorted: the same arrays give
    the same bytes. The header is padded with spaces to a multiple of 8 bytes."""
    names = {
        np.dtype("<f4"): "F32",
        np.dtype("<f2"): "F16",
        np.dtype("i1"): "I8",
        np.dtype("u1"): "U8",
    }
    header, chunks, offset = {}, [], 0
    if metadata:
        header["__metadata__"] = {k: str(v) for k, v in sorted(metadata.items())}
    for name in sorted(tensors):
        arr = np.ascontiguousarray(tensors[name])
        if arr.dtype.newbyteorder("<") not in names:
            raise ValueError(f"tensor {name!r}: dtype {arr.dtype} is not F32, F16, I8 or U8")
        raw = arr.astype(arr.dtype.newbyteorder("<")).tobytes()
        dtype = names[arr.dtype.newbyteorder("<")]
        header[name] = {
            "dtype": dtype,
            "shape": list(arr.shape),
            "data_offsets": [offset, offset + len(raw)],
        }
        chunks.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return len(text).to_bytes(8, "little") + text + b"".join(chunks)


def quantise_groups(w: np.ndarray, group: int = GROUP) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric int8 quantisation, one scale per `group` consecutive values of each row.

    For each group, scale = max|w| / 127 rounded to float16, and q = round(w / scale) in
    [-127, 127]; so ``|w - q * scale| <= scale / 2`` (half a step) per value.

    Args:
        w: (rows, cols) float array, cols a multiple of `group`.

    Returns:
        (q int8 (rows, cols), scales float16 (rows, cols // group)).

    Raises:
        ValueError: w is not 2-D, cols is not a multiple of group, or w is not finite.
    """
    w = np.asarray(w, dtype=np.float32)
    if w.ndim != 2 or w.shape[1] % group:
        raise ValueError(f"w must be (rows, cols) with cols a multiple of {group}; got {w.shape}")
    if not np.all(np.isfinite(w)):
        raise ValueError("w must be finite")
    g = w.reshape(w.shape[0], -1, group)  # (rows, n_groups, group)
    scale = (np.abs(g).max(axis=-1) / 127).astype(np.float16)  # (rows, n_groups)
    safe = np.where(scale > 0, scale.astype(np.float32), 1.0)[..., None]
    q = np.clip(np.rint(g / safe), -127, 127).astype(np.int8)
    return q.reshape(w.shape), scale


def dequantise_groups(q: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Inverse of `quantise_groups`: (rows, cols) float32 = q * scale of its group."""
    rows, cols = q.shape
    g = q.reshape(rows, scale.shape[1], -1)  # (rows, n_groups, group)
    out = np.multiply(g, scale.astype(np.float32)[..., None], dtype=np.float32)
    return out.reshape(rows, cols)


def load_weights(data) -> dict:
    """The model's weights from a safetensors file (bytes-like), float32, matrices as PyTorch
    stores them, (d_out, d_in).

    Accepts the original ``model.safetensors`` (float32, PyTorch names, with or without the
    ``bert.`` prefix) or the int8 file of build_scripts/minilm/quantise.py (each matrix
    ``name`` as int8 ``name`` plus float16 ``name.scale``).

    Returns:
        {"word": (vocab_size, d_model), "position": (n_positions, d_model), "token_type":
        (d_model,), "ln_emb": (gamma, beta), "layers": [6 dicts with W_Q, W_K, W_V, W_O
        (d_model, d_model), b_Q, b_K, b_V, b_O (d_model,), ln_1, ln_2 (gamma, beta),
        W_1 (d_mlp, d_model), b_1 (d_mlp,), W_2 (d_model, d_mlp), b_2 (d_model,)]}.

    Raises:
        ValueError: a tensor is missing (naming it) or the file is malformed.
    """
    t = read_safetensors(data)
    t = {k.removeprefix("bert."): v for k, v in t.items()}

    def get(name):
        if name in t and t[name].dtype == np.int8:
            return dequantise_groups(t[name], t[name + ".scale"])
        if name not in t:
            raise ValueError(f"the weights file has no tensor {name!r}")
        return np.asarray(t[name], dtype=np.float32)

    def ln(prefix):
        return get(prefix + ".weight"), get(prefix + ".bias")

    e = "embeddings."
    layers = []
    for i in range(CONFIG["n_layers"]):
        p = f"encoder.layer.{i}."
        a = p + "attention.self."
        layers.append(
            {
                "W_Q": get(a + "query.weight"),  # (d_model, d_model), [out, in]
                "W_K": get(a + "key.weight"),
                "W_V": get(a + "value.weight"),
                "b_Q": get(a + "query.bias"),  # (d_model,)
                "b_K": get(a + "key.bias"),
                "b_V": get(a + "value.bias"),
                "W_O": get(p + "attention.output.dense.weight"),
                "b_O": get(p + "attention.output.dense.bias"),
                "ln_1": ln(p + "attention.output.LayerNorm"),
                "W_1": get(p + "intermediate.dense.weight"),  # (d_mlp, d_model)
                "b_1": get(p + "intermediate.dense.bias"),  # (d_mlp,)
                "W_2": get(p + "output.dense.weight"),  # (d_model, d_mlp)
                "b_2": get(p + "output.dense.bias"),
                "ln_2": ln(p + "output.LayerNorm"),
            }
        )
    return {
        "word": get(e + "word_embeddings.weight"),
        "position": get(e + "position_embeddings.weight"),
        "token_type": get(e + "token_type_embeddings.weight")[0],  # one sentence: type 0
        "ln_emb": ln(e + "LayerNorm"),
        "layers": layers,
    }


# ------------------------------------------------------------------------------ the pieces


def layer_norm(x, gamma, beta, eps=CONFIG["layer_norm_eps"]):
    """LayerNorm over the last axis (Ba et al. 2016, "Layer Normalization"):
    (x - mean) / sqrt(var + eps) * gamma + beta, var the biased variance.

    x (..., d_model); gamma, beta (d_model,). Returns x's shape, float32."""
    mean = x.mean(axis=-1, keepdims=True)  # (..., 1)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)  # (..., 1)
    return ((x - mean) / np.sqrt(var + eps) * gamma + beta).astype(np.float32)


def _erf(x):
    """erf(x) by Abramowitz and Stegun 1964, formula 7.1.26 (error below 1.5e-7); NumPy has
    no vectorised erf and SciPy is too big to load for one function."""
    z = np.abs(x).astype(np.float64)
    t = 1.0 / (1.0 + 0.3275911 * z)
    poly = np.zeros_like(t)
    for a in (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592):
        poly = (poly + a) * t  # Horner: t (a1 + t (a2 + ... t a5))
    return np.sign(x) * (1.0 - poly * np.exp(-z * z))


def gelu(x):
    """GELU, erf form (Hendrycks and Gimpel 2016): x * (1 + erf(x / sqrt 2)) / 2, as BERT's
    ``hidden_act: "gelu"``. Any shape; float32 out."""
    return (0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))).astype(np.float32)


def linear(x, W, b):
    """x W^T + b: x (seq_len, d_in), W (d_out, d_in) as PyTorch stores it, b (d_out,)
    -> (seq_len, d_out). The product is `wasm_kernels.matmul_nt`: BLAS in CPython, a
    WebAssembly SIMD kernel in the browser (same numbers, to float32 rounding)."""
    return matmul_nt(x, W) + b


def embed(ids, w):
    """Token + position + token-type embeddings, then LayerNorm: (seq_len, d_model)."""
    n = len(ids)
    x = w["word"][ids] + w["position"][:n] + w["token_type"]  # (seq_len, d_model)
    return layer_norm(x, *w["ln_emb"])


def split_heads(t):
    """(seq_len, d_model) -> (n_heads, seq_len, d_head): head h gets columns h*d_head.."""
    seq_len, d_model = t.shape
    n_heads = CONFIG["n_heads"]
    return t.reshape(seq_len, n_heads, d_model // n_heads).transpose(1, 0, 2)


def attention_block(x, layer, head_scale=None):
    """Multi-head self-attention with BERT's weights (Vaswani et al. 2017, section 3.2.2).

    Args:
        x: (seq_len, d_model) float32, the residual stream.
        layer: one entry of ``load_weights(...)["layers"]``.
        head_scale: optional (n_heads,) factors multiplying each head's output before W_O
            (0 removes the head: a zero ablation; 1 leaves it). The head's own weights (its
            map) are unchanged; the layers after it see the difference.

    Returns:
        (update (seq_len, d_model) float32: Concat(heads) W_O^T + b_O, weights (n_heads,
        seq_len, seq_len) float64, [query, key]).
    """
    seq_len, d_model = x.shape
    q = split_heads(linear(x, layer["W_Q"], layer["b_Q"]))  # (n_heads, seq_len, d_head)
    k = split_heads(linear(x, layer["W_K"], layer["b_K"]))
    v = split_heads(linear(x, layer["W_V"], layer["b_V"]))
    z, weights = scaled_dot_product_attention(q, k, v)  # no mask: every key is visible
    if head_scale is not None:
        z = z * np.asarray(head_scale, dtype=np.float64)[:, None, None]
    concat = z.transpose(1, 0, 2).reshape(seq_len, d_model).astype(np.float32)
    return linear(concat, layer["W_O"], layer["b_O"]), weights


def attention_weights(x, layer):
    """Only the weights of `attention_block`: softmax(q k^T / sqrt(d_head)), the same
    numbers without computing values or outputs. x (seq_len, d_model) -> (n_heads,
    seq_len, seq_len) float64, [query, key]."""
    q = split_heads(linear(x, layer["W_Q"], layer["b_Q"]))  # (n_heads, seq_len, d_head)
    k = split_heads(linear(x, layer["W_K"], layer["b_K"]))
    return softmax(attention_logits(q, k), axis=-1)


def encoder_layer(x, layer, head_scale=None):
    """One post-LN BERT layer: attention, add, LayerNorm; MLP, add, LayerNorm.

    Args:
        x: (seq_len, d_model) float32, the residual stream.
        layer: one entry of ``load_weights(...)["layers"]``.
        head_scale: optional (n_heads,) factors for each head's output (`attention_block`).

    Returns:
        (x (seq_len, d_model) float32, weights (n_heads, seq_len, seq_len) float64).
    """
    update, weights = attention_block(x, layer, head_scale)
    x = layer_norm(x + update, *layer["ln_1"])  # (seq_len, d_model)
    hidden = gelu(linear(x, layer["W_1"], layer["b_1"]))  # (seq_len, d_mlp)
    x = layer_norm(x + linear(hidden, layer["W_2"], layer["b_2"]), *layer["ln_2"])
    return x, weights


def forward(ids, weights, head_scale=None, hidden_states=False):
    """Run the encoder on one sentence's token ids.

    Args:
        ids: sequence of seq_len ints in [0, vocab_size), [CLS] first and [SEP] last as
            `WordPiece.encode` gives them; 1 <= seq_len <= the positions in `weights`.
        weights: ``load_weights(...)``.
        head_scale: optional (n_layers, n_heads) array of factors for each head's output
            (see `encoder_layer`): 0 zeroes a head, 2 doubles it. Default: all 1.
        hidden_states: also return the residual stream after the embeddings and each layer.

    Returns:
        {"weights": (n_layers, n_heads, seq_len, seq_len) float32, [query, key], rows
        summing to 1}, plus "hidden_states": (n_layers + 1, seq_len, d_model) float32 when
        asked.

    Raises:
        ValueError: ids empty, out of range or too many; head_scale of the wrong shape or
            not finite.
    """
    ids = np.asarray(ids, dtype=np.int64)
    n_pos, vocab = len(weights["position"]), len(weights["word"])
    if ids.ndim != 1 or not 1 <= len(ids) <= n_pos:
        raise ValueError(f"ids must be 1 to {n_pos} token ids; got shape {ids.shape}")
    if ids.min() < 0 or ids.max() >= vocab:
        raise ValueError(f"token ids must be in [0, {vocab}); got {ids.min()}..{ids.max()}")
    shape = (CONFIG["n_layers"], CONFIG["n_heads"])
    if head_scale is not None:
        head_scale = np.asarray(head_scale, dtype=np.float64)
        if head_scale.shape != shape or not np.all(np.isfinite(head_scale)):
            raise ValueError(
                f"head_scale must be finite numbers of shape (n_layers, n_heads) = {shape}; "
                f"got shape {head_scale.shape}"
            )
    x = embed(ids, weights)  # (seq_len, d_model)
    states, maps = [x], []
    last = len(weights["layers"]) - 1
    for i, layer in enumerate(weights["layers"]):
        if i == last and not hidden_states:  # the rest of this layer changes no map
            maps.append(attention_weights(x, layer))
            break
        x, w = encoder_layer(x, layer, None if head_scale is None else head_scale[i])
        states.append(x)
        maps.append(w)  # (n_heads, seq_len, seq_len)
    out = {"weights": np.stack(maps).astype(np.float32)}
    if hidden_states:
        out["hidden_states"] = np.stack(states)
    return out
