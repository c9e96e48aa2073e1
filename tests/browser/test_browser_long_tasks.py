"""The explorer's steps that `make bench` times at 4x CPU throttling (issue 24's long
tasks: build_scripts/bench/bench_long_tasks.py) run to the end under that throttling, in
headless Chromium: the longest committed sentence arrives and its grid is drawn, a head
opens from the grid, the grid comes back; the reader's own sentence of about 128 tokens
arrives from all-MiniLM-L6-v2 in Pyodide. How long each task took is the benchmark's
number, not this test's: long tasks are wall-clock time, which the machine's other work
lengthens (a step at 85-101 ms on a loaded 2-core machine is 40-60 ms on a quiet one)."""

from __future__ import annotations

import pytest
from helpers import ROOT, RecordedPage

from build_scripts.bench.bench_long_tasks import Steps


@pytest.fixture
def page(browser, server):
    rec = RecordedPage(browser, server.base)
    yield rec
    assert rec.errors == []
    rec.context.close()


def observed(steps: dict[str, list[int]]) -> bool:
    """Every step reports its long tasks as a list of whole milliseconds.

    Not "of 50 and more": Chromium's 'longtask' entries are not all 50 ms or more once
    rounded; one came out at 49 in a two-worker run of the browser tier ([74, 49, 90])."""
    return all(all(isinstance(d, int) and d > 0 for d in tasks) for tasks in steps.values())


def test_the_longest_sentence_draws_opens_a_head_and_comes_back_throttled(page):
    steps = Steps(page.page, page.base)
    steps.open_grid()
    done = steps.longest_sentence()  # each step waits for what it shows
    assert list(done)[1:] == ["open a head", "back to the grid"]
    assert f"({steps.longest['seq_len']} tokens)" in list(done)[0]
    assert observed(done), done


def test_your_own_sentence_of_128_tokens_arrives_throttled(page):
    if not (ROOT / "site" / "vendor" / "minilm" / "minilm.json").is_file():
        pytest.skip("the MiniLM weights are not built (make vendor)")
    steps = Steps(page.page, page.base)
    steps.load_own()
    done = steps.own_sentence()
    n = page.page.evaluate("() => document.querySelector('.attn-map').attnMap.cache.n")
    assert n >= 120, n
    assert list(done) == [f"your sentence ({n} tokens) arrives", "open a head", "back to the grid"]
    assert observed(done), done
