"""How the browser's worker calls Python: JSON in, JSON out.

Two kinds of module answer it the same way, each with ``SCHEMA`` (see :mod:`.params`) and
``compute(params) -> dict``: the labs (:mod:`.labs`, a lesson's fence and its widget) and the
map sources (:mod:`.models.sources`, the explorer's models run on the reader's text).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from .params import LabParameterError, validate


def packed(value: Any) -> Any:
    """JSON encoder hook for the browser: a float array travels as its float64 bytes.

    ``{"__ndarray__": base64 of little-endian float64, "shape": [...]}``: exact, and far
    faster than writing thousands of floats as decimal text (docs/javascripts/runtime/lab-runtime.js
    unpacks it into Float64Array rows). Other arrays become lists.
    """
    if isinstance(value, np.ndarray):
        if value.dtype.kind == "f":
            data = np.ascontiguousarray(value, dtype="<f8").tobytes()
            return {
                "__ndarray__": base64.b64encode(data).decode("ascii"),
                "shape": list(value.shape),
            }
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"cannot send {type(value).__name__} to the page")


def answer_json(kind: str, name: str, params_json: str, find: Callable[[str], ModuleType]) -> str:
    """Validate ``params_json`` against ``find(name).SCHEMA``, compute, and answer as JSON.

    Always returns JSON: ``{"ok": true, kind: name, "params", "result"}`` with float arrays
    packed as described in :func:`packed`, or ``{"ok": false, "error": message,
    "param": name-or-null}`` for bad input (``find`` raises LabParameterError for an unknown
    name), so the page can show the message next to the control at fault.
    """
    try:
        params = json.loads(params_json)
        module = find(name)
        valid = validate(module.SCHEMA, params)
        result = module.compute(valid)
    except LabParameterError as err:
        return json.dumps({"ok": False, "error": str(err), "param": err.param})
    except ValueError as err:  # json.JSONDecodeError is a ValueError too
        return json.dumps({"ok": False, "error": str(err), "param": None})
    out = {"ok": True, kind: name, "params": valid, "result": result}
    return json.dumps(out, default=packed, allow_nan=False)
