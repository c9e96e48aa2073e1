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
# # $title: companion notebook
#
# This notebook goes with the lesson *$title*. It was run when this site was built, so every
# output below is real. <a href="../$name.ipynb" download>Download it as a Jupyter notebook
# (.ipynb)</a> to run it yourself: its first cell installs NumPy, Matplotlib and this site's
# `attention_labs` package with pip.
#
# Replace this example with the lesson's steps, one idea per cell.

# %%
import numpy as np
from attention_labs import softmax

weights = softmax(np.array([2.0, 1.0, 0.1]))
print("weights:", weights.round(3), "sum:", weights.sum())
