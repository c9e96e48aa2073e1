"""Run a model and capture, for one padded batch, every layer's attention weights and, where
the architecture has a capture adapter (adapters/, `registry.ADAPTERS`), its q, k and v.

Everything here is the same for every architecture; what differs is in the adapters.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .inputs import PrecomputeError, Sentence
from .load import LoadedModel
from .registry import adapter_for
from .tokens import Tokens


@dataclass
class Run:
    """Float results for one sentence: weights (n_layers, n_heads, n, n) and q (n_layers,
    n_heads, n, d_head), k and v (n_layers, n_kv_heads, n, d_head) when the architecture has
    a capture adapter."""

    weights: np.ndarray
    q: np.ndarray | None = None
    k: np.ndarray | None = None
    v: np.ndarray | None = None
    scale: float | None = None
    extra: dict = field(default_factory=dict)


def split_heads(x, n_heads):
    """``(batch, seq_len, n_heads * d_head)`` -> ``(batch, n_heads, seq_len, d_head)``."""
    b, t, d = x.shape
    return x.reshape(b, t, n_heads, d // n_heads).permute(0, 2, 1, 3)


class Capture:
    """What the adapters' hooks record during one forward pass, by (layer, name)."""

    def __init__(self):
        self.saved: dict = {}

    def output(self, layer: int, name: str):
        """A forward hook keeping the module's output as ``name`` of ``layer``."""

        def hook(_module, _inputs, output):
            self.saved[(layer, name)] = output.detach()

        return hook

    def kwarg(self, layer: int, name: str, key: str):
        """A forward pre-hook (register it ``with_kwargs=True``) keeping keyword ``key``."""

        def hook(_module, _args, kwargs):
            self.saved[(layer, name)] = kwargs[key]

        return hook

    def layer(self, layer: int) -> dict:
        """Everything recorded for ``layer``, by name."""
        return {name: value for (at, name), value in self.saved.items() if at == layer}


def run_model(loaded: LoadedModel, batch: list[Tokens]) -> list[Run]:
    """Run one padded batch; return each sentence's real-token results as float64.

    Padding goes on the right and is masked out, so each sentence's weights equal a
    one-sentence run (within float error): padded keys get zero weight, and padded queries
    are cut off. q is (n_layers, n_heads, n, d_head); k and v are (n_layers, n_kv_heads, n,
    d_head): under GQA several query heads read one key/value head.
    """
    import torch

    tok = loaded.tokenizer
    pad = tok.pad_token_id if tok.pad_token_id is not None else (tok.eos_token_id or 0)
    width = max(len(t.ids) for t in batch)
    ids = torch.full((len(batch), width), pad, dtype=torch.long)
    mask = torch.zeros((len(batch), width), dtype=torch.long)
    for row, t in enumerate(batch):
        ids[row, : len(t.ids)] = torch.tensor(t.ids)
        mask[row, : len(t.ids)] = 1
    loaded.model.eval()  # again: a caller may have switched dropout back on
    adapter = adapter_for(loaded.config.model_type)
    scale = adapter.scale(loaded) if adapter else None
    capture = Capture()
    handles = adapter.hooks(loaded, capture) if scale is not None else []
    try:
        with torch.inference_mode():
            out = loaded.model(
                input_ids=ids.to(loaded.device),
                attention_mask=mask.to(loaded.device),
                output_attentions=True,
                use_cache=False,
            )
    finally:
        for h in handles:
            h.remove()
    if not out.attentions or out.attentions[0] is None:
        raise PrecomputeError(
            f"model {loaded.resolved.id!r} returned no attention weights; it must support "
            "attn_implementation='eager' and output_attentions=True"
        )
    weights = torch.stack(out.attentions, dim=1).double().cpu().numpy()  # (b, L, H, t, t)
    qkv = None
    if handles:
        q, k, v = [], [], []
        for layer in range(loaded.n_layers):
            parts = adapter.qkv(loaded, capture.layer(layer))
            for dest, part in zip((q, k, v), parts, strict=True):
                dest.append(part.double().cpu().numpy())
        qkv = [np.stack(x, axis=1) for x in (q, k, v)]  # (b, L, heads, t, d_head)
    runs = []
    for row, t in enumerate(batch):
        n = len(t.ids)
        run = Run(weights[row, :, :, :n, :n].copy())
        if qkv is not None:
            run.q, run.k, run.v = (x[row, :, :, :n, :].copy() for x in qkv)
            run.scale = scale
        runs.append(run)
    return runs


def check_finite(run: Run, tokens: Tokens, sentence: Sentence, model_id: str) -> None:
    """Raise PrecomputeError naming layer, head and query row of the first NaN/inf weight."""
    bad = ~np.isfinite(run.weights)
    if bad.any():
        layer, head, row, _key = (int(i) for i in np.argwhere(bad)[0])
        raise PrecomputeError(
            f"model {model_id!r}, sentence {sentence.id!r}: NaN or infinite attention weights "
            f"at layer {layer}, head {head}, query row {row} (token {tokens.text[row]!r}); "
            "check the model's weights"
        )


def check_qkv(run: Run, causal: bool, sentence: Sentence) -> bool:
    """Whether softmax(q kᵀ · scale, masked) reproduces the model's weights (1e-4), each query
    head h reading key head h // (n_heads // n_kv_heads) (GQA).

    Guards the export: vectors are only written when they rebuild the real pattern.
    """
    if run.q is None:
        return False
    group = run.q.shape[1] // run.k.shape[1]
    k = np.repeat(run.k, group, axis=1)
    logits = np.einsum("lhqd,lhkd->lhqk", run.q, k) * run.scale
    if causal:
        n = logits.shape[-1]
        logits = np.where(np.triu(np.ones((n, n), bool), 1), -np.inf, logits)
    logits -= logits.max(axis=-1, keepdims=True)
    p = np.exp(logits)
    p /= p.sum(axis=-1, keepdims=True)
    return bool(np.max(np.abs(p - run.weights)) < 1e-4)
