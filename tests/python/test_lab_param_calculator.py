"""The param_calculator lab: its presets against the published parameter counts (by
arithmetic from each model's configuration, and by building the Hugging Face module on the
meta device, so nothing is downloaded or allocated), its custom model against real modules,
and its parameter errors."""

import json

import pytest
from attention_labs.labs import run_lab, run_lab_json
from attention_labs.labs.param_calculator import PRESETS, count
from attention_labs.params import LabParameterError

LAB = "param_calculator"
PUBLISHED = {  # the Hugging Face checkpoints' parameter counts
    "gpt2-small": 124_439_808,
    "gpt2-medium": 354_823_168,
    "gpt2-large": 774_030_080,
    "gpt2-xl": 1_557_611_200,
    "bert-base": 109_482_240,  # BertModel, pooler included
    "llama2-70b": 68_976_648_192,
    "llama2-7b": 6_738_415_616,  # meta-llama/Llama-2-7b-hf
    "mistral-7b": 7_241_732_096,  # mistralai/Mistral-7B-v0.1
    "llama3-8b": 8_030_261_248,  # meta-llama/Meta-Llama-3-8B
}
# The released configs of the decoders lesson 9 names (Hugging Face field names): Llama-2-7B
# (Touvron et al. 2023), Mistral-7B (Jiang et al. 2023, Table 1), Llama-3-8B (Llama Team
# 2024, Table 3; vocabulary and context from the released config).
CONFIGS = {
    "llama2-7b": dict(hidden_size=4096, intermediate_size=11008, num_hidden_layers=32,
                      num_attention_heads=32, num_key_value_heads=32, vocab_size=32000,
                      max_position_embeddings=4096),
    "mistral-7b": dict(hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                       num_attention_heads=32, num_key_value_heads=8, vocab_size=32000,
                       max_position_embeddings=8192, sliding_window=4096),
    "llama3-8b": dict(hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                      num_attention_heads=32, num_key_value_heads=8, vocab_size=128256,
                      max_position_embeddings=8192),
}  # fmt: skip
GPT2_SIZES = {  # (n_layer, n_embd, n_head), Radford et al. 2019, Table 2 / the HF configs
    "gpt2-small": (12, 768, 12),
    "gpt2-medium": (24, 1024, 16),
    "gpt2-large": (36, 1280, 20),
    "gpt2-xl": (48, 1600, 25),
}


def counts(**params):
    return run_lab(LAB, params)["result"]["counts"]


def gpt2_by_hand(n_layer, d, vocab=50257, context=1024):
    """GPT-2 from its configuration: every matrix and vector written out."""
    attention = (d * 3 * d + 3 * d) + (d * d + d)  # c_attn (W_Q, W_K, W_V) and c_proj (W_O)
    mlp = (d * 4 * d + 4 * d) + (4 * d * d + d)  # c_fc and c_proj
    norms = 2 * (2 * d)  # ln_1, ln_2: weight and bias
    return n_layer * (attention + mlp + norms) + vocab * d + context * d + 2 * d  # + ln_f


@pytest.mark.parametrize("preset", list(PUBLISHED))
def test_preset_total_is_the_published_count(preset):
    assert counts(preset=preset)["total"] == PUBLISHED[preset]


@pytest.mark.parametrize("preset", list(GPT2_SIZES))
def test_gpt2_presets_by_arithmetic_from_their_configs(preset):
    n_layer, d, _ = GPT2_SIZES[preset]
    assert gpt2_by_hand(n_layer, d) == PUBLISHED[preset] == counts(preset=preset)["total"]


def test_gpt2_small_attention_is_28_348_416():
    c = counts(preset="gpt2-small")
    assert c["parts"]["attention"] == 28_348_416 == 12 * (4 * 768**2 + 4 * 768)
    assert c["per_layer"]["attention_weights"] == 4 * 768**2


def test_bert_base_by_arithmetic_and_what_is_counted():
    d = 768
    embeddings = 30522 * d + 512 * d + 2 * d + 2 * d  # words, positions, token types, LN
    layer = (4 * d * d + 4 * d) + 2 * d + (d * 3072 + 3072) + (3072 * d + d) + 2 * d
    pooler = d * d + d
    assert embeddings + 12 * layer + pooler == 109_482_240
    c = counts(preset="bert-base")
    assert c["parts"]["other"] == pooler
    assert c["total"] - pooler == 108_891_648  # without the pooler


def test_gpt3_is_about_175b_with_about_58b_in_attention():
    c = counts(preset="gpt3-175b")
    assert abs(c["total"] / 175e9 - 1) < 0.01
    per_layer = c["per_layer"]["attention_weights"]
    assert 96 * 96 * 4 * 12288 * 128 == 4 * 12288**2 * 96 == 96 * per_layer
    assert round(c["parts"]["attention"] / 1e9) == 58
    assert round(c["parts"]["MLP"] / 1e9) == 116
    assert 2 * 12288 * 49152 * 96 == 96 * c["per_layer"]["mlp_weights"]
    assert 0.32 < c["parts"]["attention"] / c["total"] < 0.34  # about a third


def test_llama2_70b_by_arithmetic():
    d, kv = 8192, 8 * 128
    layer = 2 * d * d + 2 * d * kv + 3 * d * 28672 + 2 * d
    assert 80 * layer + 2 * 32000 * d + d == 68_976_648_192
    c = counts(preset="llama2-70b")
    assert c["biases"] == 0 and c["total"] == c["total_without_biases"]
    assert c["embedding_parts"]["output"] == 32000 * d  # untied: counted
    assert c["embedding_parts"]["position"] == 0  # rotary


# ----------------------------------------------------------------------------
# against real modules (transformers, on the meta device: shapes only)

try:
    import torch
    import transformers
except ImportError:  # the arithmetic above still runs
    torch = transformers = None
needs_torch = pytest.mark.skipif(torch is None, reason="needs torch and transformers")


def numel(module):
    return sum(p.numel() for p in module.parameters())  # a tied matrix is listed once


@needs_torch
@pytest.mark.parametrize("preset", list(GPT2_SIZES))
def test_gpt2_presets_match_gpt2_lm_head_model(preset):
    n_layer, d, h = GPT2_SIZES[preset]
    config = transformers.GPT2Config(
        n_layer=n_layer, n_embd=d, n_head=h, vocab_size=50257, n_positions=1024
    )
    with torch.device("meta"):
        model = transformers.GPT2LMHeadModel(config)
    c = counts(preset=preset)
    assert numel(model) == c["total"]
    attention = sum(p.numel() for n, p in model.named_parameters() if ".attn." in n)
    assert attention == c["parts"]["attention"]
    mlp = sum(p.numel() for n, p in model.named_parameters() if ".mlp." in n)
    assert mlp == c["parts"]["MLP"]


@needs_torch
def test_bert_preset_matches_bert_model():
    with torch.device("meta"):
        model = transformers.BertModel(transformers.BertConfig())  # bert-base-uncased's
    assert numel(model) == counts(preset="bert-base")["total"]
    assert numel(model.pooler) == counts(preset="bert-base")["parts"]["other"]


def llama(**overrides):
    config = dict(
        hidden_size=8192,
        intermediate_size=28672,
        num_hidden_layers=80,
        num_attention_heads=64,
        num_key_value_heads=8,
        vocab_size=32000,
        max_position_embeddings=4096,
        tie_word_embeddings=False,
    )
    with torch.device("meta"):
        return transformers.LlamaForCausalLM(transformers.LlamaConfig(**{**config, **overrides}))


@needs_torch
def test_llama_preset_matches_llama_for_causal_lm():
    model = llama()
    c = counts(preset="llama2-70b")
    assert numel(model) == c["total"] == PUBLISHED["llama2-70b"]
    attention = sum(p.numel() for n, p in model.named_parameters() if ".self_attn." in n)
    assert attention == c["parts"]["attention"]


@pytest.mark.parametrize("preset", list(CONFIGS))
def test_lesson_9s_decoders_by_arithmetic_from_their_configs(preset):
    c = CONFIGS[preset]
    d, kv = (
        c["hidden_size"],
        c["num_key_value_heads"] * c["hidden_size"] // c["num_attention_heads"],
    )
    layer = 2 * d * d + 2 * d * kv + 3 * d * c["intermediate_size"] + 2 * d  # RMSNorm: scale only
    total = c["num_hidden_layers"] * layer + 2 * c["vocab_size"] * d + d  # untied; final norm
    assert total == PUBLISHED[preset] == counts(preset=preset)["total"]
    p = PRESETS[preset]
    assert (p["d_model"], p["n_layers"], p["n_heads"], p["n_kv_heads"], p["d_ff"], p["vocab"],
            p["context"]) == tuple(c[k] for k in ("hidden_size", "num_hidden_layers",
            "num_attention_heads", "num_key_value_heads", "intermediate_size", "vocab_size",
            "max_position_embeddings"))  # fmt: skip
    assert p["window"] == c.get("sliding_window")


@needs_torch
@pytest.mark.parametrize("preset", list(CONFIGS))
def test_lesson_9s_decoders_match_their_hugging_face_modules(preset):
    kind = "Mistral" if preset.startswith("mistral") else "Llama"
    config = getattr(transformers, f"{kind}Config")(**CONFIGS[preset], tie_word_embeddings=False)
    with torch.device("meta"):
        model = getattr(transformers, f"{kind}ForCausalLM")(config)
    c = counts(preset=preset)
    assert numel(model) == c["total"] == PUBLISHED[preset]
    attention = sum(p.numel() for n, p in model.named_parameters() if ".self_attn." in n)
    assert attention == c["parts"]["attention"]


@needs_torch
@pytest.mark.parametrize(
    "layers,d,heads,d_ff,vocab,context", [(1, 8, 2, 32, 11, 5), (3, 64, 4, 100, 97, 33)]
)
def test_custom_gpt2_like_models_match_gpt2(layers, d, heads, d_ff, vocab, context):
    config = transformers.GPT2Config(
        n_layer=layers, n_embd=d, n_head=heads, n_inner=d_ff, vocab_size=vocab, n_positions=context
    )
    with torch.device("meta"):
        model = transformers.GPT2LMHeadModel(config)
    params = dict(preset="custom", d_model=d, n_layers=layers, n_heads=heads, n_kv_heads=heads)
    c = counts(**params, d_ff=d_ff, vocab=vocab, context=context)
    assert numel(model) == c["total"]


@needs_torch
@pytest.mark.parametrize("heads,kv,tied", [(4, 1, True), (4, 2, False), (8, 8, False)])
def test_custom_llama_like_models_match_llama(heads, kv, tied):
    model = llama(
        hidden_size=64,
        intermediate_size=96,
        num_hidden_layers=2,
        num_attention_heads=heads,
        num_key_value_heads=kv,
        vocab_size=50,
        tie_word_embeddings=tied,
    )
    c = counts(
        preset="custom",
        d_model=64,
        n_layers=2,
        n_heads=heads,
        n_kv_heads=kv,
        d_ff=96,
        vocab=50,
        context=4096,
        biases=False,
        tied=tied,
        mlp="swiglu",
        norm="rmsnorm",
        positions="rotary",
    )
    assert numel(model) == c["total"]


@needs_torch
def test_llama_with_biases_matches_attention_and_mlp_bias():
    model = llama(
        hidden_size=32,
        intermediate_size=40,
        num_hidden_layers=1,
        num_attention_heads=4,
        num_key_value_heads=2,
        vocab_size=10,
        attention_bias=True,
        mlp_bias=True,
    )
    c = counts(
        preset="custom", d_model=32, n_layers=1, n_heads=4, n_kv_heads=2, d_ff=40, vocab=10,
        biases=True, tied=False, mlp="swiglu", norm="rmsnorm", positions="rotary",
    )  # fmt: skip
    assert numel(model) == c["total"]


# ----------------------------------------------------------------------------
# what the lesson says of the counts


def test_attention_is_4_d_model_squared_whatever_the_number_of_heads():
    base = dict(preset="custom", d_model=768, n_layers=1)
    for heads in (1, 2, 12, 256):
        c = counts(**base, n_heads=heads, n_kv_heads=heads)["per_layer"]
        assert c["attention_weights"] == 4 * 768**2 and c["attention_biases"] == 4 * 768


def test_without_biases_the_formulas_are_bare_matrices():
    c = counts(preset="custom", biases=False)
    d = 768
    assert c["per_layer"]["attention"] == 4 * d * d and c["per_layer"]["mlp"] == 2 * d * 3072
    assert c["biases"] == 0
    with_biases = counts(preset="custom")
    assert with_biases["total"] - with_biases["biases"] == with_biases["total_without_biases"]
    assert with_biases["total_without_biases"] == c["total"]


def test_untying_adds_one_vocab_by_d_model_matrix():
    tied, untied = counts(preset="custom"), counts(preset="custom", tied=False)
    assert untied["total"] - tied["total"] == 50257 * 768


def test_a_preset_ignores_the_custom_fields():
    assert counts(preset="gpt2-small", d_model=64, n_heads=2) == counts(preset="gpt2-small")


def test_models_list_every_preset_and_the_custom_one_when_chosen():
    res = run_lab(LAB, {"preset": "custom", "d_model": 64, "n_heads": 4, "n_kv_heads": 4})
    names = [m["name"] for m in res["result"]["models"]]
    assert names == [*PRESETS, "custom"]
    for m in res["result"]["models"]:
        assert sum(m["parts"].values()) == m["total"]
    assert "custom" not in [m["name"] for m in run_lab(LAB)["result"]["models"]]


def test_count_is_the_lab_result():
    spec = {k: v for k, v in PRESETS["gpt3-175b"].items() if k not in ("label", "window")}
    assert count(spec) == counts(preset="gpt3-175b")


def test_the_window_is_a_fact_of_the_model_not_a_counted_field():
    assert PRESETS["mistral-7b"]["window"] == 4096
    assert all(p["window"] is None for k, p in PRESETS.items() if k != "mistral-7b")
    config = run_lab(LAB, {"preset": "mistral-7b"})["result"]["config"]
    assert "window" not in config and "label" not in config


def test_output_is_strict_json():
    out = run_lab(LAB, {"preset": "llama2-70b"})
    assert json.loads(json.dumps(out, allow_nan=False)) == out


# ----------------------------------------------------------------------------
# parameter errors name the parameter and the allowed range


@pytest.mark.parametrize(
    "params,param,words",
    [
        ({"preset": "custom", "d_model": 100, "n_kv_heads": 12}, "n_heads", "divide d_model (100)"),
        ({"preset": "custom", "n_heads": 12, "n_kv_heads": 5}, "n_kv_heads", "divide n_heads (12)"),
        ({"preset": "custom", "n_heads": 12, "n_kv_heads": 24}, "n_kv_heads", "from 1 to 12"),
        ({"d_model": 0}, "d_model", "from 1 to 32768"),
        ({"n_layers": 1000}, "n_layers", "from 1 to 256"),
        ({"vocab": 2.5}, "vocab", "whole number"),
        ({"mlp": "relu"}, "mlp", "'gelu', 'swiglu'"),
        ({"preset": "gpt-4"}, "preset", "'gpt2-small'"),
    ],
)  # fmt: skip
def test_bad_parameters_name_the_parameter_and_the_range(params, param, words):
    with pytest.raises(LabParameterError) as err:
        run_lab(LAB, params)
    assert err.value.param == param and param in str(err.value) and words in str(err.value)
    out = json.loads(run_lab_json(LAB, json.dumps(params)))
    assert out["ok"] is False and out["param"] == param


def test_largest_runs_and_stays_exact_in_a_double():
    from attention_labs.labs.param_calculator import LARGEST

    total = counts(**LARGEST)["total"]
    assert 0 < total < 2**53  # the page's numbers are doubles: every count stays exact
