"""`make bench`, precompute part: how long real maps take and how large their assets are.

- wall time of the precompute (tokenize, run in batches, check, pack; model load excluded)
  for the committed model on this machine's CPU, median of --runs after one warm-up, and
  sentences per second;
- bytes per committed asset, raw and gzip (level 9, as build_scripts/compress.py writes
  them), against the same weights as float32 (binary) and as 3-decimal JSON.

CUDA numbers come from build_scripts/precompute/compare_devices.py on a GPU machine (CI has none).
This is a benchmark, not a test: it asserts nothing. Usage:
python -m build_scripts.bench.bench_precompute [--runs 5] [--out bench-results/precompute.md]
"""

from __future__ import annotations

import argparse
import base64
import gzip
import json
import platform
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

from build_scripts.precompute import precompute_attention as pc  # noqa: E402

MODEL = "sentence-transformers/all-MiniLM-L6-v2"


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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out", default=str(ROOT / "bench-results" / "precompute.md"))
    args = parser.parse_args(argv)

    import torch

    sentences = pc.load_sentences()
    loaded = pc.load_model(pc.resolve_model(MODEL), pc.pick_device("cpu"))
    pc.precompute_model(loaded, sentences)  # warm-up
    seconds = [pc.precompute_model(loaded, sentences).seconds for _ in range(args.runs)]
    median = statistics.median(seconds)

    index = json.loads((pc.OUT / "index.json").read_text("utf-8"))
    rows = [sizes(pc.OUT / a["path"]) for a in index["assets"] if a["model"] == "all-minilm-l6-v2"]
    total = {k: sum(r[k] for r in rows) for k in rows[0]}
    kb = 1024
    lines = [
        "## Precompute (real attention maps)",
        "",
        f"Machine: {platform.processor() or platform.machine()}, {torch.get_num_threads()} "
        f"torch threads, Python {platform.python_version()}, torch {torch.__version__}.",
        "",
        "| measure | value |",
        "|---|---|",
        f"| {MODEL}, {len(sentences)} sentences on CPU: wall time (median of {args.runs}, "
        f"range {min(seconds):.3f}–{max(seconds):.3f} s) | {median:.3f} s |",
        f"| sentences per second (CPU) | {len(sentences) / median:.0f} |",
        f"| committed assets | {len(rows)}, {total['asset'] / kb:.0f} KB "
        f"({total['asset_gz'] / kb:.0f} KB gzip) |",
        f"| bytes per asset, median (gzip) | {statistics.median(r['asset'] for r in rows):.0f} "
        f"({statistics.median(r['asset_gz'] for r in rows):.0f}) |",
        f"| attention weights only: uint8, one byte per stored weight | "
        f"{total['weights_stored'] / kb:.0f} KB |",
        f"| the same as base64 text in the assets (gzip) | {total['weights_text'] / kb:.0f} KB "
        f"({total['weights_text_gz'] / kb:.0f} KB) |",
        f"| same weights as float32 (gzip) | {total['float32'] / kb:.0f} KB "
        f"({total['float32_gz'] / kb:.0f} KB) |",
        f"| same weights as 3-decimal JSON (gzip) | {total['json3'] / kb:.0f} KB "
        f"({total['json3_gz'] / kb:.0f} KB) |",
        "",
        "An asset also carries tokens, per-head statistics and four heads' float32 query, key "
        "and value vectors. CUDA: run python -m build_scripts.precompute.compare_devices on a "
        "GPU machine.",
        "",
    ]
    report = "\n".join(lines)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(report, "utf-8")
    print(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
