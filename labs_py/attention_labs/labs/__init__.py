"""The lab registry: one module per lab, each with ``SCHEMA`` and ``compute(params)``.

Adding a lab: write ``labs/<name>.py`` with a ``SCHEMA`` (see :mod:`..params`) and a
``compute(params) -> dict`` returning lists, numbers, strings and NumPy arrays. That is
all: the registry finds every module of this package (``pkgutil``, which works from the
wheel in Pyodide's site-packages as from the source tree), names the lab after it and
imports it when it is first used.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import MutableMapping
from types import ModuleType
from typing import Any

import numpy as np

from ..calls import answer_json
from ..params import LabParameterError, schema_as_json, validate


class _Labs(MutableMapping):
    """Lab name -> lab module, every ``labs/<name>.py`` (not starting with "_"), each
    module imported the first time it is looked up: the browser's worker starts by
    importing this package, and importing all the labs then took 0.3-0.4 s (the MiniLM
    tokenizer's unicodedata, NumPy's random...) for a page that runs one or two. A
    module without ``SCHEMA`` and ``compute`` is an error when it is looked up (helpers
    of the labs go in modules whose names start with "_")."""

    def __init__(self, names):
        self._modules: dict[str, ModuleType | None] = dict.fromkeys(names)

    def __getitem__(self, name: str) -> ModuleType:
        module = self._modules[name]
        if module is None:
            module = importlib.import_module(f"{__name__}.{name}")
            if not hasattr(module, "SCHEMA") or not callable(getattr(module, "compute", None)):
                raise TypeError(
                    f"labs/{name}.py is not a lab: it needs SCHEMA and compute(params) "
                    "(a helper module's name starts with '_')"
                )
            self._modules[name] = module
        return module

    def __setitem__(self, name: str, module: ModuleType) -> None:
        self._modules[name] = module

    def __delitem__(self, name: str) -> None:
        del self._modules[name]

    def __iter__(self):
        return iter(self._modules)

    def __len__(self) -> int:
        return len(self._modules)

    def __contains__(self, name) -> bool:
        return name in self._modules


def _discover() -> _Labs:
    """Every ``labs/<name>.py`` by name, sorted (pkgutil: from the source tree and from
    the wheel in Pyodide's site-packages alike); nothing is imported yet."""
    names = sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.ispkg)
    return _Labs(n for n in names if not n.startswith("_"))


LABS: MutableMapping[str, ModuleType] = _discover()


def lab_names() -> list[str]:
    """The known labs' names, sorted."""
    return sorted(LABS)


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
    """Validate ``params`` and compute lab ``name``, as plain JSON-able values.

    Returns ``{"lab", "params", "result"}``; arrays in the result become nested lists,
    with non-finite entries (masked logits) as ``None``. Raises
    :class:`LabParameterError` (a ValueError) for an unknown lab or bad parameter.
    """
    valid = validate_params(name, params)
    return {"lab": name, "params": valid, "result": _plain(get_lab(name).compute(valid))}


def _plain(value: Any) -> Any:
    """``value`` with numpy arrays and scalars turned into lists and Python numbers, inside
    dicts and lists too (e.g. a list of heads, each with its weights)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        if value.dtype.kind == "f" and not np.isfinite(value).all():
            return np.where(np.isfinite(value), value, None).tolist()
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value


def lab_schema(name: str) -> list[dict[str, Any]]:
    """The parameter schema of lab ``name`` as JSON-able dicts."""
    return schema_as_json(get_lab(name).SCHEMA)


def static_view(name: str, result: dict[str, Any], params: dict[str, Any]) -> list:
    """What lab ``name`` shows of ``result`` (the JSON form, ``run_lab(...)["result"]``)
    for its validated ``params`` without JavaScript: its module's
    ``static_view(result, params)``, or
    :func:`..static.default_view`. A list of :class:`..static.Table` and
    :class:`..static.Text`; TypeError when a lab's ``static_view`` returns anything else."""
    from .. import static

    own = getattr(get_lab(name), "static_view", None)
    parts = own(result, params) if callable(own) else static.default_view(result, params)
    if not parts or not all(isinstance(p, static.Table | static.Text) for p in parts):
        raise TypeError(f"labs/{name}.py: static_view must return a non-empty list of Table/Text")
    return list(parts)


def run_lab_json(name: str, params_json: str) -> str:
    """Entry point for the browser worker: JSON in, JSON out (:func:`..calls.answer_json`).

    Always returns JSON: ``{"ok": true, "lab", "params", "result"}`` with float arrays
    packed as described in :func:`..calls.packed`, or ``{"ok": false, "error": message,
    "param": name-or-null}`` for bad input, so the page can show the message next to the
    control at fault.
    """
    return answer_json("lab", name, params_json, get_lab)
