"""Capture adapters: one module per architecture, mapping its model onto q, k and v.

As TransformerLens's per-architecture adapters map every model onto the same ``hook_q``,
``hook_k``, ``hook_v`` and ``hook_pattern``, each adapter here tells the runner
(`build_scripts.precompute.capture.run_model`) where one architecture computes its queries,
keys and values, so that everything after (the check that they rebuild the model's own
pattern, the choice of heads, the asset) is written once. The pattern itself comes from the
model (``output_attentions=True``, eager attention) for every architecture.

An adapter module defines three functions; ``loaded`` is a `load.LoadedModel` (its
``model``, ``config``, ``n_heads``, ``n_kv_heads``, ``d_head``, ``d_model``):

``scale(loaded) -> float | None``
    the factor of ``q kᵀ`` before the softmax; None when this model's variant is not covered
    (its assets then carry no q, k, v).
``hooks(loaded, capture) -> list``
    registers PyTorch hooks on the model's modules that record what ``qkv`` needs, and
    returns their handles (the runner removes them): ``capture.output(layer, name)`` is a
    forward hook keeping a module's output, ``capture.kwarg(layer, name, key)`` a forward
    pre-hook (``with_kwargs=True``) keeping one keyword argument.
``qkv(loaded, saved) -> (q, k, v)``
    from one layer's recorded tensors (``saved[name]``), the queries ``(batch, n_heads,
    seq_len, d_head)`` and the keys and values ``(batch, n_kv_heads, seq_len, d_head)`` as
    the attention uses them (after RoPE for rotary models); ``capture.split_heads`` cuts
    ``(batch, seq_len, heads * d_head)`` into heads.

Register the module in `build_scripts.precompute.registry.ADAPTERS` under the model's
``config.model_type``. Its test: the exported q and k rebuild the model's weights
(`capture.check_qkv`), as in tests/build/test_precompute.py.
"""
