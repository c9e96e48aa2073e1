"""The query_picker lab (labs_py/attention_labs/labs/query_picker.py): shapes, the
[query, key] score grid against PyTorch (nn.Linear projections, scaled_dot_product_attention
for the weights), and every way its parameters can be wrong."""

import json
import math

import numpy as np
import pytest
import torch
from attention_labs.labs import run_lab, run_lab_json
from attention_labs.labs.query_picker import D_MODEL, LARGEST, embeddings, projections
from attention_labs.params import LabParameterError

LAB = "query_picker"
SENTENCE = ["The", "mole", "dug", "a", "tunnel", "under", "the", "lawn"]


def result(**params):
    return run_lab(LAB, params)["result"]


def test_default_shapes():
    res = result()
    seq_len, d_head = len(SENTENCE), res["d_head"]
    assert res["tokens"] == SENTENCE and res["d_model"] == D_MODEL
    assert res["shapes"] == {
        "X": [seq_len, D_MODEL],
        "W_Q": [D_MODEL, d_head],
        "W_K": [D_MODEL, d_head],
        "Q": [seq_len, d_head],
        "K": [seq_len, d_head],
        "S": [seq_len, seq_len],
    }
    assert len(res["q"]) == d_head and np.array(res["S"]).shape == (seq_len, seq_len)
    assert res["shown_dims"] == 8 and result(d_head=4)["shown_dims"] == 4


@pytest.mark.parametrize("query", [0, 1, 7])
@pytest.mark.parametrize("d_head", [2, 16, 64])
def test_scores_match_torch_linear_projections(query, d_head):
    res = result(query=query, d_head=d_head, seed=3)
    X = torch.tensor(embeddings(SENTENCE, 3))
    W_Q, W_K = (torch.tensor(w) for w in projections(d_head, 3))
    to_q = torch.nn.Linear(D_MODEL, d_head, bias=False, dtype=torch.float64)
    to_k = torch.nn.Linear(D_MODEL, d_head, bias=False, dtype=torch.float64)
    with torch.no_grad():
        to_q.weight.copy_(W_Q.T)  # nn.Linear stores (out, in): x W_Q = x @ weight.T
        to_k.weight.copy_(W_K.T)
        Q, K = to_q(X), to_k(X)
    np.testing.assert_allclose(res["S"], (Q @ K.T).numpy(), rtol=0, atol=1e-10)
    np.testing.assert_allclose(res["q"], Q[query].numpy(), rtol=0, atol=1e-12)
    np.testing.assert_allclose(res["scores"], res["S"][query], rtol=0, atol=0)
    # The weights: PyTorch's attention with identity values returns the pattern's row.
    eye = torch.eye(len(SENTENCE), dtype=torch.float64)
    pattern = torch.nn.functional.scaled_dot_product_attention(Q[None], K[None], eye[None])[0]
    np.testing.assert_allclose(res["weights"], pattern[query].numpy(), rtol=0, atol=1e-12)
    assert sum(res["weights"]) == pytest.approx(1.0, abs=1e-12)
    assert res["top_key"] == int(np.argmax(res["weights"]))


def test_score_grid_is_not_symmetric_with_different_w_q_and_w_k():
    S = np.array(result()["S"])
    assert not np.allclose(S, S.T)  # S[i, j] = q_i . k_j, which is not q_j . k_i


def test_same_token_same_embedding_different_position_different_vector():
    X = embeddings(["the", "cat", "the"], 0)
    assert not np.allclose(X[0], X[2])  # positions differ
    # Swap "the" for "a" in both places: the change is the same vector at both positions,
    # so the word's part of X does not depend on where the word is.
    change = X - embeddings(["a", "cat", "a"], 0)
    np.testing.assert_allclose(change[0], change[2], rtol=0, atol=1e-15)
    assert np.all(change[1] == 0)


def test_words_are_case_folded_as_in_every_synthetic_lab_of_lessons_2_to_6():
    np.testing.assert_array_equal(embeddings(["The", "cat"], 0), embeddings(["the", "cat"], 0))


def test_different_seeds_give_different_scores():
    assert result(seed=0)["S"] != result(seed=1)["S"]


def test_largest_runs():
    res = run_lab(LAB, LARGEST)["result"]
    assert np.array(res["S"]).shape == (32, 32) and len(res["q"]) == 64
    json.dumps(res, allow_nan=False)


def test_scale_is_sqrt_d_head():
    res = result(d_head=25)
    scores = np.array(res["scores"]) / math.sqrt(25)
    expected = np.exp(scores - scores.max()) / np.exp(scores - scores.max()).sum()
    np.testing.assert_allclose(res["weights"], expected, rtol=0, atol=1e-12)


# ----------------------------------------------------------------------------
# parameter errors


def raises(params, param):
    with pytest.raises(LabParameterError) as info:
        run_lab(LAB, params)
    assert info.value.param == param
    return str(info.value)


def test_query_past_the_sentence_names_the_range_of_this_sentence():
    message = raises({"tokens": ["a", "b", "c"], "query": 3}, "query")
    assert "from 0 to 2" in message and "3 tokens" in message


@pytest.mark.parametrize("bad", [-1, 32, 1.5, "1", None])
def test_bad_query_names_the_parameter(bad):
    assert "query must be a whole number from 0 to 31" in raises({"query": bad}, "query")


@pytest.mark.parametrize("bad", [1, 65, 2.5, None])
def test_bad_d_head_names_the_range(bad):
    assert "d_head must be a whole number from 2 to 64" in raises({"d_head": bad}, "d_head")


@pytest.mark.parametrize("bad", [[], ["t"] * 33, ["x" * 33], "a b"])
def test_bad_tokens(bad):
    raises({"tokens": bad}, "tokens")


def test_run_lab_json_reports_the_query_out_of_range():
    out = json.loads(run_lab_json(LAB, json.dumps({"tokens": ["a"], "query": 1})))
    assert out == {"ok": False, "error": out["error"], "param": "query"}
