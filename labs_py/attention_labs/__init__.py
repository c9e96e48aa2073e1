"""attention_labs: the NumPy attention math and labs of the attention textbook.

Runs unchanged in CPython (tests, build) and in the browser on Pyodide. Matrices are
indexed [query, key]; softmax runs over keys; every row of weights sums to 1.
"""

import os as _os

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

_PACKAGE_DIR = _os.path.dirname(_os.path.abspath(__file__))


def package_file(*parts: str) -> str:
    """The path of a file the package carries (its data, the WebAssembly kernels), e.g.
    ``package_file("data", "induction", "weights.npz")``.

    From ``__file__``, not importlib.resources: in the browser the first use of
    importlib.resources imports stdlib modules that Python's start-up left out, which
    downloads the rest of the stdlib (1.3-2.3 s on a model's first Run; CONTRIBUTING).
    """
    return _os.path.join(_PACKAGE_DIR, *parts)
