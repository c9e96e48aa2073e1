"""The lab registry: one module per lab, each with ``SCHEMA`` and ``compute(params)``.

Adding a lab: write ``labs/<name>.py`` with a ``SCHEMA`` (see :mod:`..params`) and a
``compute(params) -> dict`` returning JSON-able values, then add one line to ``LABS``.
"""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

from ..params import LabParameterError, schema_as_json, validate
from . import attention_pattern

LABS: dict[str, ModuleType] = {
    "attention_pattern": attention_pattern,
}


def get_lab(name: str) -> ModuleType:
    """The lab module called ``name``; LabParameterError lists the known labs."""
    try:
        return LABS[name]
    except (KeyError, TypeError):
        raise LabParameterError(
            "lab", f"unknown lab {name!r}; known labs: {', '.join(sorted(LABS))}"
        ) from None


def validate_params(name: str, params: dict[str, Any] | None) -> dict[str, Any]:
    """Validated parameters of lab ``name`` with defaults filled in."""
    return validate(get_lab(name).SCHEMA, params)


def run_lab(name: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """Validate ``params`` and compute lab ``name``.

    Returns ``{"lab", "params", "result"}``, all JSON-able. Raises
    :class:`LabParameterError` (a ValueError) for an unknown lab or bad parameter.
    """
    valid = validate_params(name, params)
    return {"lab": name, "params": valid, "result": get_lab(name).compute(valid)}


def lab_schema(name: str) -> list[dict[str, Any]]:
    """The parameter schema of lab ``name`` as JSON-able dicts."""
    return schema_as_json(get_lab(name).SCHEMA)


def run_lab_json(name: str, params_json: str) -> str:
    """Entry point for the browser worker: JSON in, JSON out.

    Always returns JSON: ``{"ok": true, ...run_lab...}`` or
    ``{"ok": false, "error": message, "param": name-or-null}`` for bad input, so the
    page can show the message next to the control at fault.
    """
    try:
        params = json.loads(params_json)
        out = run_lab(name, params)
    except LabParameterError as err:
        return json.dumps({"ok": False, "error": str(err), "param": err.param})
    except (ValueError, json.JSONDecodeError) as err:
        return json.dumps({"ok": False, "error": str(err), "param": None})
    out["ok"] = True
    return json.dumps(out, allow_nan=False)
