"""The browser models' two hot loops, fast in the browser: every Linear layer's product
(`matmul_nt`, x W^T) and SmolLM2's 4-bit weights to float32 (`dequant_q4_1`).

Pyodide's NumPy has no BLAS: its einsum, the fastest product it has, does one float32
multiply-add at a time. In the browser, both loops go to a 1.5 kB WebAssembly
module instead (``kernels.wat``, assembled to ``kernels.wasm``), which does four at a time
with WebAssembly's 128-bit SIMD: the products 5-6 times faster than einsum for MiniLM's
layers. The module is a shared library that Python opens with ctypes (Emscripten's dlopen
links it into Pyodide's memory); it reads and writes NumPy's arrays where they are, by
address, so nothing is copied. In CPython, `matmul_nt` is ``x @ W.T`` (BLAS) and
`dequant_q4_1` returns None (the caller's NumPy code does it).

The product's paths give the same numbers up to float32 rounding (each adds the same
products in its own order); the dequantisation's, the same bits.
"""

from __future__ import annotations

import sys

import numpy as np

from .. import package_file

__all__ = ["WASM", "wasm_bytes", "fits", "kernel", "backend", "matmul_nt", "dequant_q4_1"]

WASM = "kernels.wasm"  # beside this module: kernels.wat, assembled
_PATH = package_file("models", WASM)
IN_BROWSER = sys.platform == "emscripten"

# The opened module (None: not tried yet; False: this browser cannot, e.g. no WebAssembly
# SIMD, and NumPy does the work). Tests put a stand-in here.
_kernel = None
why_not = ""  # in the browser, why the kernel did not load (dlopen's error), if it did not


def wasm_bytes() -> bytes:
    """The kernels' WebAssembly module (``kernels.wasm``, package data)."""
    with open(_PATH, "rb") as f:
        return f.read()


def kernel():
    """In the browser, the opened module, whose functions take byte addresses in Pyodide's
    memory as signed 32-bit ints, then sizes: ``matmul_nt(x, W, y, m, n, k)`` and
    ``dequant_q4_1(codes, scale, minimum, out, n_blocks)``; opened on first use. None where
    there is none (CPython, or a browser without WebAssembly SIMD: NumPy then does the work).
    """
    global _kernel
    if _kernel is None:
        _kernel = _browser_kernel() if IN_BROWSER else False
    return _kernel or None


def backend() -> str:
    """Which path `matmul_nt` and `dequant_q4_1` take here: "wasm-simd" (the kernels, in
    the browser), "einsum" (a browser where they did not load; `why_not` says why: NumPy
    then does the work) or "blas" (CPython's ``@``). The models' runs report it
    (own_sentence.py, own_decoder.py)."""
    if kernel() is not None:
        return "wasm-simd"
    return "einsum" if IN_BROWSER else "blas"


def _browser_kernel():
    import ctypes

    global why_not
    try:
        # The installed file (site-packages is Pyodide's in-memory file system); dlopen
        # compiles it, and fails where the browser has no SIMD.
        library = ctypes.CDLL(_PATH)
    except OSError as err:
        why_not = str(err)
        return False
    # No argtypes: plain ints, converted without ctypes' checks (2 us a call, not 24).
    library.matmul_nt.restype = None
    library.dequant_q4_1.restype = None
    return library


def fits(x, W) -> bool:
    """Whether the kernel takes x (m, k) and W (n, k): float32, 2-D, C-contiguous, and
    k % 4 == 0 (four lanes), k > 0, n % 2 == 0 (two rows of W at a time)."""
    return (
        x.ndim == 2
        and W.ndim == 2
        and x.dtype == np.float32
        and W.dtype == np.float32
        and x.shape[1] == W.shape[1]
        and x.shape[1] > 0
        and x.shape[1] % 4 == 0
        and W.shape[0] % 2 == 0
        and x.flags.c_contiguous
        and W.flags.c_contiguous
    )


def _address(a: np.ndarray) -> int:
    """The array's first byte, as the kernel's i32 takes it: wasm32 addresses above 2 GiB
    wrap to negative ints (same bits), which ctypes passes as a C int."""
    at = a.ctypes.data
    return at - (1 << 32) if 1 << 31 <= at < 1 << 32 else at


def matmul_nt(x, W) -> np.ndarray:
    """x W^T for x (m, k) and W (n, k), as PyTorch's Linear stores W (d_out, d_in).

    Returns (m, n), float32 for float32 inputs. In the browser, the WebAssembly kernel where
    it `fits` (a non-contiguous x is copied first), else NumPy's einsum; in CPython,
    ``x @ W.T``. Raises ValueError when the inner dimensions differ.
    """
    if x.shape[-1] != W.shape[-1]:
        raise ValueError(f"x has {x.shape[-1]} columns and W {W.shape[-1]}: they must match")
    lib = kernel()
    if lib is None:
        return np.einsum("ti,oi->to", x, W) if IN_BROWSER else x @ W.T
    if x.dtype == np.float32 and not x.flags.c_contiguous:
        x = np.ascontiguousarray(x)
    if not fits(x, W):
        return np.einsum("ti,oi->to", x, W)
    m, k = x.shape
    n = W.shape[0]
    y = np.empty((m, n), dtype=np.float32)
    if m:
        lib.matmul_nt(_address(x), _address(W), _address(y), m, n, k)
    return y


def dequant_q4_1(codes: np.ndarray, scale: np.ndarray, minimum: np.ndarray):
    """Q4_1 blocks to float32 in the kernel (value = code * scale + minimum, the same bits
    as `smollm2.dequantise_q4_1`'s NumPy), or None where there is no kernel.

    Args:
        codes: uint8 (rows, n_blocks * 16), ggml's layout (smollm2.dequantise_q4_1).
        scale, minimum: float16 or float32 (rows, n_blocks).

    Returns:
        float32 (rows, n_blocks * 32), or None (CPython; a browser without the kernel).
    """
    lib = kernel()
    if lib is None:
        return None
    rows, n_blocks = scale.shape
    codes = np.ascontiguousarray(codes, dtype=np.uint8)
    if codes.shape != (rows, n_blocks * 16) or minimum.shape != scale.shape:
        raise ValueError(
            f"Q4_1 codes {codes.shape}, scale {scale.shape}, minimum {minimum.shape}: "
            f"want (rows, 16 * n_blocks) codes and one scale and minimum per block"
        )
    scale = np.ascontiguousarray(scale, dtype=np.float32)
    minimum = np.ascontiguousarray(minimum, dtype=np.float32)
    out = np.empty((rows, n_blocks * 32), dtype=np.float32)
    if out.size:
        lib.dequant_q4_1(
            _address(codes), _address(scale), _address(minimum), _address(out), rows * n_blocks
        )
    return out
