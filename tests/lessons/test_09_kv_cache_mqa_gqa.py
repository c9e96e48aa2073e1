"""Every number and claim of docs/lessons/09-kv-cache-mqa-gqa.md, computed here with
attention_labs (the kv_cache and cache_size labs). The prose's numbers come from the
lesson's ```numbers fence at build time; here they are recomputed and looked up, formatted,
in the lesson as the build renders it."""

import re

import lesson_text
import numpy as np
import yaml
from attention_labs.labs import run_lab
from attention_labs.labs.cache_size import cache_bytes
from attention_labs.labs.kv_cache import full_causal_attention, generate_with_cache, random_model
from attention_labs.labs.param_calculator import PRESETS

from build_scripts.hooks import exercise, scanner

NAME = "09-kv-cache-mqa-gqa"
SOURCE, RENDERED, TEXT = lesson_text.read(f"lessons/{NAME}.md")


claim = lesson_text.claimer(TEXT)


def fences(lab):
    return lesson_text.lab_fences(SOURCE, lab)


def kv(**params):
    return run_lab("kv_cache", params)["result"]


def size(**params):
    return run_lab("cache_size", params)["result"]


def test_front_matter_and_links():
    front = yaml.safe_load(SOURCE.split("---")[1])
    assert front["prerequisites"] == [
        "04-masking",
        "05-values-and-the-update",
        "06-multi-head-attention",
        "07-counting-parameters",
    ]
    claim("[Masking](04-masking.md)")
    claim("[parameter calculator](07-counting-parameters.md)")


def test_lab_fences_are_the_default_views():
    (kv_fence,) = fences("kv_cache")
    (size_fence,) = fences("cache_size")
    assert run_lab("kv_cache", kv_fence) == run_lab("kv_cache")
    assert run_lab("cache_size", size_fence) == run_lab("cache_size")
    claim("are **random** (seeded; nothing here is a trained model)")


def test_the_prose_numbers_are_computed_not_typed():
    prose = SOURCE.split("```numbers")[0] + SOURCE.split("```", 3)[-1]
    prose = re.sub(r"```(lab|exercise)\n.*?```", "", prose, flags=re.S)
    for typed in ("1.34 GB", "10.7 GB", "37.7 MB", "9.66 GB", "168 MB", "2.62 MB"):
        assert typed not in prose, typed
        assert typed in TEXT, typed


def test_past_keys_and_values_do_not_change():
    # "nothing computed for token j changes when later tokens arrive": the causal outputs of
    # a prefix are the same whether or not later tokens follow.
    x, W_Q, W_K, W_V = random_model(8, 4, 2, 3, seed=5)
    full, _ = full_causal_attention(x, W_Q, W_K, W_V, 4, 2)
    prefix, _ = full_causal_attention(x[:5], W_Q, W_K, W_V, 4, 2)
    np.testing.assert_allclose(prefix, full[:, :5], rtol=0, atol=1e-15)
    claim("nothing computed for token \\(j\\), in any layer, changes when later tokens arrive")


def test_step_zero_and_no_mask():
    outs, weights, _, _ = generate_with_cache(*random_model(4, 2, 2, 3, seed=0), 2, 2)
    assert weights[0].shape == (2, 1) and np.all(weights[0] == 1)
    claim("the first token attends only to itself, and its output is its own value")
    claim("No mask appears: the new token is the last one")
    claim("At step 1 the only weight is 1, on the token itself.")


def test_things_to_try_kv_cache():
    res = kv()
    assert res["step"] == 3 and res["tokens"][3] == "creature"
    assert np.array(res["K_cache"]).shape[1] == 4
    claim("At step 4 (*creature*) the cache has 4 rows; the step projected 4 key rows")
    claim("where recomputing would project 16, and its 4 query rows took 16 dot products")
    assert res["max_diff"] < 1e-15 and len(res["diffs"]) == 6
    claim("up to rounding in the last bits of a float64: every difference is below 1e-15")
    claim(f"(here at most {res['max_diff']:.1e} when this page was built;")
    claim("then most or all rows print exactly 0")
    assert sum(4 * (s + 1) for s in range(6)) == 84
    claim("take 84 dot products in all, 4 × (1 + 2 + … + 6)")
    g, m = kv(n_kv_heads=2), kv(n_kv_heads=1)
    assert (res["cache_floats"][3], g["cache_floats"][3], m["cache_floats"][3]) == (128, 64, 32)
    claim("at this step the cache holds 128 numbers with 4 key/value heads, 64 with 2")
    claim("and 32 with 1")
    np.testing.assert_array_equal(g["query"], res["query"])
    for r in (g, m):
        np.testing.assert_allclose(r["weights"][0], res["weights"][0], rtol=0, atol=1e-15)
    claim("each shared key/value head keeps the columns of the first query head of its group")
    claim("query head 1's weights do not change between MHA, GQA and MQA")
    assert max(g["max_diff"], m["max_diff"]) < 1e-15
    claim("(differences below 1e-15, at most")
    claim(f"{max(g['max_diff'], m['max_diff']):.1e} at build time)")
    assert max(res["max_diff"], g["max_diff"], m["max_diff"]) < 1e-15
    claim("the differences here are below 1e-15, and may print as exactly 0")


def test_each_step_is_linear_and_the_total_quadratic():
    # dot products per step grow by n_heads each step (linear); all steps: n_heads n(n+1)/2
    scores = [kv(step=s)["scores"] for s in range(6)]
    assert np.all(np.diff(scores) == 4) and sum(scores) == 4 * 6 * 7 // 2
    claim("a matrix-vector product whose cost grows **linearly** with the length so far")
    claim("about \\(\\text{seq\\_len}^2 / 2\\) dot products per head")
    floats = kv()["cache_floats"]
    assert np.all(np.diff(floats) == floats[0])  # the memory grows linearly
    claim("It costs memory that grows linearly.")


def test_cache_sizes_by_hand():
    ll = PRESETS["llama2-70b"]
    assert (ll["n_layers"], ll["n_heads"], ll["n_kv_heads"], ll["d_model"] // ll["n_heads"]) == (
        80,
        64,
        8,
        128,
    )
    assert 2 * 80 * 64 * 128 * 2 == 2_621_440  # per token with MHA, fp16
    claim("would need 2.62 MB per token with a key/value head for every query head")
    assert 2 * 80 * 64 * 128 * 4096 * 2 == 10_737_418_240
    claim("10.7 GB at 4,096 tokens and 85.9 GB at 32,768")
    assert 2 * 12 * 12 * 64 * 1024 * 2 == 37_748_736
    claim("at its full context of 1,024 tokens in fp16 that is 37.7 MB")
    assert 2 * 96 * 96 * 128 * 2048 * 2 == 9_663_676_416
    claim("at 2,048 tokens it is 9.66 GB per sequence")
    assert cache_bytes(80, 8, 128, 32768, "fp16") == cache_bytes(80, 64, 128, 4096, "fp16")
    claim("at 32,768 tokens it is 10.7 GB, what MHA would need for 4,096")
    claim("its cache is 1.34 GB at 4,096 tokens instead of 10.7 GB")


def test_models_that_use_gqa():
    claim("of the Llama 2 models, only the largest (34B and 70B) use GQA")
    claim("Mistral 7B (Jiang et al., 2023) uses GQA with 32 query heads and 8 key/value heads")
    claim("the Llama 3 models do too")
    claim("Llama 2 uses GQA only at 34B and 70B; Mistral 7B and Llama 3 use it")


def test_things_to_try_cache_size():
    res = size()
    by = {c["name"]: c["readable"] for c in res["compare"]}
    assert by == {"mha": "10.7 GB", "gqa": "1.34 GB", "mqa": "168 MB"}
    claim("8 key/value heads, 1.34 GB at 4,096 tokens in fp16, against 10.7 GB with MHA")
    claim("and 168 MB with MQA")
    assert res["kv_choices"] == [1, 2, 4, 8, 16, 32, 64]
    for a, b in zip(res["kv_choices"], res["kv_choices"][1:], strict=False):
        assert size(n_kv_heads=b)["bytes"] == 2 * size(n_kv_heads=a)["bytes"]
    claim("so each notch halves or doubles the cache")
    assert size(seq_len=8192)["bytes"] == 2 * res["bytes"]
    claim("the cache doubles")
    assert 2 * size(dtype="int8")["bytes"] == res["bytes"] == size(dtype="bf16")["bytes"]
    claim("**Switch to int8**: half of fp16")
    claim("BERT-base is left out, since an encoder generates nothing")


def test_exercises():
    specs = [
        exercise.parse_exercise(f.body, "lesson")
        for f in scanner.find_fences(SOURCE, ("exercise",))
    ]
    numeric = next(s for s in specs if s["kind"] == "numeric")
    ns = exercise.run_setup(numeric, "lesson")
    assert (ns["per_token"], ns["mha"], ns["gqa"]) == (2048, 1_048_576, 262_144)
    assert numeric["tolerance"] < 1  # whole numbers, exactly
    code = next(s for s in specs if s["kind"] == "code")
    names = " ".join(c["name"] for c in code["checks"])
    for edge in ("step 0", "GQA", "MQA", "h // group", "does not divide", "overflow"):
        assert edge in names, edge


def test_sources():
    sources = SOURCE.split("## Sources")[1]
    for cite in (
        "Shazeer, N. (2019). *Fast Transformer Decoding: One Write-Head is All You Need.*",
        "arXiv:1911.02150",
        "Ainslie, J.",
        "(2023). *GQA: Training Generalized Multi-Query Transformer Models",
        "EMNLP",
        "Touvron, H. et al. (2023)",
        "Jiang, A. Q. et al. (2023). *Mistral 7B.*",
    ):
        assert cite in sources, cite


def test_mistrals_sliding_window_caps_its_cache_where_its_size_is_computed():
    """Issue 25: Mistral 7B's rolling buffer keeps the last 4,096 keys and values per layer
    (Jiang et al. 2023, section 2), so its cache stops growing at the window; the paper
    notes an 8x saving at 32k tokens."""
    from attention_labs.labs.cache_size import cache_bytes, readable_bytes

    capped = cache_bytes(32, 8, 128, 4096, "fp16")
    full = cache_bytes(32, 8, 128, 32 * 1024, "fp16")
    assert capped == 2 * 32 * 8 * 128 * 4096 * 2 and full // capped == 8
    claim("Its layers use a [sliding window](04-masking.md#sliding-windows)")
    claim("of 4,096 keys: no query reads further back, so the model keeps only the")
    claim("*rolling buffer*")
    claim(f"it is {readable_bytes(capped)} in fp16 at 4,096 tokens and stays")
    claim(f"{readable_bytes(capped)} at any length, where a full cache would need")
    claim(f"{readable_bytes(full)} at 32,768 tokens, 8 times more")
    claim(f"Mistral 7B keeps {readable_bytes(capped)} at any length")


def test_the_cache_size_lab_has_the_lessons_decoders_your_own_and_a_window():
    """Issue 24: the lab can be set to the models the lesson names, to a model of your own,
    and caps the cache at a sliding window (the cache holds min(seq_len, window) tokens)."""
    from attention_labs.labs.cache_size import DECODERS

    assert {"llama2-7b", "mistral-7b", "llama3-8b"} <= set(DECODERS)
    claim("among them Llama-2-7B, Mistral-7B and Llama-3-8B")
    mistral = PRESETS["mistral-7b"]
    assert (mistral["n_heads"], mistral["n_kv_heads"], mistral["window"]) == (32, 8, 4096)
    assert (PRESETS["llama3-8b"]["n_heads"], PRESETS["llama3-8b"]["n_kv_heads"]) == (32, 8)
    assert PRESETS["llama2-7b"]["n_kv_heads"] == PRESETS["llama2-7b"]["n_heads"]  # MHA
    own = size(preset="custom", n_layers=2, n_heads=4, d_head=8, n_kv_heads=2, seq_len=10)
    assert own["bytes"] == 2 * 2 * 2 * 8 * 10 * 2
    claim("or describe your own (`n_layers`, `n_heads`,\n`d_head`: typing one switches to it)")
    capped = size(preset="mistral-7b", seq_len=32768, sliding=True, window=4096)
    assert capped["cached_tokens"] == 4096 and capped["readable"] == "537 MB"
    assert size(preset="mistral-7b", seq_len=32768)["readable"] == "4.29 GB"
    claim("caps the cache at `window` tokens per layer")
    claim("Mistral-7B starts with its own window of 4,096.")
    claim("with its sliding\n  window the cache stays at 537 MB (the formula counts 4,096 tokens)")
    claim("turn the window off and it is 4.29 GB")
