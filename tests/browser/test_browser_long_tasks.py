"""No main-thread task over 100 ms in the explorer (issue 24), in headless Chromium at 4x CPU
throttling (CDP Emulation.setCPUThrottlingRate), measured with a PerformanceObserver of
'longtask' entries: while the longest committed sentence arrives and its grid of thumbnails
is drawn, while a head opens from the grid and while the grid comes back; and the same for
the reader's own sentence of about 128 tokens through all-MiniLM-L6-v2 in Pyodide (the
weights built by `make vendor` into docs/vendor/minilm/).

Long tasks are wall-clock time: on a busy machine the operating system's other work lands
in them too (on the 2-core machine this was written on, under a load of 8 to 12, a step
that mostly measured 50-90 ms now and then measured 150). So each step is measured up to
ATTEMPTS times and passes when one of its measurements stays within the limit; a drawing
that really blocks for longer (before this, 230-690 ms) fails every time. Clicks are sent
with element.click() (Playwright's own actionability checks run on the page's main thread
and would be counted as the page's tasks)."""

from __future__ import annotations

import json

import pytest
from helpers import ROOT, RecordedPage

LIMIT_MS = 100
RATE = 4
ATTEMPTS = 5
MAP = ".attn-map"
INDEX = json.loads((ROOT / "docs/assets/attention/index.json").read_text("utf-8"))
MINILM = "all-minilm-l6-v2"
LONGEST = max((a for a in INDEX["assets"] if a["model"] == MINILM), key=lambda a: a["seq_len"])
SHORT = min((a for a in INDEX["assets"] if a["model"] == MINILM), key=lambda a: a["seq_len"])
PYTHON_TIMEOUT_MS = 240_000

OBSERVE = """() => { window.__longTasks = [];
  if (window.__observing) return; window.__observing = true;
  new PerformanceObserver((list) => { for (const e of list.getEntries())
    window.__longTasks.push(Math.round(e.duration)); }).observe({ type: 'longtask' }); }"""
TAKE = "() => { const t = window.__longTasks; window.__longTasks = []; return t; }"
GRID_DRAWN = """(id) => { const m = document.querySelector('.attn-map');
  return m?.attnMap?.cache?.asset.sentence.id === id && m.dataset.state === 'ready'
    && m.attnMap.state.view === 'model'
    && m.querySelector('.attn-map__grid')?.dataset.drawn === 'true'; }"""
HEAD_DRAWN = """() => { const m = document.querySelector('.attn-map').attnMap;
  return m.state.view === 'head' && m.main.heatmap.data !== null
    && m.main.lines.tokens === m.cache.asset.tokens.text; }"""
CLICK = "(sel) => document.querySelector(sel).click()"


class Throttled:
    """The page at RATE x CPU throttling, its long tasks observed from now on."""

    def __init__(self, page):
        self.page = page
        self.cdp = page.context.new_cdp_session(page)

    def __enter__(self):
        self.page.evaluate(OBSERVE)
        self.cdp.send("Emulation.setCPUThrottlingRate", {"rate": RATE})
        return self

    def __exit__(self, *exc):
        self.cdp.send("Emulation.setCPUThrottlingRate", {"rate": 1})

    def until(self, predicate, arg=None, timeout=60_000):
        """Wait for ``predicate`` (polled by a timer, not every frame), then a little more
        for the drawing it started to finish."""
        self.page.wait_for_function(predicate, arg=arg, polling=100, timeout=timeout)
        self.page.wait_for_timeout(400)

    def take(self) -> list[int]:
        return self.page.evaluate(TAKE)


def open_head_and_come_back(t: Throttled) -> dict[str, list[int]]:
    """Open the eighth head from the grid, then the grid again: each step's long tasks."""
    t.page.evaluate(CLICK, f"{MAP} .attn-map__thumb:nth-child(8)")
    t.until(HEAD_DRAWN)
    head = t.take()
    t.page.evaluate(CLICK, f"{MAP} .attn-map__view")  # "All heads"
    t.until("() => document.querySelector('.attn-map').attnMap.state.view === 'model'")
    return {"open a head": head, "back to the grid": t.take()}


def best_of(measure) -> dict[str, list[int]]:
    """Each step's long tasks in its best measurement (the smallest maximum) of up to
    ATTEMPTS runs of ``measure``; it stops once every step has one within LIMIT_MS."""
    best: dict[str, list[int]] = {}
    for _ in range(ATTEMPTS):
        for step, tasks in measure().items():
            if step not in best or max(tasks, default=0) < max(best[step], default=0):
                best[step] = tasks
        if all(max(tasks, default=0) <= LIMIT_MS for tasks in best.values()):
            break
    return best


def assert_within_limit(steps: dict[str, list[int]]):
    print(f"long tasks at {RATE}x (ms): {steps}")  # shown with pytest -s
    over = {step: [d for d in tasks if d > LIMIT_MS] for step, tasks in steps.items()}
    assert not any(over.values()), f"main-thread tasks over {LIMIT_MS} ms at {RATE}x: {steps}"


@pytest.fixture
def page(browser, server):
    rec = RecordedPage(browser, server.base)
    yield rec
    assert rec.errors == []
    rec.context.close()


def test_the_longest_sentence_draws_and_opens_without_long_tasks(page):
    p = page.page
    p.goto(f"{page.base}explorer/?model={MINILM}&sentence={SHORT['sentence']}&view=model")
    p.wait_for_function(GRID_DRAWN, arg=SHORT["sentence"], timeout=60_000)

    def measure():
        with Throttled(p) as t:
            p.evaluate(
                "(id) => { const s = document.querySelector('.attn-map select[id$=-sentence]');"
                " s.value = id; s.dispatchEvent(new Event('change')); }",
                LONGEST["sentence"],
            )
            t.until(GRID_DRAWN, LONGEST["sentence"])
            steps = {f"{LONGEST['sentence']} ({LONGEST['seq_len']} tokens) arrives": t.take()}
            steps |= open_head_and_come_back(t)
        # back to the short sentence for the next attempt, unthrottled
        p.select_option(f"{MAP} select[id$=-sentence]", SHORT["sentence"])
        p.wait_for_function(GRID_DRAWN, arg=SHORT["sentence"], timeout=60_000)
        return steps

    assert_within_limit(best_of(measure))


# About 128 word pieces for all-MiniLM-L6-v2 (its longest input).
LONG_TEXT = (
    "The quick brown fox jumps over the lazy dog while the curious cat watches from the old "
    "wooden fence, and a small bird sings a bright song in the tall green tree near the "
    "quiet river that flows past the sleepy village where children play games in the warm "
    "afternoon sun and their parents talk about the harvest, the weather, the market prices "
    "and the coming festival that everyone has been waiting for since the end of last "
    "winter when the snow finally melted away from the hills. Later that evening the "
    "farmers gathered at the inn to share bread, cheese and stories of the old days. The "
    "next morning they walked to the mill by the river."
)  # 127 tokens with [CLS] and [SEP]
COLOURS = ("brown", "red", "grey")  # one word piece each: every attempt a new sentence


def test_your_own_sentence_of_128_tokens_arrives_without_long_tasks(page):
    if not (ROOT / "site" / "vendor" / "minilm" / "minilm.json").is_file():
        pytest.skip("the MiniLM weights are not built (make vendor)")
    p = page.page
    p.goto(f"{page.base}explorer/")
    p.wait_for_selector(f"{MAP}[data-state=ready]", timeout=60_000)
    p.wait_for_selector(".attn-own")
    runs = 0

    def run(text):
        nonlocal runs
        p.fill(".attn-own textarea", text)
        p.evaluate(CLICK, ".attn-own .attn-own__run")
        runs += 1
        return (
            "(n) => { const m = document.querySelector('.attn-map');"
            " return m.attnMap.ownPanel?.runs >= n && m.dataset.own === 'true'"
            " && m.querySelector('.attn-map__grid')?.dataset.drawn === 'true'; }"
        )

    # Python, NumPy and the weights load first, unthrottled.
    p.wait_for_function(
        run("The cat sat on the mat."), arg=1, polling=100, timeout=PYTHON_TIMEOUT_MS
    )

    def measure():
        with Throttled(p) as t:
            ready = run(LONG_TEXT.replace("brown", COLOURS[runs % len(COLOURS)]))
            t.until(ready, runs, timeout=PYTHON_TIMEOUT_MS)
            n = p.evaluate("() => document.querySelector('.attn-map').attnMap.cache.n")
            assert n >= 120, n
            steps = {f"your sentence ({n} tokens) arrives": t.take()}
            steps |= open_head_and_come_back(t)
        return steps

    assert_within_limit(best_of(measure))
