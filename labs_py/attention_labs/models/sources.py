"""The map sources: models the explorer runs on the reader's own text, each answering with
an asset written by :func:`attention_labs.maps.build_asset` (the format of the precomputed
maps), so the explorer draws them in its usual views.

A source is a module of this package with ``SCHEMA`` (:mod:`..params`) and
``compute(params) -> {"asset": ..., "run": {...}, ...}``, listed in `SOURCES`. The browser's
worker calls `run_source_json` (docs/javascripts/runtime/pyodide-worker.js, message
``source``); unlike a lab, a source has no fence and no widget of its own.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from ..calls import answer_json
from ..params import LabParameterError

# source name -> module of attention_labs.models (imported on first use: MiniLM's tokenizer
# alone costs the worker's start-up a tenth of a second)
SOURCES = {
    "own_sentence": "own_sentence",  # all-MiniLM-L6-v2 on the reader's sentence
    "own_letters": "own_letters",  # lesson 12's induction-head model on the reader's letters
    "own_decoder": "own_decoder",  # SmolLM2-135M on the reader's prompt, token by token
}


def get_source(name: str) -> ModuleType:
    """The source module called ``name``; LabParameterError lists the known sources."""
    if not isinstance(name, str) or name not in SOURCES:
        raise LabParameterError(
            "source", f"unknown map source {name!r}; known sources: {', '.join(SOURCES)}"
        )
    return importlib.import_module(f"{__package__}.{SOURCES[name]}")


def run_source_json(name: str, params_json: str) -> str:
    """Entry point for the browser worker: JSON in, JSON out, as a lab's
    (:func:`..calls.answer_json`): ``{"ok": true, "source", "params", "result"}`` or
    ``{"ok": false, "error", "param"}``."""
    return answer_json("source", name, params_json, get_source)
