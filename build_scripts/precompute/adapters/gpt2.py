"""GPT-2 (``model_type`` "gpt2"): one fused ``c_attn`` projection per layer whose output is
q, k and v side by side, each ``d_model`` wide."""

from __future__ import annotations

from ..capture import split_heads


def scale(loaded) -> float | None:
    cfg = loaded.config
    if getattr(cfg, "scale_attn_by_inverse_layer_idx", False):
        return None  # a per-layer scale: not exported
    return loaded.d_head**-0.5 if cfg.scale_attn_weights else 1.0


def hooks(loaded, capture) -> list:
    return [
        block.attn.c_attn.register_forward_hook(capture.output(i, "qkv"))
        for i, block in enumerate(loaded.model.h)
    ]


def qkv(loaded, saved):
    q, k, v = saved["qkv"].split(loaded.d_model, dim=2)
    return (
        split_heads(q, loaded.n_heads),
        split_heads(k, loaded.n_kv_heads),
        split_heads(v, loaded.n_kv_heads),
    )
