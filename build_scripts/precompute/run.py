"""One model over every sentence: tokens, one-sentence runs, checks, statistics, the chosen
q/k/v heads, and the assets, written by attention_labs.maps (the one writer of the format).

Runs are deterministic: the same inputs on the same device give byte-identical assets,
whatever the batch size (every written number comes from a one-sentence forward pass, no
padding; the batched pass is timed and checked against them).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
from attention_labs import maps

from .capture import Run, check_finite, check_qkv, run_model
from .inputs import PrecomputeError, Sentence
from .load import LoadedModel
from .tokens import Tokens, tokenize

SCRIPT = "build_scripts/precompute"  # the provenance's script: python -m build_scripts.precompute


@dataclass
class ModelResult:
    loaded: LoadedModel
    assets: dict  # sentence id -> asset dict
    seconds: float
    sentences_per_second: float
    runs: list = field(default_factory=list)  # the one-sentence float results, in order


def model_info(loaded: LoadedModel) -> maps.ModelInfo:
    """What the assets say of the model, from its config and files."""
    cfg = loaded.config
    return maps.ModelInfo(
        id=loaded.resolved.id,
        slug=loaded.resolved.slug,
        architecture=(cfg.architectures or [type(loaded.model).__name__])[0],
        model_type=cfg.model_type,
        d_model=loaded.d_model,
        d_head=loaded.d_head,
        max_positions=loaded.max_positions,
        weights_sha256=loaded.weights_sha256,
        weights_files=loaded.weights_files,
        source=loaded.resolved.source,
        n_kv_heads=loaded.n_kv_heads,
    )


def provenance(loaded: LoadedModel) -> maps.Provenance:
    import torch
    import transformers

    return maps.Provenance(
        script=SCRIPT,
        torch=torch.__version__,
        transformers=transformers.__version__,
        device=loaded.device.type,
        dtype="float32",
    )


def build_asset(
    loaded: LoadedModel,
    sentence: Sentence,
    tokens: Tokens,
    run: Run,
    stats: dict,
    causal: bool,
    qkv_heads: list[dict],
) -> dict:
    """The asset dict for one sentence (attention_labs.maps.build_asset)."""
    return maps.build_asset(
        sentence=sentence.as_asset(),
        model=model_info(loaded),
        tokens=tokens,
        weights=run.weights,
        causal=causal,
        provenance=provenance(loaded),
        stats=stats,
        scale=run.scale,
        qkv_heads=qkv_heads,
        q=run.q,
        k=run.k,
        v=run.v,
    )


def precompute_model(
    loaded: LoadedModel,
    sentences: list[Sentence],
    batch_size: int | None = None,
    batched_pass: bool = True,
) -> ModelResult:
    """Tokenize, run, check and pack every sentence for one model.

    Every number written comes from a one-sentence forward pass (no padding), so the bytes
    do not depend on `batch_size` (padding changes the shapes of the matrix products, and
    with them the last bits of q, k, v and the statistics). The batched pass (batch_size
    sentences at a time) is what `seconds` times, and its weights must agree with the
    one-sentence ones within 1e-4; `batched_pass=False` skips it (the assets are the same)
    and times the one-sentence passes instead.
    """
    import torch

    tokens = [tokenize(loaded, s) for s in sentences]
    if batch_size is None:
        batch_size = len(sentences) if loaded.device.type == "cuda" else 8
    if batch_size < 1:
        raise PrecomputeError(f"--batch-size {batch_size}: use 1 or more")
    start = time.perf_counter()
    runs = [run_model(loaded, [t])[0] for t in tokens]
    seconds = time.perf_counter() - start
    for run, tok, sentence in zip(runs, tokens, sentences, strict=True):
        check_finite(run, tok, sentence, loaded.resolved.id)
    batched: list[Run] = runs
    if batched_pass:
        start = time.perf_counter()
        batched = []
        for i in range(0, len(tokens), batch_size):
            batched.extend(run_model(loaded, tokens[i : i + batch_size]))
        if loaded.device.type == "cuda":
            torch.cuda.synchronize()
        seconds = time.perf_counter() - start
    for alone, run, sentence in zip(runs, batched, sentences, strict=True):
        error = float(np.max(np.abs(alone.weights - run.weights)))
        if not error < 1e-4:
            raise PrecomputeError(
                f"model {loaded.resolved.id!r}, sentence {sentence.id!r}: the batched pass "
                f"differs from the one-sentence pass by {error:.2g}; check the padding mask"
            )
    causal = all(np.all(np.triu(r.weights, k=1) == 0) for r in runs if r.weights.shape[-1] > 1)
    stats = [
        maps.head_statistics(r.weights, t.ids, t.special) for r, t in zip(runs, tokens, strict=True)
    ]
    heads = []
    if all(check_qkv(r, causal, s) for r, s in zip(runs, sentences, strict=True)):
        heads = maps.choose_qkv_heads(stats, loaded.n_heads)
    assets = {}
    for sentence, tok, run, st in zip(sentences, tokens, runs, stats, strict=True):
        assets[sentence.id] = build_asset(loaded, sentence, tok, run, st, causal, heads)
    return ModelResult(loaded, assets, seconds, len(sentences) / max(seconds, 1e-9), runs)
