"""What the explorer page (docs/explorer/index.md) says about the committed maps, checked
against them: changing the prose or the assets without the other fails here."""

import json
import re

import numpy as np
from helpers import ROOT

PAGE = re.sub(r"\s+", " ", (ROOT / "docs" / "explorer" / "index.md").read_text("utf-8"))
MINILM = ROOT / "docs" / "assets" / "attention" / "all-minilm-l6-v2"


def claim(phrase):
    assert re.sub(r"\s+", " ", phrase) in PAGE, f"the explorer page no longer says: {phrase!r}"


def test_roamed_arrives_in_two_word_pieces():
    tokens = json.loads((MINILM / "fluffy-creature.json").read_text("utf-8"))["tokens"]["text"]
    claim("(*roamed* is `roam` + `ed`)")
    i = tokens.index("roam")
    assert tokens[i + 1] == "ed"


def test_the_encoder_has_no_strong_induction_head():
    asset = json.loads((MINILM / "induction-random.json").read_text("utf-8"))
    claim("the best induction score stays below 0.1")
    assert np.max(asset["head_stats"]["induction"]) < 0.1
    claim("ten random words said twice")
    words = asset["sentence"]["text"].split()
    assert len(words) == 20 and words[:10] == words[10:]


def test_smollm2_gives_the_first_token_half_to_two_thirds_of_its_weight_from_layer_2_on():
    claim("from layer 2 on, the heads give it half to two thirds of their weight on average")
    smol = ROOT / "docs" / "assets" / "attention" / "smollm2-135m"
    for path in smol.glob("*.json"):
        first = np.array(json.loads(path.read_text("utf-8"))["head_stats"]["first_token"])
        assert 0.45 <= first[2:].mean() <= 0.7, path.name  # 0.49 to 0.68 today


def test_the_induction_score_is_shown_only_where_a_run_of_three_tokens_repeats():
    from attention_labs import real_maps

    claim("The induction score is shown only where a run of three or more tokens repeats")
    tokens = json.loads((MINILM / "induction-random.json").read_text("utf-8"))["tokens"]
    assert real_maps.longest_repeat(tokens["ids"], tokens["special"]) >= 3
    js = (ROOT / "docs" / "javascripts" / "explorer" / "parts.js").read_text("utf-8")
    assert "export const MIN_REPEAT = 3;" in js


def test_the_decoders_download_and_memory_are_the_files():
    """SmolLM2's Run: the repacked weights and tokenizer of docs/vendor/smollm2/ (make vendor),
    and its 134.5 M weights as float32 (the whole worker's peak, 0.77 GB here, is measured by
    build_scripts/bench/bench_smollm2.py, not by a test)."""
    claim("Run downloads about 98 MB once")
    manifest = json.loads((ROOT / "docs/vendor/smollm2/smollm2.json").read_text("utf-8"))
    files = manifest["files"]
    wire = files["smollm2-135m.q4_1.safetensors"]["bytes"] + files["tokenizer.json"]["bytes"]
    assert round(wire / 1e6) == 98
    claim("needs about 0.8 GB of memory (0.54 GB of it the weights as float32")
    assert round(sum(manifest["values"].values()) * 4 / 1e9, 2) == 0.54
