"""Code cells and exercises in CPython: attention_labs.cells (what the browser's worker
runs) and build_scripts/hooks/ (pycell.py, exercise.py: the build-time checks). Every
exercise of the site is checked here: its reference solution passes its hidden checks, its
starter does not."""

from __future__ import annotations

import json

import numpy as np
import pytest
from attention_labs import cells
from helpers import ROOT

from build_scripts import hooks
from build_scripts.hooks import exercise, scanner

DOCS = ROOT / "docs"
EXERCISES = list(exercise.all_exercises(DOCS))


def run(code, namespace=None, name="<cell 1>"):
    return cells.run_cell(code, cells.new_namespace() if namespace is None else namespace, name)


# ----------------------------------------------------------------------------
# cells


def test_cell_shows_stdout_stderr_and_the_last_expression():
    out = run("import sys\nprint('hi', 2)\nprint('oops', file=sys.stderr)\n6 * 7")
    assert out["outputs"] == [
        {"type": "stream", "name": "stdout", "text": "hi 2\n"},
        {"type": "stream", "name": "stderr", "text": "oops\n"},
    ]
    assert out["value"] == "42" and out["error"] is None and not out["interrupted"]


def test_cells_share_one_namespace_in_the_order_they_run():
    ns = cells.new_namespace()
    assert run("x = 3", ns)["value"] is None
    assert run("x + 1", ns, "<cell 2>")["value"] == "4"


def test_an_error_is_a_traceback_of_the_readers_code_only():
    out = run("def f():\n    return 1 / 0\n\nf()", name="<cell 3>")
    assert out["error"].startswith("Traceback (most recent call last):")
    assert 'File "<cell 3>", line 4' in out["error"] and "return 1 / 0" in out["error"]
    assert out["error"].rstrip().endswith("ZeroDivisionError: division by zero")
    assert "cells.py" not in out["error"]  # no frames of the runner


def test_a_syntax_error_points_at_the_line():
    out = run("x = (1,\ny = 2")
    assert "SyntaxError" in out["error"] and "<cell 1>" in out["error"]


def test_keyboard_interrupt_is_reported_as_stopped():
    out = run("raise KeyboardInterrupt")
    assert out["interrupted"] and out["error"].startswith("KeyboardInterrupt")


def test_an_interrupt_after_the_readers_code_ended_still_reads_as_stopped(monkeypatch):
    # Stop sends the interrupt again while a cell runs; a late one lands outside exec.
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(cells, "run_cell", interrupted)
    out = json.loads(cells.run_cell_json("page", "x = 1", "<cell 1>"))
    assert out["interrupted"] and out["error"].startswith("KeyboardInterrupt")


def test_output_is_cut_when_a_cell_prints_without_end():
    out = run("for i in range(100000): print('line', i)")
    text = "".join(o["text"] for o in out["outputs"])
    assert len(text) < cells.MAX_OUTPUT_CHARS + 100
    assert text.rstrip().endswith(f"[output cut at {cells.MAX_OUTPUT_CHARS} characters]")


def test_output_is_streamed_to_emit_while_the_cell_runs(monkeypatch):
    monkeypatch.setattr(cells, "FLUSH_EVERY_S", 0.0)
    seen = []
    out = cells.run_cell("print('a')\nprint('b')", cells.new_namespace(), emit=seen.append)
    streamed = "".join(item["text"] for chunk in seen for item in json.loads(chunk))
    rest = "".join(item["text"] for item in out["outputs"])
    assert streamed + rest == "a\nb\n" and streamed


def test_show_heatmap_adds_a_heatmap_output():
    out = run(
        "import numpy as np\nfrom attention_labs import softmax\n"
        "show_heatmap(softmax(np.eye(3)), ['a', 'b', 'c'], title='t')"
    )
    (item,) = out["outputs"]
    assert item["type"] == "heatmap" and item["rows"] == item["cols"] == ["a", "b", "c"]
    np.testing.assert_allclose(np.sum(item["values"], axis=1), 1.0)
    assert item["title"] == "t"


@pytest.mark.parametrize(
    "args,message",
    [
        ("np.ones(3)", "2-D"),
        ("np.full((2, 2), 3.0)", "in [0, 1]"),
        ("np.ones((2, 2)) / 2, ['a']", "labels"),
        ("np.zeros((65, 65))", "at most 64"),
    ],
)
def test_show_heatmap_rejects_bad_input_with_a_message(args, message):
    out = run(f"import numpy as np\nshow_heatmap({args})")
    assert "ValueError: show_heatmap" in out["error"] and message in out["error"]


def test_interruptible_sleep_sleeps():
    cells.interruptible_sleep(0.06)
    with pytest.raises(ValueError):
        cells.interruptible_sleep(-1)


def test_forget_namespaces_keeps_only_the_current_page():
    cells.run_cell_json("/a#1", "x = 1", "<cell 1>")
    cells.run_cell_json("/b#2", "y = 2", "<cell 1>")
    cells.forget_namespaces("/b#2")
    assert set(cells.NAMESPACES) == {"/b#2"}
    assert json.loads(cells.run_cell_json("/b#2", "y", "<cell 2>"))["value"] == "2"


# ----------------------------------------------------------------------------
# code exercises


CHECKS = [
    {"name": "adds one", "code": "assert f(1) == 2, 'f(1) is wrong'"},
    {"name": "works on arrays", "code": "assert_close(f(np.zeros(2)), [1.0, 1.0], 'f(zeros)')"},
]


def test_check_code_reports_each_case_without_expected_values():
    good = cells.check_code("def f(x):\n    return x + 1", CHECKS)
    assert good["passed"] and [c["passed"] for c in good["cases"]] == [True, True]
    bad = cells.check_code("def f(x):\n    return x + 2", CHECKS)
    assert not bad["passed"]
    assert bad["cases"][0]["message"] == "f(1) is wrong"
    assert bad["cases"][1]["message"] == "f(zeros): 2 of 2 values are wrong (allowed error 0.0001)"
    assert [c["fault"] for c in bad["cases"]] == ["yours", "yours"]
    crash = cells.check_code("def f(x):\n    return x + None", CHECKS)
    assert crash["cases"][0]["message"].startswith("your code raised TypeError")
    assert (
        crash["cases"][0]["message"].endswith("(line 2)") and crash["cases"][0]["fault"] == "yours"
    )
    broken = cells.check_code("def f(x) return x", CHECKS)
    assert not broken["passed"] and "SyntaxError" in broken["run"]["error"]
    assert broken["cases"] == []


def test_a_checks_own_failure_is_the_checks_not_the_readers():
    """A check that calls a name nobody gave it fails as the check's fault; the reader's
    own exceptions, a missing function of the starter and wrong results are the reader's."""
    checks = [
        {"name": "uses a helper it never imported", "code": "assert softmax(f(1)) == 1"},
        {"name": "calls f", "code": "assert f(1) == 2, 'f(1) is wrong'"},
    ]
    # the reader imported softmax; the check must not see it (only the starter's names)
    code = "from math import floor as softmax\n\ndef f(x):\n    return x + 1"
    result = cells.check_code(code, checks, names=["f"])
    broken, fine = result["cases"]
    assert not result["passed"] and fine["passed"] and fine["fault"] is None
    assert broken["fault"] == "check" and "your code" not in broken["message"].split(";")[0]
    assert broken["message"].startswith("the check itself failed with NameError")
    assert "your code raised nothing" in broken["message"]
    # the reader's own exception inside a check: the reader's, with its line
    raising = cells.check_code("def f(x):\n    assert x > 5, 'too small'", checks[1:], names=["f"])
    (case,) = raising["cases"]
    assert case["fault"] == "yours"
    assert case["message"] == "your code raised AssertionError: too small (line 2)"
    # the reader renamed the starter's function
    renamed = cells.check_code("def g(x):\n    return x + 1", checks[1:], names=["f"])
    assert renamed["cases"][0]["fault"] == "yours"
    assert "your code does not define f" in renamed["cases"][0]["message"]


def test_checks_see_only_the_starters_names_and_can_leave_a_note():
    checks = [
        {"name": "sees f only", "code": "assert 'helper' not in globals()\nnote('a remark')"},
        {"name": "f still uses its helper", "code": "assert f(2) == 6"},
    ]
    code = "def helper(x):\n    return 3 * x\n\ndef f(x):\n    return helper(x)"
    result = cells.check_code(code, checks, names=cells.defined_names("def f(x): pass"))
    assert result["passed"], result["cases"]
    assert [c["note"] for c in result["cases"]] == ["a remark", None]
    assert json.loads(cells.check_code_json(code, json.dumps({"checks": checks, "names": ["f"]})))[
        "passed"
    ]


def test_defined_names_are_the_starters_definitions_not_its_imports():
    starter = (
        "import numpy as np\nfrom attention_labs import softmax\n\nBASE = 10\n"
        "a, (b, *c) = 1, (2, 3)\nd: int = 4\n\ndef f(x):\n    pass\n\nclass K:\n    pass\n"
    )
    assert cells.defined_names(starter) == ["BASE", "a", "b", "c", "d", "f", "K"]


def test_assert_close_accepts_float32_answers_and_rejects_a_small_mistake():
    rng = np.random.default_rng(0)
    X, W_Q, W_K = rng.normal(size=(8, 16)), rng.normal(size=(16, 4)), rng.normal(size=(16, 4))
    exact = (X @ W_Q) @ (X @ W_K).T
    f32 = [a.astype(np.float32) for a in (X, W_Q, W_K)]
    cells.assert_close((f32[0] @ f32[1]) @ (f32[0] @ f32[2]).T, exact)
    # an element that is a difference of large terms may be off by far more than 1e-7 of
    # itself: the error is measured against the array's largest value
    cells.assert_close([1e3 + 2e-5, 3e-6], [1e3, 0.0])
    with pytest.raises(AssertionError, match="1 of 2 values are wrong"):
        cells.assert_close([1.0, 0.5 * 1.01], [1.0, 0.5])  # a 1% mistake
    with pytest.raises(AssertionError, match="contains NaN"):
        cells.assert_close([np.nan], [1.0])
    cells.assert_close([0.0, -np.inf], [0.0, -np.inf])  # inf where inf is expected
    with pytest.raises(AssertionError, match="values are wrong"):
        cells.assert_close([0.0, 1.0], [0.0, -np.inf])
    with pytest.raises(AssertionError, match="values are wrong"):
        cells.assert_close([1e-5], [0.0])  # all-zero expected: atol alone


def test_site_has_numeric_and_code_exercises():
    kinds = {spec["kind"] for _, spec in EXERCISES}
    assert kinds == {"numeric", "code"}


@pytest.mark.parametrize("where,spec", EXERCISES, ids=[w for w, _ in EXERCISES])
def test_every_exercise_is_sound(where, spec):
    """Numeric: answers computable and finite. Code: the reference solution passes every
    hidden check and the starter fails one (the hook raises naming file:line)."""
    html = exercise.render_exercise(spec, where, "")
    assert spec["id"] in html
    if spec["kind"] == "code":
        assert spec["solution"].strip().splitlines()[-1] not in html  # never shipped
        names = exercise.interface(spec, where)
        result = cells.check_code(spec["solution"], spec["checks"], names=names)
        assert result["passed"], result


def test_no_two_exercises_of_the_site_share_an_id_or_a_title():
    """Ids key a reader's progress and titles name the exercise: one of each per exercise,
    site-wide (the build refuses a repeated id on one page; this covers pages apart)."""
    ids = [spec["id"] for _, spec in EXERCISES]
    titles = [spec["title"] for _, spec in EXERCISES]
    assert len(set(ids)) == len(ids), sorted(i for i in ids if ids.count(i) > 1)
    assert len(set(titles)) == len(titles), sorted(t for t in titles if titles.count(t) > 1)


def test_attention_by_hand_reference_is_labs_py_attention():
    from attention_labs import scaled_dot_product_attention

    ((where, spec),) = [(w, s) for w, s in EXERCISES if s["id"] == "attention-by-hand"]
    ns = exercise.run_setup(spec, where)
    answers = {a["name"]: a for a in exercise.numeric_answers(spec, ns, where)}
    # scores and weights only: the values (O = AV) come in lesson 5 (issue 25)
    V = np.zeros_like(ns["Q"])
    _, weights = scaled_dot_product_attention(ns["Q"], ns["K"], V)
    np.testing.assert_allclose(answers["weights"]["values"], weights.ravel())
    assert set(answers) == {"scores", "weights"}
    np.testing.assert_allclose(np.sum(weights, axis=1), 1.0)


def test_every_pycell_of_every_page_runs_in_order_in_cpython():
    for path in sorted(DOCS.rglob("*.md")):
        ns = cells.new_namespace()
        found = scanner.find_fences(path.read_text(), ("pycell", "exercise"))
        for n, fence in enumerate(found, 1):
            if fence.info == "pycell":
                out = cells.run_cell(fence.body, ns, f"<cell {n}>")
                assert out["error"] is None, f"{path.name}:{fence.line_no}: {out['error']}"


# ----------------------------------------------------------------------------
# build-time errors name file and line


def page(*fence):
    lines = ["# Page", "", "Text.", "", *fence, ""]
    return "\n".join(lines), 5  # the fence opens on line 5


CODE_EXERCISE = [
    "```exercise",
    "kind: code",
    "id: add-one",
    "title: Add one",
    "prompt: Write f.",
    "starter: |",
    "  def f(x):",
    "      return x",
    "solution: |",
    "  def f(x):",
    "      return x + 1",
    "checks:",
    "  - name: adds one",
    "    code: assert f(1) == 2",
    "```",
]


def render(text):
    """The page's pycell and exercise fences replaced (the hook's one pass)."""
    return hooks.render_page(text, "lessons/99-x.md", kinds=("pycell", "exercise"))


def test_a_good_code_exercise_renders_without_its_solution():
    text, _ = page(*CODE_EXERCISE)
    html = render(text)
    assert 'class="attn-exercise"' in html and "x + 1" not in html


@pytest.mark.parametrize(
    "change,message",
    [
        (
            ("      return x + 1", "      return x + 2"),
            "exercise solution fails its checks: adds one",
        ),
        (("      return x", "      return x + 1"), "exercise starter already passes every check"),
        (("id: add-one", "id: Add One"), "exercise id: 'Add One' does not match"),
        (("kind: code", "kind: essay"), "exercise kind: 'essay' is not one of"),
        (
            ("    code: assert f(1) == 2", "    code: assert helper(f(1)) == 2"),
            "the check itself failed with NameError",
        ),
        (("title: Add one", "tittle: Add one"), "exercise"),
    ],
)
def test_a_broken_exercise_fails_with_file_and_line(change, message):
    old, new = change
    fence = list(CODE_EXERCISE)
    fence[len(fence) - 1 - fence[::-1].index(old)] = new
    text, line = page(*fence)
    with pytest.raises(scanner.FenceError) as err:
        render(text)
    assert str(err.value).startswith(f"docs/lessons/99-x.md:{line}: "), err.value
    assert message in str(err.value)


def test_a_numeric_answer_that_is_nan_fails_the_build():
    text, line = page(
        "```exercise",
        "kind: numeric",
        "id: bad",
        "title: Bad",
        "prompt: Compute.",
        "setup: x = float('nan')",
        "answers: [{name: x, label: x, value: x}]",
        "tolerance: 0.1",
        "solution: none",
        "```",
    )
    with pytest.raises(scanner.FenceError, match=rf"99-x.md:{line}: .*NaN or inf"):
        render(text)


def test_numbers_in_exercise_text_are_computed():
    text, _ = page(
        "```exercise",
        "kind: numeric",
        "id: half",
        "title: Half of {{ x:g }}",
        "prompt: 'Halve {{ x:g }}; the answer is near {{ x / 2:.2f }}.'",
        "setup: x = 3.0",
        "answers: [{name: h, label: half, value: x / 2}]",
        "tolerance: 0.01",
        "solution: 'It is {{ x / 2:.3f }}.'",
        "```",
    )
    html = render(text)
    assert "Halve 3; the answer is near 1.50." in html and "It is 1.500." in html
    assert "Half&#32;of" not in html and "Half of 3" in html


def test_a_pycell_with_a_syntax_error_names_its_file_line():
    text, line = page("```pycell", "x = 1", "y = (2,", "```")
    with pytest.raises(scanner.FenceError, match=rf"99-x.md:{line + 2}: pycell has a syntax"):
        render(text)


def test_pycells_are_numbered_and_keep_their_code():
    text, _ = page("```pycell", "a = '<b>&'", "```", "", "```pycell", "a", "```")
    html = render(text)
    assert 'aria-label="Python cell 1"' in html and 'aria-label="Python cell 2"' in html
    assert "<b>" not in html  # code is text, never HTML


@pytest.mark.parametrize(
    ("value", "tolerance", "note"),
    [
        ("3.0", "0.01", "Every answer is a whole number."),
        ("1024.0", "0.5", "Every answer is a whole number."),
        ("1.5", "0.01", "Answers within ±0.01 of the exact value count as right."),
        ("3.0", "1", "Answers within ±1 of the exact value count as right."),
    ],
)
def test_whole_number_answers_are_said_to_be_whole_not_within_a_tolerance(value, tolerance, note):
    text, _ = page(
        "```exercise",
        "kind: numeric",
        "id: whole",
        "title: Whole",
        "prompt: Count.",
        f"setup: x = {value}",
        "answers: [{name: x, label: x, value: x}]",
        f"tolerance: {tolerance}",
        "solution: none",
        "```",
    )
    html = render(text)
    assert f'<p class="attn-exercise__tolerance">{note}</p>' in html
    assert ("&quot;whole&quot;:true" in html) == note.startswith("Every")
