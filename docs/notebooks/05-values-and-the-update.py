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
# # Values and the update: companion notebook
#
# This notebook goes with the lesson *Values and the update*. It was run when this site was
# built, so every output below is real. <a href="../05-values-and-the-update.ipynb"
# download>Download it as a Jupyter notebook (.ipynb)</a> to run it yourself: its first cell
# installs NumPy, Matplotlib and this site's `attention_labs` package with pip.
#
# The embeddings and weights are random (synthetic), as in the lesson's lab: the point is
# the arithmetic of one head, which is the same in a trained model.

# %%
import numpy as np
from attention_labs import scaled_dot_product_attention, softmax

rng = np.random.default_rng(0)
tokens = ["The", "fluffy", "blue", "creature", "roamed"]
seq_len, d_model, d_head = len(tokens), 16, 4
X = rng.normal(size=(seq_len, d_model))  # one embedding per row
W_Q, W_K, W_V = (rng.normal(size=(d_model, d_head)) / np.sqrt(d_model) for _ in range(3))
W_O = rng.normal(size=(d_head, d_model)) / np.sqrt(d_head)
print("X", X.shape, "W_V", W_V.shape, "W_O", W_O.shape)

# %% [markdown]
# ## Queries and keys make the pattern; values are what moves
#
# $A = \operatorname{softmax}(QK^\top/\sqrt{d_{\text{head}}})$, rows = queries, each row sums
# to 1. The values $V = XW_V$ are a separate projection.

# %%
Q, K, V = X @ W_Q, X @ W_K, X @ W_V  # (seq_len, d_head) each
A = softmax(Q @ K.T / np.sqrt(d_head))  # (seq_len, seq_len)
print("row sums:", A.sum(axis=-1))
i = tokens.index("creature")
print("weights of 'creature':", {t: round(float(w), 3) for t, w in zip(tokens, A[i], strict=True)})

# %% [markdown]
# ## The weighted sum, W_O, and the residual add
#
# $o_i = \sum_j A_{ij} v_j$, $\Delta_i = o_i W_O$, and the new embedding is $x_i + \Delta_i$.

# %%
o_i = sum(A[i, j] * V[j] for j in range(seq_len))  # the sum, written out
delta_i = o_i @ W_O
out, _ = scaled_dot_product_attention(Q, K, V)  # the same for every query at once
print("o_i matches A V:", np.allclose(o_i, out[i]))
print("|x_i| =", np.linalg.norm(X[i]).round(3), " |delta_i| =", np.linalg.norm(delta_i).round(3))
updated = X + out @ W_O  # every token's embedding plus its update
print("updated", updated.shape)

# %% [markdown]
# ## The value map is low rank
#
# $W_V W_O$ is $d_{\text{model}} \times d_{\text{model}}$ but has rank at most $d_{\text{head}}$,
# so all the updates of this head lie in one subspace of at most $d_{\text{head}}$ dimensions.

# %%
print("rank of W_V W_O:", np.linalg.matrix_rank(W_V @ W_O), "of", d_model)
print("rank of all the updates:", np.linalg.matrix_rank(out @ W_O))
