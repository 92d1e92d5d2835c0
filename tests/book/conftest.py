"""The book rendered once per session, from the notebooks' shared execution cache."""

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def built_book(book_inputs, tmp_path_factory) -> Path:
    """The whole book rendered once per session (notebooks from the shared execution cache)."""
    from crsbench_lib.report.book import render_book

    out = tmp_path_factory.getbasetemp() / "book-output"
    return render_book(book_inputs["results_path"], book_inputs["profile"], standard_path=book_inputs["standard_path"],
                       simulated=book_inputs["simulated"], output_root=out, cache=book_inputs["cache"])
