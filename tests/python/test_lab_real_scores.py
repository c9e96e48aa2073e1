"""The real_scores lab (attention_labs.labs.real_scores): a trained head's scores on a real
sentence. Its parameters come from a committed asset (fence_params, called by the build);
its scores are the model's q k^T, equal to PyTorch's, and its weights with the model's
settings are the model's stored weights (within their 1/255 rounding)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from attention_labs import maps
from attention_labs.labs import real_scores as lab
from attention_labs.labs import run_lab, run_lab_json
from attention_labs.params import LabParameterError
from helpers import ROOT

DOCS = ROOT / "docs"
ASSETS = DOCS / "assets" / "attention"
INDEX = json.loads((ASSETS / "index.json").read_text("utf-8"))
TOLERANCE = 1 / 255 + 1e-4  # stored weights are bytes / 255; q and k are float32
CASES = [
    ("all-minilm-l6-v2", "mole-animal"),
    ("all-minilm-l6-v2", "fluffy-creature"),
    ("smollm2-135m", "coreference-trophy"),  # a decoder: causal, RoPE already in q and k
]


def filled(model, sentence, **extra):
    return lab.fence_params({"model": model, "sentence": sentence, **extra}, DOCS)


def asset(model, sentence):
    return json.loads((ASSETS / model / f"{sentence}.json").read_text("utf-8"))


@pytest.mark.parametrize("model,sentence", CASES)
def test_fence_params_carry_every_exported_head_of_the_asset(model, sentence):
    a = asset(model, sentence)
    p = filled(model, sentence)
    heads = a["qkv"]["heads"]
    assert p["tokens"] == a["tokens"]["text"] and p["d_head"] == a["qkv"]["d_head"]
    assert p["causal"] is a["model"]["causal"]
    assert p["labels"] == [f"layer {h['layer']}, head {h['head']}: {h['reason']}" for h in heads]
    n, d = a["seq_len"], a["qkv"]["d_head"]
    q = maps.decode_vectors(p["q"], len(heads) * n, d).reshape(len(heads), n, d)
    for i, h in enumerate(heads):
        np.testing.assert_array_equal(q[i], maps.decode_vectors(h["q"], n, d))


@pytest.mark.parametrize("model,sentence", CASES)
def test_every_head_and_query_equals_torch_and_the_stored_weights(model, sentence):
    a = asset(model, sentence)
    n, d = a["seq_len"], a["qkv"]["d_head"]
    stored = maps.decode_attention(a)
    for pick, h in enumerate(a["qkv"]["heads"]):
        q = torch.tensor(maps.decode_vectors(h["q"], n, d))
        k = torch.tensor(maps.decode_vectors(h["k"], n, d))
        S = (q @ k.T).numpy()
        mask = torch.tril(torch.ones(n, n, dtype=torch.bool)) if a["model"]["causal"] else None
        eye = torch.eye(n, dtype=torch.float64)
        W = F.scaled_dot_product_attention(q[None], k[None], eye[None], attn_mask=mask)[0]
        for query in (0, n // 2, n - 1):
            res = run_lab("real_scores", filled(model, sentence, pick=pick, query=query))["result"]
            visible = np.arange(n) <= query if a["model"]["causal"] else np.ones(n, bool)
            scores = np.array([np.nan if s is None else s for s in res["scores"]])
            np.testing.assert_allclose(scores[visible], S[query][visible], atol=1e-9)
            assert np.all(np.isnan(scores[~visible]))  # hidden keys: None
            np.testing.assert_allclose(res["weights"], W[query].numpy(), atol=1e-12)
            w = np.array(res["weights"])
            assert np.abs(w - stored[h["layer"], h["head"], query]).max() <= TOLERANCE
            assert res["top_key"] == int(np.argmax(w))
            assert res["tokens"][query] == a["tokens"]["text"][query]
        assert res["scale"] == pytest.approx(a["qkv"]["scale"])


def test_the_previous_token_head_scores_the_previous_token_highest():
    """Lesson 2's claim: in MiniLM's previous-token head on the mole sentence, every query
    after [CLS] scores the token before it highest, far above the random head's spread."""
    p = filled("all-minilm-l6-v2", "mole-animal")
    res = run_lab("real_scores", p)["result"]
    assert res["labels"][0].startswith("layer 0, head 2: highest previous-token")
    n = len(res["tokens"])
    for query in range(2, n - 1):  # the words (not [CLS], the first word or [SEP])
        r = run_lab("real_scores", {**p, "query": query})["result"]
        assert r["top_key"] == query - 1, (query, r["tokens"][query])


def test_scores_range_and_the_example_head_without_an_asset():
    res = run_lab("real_scores")["result"]
    assert res["tokens"] == ["The", "cat", "sat"] and res["labels"] == ["a hand-made example head"]
    S = np.array(res["S"])
    assert res["score_range"] == [S.min(), S.max()]
    np.testing.assert_allclose(sum(res["weights"]), 1.0, atol=1e-12)


def test_largest_runs_and_the_answer_is_json_without_nan():
    for params in (lab.LARGEST, filled("smollm2-135m", "coreference-trophy", query=0)):
        out = json.loads(run_lab_json("real_scores", json.dumps(params)))  # allow_nan=False
        assert out["ok"] is True, out.get("error")
    res = run_lab("real_scores", lab.LARGEST)["result"]
    assert len(res["tokens"]) == lab.MAX_SEQ_LEN and res["d_head"] == lab.MAX_D_HEAD


@pytest.mark.parametrize(
    "change,param,words",
    [
        ({"pick": 4}, "pick", "from 0 to 3 (one per label), got 4"),
        ({"query": 13}, "query", "from 0 to 12 (the sentence has 13 tokens), got 13"),
        ({"d_head": 16}, "q", "heads x seq_len x d_head = 4 x 13 x 16"),
        ({"labels": ["only one"]}, "q", "1 x 13 x 32"),
        ({"pick": 8}, "pick", "whole number from 0 to 7"),
        ({"q": "not base64!"}, "q", "not valid base64"),
    ],
)
def test_bad_parameters_name_the_parameter(change, param, words):
    params = {**filled("all-minilm-l6-v2", "mole-animal"), **change}
    with pytest.raises(LabParameterError) as info:
        run_lab("real_scores", params)
    assert info.value.param == param and words in str(info.value)
    out = json.loads(run_lab_json("real_scores", json.dumps(params)))
    assert out["ok"] is False and out["param"] == param and words in out["error"]


@pytest.mark.parametrize(
    "params,param,words",
    [
        ({"sentence": "mole-animal"}, "model", "names the asset"),
        ({"model": "all-minilm-l6-v2"}, "sentence", "names the asset"),
        ({"model": "all-minilm-l6-v2", "sentence": "no-such"}, "sentence", "no asset no-such.json"),
        ({"model": "gpt-9", "sentence": "mole-animal"}, "sentence", "for model 'gpt-9'"),
    ],
)
def test_fence_params_name_a_missing_asset(params, param, words):
    with pytest.raises(LabParameterError) as info:
        lab.fence_params(params, DOCS)
    assert info.value.param == param and words in str(info.value)
