"""The browser models' WebAssembly SIMD kernel (attention_labs/models/matmul.wat, .wasm) and
`wasm_matmul.matmul_nt`, which the models' Linear layers call: run in CPython by wasmtime
(helpers.WasmtimeKernel) against NumPy. The browser runs the same bytes:
tests/browser/test_browser_own_sentence.py checks its maps against CPython's."""

from __future__ import annotations

import numpy as np
import pytest
from attention_labs.models import wasm_matmul
from helpers import WasmtimeKernel

from build_scripts import matmul_wasm


@pytest.fixture(scope="module")
def kernel():
    return WasmtimeKernel()


@pytest.fixture
def in_browser(monkeypatch, kernel):
    """`matmul_nt` as in the browser: the kernel where it fits, einsum elsewhere."""
    monkeypatch.setattr(wasm_matmul, "IN_BROWSER", True)
    monkeypatch.setattr(wasm_matmul, "_kernel", kernel)
    kernel.calls = 0
    return kernel


def test_the_committed_wasm_is_the_text_assembled():
    assert matmul_wasm.WASM.read_bytes() == matmul_wasm.assemble(), (
        "labs_py/attention_labs/models/matmul.wasm is not matmul.wat assembled: run "
        "'.venv/bin/python -m build_scripts.matmul_wasm' and commit both"
    )
    assert wasm_matmul.wasm_bytes() == matmul_wasm.WASM.read_bytes()


def bound(x, W):
    """float32 rounding of sums of k products, in any order: k * eps * sum |x_p W_p|."""
    k = x.shape[1]
    return k * np.finfo(np.float32).eps * (np.abs(x).astype(np.float64) @ np.abs(W).T) + 1e-30


# m: the 4-row blocks and the rows left over (1 row: a decoder's step); k: one lane-group
# and MiniLM's and SmolLM2's widths; n: one pair of W's rows up to the vocabulary's size.
SHAPES = [(1, 2, 4), (3, 2, 4), (4, 2, 8), (5, 6, 12), (7, 10, 20), (9, 384, 384),
          (50, 1536, 384), (50, 384, 1536), (1, 576, 1536), (2, 4096, 576)]  # fmt: skip


@pytest.mark.parametrize(("m", "n", "k"), SHAPES)
def test_the_kernel_is_x_times_w_transposed(in_browser, m, n, k):
    rng = np.random.default_rng(m * 1000 + n + k)
    x = rng.standard_normal((m, k), dtype=np.float32)
    W = rng.standard_normal((n, k), dtype=np.float32)
    got = wasm_matmul.matmul_nt(x, W)
    assert in_browser.calls == 1 and got.shape == (m, n) and got.dtype == np.float32
    want = x.astype(np.float64) @ W.T.astype(np.float64)
    assert (np.abs(got - want) <= bound(x, W)).all()
    # and as close as NumPy's own float32 product
    assert np.abs(got - want).max() <= 8 * np.abs(x @ W.T - want).max() + 1e-6


def test_what_the_kernel_does_not_take_goes_to_einsum(in_browser):
    rng = np.random.default_rng(1)
    W = rng.standard_normal((6, 8), dtype=np.float32)
    for x, w in [
        (rng.standard_normal((3, 8)), W),  # float64
        (rng.standard_normal((3, 6), dtype=np.float32), W[:, :6]),  # k = 6: not 4 lanes
        (rng.standard_normal((3, 8), dtype=np.float32), W[:5]),  # n = 5 is odd
        (rng.standard_normal((3, 8), dtype=np.float32), np.asfortranarray(W)),  # W strided
    ]:
        got = wasm_matmul.matmul_nt(x, w)
        np.testing.assert_allclose(got, x @ w.T, rtol=1e-6, atol=1e-6)
    assert in_browser.calls == 0
    # a strided x (a transposed view, say) is copied, then goes to the kernel
    xt = rng.standard_normal((8, 3), dtype=np.float32).T
    np.testing.assert_allclose(wasm_matmul.matmul_nt(xt, W), xt @ W.T, rtol=1e-5, atol=1e-6)
    assert in_browser.calls == 1
    assert wasm_matmul.matmul_nt(np.zeros((0, 8), np.float32), W).shape == (0, 6)
    with pytest.raises(ValueError, match="x has 8 columns and W 6"):
        wasm_matmul.matmul_nt(np.zeros((2, 8), np.float32), W[:, :6])


def test_cpython_uses_blas_and_has_no_kernel():
    assert not wasm_matmul.IN_BROWSER and wasm_matmul.kernel() is None
    x = np.ones((2, 4), np.float32)
    np.testing.assert_array_equal(wasm_matmul.matmul_nt(x, np.ones((2, 4), np.float32)), 4.0)
