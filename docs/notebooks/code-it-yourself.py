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
# # Code it yourself: companion notebook
#
# This notebook goes with the page *Code it yourself*. It was run when this site was built,
# so every output below is real. <a href="../code-it-yourself.ipynb" download>Download it as
# a Jupyter notebook (.ipynb)</a> to run it yourself: its first cell installs NumPy,
# Matplotlib and this site's `attention_labs` package with pip. PyTorch is needed for the
# comparisons (`pip install torch`; without it, the cells that need it say so and skip).
#
# It builds the page's head and multi-head layer again, in NumPy, on the same random inputs
# as lessons 5 and 6, and compares them with `torch.nn.functional.scaled_dot_product_attention`
# and `torch.nn.MultiheadAttention`. Everything runs in float64, so "agrees" means within
# $10^{-12}$.

# %%
import numpy as np
from attention_labs.labs import eight_heads, value_update

try:
    import torch
except ImportError:  # the site can be built without PyTorch: the comparisons are skipped
    torch = None
    print("PyTorch is not installed here: the comparisons with PyTorch below are skipped.")
else:
    print("PyTorch is installed: the cells below compare with it.")

TOL = 1e-12


def agree(ours, theirs):
    """True when two arrays (NumPy or torch) are equal within TOL."""
    theirs = theirs.detach().numpy() if torch is not None and torch.is_tensor(theirs) else theirs
    return bool(np.allclose(ours, theirs, rtol=0, atol=TOL))


# %% [markdown]
# The page's cells draw a pattern with `show_heatmap(weights, tokens, title=...)`, a helper
# that the site's cells provide (`attention_labs.cells`); outside the site it has nothing to
# draw on. So that code pasted from the page runs here too, this one prints the weights as a
# table instead, one row per query and one column per key.


# %%
def show_heatmap(weights, tokens=None, keys=None, title=""):
    """Print weights [query, key] as a table: the page's show_heatmap, in text."""
    w = np.asarray(weights, dtype=float)
    rows = [str(t) for t in tokens] if tokens is not None else [str(i) for i in range(len(w))]
    if keys is None:
        keys = tokens if tokens is not None and w.shape[0] == w.shape[1] else None
    cols = [str(t) for t in keys] if keys is not None else [str(j) for j in range(w.shape[1])]
    width = max(len(t) for t in rows)
    if title:
        print(title)
    print(" " * width, " ".join(f"{c[:6]:>6}" for c in cols))
    for label, row in zip(rows, w):
        print(f"{label:>{width}}", " ".join(f"{x:6.3f}" for x in row))


# %% [markdown]
# ## One head in NumPy
#
# Lesson 5's inputs: eight tokens, `d_model` = 16, `d_head` = 4, random matrices. The mask
# sets the logits of later keys to $-\infty$ before the softmax.


# %%
def softmax_keys(logits):
    z = logits - logits.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def attention_head(X, W_Q, W_K, W_V, W_O, causal=False, b_Q=0.0):
    Q, K, V = X @ W_Q + b_Q, X @ W_K, X @ W_V  # (seq_len, d_head) each
    logits = Q @ K.T / np.sqrt(Q.shape[-1])  # (seq_len, seq_len), [query, key]
    if causal:
        logits = np.where(np.tril(np.ones(logits.shape, dtype=bool)), logits, -np.inf)
    weights = softmax_keys(logits)  # rows sum to 1
    return weights @ V @ W_O, weights, weights @ V


tokens = ["The", "fluffy", "blue", "creature", "roamed", "the", "verdant", "forest"]
X = value_update.embeddings(tokens, 0)
W = value_update.weights(4, 0)
for causal in (False, True):
    delta, weights, O = attention_head(X, W["W_Q"], W["W_K"], W["W_V"], W["W_O"], causal=causal)
    print(f"causal={causal}: weights {weights.shape}, O {O.shape}, delta {delta.shape}")

# %% [markdown]
# ## The head against `scaled_dot_product_attention`
#
# PyTorch's function takes $Q$, $K$, $V$ and returns the weighted values $O$
# (`is_causal=True` applies the causal mask). $\Delta = O W_O$ is then one more product.

# %%
if torch is None:
    print("skipped: PyTorch is not installed")
else:
    Q, K, V = (torch.from_numpy(X @ W[name]) for name in ("W_Q", "W_K", "W_V"))
    for causal in (False, True):
        delta, _, O = attention_head(X, W["W_Q"], W["W_K"], W["W_V"], W["W_O"], causal=causal)
        theirs = torch.nn.functional.scaled_dot_product_attention(Q, K, V, is_causal=causal)
        print(f"causal={causal}: O agrees with PyTorch: {agree(O, theirs)}")
        print(f"causal={causal}: delta agrees: {agree(delta, theirs.numpy() @ W['W_O'])}")

# %% [markdown]
# ## The multi-head layer in NumPy
#
# Lesson 6's eight heads on six tokens: `d_model` = 64, 8 heads of `d_head` = 8, and a query
# bias `b_Q` for the first-token head. Split, attend in every head, concatenate, $W_O$.

# %%
tokens6 = ["The", "fluffy", "blue", "creature", "roamed", "away"]
X6 = eight_heads.embeddings(tokens6, 0)
L = eight_heads.layer_weights(0)
seq_len, d_model = X6.shape
n_heads = 8
d_head = d_model // n_heads


def split_heads(t):  # (seq_len, d_model) -> (n_heads, seq_len, d_head)
    return t.reshape(seq_len, n_heads, d_head).transpose(1, 0, 2)


q = split_heads(X6 @ L["W_Q"] + L["b_Q"])
k, v = split_heads(X6 @ L["W_K"]), split_heads(X6 @ L["W_V"])
weights6 = softmax_keys(q @ k.transpose(0, 2, 1) / np.sqrt(d_head))  # (n_heads, seq_len, seq_len)
concat = (weights6 @ v).transpose(1, 0, 2).reshape(seq_len, d_model)  # (seq_len, d_model)
output = concat @ L["W_O"]
print("q", q.shape, "weights", weights6.shape, "concat", concat.shape, "output", output.shape)
total = np.zeros_like(output)
for h in range(n_heads):
    c = slice(h * d_head, (h + 1) * d_head)  # head h's block of columns (rows of W_O)
    W_h = [L["W_Q"][:, c], L["W_K"][:, c], L["W_V"][:, c], L["W_O"][c, :]]
    total += attention_head(X6, *W_h, b_Q=L["b_Q"][c])[0]
print("the heads' single-head updates add up to the output:", agree(total, output))

# %% [markdown]
# ## The layer against `torch.nn.MultiheadAttention`
#
# PyTorch computes $x W^{\top} + b$, so it holds the transposes: `in_proj_weight` is
# $W_Q^{\top}$, $W_K^{\top}$, $W_V^{\top}$ stacked, `out_proj.weight` is $W_O^{\top}$, and
# the query bias is the first third of `in_proj_bias`. Its input is
# `(seq_len, batch, d_model)`; `average_attn_weights=False` returns every head's weights.

# %%
if torch is None:
    print("skipped: PyTorch is not installed")
else:
    mha = torch.nn.MultiheadAttention(d_model, n_heads, bias=True, dtype=torch.float64)
    with torch.no_grad():
        stacked = np.concatenate([L["W_Q"], L["W_K"], L["W_V"]], axis=1).T  # (3 d_model, d_model)
        mha.in_proj_weight.copy_(torch.from_numpy(stacked.copy()))
        mha.in_proj_bias.copy_(torch.from_numpy(np.concatenate([L["b_Q"], np.zeros(2 * d_model)])))
        mha.out_proj.weight.copy_(torch.from_numpy(L["W_O"].T.copy()))
        mha.out_proj.bias.zero_()
    x = torch.from_numpy(X6)[:, None, :]  # (seq_len, batch=1, d_model)
    theirs, their_weights = mha(x, x, x, average_attn_weights=False)
    print("output agrees with PyTorch:", agree(output, theirs[:, 0]))
    print("every head's weights agree:", agree(weights6, their_weights[0]))
