"""Lesson 9's two labs in headless Chromium with real Pyodide: each first shows the build's
result, then its controls recompute in the browser exactly what CPython computes (the
kv_cache lab's step and key/value heads; the cache_size lab's groups, context and dtype).
One page and one Pyodide start for the whole module."""

from __future__ import annotations

import pytest
from helpers import RecordedPage
from lab_pages import assert_same_as_cpython, lab, lab_state, wait_for_runs

LESSON = "lessons/09-kv-cache-mqa-gqa/"
KV = lab("kv_cache")
SIZE = lab("cache_size")


@pytest.fixture(scope="module")
def page(browser, server):
    rec = RecordedPage(browser, server.base)
    rec.page.goto(rec.base + LESSON)
    rec.page.wait_for_selector(f"{KV}[data-status=initial]")
    rec.page.wait_for_selector(f"{SIZE}[data-status=initial]")
    yield rec
    assert rec.errors == []
    assert rec.external_requests() == []
    rec.context.close()


def cache_rows(p):
    return p.eval_on_selector_all(
        f"{KV} table:has(caption:text-matches('The cache of')) tbody tr",
        "(trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent))",
    )


def test_kv_cache_steps_and_heads_recompute_equal_to_cpython(page):
    p = page.page
    first = assert_same_as_cpython(p, "kv_cache")
    assert first["runs"] == 0 and first["result"]["step"] == 3
    rows = cache_rows(p)
    assert len(rows) == 6  # every token: cached, new, not generated yet
    assert [r[2] for r in rows] == ["cached"] * 3 + ["new: appended"] + ["not generated yet"] * 2
    assert rows[5][3] == "—"
    status = p.locator(f"{KV} .attn-lab__cell").first.inner_text()
    assert status.startswith("Step 4 of 6: “creature” is the new token.")

    p.locator(KV).scroll_into_view_if_needed()
    p.click(f"{KV} button:has-text('Next step')")
    wait_for_runs(p, "kv_cache", 1)
    got = assert_same_as_cpython(p, "kv_cache")
    assert got["result"]["step"] == 4
    assert [r[2] for r in cache_rows(p)][4] == "new: appended"

    p.select_option(f"{KV} select[id$='-n_kv_heads']", "2")
    wait_for_runs(p, "kv_cache", 2)
    got = assert_same_as_cpython(p, "kv_cache")
    assert got["params"]["n_kv_heads"] == 2 and got["result"]["max_diff"] <= 1e-12
    header = p.eval_on_selector(
        f"{KV} table:has(caption:text-matches('The cache of')) thead tr",
        "(tr) => [...tr.cells].map((c) => c.textContent)",
    )
    assert header[-2:] == ["w, head 1", "w, head 2"]  # one group
    diffs = p.eval_on_selector_all(
        f"{KV} table:has(caption:text-matches('Largest difference')) tbody tr td:last-child",
        "(tds) => tds.map((td) => Number(td.textContent))",
    )
    assert len(diffs) == 6 and max(diffs) <= 1e-12


def test_cache_size_controls_recompute_equal_to_cpython(page):
    p = page.page
    first = lab_state(p, "cache_size")
    assert first["runs"] == 0
    formula = p.locator(f"{SIZE} .attn-lab__summary").inner_text()
    assert formula == (
        "2 × 80 layers × 8 key/value heads × 128 (d_head) × 4,096 tokens × 2 bytes "
        "= 1,342,177,280 bytes ≈ 1.34 GB"
    )
    p.locator(SIZE).scroll_into_view_if_needed()
    p.select_option(f"{SIZE} select[id$='-dtype']", "int8")
    wait_for_runs(p, "cache_size", 1)
    assert_same_as_cpython(p, "cache_size")
    slider = p.locator(f"{SIZE} input[id$='-n_kv_heads']")
    slider.focus()
    slider.press("ArrowRight")  # 8 -> 16 key/value heads
    wait_for_runs(p, "cache_size", 2)
    got = assert_same_as_cpython(p, "cache_size")
    assert got["params"]["n_kv_heads"] == 16 and got["params"]["dtype"] == "int8"
    p.fill(f"{SIZE} input[id$='-seq_len']", "32768")
    p.locator(f"{SIZE} input[id$='-seq_len']").press("Enter")
    wait_for_runs(p, "cache_size", 3)
    got = assert_same_as_cpython(p, "cache_size")
    assert got["result"]["bytes"] == 2 * 80 * 16 * 128 * 32768 * 1
    assert p.locator(f"{SIZE} .attn-lab__summary").inner_text().endswith("≈ 10.7 GB")
    preset = p.locator(f"{SIZE} select[id$='-preset']")
    preset.select_option("gpt2-small")
    wait_for_runs(p, "cache_size", 4)
    got = assert_same_as_cpython(p, "cache_size")
    assert got["params"]["sharing"] == "mha" and got["params"]["n_kv_heads"] == 12
    assert got["params"]["seq_len"] == 1024  # clamped to GPT-2's context
    assert p.locator(f"{SIZE} input[id$='-n_kv_heads']").is_disabled()  # groups: GQA only
    p.fill(f"{SIZE} input[id$='-seq_len']", "4096")
    p.locator(f"{SIZE} input[id$='-seq_len']").press("Enter")
    wait_for_runs(p, "cache_size", 5)
    assert_same_as_cpython(p, "cache_size")
    assert "GPT-2 small's context is at most 1,024 tokens" in p.locator(SIZE).inner_text()


def test_cache_size_mistral_window_and_a_model_of_your_own(page):
    """Issue 24: Mistral-7B starts with its sliding window, which caps the cache at
    min(seq_len, window) tokens in the formula; a window under 1 and an n_kv_heads that
    does not divide your own model's n_heads are named; typing a field makes your own model."""
    p = page.page
    p.locator(SIZE).scroll_into_view_if_needed()
    runs = lab_state(p, "cache_size")["runs"] + 1
    p.select_option(f"{SIZE} select[id$='-dtype']", "fp16")
    wait_for_runs(p, "cache_size", runs)
    p.select_option(f"{SIZE} select[id$='-preset']", "mistral-7b")
    wait_for_runs(p, "cache_size", runs + 1)
    got = assert_same_as_cpython(p, "cache_size")
    assert got["params"]["sliding"] is True and got["params"]["window"] == 4096
    assert (got["params"]["sharing"], got["params"]["n_kv_heads"]) == ("gqa", 8)
    assert p.is_checked(f"{SIZE} input[id$='-sliding']")
    p.fill(f"{SIZE} input[id$='-seq_len']", "32768")
    p.locator(f"{SIZE} input[id$='-seq_len']").press("Enter")
    wait_for_runs(p, "cache_size", runs + 2)
    got = assert_same_as_cpython(p, "cache_size")
    assert got["result"]["cached_tokens"] == 4096
    formula = p.locator(f"{SIZE} .attn-lab__summary").inner_text()
    assert formula == (
        "2 × 32 layers × 8 key/value heads × 128 (d_head) × min(32,768, window 4,096) = "
        "4,096 tokens × 2 bytes = 536,870,912 bytes ≈ 537 MB"
    )
    text = p.locator(SIZE).inner_text()
    assert "The sliding window of 4,096 tokens caps the cache" in text
    assert "as published uses GQA with 8 key/value heads and a sliding window of 4,096" in text
    p.uncheck(f"{SIZE} input[id$='-sliding']")  # the full cache: 8 times more
    wait_for_runs(p, "cache_size", runs + 3)
    got = assert_same_as_cpython(p, "cache_size")
    assert got["result"]["readable"] == "4.29 GB"
    assert p.locator(f"{SIZE} input[id$='-window']").is_disabled()
    p.check(f"{SIZE} input[id$='-sliding']")
    wait_for_runs(p, "cache_size", runs + 4)
    p.fill(f"{SIZE} input[id$='-window']", "0")
    p.locator(f"{SIZE} input[id$='-window']").press("Enter")
    error = p.locator(f"{SIZE} .attn-lab__error")
    assert error.inner_text() == "window must be a whole number from 1 to 524288, got 0"
    assert p.get_attribute(f"{SIZE} input[id$='-window']", "aria-invalid") == "true"
    # your own model: typing n_heads switches to it, n_kv_heads kept a divisor
    p.fill(f"{SIZE} input[id$='-n_heads']", "12")
    p.locator(f"{SIZE} input[id$='-n_heads']").press("Enter")
    wait_for_runs(p, "cache_size", runs + 5)
    got = assert_same_as_cpython(p, "cache_size")
    assert got["params"]["preset"] == "custom" and got["params"]["n_heads"] == 12
    assert got["params"]["n_layers"] == 32 and got["params"]["d_head"] == 128  # from Mistral
    assert got["params"]["n_kv_heads"] == 6  # the largest divisor of 12 not above 8
    assert p.locator(f"{SIZE} select[id$='-preset']").input_value() == "custom"
    assert "Your own model, GQA" in p.locator(SIZE).inner_text()
    assert error.is_hidden()


def test_cache_by_hand_accepts_thousands_separators(page):
    # Whole numbers with thousands commas are read as such ("0,707" elsewhere stays a
    # decimal comma: test_browser_cells.py); the hint for an unreadable box fits whole answers.
    p = page.page
    ex = "#exercise-cache-bytes-by-hand"
    p.wait_for_selector(f"{ex}[data-mounted]", state="attached")
    p.locator(ex).scroll_into_view_if_needed()
    result = p.locator(f"{ex} .attn-exercise__result")
    p.fill(f"{ex} input[name='per_token-0-0']", "2,048")
    p.fill(f"{ex} input[name='mha-0-0']", "1,048,576")
    p.fill(f"{ex} input[name='gqa-0-0']", "two hundred")
    p.locator(f"{ex} button.attn-exercise__check").click()
    assert result.inner_text() == (
        "2 of 3 values are right. 1 is not a number (write e.g. 2048 or 2,048)."
    )
    p.fill(f"{ex} input[name='gqa-0-0']", "262,144")
    p.locator(f"{ex} button.attn-exercise__check").click()
    assert result.inner_text().startswith("Right: all 3 values")
