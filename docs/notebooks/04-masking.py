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
# # Masking: companion notebook
#
# This notebook goes with the lesson *Masking*. It was run when this site was built, so
# every output below is real. <a href="../04-masking.ipynb" download>Download it as a
# Jupyter notebook (.ipynb)</a> to run it yourself: its first cell installs NumPy,
# Matplotlib and this site's `attention_labs` package with pip.
#
# ## Mask before softmax, not after
#
# A mask is a boolean `[query, key]` grid, True where the query may attend. Hidden scores
# become $-\infty$ before softmax, so the visible keys share the whole weight.

# %%
import matplotlib.pyplot as plt
import numpy as np
from attention_labs import causal_mask, padding_mask, sliding_window_mask, softmax

row = np.array([1.0, 3.0, 2.0, 4.0])  # the third query's scores for keys 1..4
visible = causal_mask(4)[2]
before = softmax(row, where=visible)
after = softmax(row) * visible
print("masked before softmax:", before.round(3), "sum", before.sum())
print("zeroed after softmax: ", after.round(3), "sum", after.sum().round(3))

# %% [markdown]
# ## Three masks on one grid
#
# Random scores for 10 tokens, under a causal mask, a padding mask (the last 3 tokens
# are padding) and a sliding window of 3 keys. Every row still sums to 1.

# %%
seq_len = 10
scores = np.random.default_rng(0).normal(scale=2.0, size=(seq_len, seq_len))
masks = {
    "causal": causal_mask(seq_len),
    "padding (3 pads)": np.broadcast_to(padding_mask([seq_len - 3], seq_len), (seq_len, seq_len)),
    "sliding window (3)": sliding_window_mask(seq_len, 3),
}
fig, axes = plt.subplots(1, 3, figsize=(9, 3.2), dpi=80)
for ax, (name, mask) in zip(axes, masks.items(), strict=True):
    weights = softmax(scores, where=mask)
    assert np.allclose(weights.sum(axis=-1), 1.0)
    ax.imshow(np.where(mask, weights, np.nan), cmap="viridis", vmin=0, vmax=1)
    ax.set_title(f"{name}: keeps {mask.sum()} of {mask.size}")
    ax.set_xlabel("key")
    ax.set_ylabel("query")
fig.tight_layout()
plt.show()

# %% [markdown]
# ## What each mask costs
#
# The entries a mask keeps, against the full grid: causal keeps about half (still
# quadratic), a sliding window keeps at most `window` per row (linear).

# %%
print(f"{'seq_len':>8} {'full':>6} {'causal':>7} {'window 8':>9}")
for n in (8, 16, 32, 64):
    causal, window = causal_mask(n).sum(), sliding_window_mask(n, 8).sum()
    print(f"{n:>8} {n * n:>6} {causal:>7} {window:>9}")

# %% [markdown]
# ## A row with nothing to see
#
# With $-\infty$ and a plain softmax it is NaN; with $-10^9$ it is uniform; this
# project's `softmax(..., where=mask)` returns zeros.

# %%
scores3 = np.array([1.0, 2.0, 3.0])
nothing = np.zeros(3, dtype=bool)
with np.errstate(invalid="ignore"):
    hidden = np.where(nothing, scores3, -np.inf)
    plain = np.exp(hidden - hidden.max()) / np.exp(hidden - hidden.max()).sum()
print("-inf, plain softmax:", plain)
print("-1e9:               ", softmax(np.where(nothing, scores3, -1e9)).round(3))
print("this project:       ", softmax(scores3, where=nothing))
