"""docs/code-it-yourself.md: its numbers, its cells, its two code exercises and its companion
notebook, in CPython.

The page's numbers are ``{{ expr }}`` from its ```numbers fence; claims are looked up
verbatim in the page as the build renders it. The cells run in order and every comparison
they print with a lab says True. Each exercise's reference solution passes every hidden
check, and each typical mistake fails the check of its step with the message that names
the mistake (and the checks of the steps before it still pass). The notebook runs with and
without PyTorch."""

from __future__ import annotations

import contextlib
import io
import re
import sys

import jupytext
import numpy as np
import pytest
import yaml
from attention_labs import cells
from attention_labs.labs import run_lab, value_update
from helpers import ROOT
from mkdocs.utils import meta

from build_scripts import hooks
from build_scripts.hooks import exercise, lessons, scanner

PAGE = ROOT / "docs" / "code-it-yourself.md"
NOTEBOOK = ROOT / "docs" / "notebooks" / "code-it-yourself.py"
SOURCE = PAGE.read_text(encoding="utf-8")
RENDERED = hooks.render_page(meta.get_data(SOURCE)[0], "code-it-yourself.md", kinds=())
TEXT = re.sub(r"\s+", " ", RENDERED)
SPECS = {
    spec["id"]: spec
    for spec in (yaml.safe_load(f.body) for f in scanner.find_fences(SOURCE, ("exercise",)))
}


def claim(phrase):
    phrase = re.sub(r"\s+", " ", phrase)
    assert phrase in TEXT, f"the page no longer says: {phrase!r}"


def page_cells() -> list[str]:
    return [f.body for f in scanner.find_fences(SOURCE, ("pycell",))]


@pytest.fixture(scope="module")
def cell_runs():
    ns = cells.new_namespace()
    runs = [cells.run_cell(code, ns, f"<cell {n}>") for n, code in enumerate(page_cells(), 1)]
    return runs, ns


def printed(run) -> str:
    return "".join(o["text"] for o in run["outputs"] if o["type"] == "stream")


# ----------------------------------------------------------------------------
# the nav and the notebook's place in it


def test_nav_is_home_lessons_code_it_yourself_explorer():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    assert {"Code it yourself": "code-it-yourself.md"} in config["nav"]
    docs = ROOT / "docs"
    nav = lessons.derive_nav(config["nav"], lessons.discover(docs), lessons.notebook_names(docs))
    names = [next(iter(item)) for item in nav]
    assert names[:4] == ["Home", "Lessons", "Code it yourself", "Explorer"]
    assert names[4] == "Notebooks"
    notebooks = nav[4]["Notebooks"]
    assert {"Code it yourself": "notebooks/code-it-yourself.py"} in notebooks
    assert list(notebooks[0].values())[0] == "notebooks/01-why-attention.py"  # lessons first


def test_a_numberless_notebook_is_titled_by_all_its_words():
    assert lessons.title_from("code-it-yourself") == "Code it yourself"
    assert lessons.title_from("04-multi-head-attention") == "Multi head attention"


def test_the_page_links_its_notebook_and_says_torch_is_not_in_the_browser():
    assert SOURCE.count("(notebooks/code-it-yourself.py)") == 2
    claim("PyTorch does not run in the browser")
    claim("without PyTorch installed it says so and skips those cells")


# ----------------------------------------------------------------------------
# numbers and claims


def test_numbers_are_computed_not_typed():
    prose = scanner.outside_fences(SOURCE)
    prose = re.sub(r"`[^`]*`", "", "\n".join(prose))  # inline code is code, not prose
    for typed in ("2.28", "1.14", "4.24", "1.70", "1e-12", "(8, 4)", "(8, 16)", "64", "creature"):
        assert typed not in prose, f"{typed} is typed in the prose: compute it in the numbers fence"


def test_the_inputs_are_lesson_5s_and_lesson_6s_labs():
    lab = run_lab("value_update")["result"]
    claim(f"*{' '.join(lab['tokens'])}*")
    claim(f"`d_model` = {lab['d_model']} numbers per token")
    claim(f"`d_head` = {lab['d_head']} numbers")
    ns = cells.new_namespace()
    assert cells.run_cell(page_cells()[0], ns)["error"] is None
    assert ns["tokens"] == lab["tokens"] and ns["d_head"] == lab["d_head"]
    assert ns["params"] == run_lab("value_update")["params"]  # the lab's default view
    claim("**random** (synthetic: no model was trained)")
    six = ["The", "fluffy", "blue", "creature", "roamed", "away"]
    r = run_lab("eight_heads", {"tokens": six})["result"]
    claim(f"`d_model` = {r['d_model']}, {r['n_heads']} heads of {r['d_head']}")
    claim("were **built by hand**")
    claim("(6, 64) → (6, 8, 8) → (8, 6, 8)")


def test_default_view_numbers():
    lab = run_lab("value_update")["result"]
    X = value_update.embeddings(lab["tokens"], 0)
    W = value_update.weights(lab["d_head"], 0)
    scores = (X @ W["W_Q"]) @ (X @ W["W_K"]).T
    claim(f"standard deviation of {scores.std():.2f}, and {(scores / 2).std():.2f} after the scale")
    top = lab["tokens"][int(np.argmax(lab["row"]))]
    claim(f"query 3, *creature*, puts its largest weight on *{top}*")
    claim(
        f"its length is {np.linalg.norm(lab['delta']):.2f}, against "
        f"{np.linalg.norm(lab['x']):.2f} for the embedding"
    )
    assert np.linalg.norm(lab["delta"]) < np.linalg.norm(lab["x"])  # "a nudge"


# ----------------------------------------------------------------------------
# the cells


def test_cells_run_in_order_and_every_comparison_is_true(cell_runs):
    runs, _ = cell_runs
    assert [r["error"] for r in runs] == [None] * len(runs)
    lines = [line for r in runs for line in printed(r).splitlines()]
    checks = [line for line in lines if line.endswith((": True", ": False"))]
    assert len(checks) >= 15 and all(line.endswith(": True") for line in checks), checks
    for said in (
        "equal to lesson 5's pattern: True",
        "equal to lesson 4's causal attention: True",
        "query 3's update equals lesson 5's: True",
        "equal to lesson 6's eight heads: True",
        "query 3's output equals lesson 6's: True",
        "the heads' updates add up to the output: True",
    ):
        assert said in lines


def test_cells_print_the_shapes_of_every_step(cell_runs):
    runs, _ = cell_runs
    text = "".join(printed(r) for r in runs)
    assert "X: (8, 16)  W_Q, W_K, W_V: (16, 4)  W_O: (4, 16)" in text
    assert "Q: (8, 4)  K: (8, 4)  V: (8, 4)" in text
    assert "Q: (6, 64)\nreshape: (6, 8, 8)\ntranspose: (8, 6, 8)" in text
    assert "as lesson 6's head split lab lists: [[6, 64], [6, 8, 8], [8, 6, 8]]" in text
    assert "weights: (8, 6, 6)  heads: (8, 6, 8)" in text


def test_the_cells_heatmaps_are_the_weights(cell_runs):
    runs, ns = cell_runs
    maps = [o for r in runs for o in r["outputs"] if o["type"] == "heatmap"]
    assert [m["title"] for m in maps] == [
        "The head's weights, no mask",
        "The same head with the causal mask",
        "Head 0 of the layer: previous token",
    ]
    np.testing.assert_allclose(maps[0]["values"], run_lab("value_update")["result"]["pattern"])
    assert np.all(np.triu(np.array(maps[1]["values"]), 1) == 0)


# ----------------------------------------------------------------------------
# the exercises: the reference passes, typical mistakes fail the right step


def check(spec, code) -> dict:
    with np.errstate(all="ignore"):  # a mistake may overflow on purpose
        result = cells.check_code(code, spec["checks"], names=exercise.interface(spec, "page"))
    assert result["run"]["error"] is None, result["run"]["error"]
    return {c["name"]: c for c in result["cases"]}


def mutate(code, old, new):
    assert old in code, old
    return code.replace(old, new)


@pytest.mark.parametrize("ex_id", ["head-steps", "multi-head-steps"])
def test_reference_solution_passes_every_check_and_the_starter_does_not(ex_id):
    spec = SPECS[ex_id]
    exercise.check_code_exercise(spec, ex_id)  # what the build runs
    assert all(c["passed"] for c in check(spec, spec["solution"]).values())
    starter = check(spec, spec["starter"])
    assert not any(c["passed"] for c in starter.values())
    assert all("is still None" in c["message"] for c in starter.values())


HEAD_MISTAKES = [
    ("scores = Q @ K.T", "scores = K @ Q.T", "step 2", "transposed: your scores are [key, query]"),
    (
        "logits = scores / np.sqrt(Q.shape[-1])",
        "logits = scores",
        "step 3",
        "not scaled: your logits equal your scores",
    ),
    (
        "logits = scores / np.sqrt(Q.shape[-1])",
        "logits = scores / np.sqrt(X.shape[-1])",
        "step 3",
        "divided by sqrt(d_model)",
    ),
    (
        "logits = scores / np.sqrt(Q.shape[-1])",
        "logits = scores / Q.shape[-1]",
        "step 3",
        "divided by d_head",
    ),
    (
        "e = np.exp(logits - logits.max(axis=-1, keepdims=True))\n"
        "    weights = e / e.sum(axis=-1, keepdims=True)",
        "e = np.exp(logits - logits.max(axis=0, keepdims=True))\n"
        "    weights = e / e.sum(axis=0, keepdims=True)",
        "step 5",
        "your columns sum to 1, not your rows",
    ),
    (
        "weights = e / e.sum(axis=-1, keepdims=True)",
        "weights = e / e.sum()",
        "step 5",
        "your weights' rows do not sum to 1",
    ),
    (
        "logits = np.where(np.tril(np.ones(logits.shape, dtype=bool)), logits, -np.inf)",
        "logits = np.where(np.triu(np.ones(logits.shape, dtype=bool)), logits, -np.inf)",
        "step 4",
        "your mask hides the past",
    ),
    (
        "logits = np.where(np.tril(np.ones(logits.shape, dtype=bool)), logits, -np.inf)\n"
        "    e = np.exp(logits - logits.max(axis=-1, keepdims=True))\n"
        "    weights = e / e.sum(axis=-1, keepdims=True)",
        "pass\n"
        "    e = np.exp(logits - logits.max(axis=-1, keepdims=True))\n"
        "    weights = e / e.sum(axis=-1, keepdims=True)\n"
        "    if causal:  # zeroed after the softmax: the mistake\n"
        "        weights = weights * np.tril(np.ones(weights.shape))",
        "step 4",
        "set the future logits to -inf before the softmax",
    ),
    (
        "logits = np.where(np.tril(np.ones(logits.shape, dtype=bool)), logits, -np.inf)",
        "pass",
        "step 4",
        "a query reads a later key",
    ),
    ("O = weights @ V", "O = weights @ K", "step 6", "you averaged the keys"),
    ("O = weights @ V", "O = weights.T @ V", "step 6", "weights.T @ V"),
    ('"updated": X + delta', '"updated": delta', "step 8", "updated equals delta"),
    (
        "e = np.exp(logits - logits.max(axis=-1, keepdims=True))",
        "e = np.exp(logits)",
        "large logits",
        "subtract each row's maximum before np.exp",
    ),
]


@pytest.mark.parametrize(
    "old, new, step, message", HEAD_MISTAKES, ids=[m[3][:32] for m in HEAD_MISTAKES]
)
def test_a_typical_mistake_in_one_head_fails_its_step_saying_why(old, new, step, message):
    spec = SPECS["head-steps"]
    cases = check(spec, mutate(spec["solution"], old, new))
    (name,) = [n for n in cases if n.startswith(step)]
    assert not cases[name]["passed"] and message in cases[name]["message"], cases[name]
    names = list(cases)
    if step.startswith("step "):  # the steps before it that do not use the softmax pass
        number = int(step.split()[1])
        for earlier in names:
            m = re.match(r"step (\d)", earlier)
            if m and int(m.group(1)) < min(number, 4):
                assert cases[earlier]["passed"], (earlier, cases[earlier])


def test_each_step_is_checked_on_the_readers_own_previous_step():
    """A wrong step 2 fails step 2 and what compares with the lab, not steps 3, 6, 7, 8."""
    spec = SPECS["head-steps"]
    cases = check(spec, mutate(spec["solution"], "scores = Q @ K.T", "scores = K @ Q.T"))
    failed = {name.split(":")[0] for name, c in cases.items() if not c["passed"]}
    assert "step 2" in failed and "steps 1-5" in failed and "steps 1-8" in failed
    assert not failed & {"step 1", "step 3", "step 5", "step 6", "step 7", "step 8"}


def test_a_softmax_over_the_queries_fails_only_the_softmax_and_the_end_to_end_checks():
    """Axis 0 as the only mistake: step 5 says so; step 4 and the overflow check do not."""
    spec = SPECS["head-steps"]
    wrong = mutate(
        spec["solution"],
        "e = np.exp(logits - logits.max(axis=-1, keepdims=True))\n"
        "    weights = e / e.sum(axis=-1, keepdims=True)",
        "e = np.exp(logits - logits.max(axis=0, keepdims=True))\n"
        "    weights = e / e.sum(axis=0, keepdims=True)",
    )
    cases = check(spec, wrong)
    failed = {name.split(":")[0] for name, c in cases.items() if not c["passed"]}
    assert failed == {"step 5", "steps 1-5", "steps 1-5, causal=True", "steps 1-8"}, failed
    (step5,) = [c for n, c in cases.items() if n.startswith("step 5")]
    assert "your columns sum to 1, not your rows" in step5["message"]
    messages = " ".join(c["message"] or "" for c in cases.values())
    assert "-inf before the softmax" not in messages and "values are wrong" not in step5["message"]


MULTI_MISTAKES = [
    (
        "return t.reshape(seq_len, n_heads, d_head).transpose(1, 0, 2)",
        "return t.reshape(n_heads, seq_len, d_head)",
        "step 1: head h",
        "you reshaped straight to (n_heads, seq_len, d_head)",
    ),
    (
        "return t.reshape(seq_len, n_heads, d_head).transpose(1, 0, 2)",
        "return t.reshape(seq_len, n_heads, d_head)",
        "step 1: q, k and v",
        "transpose it so the heads come first",
    ),
    (
        "weights = softmax(q @ k.transpose(0, 2, 1) / np.sqrt(d_head))",
        "weights = softmax(q @ k.transpose(0, 2, 1) / np.sqrt(d_model))",
        "step 2",
        "divided by sqrt(d_model)",
    ),
    (
        "weights = softmax(q @ k.transpose(0, 2, 1) / np.sqrt(d_head))",
        "weights = softmax(q @ k.transpose(0, 2, 1) / np.sqrt(d_head), axis=-2)",
        "step 2",
        "your columns sum to 1, not your rows",
    ),
    ("heads = weights @ v", "heads = weights @ k", "step 3", "you averaged the keys"),
    (
        "concat = heads.transpose(1, 0, 2).reshape(seq_len, d_model)",
        "concat = heads.reshape(seq_len, d_model)",
        "step 4",
        "you reshaped the heads without moving them back",
    ),
    (
        "Q = X @ W_Q + (0 if b_Q is None else b_Q)",
        "Q = X @ W_Q",
        "steps 1-2",
        "compared with lesson 6's lab",
    ),
]


@pytest.mark.parametrize(
    "old, new, step, message", MULTI_MISTAKES, ids=[m[3][:32] for m in MULTI_MISTAKES]
)
def test_a_typical_mistake_in_the_layer_fails_its_step_saying_why(old, new, step, message):
    spec = SPECS["multi-head-steps"]
    cases = check(spec, mutate(spec["solution"], old, new))
    (name,) = [n for n in cases if n.startswith(step)]
    assert not cases[name]["passed"] and message in cases[name]["message"], cases[name]


def test_hidden_checks_compare_with_the_labs_defaults():
    head = " ".join(c["code"] for c in SPECS["head-steps"]["checks"])
    assert head.count('run_lab("value_update"') >= 8
    multi = " ".join(c["code"] for c in SPECS["multi-head-steps"]["checks"])
    assert 'run_lab("eight_heads")' in multi and 'run_lab("concat_wo")' in multi


# ----------------------------------------------------------------------------
# the companion notebook, with and without PyTorch


def run_notebook() -> str:
    notebook = jupytext.read(NOTEBOOK)
    namespace, out = {"__name__": "__main__"}, io.StringIO()
    with contextlib.redirect_stdout(out):
        for cell in notebook.cells:
            if cell.cell_type == "code":
                exec(compile(cell.source, str(NOTEBOOK), "exec"), namespace)
    return out.getvalue()


def test_notebook_agrees_with_torch_sdpa_and_multihead_attention():
    pytest.importorskip("torch")
    text = run_notebook()
    for said in (
        "causal=False: O agrees with PyTorch: True",
        "causal=True: O agrees with PyTorch: True",
        "causal=True: delta agrees: True",
        "output agrees with PyTorch: True",
        "every head's weights agree: True",
        "the heads' single-head updates add up to the output: True",
    ):
        assert said in text, text
    assert ": False" not in text and "skipped" not in text


def test_show_heatmap_is_named_as_the_sites_helper_and_the_notebook_defines_one():
    assert sum(code.count("show_heatmap(") for code in page_cells()) == 3
    claim("it is a helper that this site's cells provide (it lives in `attention_labs/cells.py`)")
    assert "def show_heatmap(" in (ROOT / "labs_py" / "attention_labs" / "cells.py").read_text()
    claim("the companion notebook defines one that prints the weights as a table")
    notebook = jupytext.read(NOTEBOOK)
    namespace = {"__name__": "__main__"}
    with contextlib.redirect_stdout(io.StringIO()):
        for cell in notebook.cells:
            if cell.cell_type == "code":
                exec(compile(cell.source, str(NOTEBOOK), "exec"), namespace)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):  # the page's call, pasted into the notebook
        namespace["show_heatmap"](np.eye(2), ["a", "b"], title="pasted")
    assert out.getvalue().splitlines()[0] == "pasted" and "1.000" in out.getvalue()


def test_notebook_without_torch_says_so_and_skips_those_cells(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` raises ImportError
    text = run_notebook()
    assert text.startswith("PyTorch is not installed here")
    assert text.count("skipped: PyTorch is not installed") == 2
    assert "the heads' single-head updates add up to the output: True" in text
    assert "agrees with PyTorch" not in text
