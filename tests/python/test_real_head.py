"""The real_head lab (attention_labs.labs.real_head): a real head's pattern recomputed from the
queries and keys a committed asset carries equals the model's stored weights, and each
control moves it the expected way; bad vectors give errors naming the parameter."""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest
import torch
from attention_labs import real_maps
from attention_labs.labs import lab_schema, run_lab, run_lab_json
from attention_labs.params import LabParameterError
from helpers import ROOT, head_params

ASSETS = ROOT / "docs" / "assets" / "attention"
INDEX = json.loads((ASSETS / "index.json").read_text("utf-8"))
ASSET_PATHS = [a["path"] for a in INDEX["assets"]]
TOLERANCE = 1 / 255 + 1e-4  # stored weights are bytes / 255; q and k are float32


def load(path: str) -> dict:
    return json.loads((ASSETS / path).read_text("utf-8"))


def recompute(asset: dict, entry: dict, **changes) -> dict:
    return run_lab("real_head", head_params(asset, entry, **changes))["result"]


@pytest.fixture(scope="module")
def fluffy():
    asset = load("all-minilm-l6-v2/fluffy-creature.json")
    return asset, asset["qkv"]["heads"][0]


def test_index_lists_assets_with_qkv_heads():
    assert ASSET_PATHS
    assert all(load(p)["qkv"]["heads"] for p in ASSET_PATHS)


@pytest.mark.parametrize("path", ASSET_PATHS)
def test_every_qkv_head_recomputes_the_stored_pattern(path):
    asset = load(path)
    stored_all = real_maps.decode_attention(asset)  # (n_layers, n_heads, seq_len, seq_len)
    for entry in asset["qkv"]["heads"]:
        res = recompute(asset, entry)
        weights = np.array(res["weights"])
        stored = stored_all[entry["layer"], entry["head"]]
        where = f"{path} layer {entry['layer']} head {entry['head']}"
        assert np.abs(weights - stored).max() <= TOLERANCE, where
        assert res["stored_max_abs_diff"] == pytest.approx(np.abs(weights - stored).max())
        assert res["stored_max_abs_diff"] <= TOLERANCE, where


def test_result_has_the_attention_pattern_labs_fields(fluffy):
    asset, entry = fluffy
    n = asset["seq_len"]
    res = recompute(asset, entry)
    assert res["tokens"] == asset["tokens"]["text"]
    assert np.array(res["weights"]).shape == (n, n)
    assert np.array(res["logits"], dtype=float).shape == (n, n)
    for key in ("entropy_bits", "max_entropy_bits", "top_key"):
        assert len(res[key]) == n, key
    assert res["top_key"] == np.argmax(res["weights"], axis=-1).tolist()
    assert res["max_entropy_bits"] == pytest.approx([np.log2(n)] * n)
    assert res["mean_entropy_bits"] == pytest.approx(np.mean(res["entropy_bits"]))
    # the asset's statistic comes from the float weights: the recompute agrees closely
    stat = asset["head_stats"]["entropy_bits"][entry["layer"]][entry["head"]]
    assert res["mean_entropy_bits"] == pytest.approx(stat, abs=1e-3)


def test_without_stored_weights_there_is_no_difference_to_report(fluffy):
    asset, entry = fluffy
    assert recompute(asset, entry, stored="")["stored_max_abs_diff"] is None


def test_matches_torch_scaled_dot_product_attention(fluffy):
    asset, entry = fluffy
    n, d = asset["seq_len"], asset["qkv"]["d_head"]
    q = torch.from_numpy(real_maps.decode_vectors(entry["q"], n, d))
    k = torch.from_numpy(real_maps.decode_vectors(entry["k"], n, d))
    # sdpa returns outputs, not weights: with V = identity its output is the weights.
    eye = torch.eye(n, dtype=torch.float64)
    expected = torch.nn.functional.scaled_dot_product_attention(q, k, eye)
    np.testing.assert_allclose(recompute(asset, entry)["weights"], expected.numpy(), atol=1e-12)
    causal = torch.nn.functional.scaled_dot_product_attention(q, k, eye, is_causal=True)
    got = recompute(asset, entry, causal=True)["weights"]
    np.testing.assert_allclose(got, causal.numpy(), atol=1e-12)
    # temperature t is a scale of 1 / (sqrt(d_head) t)
    hot = torch.nn.functional.scaled_dot_product_attention(q, k, eye, scale=1 / (d**0.5 * 2.5))
    got = recompute(asset, entry, temperature=2.5)["weights"]
    np.testing.assert_allclose(got, hot.numpy(), atol=1e-12)


def test_no_scaling_and_low_temperature_sharpen_high_temperature_flattens(fluffy):
    asset, entry = fluffy
    base = recompute(asset, entry)["mean_entropy_bits"]
    assert recompute(asset, entry, scale=False)["mean_entropy_bits"] < base
    assert recompute(asset, entry, temperature=0.5)["mean_entropy_bits"] < base
    assert recompute(asset, entry, temperature=4.0)["mean_entropy_bits"] > base
    # Off the model's settings a spread-out head is no longer the stored one (a sharp
    # head, like this previous-token one, is one-hot either way).
    spread = max(asset["qkv"]["heads"], key=lambda e: recompute(asset, e)["mean_entropy_bits"])
    assert recompute(asset, spread)["mean_entropy_bits"] > 1
    assert recompute(asset, spread, scale=False)["stored_max_abs_diff"] > 0.05


def test_causal_mask_zeroes_the_upper_triangle(fluffy):
    asset, entry = fluffy
    n = asset["seq_len"]
    res = recompute(asset, entry, causal=True)
    weights = np.array(res["weights"])
    assert np.all(weights[np.triu_indices(n, 1)] == 0.0)
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, atol=1e-12)
    logits = np.array(res["logits"], dtype=float)  # None -> nan
    assert np.all(np.isnan(logits[np.triu_indices(n, 1)]))
    assert res["max_entropy_bits"] == pytest.approx(np.log2(np.arange(1, n + 1)).tolist())
    assert weights[0, 0] == 1.0


def test_a_lower_triangle_stored_head_is_read_by_its_length(fluffy):
    asset, entry = fluffy
    causal = np.array(recompute(asset, entry, causal=True)["weights"])
    packed = real_maps.quantise_rows(causal, causal=True)
    stored = base64.b64encode(packed.tobytes()).decode()
    res = recompute(asset, entry, causal=True, stored=stored)
    assert res["stored_max_abs_diff"] <= 1 / 255


def error(asset, entry, **changes) -> LabParameterError:
    with pytest.raises(LabParameterError) as info:
        run_lab("real_head", head_params(asset, entry, **changes))
    return info.value


@pytest.mark.parametrize("name", ["q", "k"])
def test_bad_base64_names_the_vectors(fluffy, name):
    asset, entry = fluffy
    err = error(asset, entry, **{name: "not base64!"})
    assert err.param == name
    assert str(err).startswith(f"{name} must be base64 text")
    assert error(asset, entry, **{name: 42}).param == name


@pytest.mark.parametrize("name", ["q", "k"])
def test_wrong_length_says_the_shape_needed(fluffy, name):
    asset, entry = fluffy
    n, d = asset["seq_len"], asset["qkv"]["d_head"]
    short = base64.b64encode(base64.b64decode(entry[name])[: 4 * d * (n - 1)]).decode()
    err = error(asset, entry, **{name: short})
    assert err.param == name
    assert f"{n} x {d}" in str(err) and f"{4 * n * d} bytes" in str(err)
    assert f"got {4 * d * (n - 1)} bytes" in str(err)
    # a wrong d_head is the same mistake seen from the other side
    assert error(asset, entry, d_head=d * 2).param == "q"


def test_non_finite_vectors_are_refused(fluffy):
    asset, entry = fluffy
    n, d = asset["seq_len"], asset["qkv"]["d_head"]
    k = real_maps.decode_vectors(entry["k"], n, d)
    k[2, 3] = np.nan
    err = error(asset, entry, k=real_maps.pack_vectors(k))
    assert err.param == "k" and "NaN" in str(err)


def test_stored_of_the_wrong_length_is_named(fluffy):
    asset, entry = fluffy
    err = error(asset, entry, stored=base64.b64encode(b"\x01" * 10).decode())
    assert err.param == "stored" and "got 10 bytes" in str(err)


@pytest.mark.parametrize("bad", [0, 0.01, 11, "hot", None, float("nan")])
def test_bad_temperature_is_named(fluffy, bad):
    asset, entry = fluffy
    err = error(asset, entry, temperature=bad)
    assert err.param == "temperature" and "from 0.05 to 10" in str(err)


def test_too_long_text_and_too_many_tokens_are_refused(fluffy):
    asset, entry = fluffy
    assert error(asset, entry, q="A" * 100_000).param == "q"
    assert error(asset, entry, tokens=["a"] * 65).param == "tokens"


def test_browser_entry_point_returns_the_error_for_the_page(fluffy):
    asset, entry = fluffy
    out = json.loads(run_lab_json("real_head", json.dumps(head_params(asset, entry, k="@@"))))
    assert out == {"ok": False, "error": out["error"], "param": "k"}
    ok = json.loads(run_lab_json("real_head", json.dumps(head_params(asset, entry))))
    assert ok["ok"] is True and ok["result"]["stored_max_abs_diff"] <= TOLERANCE


def test_schema_declares_base64_limits_and_defaults_run():
    by_name = {p["name"]: p for p in lab_schema("real_head")}
    assert by_name["q"]["kind"] == "base64"
    assert by_name["q"]["max_chars"] >= 4 * 64 * 64 * 4 / 3  # 64 tokens of GPT-2's d_head
    assert by_name["tokens"]["max_items"] == 64 and by_name["tokens"]["max_chars"] == 64
    assert by_name["stored"]["default"] == ""
    assert run_lab("real_head")["result"]["stored_max_abs_diff"] is None
