"""Run readers' code cells and check their exercises: the Python side of ```pycell and
```exercise fences.

The browser's worker (docs/javascripts/runtime/pyodide-worker.js) calls :func:`run_cell_json`
and :func:`check_code_json`; the build (build_scripts/hooks/exercise.py) and the tests call the
same functions in CPython, so what CI checks is what the reader's browser runs.

A page's cells share one namespace, like a notebook: a dict kept here under the page's key.
A cell's result is a dict (JSON-able):

    {"outputs": [{"type": "stream", "name": "stdout"|"stderr", "text": str}
                 | {"type": "heatmap", "values": [[float]], "rows": [str], "cols": [str],
                    "title": str}],
     "value": repr of the last expression or None,
     "error": readable traceback or None, "interrupted": bool}

Standard library and NumPy only; nothing here knows about JavaScript (output is handed to
an optional ``emit`` callable as JSON text).
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import linecache
import sys
import time
import traceback

import numpy as np

__all__ = [
    "assert_close",
    "check_code",
    "check_code_json",
    "forget_namespaces",
    "run_cell",
    "run_cell_json",
    "show_heatmap",
]

MAX_OUTPUT_CHARS = 100_000  # per cell: a runaway print loop must not flood the page
MAX_VALUE_CHARS = 10_000
FLUSH_EVERY_S = 0.1  # how often streamed output is handed to `emit`
MAX_HEATMAP = 64  # rows or columns: larger arrays are unreadable as a heatmap anyway

NAMESPACES: dict[str, dict] = {}
_outputs: list | None = None  # the running cell's output list (show_heatmap appends to it)


# ----------------------------------------------------------------------------
# helpers readers call


def show_heatmap(weights, tokens=None, keys=None, title=""):
    """Draw an attention pattern below the cell with the site's heatmap renderer.

    Args:
        weights: 2-D array-like (seq_len_q, seq_len_k) of weights in [0, 1], indexed
            [query, key]; at most 64 x 64.
        tokens: labels of the rows (queries), default "0", "1", ...
        keys: labels of the columns (keys), default ``tokens`` when the matrix is square.
        title: a caption (also the picture's accessible name).

    Raises:
        ValueError: weights is not 2-D, has NaN/inf or values outside [0, 1], is larger
            than 64 x 64, or the labels do not match its shape.
    """
    try:
        w = np.asarray(weights, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise ValueError(f"show_heatmap: weights must be an array of numbers ({err})") from None
    if w.ndim != 2 or 0 in w.shape:
        raise ValueError(f"show_heatmap: weights must be 2-D [query, key], got shape {w.shape}")
    if max(w.shape) > MAX_HEATMAP:
        raise ValueError(f"show_heatmap: at most {MAX_HEATMAP} x {MAX_HEATMAP}, got {w.shape}")
    if not np.all(np.isfinite(w)) or w.min() < 0 or w.max() > 1:
        raise ValueError(
            "show_heatmap draws weights in [0, 1] (apply softmax first); got values from "
            f"{np.nanmin(w):.3g} to {np.nanmax(w):.3g}"
        )
    rows = [str(t) for t in tokens] if tokens is not None else [str(i) for i in range(w.shape[0])]
    if keys is None:
        keys = tokens if tokens is not None and w.shape[0] == w.shape[1] else None
    cols = [str(t) for t in keys] if keys is not None else [str(i) for i in range(w.shape[1])]
    if len(rows) != w.shape[0] or len(cols) != w.shape[1]:
        raise ValueError(
            f"show_heatmap: {len(rows)} row and {len(cols)} column labels for weights of "
            f"shape {w.shape}"
        )
    item = {"type": "heatmap", "values": w.tolist(), "rows": rows, "cols": cols}
    item["title"] = str(title)
    if _outputs is not None:
        _outputs.append(item)


def assert_close(got, expected, name="the result", atol=1e-6):
    """Raise AssertionError unless ``got`` has ``expected``'s shape and values (within
    ``atol``). The message never shows the expected values: exercises' hidden tests use it."""
    try:
        g = np.asarray(got, dtype=np.float64)
    except (TypeError, ValueError):
        raise AssertionError(f"{name} is not an array of numbers") from None
    e = np.asarray(expected, dtype=np.float64)
    if g.shape != e.shape:
        raise AssertionError(f"{name} has shape {g.shape}; a different shape was expected")
    if np.any(np.isnan(g)):
        raise AssertionError(f"{name} contains NaN")
    bad = ~np.isclose(g, e, rtol=0, atol=atol)
    if np.any(bad):
        raise AssertionError(
            f"{name}: {int(bad.sum())} of {g.size} values are wrong (tolerance {atol:g})"
        )


_real_sleep = time.sleep


def interruptible_sleep(seconds):
    """``time.sleep`` in slices of at most 50 ms.

    Pyodide raises KeyboardInterrupt (the Stop button) only between Python bytecodes, so
    a single long C-level sleep cannot be interrupted; the browser's worker installs this
    as ``time.sleep`` when the page can interrupt Python. Same errors as time.sleep."""
    if seconds < 0:
        raise ValueError("sleep length must be non-negative")
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        _real_sleep(min(left, 0.05))


# ----------------------------------------------------------------------------
# running code


class _Stream(io.TextIOBase):
    """stdout/stderr of a cell: appended to its outputs, flushed to `emit` now and then."""

    def __init__(self, name, sink):
        self.name_ = name
        self.sink = sink

    def writable(self):
        return True

    def write(self, text):
        self.sink.write(self.name_, str(text))
        return len(text)


class _Sink:
    def __init__(self, outputs, emit):
        self.outputs = outputs
        self.emit = emit
        self.sent = 0  # outputs[:sent] were emitted already
        self.chars = 0
        self.truncated = False
        self.last_flush = time.monotonic()

    def write(self, name, text):
        if self.truncated:
            return
        if self.chars + len(text) > MAX_OUTPUT_CHARS:
            text = text[: MAX_OUTPUT_CHARS - self.chars]
            self.truncated = True
            text += f"\n[output cut at {MAX_OUTPUT_CHARS} characters]\n"
        self.chars += len(text)
        last = self.outputs[-1] if len(self.outputs) > self.sent and self.outputs else None
        if last and last["type"] == "stream" and last["name"] == name:
            last["text"] += text
        else:
            self.outputs.append({"type": "stream", "name": name, "text": text})
        if self.emit and time.monotonic() - self.last_flush > FLUSH_EVERY_S:
            self.flush()

    def flush(self):
        if self.emit and len(self.outputs) > self.sent:
            self.emit(json.dumps(self.outputs[self.sent :]))
            self.sent = len(self.outputs)
        self.last_flush = time.monotonic()


def _readable_traceback(err: BaseException, filenames: set[str]) -> str:
    """The traceback of `err` with only the reader's frames (cells), not this module's."""
    tb = traceback.TracebackException.from_exception(err)
    tb.stack = traceback.StackSummary.from_list(
        [f for f in tb.stack if f.filename in filenames or not f.filename.startswith("<")]
    )
    # Frames of this module (the runner) say nothing to a reader. Its code's own file name:
    # __file__ is the .pyc where the module is installed precompiled (the browser).
    runner = _readable_traceback.__code__.co_filename
    tb.stack = traceback.StackSummary.from_list([f for f in tb.stack if f.filename != runner])
    text = "".join(tb.format())
    if not tb.stack:
        text = text.replace("Traceback (most recent call last):\n", "")
    return text


def _execute(code: str, namespace: dict, filename: str, sink: _Sink) -> tuple:
    """Run `code`; return (value repr or None, error text or None, interrupted)."""
    global _outputs
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    try:
        tree = ast.parse(code, filename, "exec")
    except SyntaxError as err:
        return None, "".join(traceback.format_exception_only(err)), False
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    _outputs = sink.outputs
    stdout, stderr = _Stream("stdout", sink), _Stream("stderr", sink)
    value = None
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            exec(compile(tree, filename, "exec"), namespace)
            if last is not None:
                result = eval(compile(last, filename, "eval"), namespace)
                if result is not None:
                    # NumPy 2 shows scalars as np.float64(1.22); a reader expects 1.22
                    shown = result.item() if isinstance(result, np.generic) else result
                    value = repr(shown)
                    if len(value) > MAX_VALUE_CHARS:
                        value = value[:MAX_VALUE_CHARS] + " …[cut]"
                namespace["_"] = result
    except KeyboardInterrupt:
        return None, "KeyboardInterrupt: stopped", True
    except BaseException as err:  # noqa: BLE001 - SystemExit too: the reader's code, reported
        return None, _readable_traceback(err, {filename}), False
    finally:
        _outputs = None
    return value, None, False


def new_namespace() -> dict:
    return {"__name__": "__main__", "__builtins__": __builtins__, "show_heatmap": show_heatmap}


def run_cell(code: str, namespace: dict, filename: str = "<cell>", emit=None) -> dict:
    """Run one cell's `code` in `namespace` (a dict, changed in place).

    Returns ``{"outputs", "value", "error", "interrupted"}`` (see the module docstring).
    ``emit(json_text)``, if given, receives lists of new output items while the cell runs
    (at most every 0.1 s); the returned ``outputs`` then hold only what was not emitted.
    The reader's exceptions (KeyboardInterrupt too) are caught and reported, never raised.
    """
    sink = _Sink([], emit)
    value, error, interrupted = _execute(code, namespace, filename, sink)
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    return {
        "outputs": sink.outputs[sink.sent :],
        "value": value,
        "error": error,
        "interrupted": interrupted,
    }


def run_cell_json(page: str, code: str, filename: str, emit=None) -> str:
    """:func:`run_cell` in the shared namespace of page ``page``; the result as JSON."""
    namespace = NAMESPACES.get(page)
    if namespace is None:
        namespace = NAMESPACES[page] = new_namespace()
    return json.dumps(run_cell(code, namespace, filename, emit))


def forget_namespaces(keep: str = "") -> None:
    """Drop every page's namespace except ``keep``'s (the reader left those pages)."""
    for key in list(NAMESPACES):
        if key != keep:
            del NAMESPACES[key]


# ----------------------------------------------------------------------------
# code exercises


def check_code(code: str, checks: list[dict], filename: str = "<exercise>") -> dict:
    """Run the reader's ``code`` in a fresh namespace, then each hidden check.

    Args:
        code: the reader's Python (e.g. a function definition).
        checks: ``[{"name": str, "code": str}]``; a check passes if its code runs without
            an exception. Checks see the reader's names, ``np`` and :func:`assert_close`.

    Returns:
        ``{"run": run_cell result of the reader's code, "cases": [{"name", "passed",
        "message"}], "passed": bool}``. ``message`` says what went wrong in words (an
        AssertionError's own message, or the exception the reader's code raised); it
        never quotes the check's code or expected values.
    """
    namespace = new_namespace()
    run = run_cell(code, namespace, filename)
    cases = []
    if run["error"] is None:
        for n, check in enumerate(checks, start=1):
            ns = dict(namespace, np=np, assert_close=assert_close)
            message = ""
            try:
                with contextlib.redirect_stdout(io.StringIO()):
                    exec(compile(check["code"], f"<hidden check {n}>", "exec"), ns)
            except KeyboardInterrupt:
                run.update(error="KeyboardInterrupt: stopped", interrupted=True)
                break
            except AssertionError as err:
                message = str(err) or "a hidden check failed"
            except BaseException as err:  # noqa: BLE001 - the reader's code raised
                message = f"your code raised {type(err).__name__}: {err}".strip()
                message = message.splitlines()[0] if message else type(err).__name__
            cases.append({"name": check["name"], "passed": not message, "message": message})
    passed = run["error"] is None and all(c["passed"] for c in cases)
    return {"run": run, "cases": cases, "passed": passed}


def check_code_json(code: str, checks_json: str, filename: str = "<exercise>") -> str:
    """:func:`check_code` with the checks as JSON text; the result as JSON."""
    return json.dumps(check_code(code, json.loads(checks_json), filename))
