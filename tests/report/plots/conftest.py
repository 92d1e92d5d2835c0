"""What every figure test shares: pyplot figures closed after each test, and the check of a finished figure."""

from collections.abc import Callable

import matplotlib.pyplot as plt
import pytest
from matplotlib.figure import Figure

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
