"""The command line: ``python -m build_scripts.precompute [--model ID_OR_DIR ...]`` (what
`make precompute` runs). Errors print one line saying what to do and exit with status 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .inputs import OUT, SENTENCES, ModelNotFound, PrecomputeError, load_sentences
from .load import load_model, pick_device, resolve_model
from .registry import adapter_for
from .run import precompute_model
from .write import write_results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m build_scripts.precompute",
        description="Precompute real attention maps (all layers and heads) as JSON assets.",
    )
    parser.add_argument(
        "--model",
        action="append",
        help="Hugging Face id, local model directory or .gguf file, or a packaged name such as "
        "smollm2-135m (repeatable; default: gpt2)",
    )
    parser.add_argument(
        "--optional-model",
        action="append",
        default=[],
        help="like --model, but skipped with a notice when its weights are not here",
    )
    parser.add_argument("--sentences", type=Path, default=SENTENCES, help="sentences YAML")
    parser.add_argument("--out", type=Path, default=OUT, help="asset folder (index.json)")
    parser.add_argument("--device", default="auto", help="auto (CUDA when present), cpu or cuda")
    parser.add_argument(
        "--batch-size",
        type=int,
        default=None,
        help="sentences per timed batched pass (CPU 8, CUDA all); the written bytes never "
        "depend on it",
    )
    args = parser.parse_args(argv)
    models = args.model or ([] if args.optional_model else ["gpt2"])
    try:
        sentences = load_sentences(args.sentences)
        device = pick_device(args.device)
        resolved = [resolve_model(m) for m in models]
        for name in args.optional_model:
            try:
                resolved.append(resolve_model(name))
            except ModelNotFound as err:
                print(f"precompute: skipping optional model: {err}", file=sys.stderr)
        results = []
        for r in resolved:
            loaded = load_model(r, device)
            if adapter_for(loaded.config.model_type) is None:
                print(
                    f"precompute: {r.id}: no capture adapter for model_type "
                    f"{loaded.config.model_type!r} (build_scripts/precompute/registry.py), so its "
                    "assets carry no queries, keys and values",
                    file=sys.stderr,
                )
            result = precompute_model(loaded, sentences, args.batch_size)
            results.append(result)
            print(
                f"precompute: {r.id} on {device.type}: {len(sentences)} sentences in "
                f"{result.seconds:.2f} s ({result.sentences_per_second:.1f} sentences/s)"
            )
        write_results(results, sentences, args.out)
    except PrecomputeError as err:
        print(f"precompute: error: {err}", file=sys.stderr)
        return 2
    print(f"precompute: wrote {args.out / 'index.json'}")
    return 0
