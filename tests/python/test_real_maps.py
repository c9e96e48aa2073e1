"""The number format of the real attention maps and the per-head statistics (labs_py)."""

from __future__ import annotations

import numpy as np
import pytest
from attention_labs import real_maps
from attention_labs.attention import causal_mask, softmax


def random_patterns(rng, shape, seq_len, causal=False, peaked=False):
    logits = rng.normal(size=(*shape, seq_len, seq_len)) * (6.0 if peaked else 1.0)
    mask = causal_mask(seq_len) if causal else None
    return softmax(logits, where=mask)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("seq_len", [2, 7, 64])
def test_quantised_rows_sum_to_255_and_decode_within_one_255th(causal, seq_len):
    rng = np.random.default_rng(seq_len)
    w = random_patterns(rng, (3, 4), seq_len, causal=causal, peaked=seq_len == 7)
    packed = real_maps.quantise_rows(w, causal=causal)
    assert packed.dtype == np.uint8
    assert packed.shape == (3, 4, real_maps.stored_count(seq_len, causal))
    for layer in range(3):
        for head in range(4):
            decoded = real_maps.unpack_head(packed[layer, head].tobytes(), seq_len, causal)
            assert np.max(np.abs(decoded - w[layer, head])) <= 1 / 255 + 1e-12
            assert np.array_equal(np.rint(decoded * 255).sum(axis=-1), np.full(seq_len, 255.0))
            assert np.max(np.abs(decoded.sum(axis=-1) - 1)) < 1e-12
            if causal:
                assert np.all(np.triu(decoded, k=1) == 0)


def test_plain_rounding_would_drift_where_largest_remainder_does_not():
    # Why the format quantises rows as a whole: per-entry rounding loses the row sum.
    rng = np.random.default_rng(3)
    w = random_patterns(rng, (200,), 64)
    plain = np.round(w * 255) / 255
    assert np.max(np.abs(plain.sum(axis=-1) - 1)) > 0.01
    packed = real_maps.quantise_rows(w)
    decoded = packed.reshape(200, 64, 64).astype(float) / 255
    assert np.max(np.abs(decoded.sum(axis=-1) - 1)) < 1e-12


def test_quantise_rejects_bad_weights_by_name():
    with pytest.raises(ValueError, match="seq_len, seq_len"):
        real_maps.quantise_rows(np.ones((2, 3)))
    with pytest.raises(ValueError, match="NaN or infinite"):
        real_maps.quantise_rows(np.array([[np.nan, 1.0], [0.5, 0.5]]))
    with pytest.raises(ValueError, match="above the diagonal"):
        real_maps.quantise_rows(np.full((2, 2), 0.5), causal=True)
    with pytest.raises(ValueError, match="positive sum"):
        real_maps.quantise_rows(np.zeros((2, 2)))


def test_unpack_names_the_expected_byte_count():
    with pytest.raises(ValueError, match="stores 6 bytes; got 5"):
        real_maps.unpack_head(b"\x00" * 5, 3, causal=True)


def test_vectors_round_trip_as_float32():
    x = np.random.default_rng(0).normal(size=(5, 8))
    back = real_maps.decode_vectors(real_maps.pack_vectors(x), 5, 8)
    assert np.allclose(back, x.astype(np.float32), atol=0)
    with pytest.raises(ValueError, match="need 160 bytes"):
        real_maps.decode_vectors(real_maps.pack_vectors(x[:4]), 5, 8)


def test_scores_are_one_for_the_pattern_they_detect():
    n = 6
    prev = np.zeros((n, n))
    prev[0, 0] = 1
    prev[np.arange(1, n), np.arange(n - 1)] = 1
    first = np.zeros((n, n))
    first[:, 0] = 1
    diag = np.eye(n)
    assert real_maps.previous_token_score(prev) == pytest.approx(1)
    assert real_maps.first_token_score(first) == pytest.approx(1)
    assert real_maps.self_score(diag) == pytest.approx(1)
    assert real_maps.previous_token_score(diag) == pytest.approx(0)
    assert real_maps.mean_entropy_bits(diag) == pytest.approx(0)
    assert real_maps.mean_entropy_bits(np.full((n, n), 1 / n)) == pytest.approx(np.log2(n))


def test_scores_keep_the_leading_layer_and_head_axes():
    w = random_patterns(np.random.default_rng(1), (2, 3), 5)
    for score in (
        real_maps.previous_token_score,
        real_maps.first_token_score,
        real_maps.self_score,
        real_maps.mean_entropy_bits,
    ):
        assert score(w).shape == (2, 3)
    assert real_maps.induction_score(w, [1, 2, 3, 1, 2]).shape == (2, 3)


def test_induction_score_on_a_repeated_sequence():
    # [BOS] a b c a b c: the second a, b, c should attend to b, c and the second a
    ids = [0, 5, 6, 7, 5, 6, 7]
    special = [True] + [False] * 6
    targets = real_maps.induction_targets(ids, special)
    assert targets == {4: [2], 5: [3], 6: [4]}
    w = np.tril(np.ones((7, 7)))
    w /= w.sum(axis=-1, keepdims=True)
    ideal = w.copy()
    for q, keys in targets.items():
        ideal[q] = 0
        ideal[q, keys] = 1
    assert real_maps.induction_score(ideal, ids, special) == pytest.approx(1)
    assert real_maps.induction_score(w, ids, special) < 0.25
    assert real_maps.induction_score(w[:4, :4], ids[:4], special[:4]) is None


def test_special_tokens_never_count_as_repetitions():
    assert real_maps.induction_targets([9, 1, 9, 1], [True, False, True, False]) == {3: [2]}
    with pytest.raises(ValueError, match="one per token"):
        real_maps.induction_targets([1, 2], [True])


def test_longest_repeat_finds_the_repeated_run_and_skips_special_tokens():
    assert real_maps.longest_repeat([5, 1, 2, 3, 1, 2, 3]) == 3
    assert real_maps.longest_repeat([1, 2, 3, 4]) == 0
    assert real_maps.longest_repeat([7, 7, 7]) == 2  # the copies may overlap
    # a lone repeated word is a run of one; a special token ends a run
    assert real_maps.longest_repeat([4, 1, 9, 1, 8]) == 1
    assert (
        real_maps.longest_repeat([0, 1, 2, 0, 1, 2], [True, False, False, True, False, False]) == 2
    )
    with pytest.raises(ValueError, match="ignore must have 3 entries"):
        real_maps.longest_repeat([1, 2, 3], [False])


def test_only_the_repeated_sequence_sentence_has_a_run_of_three_tokens():
    """The explorer shows the induction score where a run of 3+ tokens repeats: in the
    committed assets, induction-random for both models (ten words said twice)."""
    import json

    from helpers import ROOT

    root = ROOT / "docs" / "assets" / "attention"
    index = json.loads((root / "index.json").read_text("utf-8"))
    runs = {}
    for entry in index["assets"]:
        tokens = json.loads((root / entry["path"]).read_text("utf-8"))["tokens"]
        runs[entry["model"], entry["sentence"]] = real_maps.longest_repeat(
            tokens["ids"], tokens["special"]
        )
    assert {key for key, run in runs.items() if run >= 3} == {
        (model["slug"], "induction-random") for model in index["models"]
    }
