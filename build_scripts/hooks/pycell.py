"""```pycell fences: editable Python cells.

A ```pycell fence holds plain Python. The build checks that it compiles and emits a
``<div class="attn-cell">`` with the code (shown as-is until the editor loads); cells on a
page share one namespace in the browser, in the order the reader runs them.
"""

from __future__ import annotations

from .runtime import data_attribute, inert_text
from .scanner import Fence, FenceError, Page

NAME = "pycell"


class CellError(FenceError):
    """A pycell fence that cannot be built; the message starts with ``file:line:``."""


def render_cell(
    code: str, n: int, src_path: str, line_no: int, indent: str, runtime: dict | None = None
) -> str:
    """The placeholder of cell ``n`` (1-based on its page), with the build's ``runtime``;
    CellError on a syntax error, naming the file line of the error (the fence opens at
    ``line_no``)."""
    try:
        compile(code, f"<cell {n}>", "exec")
    except SyntaxError as err:
        at = line_no + (err.lineno or 1)
        raise CellError(f"docs/{src_path}:{at}: pycell has a syntax error: {err.msg}") from None
    config = {"n": n, "code": code, "runtime": runtime if runtime is not None else {}}
    return indent + (
        f'<div class="attn-cell" role="group" aria-label="Python cell {n}" '
        f'data-cell-config="{data_attribute(config)}"><pre class="attn-cell__static"><code>'
        f"{inert_text(code)}</code></pre></div>"
    )


def render(fence: Fence, page: Page) -> str:
    if fence.end is None:
        where = page.where(fence)
        raise CellError(f"{where}: pycell fence is never closed (add a line with ```)")
    page.n_cells += 1
    line_no = fence.line_no + page.offset
    return render_cell(
        fence.body, page.n_cells, page.src_path, line_no, fence.indent, page.build.runtime
    )
