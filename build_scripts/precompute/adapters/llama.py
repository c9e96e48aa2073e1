"""Llama-like decoders (``model_type`` "llama", e.g. SmolLM2): separate ``q_proj``,
``k_proj`` and ``v_proj``, grouped-query attention (fewer key/value heads), and RoPE applied
to q and k inside the attention, with the cos/sin the model passes each layer as
``position_embeddings``: kept here and applied with the model's own
``apply_rotary_pos_emb``, so q and k are the vectors after RoPE."""

from __future__ import annotations

import sys

from ..capture import split_heads


def scale(loaded) -> float:
    return float(loaded.model.layers[0].self_attn.scaling)


def hooks(loaded, capture) -> list:
    handles = []
    for i, block in enumerate(loaded.model.layers):
        attn = block.self_attn
        for name, module in (("q", attn.q_proj), ("k", attn.k_proj), ("v", attn.v_proj)):
            handles.append(module.register_forward_hook(capture.output(i, name)))
        hook = capture.kwarg(i, "rope", "position_embeddings")
        handles.append(attn.register_forward_pre_hook(hook, with_kwargs=True))
    return handles


def qkv(loaded, saved):
    q = split_heads(saved["q"], loaded.n_heads)
    k = split_heads(saved["k"], loaded.n_kv_heads)
    v = split_heads(saved["v"], loaded.n_kv_heads)
    rope = sys.modules[type(loaded.model).__module__].apply_rotary_pos_emb
    cos, sin = saved["rope"]
    q, k = rope(q, k, cos, sin)
    return q, k, v
