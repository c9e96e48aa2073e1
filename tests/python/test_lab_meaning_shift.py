"""The meaning_shift lab (labs_py/attention_labs/labs/meaning_shift.py): weights that sum to
1, the update added to the embedding, cosines checked against PyTorch, and every way its
parameters can be wrong."""

import json

import numpy as np
import pytest
import torch
from attention_labs.labs import run_lab, run_lab_json
from attention_labs.labs.meaning_shift import LARGEST, SENTENCES, WORDS, cosine
from attention_labs.params import LabParameterError

LAB = "meaning_shift"


def result(**params):
    return run_lab(LAB, params)["result"]


@pytest.mark.parametrize("sentence", sorted(SENTENCES))
def test_every_sentence_names_its_word_and_three_context_words(sentence):
    res = result(sentence=sentence)
    assert res["tokens"][res["word_index"]] == res["word"]
    assert len(res["context_index"]) == 3 and res["word_index"] not in res["context_index"]
    assert res["context_words"] == [res["tokens"][i] for i in res["context_index"]]
    assert np.array(res["context_vectors"]).shape == (3, 2)
    assert len(res["sense_names"]) == len(WORDS[res["word"]]["senses"])


@pytest.mark.parametrize("raw", [(1, 1, 1), (0.2, 0.5, 1), (0, 0, 0.3), (1, 0, 0)])
def test_weights_are_the_raw_values_divided_by_their_sum(raw):
    res = result(w1=raw[0], w2=raw[1], w3=raw[2])
    np.testing.assert_allclose(res["weights"], np.array(raw) / sum(raw), rtol=0, atol=1e-15)
    assert sum(res["weights"]) == pytest.approx(1.0, abs=1e-15)
    assert res["reads_nothing"] is False


def test_all_raw_weights_zero_reads_nothing_and_keeps_the_embedding():
    res = result(w1=0, w2=0, w3=0)
    assert res["weights"] == [0.0, 0.0, 0.0] and res["reads_nothing"] is True
    assert res["delta"] == [0.0, 0.0]
    assert res["updated"] == res["embedding"]
    assert res["cos_after"] == res["cos_before"]
    json.dumps(res, allow_nan=False)  # no NaN reaches the page


@pytest.mark.parametrize("sentence", sorted(SENTENCES))
def test_update_is_added_to_the_embedding_and_matches_torch(sentence):
    res = result(sentence=sentence, w1=0.7, w2=0.1, w3=0.4)
    w = torch.tensor(res["weights"], dtype=torch.float64)
    C = torch.tensor(res["context_vectors"], dtype=torch.float64)
    x = torch.tensor(res["embedding"], dtype=torch.float64)
    delta = w @ C
    np.testing.assert_allclose(res["delta"], delta.numpy(), rtol=0, atol=1e-15)
    np.testing.assert_allclose(res["updated"], (x + delta).numpy(), rtol=0, atol=1e-15)
    senses = torch.tensor(res["sense_vectors"], dtype=torch.float64)
    for name, v in (("cos_before", x), ("cos_after", x + delta)):
        expected = torch.nn.functional.cosine_similarity(senses, v.expand_as(senses), dim=-1)
        np.testing.assert_allclose(res[name], expected.numpy(), rtol=0, atol=1e-12)
    assert res["nearest_before"] == int(np.argmax(res["cos_before"]))
    assert res["nearest_after"] == int(np.argmax(res["cos_after"]))


def test_the_embedding_is_the_same_in_every_sentence_of_its_word():
    for word in WORDS:
        seen = {
            tuple(result(sentence=s)["embedding"]) for s, v in SENTENCES.items() if v[1] == word
        }
        assert len(seen) == 1, word


def test_cosine_of_a_zero_vector_is_zero():
    assert cosine(np.array([[1.0, 0.0], [0.0, 0.0]]), np.array([0.0, 0.0])).tolist() == [0, 0]


def test_largest_runs():
    assert run_lab(LAB, LARGEST)["result"]["tokens"]


# ----------------------------------------------------------------------------
# parameter errors


def raises(params, param):
    with pytest.raises(LabParameterError) as info:
        run_lab(LAB, params)
    assert info.value.param == param
    return str(info.value)


@pytest.mark.parametrize("name", ["w1", "w2", "w3"])
@pytest.mark.parametrize("bad", [-0.1, 1.5, "1", None, float("nan"), True])
def test_bad_weight_names_the_parameter_and_the_range(name, bad):
    message = raises({name: bad}, name)
    assert message.startswith(f"{name} must be a number from 0 to 1")


@pytest.mark.parametrize("bad", ["mole", "", 3, None])
def test_unknown_sentence_lists_the_sentences(bad):
    message = raises({"sentence": bad}, "sentence")
    for key in SENTENCES:
        assert repr(key) in message


def test_run_lab_json_reports_a_bad_weight():
    out = json.loads(run_lab_json(LAB, json.dumps({"w2": 2})))
    assert out["ok"] is False and out["param"] == "w2"
