"""Lab: count the parameters of a transformer, part by part.

The reader picks a published model (GPT-2 small to XL, BERT-base, GPT-3 175B, Llama-2-7B and
70B, Mistral-7B, Llama-3-8B) or describes one; the lab returns how many parameters sit in
attention, in the MLPs, in the embeddings and in the norms, per layer and in total, with and
without bias vectors, and the same split for every preset (for one stacked bar per model).

What is counted, per layer (d = d_model, kv = n_kv_heads * d_head, d_head = d / n_heads):

- attention: W_Q (d x d), W_K and W_V (d x kv each), W_O (d x d), so 4 d^2 when every head
  has its own keys and values (kv = d) and 2 d^2 + 2 d kv with grouped-query attention
  (Ainslie et al. 2023, EMNLP); biases d + 2 kv + d where the model has them;
- MLP: two matrices d x d_ff and d_ff x d (GPT-2, BERT, GPT-3: Radford et al. 2019,
  Devlin et al. 2019, Brown et al. 2020), or three for a gated SwiGLU MLP (Llama 2:
  Touvron et al. 2023); biases d_ff + d where the model has them;
- norms: two per layer, LayerNorm with a scale and a shift (2 d) or RMSNorm with a scale
  only (d); plus one more for the whole model (GPT-2's and Llama's final norm, BERT's
  norm of the embeddings).

Once per model: the token embedding (vocab x d), learned positions (context x d) where the
model has them, BERT's two token-type vectors and its pooler (d x d + d, under "other"),
and an output matrix (vocab x d) only when it is not tied to the token embedding. "Biases"
are the bias vectors of the linear maps; a LayerNorm's shift is counted with the norms.

Every count is a Python int (exact); the presets' totals are checked against the
published checkpoints in tests/python/test_lab_param_calculator.py.

Where the presets come from (n_layers, d_model, n_heads, n_kv_heads, d_ff, vocab, context):
GPT-2: Radford et al. 2019, Table 2, and the released configs (context 1,024, vocab 50,257);
BERT-base: Devlin et al. 2019, section 3 (bert-base-uncased's config: vocab 30,522);
GPT-3 175B: Brown et al. 2020, Table 2.1; Llama-2-7B and 70B: Touvron et al. 2023
(arXiv:2307.09288), Table 1 and section 2.2 (GQA in 34B and 70B only; d_ff and vocab from the
released configs); Mistral-7B: Jiang et al. 2023 (arXiv:2310.06825), Table 1 (dim 4,096,
32 layers, head_dim 128, hidden_dim 14,336, 32 heads, 8 key/value heads, window 4,096,
context 8,192, vocab 32,000); Llama-3-8B: Llama Team 2024, "The Llama 3 Herd of Models"
(arXiv:2407.21783), Table 3 (32 layers, d_model 4,096, FFN 14,336, 32 heads, 8 key/value
heads), with the vocabulary of 128,256 and the context of 8,192 of the released
Meta-Llama-3-8B config (the paper rounds the vocabulary to 128K; Llama 3.1 extends the
context to 128K). ``window`` (Mistral-7B only) is a sliding-window attention span: it
counts no parameters, and the cache_size lab caps the cache with it.
"""

from __future__ import annotations

from ..params import LabParameterError, Param
from ..static import Table, Text

# Llama's choices, which Mistral and Llama-3 share: no biases, untied unembedding, SwiGLU,
# RMSNorm, rotary positions.
_LLAMA_LIKE = dict(biases=False, tied=False, mlp="swiglu", norm="rmsnorm", positions="rotary")
# The published configurations. "label" is what the page shows; the rest are the fields of
# a user-defined model (the "custom" preset), with the BERT-only extras.
PRESETS: dict[str, dict] = {
    "gpt2-small": dict(label="GPT-2 small", d_model=768, n_layers=12, n_heads=12),
    "gpt2-medium": dict(label="GPT-2 medium", d_model=1024, n_layers=24, n_heads=16),
    "gpt2-large": dict(label="GPT-2 large", d_model=1280, n_layers=36, n_heads=20),
    "gpt2-xl": dict(label="GPT-2 XL", d_model=1600, n_layers=48, n_heads=25),
    "bert-base": dict(
        label="BERT-base",
        d_model=768,
        n_layers=12,
        n_heads=12,
        vocab=30522,
        context=512,
        tied=True,
        token_types=2,
        pooler=True,
    ),
    "gpt3-175b": dict(label="GPT-3 175B", d_model=12288, n_layers=96, n_heads=96, context=2048),
    "llama2-7b": dict(
        label="Llama-2-7B",
        d_model=4096,
        n_layers=32,
        n_heads=32,
        n_kv_heads=32,
        d_ff=11008,
        vocab=32000,
        context=4096,
        **_LLAMA_LIKE,
    ),
    "llama2-70b": dict(
        label="Llama-2-70B",
        d_model=8192,
        n_layers=80,
        n_heads=64,
        n_kv_heads=8,
        d_ff=28672,
        vocab=32000,
        context=4096,
        **_LLAMA_LIKE,
    ),
    "mistral-7b": dict(
        label="Mistral-7B",
        d_model=4096,
        n_layers=32,
        n_heads=32,
        n_kv_heads=8,
        d_ff=14336,
        vocab=32000,
        context=8192,
        window=4096,
        **_LLAMA_LIKE,
    ),
    "llama3-8b": dict(
        label="Llama-3-8B",
        d_model=4096,
        n_layers=32,
        n_heads=32,
        n_kv_heads=8,
        d_ff=14336,
        vocab=128256,
        context=8192,
        **_LLAMA_LIKE,
    ),
}
# Facts of a preset that are not fields of the count (what the page shows, the window).
NOT_COUNTED = ("label", "window")
# GPT-2's shared choices, filled into every preset that does not say otherwise.
_GPT2_LIKE = dict(
    vocab=50257,
    context=1024,
    biases=True,
    tied=True,
    mlp="gelu",
    norm="layernorm",
    positions="learned",
    token_types=0,
    pooler=False,
)
for _name, _preset in PRESETS.items():
    for _key, _value in _GPT2_LIKE.items():
        _preset.setdefault(_key, _value)
    _preset.setdefault("n_kv_heads", _preset["n_heads"])
    _preset.setdefault("d_ff", 4 * _preset["d_model"])
    _preset.setdefault("context", 1024)
    _preset.setdefault("window", None)  # no sliding window: every key stays readable


def spec_of(name: str) -> dict:
    """The fields of preset ``name`` that :func:`count` reads (no label, no window)."""
    return {k: v for k, v in PRESETS[name].items() if k not in NOT_COUNTED}


PARTS = ("attention", "MLP", "embeddings", "norms", "other")

SCHEMA = (
    Param(
        "preset",
        "choice",
        "gpt2-small",
        "A published model, or custom: the fields below.",
        choices=(*PRESETS, "custom"),
        labels={**{k: v["label"] for k, v in PRESETS.items()}, "custom": "Your own model"},
    ),
    Param("d_model", "integer", 768, "Width of the residual stream.", 1, 32768),
    Param("n_layers", "integer", 12, "Number of transformer layers.", 1, 256),
    Param("n_heads", "integer", 12, "Query heads per layer (must divide d_model).", 1, 512),
    Param(
        "n_kv_heads",
        "integer",
        12,
        "Key/value heads per layer (must divide n_heads; equal to n_heads without GQA).",
        1,
        512,
    ),
    Param("d_ff", "integer", 3072, "Hidden width of each MLP.", 1, 131072),
    Param(
        "vocab", "integer", 50257, "Vocabulary size (rows of the token embedding).", 1, 1_000_000
    ),
    Param("context", "integer", 1024, "Context length (rows of learned positions).", 1, 2**20),
    Param("biases", "boolean", True, "Linear maps have bias vectors."),
    Param("tied", "boolean", True, "The output matrix is the token embedding (counted once)."),
    Param(
        "mlp",
        "choice",
        "gelu",
        "MLP kind: two matrices (GELU) or three (gated SwiGLU).",
        choices=("gelu", "swiglu"),
        labels={"gelu": "Two matrices (GELU)", "swiglu": "Three matrices (SwiGLU)"},
    ),
    Param(
        "norm",
        "choice",
        "layernorm",
        "Norm kind: LayerNorm (scale and shift) or RMSNorm (scale only).",
        choices=("layernorm", "rmsnorm"),
        labels={"layernorm": "LayerNorm (scale and shift)", "rmsnorm": "RMSNorm (scale only)"},
    ),
    Param(
        "positions",
        "choice",
        "learned",
        "Learned position embeddings, or rotary (no parameters).",
        choices=("learned", "rotary"),
        labels={"learned": "Learned (a table)", "rotary": "Rotary (no parameters)"},
    ),
)

# The heaviest settings (`make bench`): the count is arithmetic, so any will do.
LARGEST = {
    "preset": "custom",
    "d_model": 32768,
    "n_layers": 256,
    "n_heads": 256,
    "n_kv_heads": 256,
    "d_ff": 131072,
}

_CUSTOM_FIELDS = tuple(p.name for p in SCHEMA[1:])


def _check(config: dict) -> None:
    """Divisibility that the schema's ranges cannot say; errors name the parameter."""
    d, h, kv = config["d_model"], config["n_heads"], config["n_kv_heads"]
    if d % h:
        raise LabParameterError(
            "n_heads",
            f"n_heads must divide d_model ({d}): a whole number from 1 to 512 that "
            f"d_model is a multiple of, got {h}",
        )
    if h % kv:
        raise LabParameterError(
            "n_kv_heads",
            f"n_kv_heads must divide n_heads ({h}): a whole number from 1 to {h} that "
            f"n_heads is a multiple of, got {kv}",
        )


def count(config: dict) -> dict:
    """Parameter counts of one model described by ``config`` (the fields of a preset).

    Returns ``per_layer`` (attention, MLP and norm weights and biases of one layer),
    ``parts`` (the whole model's count in each of :data:`PARTS`), ``embedding_parts``
    (token, position, token type, output), ``biases`` (all linear biases), ``total``,
    ``total_without_biases`` and ``non_embedding`` (the total less every embedding matrix,
    Kaplan et al. 2020's N). All exact ints.
    """
    _check(config)
    d, n_layers, d_ff = config["d_model"], config["n_layers"], config["d_ff"]
    d_head = d // config["n_heads"]
    kv = config["n_kv_heads"] * d_head  # width of keys and values (d without GQA)
    bias = 1 if config["biases"] else 0
    n_mats = 3 if config["mlp"] == "swiglu" else 2  # gate, up, down or up, down
    norm = (2 if config["norm"] == "layernorm" else 1) * d
    per_layer = {
        "attention_weights": 2 * d * d + 2 * d * kv,  # W_Q, W_O: d x d; W_K, W_V: d x kv
        "attention_biases": bias * (2 * d + 2 * kv),
        "mlp_weights": n_mats * d * d_ff,
        "mlp_biases": bias * ((n_mats - 1) * d_ff + d),
        "norms": 2 * norm,  # before (or after) attention and before the MLP
    }
    per_layer["attention"] = per_layer["attention_weights"] + per_layer["attention_biases"]
    per_layer["mlp"] = per_layer["mlp_weights"] + per_layer["mlp_biases"]
    per_layer["total"] = per_layer["attention"] + per_layer["mlp"] + per_layer["norms"]
    embedding_parts = {
        "token": config["vocab"] * d,
        "position": config["context"] * d if config["positions"] == "learned" else 0,
        "token_type": config["token_types"] * d,
        "output": 0 if config["tied"] else config["vocab"] * d,  # tied: the same matrix
    }
    pooler = (d * d + bias * d) if config["pooler"] else 0
    parts = {
        "attention": n_layers * per_layer["attention"],
        "MLP": n_layers * per_layer["mlp"],
        "embeddings": sum(embedding_parts.values()),
        "norms": n_layers * per_layer["norms"] + norm,  # + the final (or embedding) norm
        "other": pooler,
    }
    biases = n_layers * (per_layer["attention_biases"] + per_layer["mlp_biases"])
    biases += bias * d if config["pooler"] else 0
    total = sum(parts.values())
    return {
        "per_layer": per_layer,
        "parts": parts,
        "embedding_parts": embedding_parts,
        "biases": biases,
        "total": total,
        "total_without_biases": total - biases,
        "non_embedding": total - parts["embeddings"],
        "d_head": d_head,
    }


def config_of(params: dict) -> dict:
    """The model the lab counts: a preset's configuration, or the reader's fields."""
    if params["preset"] != "custom":
        return spec_of(params["preset"])
    return {
        **{k: params[k] for k in _CUSTOM_FIELDS},
        "token_types": 0,
        "pooler": False,
    }


def compute(params: dict) -> dict:
    """The lab's result for validated ``params`` (see :data:`SCHEMA`).

    ``config`` is the model counted (a preset ignores the custom fields), ``label`` its
    name, ``counts`` its :func:`count`, and ``models`` one entry per preset (and the custom
    model when chosen) with ``name``, ``label``, ``parts`` and ``total``, for the stacked
    bars. Raises :class:`LabParameterError` naming ``n_heads`` or ``n_kv_heads`` when
    they do not divide ``d_model`` or ``n_heads``.
    """
    config = config_of(params)
    counts = count(config)
    name = params["preset"]
    label = PRESETS[name]["label"] if name in PRESETS else "Your own model"
    models = []
    for preset, spec in PRESETS.items():
        c = count(spec_of(preset))
        models.append(
            {"name": preset, "label": spec["label"], "parts": c["parts"], "total": c["total"]}
        )
    if name == "custom":
        models.append(
            {"name": name, "label": label, "parts": counts["parts"], "total": counts["total"]}
        )
    return {"preset": name, "label": label, "config": config, "counts": counts, "models": models}


def static_view(result: dict, params: dict) -> list[Table | Text]:
    """Without JavaScript: the model's count part by part, and every model's split."""
    c = result["counts"]
    layer = c["per_layer"]
    rows = [
        ("attention", (layer["attention"], c["parts"]["attention"])),
        ("MLP", (layer["mlp"], c["parts"]["MLP"])),
        ("norms", (layer["norms"], c["parts"]["norms"])),
        ("embeddings", (None, c["parts"]["embeddings"])),
        ("other", (None, c["parts"]["other"])),
        ("total", (layer["total"], c["total"])),
    ]
    model = Table(
        f"Parameters of {result['label']}, per layer and in the whole model "
        f"({result['config']['n_layers']} layers).",
        ("Part", "One layer", "Whole model"),
        rows,
    )
    every = Table(
        "Where every model's parameters sit.",
        ("Model", *PARTS, "Total"),
        [(m["label"], (*(m["parts"][p] for p in PARTS), m["total"])) for m in result["models"]],
    )
    return [
        model,
        Text(
            f"Without biases: {c['total_without_biases']:,d}; without the embeddings: "
            f"{c['non_embedding']:,d}."
        ),
        every,
    ]
