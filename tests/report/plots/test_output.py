"""Finished figures reach the page once, as PNG, and stack pixel for pixel."""

import matplotlib.pyplot as plt
import pytest
from matplotlib.figure import Figure

from crsbench_lib.report.plots import output as plots


def test_show_displays_png_once(monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj: shown.append(obj))
    fig, _ = plt.subplots()
    plots.show(fig)
    assert len(shown) == 1 and shown[0].data[:8] == b"\x89PNG\r\n\x1a\n"
    assert not plt.fignum_exists(fig.number)


def test_stack_figures_keeps_every_pixel_row_and_the_widest_width():
    top, bottom = Figure(figsize=(3, 1)), Figure(figsize=(2, 2))
    top.patch.set_facecolor("black")
    stacked = plots.stack_figures([top, bottom], dpi=50)
    assert [float(v) for v in stacked.get_size_inches()] == [3.0, 3.0]
    image = stacked.axes[0].images[0].get_array()
    assert image.shape == (150, 150, 3)
    assert (image[:50] == 0).all()  # the first figure, black, on top
    assert (image[50:, 100:] == 255).all()  # the narrower one padded with white
    with pytest.raises(ValueError, match="no figure to stack"):
        plots.stack_figures([])
