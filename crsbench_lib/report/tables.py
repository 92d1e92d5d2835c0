"""Tables as the book shows them: rounded, index hidden, with a caption."""

from __future__ import annotations

import pandas as pd
from pandas.io.formats.style import Styler

DEFAULT_PRECISION = 3


def show_table(frame: pd.DataFrame, caption: str | None = None, precision: int = DEFAULT_PRECISION) -> Styler:
    """A styled, read-only view of ``frame`` for a notebook cell's output (text/html).

    Floats are shown with ``precision`` decimals, booleans as yes/no, the index
    is hidden unless it is named (a meaningful index such as ``held_out``).
    """
    table = frame.copy()
    for column in table.columns:
        if table[column].dtype == bool:
            table[column] = table[column].map({True: "yes", False: "no"})
    styler = table.style.format(precision=precision, na_rep="-")
    if table.index.name is None and not isinstance(table.index, pd.MultiIndex):
        styler = styler.hide(axis="index")
    if caption:
        styler = styler.set_caption(caption)
    styler = styler.set_table_styles(
        [
            {"selector": "caption", "props": "caption-side: top; text-align: left; font-weight: bold; padding: 4px 0;"},
            {"selector": "td, th", "props": "padding: 2px 8px; font-size: 0.9em;"},
        ]
    )
    return styler
