"""Inputs of the notebook tests: a results table and a session-wide execution cache.

The table is the quick profile's when the suite provides it (the session
fixture ``quick_results`` of tests/conftest.py), else the synthetic stand-in.
tests/book/conftest.py uses the same folders, so notebooks executed here are
reused (cache hits) by the book build test in the same session.
"""

from pathlib import Path

import pytest


def _book_inputs(request, tmp_path_factory) -> dict:
    base = tmp_path_factory.getbasetemp() / "book-inputs"
    base.mkdir(exist_ok=True)
    try:
        results = Path(request.getfixturevalue("quick_results_path"))
        profile = "quick"
    except pytest.FixtureLookupError:
        from crsbench_lib.results.io import write_results
        from crsbench_lib.results.synthetic import synthetic_results

        results = base / "synthetic-results.parquet"
        if not results.is_file():
            write_results(synthetic_results(arms=("frozen", "lora")), results)
        profile = "synthetic"
    return {"results_path": str(results), "profile": profile, "standard_path": None, "simulated": True,
            "cache": base / "notebook-cache", "executed": base / "executed"}


@pytest.fixture(scope="session")
def book_inputs(request, tmp_path_factory) -> dict:
    return _book_inputs(request, tmp_path_factory)
