"""The embeddings of the synthetic labs of lessons 2, 3 and 5 (query_picker,
attention_pattern, value_update): one set of functions, so the three draw them the same way.

A token is a word with its case ignored ("The" and "the" are one word, as for MiniLM's
uncased tokenizer); its vector is a function of that word and the lab's seed only, the same
in any sentence, in CPython and in the browser.
"""

from __future__ import annotations

import functools
import math
import zlib

import numpy as np


def _splitmix64(z: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser on a uint64 array (Steele et al. 2014): well-mixed bits."""
    z = z + np.uint64(0x9E3779B97F4A7C15)  # uint64 arrays wrap on overflow, as the hash needs
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def word_vectors(tokens: list[str], seed: int, d_model: int) -> np.ndarray:
    """Each token's fixed random word vector: shape (seq_len, d_model), standard normal
    components, a function of the token's case-folded text and ``seed`` only.

    Drawn for all tokens at once from a counter-based hash (crc32 of the text, not hash():
    Python salts str hashes per process) and the Box-Muller transform (Box and Muller
    1958): no NumPy Generator per word, whose creation costs 50-150 µs in Pyodide, so a
    128-token sentence at a new seed costs well under a millisecond.
    """
    crc = np.array([zlib.crc32(t.casefold().encode("utf-8")) for t in tokens], dtype=np.uint64)
    key = _splitmix64((crc << np.uint64(32)) | np.uint64(seed))  # (seq_len,)
    counter = np.arange(2 * d_model, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    bits = _splitmix64(key[:, None] + counter[None, :])  # (seq_len, 2 * d_model)
    u = ((bits >> np.uint64(11)).astype(float) + 0.5) * 2.0**-53  # uniform in (0, 1)
    u1, u2 = u[:, :d_model], u[:, d_model:]
    return (np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * math.pi * u2)).reshape(len(tokens), d_model)


@functools.lru_cache(maxsize=8)
def position_vectors(seed: int, max_tokens: int, d_model: int) -> np.ndarray:
    """(max_tokens, d_model), read-only: row p is position p's random vector (standard
    normal components), the same whatever the sentence's length. The first rows do not
    depend on ``max_tokens``: a lab that allows fewer tokens sees the same positions."""
    vectors = np.random.default_rng([seed, 2**32]).standard_normal((max_tokens, d_model))
    vectors.flags.writeable = False  # shared by the cache
    return vectors


def embeddings(tokens: list[str], seed: int, d_model: int, max_tokens: int) -> np.ndarray:
    """X: (seq_len, d_model): each token's word vector plus its position's vector, divided
    by sqrt(2) so that every component keeps unit variance. ``max_tokens`` is the lab's
    longest sentence (its position table's length)."""
    words = word_vectors(tokens, seed, d_model)
    return (words + position_vectors(seed, max_tokens, d_model)[: len(tokens)]) / math.sqrt(2)
