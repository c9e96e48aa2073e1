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
# # Cost: the n² wall and FlashAttention: companion notebook
#
# This notebook goes with the lesson *Cost: the n² wall and FlashAttention*. It was run when
# this site was built, so every output below is real.
# <a href="../08-cost-and-flashattention.ipynb" download>Download it as a Jupyter notebook
# (.ipynb)</a> to run it yourself: its first cell installs NumPy, Matplotlib and this site's
# `attention_labs` package with pip.
#
# ## The square
#
# One head's pattern has $\text{seq\_len}^2$ entries and its two products take about
# $4 \cdot \text{seq\_len}^2 \cdot d_{\text{head}}$ FLOPs.

# %%
for seq_len in (1024, 2048, 4096, 131072):
    print(
        f"seq_len {seq_len:>7,}: pattern {seq_len**2:>15,} entries, "
        f"work {4 * seq_len**2 * 128:>19,} FLOPs (d_head 128)"
    )
print("2K -> 128K:", (131072 // 2048) ** 2, "times")

# %% [markdown]
# ## The online softmax on one row
#
# Keep a running maximum $m$, sum $\ell$ (`ell`) and output $o$; when a tile raises the maximum,
# multiply the old $\ell$ and $o$ by $e^{m - m'}$.

# %%
import numpy as np
from attention_labs import softmax

rng = np.random.default_rng(0)
scores = rng.normal(size=12) * 3
values = rng.normal(size=(12, 2))
m, ell, o = -np.inf, 0.0, np.zeros(2)
for start in range(0, 12, 4):
    s, v = scores[start : start + 4], values[start : start + 4]
    m_new = max(m, s.max())
    c = np.exp(m - m_new)
    ell = c * ell + np.exp(s - m_new).sum()
    o = c * o + np.exp(s - m_new) @ v
    m = m_new
    print(f"after keys {start}..{start + 3}: m = {m:.3f}, ell = {ell:.3f}")
print("tiled:", o / ell, " plain:", softmax(scores) @ values)

# %% [markdown]
# ## A whole head, tile by tile
#
# `tiled_attention` (the lab's function) equals plain attention to rounding, causal or not,
# whatever the block sizes.

# %%
from attention_labs import causal_mask, scaled_dot_product_attention
from attention_labs.labs.tiled_attention import memory_floats, random_qkv, tiled_attention

Q, K, V = random_qkv(64, 16, seed=1)
for causal in (False, True):
    plain, _ = scaled_dot_product_attention(Q, K, V, mask=causal_mask(64) if causal else None)
    for block in (4, 16, 64):
        tiled = tiled_attention(Q, K, V, block, block, causal=causal)
        print(
            f"causal={causal!s:5} block {block:2}: max |difference| = "
            f"{np.abs(tiled - plain).max():.1e}"
        )

# %% [markdown]
# ## Memory and work against seq_len
#
# On log-log axes a quadratic is a line of slope 2 and a linear quantity a line of slope 1.

# %%
import matplotlib.pyplot as plt

n = np.array([2**k for k in range(6, 18)])
plain = [memory_floats(int(s), 128, 64, 64)["plain"] for s in n]
tiled = [memory_floats(int(s), 128, 64, 64)["tiled"] for s in n]
work = 4 * n.astype(float) ** 2 * 128
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.loglog(n, plain, "o-", base=2, label="memory, plain (n × n scores)")
ax.loglog(n, tiled, "s--", base=2, label="memory, tiled (64 × 64 tiles)")
ax.loglog(n, work, "^:", base=2, label="work (FLOPs), both")
ax.set_xlabel("seq_len")
ax.set_ylabel("floats or FLOPs")
ax.legend(fontsize=8)
plt.tight_layout()
plt.show()

# %% [markdown]
# ## Against PyTorch (optional)
#
# With `torch` installed, `torch.nn.functional.scaled_dot_product_attention` gives the same
# output (the site's tests check it to 1e-12 in float64).

# %%
try:
    import torch
except ImportError:
    print("torch is not installed here: skipped")
else:
    ref = torch.nn.functional.scaled_dot_product_attention(
        *(torch.from_numpy(a) for a in (Q, K, V)), is_causal=True
    ).numpy()
    print(f"{np.abs(tiled_attention(Q, K, V, 8, 8, causal=True) - ref).max():.1e}")
