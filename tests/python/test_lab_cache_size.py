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
