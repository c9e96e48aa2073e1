"""The browser models' WebAssembly SIMD kernels (attention_labs/models/kernels.wat, .wasm)
and `wasm_kernels`: the Linear layers' product and SmolLM2's Q4_1 dequantisation, run in
CPython by wasmtime (helpers.WasmtimeKernel) against NumPy. The browsers run the same bytes:
tests/browser/test_browser_own_sentence.py and test_engines.py check their results against
CPython's."""

from __future__ import annotations

import numpy as np
import pytest
from attention_labs.models import wasm_kernels
from helpers import WasmtimeKernel

from build_scripts import assemble_kernels as assembler


@pytest.fixture(scope="module")
def kernel():
    return WasmtimeKernel()


@pytest.fixture
def in_browser(monkeypatch, kernel):
    """`matmul_nt` as in the browser: the kernel where it fits, einsum elsewhere."""
    monkeypatch.setattr(wasm_kernels, "IN_BROWSER", True)
    monkeypatch.setattr(wasm_kernels, "_kernel", kernel)
    kernel.calls = kernel.dequant_calls = 0
    return kernel


def test_the_committed_wasm_is_the_text_assembled():
    assert assembler.WASM.read_bytes() == assembler.assemble(), (
        "labs_py/attention_labs/models/kernels.wasm is not kernels.wat assembled: run "
        "'.venv/bin/python -m build_scripts.assemble_kernels' and commit both"
    )
    assert wasm_kernels.wasm_bytes() == assembler.WASM.read_bytes()


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
    got = wasm_kernels.matmul_nt(x, W)
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
        got = wasm_kernels.matmul_nt(x, w)
        np.testing.assert_allclose(got, x @ w.T, rtol=1e-6, atol=1e-6)
    assert in_browser.calls == 0
    # a strided x (a transposed view, say) is copied, then goes to the kernel
    xt = rng.standard_normal((8, 3), dtype=np.float32).T
    np.testing.assert_allclose(wasm_kernels.matmul_nt(xt, W), xt @ W.T, rtol=1e-5, atol=1e-6)
    assert in_browser.calls == 1
    assert wasm_kernels.matmul_nt(np.zeros((0, 8), np.float32), W).shape == (0, 6)
    with pytest.raises(ValueError, match="x has 8 columns and W 6"):
        wasm_kernels.matmul_nt(np.zeros((2, 8), np.float32), W[:, :6])


def test_cpython_uses_blas_and_has_no_kernel():
    assert not wasm_kernels.IN_BROWSER and wasm_kernels.kernel() is None
    x = np.ones((2, 4), np.float32)
    np.testing.assert_array_equal(wasm_kernels.matmul_nt(x, np.ones((2, 4), np.float32)), 4.0)


@pytest.mark.parametrize(("rows", "n_blocks"), [(1, 1), (3, 2), (64, 18), (7, 48)])
def test_the_q4_1_kernel_gives_numpys_bits(in_browser, rows, n_blocks):
    from attention_labs.models import smollm2

    rng = np.random.default_rng(rows * 100 + n_blocks)
    codes = rng.integers(0, 256, (rows, n_blocks * 16), dtype=np.uint8)
    # float16 as the file stores them: SmolLM2's sizes, and a zero, a negative and a tiny one
    scale = rng.normal(0, 0.02, (rows, n_blocks)).astype(np.float16)
    minimum = rng.normal(0, 0.1, (rows, n_blocks)).astype(np.float16)
    scale.flat[0], minimum.flat[-1] = np.float16(0), np.float16(-6e-8)
    got = smollm2.dequantise_q4_1(codes, scale, minimum)
    assert in_browser.dequant_calls == 1 and got.dtype == np.float32
    with pytest.MonkeyPatch.context() as m:
        m.setattr(wasm_kernels, "IN_BROWSER", False)
        m.setattr(wasm_kernels, "_kernel", False)
        want = smollm2.dequantise_q4_1(codes, scale, minimum)
    assert in_browser.dequant_calls == 1  # NumPy's own loop, the second time
    assert got.shape == want.shape == (rows, n_blocks * 32)
    # Same bytes on any machine: both sides round each float32 multiply and each add
    # separately (IEEE 754, round to nearest); NumPy's two in-place ufuncs cannot be fused
    # into an FMA, and WebAssembly's f32x4.mul and f32x4.add are exactly rounded.
    assert got.tobytes() == want.tobytes()


def test_q4_1_blocks_of_the_wrong_shape_are_refused(in_browser):
    with pytest.raises(ValueError, match=r"Q4_1 codes \(2, 16\), scale \(2, 2\)"):
        wasm_kernels.dequant_q4_1(
            np.zeros((2, 16), np.uint8), np.ones((2, 2), np.float16), np.ones((2, 2), np.float16)
        )
