"""Finished figures onto the page: PNG bytes, glued MyST figures, inline display, one stacked figure.

The chapters place every figure through :func:`glue_figure` (a numbered
figure with caption and alt text) or :func:`show`; :func:`stack_figures` joins
several finished figures into one.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure


def figure_png(fig: Figure) -> bytes:
    """The figure as PNG bytes at the book's resolution; closes a pyplot-managed figure."""
    import io

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    if plt.fignum_exists(getattr(fig, "number", -1)):
        plt.close(fig)
    return buffer.getvalue()


def glue_figure(name: str, fig: Figure) -> None:
    """Store a figure in the notebook under ``name`` for a numbered MyST figure (``{glue:figure}``).

    The chapter's markdown places it with a caption, alt text and a label that
    other pages cross-reference (``{numref}``); nothing is displayed where this
    is called.
    """
    from IPython.display import Image
    from myst_nb import glue

    glue(name, Image(data=figure_png(fig), format="png"), display=False)


def show(fig: Figure) -> None:
    """Display a figure once as a PNG output of the current notebook cell, then close it.

    Works the same for pyplot-managed figures and for bare ``Figure`` objects
    (which matplotlib's inline backend would not display on its own), and
    closing prevents the inline backend from showing a pyplot figure twice.
    """
    import io

    import matplotlib.pyplot as plt
    from IPython.display import Image, display

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    display(Image(data=buffer.getvalue(), format="png"))
    if plt.fignum_exists(getattr(fig, "number", -1)):
        plt.close(fig)


def stack_figures(figures: Sequence[Figure], dpi: int = 100) -> Figure:
    """Several finished figures as one, one below the other (left-aligned, white padding).

    The cohort chapter draws one contact sheet per dataset of the run, however
    many there are, and shows them as one numbered figure.

    Parameters
    ----------
    figures : sequence of Figure
        Drawn top to bottom; each is rendered at ``dpi`` and closed if pyplot manages it.
    dpi : int
        Resolution at which each figure is rendered and the result is sized.

    Returns
    -------
    matplotlib.figure.Figure
        Pixel for pixel the stacked renderings.

    Raises
    ------
    ValueError
        If ``figures`` is empty.

    Examples
    --------
    >>> a, b = Figure(figsize=(2, 1)), Figure(figsize=(1, 1))
    >>> [float(v) for v in stack_figures([a, b]).get_size_inches()]
    [2.0, 2.0]
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    if not figures:
        raise ValueError("stack_figures: no figure to stack")
    images = []
    for fig in figures:
        fig.set_dpi(dpi)
        canvas = FigureCanvasAgg(fig)
        canvas.draw()
        images.append(np.asarray(canvas.buffer_rgba())[..., :3].copy())
        if plt.fignum_exists(getattr(fig, "number", -1)):
            plt.close(fig)
    width = max(image.shape[1] for image in images)
    padded = [np.pad(image, ((0, 0), (0, width - image.shape[1]), (0, 0)), constant_values=255) for image in images]
    stacked = np.concatenate(padded, axis=0)
    out = Figure(figsize=(stacked.shape[1] / dpi, stacked.shape[0] / dpi), dpi=dpi)
    ax = out.add_axes((0, 0, 1, 1))
    ax.imshow(stacked, interpolation="nearest")
    ax.set_axis_off()
    return out
