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
# # Position: companion notebook
#
# This notebook goes with the lesson *Position*. It was run when this site was built, so
# every output below is real. <a href="../10-position.ipynb" download>Download it as a
# Jupyter notebook (.ipynb)</a> to run it yourself: its first cell installs NumPy,
# Matplotlib and this site's `attention_labs` package with pip.
#
# ## Without positions, attention is permutation-equivariant
#
# A random head (random `W_Q`, `W_K`, `W_V`, not trained) on random embeddings. Shuffling
# the rows of $X$ by a permutation $P$ gives the pattern $P A P^\top$ and the output $P O$.

# %%
import matplotlib.pyplot as plt
import numpy as np
from attention_labs import apply_rope, attention_logits, sinusoidal_positions, softmax

plt.rcParams["figure.dpi"] = 72  # small images keep the page light

rng = np.random.default_rng(0)
seq_len, d_model, d_head = 6, 16, 8
X = rng.normal(size=(seq_len, d_model))
W_Q, W_K, W_V = (rng.normal(size=(d_model, d_head)) / np.sqrt(d_model) for _ in range(3))


def head(X):
    A = softmax(attention_logits(X @ W_Q, X @ W_K))  # (seq_len, seq_len) [query, key]
    return A, A @ (X @ W_V)  # output (seq_len, d_head)


order = rng.permutation(seq_len)
A, O = head(X)
A2, O2 = head(X[order])
print("order:", order)
print("max |A' - P A P^T| =", np.abs(A2 - A[order][:, order]).max())
print("max |O' - P O|     =", np.abs(O2 - O[order]).max())

# %% [markdown]
# Equivariant, not invariant: the outputs as a list did change; each one moved with its token.

# %%
print("max |O' - O| (no un-shuffling) =", np.abs(O2 - O).max())

# %% [markdown]
# ## Adding positions breaks the symmetry
#
# Add the sinusoidal encoding of each row's position (Vaswani et al. 2017) before the head:
# a token's vector now depends on where it is, and the shuffled pattern is no longer a
# reordering of the old one.

# %%
PE = sinusoidal_positions(np.arange(seq_len), d_model)  # (seq_len, d_model)
A_pos, _ = head(X + PE)
A2_pos, _ = head(X[order] + PE)
print("with positions, max |A' - P A P^T| =", np.abs(A2_pos - A_pos[order][:, order]).max())

# %% [markdown]
# ## The sinusoidal encodings
#
# $\mathrm{PE}_{p,2i} = \sin(p\,\omega_i)$, $\mathrm{PE}_{p,2i+1} = \cos(p\,\omega_i)$ with
# $\omega_i = 10000^{-2i/d_{\text{model}}}$. Rows are positions, columns dimensions.

# %%
pe = sinusoidal_positions(np.arange(64), 64)
fig, ax = plt.subplots(figsize=(5, 3.5))
im = ax.imshow(pe, cmap="RdBu", vmin=-1, vmax=1, aspect="auto")
ax.set_xlabel("dimension")
ax.set_ylabel("position")
fig.colorbar(im)
plt.show()

# %% [markdown]
# The dot product of two encodings is $\sum_i \cos((m - n)\,\omega_i)$: it depends on the
# offset only.

# %%
for m, n in [(10, 3), (50, 43), (7, 0)]:
    print(f"PE[{m}] . PE[{n}] = {pe[m] @ pe[n]:.6f}")

# %% [markdown]
# ## RoPE: the score depends only on the offset
#
# Rotating pair $i$ of a query at position $m$ by $m\theta_i$ and of a key at $n$ by
# $n\theta_i$ gives $(R_m q)\cdot(R_n k) = q^\top R_{n-m} k$ (Su et al. 2021).

# %%
q, k = rng.normal(size=64), rng.normal(size=64)
offsets = np.arange(0, 200)
plt.figure(figsize=(5, 3))
for n in (0, 1000):
    s = [apply_rope(q, n + o) @ apply_rope(k, n) for o in offsets]
    plt.plot(offsets, s, label=f"key at n = {n}", linestyle="-" if n == 0 else "--")
plt.xlabel("offset m - n")
plt.ylabel("q . k")
plt.legend()
plt.show()

# %% [markdown]
# The same check with numbers: shift both positions by 1000 and the score is unchanged.

# %%
print(apply_rope(q, 17) @ apply_rope(k, 5), apply_rope(q, 1017) @ apply_rope(k, 1005))
