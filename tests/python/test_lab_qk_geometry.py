"""The qk_geometry lab (labs_py/attention_labs/labs/qk_geometry.py): scores are dot
products equal to |q||k| cos(theta), weights are PyTorch's softmax, and every way its
parameters can be wrong."""

import json
import math

import numpy as np
import pytest
import torch
from attention_labs.labs import run_lab, run_lab_json
from attention_labs.labs.qk_geometry import LARGEST, SCHEMA
from attention_labs.params import LabParameterError

LAB = "qk_geometry"
COORDS = [p.name for p in SCHEMA if p.kind == "number"]


def result(**params):
    return run_lab(LAB, params)["result"]


def random_params(seed):
    rng = np.random.default_rng(seed)
    return {name: float(np.round(rng.uniform(-3, 3), 1)) for name in COORDS}


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("scale", [False, True])
def test_scores_and_weights_match_torch(seed, scale):
    params = random_params(seed) | {"scale": scale}
    res = result(**params)
    q = torch.tensor(res["query"], dtype=torch.float64)
    K = torch.tensor(res["keys"], dtype=torch.float64)
    np.testing.assert_allclose(res["scores"], (K @ q).numpy(), rtol=0, atol=1e-12)
    logits = (K @ q) / (math.sqrt(2) if scale else 1)
    np.testing.assert_allclose(res["logits"], logits.numpy(), rtol=0, atol=1e-12)
    np.testing.assert_allclose(
        res["weights"], torch.softmax(logits, dim=-1).numpy(), rtol=0, atol=1e-12
    )
    # The same weights through PyTorch's attention: one query, the keys, identity values.
    sdpa = torch.nn.functional.scaled_dot_product_attention(
        q[None, None], K[None], torch.eye(4, dtype=torch.float64)[None], scale=None if scale else 1
    )
    np.testing.assert_allclose(res["weights"], sdpa[0, 0].numpy(), rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_score_is_lengths_times_cosine_of_the_angle(seed):
    res = result(**random_params(seed))
    q, K = np.array(res["query"]), np.array(res["keys"])
    for j in range(4):
        angle = math.radians(res["angles_deg"][j])
        product = res["query_length"] * res["key_lengths"][j] * math.cos(angle)
        assert res["scores"][j] == pytest.approx(product, abs=1e-9)
        assert res["key_lengths"][j] == pytest.approx(float(np.hypot(*K[j])))
    assert res["query_length"] == pytest.approx(float(np.hypot(*q)))


def test_defaults_aligned_angled_orthogonal_opposite():
    res = result()
    assert res["angles_deg"][0] == pytest.approx(0.0, abs=1e-9)
    assert 0 < res["angles_deg"][1] < 90
    assert res["angles_deg"][2] == 90.0 and res["scores"][2] == 0.0
    assert res["angles_deg"][3] == pytest.approx(180.0, abs=1e-9) and res["scores"][3] < 0
    assert res["top_key"] == 0


def test_zero_vectors_score_zero_with_cosine_zero():
    res = result(qx=0, qy=0)
    assert res["scores"] == [0.0] * 4 and res["cosines"] == [0.0] * 4
    np.testing.assert_allclose(res["weights"], 0.25)
    assert res["angles_deg"] == [90.0] * 4
    json.dumps(res, allow_nan=False)


def test_largest_runs():
    assert len(run_lab(LAB, LARGEST)["result"]["weights"]) == 4


# ----------------------------------------------------------------------------
# parameter errors


@pytest.mark.parametrize("name", COORDS)
@pytest.mark.parametrize("bad", [3.5, -3.01, "1", None, float("inf")])
def test_bad_coordinate_names_the_parameter_and_the_range(name, bad):
    with pytest.raises(LabParameterError) as info:
        run_lab(LAB, {name: bad})
    assert info.value.param == name
    assert str(info.value).startswith(f"{name} must be a number from -3 to 3")


def test_scale_must_be_a_boolean():
    with pytest.raises(LabParameterError) as info:
        run_lab(LAB, {"scale": "yes"})
    assert info.value.param == "scale" and "true or false" in str(info.value)


def test_run_lab_json_reports_a_bad_coordinate():
    out = json.loads(run_lab_json(LAB, json.dumps({"k3y": 9})))
    assert out["ok"] is False and out["param"] == "k3y"
