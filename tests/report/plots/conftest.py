"""What every figure test shares: pyplot figures closed after each test, the check of a finished figure, its layout."""

from collections.abc import Callable, Sequence

import matplotlib.pyplot as plt
import pytest
from matplotlib.artist import Artist
from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.transforms import Bbox

from crsbench_lib.report import style


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _check(fig: Figure) -> None:
    assert isinstance(fig, Figure)
    width, _ = fig.get_size_inches()
    assert width == pytest.approx(style.BOOK_WIDTH_IN)
    assert fig.axes


@pytest.fixture
def check_figure() -> Callable[[Figure], None]:
    """A book figure: a Figure, the book's column wide, with at least one panel."""
    return _check


class Layout:
    """Where a drawn figure's texts and artists land, in display pixels (the checks of a legible figure)."""

    @staticmethod
    def draw(fig: Figure) -> None:
        """Lay the figure out and draw it once, so every box below is where the reader will see it."""
        fig.canvas.draw()

    @staticmethod
    def boxes(fig: Figure, artists: Sequence[Artist]) -> list[Bbox]:
        """The window extents of ``artists`` that are visible and, for texts, not empty."""
        Layout.draw(fig)
        renderer = fig.canvas.get_renderer()
        shown = [a for a in artists if a.get_visible() and not (isinstance(a, Text) and not a.get_text().strip())]
        return [a.get_window_extent(renderer) for a in shown]

    @staticmethod
    def slanted_boxes(fig: Figure, texts: Sequence[Text]) -> list[Bbox]:
        """Boxes of texts that share one rotation, in a frame turned with them (axis-aligned boxes of slanted
        labels overlap where the letters do not; turned, they overlap only where the letters would).

        Each text must turn about its anchor (``rotation_mode="anchor"``) unless it is not turned at all.
        """
        import numpy as np

        shown = [t for t in texts if t.get_visible() and t.get_text().strip()]
        angles = {t.get_rotation() for t in shown}
        assert len(angles) <= 1, f"texts turned by different angles: {angles}"
        angle = np.deg2rad(angles.pop()) if angles else 0.0
        assert angle == 0.0 or all(t.get_rotation_mode() == "anchor" for t in shown)
        Layout.draw(fig)
        renderer = fig.canvas.get_renderer()
        back = np.array([[np.cos(angle), np.sin(angle)], [-np.sin(angle), np.cos(angle)]])  # turns by -angle
        boxes = []
        for text in shown:
            anchor = np.asarray(text.get_transform().transform(text.get_position()), dtype=float)
            rotation = text.get_rotation()
            text.set_rotation(0)
            flat = text.get_window_extent(renderer)  # the unturned box, about the same anchor
            text.set_rotation(rotation)
            shift = back @ anchor - anchor
            boxes.append(Bbox.from_extents(flat.x0 + shift[0], flat.y0 + shift[1], flat.x1 + shift[0],
                                           flat.y1 + shift[1]))
        return boxes

    @staticmethod
    def overlaps(boxes: Sequence[Bbox], slack: float = 0.5) -> list[tuple[int, int]]:
        """Index pairs of boxes that overlap by more than ``slack`` pixels both ways."""
        pairs = []
        for i in range(len(boxes)):
            for j in range(i + 1, len(boxes)):
                a, b = boxes[i], boxes[j]
                dx = min(a.x1, b.x1) - max(a.x0, b.x0)
                dy = min(a.y1, b.y1) - max(a.y0, b.y0)
                if dx > slack and dy > slack:
                    pairs.append((i, j))
        return pairs

    @staticmethod
    def inside(box: Bbox, frame: Bbox, slack: float = 0.5) -> bool:
        """Whether ``box`` lies within ``frame`` (``slack`` pixels allowed)."""
        return (box.x0 >= frame.x0 - slack and box.x1 <= frame.x1 + slack
                and box.y0 >= frame.y0 - slack and box.y1 <= frame.y1 + slack)


@pytest.fixture
def layout() -> type[Layout]:
    """Boxes of drawn artists, their overlaps and containment (:class:`Layout`)."""
    return Layout
