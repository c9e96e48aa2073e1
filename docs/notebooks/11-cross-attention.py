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
# # Cross-attention: companion notebook
#
# This notebook goes with the lesson *Cross-attention*. It was run when this site was built,
# so every output below is real. <a href="../11-cross-attention.ipynb" download>Download it
# as a Jupyter notebook (.ipynb)</a> to run it yourself: its first cell installs NumPy,
# Matplotlib and this site's `attention_labs` package with pip.
#
# The embeddings and weights are **random**, as in the lesson's lab: this is not a trained
# translator, and the patterns below are not alignments. The point is the shapes and the
# masks, which are the same in a trained model.

# %%
import numpy as np
from attention_labs import (
    causal_mask,
    cross_attention,
    multi_head_attention,
    padding_mask,
    scaled_dot_product_attention,
)

rng = np.random.default_rng(0)
source = ["the", "black", "cat", "sleeps", "PAD", "PAD"]  # English, padded for a batch
target = ["le", "chat", "noir", "dort"]  # French
seq_len_q, seq_len_k, d_model, d_head = len(target), len(source), 16, 8
X_t = rng.normal(size=(seq_len_q, d_model))  # the decoder's target tokens
X_s = rng.normal(size=(seq_len_k, d_model))  # the encoder's output for the source
W_Q, W_K, W_V = (rng.normal(size=(d_model, d_head)) / np.sqrt(d_model) for _ in range(3))

# %% [markdown]
# ## Queries from the target, keys and values from the source
#
# The pattern is rectangular: one row per target token, one column per source token.

# %%
Q, K, V = X_t @ W_Q, X_s @ W_K, X_s @ W_V
print("Q", Q.shape, "K", K.shape, "V", V.shape)
out, weights = scaled_dot_product_attention(Q, K, V)
print("weights", weights.shape, "output", out.shape)
print("row sums:", weights.sum(axis=-1).round(12))

# %% [markdown]
# ## The source padding mask
#
# The last two source tokens are padding: one boolean row over the source keys hides them
# from every target query. `padding_mask` gives it (True = a real token).

# %%
real = padding_mask([4], seq_len_k)[0]  # (seq_len_k,)
out, weights = cross_attention(X_t, X_s, W_Q, W_K, W_V, source_mask=real)
print(real.astype(int))
print(weights[0].round(3))  # (1 head, seq_len_q, seq_len_k): PAD columns are 0
assert np.all(weights[0][:, ~real] == 0.0)

# %% [markdown]
# ## Where the causal mask goes, and where it does not
#
# The decoder's self-attention on the target is causal: a square with its upper triangle
# hidden. A causal mask in cross-attention would be `np.tri(seq_len_q, seq_len_k)`: it
# compares positions of two different sentences, and here it hides every source word from
# the first target word but the first.

# %%
_, self_w = scaled_dot_product_attention(
    X_t @ W_Q, X_t @ W_K, X_t @ W_V, mask=causal_mask(seq_len_q)
)
print("decoder self-attention (causal):\n", self_w.round(2))
wrong = np.tri(seq_len_q, seq_len_k, dtype=bool) & real
_, wrong_w = scaled_dot_product_attention(Q, K, V, mask=wrong)
print("cross-attention with a causal mask (a mistake):\n", wrong_w.round(2))

# %% [markdown]
# ## A source with nothing real in it
#
# As in lesson 4, a row with no visible key gets all-zero weights and a zero output, never
# NaN.

# %%
nothing = np.zeros(seq_len_k, dtype=bool)
out0, w0 = cross_attention(X_t, X_s, W_Q, W_K, W_V, source_mask=nothing)
print(np.isnan(out0).any(), np.abs(out0).max(), np.abs(w0).max())

# %% [markdown]
# ## Self-attention is the special case source = target

# %%
W4 = {n: rng.normal(size=(d_model, d_model)) / 4 for n in ("W_Q", "W_K", "W_V", "W_O")}
a, wa = cross_attention(X_t, X_t, n_heads=2, **W4)
b, wb = multi_head_attention(X_t, n_heads=2, **W4)
print(f"{np.abs(a - b).max():.1e}", f"{np.abs(wa - wb).max():.1e}")

# %% [markdown]
# ## Keys and values of the source: computed once
#
# Generating the target one token at a time, each step brings one new query; K and V of the
# source are the ones computed above. The rows come out the same as all at once.

# %%
rows = [
    scaled_dot_product_attention(X_t[i : i + 1] @ W_Q, K, V, mask=real)[0][0]
    for i in range(seq_len_q)
]
full, _ = cross_attention(X_t, X_s, W_Q, W_K, W_V, source_mask=real)
print(f"{np.abs(np.stack(rows) - full).max():.1e}")

# %% [markdown]
# ## Against PyTorch (optional)
#
# With `torch` installed, `torch.nn.MultiheadAttention` with different query and key/value
# inputs and a `key_padding_mask` (True = PAD, the negation of ours) gives the same weights.
# The site's tests check it to 1e-12 in float64, with `kdim`/`vdim` and several heads.

# %%
try:
    import torch
except ImportError:
    print("torch is not installed here: skipped")
else:
    mha = torch.nn.MultiheadAttention(d_head, 1, bias=False, kdim=d_model, vdim=d_model,
                                      batch_first=True, dtype=torch.float64)  # fmt: skip
    with torch.no_grad():
        mha.q_proj_weight.copy_(torch.eye(d_head, dtype=torch.float64))
        mha.k_proj_weight.copy_(torch.from_numpy(W_K.T.copy()))
        mha.v_proj_weight.copy_(torch.from_numpy(W_V.T.copy()))
    src = torch.from_numpy(X_s)[None]
    _, ref = mha(
        torch.from_numpy(Q)[None], src, src, key_padding_mask=torch.from_numpy(~real)[None]
    )
    print(f"{np.abs(ref[0].detach().numpy() - weights[0]).max():.1e}")
