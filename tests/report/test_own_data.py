"""What the book says about a run's own data: read from the manifest, computed from the table."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from crsbench_lib.report import own_data
from crsbench_lib.report.own_data import RunData, RunDataset
from crsbench_lib.results.io import MANIFEST_FILE
from crsbench_lib.scoring.fit import FREEZE_HINT

MEDMNIST = RunDataset("dermamnist", "medmnist", "dermatology", "MedMNIST flag dermamnist at 28 px")
MANIFEST = RunDataset("lesions", "manifest", "dermatology", "CSV manifest manifest.csv")
PHANTOM = RunDataset("cxr", "phantom", "radiology", "procedural phantom")


def write_manifest(folder, datasets, source="/home/someone/configs/mine.yaml"):
    body = {"profile": "mine", "config_source": source, "config": {"datasets": datasets},
            "dataset_domains": {d["name"]: d.get("domain", "radiology") for d in datasets}}
    (folder / MANIFEST_FILE).write_text(json.dumps(body))
    return folder / "results.parquet"


def test_the_manifest_names_each_dataset_and_its_source_without_paths(tmp_path):
    results = write_manifest(tmp_path, [
        {"kind": "medmnist", "name": "dermamnist", "flag": "dermamnist", "root": "/data/x", "size": 28,
         "domain": "dermatology"},
        {"kind": "manifest", "name": "lesions", "csv": "/data/y/lesions.csv", "domain": "dermatology"},
    ])
    run = own_data.read_run_data(results)
    assert run == RunData("mine", "mine.yaml", (
        RunDataset("dermamnist", "medmnist", "dermatology", "MedMNIST flag dermamnist at 28 px"),
        RunDataset("lesions", "manifest", "dermatology", "CSV manifest lesions.csv"),
    ))
    assert not run.simulated
    text = own_data.describe_datasets(run)
    assert text.startswith("This build reads 2 datasets: `dermamnist` (dermatology, MedMNIST flag dermamnist")
    assert "/data" not in text and "/home" not in own_data.rebuild_markdown(run, "mine")


def test_no_or_broken_manifest_is_none(tmp_path):
    assert own_data.read_run_data(tmp_path / "results.parquet") is None
    (tmp_path / MANIFEST_FILE).write_text("{not json")
    assert own_data.read_run_data(tmp_path / "results.parquet") is None
    assert own_data.cohort_method(None) == own_data.NO_MANIFEST == own_data.intro_text(None).split("recorded. ", 1)[1]


def test_the_phantom_cohort_keeps_its_phantom_text_and_user_data_never_gets_it():
    phantom = RunData("default", "default.yaml", (PHANTOM,))
    assert phantom.simulated
    assert own_data.cohort_method(phantom) == own_data.PHANTOM_METHOD
    assert own_data.cohort_limits(phantom) == own_data.PHANTOM_LIMITS
    assert own_data.intro_text(phantom) == ("**This edition:** the simulated default edition (profile `default`, the "
                                             "phantom cohort). " + own_data.PHANTOM_INTRO)
    mine = RunData("mine", "mine.yaml", (MEDMNIST, MANIFEST))
    for text in (own_data.cohort_method(mine), own_data.cohort_limits(mine), own_data.intro_text(mine),
                 own_data.sheets_caption(mine), own_data.study_label(mine)):
        assert "phantom" not in text and "fundus" not in text and "chest" not in text, text
    assert "None of them is simulated" in own_data.cohort_method(mine)
    assert "`dermamnist` and `lesions`" in own_data.study_label(mine)


def test_a_mixed_run_says_which_datasets_are_simulated():
    mixed = RunData("mix", "mix.yaml", (MEDMNIST, PHANTOM))
    assert not mixed.simulated
    assert "1 of 2 are simulated phantoms (cxr)" in own_data.cohort_method(mixed)


def test_site_text_and_caption_follow_the_datasets_with_a_second_site():
    assert "no shift term" in own_data.site_text([])
    assert own_data.site_text(["cxr"]).startswith("`cxr` has a second site")
    assert own_data.site_text(["a", "b"]).startswith("`a` and `b` have a second site")
    assert own_data.site_caption([]).startswith("No dataset of this run has a second site")


def test_fit_report_fits_its_own_standard(table, standard):
    lines = own_data.fit_report(table, standard)
    assert lines[0].startswith("The table fits standard test-v1")
    # The synthetic table has a second site on cxr only, so the shift term is partial.
    assert lines[-1].startswith("R: the shift term is measured on cxr only") and lines[-1].endswith(".")
    frozen = table[table["condition"] != "shift"]
    assert own_data.fit_report(frozen, standard)[-1].startswith("Terms this run cannot measure: R: no shift term")


def test_fit_report_warns_names_the_axis_and_the_remedy(table, standard):
    # A calibration anchor no encoder reaches: every C lies beyond the worst anchor.
    tight = replace(standard, anchors={**standard.anchors, "C": (1e-9, 0.0)})
    markdown = own_data.fit_markdown(table, tight)
    assert "- axis C: " in markdown and "beyond the worst anchor" in markdown
    assert FREEZE_HINT.split("'")[0] in markdown
    # Commands are code spans, so that Sphinx does not typeset '--version' as an en dash.
    assert "`crsbench freeze RESULTS --version my-v1" in markdown and "'crsbench" not in markdown


def test_absent_terms_are_listed(table, standard):
    no_shift = table[table["condition"] != "shift"]
    assert own_data.fit_report(no_shift, standard)[-1] == (
        "Terms this run cannot measure: R: no shift term (no dataset has a second site).")


@pytest.mark.parametrize(("profile", "command"), [("default", "crsbench book --profile default"),
                                                   ("mine", "crsbench book --config mine.yaml")])
def test_rebuild_command(profile, command):
    run = RunData(profile, f"{profile}.yaml", (MEDMNIST,))
    assert f"`{command}`" in own_data.rebuild_markdown(run, profile)
    assert "crsbench book --profile quick" in own_data.rebuild_markdown(None, "quick")


def test_build_limits_are_the_simulation_s_on_the_phantom_cohort_and_the_run_s_otherwise(table):
    from crsbench_lib.report.differences import SIMULATION_LIMITS

    phantom = own_data.build_limits(RunData("default", "default.yaml", (PHANTOM,)), table)
    assert phantom.values.tolist() == [list(row) for row in SIMULATION_LIMITS]
    assert own_data.limits_caption(RunData("default", "default.yaml", (PHANTOM,))) == "Limits of the simulated cohort"
    mine = RunData("mine", "mine.yaml", (MEDMNIST,))
    no_shift = table[table["condition"] != "shift"]
    limits = own_data.build_limits(mine, no_shift).set_index("aspect")["what this build cannot represent"]
    assert list(limits.index) == ["datasets", "encoders", "shift", "corruptions", "scale"]
    assert limits["shift"] == own_data.site_text([])
    n_test = no_shift.loc[no_shift["condition"] == "clean", "n_test"].max()
    assert limits["scale"].startswith(f"{no_shift['seed'].nunique()} seeds and ") and str(n_test) in limits["scale"]
    assert "phantom" not in " ".join(limits) and "simulat" not in " ".join(limits)
    assert own_data.limits_caption(mine) == "Limits of this run"


def test_reproduction_markdown_compares_with_the_shipped_summary(tmp_path) -> None:
    from crsbench_lib.report.own_data import reproduction_markdown
    from crsbench_lib.results.synthetic import synthetic_results
    from crsbench_lib.scoring.reproduce import summarise_run, summary_filename, write_summary

    table = synthetic_results(n_encoders=2, corruptions=("noise",))
    assert "ships no reference-run summary for profile `demo`" in reproduction_markdown(table, "demo", folder=tmp_path)
    write_summary(summarise_run(table, "demo"), tmp_path / summary_filename("demo"))
    text = reproduction_markdown(table, "demo", folder=tmp_path)
    assert text.startswith("This build reproduces the reference run of profile demo exactly")
    assert "reference-run-demo.json" in text
    moved = table.assign(auroc=table["auroc"] - 0.05)
    assert "does not reproduce" in reproduction_markdown(moved, "demo", folder=tmp_path)


def test_the_zoo_checks_are_targets_on_the_phantom_cohort_and_measurements_on_user_data():
    phantom = RunData("default", None, (RunDataset("derm", "phantom", "dermatology", "procedural phantom"),))
    mine = RunData("mine", "mine.yaml", (RunDataset("breastmnist", "medmnist", "ultrasound", "MedMNIST flag"),),
                   data_checks={"breastmnist": {"class_names": ["malignant", "normal or benign"]}})
    assert own_data.zoo_checks_intro(phantom) == own_data.ZOO_CHECKS_PHANTOM == own_data.zoo_checks_intro(None)
    assert "targets" not in own_data.zoo_checks_intro(mine) and "simulated" not in own_data.zoo_checks_intro(mine)
    assert own_data.class_names_of(mine) == {"breastmnist": ("malignant", "normal or benign")}
    assert own_data.class_names_of(phantom) == {} == own_data.class_names_of(None)


def test_measured_checks_keep_measurements_and_say_them_per_dataset():
    import pandas as pd

    from crsbench_lib.report.world import measured_checks

    checks = pd.DataFrame({
        "check": ["best broad AUROC", "margin over pixels", "margin over pca", "highest clean AUROC", "LoRA runs",
                  "best broad AUROC", "margin over pixels", "margin over pca", "highest clean AUROC"],
        "dataset": ["a", "a", "a", "a", "all", "b", "b", "b", "b"],
        "value": [0.8, 0.05, -0.02, 0.83, 0, 0.7, 0.0, 0.1, 0.75], "rule": "", "holds": False})
    table = measured_checks(checks)
    assert table["dataset"].tolist() == ["a", "b"] and "LoRA runs" not in table.columns
    text = own_data.describe_measured_checks(table)
    assert text.startswith("On `a` the best broad pretrained encoder reaches a clean AUROC of 0.800, 0.050 above "
                           "the pixel probe and 0.020 below the PCA probe; the highest of any encoder is 0.830.")
    assert "On `b` the best broad pretrained encoder reaches a clean AUROC of 0.700, 0.000 above" in text
    missing = table.assign(**{"best broad AUROC": [float("nan"), 0.7]})
    assert own_data.describe_measured_checks(missing).startswith("On `a` no broad pretrained encoder was run.")


def test_the_phantom_intro_does_not_call_its_procedural_images_real():
    """Lecturer's item 23: "procedural ... images" then "The pipeline is real -- real images" contradicted itself."""
    text = own_data.PHANTOM_INTRO
    assert "procedural" in text and "real images" not in text
    assert "The images are generated, not acquired" in text and "simulated images" in text
