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
# # The attention pattern: companion notebook
#
# This notebook goes with the lesson *The attention pattern*. It was run when this site was
# built, so every output below is real. <a href="../03-attention-pattern.ipynb"
# download>Download it as a Jupyter notebook (.ipynb)</a> to run it yourself: its first cell
# installs NumPy, Matplotlib and this site's `attention_labs` package with pip.
#
# ## Softmax turns scores into weights
#
# For a row of scores $s$, softmax gives weights that are positive and sum to 1:
#
# $$\operatorname{softmax}(s)_j = \frac{e^{s_j}}{\sum_k e^{s_k}}$$

# %%
import matplotlib.pyplot as plt
import numpy as np
from attention_labs import causal_mask, entropy_bits, softmax

scores = np.array([2.0, 1.0, 0.1])
weights = softmax(scores)
print("weights:", weights.round(3), "sum:", weights.sum())
print(f"entropy: {entropy_bits(weights):.3f} bits")

# %% [markdown]
# ## Temperature
#
# Dividing the scores by a temperature $T$ before softmax sharpens the row ($T < 1$) or
# flattens it ($T > 1$) without changing its order.

# %%
for T in (0.5, 1.0, 2.0):
    print(f"T = {T}: {softmax(scores / T).round(3)}")

# %% [markdown]
# ## A whole pattern, scaled and causally masked
#
# With queries $Q$ and keys $K$ as rows, the pattern is
# $A = \operatorname{softmax}\left(QK^\top / \sqrt{d_{\text{head}}}\right)$, with every key
# to the right of its query masked out. Rows are queries, columns are keys.

# %%
tokens = ["The", "fluffy", "blue", "creature", "roamed"]
d_head = 16
rng = np.random.default_rng(0)
Q = rng.normal(size=(len(tokens), d_head))
K = rng.normal(size=(len(tokens), d_head))
pattern = softmax(Q @ K.T / np.sqrt(d_head), where=causal_mask(len(tokens)))
assert np.allclose(pattern.sum(axis=-1), 1.0)

fig, ax = plt.subplots(figsize=(4.5, 4))
image = ax.imshow(pattern, cmap="viridis", vmin=0, vmax=1)
ax.set_xticks(range(len(tokens)), tokens, rotation=45, ha="right")
ax.set_yticks(range(len(tokens)), tokens)
ax.set_xlabel("key")
ax.set_ylabel("query")
fig.colorbar(image, ax=ax, label="weight")
ax.set_title("A causal attention pattern")
fig.tight_layout()
plt.show()

# %% [markdown]
# The first query can only see itself, so its row is a single weight of 1 and its entropy
# is 0 bits; later rows spread their budget over more keys.

# %%
print("row entropies (bits):", entropy_bits(pattern).round(3))

# %% [markdown]
# ## Without the $\sqrt{d_{\text{head}}}$ scale, rows collapse and gradients vanish
#
# Random queries and keys with unit-variance components: the mean row entropy and the
# size of the softmax Jacobian $J = \operatorname{diag}(p) - p\,p^\top$ (its Frobenius
# norm, median over rows) for every width, with and without the scale. This is what the
# lesson's scaling lab computes (`attention_labs.labs.scaling`).

# %%
from attention_labs.labs import run_lab

res = run_lab("scaling", {"seq_len": 32})["result"]
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(8, 3), dpi=80)
for name, style in (("scaled", "-o"), ("unscaled", "--s")):
    ax1.plot(res["d_heads"], res[name]["entropy_bits"], style, label=name)
    ax2.plot(res["d_heads"], res[name]["gradient"], style, label=name)
for ax, label in ((ax1, "mean row entropy (bits)"), (ax2, "median ‖J‖_F")):
    ax.set_xscale("log", base=2)
    ax.set_xlabel("d_head")
    ax.set_ylabel(label)
    ax.legend()
fig.tight_layout()
plt.show()
