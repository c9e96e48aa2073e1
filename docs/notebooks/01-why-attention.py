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
# # Why attention exists: companion notebook
#
# This notebook goes with the lesson *Why attention exists*. It was run when this site was
# built, so every output below is real. <a href="../01-why-attention.ipynb"
# download>Download it as a Jupyter notebook (.ipynb)</a> to run it yourself: its first cell
# installs NumPy, Matplotlib and this site's `attention_labs` package with pip.
#
# The vectors are the lesson lab's: a tiny two-dimensional space **built by hand for the
# lesson, not learned**.
#
# ## One embedding, whatever the sentence
#
# The word *mole* has the same embedding $x$ in every sentence: the lookup happens before
# the model reads anything else.

# %%
import matplotlib.pyplot as plt
import numpy as np
from attention_labs.labs.meaning_shift import SENTENCES, cosine, sentence_space

for key, (text, word, _, _) in SENTENCES.items():
    space = sentence_space(key)
    print(f"{text!r:48} {word}: x = {space['embedding']}")

# %% [markdown]
# ## The update, added
#
# With weights $w_j \ge 0$ that sum to 1 and the context words' vectors $c_j$ as the rows
# of $C$, the update is $\Delta = \sum_j w_j c_j = wC$ and the new vector is $x + \Delta$.
# The cosine similarity $\cos(a, b) = a \cdot b / (\lVert a \rVert \lVert b \rVert)$ says
# how close it is to each sense.


# %%
def shift(sentence, raw):
    space = sentence_space(sentence)
    raw = np.asarray(raw, dtype=float)
    w = raw / raw.sum()
    x = space["embedding"]
    delta = w @ space["context_vectors"]  # (3,) @ (3, 2) -> (2,)
    return space, x, delta


space, x, delta = shift("mole_animal", [1, 1, 1])
print("senses:", space["sense_names"])
print("cos before:", cosine(space["sense_vectors"], x).round(3))
print("cos after: ", cosine(space["sense_vectors"], x + delta).round(3))

# %% [markdown]
# ## The same word in three sentences
#
# Each panel is one sentence, with equal weights on its three context words: the grey
# arrow is the embedding (the same in all three), the dashed arrow the update, the black
# arrow the updated vector; the dots are the senses.

# %%
fig, axes = plt.subplots(1, 3, figsize=(10, 3.5))
for ax, key in zip(axes, ["mole_animal", "mole_chemistry", "mole_skin"], strict=True):
    space, x, delta = shift(key, [1, 1, 1])
    y = x + delta
    for name, s in zip(space["sense_names"], space["sense_vectors"], strict=True):
        ax.plot(*s, "o", color="tab:green")
        ax.annotate(name, s, textcoords="offset points", xytext=(4, 4))
    ax.annotate("", x, (0, 0), arrowprops={"arrowstyle": "->", "color": "grey"})
    ax.annotate("", y, x, arrowprops={"arrowstyle": "->", "linestyle": "--"})
    ax.annotate("", y, (0, 0), arrowprops={"arrowstyle": "->", "color": "black"})
    nearest = space["sense_names"][int(np.argmax(cosine(space["sense_vectors"], y)))]
    ax.set_title(f"{SENTENCES[key][0]}\nnearest sense: {nearest}", fontsize=9)
    ax.set_xlim(-2.5, 2.5)
    ax.set_ylim(-2.5, 2.5)
    ax.set_aspect("equal")
    ax.axhline(0, color="0.85", lw=0.8)
    ax.axvline(0, color="0.85", lw=0.8)
fig.tight_layout()
plt.show()

# %% [markdown]
# ## Weights decide
#
# In *The chemist found a mole in her garden* the context pulls two ways; the weights
# decide which sense wins.

# %%
for raw in ([1, 1, 1], [1, 0.2, 0.2], [0.2, 0.2, 1]):
    space, x, delta = shift("mole_mixed", raw)
    cos = cosine(space["sense_vectors"], x + delta)
    print(raw, dict(zip(space["sense_names"], cos.round(2), strict=True)))
