"""The synthetic labs' embeddings (labs_py/attention_labs/labs/_synthetic.py): word vectors
that are a function of the case-folded word and the seed only, standard normal, independent
across words; position vectors that do not depend on the sentence; their sum at unit
variance."""

import math

import numpy as np
import torch
from attention_labs.labs._synthetic import embeddings, position_vectors, word_vectors


def test_a_word_has_one_vector_in_any_sentence_at_any_place_in_any_case():
    alone = word_vectors(["river"], 3, 16)
    in_a_sentence = word_vectors(["The", "River", "bank", "river"], 3, 16)
    assert alone.shape == (1, 16) and in_a_sentence.shape == (4, 16)
    np.testing.assert_array_equal(in_a_sentence[1], alone[0])
    np.testing.assert_array_equal(in_a_sentence[3], alone[0])
    assert word_vectors([], 3, 16).shape == (0, 16)


def test_another_word_or_seed_gives_another_vector():
    (a, b), (a_other_seed,) = word_vectors(["bank", "river"], 0, 64), word_vectors(["bank"], 1, 64)
    assert not np.allclose(a, b) and not np.allclose(a, a_other_seed)


def test_components_are_standard_normal_and_uncorrelated():
    words = [f"w{i}" for i in range(4000)]
    X = word_vectors(words, 7, 32)  # 128,000 components
    n = X.size
    # mean 0 and variance 1 within 5 standard errors (so the check fails by chance ~never)
    assert abs(X.mean()) < 5 / math.sqrt(n)
    assert abs(X.var() - 1) < 5 * math.sqrt(2 / n)
    # the normal's quantiles, from torch's inverse CDF, hold the right share of the values
    for p in (0.01, 0.1, 0.5, 0.9, 0.99):
        q = torch.distributions.Normal(0.0, 1.0).icdf(torch.tensor(p)).item()
        assert abs((X < q).mean() - p) < 5 * math.sqrt(p * (1 - p) / n)
    # two components of one word, and one component of two words, are uncorrelated
    corr = np.corrcoef(X, rowvar=False)  # (32, 32) across words
    assert np.abs(corr - np.eye(32)).max() < 5 / math.sqrt(len(words))
    assert abs(np.corrcoef(X[:-1, 0], X[1:, 0])[0, 1]) < 5 / math.sqrt(len(words))


def test_a_position_has_one_vector_whatever_the_sentence_or_the_longest_sentence():
    short, long = position_vectors(5, 64, 16), position_vectors(5, 128, 16)
    assert short.shape == (64, 16) and long.shape == (128, 16)
    np.testing.assert_array_equal(long[:64], short)  # a lab allowing fewer tokens, same rows
    assert not short.flags.writeable  # shared by the cache
    assert not np.allclose(short, position_vectors(6, 64, 16))


def test_an_embedding_is_word_plus_position_at_unit_variance():
    tokens = ["The", "cat", "the"]
    X = embeddings(tokens, 2, 16, 64)
    expected = (word_vectors(tokens, 2, 16) + position_vectors(2, 64, 16)[:3]) / math.sqrt(2)
    np.testing.assert_array_equal(X, expected)
    # "The" and "the": one word, so they differ by their positions only
    P = position_vectors(2, 64, 16)
    np.testing.assert_allclose(X[0] - X[2], (P[0] - P[2]) / math.sqrt(2), rtol=0, atol=1e-14)
    words = [f"w{i}" for i in range(64)]
    many = np.stack([embeddings(words, seed, 16, 64) for seed in range(50)])  # 51,200 numbers
    assert abs(many.var() - 1) < 5 * math.sqrt(2 / many.size)
