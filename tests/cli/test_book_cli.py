"""``crsbench book``: which profile and cohort the book shows for a given table."""

from __future__ import annotations

import json

from crsbench_lib.cli.book import book_identity
from crsbench_lib.results.io import MANIFEST_FILE
from crsbench_lib.runner.config import load_profile


def manifest(folder, kinds, profile="mine"):
    folder.mkdir(parents=True, exist_ok=True)
    datasets = [{"kind": kind, "name": f"d{i}"} for i, kind in enumerate(kinds)]
    (folder / MANIFEST_FILE).write_text(json.dumps({"profile": profile, "config": {"datasets": datasets}}))
    return folder / "results.parquet"


def test_the_profile_s_own_run_is_described_by_the_profile():
    quick = load_profile("quick")
    assert book_identity(quick, explicit=True, results_path=None) == ("quick", True)


def test_a_given_table_is_described_by_its_manifest_not_by_the_default_profile(tmp_path):
    default = load_profile("default")
    results = manifest(tmp_path / "run", ["medmnist", "manifest"], profile="medmnist-cpu")
    assert book_identity(default, explicit=False, results_path=results) == ("medmnist-cpu", False)
    # A profile named on the command line keeps its name; the cohort is still the table's.
    assert book_identity(default, explicit=True, results_path=results) == ("default", False)
    phantoms = manifest(tmp_path / "phantoms", ["phantom"], profile="quick")
    assert book_identity(default, explicit=False, results_path=phantoms) == ("quick", True)


def test_without_a_manifest_the_cohort_is_not_recorded_unless_a_profile_is_named(tmp_path):
    default = load_profile("default")
    results = tmp_path / "results.parquet"
    assert book_identity(default, explicit=False, results_path=results) == ("default", None)
    assert book_identity(default, explicit=True, results_path=results) == ("default", True)


def test_only_the_default_phantom_edition_goes_to_the_project_root(tmp_path):
    from crsbench_lib.cli.book import default_output_root

    results = tmp_path / "runs" / "x" / "results.parquet"
    assert default_output_root("default", True, results) is None
    # A user's data (or an unknown cohort), and any other profile, go beside their run.
    assert default_output_root("default", False, results) == results.parent
    assert default_output_root("default", None, results) == results.parent
    assert default_output_root("medmnist-cpu", False, results) == results.parent
    assert default_output_root("quick", True, results) == results.parent


def test_help_lists_every_shipped_profile(capsys):
    import pytest

    from crsbench_lib.cli import main
    from crsbench_lib.paths import shipped_profiles

    assert {"quick", "default", "medmnist-cpu", "paper"} <= set(shipped_profiles())
    for command in ("run", "book"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        text = " ".join(capsys.readouterr().out.split())
        assert all(name in text for name in shipped_profiles()), command
