"""MkDocs hook: ```pycell fences become editable Python cells, ```exercise fences become
auto-checked exercises. Runs after build_scripts/lab_fences.py.

A ```pycell fence holds plain Python. The build checks that it compiles and emits a
``<div class="attn-cell">`` with the code (shown as-is until the editor loads); cells on a
page share one namespace in the browser, in the order the reader runs them.

An ```exercise fence holds YAML (see ``SCHEMA`` and README.md). Two kinds:

* ``kind: numeric``: ``setup`` is Python run here with NumPy and attention_labs; each
  ``answers[].value`` is an expression of it whose values the reader types in and the page
  checks within ``tolerance``. ``{{ expr:.3f }}`` in the prompt, hint or solution is
  replaced by that expression's value, so every number in the text is computed.
* ``kind: code``: the reader completes ``starter``; hidden ``checks`` (Python that raises on
  failure) run in Pyodide. The build runs every check against ``solution`` (all must pass)
  and against ``starter`` (one must fail); ``solution`` is never written to the page.

Any problem fails the build with ``docs/<file>:<line>: what is wrong``.
"""

from __future__ import annotations

import html
import json
import math
import re
import sys
from pathlib import Path

import jsonschema
import numpy as np
import yaml
from attention_labs import cells

sys.path.insert(0, str(Path(__file__).resolve().parent))
import lab_fences  # noqa: E402  (same folder; MkDocs loads hooks by path)

NAMES = ("pycell", "exercise")
TEXT = {"type": "string", "minLength": 1}
_COMMON = {
    "id": {"type": "string", "pattern": "^[a-z0-9][a-z0-9-]*$"},
    "title": TEXT,
    "prompt": TEXT,
    "setup": TEXT,
    "hint": TEXT,
}
SCHEMA = {
    "type": "object",
    "required": ["kind", "id", "title", "prompt"],
    "properties": {"kind": {"enum": ["numeric", "code"]}},
    "allOf": [
        {
            "if": {"properties": {"kind": {"const": "numeric"}}},
            "then": {
                "required": ["setup", "answers", "tolerance", "solution"],
                "additionalProperties": False,
                "properties": {
                    **_COMMON,
                    "kind": {},
                    "tolerance": {"type": "number", "exclusiveMinimum": 0},
                    "solution": TEXT,
                    "answers": {
                        "type": "array",
                        "minItems": 1,
                        "items": {
                            "type": "object",
                            "required": ["name", "label", "value"],
                            "additionalProperties": False,
                            "properties": {
                                "name": {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$"},
                                "label": TEXT,
                                "value": TEXT,
                                "rows": {"type": "array", "items": {"type": ["string", "number"]}},
                                "cols": {"type": "array", "items": {"type": ["string", "number"]}},
                            },
                        },
                    },
                },
            },
        },
        {
            "if": {"properties": {"kind": {"const": "code"}}},
            "then": {
                "required": ["starter", "solution", "checks"],
                "additionalProperties": False,
                "properties": {
                    **_COMMON,
                    "kind": {},
                    "starter": TEXT,
                    "solution": TEXT,
                    "checks": {
                        "type": "array",
                        "minItems": 1,
                        "items": {
                            "type": "object",
                            "required": ["name", "code"],
                            "additionalProperties": False,
                            "properties": {"name": TEXT, "code": TEXT},
                        },
                    },
                },
            },
        },
    ],
}
TEMPLATE = re.compile(r"\{\{\s*(.+?)(?::([<>^+\- #0-9,._]*[bcdeEfFgGn%]))?\s*\}\}")


class FenceError(lab_fences.LabFenceError):
    """A cell or exercise fence that cannot be built; the message starts with ``file:line:``."""


# ----------------------------------------------------------------------------
# exercises


def parse_exercise(body: str, where: str) -> dict:
    """The validated YAML of one ```exercise fence; FenceError naming ``where``."""
    try:
        spec = yaml.safe_load(body) if body.strip() else None
    except yaml.YAMLError as err:
        raise FenceError(f"{where}: exercise fence is not valid YAML: {err}") from None
    if not isinstance(spec, dict):
        raise FenceError(f"{where}: exercise fence must be YAML with kind, id, title, prompt")
    error = jsonschema.exceptions.best_match(
        jsonschema.Draft202012Validator(SCHEMA).iter_errors(spec)
    )
    if error is not None:
        at = ".".join(str(p) for p in error.absolute_path) or "the fence"
        raise FenceError(f"{where}: exercise {at}: {error.message}")
    return spec


def run_setup(spec: dict, where: str) -> dict:
    """The namespace of the exercise's ``setup`` (NumPy as np, attention_labs importable)."""
    namespace = {"np": np, "math": math, "__name__": "__exercise_setup__"}
    if "setup" in spec:
        try:
            exec(compile(spec["setup"], f"{where} setup", "exec"), namespace)
        except Exception as err:
            raise FenceError(
                f"{where}: exercise setup raised {type(err).__name__}: {err}"
            ) from None
    return namespace


def fill_template(text: str, namespace: dict, where: str) -> str:
    """Replace ``{{ expr }}`` / ``{{ expr:.3f }}`` with values computed from ``namespace``."""

    def value(m: re.Match) -> str:
        try:
            v = eval(m[1], namespace)  # the lesson author's expression, at build time
            return format(v, m[2] or "")
        except Exception as err:
            raise FenceError(
                f"{where}: cannot fill {m[0]!r}: {type(err).__name__}: {err}"
            ) from None

    return TEMPLATE.sub(value, text)


def numeric_answers(spec: dict, namespace: dict, where: str) -> list[dict]:
    """Each answer's reference values (flat, row-major) and shape, checked for sense."""
    out = []
    for a in spec["answers"]:
        what = f"{where}: exercise answer {a['name']!r}"
        try:
            v = np.asarray(eval(a["value"], namespace), dtype=np.float64)
        except Exception as err:
            raise FenceError(f"{what}: {a['value']!r} raised {type(err).__name__}: {err}") from None
        if v.ndim > 2 or v.size == 0 or v.size > 64:
            raise FenceError(
                f"{what}: must be a number, vector or matrix of 1-64 values, got {v.shape}"
            )
        if not np.all(np.isfinite(v)):
            raise FenceError(f"{what}: has NaN or inf values")
        shape = [1] * (2 - v.ndim) + list(v.shape)
        rows = [str(x) for x in a.get("rows", range(1, shape[0] + 1))]
        cols = [str(x) for x in a.get("cols", range(1, shape[1] + 1))]
        if len(rows) != shape[0] or len(cols) != shape[1]:
            raise FenceError(
                f"{what}: {len(rows)} rows / {len(cols)} cols labels for shape {v.shape}"
            )
        out.append(
            {
                "name": a["name"],
                "label": a["label"],
                "shape": shape,
                "rows": rows,
                "cols": cols,
                "values": [float(x) for x in v.ravel()],
            }
        )
    return out


def check_code_exercise(spec: dict, where: str) -> None:
    """The reference solution passes every hidden check; the starter does not."""
    reference = cells.check_code(spec["solution"], spec["checks"], "<solution>")
    if not reference["passed"]:
        failed = reference["run"]["error"] or "; ".join(
            f"{c['name']}: {c['message']}" for c in reference["cases"] if not c["passed"]
        )
        raise FenceError(f"{where}: exercise solution fails its checks: {failed}")
    starter = cells.check_code(spec["starter"], spec["checks"], "<starter>")
    if starter["passed"]:
        raise FenceError(f"{where}: exercise starter already passes every check")


def _inert_text(text: str) -> str:
    """HTML text that Markdown and arithmatex leave alone: all but letters, digits and
    spaces as character references (newlines too, so the block stays one line)."""
    return "".join(c if c.isalnum() and c.isascii() or c == " " else f"&#{ord(c)};" for c in text)


def _data(payload: dict) -> str:
    data = lab_fences._inert_json(json.dumps(payload, separators=(",", ":"), allow_nan=False))
    return html.escape(data, quote=True)


def numeric_form(ex_id: str, answers: list[dict], tolerance: float) -> str:
    """Build-time HTML of a numeric exercise's inputs (one line per element, no blank
    lines, so Markdown keeps it as a raw block)."""
    e = html.escape
    lines = ['<form class="attn-exercise__form" novalidate>']
    for a in answers:
        lines.append(f'<fieldset class="attn-exercise__answer" data-answer="{e(a["name"])}">')
        lines.append(f"<legend>{_inert_text(a['label'])}</legend>")
        lines.append('<div class="attn-exercise__grid-scroll">')
        lines.append('<table class="attn-exercise__grid">')
        if a["shape"][1] > 1 or len(a["cols"]) > 1:
            heads = "".join(f'<th scope="col">{e(c)}</th>' for c in a["cols"])
            lines.append(f"<thead><tr><td></td>{heads}</tr></thead>")
        lines.append("<tbody>")
        for i, r in enumerate(a["rows"]):
            cells_html = "".join(
                f'<td><input type="text" inputmode="decimal" autocomplete="off" '
                f'name="{e(a["name"])}-{i}-{j}" '
                f'aria-label="{e(a["name"])}, row {e(r)}, column {e(c)}"></td>'
                for j, c in enumerate(a["cols"])
            )
            lines.append(f'<tr><th scope="row">{e(r)}</th>{cells_html}</tr>')
        lines.append("</tbody></table></div></fieldset>")
    lines.append(
        f'<p class="attn-exercise__tolerance">Answers within ±{tolerance:g} of the exact '
        "value count as right.</p>"
    )
    lines.append('<div class="attn-exercise__actions">')
    check = "md-button attn-cell__button attn-exercise__check"
    lines.append(f'<button type="submit" class="{check}">Check</button>')
    lines.append("</div>")
    lines.append('<p class="attn-exercise__result" role="status" aria-live="polite"></p>')
    lines.append("</form>")
    return "\n".join(lines)


def _details(kind: str, title: str, text: str) -> list[str]:
    body = ["    " + line if line.strip() else "" for line in text.rstrip().split("\n")]
    return [f'??? {kind} "{title}"', "", *body, ""]


def render_exercise(spec: dict, where: str, indent: str) -> str:
    """The Markdown (with raw HTML) that replaces one exercise fence."""
    namespace = run_setup(spec, where)
    ex_id = spec["id"]
    config = {"id": ex_id, "kind": spec["kind"], "runtime": lab_fences.RUNTIME}
    if spec["kind"] == "numeric":
        answers = numeric_answers(spec, namespace, where)
        config.update(
            tolerance=spec["tolerance"],
            answers=[{k: a[k] for k in ("name", "shape", "values")} for a in answers],
        )
        form = numeric_form(ex_id, answers, spec["tolerance"])
    else:
        check_code_exercise(spec, where)
        config.update(starter=spec["starter"], checks=spec["checks"])
        form = (
            '<div class="attn-exercise__code">'
            f'<pre class="attn-cell__static"><code>{_inert_text(spec["starter"])}</code></pre>'
            "</div>"
        )
    title = _inert_text(fill_template(spec["title"], namespace, where))
    lines = [
        f'<div class="attn-exercise" id="exercise-{ex_id}" data-kind="{spec["kind"]}" '
        f'role="group" aria-label="Exercise: {html.escape(spec["title"])}" '
        f'data-cell-config="{_data(config)}" markdown="1">',
        f'<p class="attn-exercise__title"><span class="attn-exercise__badge" hidden>Solved</span>'
        f"<strong>Exercise:</strong> {title}</p>",
        "",
        fill_template(spec["prompt"], namespace, where).rstrip(),
        "",
        form,
        "",
    ]
    if "hint" in spec:
        lines += _details("tip", "Hint", fill_template(spec["hint"], namespace, where))
    if spec["kind"] == "numeric":
        lines += _details(
            "example", "Worked solution", fill_template(spec["solution"], namespace, where)
        )
    lines += ["</div>"]
    return "\n".join(indent + line if line else "" for line in lines)


# ----------------------------------------------------------------------------
# cells


def render_cell(code: str, n: int, src_path: str, line_no: int, indent: str) -> str:
    """The placeholder of cell ``n`` (1-based on its page); FenceError on a syntax error,
    naming the file line of the error (the fence opens at ``line_no``)."""
    try:
        compile(code, f"<cell {n}>", "exec")
    except SyntaxError as err:
        at = line_no + (err.lineno or 1)
        raise FenceError(f"docs/{src_path}:{at}: pycell has a syntax error: {err.msg}") from None
    config = {"n": n, "code": code, "runtime": lab_fences.RUNTIME}
    return indent + (
        f'<div class="attn-cell" role="group" aria-label="Python cell {n}" '
        f'data-cell-config="{_data(config)}"><pre class="attn-cell__static"><code>'
        f"{_inert_text(code)}</code></pre></div>"
    )


def fences(markdown: str):
    """``(start, end, indent, body, line_no, kind)`` for each pycell/exercise fence."""
    lines = markdown.split("\n")
    for start, end, indent, body, line_no in lab_fences.find_lab_fences(markdown, NAMES):
        kind = lab_fences.FENCE_OPEN.match(lines[start])["info"]
        yield start, end, indent, body, line_no, kind


def render_cell_fences(markdown: str, src_path: str, source: str | None = None) -> str:
    """Replace every pycell and exercise fence of one page; FenceError on the first bad one.

    ``source``: the page's whole file, for line numbers (lab fences before these were
    already replaced in ``markdown``, and MkDocs cut the front matter)."""
    found = list(fences(markdown))
    at_source = [f[4] for f in fences(source)] if source is not None else []
    if len(at_source) != len(found):
        at_source = [f[4] for f in found]
    lines = markdown.split("\n")
    n_cells = sum(1 for f in found if f[5] == "pycell")
    ids = {}
    for (start, end, indent, body, _, kind), line_no in reversed(
        list(zip(found, at_source, strict=True))
    ):
        where = f"docs/{src_path}:{line_no}"
        if end is None:
            raise FenceError(f"{where}: {kind} fence is never closed (add a line with ```)")
        if kind == "pycell":
            html_ = render_cell(body, n_cells, src_path, line_no, indent)
            n_cells -= 1
        else:
            spec = parse_exercise(body, where)
            if spec["id"] in ids:
                raise FenceError(f"{where}: exercise id {spec['id']!r} is used twice on this page")
            ids[spec["id"]] = where
            html_ = render_exercise(spec, where, indent)
        lines[start:end] = ["", html_, ""]
    return "\n".join(lines)


def all_exercises(docs: Path):
    """Every exercise of the site: ``(where, spec)``; for tests."""
    for path in sorted(docs.rglob("*.md")):
        if "vendor" in path.parts:
            continue
        text = path.read_text(encoding="utf-8")
        for _, _, _, body, line_no, kind in fences(text):
            if kind == "exercise":
                where = f"docs/{path.relative_to(docs).as_posix()}:{line_no}"
                yield where, parse_exercise(body, where)


# --- MkDocs events -------------------------------------------------------------------


def on_config(config):
    return lab_fences.on_config(config)  # fills lab_fences.RUNTIME for our placeholders


def on_page_markdown(markdown, page, config, files):
    try:
        source = page.file.content_string
    except (OSError, ValueError):
        source = None
    return render_cell_fences(markdown, page.file.src_uri, source)
