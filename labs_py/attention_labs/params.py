"""Declarative parameter schemas for labs, and their validation.

A lab declares its parameters as a tuple of :class:`Param`. The same schema is used
three times: by the build hook (lab fences in lessons), by the browser worker (values a
reader types) and by the widget (HTML input limits, via :func:`schema_as_json`). It lives
here, in the standard library only, because this package must also run inside Pyodide.
"""

from __future__ import annotations

import base64
import binascii
import functools
import math
from dataclasses import dataclass, field
from typing import Any


class LabParameterError(ValueError):
    """A lab parameter is missing, unknown or out of range.

    ``param`` names the offending parameter (``None`` when the problem is the whole
    mapping); the message says what is allowed.
    """

    def __init__(self, param: str | None, message: str):
        super().__init__(message)
        self.param = param


@dataclass(frozen=True)
class Param:
    """One lab parameter.

    kind is one of ``"number"`` (finite float), ``"integer"``, ``"boolean"``,
    ``"choice"`` (one of ``choices``), ``"tokens"`` (a list of non-empty strings),
    ``"base64"`` (standard base64 text, e.g. packed float32 vectors; may be empty) or
    ``"text"`` (any string of at most ``max_chars`` characters; may be empty).
    ``minimum``/``maximum`` bound numbers and integers (inclusive); ``min_items``/
    ``max_items``/``max_chars`` bound token lists; ``max_chars`` also bounds base64 text.
    What the decoded bytes must hold is the lab's to check (it knows the shapes).
    """

    name: str
    kind: str
    default: Any
    description: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()
    min_items: int = 1
    max_items: int = 128
    max_chars: int = 32
    labels: dict[str, str] = field(default_factory=dict)

    def allowed(self) -> str:
        """A short human description of the allowed values."""
        if self.kind == "number":
            return f"a number from {self.minimum:g} to {self.maximum:g}"
        if self.kind == "integer":
            return f"a whole number from {self.minimum:g} to {self.maximum:g}"
        if self.kind == "boolean":
            return "true or false"
        if self.kind == "choice":
            return "one of " + ", ".join(repr(c) for c in self.choices)
        if self.kind == "text":
            return f"text of at most {self.max_chars} characters"
        if self.kind == "base64":
            return (
                "base64 text (A-Z, a-z, 0-9, +, / and = padding) of at most "
                f"{self.max_chars} characters"
            )
        return (
            f"a list of {self.min_items} to {self.max_items} tokens, "
            f"each 1 to {self.max_chars} characters"
        )

    def check(self, value: Any) -> Any:
        """Return ``value`` normalised (e.g. int 2 -> 2.0 for numbers) or raise
        :class:`LabParameterError` naming this parameter and what is allowed."""
        bad = LabParameterError(self.name, f"{self.name} must be {self.allowed()}, got {value!r}")
        if self.kind == "boolean":
            if not isinstance(value, bool):
                raise bad
            return value
        if self.kind == "choice":
            if not isinstance(value, str) or value not in self.choices:
                raise bad
            return value
        if self.kind == "base64":
            return self._check_base64(value)
        if self.kind == "text":
            if not isinstance(value, str):
                raise bad
            if len(value) > self.max_chars:
                raise LabParameterError(
                    self.name, f"{self.name} must be {self.allowed()}, got {len(value)}"
                )
            return value
        if self.kind == "tokens":
            if not isinstance(value, (list, tuple)):
                raise bad
            if not self.min_items <= len(value) <= self.max_items:
                raise LabParameterError(
                    self.name,
                    f"{self.name} must be {self.allowed()}, got {len(value)} tokens",
                )
            for i, token in enumerate(value):
                if not isinstance(token, str) or not 1 <= len(token) <= self.max_chars:
                    # 1-based: the reader's second word is token 2.
                    which = f"token {i + 1} of {len(value)}"
                    if isinstance(token, str):
                        shown = token if len(token) <= 40 else token[:39] + "…"
                        got = f'{which} ("{shown}") has {len(token)}'
                    else:
                        got = f"{which} is {token!r}, not text"
                    raise LabParameterError(
                        self.name,
                        f"{self.name} must each be text of 1 to {self.max_chars} characters: {got}",
                    )
            return [str(t) for t in value]
        # number / integer; bool is an int subclass in Python, and never a number here.
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise bad
        if self.kind == "integer":
            if isinstance(value, float):
                if not value.is_integer():
                    raise bad
                value = int(value)
        else:
            try:
                value = float(value)
            except OverflowError:  # an int too large for a float, e.g. from JSON or YAML
                raise bad from None
            if not math.isfinite(value):
                raise bad
        if not self.minimum <= value <= self.maximum:
            raise bad
        return value

    def _check_base64(self, value: Any) -> str:
        if not isinstance(value, str):
            raise LabParameterError(
                self.name, f"{self.name} must be {self.allowed()}, got {type(value).__name__}"
            )
        if len(value) > self.max_chars:
            raise LabParameterError(
                self.name, f"{self.name} must be {self.allowed()}, got {len(value)} characters"
            )
        try:
            _check_base64_text(value)
        except (binascii.Error, ValueError) as err:  # ValueError: non-ASCII text
            raise LabParameterError(
                self.name, f"{self.name} must be {self.allowed()}; it is not valid base64 ({err})"
            ) from None
        return value


@functools.lru_cache(maxsize=8)
def _check_base64_text(value: str) -> None:
    """Raise binascii.Error or ValueError unless ``value`` is base64; remembered, because a
    lab that carries vectors (real_scores) sends the same long text with every change."""
    base64.b64decode(value, validate=True)


def validate(schema: tuple[Param, ...], params: dict[str, Any] | None) -> dict[str, Any]:
    """Check ``params`` against ``schema`` and fill in defaults.

    Returns a new dict with every parameter of the schema, in schema order.
    Raises :class:`LabParameterError` for a non-mapping, an unknown name (listing the
    known ones) or a bad value.
    """
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise LabParameterError(None, f"parameters must be a mapping, got {type(params).__name__}")
    known = {p.name: p for p in schema}
    unknown = sorted(set(params) - set(known), key=str)  # YAML keys need not be str
    if unknown:
        raise LabParameterError(
            unknown[0],
            f"unknown parameter {unknown[0]!r}; allowed: {', '.join(known)}",
        )
    return {p.name: p.check(params.get(p.name, p.default)) for p in schema}


def schema_as_json(schema: tuple[Param, ...]) -> list[dict[str, Any]]:
    """The schema as JSON-able dicts, for the widget's input limits and labels."""
    out = []
    for p in schema:
        item: dict[str, Any] = {
            "name": p.name,
            "kind": p.kind,
            "default": p.default,
            "description": p.description,
        }
        if p.kind in ("number", "integer"):
            item["minimum"], item["maximum"] = p.minimum, p.maximum
        if p.kind == "choice":
            item["choices"] = list(p.choices)
            item["labels"] = dict(p.labels)
        if p.kind == "tokens":
            item.update(min_items=p.min_items, max_items=p.max_items, max_chars=p.max_chars)
        if p.kind in ("base64", "text"):
            item["max_chars"] = p.max_chars
        out.append(item)
    return out
