"""Shared fixtures of the registry tests: a small synthetic table and standards frozen from it."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pandas as pd
import pytest

from crsbench_lib.results.io import write_results
from crsbench_lib.results.synthetic import synthetic_results
from crsbench_lib.scoring.freeze import freeze_standard
from crsbench_lib.standard import ReferenceStandard, load_template, save_standard

SMALL_GRID = dict(
    n_encoders=8,
    seeds=(0, 1),
    corruptions=("noise", "blur"),
    severities=(1, 3),
    arms=("frozen", "lora"),
)


@pytest.fixture(scope="session")
def small_results() -> pd.DataFrame:
    """8 encoders x 3 datasets x 2 seeds, both arms (synthetic, for tests only)."""
    return synthetic_results(**SMALL_GRID, random_state=7)


@pytest.fixture(scope="session")
def standard_v1(small_results: pd.DataFrame) -> ReferenceStandard:
    """A standard frozen from the first three encoders with the template's settings."""
    return freeze_standard(small_results, "test-v1", panel=["enc00", "enc01", "enc02"], created="2026-01-01T00:00:00Z")


@pytest.fixture(scope="session")
def standard_v2(small_results: pd.DataFrame) -> ReferenceStandard:
    """A second version: tighter D and L anchors (so the best ones saturate), another panel."""
    template = load_template()
    anchors = dict(template.anchors)
    anchors["D"] = (0.5, 0.8)
    anchors["L"] = (0.5, 0.9)
    base = dataclasses.replace(template, anchors=anchors)
    return freeze_standard(small_results, "test-v2", panel=["enc03", "enc04"], base=base,
                           created="2026-01-02T00:00:00Z")


@pytest.fixture(scope="session")
def files(tmp_path_factory: pytest.TempPathFactory, small_results: pd.DataFrame,
          standard_v1: ReferenceStandard, standard_v2: ReferenceStandard) -> dict[str, Path]:
    """The table as Parquet and the two standards as YAML files."""
    root = tmp_path_factory.mktemp("registry-inputs")
    return {
        "results": write_results(small_results, root / "results.parquet"),
        "v1": save_standard(standard_v1, root / "test-v1.yaml"),
        "v2": save_standard(standard_v2, root / "test-v2.yaml"),
    }


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """Where a fresh registry goes."""
    return tmp_path / "registry.sqlite"
