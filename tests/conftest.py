"""Session-wide fixtures shared across the test tree.

``quick_run`` runs the shipped ``quick`` profile once per session through the
real pipeline (phantom cohort, encoder zoo, probes, LoRA arm) into a private
cache, so every end-to-end test (notebooks, book build, browser) reads the
same table. Set ``CRSBENCH_TEST_CACHE`` to a folder to keep that cache between
local sessions.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import settings

# No per-example wall-clock deadline: on a loaded machine (CI on a busy developer
# box) a slow example is not a failure. Tests that set their own settings inherit this.
settings.register_profile("crsbench", deadline=None)
settings.load_profile("crsbench")


@pytest.fixture(scope="session")
def quick_run(tmp_path_factory: pytest.TempPathFactory):
    from crsbench_lib.runner.run import run_profile

    kept = os.environ.get("CRSBENCH_TEST_CACHE")
    cache = Path(kept) if kept else tmp_path_factory.mktemp("quick-cache")
    patch = pytest.MonkeyPatch()
    # Notebook kernels inherit the environment, so they see the same cache.
    patch.setenv("CRSBENCH_CACHE", str(cache))
    try:
        yield run_profile("quick", out_dir=cache / "runs" / "quick", progress=False)
    finally:
        patch.undo()


@pytest.fixture(scope="session")
def quick_results_path(quick_run) -> Path:
    return quick_run.results_path


@pytest.fixture(scope="session")
def book_inputs(quick_results_path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """What the notebook and book tests execute against: the quick run, and one
    session-wide execution cache, so notebooks executed by tests/notebooks are
    reused (cache hits) by the book build of tests/book."""
    base = tmp_path_factory.getbasetemp() / "book-inputs"
    base.mkdir(exist_ok=True)
    return {"results_path": str(quick_results_path), "profile": "quick", "standard_path": None, "simulated": True,
            "cache": base / "notebook-cache", "executed": base / "executed"}


@pytest.fixture(scope="session")
def synthetic_table() -> pd.DataFrame:
    """8 encoders x 3 datasets x 3 seeds, two corruptions (the shape of a real run, small)."""
    from crsbench_lib.results.synthetic import synthetic_results

    return synthetic_results(n_encoders=8, corruptions=("noise", "blur"), random_state=3)


@pytest.fixture(scope="session")
def frozen_standard(synthetic_table: pd.DataFrame):
    """A standard frozen from :func:`synthetic_table` with the template's settings."""
    from crsbench_lib.scoring.freeze import freeze_standard

    return freeze_standard(synthetic_table, "test-v1", created="2026-11-30T00:00:00Z")
