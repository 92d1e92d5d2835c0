import pytest

from crsbench_lib.errors import NotebookError, ReferenceStandardError
from crsbench_lib.report import context
from crsbench_lib.standard import save_standard


def test_build_standard_when_the_panel_is_empty(results_file, table, tmp_path):
    from crsbench_lib.standard import load_template

    template = tmp_path / "template.yaml"
    save_standard(load_template(), template)
    ctx = context.load_context(results_file, profile="quick", standard_path=template)
    assert ctx.standard.version.startswith(f"{load_template().version}{context.BUILD_SUFFIX}")
    assert set(ctx.standard.panel_names) == set(table["encoder"])
    again = context.load_context(results_file, profile="quick", standard_path=template)
    assert again.standard.content_hash == ctx.standard.content_hash  # deterministic
    assert ctx.provenance.standard_version == ctx.standard.version


def test_given_standard_is_used_as_is(results_file, standard, tmp_path):
    path = save_standard(standard, tmp_path / "s.yaml")
    ctx = context.load_context(results_file, standard_path=path)
    assert ctx.standard.version == "test-v1"


def test_filters_and_their_errors(results_file, standard, tmp_path):
    path = save_standard(standard, tmp_path / "s.yaml")
    ctx = context.load_context(results_file, standard_path=path, datasets=["derm", "cxr"], seeds=[0, 1], encoders=["enc00", "enc01"])
    assert set(ctx.results["dataset"]) == {"derm", "cxr"} and set(ctx.results["seed"]) == {0, 1}
    with pytest.raises(NotebookError, match="parameter 'datasets': unknown value 'skin'; valid: cxr, derm, fundus"):
        context.load_context(results_file, standard_path=path, datasets=["skin"])
    with pytest.raises(NotebookError, match="parameter 'seeds': empty list"):
        context.load_context(results_file, standard_path=path, seeds=[])
    with pytest.raises(NotebookError, match="parameter 'results_path': no results table"):
        context.load_context(tmp_path / "missing.parquet")


def test_what_if_overrides(results_file, standard, table, tmp_path):
    path = save_standard(standard, tmp_path / "s.yaml")
    ctx = context.load_context(results_file, standard_path=path, weights={"dominance": 0.2, "balance": 0.5, "floor": 0.3})
    assert ctx.standard.version == "test-v1+weights"
    assert ctx.standard.weights["balance"] == 0.5
    anchored = context.override_standard(standard, table, anchors={"C": [0.3, 0.0]})
    assert anchored.version == "test-v1+anchors" and anchored.anchors["C"] == (0.3, 0.0)
    assert anchored.panel_names == standard.panel_names
    assert not (anchored.panel_profiles == standard.panel_profiles).all()  # the panel is re-normalised
    with pytest.raises(NotebookError, match="unknown key 'gain'"):
        context.override_standard(standard, table, weights={"gain": 1.0})
    with pytest.raises(NotebookError, match="needs \\[worst, best\\]"):
        context.override_standard(standard, table, anchors={"C": [0.3]})
    with pytest.raises(ReferenceStandardError):
        context.override_standard(standard, table, weights={"dominance": 0.9})  # weights no longer sum to 1


def test_simulated_is_read_from_the_run_manifest(results_file, standard, tmp_path):
    import json
    import shutil

    path = save_standard(standard, tmp_path / "s.yaml")
    run = tmp_path / "run"
    run.mkdir()
    results = shutil.copy(results_file, run / "results.parquet")
    assert context.load_context(results, standard_path=path).provenance.simulated is None
    manifest = {"config": {"datasets": [{"kind": "phantom", "name": "derm"}, {"kind": "phantom", "name": "cxr"}]}}
    (run / "manifest.json").write_text(json.dumps(manifest))
    assert context.load_context(results, standard_path=path).provenance.simulated is True
    manifest["config"]["datasets"].append({"kind": "medmnist", "name": "derma"})
    (run / "manifest.json").write_text(json.dumps(manifest))
    assert context.load_context(results, standard_path=path).provenance.simulated is False
    assert context.load_context(results, standard_path=path, simulated=True).provenance.simulated is True


def test_build_standard_ignores_chapter_filters(results_file, tmp_path):
    from crsbench_lib.standard import load_template

    template = save_standard(load_template(), tmp_path / "template.yaml")
    whole = context.load_context(results_file, standard_path=template)
    filtered = context.load_context(results_file, standard_path=template, datasets=["derm"], encoders=["enc00", "enc01"])
    assert filtered.standard.content_hash == whole.standard.content_hash


def test_a_broken_default_standard_is_an_error_not_a_fallback(table, tmp_path, monkeypatch):
    standards = tmp_path / "standards"
    standards.mkdir()
    monkeypatch.setattr(context, "standards_dir", lambda: standards)
    assert context.resolve_standard(None, table).panel_names  # missing default: template + build panel
    (standards / context.DEFAULT_FILENAME).write_text("version: broken\nweights: {dominance: 2}\n")
    with pytest.raises(ReferenceStandardError):
        context.resolve_standard(None, table)


def test_portable_paths_never_carry_the_build_machine(tmp_path, monkeypatch):
    from crsbench_lib.paths import project_root
    from crsbench_lib.report import context

    monkeypatch.setenv("CRSBENCH_CACHE", str(tmp_path / "cache"))
    default = context.default_results_path("quick")
    assert context.portable_path(default, "quick") is None
    inside = project_root() / "standards" / "crs-default-v1.yaml"
    assert context.portable_path(inside, "quick") == "standards/crs-default-v1.yaml"
    outside = tmp_path / "mine.parquet"
    assert context.portable_path(outside, "quick") == str(outside.resolve())
    assert context.portable_path(None, "quick") is None


def test_relative_inputs_resolve_from_the_project_root(tmp_path, monkeypatch):
    from crsbench_lib.paths import project_root
    from crsbench_lib.report import context

    monkeypatch.chdir(tmp_path)
    assert context.resolve_input_path("standards/crs-default-v1.yaml") == project_root() / "standards" / "crs-default-v1.yaml"
    (tmp_path / "here.csv").write_text("x")
    assert context.resolve_input_path("here.csv") == __import__("pathlib").Path("here.csv")
    assert context.resolve_input_path(tmp_path / "abs.csv") == tmp_path / "abs.csv"


def test_prediction_arrays_follow_the_run_folder_and_the_filters(tmp_path):
    from crsbench_lib.evaluation.cell import rows_from_predictions
    from crsbench_lib.results.io import write_results
    from crsbench_lib.results.predictions import PREDICTIONS_DIR, write_predictions
    from crsbench_lib.scoring.axes import encoder_profiles, raw_axes
    from tests.scoring.test_bootstrap_two_level import normalised
    from tests.scoring.test_bootstrap_two_level import standard as two_level_standard
    from tests.scoring.test_bootstrap_two_level import synthetic_predictions

    predictions = synthetic_predictions(n=30, n_corrupt=20)
    table = rows_from_predictions(predictions)
    run = tmp_path / "run"
    results = write_results(table, run / "results.parquet")
    for dataset in ("derm", "cxr"):
        write_predictions([p for p in predictions if p.meta["dataset"] == dataset], run / PREDICTIONS_DIR / f"{dataset}.parquet")
    profiles = encoder_profiles(raw_axes(table, label_fractions=(1.0, 0.5, 0.1)))
    standard = save_standard(two_level_standard({e: normalised(profiles.loc[e].to_numpy()) for e in profiles.index}), tmp_path / "s.yaml")
    ctx = context.load_context(results, standard_path=standard, encoders=["alpha", "delta"], seeds=[1, 2], datasets=["derm"])
    assert ctx.run_dir == run
    arrays = context.prediction_arrays(ctx)
    assert list(arrays) == ["derm"]
    assert arrays["derm"].encoders == ("alpha", "delta") and arrays["derm"].seeds == (1, 2)


def test_a_chapter_that_names_no_standard_takes_the_one_its_run_chose(results_file, standard, tmp_path):
    import json
    import shutil

    # A run folder of its own (the session's table is shared: nothing may be written beside it).
    results_file = shutil.copy(results_file, tmp_path / "results.parquet")

    from crsbench_lib.results.io import MANIFEST_FILE, OWN_STANDARD_FILE
    from crsbench_lib.standard import load_template, template_standard_path

    # No manifest, no file beside: the shipped default (None).
    assert context.run_standard(results_file) is None
    # A run whose profile named none records the template: the chapter freezes from the table, as the book does.
    (results_file.parent / MANIFEST_FILE).write_text(json.dumps({"standard": {"path": str(template_standard_path())}}))
    assert context.run_standard(results_file) == template_standard_path()
    assert context.load_context(results_file).standard.version.startswith(load_template().version + context.BUILD_SUFFIX)
    # The file the run wrote beside its table wins.
    save_standard(standard, results_file.parent / OWN_STANDARD_FILE)
    assert context.run_standard(results_file) == results_file.parent / OWN_STANDARD_FILE
    assert context.load_context(results_file).standard.version == "test-v1"
