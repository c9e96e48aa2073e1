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
# # What real heads do: companion notebook
#
# This notebook goes with the lesson *What real heads do*. It was run when this site was
# built, so every output below is real. <a href="../12-real-heads.ipynb" download>Download
# it as a Jupyter notebook (.ipynb)</a> to run it yourself: its first cell installs NumPy,
# Matplotlib and this site's `attention_labs` package (which carries the trained induction
# model) with pip.
#
# ## The trained model, in NumPy
#
# Two layers of two heads, no MLP: `forward` returns the next-letter logits and every
# head's pattern, `[query, key]`.

# %%
import matplotlib.pyplot as plt
import numpy as np
from attention_labs import real_maps
from attention_labs.models import induction

ids = induction.encode("QWERTYUIOP QWERTYUIOP")
logits, weights = induction.forward(ids)
print("logits", logits.shape, "weights", weights.shape)
print("induction score per head:\n", real_maps.induction_score(weights, ids).round(2))
print("previous-token score per head:\n", real_maps.previous_token_score(weights).round(2))

# %% [markdown]
# ## The two heads of the circuit
#
# Layer 0, head 0 looks one token back; layer 1, head 0 looks at the token after the
# earlier copy: a stripe nine positions below the diagonal for a period of ten.

# %%
letters = [chr(ord("A") + i) for i in ids]
fig, axes = plt.subplots(1, 2, figsize=(9, 4.2))
for ax, (layer, head) in zip(axes, [(0, 0), (1, 0)], strict=True):
    ax.imshow(weights[layer, head], cmap="viridis", vmin=0, vmax=1)
    ax.set_title(f"layer {layer}, head {head}")
    ax.set_xticks(range(len(ids)), letters, fontsize=7)
    ax.set_yticks(range(len(ids)), letters, fontsize=7)
    ax.set_xlabel("key")
    ax.set_ylabel("query")
fig.tight_layout()

# %% [markdown]
# ## The loss and the head, during training
#
# The training story ships with the model: the loss on the repeated letters and the best
# layer-1 induction score, every 25 steps.

# %%
story = induction.training_story()
steps = [c["step"] for c in story["checkpoints"]]
loss = [c["loss_repeated"] for c in story["checkpoints"]]
score = [max(c["induction"][1]) for c in story["checkpoints"]]
fig, ax = plt.subplots(figsize=(7, 3.4))
ax.plot(steps, loss, label="loss on repeated letters (nats)")
ax.plot(steps, score, "--", label="best layer-1 induction score")
ax.axvline(story["story"]["formed_at_step"], color="grey", lw=0.8)
ax.set_xlabel("training step")
ax.legend()
fig.tight_layout()
print(
    "induction head above",
    story["story"]["threshold"],
    "from step",
    story["story"]["formed_at_step"],
)

# %% [markdown]
# ## Ablation: remove the induction heads
#
# Weight is not importance; an experiment is. Zero the output of both layer-1 heads (their
# rows of `W_O`: each still computes its pattern but adds nothing to the residual stream)
# and see how often the model still continues the repeat.

# %%
without, _ = induction.forward(ids, ablate=[(1, 0), (1, 1)])
for label, out in [("whole model", logits), ("without layer 1", without)]:
    guess = out.argmax(axis=-1)
    copied = np.mean([guess[q] == ids[q + 1] for q in range(10, len(ids) - 1)])
    print(f"{label:>16}: next letter right on {copied:.0%} of the repeated positions")
