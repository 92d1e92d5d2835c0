"""Tables as the book shows them: rounded, index hidden, numbered, with a caption, never wider than the text column.

A table is shown inside its own horizontally scrolling box (class
:data:`SCROLL_CLASS`, styled in ``book/_static/crsbench.css``), so that a table
with more columns than the column has room for scrolls inside the box instead
of overflowing the page. Chapters still choose their columns and round: the
box is the fallback, not the layout. Text cells may wrap at their underscores
(``simclr_<wbr>broad_<wbr>aug_s``), so an encoder's name does not set a
column's width; numbers never wrap.

Captioned tables are numbered in the order a page shows them ("Table 1: ..."):
every chapter starts its count again (:func:`restart_table_numbers`, called by
the chapter header), as a chapter's tables are cited from its own prose.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from pandas.io.formats.style import Styler

from crsbench_lib.report.grammar import p_value_text

DEFAULT_PRECISION = 3
SCROLL_CLASS = "crs-table-scroll"
#: Columns that hold p-values: written by :func:`~crsbench_lib.report.grammar.p_value_text`
#: (``< 0.001``, never a rounded ``0.000``), whatever the table's precision.
P_VALUE_COLUMNS: frozenset[str] = frozenset({"p_value"})
TABLE_LABEL = "Table"

# The number the next captioned table of this page takes (one kernel runs one page).
_next_number = 1


def restart_table_numbers() -> None:
    """Number the next captioned table 1: a page (chapter) starts its own count."""
    global _next_number
    _next_number = 1


def _take_number() -> int:
    global _next_number
    number = _next_number
    _next_number += 1
    return number


def _text_cell(precision: int):
    """The formatter of a column of text (or of mixed values): escaped, breakable after each underscore."""

    def text(value: object) -> str:
        if isinstance(value, str):
            # <wbr> marks where a long name may break without changing the text a reader copies.
            return html.escape(value).replace("_", "_<wbr>")
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return "-"
        if isinstance(value, (bool, np.bool_)):  # a yes/no figure in a column of mixed values, as a bool column
            return "yes" if value else "no"
        if isinstance(value, float):
            rounded = round(value, precision) + 0.0
            return f"{rounded:.{precision}f}"
        return html.escape(str(value))

    return text


@dataclass(frozen=True)
class BookTable:
    """A styled table in a scrolling box (renders as HTML in a notebook).

    Attributes
    ----------
    styler : pandas.io.formats.style.Styler
        The styled table.
    """

    styler: Styler

    def _repr_html_(self) -> str:
        return f'<div class="{SCROLL_CLASS}" style="overflow-x:auto;max-width:100%">{self.styler.to_html()}</div>'


def show_table(frame: pd.DataFrame, caption: str | None = None, precision: int = DEFAULT_PRECISION,
               numbered: bool = True) -> BookTable:
    """A styled, read-only view of ``frame`` for a notebook cell's output (text/html).

    Floats are shown with ``precision`` decimals, except p-values (columns of
    :data:`P_VALUE_COLUMNS`), which read ``< 0.001`` below the floor instead of
    rounding to zero; integers stay integers; booleans show as yes/no. The
    index is hidden unless it is named (a meaningful index such as
    ``held_out``). Column names and text cells with underscores wrap at them,
    so neither widens a table. A caption is numbered ("Table 2: ...") unless
    ``numbered`` is false.

    Examples
    --------
    >>> restart_table_numbers()
    >>> html = show_table(pd.DataFrame({"a": [0.12345]}), caption="c")._repr_html_()
    >>> "0.123" in html and "crs-table-scroll" in html and "Table 1: c" in html
    True
    >>> "&lt; 0.001" in show_table(pd.DataFrame({"p_value": [1e-4]}))._repr_html_()
    True
    >>> "-0.000" in show_table(pd.DataFrame({"gain": [-0.0001]}))._repr_html_()
    False
    >>> mixed = show_table(pd.DataFrame({"value": [0.5, True]}, dtype=object))._repr_html_()
    >>> ">yes<" in mixed and ">True<" not in mixed
    True
    """
    table = frame.copy()
    for column in table.columns:
        if table[column].dtype == bool:
            table[column] = table[column].map({True: "yes", False: "no"})
    p_columns = [c for c in table.columns if str(c) in P_VALUE_COLUMNS]
    for column in table.columns:
        if column not in p_columns and pd.api.types.is_float_dtype(table[column]):
            # Rounded first, then + 0.0: a value that rounds to zero shows "0.000", never "-0.000".
            table[column] = table[column].round(precision) + 0.0
    # A zero-width space after each underscore lets a long header break there.
    table.columns = [str(c).replace("_", "_\u200b") for c in table.columns]
    styler = table.style.format(precision=precision, na_rep="-")
    text_columns = [str(c).replace("_", "_\u200b") for c, dtype in zip(frame.columns, table.dtypes)
                    if c not in p_columns and (pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype))]
    if text_columns:
        styler = styler.format(_text_cell(precision), subset=text_columns)
    if p_columns:
        shown = [str(c).replace("_", "_\u200b") for c in p_columns]
        # The styler does not escape a formatter's output: "< 0.001" must reach the page as text.
        styler = styler.format(lambda p: html.escape(p_value_text(p)), subset=shown, na_rep="-")
    if table.index.name is None and not isinstance(table.index, pd.MultiIndex):
        styler = styler.hide(axis="index")
    if caption:
        styler = styler.set_caption(f"{TABLE_LABEL} {_take_number()}: {caption}" if numbered else caption)
    styler = styler.set_table_styles(
        [
            {"selector": "caption", "props": "caption-side: top; text-align: left; font-weight: bold; padding: 4px 0;"},
            {"selector": "td, th", "props": "padding: 2px 6px; font-size: 0.85em;"},
        ]
    )
    return BookTable(styler)


def beside(rows: list[tuple[str, float, float]]) -> pd.DataFrame:
    """The study's value beside this build's, one row per quantity: ``quantity, study, this_build``.

    Values keep their type, so counts show without decimals beside rounded floats.

    Examples
    --------
    >>> beside([("tau", 0.6, 0.31), ("encoders", 15, 6)]).to_dict("records")
    [{'quantity': 'tau', 'study': 0.6, 'this_build': 0.31}, {'quantity': 'encoders', 'study': 15, 'this_build': 6}]
    """
    return pd.DataFrame(rows, columns=["quantity", "study", "this_build"], dtype=object)
