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
# # Cross-attention: companion notebook
#
# This notebook goes with the lesson *Cross-attention*. It was run when this site was built, so
# every output below is real. <a href="../11-cross-attention.ipynb" download>Download it as a Jupyter
# notebook (.ipynb)</a> to run it yourself: it needs NumPy and this site's
# `attention_labs` package (`pip install -e .` in the repository).
#
# Replace this example with the lesson's steps, one idea per cell.

# %%
import numpy as np
from attention_labs import softmax

weights = softmax(np.array([2.0, 1.0, 0.1]))
print("weights:", weights.round(3), "sum:", weights.sum())
