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
    "defined_names",
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


# Tolerances of assert_close. float32 rounds every operation to within 2**-24 (about 6e-8)
# of its exact result; an inner product of n terms computed in float32 is off by at most
# about n * 6e-8 of the sum of the terms' sizes (Higham, "Accuracy and Stability of
# Numerical Algorithms", 2nd ed., 2002, sec. 3.1). The exercises' sums have at most 64
# terms and come a few products in a row, so a
# correct float32 answer is within about 1e-5 of the array's largest value; RTOL leaves ten
# times that. Measured on the catalogue of readers' answers (tests/lessons/
# exercise_catalogue.yaml), the float32 right ones are off by at most 6e-7 of it, and they
# pass with RTOL / 10; every wrong one (a transpose, a missing scale, the wrong axis or
# key) is still rejected with 100 * RTOL (test_exercise_catalogue.py checks both).
RTOL = 1e-4
ATOL = 1e-6  # for arrays whose values are all (near) 0, where RTOL * scale is 0


def assert_close(got, expected, name="the result", atol=None, rtol=None):
    """Raise AssertionError unless ``got`` has ``expected``'s shape and values.

    Every element must satisfy ``|got - expected| <= atol + rtol * max|expected|``: the
    error is measured against the largest value of the whole array, not element by
    element, because a correct float32 computation (a reader who writes
    ``astype(np.float32)``) is off by about 1e-7 of the terms it summed, so an element
    near 0 that is a difference of large terms may be off by far more than 1e-7 of
    itself. The defaults (None: the module's ``RTOL`` = 1e-4 and ``ATOL`` = 1e-6, read at
    each call) accept float32 answers and reject every mistake the exercises' checks look
    for; see the comment above ``RTOL``.

    ``got`` may be any array-like of numbers (float32, int, nested lists); NaN or inf where
    ``expected`` is finite fails. The message never shows the expected values: exercises'
    hidden checks use it.
    """
    try:
        g = np.asarray(got, dtype=np.float64)
    except (TypeError, ValueError):
        raise AssertionError(f"{name} is not an array of numbers") from None
    e = np.asarray(expected, dtype=np.float64)
    if g.shape != e.shape:
        raise AssertionError(f"{name} has shape {g.shape}; a different shape was expected")
    if np.any(np.isnan(g)):
        raise AssertionError(f"{name} contains NaN")
    atol = ATOL if atol is None else atol
    rtol = RTOL if rtol is None else rtol
    finite = np.isfinite(e)
    scale = float(np.abs(e[finite]).max()) if finite.any() else 0.0
    allowed = atol + rtol * scale
    with np.errstate(invalid="ignore"):  # inf - inf where both are inf: compared below
        bad = np.where(finite, ~(np.abs(g - e) <= allowed), g != e)
    if np.any(bad):
        raise AssertionError(
            f"{name}: {int(bad.sum())} of {g.size} values are wrong (allowed error {allowed:.2g})"
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
    try:
        return json.dumps(run_cell(code, namespace, filename, emit))
    except KeyboardInterrupt:
        # Stop sends the interrupt again while the cell runs (lab-runtime.js); one that lands
        # after the reader's code ended still means "stopped", not a crash of the worker.
        return json.dumps(
            {
                "outputs": [],
                "value": None,
                "error": "KeyboardInterrupt: stopped",
                "interrupted": True,
            }
        )


def forget_namespaces(keep: str = "") -> None:
    """Drop every page's namespace except ``keep``'s (the reader left those pages)."""
    for key in list(NAMESPACES):
        if key != keep:
            del NAMESPACES[key]


# ----------------------------------------------------------------------------
# code exercises


def defined_names(code: str) -> list[str]:
    """The names that ``code`` defines at its top level (``def``, ``class``, assignments),
    in order, without the ones it imports: an exercise's interface, read from its starter.

    Hidden checks see only these names of the reader's code (see :func:`check_code`), so a
    check cannot lean on a module the reference solution happened to import.

    Raises SyntaxError when ``code`` does not parse.
    """
    names: list[str] = []

    def add(target):
        if isinstance(target, ast.Name):
            names.append(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for t in target.elts:
                add(t)
        elif isinstance(target, ast.Starred):
            add(target.value)

    for node in ast.parse(code).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                add(target)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            add(node.target)
    return list(dict.fromkeys(names))


def _reader_line(err: BaseException, filename: str) -> int | None:
    """The line of the reader's code (``filename``) deepest on ``err``'s traceback, or None
    when the exception never passed through the reader's code."""
    line = None
    tb = err.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _first_line(err: BaseException) -> str:
    text = f"{type(err).__name__}: {err}".strip().rstrip(":")
    return text.splitlines()[0] if text else type(err).__name__


def _judge(err: BaseException, filename: str, names, namespace: dict) -> tuple[str, str]:
    """``(fault, message)`` for an exception a hidden check raised: ``"yours"`` when the
    reader's code raised it or the check found the reader's result wrong (an
    AssertionError of the check), ``"check"`` when the check failed on its own."""
    line = _reader_line(err, filename)
    if line is not None:
        return "yours", f"your code raised {_first_line(err)} (line {line})"
    if isinstance(err, AssertionError):
        return "yours", str(err) or "a hidden check failed"
    if (
        isinstance(err, NameError)
        and names is not None
        and err.name in names
        and err.name not in namespace
    ):
        return "yours", (
            f"your code does not define {err.name}: the checks call it by the starter's name"
        )
    return "check", (
        f"the check itself failed with {_first_line(err)}; your code raised nothing. "
        "If your code returns what the exercise asks for (its types and shapes), the "
        "fault is the check's, not yours"
    )


def check_code(
    code: str, checks: list[dict], filename: str = "<exercise>", names: list[str] | None = None
) -> dict:
    """Run the reader's ``code`` in a fresh namespace, then each hidden check.

    Args:
        code: the reader's Python (e.g. a function definition).
        checks: ``[{"name": str, "code": str}]``; a check passes if its code runs without
            an exception. Checks see ``np``, :func:`assert_close`, ``note(text)`` (a remark
            shown with the case, passed or not) and the reader's names: only ``names``
            (the starter's interface, :func:`defined_names`) when given, else all of them.
        filename: the name the reader's code runs under (tracebacks, and how a check's
            exception is told to come from the reader's code).
        names: the names of the reader's code that the checks may use.

    Returns:
        ``{"run": run_cell result of the reader's code, "cases": [{"name", "passed",
        "message", "fault", "note"}], "passed": bool}``. ``fault`` is None for a passed
        case, ``"yours"`` when the reader's result was wrong (the check's AssertionError)
        or the reader's code raised (``message`` then names the exception and the line of
        the reader's code), and ``"check"`` when the check raised without the reader's
        code raising anything: a fault of the check (or of a result of an unexpected
        type), never reported as the reader's exception. ``message`` never quotes the
        check's code or expected values. ``passed`` needs every case passed.
    """
    namespace = new_namespace()
    run = run_cell(code, namespace, filename)
    cases = []
    if run["error"] is None:
        if names is None:
            given = namespace
        else:
            given = {n: namespace[n] for n in names if n in namespace}
        for n, check in enumerate(checks, start=1):
            notes: list[str] = []
            ns = {"__builtins__": __builtins__, "__name__": "__check__", **given}
            ns.update(
                np=np,
                assert_close=assert_close,
                note=lambda text, into=notes: into.append(str(text)),
            )
            fault, message = None, ""
            try:
                with contextlib.redirect_stdout(io.StringIO()):
                    exec(compile(check["code"], f"<hidden check {n}>", "exec"), ns)
            except KeyboardInterrupt:
                run.update(error="KeyboardInterrupt: stopped", interrupted=True)
                break
            except BaseException as err:  # noqa: BLE001 - judged and reported, never raised
                fault, message = _judge(err, filename, names, namespace)
            cases.append(
                {
                    "name": check["name"],
                    "passed": fault is None,
                    "message": message,
                    "fault": fault,
                    "note": " ".join(notes) or None,
                }
            )
    passed = run["error"] is None and all(c["passed"] for c in cases)
    return {"run": run, "cases": cases, "passed": passed}


def check_code_json(code: str, checks_json: str, filename: str = "<exercise>") -> str:
    """:func:`check_code` with the checks as JSON text; the result as JSON.

    ``checks_json`` is a list of checks, or ``{"checks": [...], "names": [...]}`` (what
    the exercise's page sends: the checks and the starter's names).
    """
    spec = json.loads(checks_json)
    if isinstance(spec, dict):
        return json.dumps(check_code(code, spec["checks"], filename, spec.get("names")))
    return json.dumps(check_code(code, spec, filename))
