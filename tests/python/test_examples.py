"""attention_labs.examples, the worked examples of lessons 2, 5 and 6, against PyTorch."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from attention_labs import examples


def test_layer_norm_and_rms_norm_with_learned_weights_equal_torch():
    rng = np.random.default_rng(0)
    x, gain, shift = rng.normal(size=(3, 5, 8)), rng.normal(size=8), rng.normal(size=8)
    t = torch.tensor(x)
    want = F.layer_norm(t, (8,), torch.tensor(gain), torch.tensor(shift), eps=1e-5)
    np.testing.assert_allclose(examples.layer_norm(x, gain, shift), want.numpy(), atol=1e-12)
    want = F.rms_norm(t, (8,), torch.tensor(gain), eps=1e-6)
    np.testing.assert_allclose(examples.rms_norm(x, gain), want.numpy(), atol=1e-12)


@pytest.mark.parametrize("strength,lean", [(0.0, 0.0), (2.0, 0.0), (6.0, 1.0), (20.0, -3.0)])
def test_two_needs_weights_are_softmax_rows_and_one_head_never_gets_both_whole(strength, lean):
    r = examples.two_needs(strength=strength, lean=lean)
    rows = [r["one_head"]["weights"], *(h["weights"] for h in r["two_heads"])]
    for row in rows:
        assert abs(sum(row) - 1) < 1e-12 and min(row) >= 0
    assert r["budget"]["one_head"] <= 1 + 1e-12
    total = sum(r["one_head"]["output"].values())
    assert abs(total - 1) < 1e-12  # each value is one word's one-hot code


def test_two_needs_on_another_sentence_and_its_errors():
    r = examples.two_needs(["a", "b", "a", "c", "a"], query=4)
    assert (r["previous"], r["same"]) == (3, [0, 2])
    with pytest.raises(ValueError, match="from 1 to 4"):
        examples.two_needs(["a", "b", "a", "c", "a"], query=0)
    with pytest.raises(ValueError, match="from 1 to 4"):
        examples.two_needs(["a", "b", "a", "c", "a"], query=5)


def test_value_map_roles_counts_every_head_and_letter():
    roles = examples.value_map_roles()
    assert roles["vocab_size"] == 26 and len(roles["heads"]) == 4
    for h in roles["heads"]:
        assert 0 <= h["copies"] <= 26 and -1 <= h["cosine"] <= 1
    assert len(roles["reads"]) == len(roles["reads_plain"]) == 2
