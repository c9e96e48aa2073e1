"""The scaling lab (labs_py/attention_labs/labs/scaling.py): its dot products, softmax,
entropy and Jacobian norm against the project's math and PyTorch, and its parameters."""

import json
import math

import numpy as np
import pytest
import torch
from attention_labs import attention_logits, entropy_bits, softmax
from attention_labs.labs import run_lab, run_lab_json
from attention_labs.labs import scaling as lab
from attention_labs.params import LabParameterError

LAB = "scaling"


def result(**params):
    return run_lab(LAB, params)["result"]


def test_widths_are_the_powers_of_two_from_4_to_512():
    assert lab.D_HEADS == tuple(2**k for k in range(2, 10))
    assert result()["d_heads"] == list(lab.D_HEADS)


def test_random_queries_and_keys_have_unit_variance_components():
    Q, K = lab.random_queries_and_keys(64, 0)
    assert Q.shape == K.shape == (64, 512)
    both = np.concatenate([Q.ravel(), K.ravel()])
    assert abs(both.mean()) < 0.01 and abs(both.std() - 1) < 0.01


def test_dot_products_are_the_prefix_dot_products_at_every_width():
    Q, K = lab.random_queries_and_keys(12, 3)
    dots = lab.dot_products(Q, K)
    assert dots.shape == (len(lab.D_HEADS), 12, 12)
    for i, d in enumerate(lab.D_HEADS):
        np.testing.assert_allclose(dots[i], Q[:, :d] @ K[:, :d].T, rtol=0, atol=1e-10)
        # ...which scaled is the project's attention_logits of the first d components
        np.testing.assert_allclose(
            dots[i] / math.sqrt(d), attention_logits(Q[:, :d], K[:, :d]), rtol=0, atol=1e-12
        )


def test_softmax_rows_equals_the_projects_softmax_and_entropy():
    rng = np.random.default_rng(1)
    logits = rng.standard_normal((2, 8, 16, 16)) * np.array([1, 30])[:, None, None, None]
    p, h = lab.softmax_rows(logits)
    np.testing.assert_allclose(p, softmax(logits), rtol=0, atol=1e-15)
    np.testing.assert_allclose(h, entropy_bits(softmax(logits)), rtol=0, atol=1e-12)


def test_softmax_rows_matches_torch():
    logits = np.random.default_rng(2).standard_normal((5, 7)) * 10
    p, _ = lab.softmax_rows(logits)
    expected = torch.softmax(torch.tensor(logits), dim=-1).numpy()
    np.testing.assert_allclose(p, expected, rtol=0, atol=1e-15)


@pytest.mark.parametrize("spread", [0.1, 1.0, 5.0, 40.0])
def test_softmax_jacobian_equals_torch_jacrev(spread):
    z = torch.tensor(np.random.default_rng(4).standard_normal(9) * spread)
    expected = torch.func.jacrev(lambda x: torch.softmax(x, dim=-1))(z).numpy()
    p = torch.softmax(z, dim=-1).numpy()
    np.testing.assert_allclose(lab.softmax_jacobian(p), expected, rtol=0, atol=1e-14)
    norm = np.linalg.norm(expected)  # Frobenius
    assert lab.jacobian_norm(p) == pytest.approx(norm, rel=1e-9, abs=1e-15)


def test_softmax_jacobian_equals_autograd_row_by_row():
    z = torch.tensor(np.random.default_rng(5).standard_normal((3, 6)) * 2, requires_grad=True)
    p = torch.softmax(z, dim=-1)
    J = lab.softmax_jacobian(p.detach().numpy())  # (3, 6, 6)
    for row in range(3):
        for j in range(6):
            (grad,) = torch.autograd.grad(p[row, j], z, retain_graph=True)
            np.testing.assert_allclose(J[row, j], grad[row].numpy(), rtol=0, atol=1e-14)
            assert np.all(grad[np.arange(3) != row].numpy() == 0)  # rows are independent


def test_jacobian_norm_is_vectorised_and_right_at_the_extremes():
    n = 8
    uniform, one_hot = np.full(n, 1 / n), np.eye(n)[2]
    assert lab.jacobian_norm(one_hot) == 0.0  # no gradient through a one-hot row
    assert lab.jacobian_norm(uniform) == pytest.approx(math.sqrt(1 / n - 1 / n**2))
    rows = softmax(np.random.default_rng(6).standard_normal((4, 5, n)))
    np.testing.assert_allclose(
        lab.jacobian_norm(rows),
        np.linalg.norm(lab.softmax_jacobian(rows), axis=(-2, -1)),
        rtol=1e-12,
    )


def test_compute_equals_a_plain_loop_over_widths():
    params = {"seq_len": 10, "seed": 7}
    res = result(**params)
    Q, K = lab.random_queries_and_keys(10, 7)
    for i, d in enumerate(lab.D_HEADS):
        for name, scale in (("scaled", True), ("unscaled", False)):
            w = softmax(attention_logits(Q[:, :d], K[:, :d], scale=scale))
            assert res[name]["entropy_bits"][i] == pytest.approx(entropy_bits(w).mean(), abs=1e-12)
            norms = [np.linalg.norm(lab.softmax_jacobian(row)) for row in w]
            assert res[name]["gradient"][i] == pytest.approx(np.median(norms), abs=1e-12)
            assert res[name]["peaked"][i] == pytest.approx(np.mean(w.max(axis=-1) > 0.9))
    assert res["max_entropy_bits"] == pytest.approx(math.log2(10))
    assert res["max_gradient"] == pytest.approx(math.sqrt(1 / 10 - 1 / 100))


def test_marker_names_the_chosen_width():
    res = result(d_head=256)
    assert res["marker"] == {"d_head": 256, "index": lab.D_HEADS.index(256)}


def test_same_seed_same_result_other_seed_other_result():
    assert result(seed=3) == result(seed=3)
    assert result(seed=3) != result(seed=4)


def test_output_is_strict_json_at_the_largest_setting():
    out = run_lab(LAB, lab.LARGEST)
    assert json.loads(json.dumps(out, allow_nan=False)) == out
    packed = json.loads(run_lab_json(LAB, json.dumps(lab.LARGEST)))
    assert packed["ok"] is True


@pytest.mark.parametrize(
    "params,param,words",
    [
        ({"seq_len": 1}, "seq_len", "whole number from 2 to 64"),
        ({"seq_len": 65}, "seq_len", "whole number from 2 to 64"),
        ({"seq_len": 2.5}, "seq_len", "whole number from 2 to 64"),
        ({"d_head": 2}, "d_head", "whole number from 4 to 512"),
        ({"d_head": 1024}, "d_head", "whole number from 4 to 512"),
        ({"d_head": 100}, "d_head", "one of 4, 8, 16, 32, 64, 128, 256, 512"),
        ({"seed": -1}, "seed", "whole number from 0 to"),
        ({"temperature": 1}, "temperature", "allowed: seq_len, d_head, seed"),
    ],
)
def test_bad_parameters_name_the_parameter_and_the_allowed_range(params, param, words):
    with pytest.raises(LabParameterError) as info:
        run_lab(LAB, params)
    assert info.value.param == param and words in str(info.value)
    out = json.loads(run_lab_json(LAB, json.dumps(params)))
    assert out["ok"] is False and out["param"] == param
