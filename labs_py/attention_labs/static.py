"""What a lab shows without JavaScript: its first result as tables and sentences.

The build computes every lab fence once (build_scripts/hooks/lab.py) and writes, inside the
lab's placeholder, its *static view*: a list of :class:`Table` and :class:`Text` parts that
the hook turns into HTML (build_scripts/hooks/lab_static.py). A reader without JavaScript
reads it; with JavaScript the lab's widget replaces it when it mounts.

The contract: a lab module (``labs/<name>.py``) may define

    def static_view(result: dict, params: dict) -> list[Table | Text]

taking the JSON form of its result (``run_lab(name, params)["result"]``: lists, not
arrays; masked entries ``None``) and its validated parameters, and returning the parts to
show, in order. Without one,
:func:`default_view` shows the attention weights when the result has ``tokens`` and
``weights`` of shape (seq_len, seq_len) (or (seq_len, len(key_tokens))), else the result's
top-level numbers. Every part carries its own words (a caption, a sentence); nothing here
knows HTML, so labs stay plain Python.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

Cell = str | int | float | None  # None: nothing to show (a masked weight, no value)

MAX_SIDE = 24  # a weights matrix wider than this is shown as each query's top key
MAX_NUMBERS = 12  # the default view's numbers


@dataclass(frozen=True)
class Text:
    """One sentence or short paragraph, shown as written (plain text, no markup)."""

    text: str

    def __post_init__(self):
        if not isinstance(self.text, str) or not self.text.strip():
            raise ValueError("Text needs a non-empty string")


@dataclass(frozen=True)
class Table:
    """A table with a caption, one header row and one header cell per row.

    ``columns``: the header of every column, the first one heading the row headers (e.g.
    ``("query \\\\ key", "The", "cat")``); ``rows``: ``(row header, cells)`` with
    ``len(columns) - 1`` cells each. A cell is text, an int (written with thousands
    separators), a float (``digits`` decimals) or None (written "—"). ``shade``: the float
    cells are weights in [0, 1], tinted by value (the text stays the number). ValueError
    for an empty caption or a row of the wrong length.
    """

    caption: str
    columns: Sequence[str]
    rows: Sequence[tuple[str, Sequence[Cell]]]
    digits: int = 3
    shade: bool = False

    def __post_init__(self):
        if not isinstance(self.caption, str) or not self.caption.strip():
            raise ValueError("a Table needs a caption")
        if len(self.columns) < 2:
            raise ValueError(f"table {self.caption!r}: at least two columns, got {self.columns}")
        for header, cells in self.rows:
            if len(cells) != len(self.columns) - 1:
                raise ValueError(
                    f"table {self.caption!r}: row {header!r} has {len(cells)} cells, "
                    f"expected {len(self.columns) - 1}"
                )


def numbers_table(caption: str, items: Sequence[tuple[str, Cell]], digits: int = 3) -> Table:
    """A two-column table: what each number is, and the number."""
    return Table(caption, ("Quantity", "Value"), [(k, (v,)) for k, v in items], digits)


def weights_table(
    caption: str,
    queries: Sequence[str],
    keys: Sequence[str],
    weights: Sequence[Sequence[float | None]],
    *,
    masked: Sequence[Sequence[bool]] | None = None,
    digits: int = 2,
) -> Table:
    """The [query, key] weights as a shaded table: one row per query token, one column per
    key token; a masked key (``masked[q][k]``, or a weight of None) shows "—". Wider than
    :data:`MAX_SIDE` keys or queries, it becomes each query's top key and its weight."""
    if len(queries) > MAX_SIDE or len(keys) > MAX_SIDE:
        rows = []
        for token, row in zip(queries, weights, strict=True):
            values = [w if w is not None else -1.0 for w in row]
            k = max(range(len(values)), key=values.__getitem__)  # the earliest on ties
            rows.append((token, (keys[k], row[k])))
        caption = f"{caption} Each query's top key ({len(keys)} keys: too many to list)."
        return Table(caption, ("Query", "Top key", "Weight"), rows, digits=3)
    rows = []
    for q, (token, row) in enumerate(zip(queries, weights, strict=True)):
        hidden = masked[q] if masked is not None else [False] * len(row)
        rows.append((token, [None if m else w for w, m in zip(row, hidden, strict=True)]))
    return Table(caption, ("Query \\ key", *keys), rows, digits=digits, shade=True)


def _is_matrix(value, n_rows: int, n_cols: int) -> bool:
    return (
        isinstance(value, list)
        and len(value) == n_rows
        and all(isinstance(r, list) and len(r) == n_cols for r in value)
    )


def default_view(result: dict, params: dict | None = None) -> list[Table | Text]:
    """The static view of a lab without ``static_view``: its weights or its numbers."""
    tokens, weights = result.get("tokens"), result.get("weights")
    keys = result.get("key_tokens", tokens)
    if (
        isinstance(tokens, list)
        and isinstance(keys, list)
        and _is_matrix(weights, len(tokens), len(keys))
    ):
        logits = result.get("logits")
        masked = None
        if _is_matrix(logits, len(tokens), len(keys)):
            masked = [[x is None for x in row] for row in logits]
        elif _is_matrix(result.get("masked"), len(tokens), len(keys)):
            masked = result["masked"]
        caption = "Attention weights, one row per query; each row sums to 1."
        return [weights_table(caption, tokens, keys, weights, masked=masked)]
    items = [
        (name.replace("_", " "), value)
        for name, value in result.items()
        if isinstance(value, int | float | str) and not isinstance(value, bool)
    ][:MAX_NUMBERS]
    if not items:
        return [Text("This lab's first result has no numbers to list.")]
    return [numbers_table("The lab's first result.", items)]


def spread(n: int, k: int) -> list[int]:
    """At most ``k`` indices of ``range(n)``, evenly spread, first and last included: the
    rows of a long series that a static table shows."""
    if n <= k:
        return list(range(n))
    return sorted({round(i * (n - 1) / (k - 1)) for i in range(k)})


def plural(n: int, word: str) -> str:
    """``n`` and ``word``, with an "s" unless n is 1: plural(2, "head") -> '2 heads'."""
    return f"{n:,d} {word}{'' if n == 1 else 's'}"
