"""Lab: watch an induction head form during training.

The model is the 2-layer attention-only decoder trained in the build
(build_scripts/induction/train_induction.py; weights and story in
``attention_labs/data/induction/``). Its training story holds, every 25 steps, the loss and
each head's two scores on a probe sequence (12 random letters, then the same 12 again);
at eight steps it also holds the probe's attention maps. The reader picks a step and a
head; the lab returns the loss curves with that step marked, the head's scores over
training, and its map at that step.

Scores (attention_labs.real_maps): the induction score is the share of a query's weight on
the token after the earlier occurrence of the query's own token, averaged over the second
half's queries (Olsson et al. 2022, "In-context Learning and Induction Heads"); the
previous-token score is the mean weight on the token just before.
"""

from __future__ import annotations

import numpy as np

from ..attention import entropy_bits
from ..models import induction
from ..params import LabParameterError, Param
from ..static import Table, Text

SCHEMA = (
    Param(
        "checkpoint",
        "integer",
        7,
        "Which saved map to show: 0 (before training) to 7 (the end).",
        0,
        7,
    ),
    Param("layer", "integer", 1, "Layer of the head (0 or 1).", 0, 1),
    Param("head", "integer", 0, "Head within the layer (0 or 1).", 0, 1),
)

LARGEST = {"checkpoint": 7, "layer": 1, "head": 1}


def compute(params):
    """Returns {step, steps, loss, loss_repeated, loss_random (per checkpoint), induction and
    previous_token (this head, per checkpoint), heads (every head's two scores at this step),
    map_steps, formed_at_step, threshold, tokens (the probe's letters), weights
    [query, key] of this head at this step (causal; within 1/255 of the model's), masked,
    top_key, entropy_bits, max_entropy_bits}."""
    story = induction.training_story()
    cfg = story["config"]
    maps = story["maps"]
    if params["checkpoint"] >= len(maps):
        raise LabParameterError(
            "checkpoint", f"checkpoint must be 0 to {len(maps) - 1}; got {params['checkpoint']}"
        )
    layer, head = params["layer"], params["head"]
    if layer >= cfg["n_layers"] or head >= cfg["n_heads"]:
        raise LabParameterError("head", f"the model has {cfg['n_layers']} x {cfg['n_heads']} heads")
    step = maps[params["checkpoint"]]["step"]
    points = story["checkpoints"]
    at = next(c for c in points if c["step"] == step)
    weights = induction.stored_map(params["checkpoint"])[layer, head]  # (seq_len, seq_len)
    n = weights.shape[0]
    masked = np.triu(np.ones((n, n), dtype=bool), k=1)
    return {
        "step": step,
        "steps": [c["step"] for c in points],
        "loss": [c["loss"] for c in points],
        "loss_repeated": [c["loss_repeated"] for c in points],
        "loss_random": [c["loss_random"] for c in points],
        "induction": [c["induction"][layer][head] for c in points],
        "previous_token": [c["previous_token"][layer][head] for c in points],
        "heads": [
            {
                "layer": i,
                "head": j,
                "induction": at["induction"][i][j],
                "previous_token": at["previous_token"][i][j],
            }
            for i in range(cfg["n_layers"])
            for j in range(cfg["n_heads"])
        ],
        "map_steps": [m["step"] for m in maps],
        "formed_at_step": story["story"]["formed_at_step"],
        "threshold": story["story"]["threshold"],
        "tokens": [story["tokens"][t] for t in story["probe"]],
        "weights": weights,
        "masked": masked,
        "top_key": weights.argmax(axis=-1),
        "entropy_bits": entropy_bits(weights),
        "max_entropy_bits": np.log2(np.arange(1, n + 1)),
    }


def static_view(result: dict, params: dict) -> list[Table | Text]:
    """Without JavaScript: the training curve at the steps whose maps are kept."""
    keys = ("loss", "loss_repeated", "loss_random", "induction", "previous_token")
    rows = []
    for step in result["map_steps"]:
        i = result["steps"].index(step)
        rows.append((f"{step:,d}", tuple(result[k][i] for k in keys)))
    caption = (
        f"Training of the two-layer model: loss (on all letters, on the letters that copy an "
        f"earlier one, on the others) and the scores of layer {params['layer']}, head "
        f"{params['head']} at eight steps."
    )
    columns = ("Step", "Loss", "Loss on copies", "Loss on the rest", "Induction score",
               "Previous-token score")  # fmt: skip
    formed = result["formed_at_step"]
    text = (
        f"This head's induction score first reaches {result['threshold']} at step {formed:,d}."
        if formed is not None
        else f"This head's induction score never reaches {result['threshold']}."
    )
    return [Table(caption, columns, rows), Text(text)]
