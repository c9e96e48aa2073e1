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
# # Counting parameters: companion notebook
#
# This notebook goes with the lesson *Counting parameters*. It was run when this site was
# built, so every output below is real. <a href="../07-counting-parameters.ipynb"
# download>Download it as a Jupyter notebook (.ipynb)</a> to run it yourself: its first cell
# installs NumPy, Matplotlib and this site's `attention_labs` package with pip.
#
# ## GPT-2 small, matrix by matrix
#
# Attention holds $4\,d_{\text{model}}^2 + 4\,d_{\text{model}}$ per layer, the MLP
# $2\,d_{\text{model}}\,d_{\text{ff}} + d_{\text{ff}} + d_{\text{model}}$, each LayerNorm
# $2\,d_{\text{model}}$; the token and position tables are $\text{vocab} \times d_{\text{model}}$
# and $\text{context} \times d_{\text{model}}$, and the output matrix is tied to the tokens'.

# %%
d_model, n_layers, d_ff, vocab, context = 768, 12, 3072, 50257, 1024

attention = 4 * d_model**2 + 4 * d_model
mlp = 2 * d_model * d_ff + d_ff + d_model
norms = 2 * (2 * d_model)
layer = attention + mlp + norms
embeddings = vocab * d_model + context * d_model
total = n_layers * layer + embeddings + 2 * d_model  # + the final LayerNorm
print(f"attention per layer {attention:,}, MLP per layer {mlp:,}")
print(f"total {total:,}, of which attention {n_layers * attention:,}")

# %% [markdown]
# ## The same with the lab's counter, for every preset
#
# `count` in `attention_labs.labs.param_calculator` is what the lesson's lab runs. Its
# presets' totals are the published checkpoints' parameter counts.

# %%
from attention_labs.labs.param_calculator import PRESETS, count

rows = {}
for spec in PRESETS.values():
    c = count({k: v for k, v in spec.items() if k != "label"})
    rows[spec["label"]] = c
    parts = ", ".join(f"{k} {100 * v / c['total']:.1f}%" for k, v in c["parts"].items() if v)
    print(f"{spec['label']:>13}: {c['total']:>15,}  ({parts})")
assert rows["GPT-2 small"]["total"] == total

# %% [markdown]
# ## Where the parameters sit
#
# One bar per model, each part as a share of its total: the embeddings shrink as models
# grow, attention stays near a third of what remains, and grouped-query attention makes
# Llama-2-70B's attention smaller still.

# %%
import matplotlib.pyplot as plt
import numpy as np

labels = list(rows)
parts = ["attention", "MLP", "embeddings", "norms", "other"]
shares = np.array([[rows[m]["parts"][p] / rows[m]["total"] for p in parts] for m in labels])
fig, ax = plt.subplots(figsize=(7, 3.2))
left = np.zeros(len(labels))
for i, part in enumerate(parts):
    ax.barh(labels, shares[:, i], left=left, label=part, hatch=["", "//", "..", "xx", "--"][i])
    left += shares[:, i]
ax.set_xlabel("share of all parameters")
ax.invert_yaxis()
ax.legend(loc="lower right", fontsize=8)
plt.tight_layout()
plt.show()

# %% [markdown]
# ## Against PyTorch (optional)
#
# With `torch` and `transformers` installed, the counts can be checked against the real
# modules, built on the meta device so that nothing is downloaded or allocated. The site's
# tests do this for every preset (`tests/python/test_lab_param_calculator.py`).

# %%
try:
    import torch
    import transformers
except ImportError:
    print("torch and transformers are not installed here: skipped")
else:
    with torch.device("meta"):
        model = transformers.GPT2LMHeadModel(transformers.GPT2Config())
    print(f"GPT2LMHeadModel: {sum(p.numel() for p in model.parameters()):,}")
