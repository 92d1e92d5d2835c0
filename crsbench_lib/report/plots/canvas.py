"""The shared canvas of the book's figures: a new figure in the book's style, its table checked.

Every figure module starts from :func:`new_figure` (the book's column size and
style of :mod:`crsbench_lib.report.style`) after :func:`require_columns` has
checked the table it draws; :func:`placeholder` fills a figure slot with
nothing to draw in this run.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from crsbench_lib.report.style import MUTED, apply_style, figure_size


def require_columns(table: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    """Refuse a table that lacks any of ``columns``, naming the figure (``what``) and every missing column."""
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise ValueError(f"{what}: missing column(s) {', '.join(repr(m) for m in missing)}")


def new_figure(height_ratio: float = 0.55, ncols: int = 1, **kwargs: object) -> tuple[Figure, np.ndarray]:
    """A figure of one row of ``ncols`` panels, the book's column wide and ``height_ratio`` of it high, in its style.

    ``kwargs`` go to :func:`matplotlib.pyplot.subplots` (``sharey``, ``width_ratios``); returns the figure and
    its panels.
    """
    apply_style()
    fig, axes = plt.subplots(1, ncols, figsize=figure_size(height_ratio), squeeze=False, **kwargs)
    return fig, axes[0]


def placeholder(message: str) -> Figure:
    """A small figure that only says ``message`` (a figure slot with nothing to draw in this run)."""
    apply_style()
    fig, ax = plt.subplots(figsize=figure_size(0.12))
    ax.text(0.5, 0.5, message, ha="center", va="center", color=MUTED)
    ax.set_axis_off()
    return fig
