"""A finished run's datasets, reopened from its manifest for the cohort chapter's pictures (torch-free)."""

from __future__ import annotations

import numpy as np
import pytest

from crsbench_lib.cohort import run_sources
from crsbench_lib.data.base import ImageDataset
from crsbench_lib.errors import DataError, NotebookError
from crsbench_lib.results.io import MANIFEST_FILE
from tests.runner.tiny_runs import tiny_run


def test_pictures_come_from_the_run_s_files_and_phantoms_by_name(tmp_path):
    sources = run_sources.picture_sources(tiny_run(tmp_path), ["derm", "pneumoniamnist"])
    assert list(sources) == ["pneumoniamnist", "derm"]  # profile order
    assert isinstance(sources["pneumoniamnist"], ImageDataset) and sources["derm"] == "derm"
    assert len(sources["pneumoniamnist"].source_split("test")) == 4
    assert list(run_sources.picture_sources(tiny_run(tmp_path / "again"), ["derm"])) == ["derm"]


def test_without_a_manifest_only_phantoms_have_pictures(tmp_path):
    assert run_sources.picture_sources(tmp_path, ["derm", "mine"]) == {"derm": "derm"}
    with pytest.raises(DataError, match=f"{MANIFEST_FILE}: no readable run manifest"):
        run_sources._run_manifest(tmp_path)


def test_pick_source_names_the_parameter_and_the_valid_datasets():
    assert run_sources.pick_source({}, None, "corruption_dataset") is None
    assert run_sources.pick_source({"a": "a", "b": "b"}, "b", "corruption_dataset") == "b"
    with pytest.raises(NotebookError, match="parameter 'corruption_dataset': unknown dataset 'c'; valid: a, b"):
        run_sources.pick_source({"a": "a", "b": "b"}, "c", "corruption_dataset")


def test_the_pictures_are_the_images_the_run_read(tmp_path):
    from crsbench_lib.runner import run_data
    from crsbench_lib.runner.cell import load_dataset

    run = tiny_run(tmp_path)
    spec = run_data.run_dataset_specs(run)[0]
    picture = run_sources.picture_sources(run, [spec.name])[spec.name]
    ran = load_dataset(spec)
    for split in ("train", "test"):
        np.testing.assert_array_equal(picture.source_split(split).images, ran.source_split(split).images)
    assert picture.name == ran.name == spec.name
