"""Small worked examples that the lessons compute (their numbers in prose, their Python
cells and their claims tests all call these functions, so the three agree).

- :func:`layer_norm` and :func:`rms_norm`: the two normalisations a head's input goes
  through in GPT-2 and Llama (lesson 2);
- :func:`two_needs`: one head asked to do two jobs against two heads doing one each
  (lesson 6);
- :func:`value_map_roles`: what the value maps of the small trained model do: copy a
  letter, or move it into a new direction that the next layer reads (lesson 5).

NumPy and the standard library only: the cells run them in the browser too.
"""

from __future__ import annotations

import numpy as np

from .attention import softmax

__all__ = ["layer_norm", "rms_norm", "two_needs", "value_map_roles"]


# ------------------------------------------------------------------------- normalisation


def layer_norm(x, gain=None, shift=None, eps: float = 1e-5):
    """LayerNorm over the last axis (Ba, Kiros and Hinton 2016, "Layer Normalization"), as
    GPT-2 applies it before each attention layer: subtract the vector's mean, divide by its
    standard deviation (biased, plus ``eps`` inside the root), then multiply by a learned
    ``gain`` and add a learned ``shift`` (default 1 and 0: the plain normalisation).

    x (..., d_model); gain, shift (d_model,) or None. Returns float64 of x's shape."""
    x = np.asarray(x, dtype=float)
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    out = (x - mean) / np.sqrt(var + eps)
    return out * (1.0 if gain is None else gain) + (0.0 if shift is None else shift)


def rms_norm(x, gain=None, eps: float = 1e-6):
    """RMSNorm over the last axis (Zhang and Sennrich 2019, "Root Mean Square Layer
    Normalization"), as Llama applies it before each attention layer: divide by the root
    mean square of the components (no mean is subtracted), then multiply by a learned
    ``gain`` (default 1). x (..., d_model). Returns float64 of x's shape."""
    x = np.asarray(x, dtype=float)
    rms = np.sqrt((x**2).mean(axis=-1, keepdims=True) + eps)
    return x / rms * (1.0 if gain is None else gain)


# ------------------------------------------------------------------- one head, two needs


def two_needs(
    tokens=("the", "cat", "sat", "on", "the", "mat"),
    query: int = 4,
    strength: float = 6.0,
    lean: float = 0.0,
) -> dict:
    """One query that needs two keys: the token just before it and the earlier copy of its
    own word. Two heads each serve one need; one head serves both.

    The token vectors are one-hot codes, x = [word one-hot | position one-hot]. The two
    needs are two query-key matches:

    - previous token: q = (strength + lean) * position code, k = the NEXT position's code,
      so q_i . k_j = (strength + lean) when j = i - 1;
    - same word: q = strength * (word code, -position code), k = (word code, position
      code), so q_i . k_j = strength when j holds the same word and is not i itself.

    A head whose queries and keys are those two stacked, [q_prev, q_same] and [k_prev,
    k_same], scores the SUM of the two matches (a dot product of stacked vectors is the sum
    of the parts): that is one head serving both needs, with one softmax row. Every value
    is the key's word code (what the token is), so the output says which words were read
    and how much of each.

    Args:
        tokens: the words (case kept; a repeated word must be spelt the same).
        query: the query's position; it needs a token before it.
        strength: how strongly each need matches (the score of a matching key; 0 elsewhere).
        lean: extra score for the previous-token need in both set-ups (0: the needs are
            equally strong).

    Returns a dict: ``tokens``, ``query``, ``previous`` (position of the token before it),
    ``same`` (positions of earlier copies of its word, maybe empty), ``one_head``: its
    ``weights`` (seq_len,) and ``output`` {word: amount}; ``two_heads``: per head ``name``,
    ``weights`` and ``output``; ``budget``: the one head's weight on the two keys it needs,
    which sums to at most 1, against the two heads' (each up to 1).

    Raises ValueError for a query out of range or at position 0.
    """
    tokens = list(tokens)
    n = len(tokens)
    if not 1 <= query < n:
        raise ValueError(f"query must be a position from 1 to {n - 1} (it needs a token before it)")
    words = sorted(set(tokens))
    word = np.array([[float(t == w) for w in words] for t in tokens])  # (n, n_words)
    pos = np.eye(n)  # (n, n)
    next_pos = np.eye(n, k=1)  # row j: the code of position j + 1 (zero for the last)
    q_prev, k_prev = (strength + lean) * pos, next_pos  # (n, n) each
    q_same = strength * np.hstack([word, -pos])  # (n, n_words + n)
    k_same = np.hstack([word, pos])
    V = word  # (n, n_words): each value is its word
    heads = {
        "previous token": softmax(q_prev @ k_prev.T),  # (n, n) [query, key]
        "same word": softmax(q_same @ k_same.T),
    }
    one = softmax(np.hstack([q_prev, q_same]) @ np.hstack([k_prev, k_same]).T)
    same = [j for j in range(query) if tokens[j] == tokens[query]]
    previous = query - 1

    def output(weights_row):
        out = weights_row @ V  # (n_words,)
        return {w: float(a) for w, a in zip(words, out, strict=True)}

    need = [previous, *same]
    return {
        "tokens": tokens,
        "query": query,
        "previous": previous,
        "same": same,
        "one_head": {"weights": one[query], "output": output(one[query])},
        "two_heads": [
            {"name": name, "weights": w[query], "output": output(w[query])}
            for name, w in heads.items()
        ],
        "budget": {
            "one_head": float(one[query, need].sum()),
            "two_heads": [
                float(heads["previous token"][query, previous]),
                float(heads["same word"][query, same].sum()),
            ],
        },
    }


# --------------------------------------------------------------- what value maps do


def value_map_roles() -> dict:
    """What the trained induction model's value maps do (lesson 12's model, 2 layers of 2
    heads over the letters A..Z; :mod:`.models.induction`), read off its weights alone.

    For each head, its value map W_V^h W_O^h (d_model, d_model; lesson 5) applied to every
    letter's embedding E_a:

    - ``copies``: for how many letters the unembedding W_U of E_a W_V^h W_O^h raises the
      letter a itself more than any other letter (the head copies the letter it reads:
      "copying", Elhage et al. 2021);
    - ``cosine``: the mean cosine between E_a and E_a W_V^h W_O^h (near 0: it writes in a
      direction of its own, not along the letter's embedding).

    And ``reads``: how a layer-1 head matches what layer-0 head 0 wrote. The query of letter
    a is E_a W_Q^{1,h}; the key written for "the letter before me was b" is
    E_b W_V^{0,0} W_O^{0,0} W_K^{1,h}. ``reads[h]`` counts the letters a whose best-matching
    b is a itself; ``reads_plain[h]`` does the same with the key of b's plain embedding,
    E_b W_K^{1,h}. Positions and the attention weights are left out: these are the direct
    paths only.
    """
    from .models import induction  # the model's data is read on first use

    w = induction.load_weights()
    cfg = w["config"]
    d_head = cfg["d_model"] // cfg["n_heads"]
    E, U = w["W_E"], w["W_U"]  # (vocab, d_model), (d_model, vocab)
    letters = np.arange(cfg["vocab_size"])

    def block(layer, name, h):
        W = w["layers"][layer][name]
        cols = slice(h * d_head, (h + 1) * d_head)
        return W[cols] if name == "W_O" else W[:, cols]

    def value_map(layer, h):  # (d_model, d_model), rank <= d_head
        return block(layer, "W_V", h) @ block(layer, "W_O", h)

    heads = []
    for layer in range(cfg["n_layers"]):
        for h in range(cfg["n_heads"]):
            moved = E @ value_map(layer, h)  # (vocab, d_model): what each letter sends
            cos = (
                np.sum(moved * E, -1) / np.linalg.norm(moved, axis=-1) / np.linalg.norm(E, axis=-1)
            )
            heads.append(
                {
                    "layer": layer,
                    "head": h,
                    "copies": int(((moved @ U).argmax(-1) == letters).sum()),
                    "cosine": float(cos.mean()),
                }
            )
    written = E @ value_map(0, 0)  # "the letter before me was b", as head 0.0 writes it
    reads, plain = [], []
    for h in range(cfg["n_heads"]):
        Q = E @ block(1, "W_Q", h)  # (vocab, d_head)
        reads.append(int(((Q @ (written @ block(1, "W_K", h)).T).argmax(-1) == letters).sum()))
        plain.append(int(((Q @ (E @ block(1, "W_K", h)).T).argmax(-1) == letters).sum()))
    return {
        "vocab_size": int(cfg["vocab_size"]),
        "heads": heads,
        "reads": reads,
        "reads_plain": plain,
    }
