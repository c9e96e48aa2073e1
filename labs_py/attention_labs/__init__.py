"""attention_labs: the NumPy attention math and labs of the attention textbook.

Runs unchanged in CPython (tests, build) and in the browser on Pyodide. Matrices are
indexed [query, key]; softmax runs over keys; every row of weights sums to 1.
"""

from .attention import (
    apply_rope,
    attention_logits,
    causal_mask,
    cross_attention,
    entropy_bits,
    multi_head_attention,
    padding_mask,
    rope_frequencies,
    scaled_dot_product_attention,
    sinusoidal_positions,
    sliding_window_mask,
    softmax,
)
from .params import LabParameterError

__all__ = [
    "LabParameterError",
    "apply_rope",
    "attention_logits",
    "causal_mask",
    "cross_attention",
    "entropy_bits",
    "multi_head_attention",
    "padding_mask",
    "rope_frequencies",
    "scaled_dot_product_attention",
    "sinusoidal_positions",
    "sliding_window_mask",
    "softmax",
]
__version__ = "0.1.0"
