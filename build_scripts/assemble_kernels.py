"""The browser models' WebAssembly kernel: ``kernels.wat`` assembled to ``kernels.wasm``.

    python -m build_scripts.assemble_kernels          # after editing labs_py/.../models/kernels.wat

Both files are committed (the wasm is 1 kB), so building the site needs no assembler;
tests/python/test_wasm_kernels.py checks that the committed wasm is the text assembled, and
runs it against NumPy. The assembler is wasmtime's (PyPI ``wasmtime``, in the test tools):
the same text gives the same bytes.
"""

from __future__ import annotations

import sys
from pathlib import Path

from build_scripts.files import write_atomic

MODELS = Path(__file__).resolve().parent.parent / "labs_py" / "attention_labs" / "models"
WAT = MODELS / "kernels.wat"
WASM = MODELS / "kernels.wasm"


def assemble(wat: Path = WAT) -> bytes:
    """The WebAssembly binary of the text module ``wat``. Raises ImportError without
    wasmtime (``make test`` installs it) and wasmtime's error for a bad text."""
    import wasmtime

    return wasmtime.wat2wasm(wat.read_text("utf-8"))


def main() -> int:
    data = assemble()
    if WASM.is_file() and WASM.read_bytes() == data:
        print(f"{WASM.name}: unchanged ({len(data)} bytes)")
        return 0
    write_atomic(WASM, data)
    print(f"{WASM.name}: written, {len(data)} bytes from {WAT.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
