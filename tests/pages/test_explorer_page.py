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
