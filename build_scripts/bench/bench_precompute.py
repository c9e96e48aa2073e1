"""`make bench`, precompute part: how long real maps take and how large their assets are.

- for each committed model (all-MiniLM-L6-v2; SmolLM2-135M, dequantised from its Q4_1
  GGUF): the time to load it, then the wall time of the precompute (tokenize, run in
  batches, check, pack; load excluded), median of --runs after one warm-up, and sentences
  per second; on this machine's CPU, and on CUDA too when a CUDA device is present;
- bytes of the committed assets per model, raw and gzip (level 9, as build_scripts/compress.py
  writes them), and all of them against the same weights as float32 and as 3-decimal JSON.

An asset also carries tokens, per-head statistics and four heads' float32 query, key and
value vectors; a decoder's asset stores only the lower triangle of each head.
build_scripts/precompute/compare_devices.py checks CUDA's weights against the CPU's (on a
GPU machine). This is a benchmark, not a test: it asserts nothing. Its rows (``rows``, the
contract of bench/contract.py) go into bench-results/REPORT.md (bench_report.py). Usage:
python -m build_scripts.bench.bench_precompute [--runs 5]
"""

from __future__ import annotations

import base64
import gzip
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

import build_scripts.precompute as pc  # noqa: E402
from build_scripts.bench.contract import Row, run_alone  # noqa: E402

BENCHMARK = "precompute (real maps)"

# (name resolve_model knows, slug of its committed assets)
MODELS = (
    ("sentence-transformers/all-MiniLM-L6-v2", "all-minilm-l6-v2"),
    ("HuggingFaceTB/SmolLM2-135M-Instruct", "smollm2-135m"),
)


def sizes(path: Path) -> dict:
    from attention_labs import real_maps

    raw = path.read_bytes()
    asset = json.loads(raw)
    weights = real_maps.decode_attention(asset)
    as_float32 = weights.astype("<f4").tobytes()
    as_json3 = json.dumps(weights.round(3).tolist(), separators=(",", ":")).encode()
    heads = [h for layer in asset["attention"]["data"] for h in layer]
    stored = sum(len(base64.b64decode(h)) for h in heads)
    as_text = json.dumps(asset["attention"]["data"], separators=(",", ":")).encode()
    return {
        "asset": len(raw),
        "asset_gz": len(gzip.compress(raw, 9, mtime=0)),
        "weights_stored": stored,
        "weights_text": len(as_text),
        "weights_text_gz": len(gzip.compress(as_text, 9, mtime=0)),
        "float32": len(as_float32),
        "float32_gz": len(gzip.compress(as_float32, 9, mtime=0)),
        "json3": len(as_json3),
        "json3_gz": len(gzip.compress(as_json3, 9, mtime=0)),
    }


def rows(args) -> list[Row]:
    """Per model and device: load time, precompute wall time (median of ``args.runs`` after a
    warm-up), sentences per second; the committed assets' bytes; then all the models'
    attention weights in the assets' encoding against float32 and 3-decimal JSON."""
    import torch

    sentences = pc.load_sentences()
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    index = json.loads((pc.OUT / "index.json").read_text("utf-8"))
    kb = 1024
    pairs: list[tuple[str, str]] = []  # (measure, value)
    every = []
    for name, slug in MODELS:
        for device in devices:
            start = time.perf_counter()
            loaded = pc.load_model(pc.resolve_model(name), pc.pick_device(device))
            load = time.perf_counter() - start
            pc.precompute_model(loaded, sentences)  # warm-up
            seconds = [pc.precompute_model(loaded, sentences).seconds for _ in range(args.runs)]
            median = statistics.median(seconds)
            on = device.upper() if device == "cuda" else "CPU"
            pairs += [
                (f"{name}: load ({on})", f"{load:.1f} s"),
                (
                    f"{name}, {len(sentences)} sentences on {on}: wall time (median of "
                    f"{args.runs}, range {min(seconds):.3f}–{max(seconds):.3f} s)",
                    f"{median:.3f} s",
                ),
                (f"{name}: sentences per second ({on})", f"{len(sentences) / median:.3g}"),
            ]
            del loaded
        assets = [sizes(pc.OUT / a["path"]) for a in index["assets"] if a["model"] == slug]
        every += assets
        total = {k: sum(r[k] for r in assets) for k in assets[0]}
        pairs += [
            (
                f"{name}: committed assets",
                f"{len(assets)}, {total['asset'] / kb:.0f} KB "
                f"({total['asset_gz'] / kb:.0f} KB gzip)",
            ),
            (
                f"{name}: bytes per asset, median (gzip); largest",
                f"{statistics.median(r['asset'] for r in assets):.0f} "
                f"({statistics.median(r['asset_gz'] for r in assets):.0f}); "
                f"{max(r['asset'] for r in assets)}",
            ),
        ]
    total = {k: sum(r[k] for r in every) for k in every[0]}
    pairs += [
        (
            "both models, attention weights only: uint8, one byte per stored weight",
            f"{total['weights_stored'] / kb:.0f} KB",
        ),
        (
            "the same as base64 text in the assets (gzip)",
            f"{total['weights_text'] / kb:.0f} KB ({total['weights_text_gz'] / kb:.0f} KB)",
        ),
        (
            "same weights as float32 (gzip)",
            f"{total['float32'] / kb:.0f} KB ({total['float32_gz'] / kb:.0f} KB)",
        ),
        (
            "same weights as 3-decimal JSON (gzip)",
            f"{total['json3'] / kb:.0f} KB ({total['json3_gz'] / kb:.0f} KB)",
        ),
    ]
    return [Row(BENCHMARK, measure, value) for measure, value in pairs]


def main(argv=None) -> int:
    return run_alone(rows, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
