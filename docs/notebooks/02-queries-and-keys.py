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
# # Queries and keys: companion notebook
#
# This notebook goes with the lesson *Queries and keys*. It was run when this site was
# built, so every output below is real. <a href="../02-queries-and-keys.ipynb"
# download>Download it as a Jupyter notebook (.ipynb)</a> to run it yourself: its first cell
# installs NumPy, Matplotlib and this site's `attention_labs` package with pip.
#
# ## Sizes
#
# `W_Q` and `W_K` have shape `(d_model, d_head)`. The published sizes of two models:

# %%
import matplotlib.pyplot as plt
import numpy as np
from attention_labs import attention_logits
from attention_labs.labs.query_picker import embeddings, projections

for name, d_model, n_heads in [("GPT-2 small", 768, 12), ("GPT-3 175B", 12288, 96)]:
    d_head = d_model // n_heads
    print(
        f"{name}: d_model {d_model}, d_head {d_head}, "
        f"{d_model // d_head}x narrower, W_Q holds {d_model * d_head:,} numbers"
    )

# %% [markdown]
# ## A dot product is lengths times a cosine
#
# $q \cdot k = \lVert q \rVert \lVert k \rVert \cos\theta$: the score of one query with
# keys at every angle, for two key lengths.

# %%
q = np.array([2.0, 1.0])
angles = np.linspace(0, 2 * np.pi, 361)
base = np.arctan2(q[1], q[0])
fig, ax = plt.subplots(figsize=(5, 2.6))
for length in (1.0, 2.0):
    keys = length * np.stack([np.cos(angles + base), np.sin(angles + base)], axis=-1)
    ax.plot(np.degrees(angles), keys @ q, label=f"|k| = {length:g}")
ax.axhline(0, color="0.6", lw=0.8)
ax.set_xlabel("angle between q and k (degrees)")
ax.set_ylabel("q · k")
ax.legend()
fig.tight_layout()
plt.show()

# %% [markdown]
# ## The score grid
#
# The lesson's query picker, rebuilt here: random embeddings $X$ (seq_len, d_model),
# random `W_Q`, `W_K` (d_model, d_head), then $Q = XW_Q$, $K = XW_K$ and
# $S = QK^\top$ (seq_len, seq_len), indexed `[query, key]`. **The head is random**: its
# scores show the computation, not anything learned.

# %%
tokens = ["The", "mole", "dug", "a", "tunnel", "under", "the", "lawn"]
X = embeddings(tokens, seed=0)
W_Q, W_K = projections(16, seed=0)
Q, K = X @ W_Q, X @ W_K
S = Q @ K.T
print("X", X.shape, "W_Q", W_Q.shape, "Q", Q.shape, "K", K.shape, "S", S.shape)
assert np.allclose(S, attention_logits(Q, K, scale=False))
print("symmetric:", np.allclose(S, S.T))

fig, ax = plt.subplots(figsize=(4.4, 3.8))
limit = np.abs(S).max()
image = ax.imshow(S, cmap="RdBu_r", vmin=-limit, vmax=limit)
ax.set_xticks(range(len(tokens)), tokens, rotation=45, ha="right")
ax.set_yticks(range(len(tokens)), tokens)
ax.set_xlabel("key")
ax.set_ylabel("query")
fig.colorbar(image, ax=ax, label="score q · k")
ax.set_title("Scores of a random head")
fig.tight_layout()
plt.show()
