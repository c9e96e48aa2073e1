"""Your own letters: the trained induction-head model on the reader's sequence, as an asset.

A map source (:mod:`.sources`), not a lab: the explorer's "Your own sentence" panel offers a
second model, the 2-layer attention-only decoder of lesson 12 (:mod:`.induction`, trained by
build_scripts/induction/train_induction.py; its weights ship in this package, so nothing is
downloaded). The reader types letters A..Z, one token each; `compute` runs the model in
NumPy and returns its maps as an asset of a causal model written by `maps.build_asset`
(docs/assets/attention/asset.schema.json: lower-triangle bytes, the per-head statistics
with the induction and previous-token scores), which the explorer draws in its usual views.
Repeat a stretch of letters and the induction head puts its weight on the letter that
followed the earlier copy.

Sources: Elhage et al. 2021 (A Mathematical Framework for Transformer Circuits); Olsson et
al. 2022 (In-context Learning and Induction Heads).
"""

from __future__ import annotations

import math
import time

from .. import maps
from ..params import LabParameterError, Param
from . import induction

DEFAULT = "QWERTYUIOPQWERTYUIOP"  # ten letters said twice: the second half is predictable
MIN_LETTERS, MAX_LETTERS = 2, 32  # what induction.encode allows (32: the model's context)
SCHEMA = (
    Param("text", "text", DEFAULT, "your letters: 2 to 32 letters A to Z, one token each "
          "(spaces are ignored)", max_chars=200),
)  # fmt: skip

MODEL_ID = "attention-labs/induction-head-model"
SLUG = "induction-head-model"
PROVENANCE = maps.Provenance(
    script="labs_py/attention_labs/models/induction.py",
    torch="none (NumPy)",
    transformers="none (one token per letter)",
    device="cpu",
    dtype="float32",  # the stored weights' type (the NumPy pass runs in float64)
)


def compute(params: dict) -> dict:
    """Run the induction model on `params["text"]` and return its maps as an asset.

    Returns {"asset": a valid asset (asset.schema.json) of a causal model: tokens the
    letters (no token added), attention ``(n_layers, n_heads)`` heads of lower-triangle
    uint8 base64, head_stats (induction None when no letter repeats), qkv with no heads;
    "run": {forward_ms}}.

    Raises:
        LabParameterError: (param "text") a character other than a letter A..Z or a
            space, or fewer than 2 or more than 32 letters; the message names it.
    """
    try:
        ids = induction.encode(params["text"])
    except ValueError as err:
        raise LabParameterError("text", f"Your letters: {err}") from None
    t0 = time.perf_counter()
    _, weights = induction.forward(ids)  # (n_layers, n_heads, seq_len, seq_len), causal
    forward_ms = (time.perf_counter() - t0) * 1000
    cfg = induction.load_weights()["config"]
    n = weights.shape[2]
    d_head = cfg["d_model"] // cfg["n_heads"]
    letters = [chr(ord("A") + i) for i in ids]
    model = maps.ModelInfo(
        id=MODEL_ID,
        slug=SLUG,
        architecture="attention-only transformer (attention_labs.models.induction)",
        model_type="attention-only",
        d_model=cfg["d_model"],
        d_head=d_head,
        max_positions=cfg["seq_len"],
        weights_sha256=induction.weights_sha256(),
        weights_files=["attention_labs/data/induction/model.json"],
        source="trained for lesson 12 by build_scripts/induction/train_induction.py on "
        "sequences that repeat; computed in your browser by attention_labs/models/induction.py",
    )
    tokens = maps.Tokens(
        ids=list(ids),
        text=letters,
        offsets=[[i, i + 1] for i in range(n)],
        special=[False] * n,
        bos_added=False,
    )
    asset = maps.build_asset(
        sentence={"id": "your-letters", "lesson": "12-real-heads", "text": "".join(letters)},
        model=model,
        tokens=tokens,
        weights=weights,
        causal=True,
        provenance=PROVENANCE,
        scale=1 / math.sqrt(d_head),
    )
    return {"asset": asset, "run": {"forward_ms": forward_ms}}
