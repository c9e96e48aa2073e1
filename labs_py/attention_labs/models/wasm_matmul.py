"""x W^T, the product of every Linear layer of the models in this folder, fast in the browser.

Pyodide's NumPy has no BLAS: its einsum, the fastest product it has, does one float32
multiply-add at a time. In the browser, `matmul_nt` hands the product to a 1 kB WebAssembly
kernel instead (``matmul.wat``, assembled to ``matmul.wasm``), which does four at a time
with WebAssembly's 128-bit SIMD: 5-6 times faster than einsum for MiniLM's layers. The
kernel is a shared library that Python opens with ctypes (Emscripten's dlopen links it
into Pyodide's memory); it reads and writes NumPy's arrays where they are, by address, so
nothing is copied. In CPython, `matmul_nt` is ``x @ W.T`` (BLAS).

The three paths give the same numbers up to float32 rounding: each adds the same products
in its own order.
"""

from __future__ import annotations

import sys
from importlib import resources

import numpy as np

__all__ = ["WASM", "wasm_bytes", "fits", "kernel", "backend", "matmul_nt"]

WASM = "matmul.wasm"  # beside this module: matmul.wat, assembled
IN_BROWSER = sys.platform == "emscripten"

# The kernel's function once made (None: not tried yet; False: this browser cannot, e.g. no
# WebAssembly SIMD, and einsum does the products). Tests put a stand-in here.
_kernel = None
why_not = ""  # in the browser, why the kernel did not load (dlopen's error), if it did not


def wasm_bytes() -> bytes:
    """The kernel's WebAssembly module (``matmul.wasm``, package data)."""
    return resources.files(__package__).joinpath(WASM).read_bytes()


def kernel():
    """In the browser, the kernel's ``matmul_nt(x, W, y, m, n, k)`` (byte addresses in
    Pyodide's memory as signed 32-bit ints, then the shapes), opened on first use; None
    where there is none (CPython, or a browser without WebAssembly SIMD: NumPy's einsum
    then does the products)."""
    global _kernel
    if _kernel is None:
        _kernel = _browser_kernel() if IN_BROWSER else False
    return _kernel or None


def backend() -> str:
    """Which path `matmul_nt` takes here: "wasm-simd" (the kernel, in the browser),
    "einsum" (a browser where the kernel did not load; `why_not` says why) or "blas"
    (CPython's ``@``). The models' runs report it (own_sentence.py, own_decoder.py)."""
    if kernel() is not None:
        return "wasm-simd"
    return "einsum" if IN_BROWSER else "blas"


def _browser_kernel():
    import ctypes

    global why_not
    try:
        # The installed file (site-packages is Pyodide's in-memory file system); dlopen
        # compiles it, and fails where the browser has no SIMD.
        library = ctypes.CDLL(str(resources.files(__package__).joinpath(WASM)))
    except OSError as err:
        why_not = str(err)
        return False
    run = library.matmul_nt
    run.restype = None  # no argtypes: six ints, converted without ctypes' checks (2 us a call)
    return run


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
    run = kernel()
    if run is None:
        return np.einsum("ti,oi->to", x, W) if IN_BROWSER else x @ W.T
    if x.dtype == np.float32 and not x.flags.c_contiguous:
        x = np.ascontiguousarray(x)
    if not fits(x, W):
        return np.einsum("ti,oi->to", x, W)
    m, k = x.shape
    n = W.shape[0]
    y = np.empty((m, n), dtype=np.float32)
    if m:
        run(_address(x), _address(W), _address(y), m, n, k)
    return y
