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
# # Multi-head attention: companion notebook
#
# This notebook goes with the lesson *Multi-head attention*. It was run when this site was
# built, so every output below is real. <a href="../06-multi-head-attention.ipynb"
# download>Download it as a Jupyter notebook (.ipynb)</a> to run it yourself: its first cell
# installs NumPy, Matplotlib and this site's `attention_labs` package with pip.
#
# The weights are random (synthetic); the shapes and the identities are what matter.

# %%
import numpy as np
from attention_labs import multi_head_attention, softmax

rng = np.random.default_rng(0)
seq_len, d_model, n_heads = 6, 16, 4
d_head = d_model // n_heads
x = rng.normal(size=(seq_len, d_model))
W_Q, W_K, W_V, W_O = (rng.normal(size=(d_model, d_model)) / np.sqrt(d_model) for _ in range(4))
print("d_head =", d_head)

# %% [markdown]
# ## One projection, then a reshape to (n_heads, seq_len, d_head)


# %%
def split_heads(t):
    return t.reshape(seq_len, n_heads, d_head).transpose(1, 0, 2)


def merge_heads(t):
    return t.transpose(1, 0, 2).reshape(seq_len, d_model)


q, k, v = (split_heads(x @ W) for W in (W_Q, W_K, W_V))
print("q", q.shape)
A = softmax(q @ k.transpose(0, 2, 1) / np.sqrt(d_head))  # (n_heads, seq_len, seq_len)
heads = A @ v  # (n_heads, seq_len, d_head)
out = merge_heads(heads) @ W_O  # concatenate, then W_O
print("pattern", A.shape, "heads", heads.shape, "output", out.shape)

# %% [markdown]
# ## Concatenate-then-W_O is a sum over heads
#
# $\operatorname{Concat}(O^1,\dots,O^h)W_O = \sum_h O^h W_O^h$, with $W_O^h$ the rows of $W_O$
# that meet head $h$'s block.

# %%
per_head = [heads[h] @ W_O[h * d_head : (h + 1) * d_head] for h in range(n_heads)]
print("sum of heads equals output:", np.allclose(sum(per_head), out, atol=1e-12))
reference, _ = multi_head_attention(x, W_Q, W_K, W_V, W_O, n_heads=n_heads)
print("equals attention_labs.multi_head_attention:", np.allclose(out, reference, atol=1e-12))
print(
    "each head's share (norm, query 0):", [round(float(np.linalg.norm(p[0])), 3) for p in per_head]
)

# %% [markdown]
# ## Parameters do not depend on n_heads
#
# Build a layer head by head, as separate arrays: for `h` heads of `d_head = d_model / h`,
# each head has its own `W_Q`, `W_K`, `W_V` of shape `(d_model, d_head)` and its own block of
# `W_O`, `(d_head, d_model)`. The shapes change with `h`; count the numbers the arrays hold,
# then join the blocks and run the layer to see that it is a working multi-head layer.

# %%
for h in (1, 2, 4, 8, 16):
    d_h = d_model // h
    blocks = {
        name: [rng.normal(size=(d_model, d_h)) for _ in range(h)] for name in ("W_Q", "W_K", "W_V")
    }
    blocks["W_O"] = [rng.normal(size=(d_h, d_model)) for _ in range(h)]
    count = sum(a.size for arrays in blocks.values() for a in arrays)
    joined = [np.concatenate(blocks[n], axis=1) for n in ("W_Q", "W_K", "W_V")]
    joined.append(np.concatenate(blocks["W_O"], axis=0))
    layer_out, _ = multi_head_attention(x, *joined, n_heads=h)
    shapes = ", ".join(f"{n} {h} × {blocks[n][0].shape}" for n in ("W_Q", "W_K", "W_V", "W_O"))
    print(f"n_heads {h:2d}: {shapes}: {count} parameters, output {layer_out.shape}")
print("4 * d_model**2 =", 4 * d_model**2)
