"""BERT-like encoders (``model_type`` "bert", e.g. all-MiniLM-L6-v2): each layer's
``attention.self`` has separate ``query``, ``key`` and ``value`` projections; no GQA."""

from __future__ import annotations

from ..capture import split_heads


def scale(loaded) -> float:
    return loaded.d_head**-0.5


def hooks(loaded, capture) -> list:
    handles = []
    for i, block in enumerate(loaded.model.encoder.layer):
        attn = block.attention.self
        for name, module in (("q", attn.query), ("k", attn.key), ("v", attn.value)):
            handles.append(module.register_forward_hook(capture.output(i, name)))
    return handles


def qkv(loaded, saved):
    return tuple(split_heads(saved[name], loaded.n_heads) for name in ("q", "k", "v"))
