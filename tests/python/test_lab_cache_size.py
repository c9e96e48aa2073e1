"""The cache_size lab: the bytes of a key/value cache against hand arithmetic for two
presets (Llama-2-70B and GPT-2 small), MHA / GQA / MQA, every dtype, readable units, the
presets taken from the parameter calculator, and bad parameters naming themselves."""

import json

import pytest
from attention_labs.labs import cache_size as lab_module
from attention_labs.labs import run_lab, run_lab_json
from attention_labs.labs.cache_size import DECODERS, LARGEST, cache_bytes, readable_bytes
from attention_labs.labs.param_calculator import PRESETS
from attention_labs.params import LabParameterError

LAB = "cache_size"


def result(**params):
    return run_lab(LAB, params)["result"]


def test_llama2_70b_by_hand():
    # 80 layers, 64 query heads, 8 key/value heads, d_head 8192 / 64 = 128 (Touvron et al. 2023)
    p = PRESETS["llama2-70b"]
    assert (p["n_layers"], p["n_heads"], p["n_kv_heads"], p["d_model"] // p["n_heads"]) == (
        80,
        64,
        8,
        128,
    )
    res = result()  # the default: GQA as published, 4,096 tokens, fp16
    assert res["bytes"] == 2 * 80 * 8 * 128 * 4096 * 2 == 1_342_177_280
    assert res["readable"] == "1.34 GB" and res["per_token"] == 327_680
    by = {c["name"]: c["bytes"] for c in res["compare"]}
    assert by == {"mha": 8 * 1_342_177_280, "gqa": 1_342_177_280, "mqa": 1_342_177_280 // 8}
    assert result(sharing="mha")["bytes"] == 10_737_418_240
    assert result(sharing="mqa", dtype="fp32")["bytes"] == 2 * 80 * 1 * 128 * 4096 * 4
    assert result(n_kv_heads=16, dtype="int8", seq_len=1)["bytes"] == 2 * 80 * 16 * 128


def test_gpt2_small_by_hand():
    res = result(preset="gpt2-small", sharing="mha", seq_len=1024)
    assert (res["n_layers"], res["n_heads"], res["d_head"]) == (12, 12, 64)
    assert res["bytes"] == 2 * 12 * 12 * 64 * 1024 * 2 == 37_748_736
    assert res["readable"] == "37.7 MB"
    assert [c["name"] for c in res["compare"]] == ["mha", "mqa"]  # no GQA chosen
    assert result(preset="gpt2-small", n_kv_heads=3, seq_len=1024)["bytes"] == 37_748_736 // 4
    assert res["kv_choices"] == [1, 2, 3, 4, 6, 12]
    assert res["published_kv_heads"] == 12


def test_a_context_past_the_models_maximum_is_noted():
    assert result(preset="gpt2-small", sharing="mha", seq_len=1024)["context_note"] is None
    res = result(preset="gpt2-small", sharing="mha", seq_len=4096)
    assert res["context"] == 1024
    assert res["context_note"].startswith("GPT-2 small's context is at most 1,024 tokens")
    assert result()["context_note"] is None  # Llama-2-70B at its 4,096
    assert result()["presets"]["gpt3-175b"]["context"] == 2048


@pytest.mark.parametrize("dtype,size", [("fp32", 4), ("fp16", 2), ("bf16", 2), ("int8", 1)])
def test_dtypes(dtype, size):
    assert result(dtype=dtype)["bytes"] == 2 * 80 * 8 * 128 * 4096 * size


def test_linear_in_seq_len_and_in_n_kv_heads():
    one = result(seq_len=1)["bytes"]
    for n in (1, 100, 4096, 2**19):
        assert result(seq_len=n)["bytes"] == n * one
    assert result(seq_len=8192)["bytes"] == 2 * result(seq_len=4096)["bytes"]
    assert result(n_kv_heads=16)["bytes"] == 2 * result(n_kv_heads=8)["bytes"]


def test_presets_are_the_parameter_calculators_decoders():
    assert lab_module.PRESETS is PRESETS  # imported, not copied
    assert "bert-base" not in DECODERS and set(DECODERS) == set(PRESETS) - {"bert-base"}
    for name in DECODERS:
        p = PRESETS[name]
        res = result(preset=name, sharing="mha")
        assert res["bytes"] == cache_bytes(
            p["n_layers"], p["n_heads"], p["d_model"] // p["n_heads"], 4096, "fp16"
        )


def test_readable_bytes():
    cases = {
        0: "0 B",
        999: "999 B",
        1000: "1.00 kB",
        12_345: "12.3 kB",
        37_748_736: "37.7 MB",
        999_999_999: "1.00 GB",
        1_342_177_280: "1.34 GB",
        10_737_418_240: "10.7 GB",
        167_772_160: "168 MB",
        3 * 10**12: "3.00 TB",
    }
    for n, text in cases.items():
        assert readable_bytes(n) == text, n


@pytest.mark.parametrize(
    "params,param,words",
    [
        ({"n_kv_heads": 3}, "n_kv_heads", "one of 1, 2, 4, 8, 16, 32, 64, got 3"),
        ({"n_kv_heads": 128}, "n_kv_heads", "must divide n_heads (64)"),
        ({"preset": "gpt2-xl", "n_kv_heads": 2}, "n_kv_heads", "one of 1, 5, 25"),
        ({"preset": "bert-base"}, "preset", "one of"),
        ({"seq_len": 0}, "seq_len", "from 1 to 524288"),
        ({"dtype": "fp8"}, "dtype", "'fp32', 'fp16', 'bf16', 'int8'"),
        ({"sharing": "gqa2"}, "sharing", "'mha', 'gqa', 'mqa'"),
    ],
)
def test_bad_parameters_name_the_parameter_and_the_range(params, param, words):
    with pytest.raises(LabParameterError) as err:
        run_lab(LAB, params)
    assert err.value.param == param and words in str(err.value)
    out = json.loads(run_lab_json(LAB, json.dumps(params)))
    assert out["ok"] is False and out["param"] == param


def test_mha_and_mqa_ignore_n_kv_heads():
    assert result(sharing="mha", n_kv_heads=3)["n_kv_heads"] == 64
    assert result(sharing="mqa", n_kv_heads=3)["n_kv_heads"] == 1


def test_largest_runs():
    res = result(**LARGEST)
    assert res["bytes"] == 2 * 96 * 96 * 128 * 2**19 * 4


def test_output_is_strict_json():
    out = run_lab(LAB)
    assert json.loads(json.dumps(out, allow_nan=False)) == out


# ----------------------------------------------------------------------------
# the decoders lesson 9 names, a model of your own, and a sliding window


@pytest.mark.parametrize(
    "preset,layers,heads,kv,d_head,context,window",
    [
        # Touvron et al. 2023, Table 1 (7B: MHA); Jiang et al. 2023, Table 1; Llama Team 2024,
        # Table 3 (8B), with the released Meta-Llama-3-8B config's context
        ("llama2-7b", 32, 32, 32, 128, 4096, None),
        ("mistral-7b", 32, 32, 8, 128, 8192, 4096),
        ("llama3-8b", 32, 32, 8, 128, 8192, None),
    ],
)
def test_the_decoders_of_lesson_9_as_published(preset, layers, heads, kv, d_head, context, window):
    res = result(preset=preset, sharing="mha" if kv == heads else "gqa", n_kv_heads=kv)
    assert (res["n_layers"], res["n_heads"], res["n_kv_heads"], res["d_head"]) == (
        layers, heads, kv, d_head,
    )  # fmt: skip
    assert res["context"] == context and res["presets"][preset]["window"] == window
    assert res["bytes"] == 2 * layers * kv * d_head * 4096 * 2
    assert res["published_kv_heads"] == kv and res["published_window"] == window
    assert res["weights_bytes"] == 2 * {"llama2-7b": 6_738_415_616, "mistral-7b": 7_241_732_096,
                                        "llama3-8b": 8_030_261_248}[preset]  # fmt: skip


def test_mistral_7b_in_fp16_is_512_kib_per_token_until_the_window():
    per_token = 2 * 32 * 8 * 128 * 2
    full = result(preset="mistral-7b", seq_len=32768)  # sliding off: every token kept
    assert full["bytes"] == per_token * 32768 and not full["capped"]
    capped = result(preset="mistral-7b", seq_len=32768, sliding=True, window=4096)
    assert capped["cached_tokens"] == 4096 and capped["capped"]
    assert capped["bytes"] == per_token * 4096 == 536_870_912 and capped["readable"] == "537 MB"
    assert full["bytes"] // capped["bytes"] == 8  # Jiang et al.: 8x less at 32k tokens
    assert capped["per_token"] == per_token
    assert capped["window_note"] == (
        "The sliding window of 4,096 tokens caps the cache: each layer keeps the last 4,096 "
        "of the 32,768 tokens (a rolling buffer), 537 MB instead of 4.29 GB."
    )
    assert [c["bytes"] for c in capped["compare"]] == [per_token * 4 * 4096, per_token * 4096,
                                                       per_token // 8 * 4096]  # fmt: skip


def test_a_window_longer_than_the_text_changes_nothing():
    res = result(preset="mistral-7b", seq_len=1000, sliding=True, window=4096)
    assert res["cached_tokens"] == 1000 and not res["capped"] and res["window_note"] is None
    assert res["bytes"] == result(preset="mistral-7b", seq_len=1000)["bytes"]
    assert res["window"] == 4096
    assert result(preset="mistral-7b", seq_len=1000)["window"] is None  # sliding off


def test_the_window_holds_min_seq_len_window_tokens_for_any_model():
    for seq_len, window in ((1, 1), (5, 1), (4096, 4095), (2**19, 2**19), (100, 7)):
        res = result(seq_len=seq_len, sliding=True, window=window)
        assert res["cached_tokens"] == min(seq_len, window)
        assert res["bytes"] == cache_bytes(80, 8, 128, min(seq_len, window), "fp16")


def test_a_model_of_your_own():
    res = result(preset="custom", n_layers=4, n_heads=8, d_head=16, n_kv_heads=2, seq_len=512)
    assert res["label"] == "Your own model" and res["n_kv_heads"] == 2 and res["group"] == 4
    assert res["bytes"] == 2 * 4 * 2 * 16 * 512 * 2 == 262_144  # lesson 9's exercise
    assert res["weights_bytes"] is None and res["weights_readable"] is None
    assert res["context"] is None and res["context_note"] is None
    assert res["kv_choices"] == [1, 2, 4, 8]
    mha = result(preset="custom", n_layers=4, n_heads=8, d_head=16, sharing="mha", seq_len=512)
    assert mha["bytes"] == 1_048_576 and mha["n_kv_heads"] == 8
    assert result(preset="custom", n_heads=8, sharing="mqa")["n_kv_heads"] == 1
    # the presets ignore the custom fields
    assert result(n_layers=1, n_heads=2, d_head=3) == result()


@pytest.mark.parametrize(
    "params,param,words",
    [
        ({"preset": "custom", "n_heads": 12, "n_kv_heads": 5}, "n_kv_heads",
         "n_kv_heads must divide n_heads (12) of your own model: one of 1, 2, 3, 4, 6, 12, got 5"),
        ({"preset": "custom", "n_heads": 4, "n_kv_heads": 8}, "n_kv_heads",
         "must divide n_heads (4) of your own model"),
        ({"sliding": True, "window": 0}, "window", "window must be a whole number from 1 to"),
        ({"window": -4096}, "window", "from 1 to 524288, got -4096"),
        ({"preset": "custom", "n_layers": 0}, "n_layers", "from 1 to 256"),
        ({"preset": "custom", "d_head": 2.5}, "d_head", "whole number"),
        ({"sliding": "yes"}, "sliding", "true or false"),
    ],
)  # fmt: skip
def test_bad_custom_models_and_windows_name_the_parameter(params, param, words):
    with pytest.raises(LabParameterError) as err:
        run_lab(LAB, params)
    assert err.value.param == param and words in str(err.value)
    out = json.loads(run_lab_json(LAB, json.dumps(params)))
    assert out["ok"] is False and out["param"] == param


def test_the_static_view_shows_the_formula_with_the_window():
    from attention_labs.labs import static_view

    params = {"preset": "mistral-7b", "seq_len": 8192, "sliding": True, "window": 4096}
    out = run_lab(LAB, params)
    formula, note, table = static_view(LAB, out["result"], out["params"])
    assert formula.text == (
        "Mistral-7B, GQA, fp16: 2 × 32 layers × 8 key/value heads × 128 (d_head) × "
        "min(8,192, window 4,096) = 4,096 tokens × 2 bytes = 536,870,912 bytes ≈ 537 MB."
    )
    assert note.text.startswith("The sliding window of 4,096 tokens caps the cache")
    assert [r[0] for r in table.rows] == [
        "MHA (32 key/value heads)", "GQA (8 key/value heads)", "MQA (1 key/value head)",
    ]  # fmt: skip
