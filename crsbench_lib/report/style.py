"""One visual style for every figure of the book.

The palette is Okabe and Ito's eight colour-blind-safe colours (Okabe & Ito,
"Color Universal Design", 2008; also Wong, Nature Methods 8:441, 2011).
Sequential maps are ``cividis`` (designed for colour-vision deficiency, Nuñez et
al., PLoS ONE 2018) and diverging maps ``vlag``'s blue/red, which stay
distinguishable under deuteranopia. Figures are sized for the book's text
column (about 7 inches at 100 dpi) so labels stay readable without zooming.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib as mpl
from matplotlib.colors import to_rgba

OKABE_ITO: tuple[str, ...] = (
    "#0072B2",  # blue
    "#E69F00",  # orange
    "#009E73",  # bluish green
    "#D55E00",  # vermillion
    "#CC79A7",  # reddish purple
    "#56B4E9",  # sky blue
    "#F0E442",  # yellow
    "#000000",  # black
)
MUTED = "#9A9A9A"  # encoders that are not highlighted
HIGHLIGHT = "#D55E00"  # the reversed pairs, the failing cells
EMPHASIS = "#0072B2"
SEQUENTIAL_CMAP = "cividis"
DIVERGING_CMAP = "vlag"

BOOK_WIDTH_IN = 7.0  # the text column of the Jupyter Book theme at 100 dpi
DPI = 110
FONT_SIZE = 9.5

AXIS_NAMES: dict[str, str] = {
    "D": "Discrimination",
    "C": "Calibration",
    "L": "Label efficiency",
    "R": "Robustness",
}


def apply_style() -> None:
    """Set matplotlib's defaults for the book (idempotent)."""
    mpl.rcParams.update(
        {
            "figure.dpi": DPI,
            "savefig.dpi": DPI,
            "savefig.bbox": "tight",
            "font.size": FONT_SIZE,
            "axes.titlesize": FONT_SIZE + 1,
            "axes.labelsize": FONT_SIZE,
            "xtick.labelsize": FONT_SIZE - 1,
            "ytick.labelsize": FONT_SIZE - 1,
            "legend.fontsize": FONT_SIZE - 1,
            "legend.frameon": False,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "axes.grid": False,
            "axes.prop_cycle": mpl.cycler(color=list(OKABE_ITO)),
            "image.cmap": SEQUENTIAL_CMAP,
            "figure.constrained_layout.use": True,
        }
    )


def figure_size(height_ratio: float = 0.55, width: float = BOOK_WIDTH_IN) -> tuple[float, float]:
    """(width, height) in inches for a figure that fills the book's column."""
    if height_ratio <= 0:
        raise ValueError(f"height_ratio must be positive, got {height_ratio!r}")
    return (width, width * height_ratio)


def encoder_colours(encoders: Sequence[str], highlight: Sequence[str] = ()) -> dict[str, tuple[float, float, float, float]]:
    """A colour per encoder: palette colours for highlighted ones (in order), grey for the rest.

    With nothing highlighted every encoder gets a palette colour, cycling when
    there are more encoders than colours (pair the colour with a label then).
    """
    chosen = [e for e in highlight if e in set(encoders)]
    if not chosen:
        return {e: to_rgba(OKABE_ITO[i % len(OKABE_ITO)]) for i, e in enumerate(encoders)}
    colours = {e: to_rgba(MUTED, 0.8) for e in encoders}
    for i, e in enumerate(chosen):
        colours[e] = to_rgba(OKABE_ITO[i % len(OKABE_ITO)])
    return colours
