# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Inference: KV cache, MQA and GQA: companion notebook
#
# This notebook goes with the lesson *Inference: KV cache, MQA and GQA*. It was run when
# this site was built, so every output below is real. <a href="../09-kv-cache-mqa-gqa.ipynb"
# download>Download it as a Jupyter notebook (.ipynb)</a> to run it yourself: its first cell
# installs NumPy, Matplotlib and this site's `attention_labs` package with pip. PyTorch is
# optional.
#
# ## A random layer, and full causal attention
#
# Random embeddings and random `W_Q`, `W_K`, `W_V` (nothing here is trained): 6 tokens,
# 4 query heads of `d_head` = 4 and, to start with, 4 key/value heads (plain MHA).

# %%
import numpy as np
from attention_labs.labs.kv_cache import decode_step, full_causal_attention, heads, random_model

seq_len, n_heads, n_kv_heads, d_head = 6, 4, 4, 4
x, W_Q, W_K, W_V = random_model(seq_len, n_heads, n_kv_heads, d_head, seed=0)
full, weights = full_causal_attention(x, W_Q, W_K, W_V, n_heads, n_kv_heads)
print("x:", x.shape, " W_Q:", W_Q.shape, " W_K:", W_K.shape)
print("full causal outputs (n_heads, seq_len, d_head):", full.shape)
print("head 0's pattern, rows sum to 1:\n", weights[0].round(2))

# %% [markdown]
# ## Token by token, with a cache
#
# Each step projects its own token only, appends one key and one value row per key/value
# head, and lets its query rows attend to everything cached. The output equals row $t$ of
# full causal attention.

# %%
K_cache = np.zeros((n_kv_heads, 0, d_head))
V_cache = np.zeros((n_kv_heads, 0, d_head))
for t in range(seq_len):
    q = heads(x[t] @ W_Q, n_heads)  # (n_heads, d_head)
    k, v = heads(x[t] @ W_K, n_kv_heads), heads(x[t] @ W_V, n_kv_heads)
    out, w, K_cache, V_cache = decode_step(q, k, v, K_cache, V_cache)
    diff = np.abs(out - full[:, t]).max()
    print(f"step {t}: cache {K_cache.shape}, largest |cached - full| = {diff:.1e}")

# %% [markdown]
# ## Sharing keys and values: GQA and MQA
#
# With 2 key/value heads each is shared by 2 query heads; with 1, by all 4. Full causal
# attention repeats each key/value head for its group, and the cached steps still agree.

# %%
for n_kv in (2, 1):
    x, W_Q, W_K, W_V = random_model(seq_len, n_heads, n_kv, d_head, seed=1)
    full, _ = full_causal_attention(x, W_Q, W_K, W_V, n_heads, n_kv)
    Kc = Vc = np.zeros((n_kv, 0, d_head))
    worst = 0.0
    for t in range(seq_len):
        q = heads(x[t] @ W_Q, n_heads)
        out, _, Kc, Vc = decode_step(q, heads(x[t] @ W_K, n_kv), heads(x[t] @ W_V, n_kv), Kc, Vc)
        worst = max(worst, np.abs(out - full[:, t]).max())
    print(f"n_kv_heads = {n_kv}: cache {Kc.shape}, largest difference {worst:.1e}")

# %% [markdown]
# ## How many bytes
#
# $2 \times n_{\text{layers}} \times n_{\text{kv\_heads}} \times d_{\text{head}} \times
# \text{seq\_len} \times \text{bytes}$, for the decoders of the parameter calculator.

# %%
from attention_labs.labs.cache_size import DECODERS, cache_bytes, readable_bytes
from attention_labs.labs.param_calculator import PRESETS

for name in DECODERS:
    p = PRESETS[name]
    d_h = p["d_model"] // p["n_heads"]
    for label, kv in (("MHA", p["n_heads"]), ("as published", p["n_kv_heads"]), ("MQA", 1)):
        b = cache_bytes(p["n_layers"], kv, d_h, 4096, "fp16")
        print(
            f"{p['label']:>12} {label:>12} ({kv:>2} KV heads): {readable_bytes(b):>9}",
            "at 4,096 tokens",
        )

# %% [markdown]
# ## Against PyTorch (optional)
#
# `torch.nn.functional.scaled_dot_product_attention(..., is_causal=True, enable_gqa=True)`
# computes full causal attention with shared key/value heads; the cached steps match it
# (the site's tests check it to 1e-12 in float64).

# %%
try:
    import torch
except ImportError:
    print("torch is not installed here: skipped")
else:
    n_kv = 2
    x, W_Q, W_K, W_V = random_model(seq_len, n_heads, n_kv, d_head, seed=2)
    Q, K, V = (
        torch.from_numpy(heads(x @ W, n)) for W, n in ((W_Q, n_heads), (W_K, n_kv), (W_V, n_kv))
    )
    ref = torch.nn.functional.scaled_dot_product_attention(Q, K, V, is_causal=True, enable_gqa=True)
    Kc = Vc = np.zeros((n_kv, 0, d_head))
    worst = 0.0
    for t in range(seq_len):
        q = heads(x[t] @ W_Q, n_heads)
        out, _, Kc, Vc = decode_step(q, heads(x[t] @ W_K, n_kv), heads(x[t] @ W_V, n_kv), Kc, Vc)
        worst = max(worst, np.abs(out - ref[:, t].numpy()).max())
    print(f"largest |cached - torch| = {worst:.1e}")
