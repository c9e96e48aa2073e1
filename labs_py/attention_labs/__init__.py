"""attention_labs: the NumPy attention math and labs of the attention textbook.

Runs unchanged in CPython (tests, build) and in the browser on Pyodide. Matrices are
indexed [query, key]; softmax runs over keys; every row of weights sums to 1.
"""

from .attention import (
    attention_logits,
    causal_mask,
    cross_attention,
    entropy_bits,
    multi_head_attention,
    padding_mask,
    scaled_dot_product_attention,
    sliding_window_mask,
    softmax,
)
from .params import LabParameterError

__all__ = [
    "LabParameterError",
    "attention_logits",
    "causal_mask",
    "cross_attention",
    "entropy_bits",
    "multi_head_attention",
    "padding_mask",
    "scaled_dot_product_attention",
    "sliding_window_mask",
    "softmax",
]
__version__ = "0.1.0"
