"""A lab's first result as static HTML, inside its placeholder (hooks/lab.py).

A reader without JavaScript sees this: the parts of the lab's static view
(``attention_labs.labs.static_view``: tables with a caption and header cells, sentences),
after one sentence saying what they are. With JavaScript the lab controller
(docs/javascripts/labs/controller.js) empties the placeholder when it mounts the widget.

Every piece of text goes through ``inert_text``: in an admonition Markdown runs over the
placeholder as inline text, so nothing in it may look like Markdown or math, and each part
is one line (a blank line would end the raw HTML block).
"""

from __future__ import annotations

from attention_labs.labs import static_view
from attention_labs.static import Cell, Table, Text

from .runtime import inert_text

INTRO = (
    "Below: the lab's first result, computed when this page was built. "
    "Changing it needs JavaScript."
)


def _cell_text(value: Cell, digits: int) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool) or isinstance(value, str):
        return str(value)
    if isinstance(value, int):
        return f"{value:,d}"
    return f"{value:.{digits}f}"


def _td(value: Cell, table: Table) -> str:
    text = inert_text(_cell_text(value, table.digits))
    if isinstance(value, str):
        return f'<td class="attn-static__word">{text}</td>'
    if table.shade and value is None:
        return f'<td class="attn-static__masked">{text}</td>'
    if table.shade and isinstance(value, float):
        # the tint's strength; labs.css mixes it into the background
        return f'<td style="--attn-w:{min(max(value, 0.0), 1.0):.3f}">{text}</td>'
    return f"<td>{text}</td>"


def table_html(table: Table) -> str:
    """``table`` as a scrollable region holding a <table> with its caption and header cells
    (``scope="col"`` on the header row, ``scope="row"`` on each row's first cell)."""
    caption = inert_text(table.caption)
    head = "".join(f'<th scope="col">{inert_text(str(c))}</th>' for c in table.columns)
    body = "".join(
        f'<tr><th scope="row">{inert_text(str(header))}</th>'
        + "".join(_td(v, table) for v in cells)
        + "</tr>"
        for header, cells in table.rows
    )
    kind = " attn-static__table--weights" if table.shade else ""
    # The region scrolls on a phone, so it takes focus and has a name (axe's rule).
    return (
        f'<div class="attn-static__scroll" role="region" tabindex="0" aria-label="{caption}">'
        f'<table class="attn-static__table{kind}"><caption>{caption}</caption>'
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>"
    )


def part_html(part: Table | Text) -> str:
    if isinstance(part, Table):
        return table_html(part)
    return f'<p class="attn-static__text">{inert_text(part.text)}</p>'


def static_html(name: str, out: dict) -> list[str]:
    """The lines of the static form of lab ``name``'s first run ``out`` (``run_lab``'s
    {lab, params, result}), each one complete element: the sentence that says what it is,
    then every part."""
    lines = [f'<div class="attn-static" data-static="{inert_text(name)}">']
    lines.append(f'<p class="attn-lab-noscript">{inert_text(INTRO)}</p>')
    lines += [part_html(p) for p in static_view(name, out["result"], out["params"])]
    lines.append("</div>")
    return lines
