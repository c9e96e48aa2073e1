"""Every number and claim of docs/lessons/07-counting-parameters.md, computed here with
attention_labs (the param_calculator lab). The prose's numbers come from the lesson's
```numbers fence at build time; here they are recomputed from the models' configurations
and looked up, formatted, in the lesson as the build renders it."""

import re

import lesson_text
import yaml
from attention_labs.labs import run_lab
from attention_labs.labs.param_calculator import PRESETS, count

from build_scripts.hooks import exercise, scanner

NAME = "07-counting-parameters"
SOURCE, RENDERED, TEXT = lesson_text.read(f"lessons/{NAME}.md")


claim = lesson_text.claimer(TEXT)


def counts(preset):
    return run_lab("param_calculator", {"preset": preset})["result"]["counts"]


SMALL, BERT, GPT3, LLAMA = (
    counts(p) for p in ("gpt2-small", "bert-base", "gpt3-175b", "llama2-70b")
)


def share(c, part):
    return c["parts"][part] / c["total"]


def test_front_matter_and_prerequisite():
    front = yaml.safe_load(SOURCE.split("---")[1])
    assert front["prerequisites"] == ["06-multi-head-attention"]
    claim("[Multi-head attention](06-multi-head-attention.md)")


def test_the_prose_numbers_are_computed_not_typed():
    prose = re.sub(r"\s+", " ", SOURCE.split("```numbers")[0] + SOURCE.split("```", 3)[-1])
    for typed in ("124,439,808", "28,348,416", "2,362,368", "38,597,376", "68,976,648,192"):
        assert typed not in prose, typed
        assert typed in TEXT, typed


def test_intro_rounds_the_headline_counts():
    claim('"124 million", "175 billion"')
    assert round(SMALL["total"] / 1e6) == 124 and round(GPT3["total"] / 1e9) == 175


def test_gpt2_small_config():
    p = PRESETS["gpt2-small"]
    assert (p["d_model"], p["n_layers"], p["n_heads"], p["d_ff"]) == (768, 12, 12, 3072)
    claim(
        "`d_model` = 768, `n_layers` = 12, `n_heads` = 12, `d_ff` = 3072, a vocabulary of "
        "50,257 tokens and a context of 1024 positions"
    )
    assert p["d_ff"] == 4 * p["d_model"]  # "usually 4 d_model"


def test_attention_per_layer_and_in_gpt2_small():
    d = 768
    assert SMALL["per_layer"]["attention"] == 4 * d * d + 4 * d == 2_362_368
    claim(
        f"{4 * d * d:,} + {4 * d:,} = {4 * d * d + 4 * d:,} per layer, "
        "and 28,348,416 in its 12 layers"
    )
    assert SMALL["parts"]["attention"] == 28_348_416


def test_number_of_heads_does_not_appear():
    base = dict(preset="custom", d_model=768, n_layers=1)
    got = {
        run_lab("param_calculator", {**base, "n_heads": h, "n_kv_heads": h})["result"]["counts"][
            "per_layer"
        ]["attention"]
        for h in (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256)
    }
    assert got == {4 * 768**2 + 4 * 768}
    claim("The number of heads does not appear")


def test_mlp_is_twice_attention_and_gpt2_small_mlp():
    d = 768
    assert SMALL["per_layer"]["mlp_weights"] == 2 * SMALL["per_layer"]["attention_weights"]
    claim("the matrices hold \\(8\\,d_{\\text{model}}^2\\): twice attention's")
    assert SMALL["per_layer"]["mlp"] == 2 * d * 3072 + 3072 + d == 4_722_432
    claim("GPT-2 small's MLP has 4,722,432 parameters per layer")
    claim("**attention routes, MLPs store**")
    claim("Geva et al. (2021)")


def test_norms():
    claim("two vectors of `d_model` numbers, 1,536 parameters in GPT-2 small")
    assert SMALL["parts"]["norms"] == 25 * 1536 == 38_400
    claim(f"38,400 in all: {100 * share(SMALL, 'norms'):.2f}% of the model")


def test_embeddings():
    assert SMALL["embedding_parts"]["token"] == 50257 * 768 == 38_597_376
    assert SMALL["embedding_parts"]["position"] == 1024 * 768 == 786_432
    assert SMALL["embedding_parts"]["output"] == 0  # tied
    claim("50,257 × 768 = 38,597,376 parameters")
    claim("a \\(\\text{context} \\times d_{\\text{model}}\\) table of 786,432")
    claim(f"In GPT-2 small the embeddings are {100 * share(SMALL, 'embeddings'):.1f}% of all")
    assert share(SMALL, "embeddings") > 0.3  # "spends a lot on its vocabulary"


def test_gpt2_small_adds_up_to_the_published_count():
    d = 768
    layer = 2_362_368 + 4_722_432 + 4 * d
    assert 12 * layer + 38_597_376 + 786_432 + 2 * d == 124_439_808 == SMALL["total"]
    claim("That is **124,439,808** parameters, exactly the count of the published GPT-2 small")
    claim(f"28,348,416 of them ({100 * share(SMALL, 'attention'):.1f}%) are in attention")
    claim(f"{SMALL['parts']['MLP']:,} ({100 * share(SMALL, 'MLP'):.1f}%) in the MLPs")
    assert SMALL["total_without_biases"] == 124_439_808 - SMALL["biases"]
    assert SMALL["biases"] / SMALL["total"] < 0.001
    claim(f"Without bias vectors the total would be {SMALL['total_without_biases']:,}")
    claim(f"{100 * SMALL['biases'] / SMALL['total']:.2f}%")
    for part in ("2,362,368", "4,722,432", "3,072", "38,597,376", "786,432", "1,536"):
        assert f"\\text{{ {part} }}" in TEXT, part  # the sum as displayed


def test_bert_base():
    assert BERT["total"] == 109_482_240
    assert BERT["per_layer"] == SMALL["per_layer"]  # "the same layers as GPT-2 small"
    assert PRESETS["bert-base"]["vocab"] < PRESETS["gpt2-small"]["vocab"]
    claim(
        "BERT-base (Devlin et al., 2019) has the same layers as GPT-2 small, a smaller vocabulary"
    )
    claim(
        "Counting the pooler, it has 109,482,240 parameters, "
        'the figure usually given as "110 million"'
    )


def test_gpt3():
    p = PRESETS["gpt3-175b"]
    att = 96 * 96 * 4 * 12288 * 128
    mlp = 2 * 12288 * 49152 * 96
    assert (
        att == GPT3["per_layer"]["attention_weights"] * 96
        and mlp == GPT3["per_layer"]["mlp_weights"] * 96
    )
    assert (p["n_layers"], p["n_heads"], p["d_model"], p["d_ff"]) == (96, 96, 12288, 49152)
    claim(
        "96 \\times 96 \\times 4 \\times 12288 \\times 128 "
        f"\\approx {att / 1e9:.1f} \\text{{ billion}}"
    )
    assert f"{att / 1e9:.1f}" == "58.0"
    claim(f"2 \\times 12288 \\times 49152 \\times 96 \\approx {mlp / 1e9:.1f}")
    assert round(mlp / 1e9) == 116
    claim(f'the count is {GPT3["total"] / 1e9:.1f} billion, the "175B" of the paper')
    s = share(GPT3, "attention")
    assert abs(s - 1 / 3) < 0.01
    claim(f"attention is {100 * s:.1f}%, about a third, the MLPs the other two thirds")
    assert abs(share(GPT3, "MLP") - 2 / 3) < 0.01
    claim(f"the embeddings only {100 * share(GPT3, 'embeddings'):.1f}%")
    kaplan = 12 * 96 * 12288**2
    assert abs(kaplan / GPT3["non_embedding"] - 1) < 0.001
    claim(f"({kaplan / 1e9:.1f} billion for GPT-3)")


def test_llama():
    assert LLAMA["per_layer"]["attention"] == 2 * 8192**2 + 2 * 8192 * 1024 == 150_994_944
    claim("its 64 query heads share 8 key/value heads, so `W_K` and `W_V` are only 8192 × 1024")
    claim(f"{150_994_944:,} instead of {4 * 8192**2:,}")
    claim(
        "three \\(d_{\\text{model}} \\times d_{\\text{ff}}\\) matrices instead of two, "
        "`d_ff` = 28,672"
    )
    assert LLAMA["total"] == 68_976_648_192
    claim("The total is 68,976,648,192, about 69 billion")
    claim(f"attention is only {100 * share(LLAMA, 'attention'):.1f}% of it")


def test_things_to_try_on_the_lab():
    # the fence is the lab's default view
    (body,) = re.findall(r"^```lab\n(.*?)^```$", SOURCE, re.S | re.M)
    params = yaml.safe_load(body)
    assert params.pop("lab") == "param_calculator"
    assert run_lab("param_calculator", params) == run_lab("param_calculator")
    for c in (SMALL, GPT3):
        assert abs(c["parts"]["MLP"] / c["parts"]["attention"] - 2) < 0.01  # "twice"
    claim(
        f"The embeddings' share falls from {100 * share(SMALL, 'embeddings'):.1f}% to "
        f"{100 * share(GPT3, 'embeddings'):.1f}%, and in both the MLPs hold twice "
        "what attention holds."
    )
    ratio = share(LLAMA, "attention") / share(GPT3, "attention")
    assert 0.45 < ratio < 0.6
    claim("attention's share is about half GPT-3's: GQA shrinks `W_K` and `W_V`")
    d = 8192
    per_layer = LLAMA["per_layer"]
    assert per_layer["attention"] < 4 * d * d  # GQA: smaller than square W_K, W_V
    assert per_layer["mlp"] / d**2 > GPT3["per_layer"]["mlp"] / 12288**2  # larger MLP
    claim("the gated MLP, with its third matrix, is larger")
    # n_kv_heads shrinks attention; n_heads (a divisor) does not move the total
    base = {"preset": "custom"}
    total = run_lab("param_calculator", base)["result"]["counts"]["total"]
    assert total == SMALL["total"] - 0  # custom starts from GPT-2 small's fields
    for h in (1, 6, 24):
        c = run_lab("param_calculator", {**base, "n_heads": h, "n_kv_heads": h})["result"]
        assert c["counts"]["total"] == total
    fewer = run_lab("param_calculator", {**base, "n_kv_heads": 4})["result"]["counts"]
    assert fewer["parts"]["attention"] < SMALL["parts"]["attention"]
    claim("start from GPT-2 small, change `n_heads`")


def test_exercise_numbers():
    specs = [
        exercise.parse_exercise(f.body, "lesson")
        for f in scanner.find_fences(SOURCE, ("exercise",))
    ]
    numeric = next(s for s in specs if s["kind"] == "numeric")
    ns = exercise.run_setup(numeric, "lesson")
    assert (ns["attention"], ns["mlp"], ns["stack"]) == (1_050_624, 2_099_712, 6 * 3_152_384)
    c = count(
        dict(d_model=512, n_layers=6, n_heads=8, n_kv_heads=8, d_ff=2048, vocab=1, context=1,
             biases=True, tied=True, mlp="gelu", norm="layernorm", positions="rotary",
             token_types=0, pooler=False)
    )  # fmt: skip
    assert c["per_layer"]["attention"] == ns["attention"] and c["per_layer"]["mlp"] == ns["mlp"]
    assert numeric["tolerance"] < 1  # exact integers
    code = next(s for s in specs if s["kind"] == "code")
    names = " ".join(ch["name"] for ch in code["checks"])
    for edge in ("whatever the number of heads", "GQA", "multi-query", "do not divide"):
        assert edge in names, edge


def test_sources_cite_the_papers():
    sources = SOURCE.split("## Sources")[1]
    for cite in (
        "Radford, A. et al. (2019)",
        "Devlin, J. et al. (2019)",
        "NAACL",
        "Brown, T. et al. (2020)",
        "Touvron, H. et al. (2023)",
        "Ainslie, J. et al. (2023)",
        "EMNLP",
        "Kaplan, J. et al. (2020)",
        "Geva, M.",
    ):
        assert cite in sources, cite


def test_geva_keys_are_columns_of_the_first_matrix_and_values_rows_of_the_second():
    """Issue 25: with the lesson's shapes (row vectors, x W_1 then h W_2), the keys of Geva
    et al. (2021) are the columns of W_1 (d_model x d_ff) and the values the rows of W_2."""
    import numpy as np

    rng = np.random.default_rng(0)
    d_model, d_ff = 4, 6
    x, W1, W2 = (
        rng.normal(size=d_model),
        rng.normal(size=(d_model, d_ff)),
        rng.normal(size=(d_ff, d_model)),
    )
    h = np.maximum(x @ W1, 0)
    np.testing.assert_allclose(x @ W1, [x @ W1[:, i] for i in range(d_ff)])  # key i: column i
    np.testing.assert_allclose(h @ W2, sum(h[i] * W2[i] for i in range(d_ff)))  # value i: row i
    claim("each *column* of the first matrix acts as a key")
    claim("Each *row* of the second matrix is the matching value")
    assert "the first matrix's rows respond" not in TEXT
