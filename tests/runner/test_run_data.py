"""A finished run's datasets, reopened from its manifest for the cohort chapter's pictures."""

from __future__ import annotations

import pytest

from crsbench_lib.errors import DataError
from crsbench_lib.results.io import MANIFEST_FILE
from crsbench_lib.runner import run_data
from tests.runner.tiny_runs import tiny_run


def test_specs_resolve_relative_roots_against_the_profile_file(tmp_path):
    specs = run_data.run_dataset_specs(tiny_run(tmp_path))
    assert [s.name for s in specs] == ["pneumoniamnist", "derm"]
    assert specs[0].options["root"] == tmp_path / "profiles" / "data"


def test_without_a_manifest_there_are_no_specs(tmp_path):
    with pytest.raises(DataError, match=f"{MANIFEST_FILE}: no readable run manifest"):
        run_data.run_dataset_specs(tmp_path)
