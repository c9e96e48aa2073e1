"""The induction-head model trained in the build (build_scripts/induction/train_induction.py).

One full training run (about 35 s of CPU) is shared by the tests that need it; the
determinism check uses two short runs.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch
from attention_labs import real_maps

from build_scripts.induction import train_induction as ti

# a full training run of the induction model for the module: 16-50 s in the suite
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "labs_py/attention_labs/data/induction"


def committed(name):
    return json.loads((COMMITTED / name).read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    """A full training run with the default config, written to a temporary folder."""
    out = tmp_path_factory.mktemp("induction")
    assert ti.main(["--out", str(out), "--quiet"]) == 0
    return out


def test_the_untrained_model_has_no_induction_head_and_the_trained_one_has(fresh):
    training = json.loads((fresh / "training.json").read_text())
    first, last = training["checkpoints"][0], training["checkpoints"][-1]
    assert first["step"] == 0
    # untrained: weight spread evenly, about 1 / (number of keys) on the target
    assert np.max(first["induction"]) < 0.1
    assert np.max(last["induction"]) > ti.INDUCTION_THRESHOLD
    story = training["story"]
    # the circuit of Elhage et al. 2021: a previous-token head in layer 0 and induction
    # heads only in layer 1 (one layer alone cannot match "the token after")
    assert story["induction_heads"] and all(layer == 1 for layer, _ in story["induction_heads"])
    prev_layer, prev_head = story["previous_token_head"]
    assert last["previous_token"][prev_layer][prev_head] > 0.4
    # the loss on the repeated part falls fastest when the head forms (the phase change)
    steps = [c["step"] for c in training["checkpoints"]]
    loss = [c["loss_repeated"] for c in training["checkpoints"]]
    steepest = steps[1 + int(np.argmin(np.diff(loss)))]
    assert abs(steepest - story["formed_at_step"]) <= 2 * training["config"]["eval_every"]
    assert last["loss_repeated"] < 0.5 * first["loss_repeated"]
    # no model beats chance, ln(26) nats, on a token drawn at random (or the future leaked)
    assert all(c["loss_random"] > np.log(26) - 0.05 for c in training["checkpoints"])


def test_a_fresh_run_tells_the_committed_story(fresh):
    new = json.loads((fresh / "training.json").read_text())
    old = committed("training.json")
    assert new["config"] == old["config"]
    assert new["probe"] == old["probe"]
    assert new["story"]["induction_heads"] == old["story"]["induction_heads"]
    assert new["story"]["previous_token_head"] == old["story"]["previous_token_head"]
    # the step it forms, within two checkpoints of the committed one on any machine
    tolerance = 2 * old["config"]["eval_every"]
    assert abs(new["story"]["formed_at_step"] - old["story"]["formed_at_step"]) <= tolerance
    # Same bytes are promised where everything that picks the kernels is the same (the
    # processor's id and instruction-set flags, torch's build and dispatch level, threads:
    # train_induction.machine); elsewhere only the story above.
    same_machine = all(new["provenance"].get(k) == old["provenance"].get(k) for k in ti.machine())
    if same_machine:
        for name in ("training.json", "model.json"):
            assert (fresh / name).read_bytes() == (COMMITTED / name).read_bytes(), name


def test_two_runs_write_the_same_bytes(tmp_path):
    for run in ("a", "b"):
        assert ti.main(["--out", str(tmp_path / run), "--steps", "40", "--quiet"]) == 0
    for name in ("training.json", "model.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def load_model(path):
    """The shipped weights back into the PyTorch model."""
    data = json.loads(Path(path).read_text())
    cfg = replace(ti.Config(), **{k: v for k, v in data["config"].items() if k != "d_head"})
    cfg = replace(cfg, map_steps=tuple(cfg.map_steps))
    model = ti.build_model(cfg)
    state = {
        name: torch.from_numpy(
            real_maps.decode_vectors(w["data"], 1, int(np.prod(w["shape"])))
            .reshape(w["shape"])
            .astype(np.float32)
        )
        for name, w in data["weights"].items()
    }
    model.load_state_dict(state)
    return cfg, model


def test_shipped_weights_reproduce_the_committed_final_maps():
    cfg, model = load_model(COMMITTED / "model.json")
    training = committed("training.json")
    probe = torch.tensor(training["probe"])[None]
    with torch.no_grad():
        _, weights = model(probe)
    final = training["maps"][-1]
    assert final["step"] == cfg.steps
    n = len(training["probe"])
    for layer, heads in enumerate(final["data"]):
        for head, data in enumerate(heads):
            stored = real_maps.unpack_head(data, n, causal=True)
            assert np.abs(stored - weights[0, layer, head].double().numpy()).max() <= 1 / 255


def test_the_model_is_causal_and_its_rows_sum_to_one():
    _, model = load_model(COMMITTED / "model.json")
    tokens = torch.randint(26, (3, 20), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        logits, weights = model(tokens)
        changed = tokens.clone()
        changed[:, 10:] = (changed[:, 10:] + 1) % 26  # change the future of position 9
        logits2, _ = model(changed)
    assert torch.allclose(weights.sum(-1), torch.ones(()), atol=1e-6)
    assert torch.all(weights.triu(1) == 0)
    assert torch.allclose(logits[:, :10], logits2[:, :10], atol=1e-6)


def test_data_repeats_a_segment_and_marks_exactly_the_copied_positions():
    cfg = ti.Config()
    tokens, predictable = ti.repeated_batch(cfg, torch.Generator().manual_seed(0), 64)
    for seq, known in zip(tokens.tolist(), predictable.tolist(), strict=True):
        first = known.index(True)  # the query before the first copied token
        # every known next token is the token one period earlier
        period = next(
            n
            for n in range(cfg.min_repeat, cfg.max_repeat + 1)
            if all(seq[t] == seq[t - n] for t in range(first + 1, cfg.seq_len))
        )
        assert first + 1 - period >= 0
        assert all(known[first:]) and not any(known[:first])


def test_bad_steps_are_refused(capsys):
    with pytest.raises(SystemExit):
        ti.main(["--steps", "0"])
    assert "--steps must be at least 1" in capsys.readouterr().err


def test_committed_story_matches_its_schema():
    import jsonschema

    schema = committed("training.schema.json")
    jsonschema.validate(committed("training.json"), schema)
    broken = committed("training.json")
    del broken["story"]
    with pytest.raises(jsonschema.ValidationError, match="story"):
        jsonschema.validate(broken, schema)
