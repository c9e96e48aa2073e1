"""Tests for the lab registry (attention_labs.labs) and the parameter schema (params.py):
what the attention_pattern lab returns, and every way its parameters can be wrong."""

import base64
import json
import math

import numpy as np
import pytest
from attention_labs.labs import LABS, lab_schema, run_lab, run_lab_json, validate_params
from attention_labs.params import LabParameterError

LAB = "attention_pattern"
SENTENCE = ["The", "fluffy", "blue", "creature", "roamed", "the", "verdant", "forest"]
EXPECTED_TOP_KEY = {
    "previous_token": lambda i: max(i - 1, 0),
    "first_token": lambda i: 0,
    "self": lambda i: i,
}


def result(**params):
    return run_lab(LAB, params)["result"]


def words(n):
    """n tokens: the default sentence repeated."""
    return [SENTENCE[i % len(SENTENCE)] for i in range(n)]


# ----------------------------------------------------------------------------
# the result with default parameters


def test_defaults_give_rows_of_weights_that_sum_to_one():
    out = run_lab(LAB)
    assert out["lab"] == LAB
    assert out["params"]["tokens"] == SENTENCE
    weights = np.array(out["result"]["weights"])
    assert weights.shape == (8, 8)
    assert np.all(weights >= 0)
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, rtol=0, atol=1e-12)


def test_result_has_one_entry_per_token():
    res = result()
    assert res["tokens"] == SENTENCE
    assert np.array(res["logits"], dtype=float).shape == (8, 8)
    for key in ("entropy_bits", "max_entropy_bits", "top_key"):
        assert len(res[key]) == 8, key


def test_top_key_is_the_argmax_of_each_row():
    res = result()
    assert res["top_key"] == np.argmax(np.array(res["weights"]), axis=-1).tolist()


def test_entropy_is_between_zero_and_its_maximum():
    res = result()
    entropy, maximum = np.array(res["entropy_bits"]), np.array(res["max_entropy_bits"])
    np.testing.assert_allclose(maximum, 3.0, rtol=0, atol=1e-12)  # log2 of 8 visible keys
    assert np.all(entropy >= 0)
    assert np.all(entropy <= maximum + 1e-12)


def test_output_is_strict_json():
    out = run_lab(LAB)
    assert json.loads(json.dumps(out, allow_nan=False)) == out


# ----------------------------------------------------------------------------
# causal mask


def test_causal_mask_zeroes_weights_and_hides_logits_above_the_diagonal():
    res = result(causal=True)
    weights = np.array(res["weights"])
    for i in range(8):
        for j in range(8):
            if j > i:
                assert weights[i, j] == 0.0
                assert res["logits"][i][j] is None
            else:
                assert isinstance(res["logits"][i][j], float)
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, rtol=0, atol=1e-12)
    assert res["max_entropy_bits"] == pytest.approx([math.log2(i + 1) for i in range(8)])


def test_causal_first_row_puts_all_weight_on_itself_with_zero_entropy():
    res = result(causal=True)
    assert res["weights"][0][0] == 1.0
    assert res["entropy_bits"][0] == 0.0
    assert res["top_key"][0] == 0
    assert json.loads(json.dumps(res, allow_nan=False)) == res


# ----------------------------------------------------------------------------
# presets


@pytest.mark.parametrize("preset", sorted(EXPECTED_TOP_KEY))
def test_preset_attends_to_its_position_on_the_default_sentence(preset):
    top = result(preset=preset, scale=True)["top_key"]
    assert top == [EXPECTED_TOP_KEY[preset](i) for i in range(8)]


@pytest.mark.parametrize("preset", sorted(EXPECTED_TOP_KEY))
def test_preset_attends_to_its_position_on_32_tokens_with_a_wide_head(preset):
    top = result(preset=preset, tokens=words(32), scale=True, d_head=256)["top_key"]
    assert top == [EXPECTED_TOP_KEY[preset](i) for i in range(32)]


@pytest.mark.parametrize("preset", sorted(EXPECTED_TOP_KEY))
def test_preset_mostly_attends_to_its_position_on_32_tokens_at_default_width(preset):
    # At d_head 64 the wanted key wins by ~2.7 standard deviations against each of the
    # 31 others, so a few rows in a hundred miss (seed 0, previous_token: row 30 picks 31).
    hits = total = 0
    for seed in range(5):
        top = result(preset=preset, tokens=words(32), seed=seed)["top_key"]
        hits += sum(t == EXPECTED_TOP_KEY[preset](i) for i, t in enumerate(top))
        total += len(top)
    assert hits / total >= 0.9


def test_positional_presets_ignore_the_words():
    a = result(preset="previous_token")
    b = result(preset="previous_token", tokens=["x"] * 8)
    assert a["weights"] == b["weights"]


# ----------------------------------------------------------------------------
# determinism and the content preset


def test_same_params_give_identical_results():
    params = {"tokens": words(12), "d_head": 32, "seed": 7, "temperature": 0.7}
    assert run_lab(LAB, params) == run_lab(LAB, dict(params))


def test_different_seeds_give_different_weights():
    assert result(seed=0)["weights"] != result(seed=1)["weights"]


def test_different_tokens_get_different_keys_and_queries():
    # "The" and "the" are one word (case-folded, as in every synthetic lab of lessons 2 to 6)
    # at two positions: their keys and queries still differ.
    from attention_labs.labs.attention_pattern import queries_and_keys

    for a, b in zip(
        queries_and_keys(["The", "x"], "content", 8, 0),
        queries_and_keys(["the", "x"], "content", 8, 0),
        strict=True,
    ):
        np.testing.assert_array_equal(a, b)  # case does not matter
    res = result(preset="content")
    the, The = SENTENCE.index("the"), SENTENCE.index("The")
    logits = np.array(res["logits"])
    assert not np.allclose(logits[:, the], logits[:, The])  # different keys
    assert not np.allclose(logits[the], logits[The])  # different queries
    n = len(SENTENCE)
    columns = np.array([logits[:, j] for j in range(n)])
    assert len({tuple(c) for c in columns.round(12)}) == n  # no two keys alike


def test_a_repeated_word_gets_a_related_key_at_another_position():
    from attention_labs.labs.attention_pattern import queries_and_keys

    tokens = ["x", "y"] * 32  # 64 tokens
    _, K = queries_and_keys(tokens, "content", 256, 0)
    corr = np.corrcoef(K)  # (64, 64), between keys
    same = corr[0, 2::2]  # "x" at position 0 against "x" elsewhere
    other = corr[0, 1::2]  # "x" against "y"
    assert 0.35 < same.mean() < 0.65  # half of each embedding is the shared word vector
    assert abs(other.mean()) < 0.15
    assert np.all(same < 0.95)  # never the same key


def test_a_words_vectors_do_not_depend_on_its_neighbours():
    a = np.array(result(tokens=["cat", "sat", "dog"])["logits"])
    b = np.array(result(tokens=["cat", "ran", "dog"])["logits"])
    assert a[0, 2] == b[0, 2]  # query "cat", key "dog"


# ----------------------------------------------------------------------------
# parameter validation


def raises(params, param):
    with pytest.raises(LabParameterError) as info:
        run_lab(LAB, params)
    assert info.value.param == param
    assert isinstance(info.value, ValueError)
    return str(info.value)


def test_unknown_lab_lists_the_known_labs():
    with pytest.raises(LabParameterError) as info:
        run_lab("no_such_lab")
    assert info.value.param == "lab"
    assert "no_such_lab" in str(info.value)
    for name in LABS:
        assert name in str(info.value)


def test_unhashable_lab_name_is_a_parameter_error():
    with pytest.raises(LabParameterError):
        run_lab(["attention_pattern"])


def test_unknown_parameter_lists_the_allowed_ones():
    message = raises({"temprature": 2.0}, "temprature")
    for p in lab_schema(LAB):
        assert p["name"] in message


def test_unknown_parameters_of_mixed_key_types_are_reported():
    # YAML keys need not be strings; sorting them must not raise TypeError.
    raises({1: 2, "foo": 3}, 1)


def test_params_must_be_a_mapping():
    raises(["temperature", 2.0], None)


@pytest.mark.parametrize("bad", [0, -1, "abc", float("nan"), float("inf"), True, None, 10.5])
def test_bad_temperature_is_rejected(bad):
    message = raises({"temperature": bad}, "temperature")
    assert message.startswith("temperature must be a number from 0.05 to 10")


def test_temperature_int_too_large_for_a_float_is_rejected():
    raises({"temperature": 10**400}, "temperature")


def test_temperature_int_is_accepted_as_float():
    out = run_lab(LAB, {"temperature": 2})
    assert out["params"]["temperature"] == 2.0 and isinstance(out["params"]["temperature"], float)


@pytest.mark.parametrize("bad", [1, 257, 3.5, "64", True, float("nan"), float("inf")])
def test_bad_d_head_is_rejected(bad):
    message = raises({"d_head": bad}, "d_head")
    assert "whole number from 2 to 256" in message


def test_whole_float_d_head_is_accepted_as_int():
    out = run_lab(LAB, {"d_head": 16.0})
    assert out["params"]["d_head"] == 16 and isinstance(out["params"]["d_head"], int)


@pytest.mark.parametrize(
    "bad",
    [[], ["t"] * 129, ["x" * 33], ["ok", 5], ["ok", ""], ["ok", None], "The cat", None],
    ids=["empty", "129 tokens", "33 chars", "int", "empty string", "None", "a string", "null"],
)
def test_bad_tokens_are_rejected(bad):
    raises({"tokens": bad}, "tokens")


def test_bad_token_message_names_its_index():
    assert "token 2 of 2" in raises({"tokens": ["ok", 5]}, "tokens")


def test_token_limits_are_inclusive():
    assert len(result(tokens=["x" * 32])["tokens"]) == 1
    assert len(result(tokens=["t"] * 128)["tokens"]) == 128


@pytest.mark.parametrize("bad", ["bogus", "", 1, None])
def test_unknown_preset_is_rejected(bad):
    message = raises({"preset": bad}, "preset")
    assert "'previous_token'" in message


@pytest.mark.parametrize("bad", ["yes", "true", 1, 0, None])
def test_causal_must_be_a_boolean(bad):
    message = raises({"causal": bad}, "causal")
    assert "true or false" in message


@pytest.mark.parametrize("bad", [-1, 2**31, 1.5])
def test_bad_seed_is_rejected(bad):
    raises({"seed": bad}, "seed")


def test_validate_params_fills_defaults_in_schema_order():
    valid = validate_params(LAB, {"causal": True})
    assert list(valid) == [p["name"] for p in lab_schema(LAB)]
    assert valid["causal"] is True and valid["temperature"] == 1.0


# ----------------------------------------------------------------------------
# run_lab_json: the browser worker's entry point


def test_run_lab_json_reports_a_bad_parameter():
    out = json.loads(run_lab_json(LAB, json.dumps({"temperature": -1})))
    assert out == {"ok": False, "error": out["error"], "param": "temperature"}
    assert "temperature" in out["error"]


def unpack(value):
    """The page's view of run_lab_json's packed float arrays, as plain lists."""
    if isinstance(value, dict) and "__ndarray__" in value:
        flat = np.frombuffer(base64.b64decode(value["__ndarray__"]), dtype="<f8")
        array = flat.reshape(value["shape"])
        return np.where(np.isfinite(array), array, None).tolist()
    if isinstance(value, dict):
        return {k: unpack(v) for k, v in value.items()}
    return value


def test_run_lab_json_returns_the_result_for_good_input():
    out = json.loads(run_lab_json(LAB, json.dumps({"causal": True})))
    assert out["ok"] is True
    del out["ok"]
    assert isinstance(out["result"]["weights"], dict)  # packed float64 bytes
    assert unpack(out) == run_lab(LAB, {"causal": True})  # bit for bit


def test_run_lab_json_packs_float_arrays_exactly_and_small():
    tokens = [f"t{i}" for i in range(128)]
    text = run_lab_json(LAB, json.dumps({"tokens": tokens}))
    out = json.loads(text)
    weights = np.frombuffer(base64.b64decode(out["result"]["weights"]["__ndarray__"]), "<f8")
    assert out["result"]["weights"]["shape"] == [128, 128]
    assert (
        weights.tolist() == np.ravel(run_lab(LAB, {"tokens": tokens})["result"]["weights"]).tolist()
    )
    assert len(text) < 2 * 8 * 128 * 128 * 4 / 3 + 10_000  # two float64 grids in base64


@pytest.mark.parametrize("text", ["{", "not json", ""])
def test_run_lab_json_reports_invalid_json(text):
    out = json.loads(run_lab_json(LAB, text))
    assert out["ok"] is False and out["param"] is None and out["error"]


@pytest.mark.parametrize(
    "text,param",
    [
        ("[1, 2]", None),
        ('{"temperature": NaN}', "temperature"),
        ('{"temperature": 1' + "0" * 400 + "}", "temperature"),
        ('{"bogus": 1}', "bogus"),
    ],
)
def test_run_lab_json_always_answers_json(text, param):
    out = json.loads(run_lab_json(LAB, text))
    assert out["ok"] is False and out["param"] == param


def test_run_lab_json_unknown_lab():
    out = json.loads(run_lab_json("nope", "{}"))
    assert out["ok"] is False and out["param"] == "lab"


# ----------------------------------------------------------------------------
# schema


def test_lab_schema_is_json_and_lists_every_parameter_with_its_default():
    schema = lab_schema(LAB)
    assert json.loads(json.dumps(schema, allow_nan=False)) == schema
    defaults = validate_params(LAB, {})
    assert {p["name"]: p["default"] for p in schema} == defaults
    by_name = {p["name"]: p for p in schema}
    assert by_name["temperature"]["minimum"] == 0.05
    assert by_name["d_head"]["maximum"] == 256
    assert by_name["preset"]["choices"] == ["content", "previous_token", "first_token", "self"]
    assert set(by_name["preset"]["labels"]) == set(by_name["preset"]["choices"])
    assert by_name["tokens"]["max_items"] == 128 and by_name["tokens"]["max_chars"] == 32


def test_every_registered_lab_has_a_schema_whose_defaults_run():
    for name in LABS:
        assert run_lab(name)["lab"] == name


# ----------------------------------------------------------------------------
# benchmark size


@pytest.mark.parametrize("causal", [False, True])
def test_128_tokens_run(causal):
    res = result(tokens=words(128), causal=causal, d_head=256)
    weights = np.array(res["weights"])
    assert weights.shape == (128, 128)
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, rtol=0, atol=1e-12)
    json.dumps(res, allow_nan=False)


@pytest.mark.parametrize("name", sorted(LABS))
def test_every_lab_declares_its_largest_settings_and_they_run(name):
    # make bench times each lab at LARGEST (build_scripts/bench/bench_labs.py): it must be
    # valid for the schema and not merely the defaults again.
    largest = getattr(LABS[name], "LARGEST", None)
    assert isinstance(largest, dict) and largest, f"labs/{name}.py has no LARGEST dict"
    valid = validate_params(name, largest)
    assert valid != validate_params(name, {}), f"{name}: LARGEST equals the defaults"
    out = run_lab_json(name, json.dumps(largest))
    assert json.loads(out)["ok"], out[:300]


def _close(a, b, where):
    """Two lab results equal up to rounding (arrays within 1e-9, everything else exactly)."""
    if isinstance(a, dict):
        assert a.keys() == b.keys(), where
        for key in a:
            _close(a[key], b[key], f"{where}.{key}")
    elif isinstance(a, (list, tuple)) and not (a and isinstance(a[0], (int, float))):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _close(x, y, f"{where}[{i}]")
    elif isinstance(a, np.ndarray) and a.dtype.kind == "f" or isinstance(a, float):
        np.testing.assert_allclose(b, a, rtol=0, atol=1e-9, err_msg=where)
    else:
        assert np.array_equal(np.asarray(a), np.asarray(b)), where


@pytest.mark.parametrize("name", sorted(LABS))
def test_every_lab_gives_the_same_result_with_the_browsers_matmul(name, monkeypatch):
    # In Pyodide (no BLAS) attention.matmul takes einsum for large products: the labs'
    # results must not change beyond rounding, at the defaults and at LARGEST.
    from attention_labs import attention

    for params in ({}, LABS[name].LARGEST):
        valid = validate_params(name, params)
        monkeypatch.setattr(attention, "_NO_BLAS", False)
        expected = LABS[name].compute(valid)
        monkeypatch.setattr(attention, "_NO_BLAS", True)
        _close(expected, LABS[name].compute(valid), f"{name} {sorted(params)}")


def _page_fences():
    """(where, lab name, fence parameters) of every ```lab fence under docs/."""
    from pathlib import Path

    from build_scripts.hooks import scanner
    from build_scripts.hooks.lab import parse_fence

    docs = Path(__file__).resolve().parents[2] / "docs"
    for page in sorted(docs.rglob("*.md")):
        text = page.read_text("utf-8")
        for fence in scanner.find_fences(text):
            where = f"{page.relative_to(docs)}:{fence.line_no}"
            yield (where, *parse_fence(fence.body, where))


@pytest.mark.parametrize(("where", "name", "params"), list(_page_fences()))
def test_largest_settings_run_on_top_of_every_pages_fence(where, name, params):
    # make bench times LARGEST merged over the page's own parameters: a page parameter
    # that LARGEST does not override must still fit (e.g. an explicit order of 5 tokens).
    largest = getattr(LABS[name], "LARGEST", {})
    out = json.loads(run_lab_json(name, json.dumps({**params, **largest})))
    assert out["ok"], f"{where}: {name} at LARGEST over the page's parameters: {out}"


def test_every_module_of_labs_is_a_lab():
    """The registry names every labs/<name>.py a lab without importing it (helpers would
    start with "_"): each must have SCHEMA and compute."""
    for name in LABS:
        module = LABS[name]
        assert hasattr(module, "SCHEMA") and callable(module.compute), name


def test_the_registry_imports_a_lab_only_when_it_is_used():
    """The browser's worker imports attention_labs.labs at start-up: no lab module then
    (some take 0.1-0.2 s to import in Pyodide), only the one a page runs."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from attention_labs.labs import LABS, run_lab_json\n"
        "labs = lambda: sorted(m for m in sys.modules if m.startswith('attention_labs.labs.'))\n"
        "print(len(LABS), labs())\n"
        "run_lab_json('attention_pattern', '{}')\n"
        "print(labs())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    first, after = out.stdout.splitlines()
    assert first == f"{len(LABS)} []"
    # and the helper module it draws its word vectors with (labs/_synthetic.py)
    assert after == "['attention_labs.labs._synthetic', 'attention_labs.labs.attention_pattern']"
