"""Numbers in prose, computed at build time.

A page defines its numbers in one or more hidden ```numbers fences of Python, run here (in
order, top to bottom) with ``np`` (NumPy), ``math`` and ``attention_labs`` imported and
``docs`` the build's docs folder (a ``pathlib.Path``, to read a committed asset), and
``lab_download()`` (hooks/home.py: the bytes a lab fetches to start, ``.sent``/``.raw``):

    ```numbers
    from attention_labs import softmax
    scores = np.array([2, 1, 0.1])
    weights = softmax(scores)
    ```

Anywhere in the page's prose (math included; not inside a fence or an inline code span),
``{{ expr }}`` is replaced by ``format(value, "")`` and ``{{ expr:.3f }}`` by the value
formatted with that spec; a spec applied to a list, tuple or array formats each element and
joins them with ", " (``({{ weights:.3f }})`` -> ``(0.659, 0.242, 0.099)``). The fences
themselves render as nothing. An expression or a fence that raises fails the build with
``docs/<file>:<line>: ...``. An expression sits on one line. Exercises use the same
``{{ }}`` syntax with their own ``setup`` namespace (hooks/exercise.py).
"""

from __future__ import annotations

import functools
import math
import re
from pathlib import Path

import attention_labs
import numpy as np

from . import home
from .scanner import Fence, FenceError, Page

NAME = "numbers"
TEMPLATE = re.compile(r"\{\{\s*(.+?)(?::([<>^+\- #0-9,._]*[bcdeEfFgGn%]))?\s*\}\}")
CODE_SPAN = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)")


class NumbersError(FenceError):
    """A numbers fence or a ``{{ expr }}`` of the prose that raised."""


def _format(value, spec: str | None) -> str:
    if spec and isinstance(value, list | tuple | np.ndarray):
        return ", ".join(format(v, spec) for v in np.ravel(np.asarray(value)))
    return format(value, spec or "")


def fill(text: str, namespace: dict, where: str, error=NumbersError) -> str:
    """Replace ``{{ expr }}`` / ``{{ expr:.3f }}`` with values computed from ``namespace``;
    ``error`` (naming ``where``) when an expression raises."""

    def value(m: re.Match) -> str:
        try:
            v = eval(m[1], namespace)  # the lesson author's expression, at build time
            return _format(v, m[2])
        except Exception as err:
            raise error(f"{where}: cannot fill {m[0]!r}: {type(err).__name__}: {err}") from None

    return TEMPLATE.sub(value, text)


def new_namespace(docs: Path) -> dict:
    """The names a page's numbers fences start with; ``docs``: the build's docs folder."""
    return {
        "np": np,
        "math": math,
        "attention_labs": attention_labs,
        "docs": docs,
        # what a lab of this build fetches to start (home page)
        "lab_download": functools.partial(home.lab_download, docs),
        "__name__": "__numbers__",
    }


def run(fence: Fence, page: Page, namespace: dict) -> None:
    """Run one ```numbers fence into ``namespace``; NumbersError at the failing line."""
    where = page.where(fence)
    if fence.end is None:
        raise NumbersError(f"{where}: numbers fence is never closed (add a line with ```)")
    try:
        code = compile(fence.body, f"<numbers {where}>", "exec")
        exec(code, namespace)
    except Exception as err:
        line = getattr(err, "lineno", None)
        if not isinstance(err, SyntaxError):
            tb = err.__traceback__
            while tb is not None:
                if tb.tb_frame.f_code.co_filename == f"<numbers {where}>":
                    line = tb.tb_lineno
                tb = tb.tb_next
        at = f"docs/{page.src_path}:{fence.line_no + page.offset + (line or 1)}"
        raise NumbersError(f"{at}: numbers fence raised {type(err).__name__}: {err}") from None


def fill_line(line: str, namespace: dict, where: str) -> str:
    """One line of prose with its expressions filled; inline code spans are left alone."""
    if "{{" not in line:
        return line
    out, last = [], 0
    for m in CODE_SPAN.finditer(line):
        out.append(fill(line[last : m.start()], namespace, where))
        out.append(m[0])
        last = m.end()
    out.append(fill(line[last:], namespace, where))
    return "".join(out)
