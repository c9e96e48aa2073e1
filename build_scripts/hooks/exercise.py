"""```exercise fences: auto-checked exercises.

An ```exercise fence holds YAML (see ``SCHEMA`` and README.md). Two kinds:

* ``kind: numeric``: ``setup`` is Python run here with NumPy and attention_labs; each
  ``answers[].value`` is an expression of it whose values the reader types in and the page
  checks within ``tolerance``. ``{{ expr:.3f }}`` in the title, prompt, hint or solution is
  replaced by that expression's value (hooks/numbers.py, which lesson prose uses too), so
  every number in the text is computed.
* ``kind: code``: the reader completes ``starter``; hidden ``checks`` (Python that raises on
  failure) run in Pyodide and see only the names the starter defines (``interface``). The
  build runs every check against ``solution`` (all must pass) and against ``starter`` (one
  must fail, none may crash on its own); ``solution`` is never written to the page.

Any problem fails the build with ``docs/<file>:<line>: what is wrong``.
"""

from __future__ import annotations

import html
import math

import jsonschema
import numpy as np
import yaml
from attention_labs import cells

from . import numbers
from .runtime import data_attribute, inert_text
from .scanner import Fence, FenceError, Page, find_fences

NAME = "exercise"
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


class ExerciseError(FenceError):
    """An exercise fence that cannot be built; the message starts with ``file:line:``."""


# ----------------------------------------------------------------------------
# exercises


def parse_exercise(body: str, where: str) -> dict:
    """The validated YAML of one ```exercise fence; FenceError naming ``where``."""
    try:
        spec = yaml.safe_load(body) if body.strip() else None
    except yaml.YAMLError as err:
        raise ExerciseError(f"{where}: exercise fence is not valid YAML: {err}") from None
    if not isinstance(spec, dict):
        raise ExerciseError(f"{where}: exercise fence must be YAML with kind, id, title, prompt")
    error = jsonschema.exceptions.best_match(
        jsonschema.Draft202012Validator(SCHEMA).iter_errors(spec)
    )
    if error is not None:
        at = ".".join(str(p) for p in error.absolute_path) or "the fence"
        raise ExerciseError(f"{where}: exercise {at}: {error.message}")
    return spec


def run_setup(spec: dict, where: str) -> dict:
    """The namespace of the exercise's ``setup`` (NumPy as np, attention_labs importable)."""
    namespace = {"np": np, "math": math, "__name__": "__exercise_setup__"}
    if "setup" in spec:
        try:
            exec(compile(spec["setup"], f"{where} setup", "exec"), namespace)
        except Exception as err:
            raise ExerciseError(
                f"{where}: exercise setup raised {type(err).__name__}: {err}"
            ) from None
    return namespace


def fill_template(text: str, namespace: dict, where: str) -> str:
    """Replace ``{{ expr }}`` / ``{{ expr:.3f }}`` with values computed from ``namespace``."""
    return numbers.fill(text, namespace, where, ExerciseError)


def numeric_answers(spec: dict, namespace: dict, where: str) -> list[dict]:
    """Each answer's reference values (flat, row-major) and shape, checked for sense."""
    out = []
    for a in spec["answers"]:
        what = f"{where}: exercise answer {a['name']!r}"
        try:
            v = np.asarray(eval(a["value"], namespace), dtype=np.float64)
        except Exception as err:
            raise ExerciseError(
                f"{what}: {a['value']!r} raised {type(err).__name__}: {err}"
            ) from None
        if v.ndim > 2 or v.size == 0 or v.size > 64:
            raise ExerciseError(
                f"{what}: must be a number, vector or matrix of 1-64 values, got {v.shape}"
            )
        if not np.all(np.isfinite(v)):
            raise ExerciseError(f"{what}: has NaN or inf values")
        shape = [1] * (2 - v.ndim) + list(v.shape)
        rows = [str(x) for x in a.get("rows", range(1, shape[0] + 1))]
        cols = [str(x) for x in a.get("cols", range(1, shape[1] + 1))]
        if len(rows) != shape[0] or len(cols) != shape[1]:
            raise ExerciseError(
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


def interface(spec: dict, where: str) -> list[str]:
    """The names of a code exercise's starter (its functions to complete): the only names
    of the reader's code its hidden checks see (cells.check_code's ``names``)."""
    try:
        names = cells.defined_names(spec["starter"])
    except SyntaxError as err:
        raise ExerciseError(f"{where}: exercise starter is not valid Python: {err}") from None
    if not names:
        raise ExerciseError(f"{where}: exercise starter defines no function for the checks")
    return names


def check_code_exercise(spec: dict, where: str) -> None:
    """The reference solution passes every hidden check, seeing only the starter's names;
    the starter does not pass, and no check fails on its own against it (a check must
    judge an unfinished answer, not crash on it)."""
    names = interface(spec, where)
    reference = cells.check_code(spec["solution"], spec["checks"], "<solution>", names)
    if not reference["passed"]:
        failed = reference["run"]["error"] or "; ".join(
            f"{c['name']}: {c['message']}" for c in reference["cases"] if not c["passed"]
        )
        raise ExerciseError(f"{where}: exercise solution fails its checks: {failed}")
    starter = cells.check_code(spec["starter"], spec["checks"], "<starter>", names)
    if starter["passed"]:
        raise ExerciseError(f"{where}: exercise starter already passes every check")
    broken = [c for c in starter["cases"] if c["fault"] == "check"]
    if broken:
        raise ExerciseError(
            f"{where}: exercise check {broken[0]['name']!r} fails on its own against the "
            f"starter: {broken[0]['message']}"
        )


def whole_numbers(answers: list[dict], tolerance: float) -> bool:
    """True when every reference value is an integer and the tolerance admits no other
    integer: the page then says the answers are whole numbers, not "within ±0.01"."""
    values = [v for a in answers for v in a["values"]]
    return tolerance <= 0.5 and all(v == round(v) for v in values)


def numeric_form(ex_id: str, answers: list[dict], tolerance: float) -> str:
    """Build-time HTML of a numeric exercise's inputs (one line per element, no blank
    lines, so Markdown keeps it as a raw block)."""
    e = html.escape
    lines = ['<form class="attn-exercise__form" novalidate>']
    for a in answers:
        lines.append(f'<fieldset class="attn-exercise__answer" data-answer="{e(a["name"])}">')
        lines.append(f"<legend>{inert_text(a['label'])}</legend>")
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
    if whole_numbers(answers, tolerance):
        note = "Every answer is a whole number."
    else:
        note = f"Answers within ±{tolerance:g} of the exact value count as right."
    lines.append(f'<p class="attn-exercise__tolerance">{note}</p>')
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


def render_exercise(spec: dict, where: str, indent: str, runtime: dict | None = None) -> str:
    """The Markdown (with raw HTML) that replaces one exercise fence; ``runtime``: the
    build's (hooks/runtime.py), for the page's Python."""
    namespace = run_setup(spec, where)
    ex_id = spec["id"]
    config = {"id": ex_id, "kind": spec["kind"], "runtime": runtime if runtime is not None else {}}
    if spec["kind"] == "numeric":
        answers = numeric_answers(spec, namespace, where)
        config.update(
            tolerance=spec["tolerance"],
            whole=whole_numbers(answers, spec["tolerance"]),
            answers=[{k: a[k] for k in ("name", "shape", "values")} for a in answers],
        )
        form = numeric_form(ex_id, answers, spec["tolerance"])
    else:
        check_code_exercise(spec, where)
        config.update(starter=spec["starter"], checks=spec["checks"], names=interface(spec, where))
        form = (
            '<div class="attn-exercise__code">'
            f'<pre class="attn-cell__static"><code>{inert_text(spec["starter"])}</code></pre>'
            "</div>"
        )
    title = inert_text(fill_template(spec["title"], namespace, where))
    lines = [
        f'<div class="attn-exercise" id="exercise-{ex_id}" data-kind="{spec["kind"]}" '
        f'role="group" aria-label="Exercise: {html.escape(spec["title"])}" '
        f'data-cell-config="{data_attribute(config)}" markdown="1">',
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


def render(fence: Fence, page: Page) -> str:
    where = page.where(fence)
    if fence.end is None:
        raise ExerciseError(f"{where}: exercise fence is never closed (add a line with ```)")
    spec = parse_exercise(fence.body, where)
    if spec["id"] in page.exercise_ids:
        raise ExerciseError(f"{where}: exercise id {spec['id']!r} is used twice on this page")
    page.exercise_ids[spec["id"]] = where
    return render_exercise(spec, where, fence.indent, page.build.runtime)


def all_exercises(docs):
    """Every exercise of the site: ``(where, spec)``; for tests."""
    for path in sorted(docs.rglob("*.md")):
        if "vendor" in path.parts:
            continue
        text = path.read_text(encoding="utf-8")
        for fence in find_fences(text, (NAME,)):
            where = f"docs/{path.relative_to(docs).as_posix()}:{fence.line_no}"
            yield where, parse_exercise(fence.body, where)
