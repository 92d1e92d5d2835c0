"""The book rendered once per session, from the notebooks' shared execution cache."""

import os
from pathlib import Path

import pytest

#: A built book to read instead of rendering the quick one (see ``built_book``).
BUILT_BOOK_ENV = "CRSBENCH_BUILT_BOOK"


@pytest.fixture(scope="session")
def built_book(book_inputs, tmp_path_factory) -> Path:
    """The whole book rendered once per session (notebooks from the shared execution cache).

    ``CRSBENCH_BUILT_BOOK=DIR`` (a built ``_build/html``) reads that book instead, so the
    reader-like checks can run on the default build: ``make book`` first, then
    ``CRSBENCH_BUILT_BOOK=_build/html pytest -m browser tests/book/test_browser.py``.
    """
    from crsbench_lib.report.book import render_book

    if os.environ.get(BUILT_BOOK_ENV):
        return Path(os.environ[BUILT_BOOK_ENV]).resolve()

    out = tmp_path_factory.getbasetemp() / "book-output"
    return render_book(book_inputs["results_path"], book_inputs["profile"], standard_path=book_inputs["standard_path"],
                       simulated=book_inputs["simulated"], output_root=out, cache=book_inputs["cache"])
