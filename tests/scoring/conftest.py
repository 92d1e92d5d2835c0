"""Shared fixtures of the scoring tests: a small synthetic table and a standard frozen from it."""

from __future__ import annotations

import pandas as pd
import pytest

from crsbench_lib.results.synthetic import synthetic_results
from crsbench_lib.scoring.standard import ReferenceStandard, freeze_standard


@pytest.fixture(scope="session")
def synthetic_table() -> pd.DataFrame:
    """8 encoders x 3 datasets x 3 seeds, two corruptions (the shape of a real run, small)."""
    return synthetic_results(n_encoders=8, corruptions=("noise", "blur"), random_state=3)


@pytest.fixture(scope="session")
def frozen_standard(synthetic_table: pd.DataFrame) -> ReferenceStandard:
    """A standard frozen from :func:`synthetic_table` with the template's settings."""
    return freeze_standard(synthetic_table, "test-v1", created="2026-11-30T00:00:00Z")
