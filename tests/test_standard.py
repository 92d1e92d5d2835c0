"""The reference-standard file format: template, round trip, validation, hashes."""

import re

import numpy as np
import pytest
import yaml

from crsbench_lib.errors import ReferenceStandardError
from crsbench_lib.paths import PACKAGE_DIR
from crsbench_lib.standard import (
    AXES,
    AxisScales,
    DEFAULT_FILENAME,
    DEFAULT_STANDARD,
    ReferenceStandard,
    RobustnessComposite,
    default_standard_path,
    load_standard,
    load_template,
    results_hash,
    save_standard,
    standard_from_dict,
)


def test_template_holds_the_method_defaults():
    template = load_template()
    assert template.version == "crs-template"
    # L and R on the chance scales (method amendment 14), anchored at the scales' own ends.
    assert template.anchors == {"D": (0.5, 1.0), "C": (0.2, 0.0), "L": (0.0, 1.0), "R": (1.0, 0.0)}
    assert template.axis_scales == AxisScales("chance", "chance", 0.05)
    assert template.weights == {"dominance": 0.3, "balance": 0.4, "floor": 0.3}
    assert template.label_fractions == (1.0, 0.25, 0.1, 0.05, 0.01)
    assert template.ece_bins == 15
    assert template.panel_names == ()


def test_template_cannot_score():
    with pytest.raises(ReferenceStandardError, match="empty panel"):
        load_template().require_panel()


def test_defaults_live_only_in_the_template():
    # The anchors and weights are read from the YAML file, never written as literals in the code.
    # The synthetic table of the tests draws its own fake run, fractions included.
    fake = PACKAGE_DIR / "results" / "synthetic.py"
    source = "\n".join(p.read_text() for p in PACKAGE_DIR.rglob("*.py") if p != fake)
    for literal in ("0.3, 0.4, 0.3", "0.25, 0.10, 0.05, 0.01", "0.25, 0.1, 0.05, 0.01", "ece_bins=15"):
        assert literal not in source


def test_freeze_save_load_round_trip(tmp_path, synthetic_table, frozen_standard):
    path = save_standard(frozen_standard, tmp_path / "s.yaml")
    loaded = load_standard(path)
    assert loaded.content_hash == frozen_standard.content_hash
    assert loaded.panel_names == tuple(f"enc{i:02d}" for i in range(8))
    np.testing.assert_array_equal(loaded.panel_profiles, frozen_standard.panel_profiles)
    assert loaded.source_results_hash == results_hash(synthetic_table)
    assert yaml.safe_load(path.read_text())["content_hash"] == loaded.content_hash
    # Saving is byte-for-byte deterministic.
    save_standard(loaded, tmp_path / "t.yaml")
    assert (tmp_path / "t.yaml").read_bytes() == path.read_bytes()


def test_results_hash_ignores_row_order(synthetic_table):
    shuffled = synthetic_table.sample(frac=1.0, random_state=1).reset_index(drop=True)
    assert results_hash(shuffled) == results_hash(synthetic_table)
    changed = synthetic_table.copy()
    changed.loc[0, "auroc"] = 0.5
    assert results_hash(changed) != results_hash(synthetic_table)


def _mapping():
    data = load_template().to_dict()
    data["panel"] = [{"name": "a", "D": 0.5, "C": 0.5, "L": 0.5, "R": 0.5}, {"name": "b", "D": 1, "C": 0, "L": 0.2, "R": 1}]
    return data


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda d: d["anchors"]["D"].update(best=0.5), "anchors.D"),
        (lambda d: d["anchors"]["C"].update(worst=0.0, best=0.2), "anchors.C"),
        (lambda d: d["anchors"].pop("L"), "anchors"),
        (lambda d: d["anchors"]["R"].update(best="low"), "anchors.R.best"),
        (lambda d: d["weights"].update(floor=0.31), "weights"),
        (lambda d: d["weights"].update(dominance=-0.1, balance=0.8), "weights.dominance"),
        (lambda d: d["weights"].pop("floor"), "weights"),
        (lambda d: d.update(label_fractions=[0.5, 0.25]), "label_fractions"),
        (lambda d: d.update(label_fractions=[1.0, 1.5]), "label_fractions"),
        (lambda d: d.update(label_fractions=[1.0, 0.5, 0.5]), "label_fractions"),
        (lambda d: d.update(ece_bins=0), "ece_bins"),
        (lambda d: d.update(ece_bins=1.5), "ece_bins"),
        (lambda d: d["panel"][1].update(D=1.2), "panel[1].D"),
        (lambda d: d["panel"][1].update(name="a"), "panel"),
        (lambda d: d["panel"][0].pop("R"), "panel[0].R"),
        (lambda d: d.update(version=""), "version"),
        (lambda d: d.pop("weights"), "weights"),
        (lambda d: d.update(format="other/2"), "format"),
        (lambda d: d.update(content_hash="sha256:0"), "content_hash"),
        (lambda d: d.update(axis_scales={"L": "log", "R": "chance", "chance_margin": 0.05}), "axis_scales.L"),
        (lambda d: d.update(axis_scales={"L": "chance", "R": "share", "chance_margin": 0.05}), "axis_scales.R"),
        (lambda d: d.update(axis_scales={"L": "chance", "R": "chance"}), "axis_scales.chance_margin"),
        (lambda d: d.update(axis_scales={"L": "chance", "R": "chance", "chance_margin": 0.7}),
         "axis_scales.chance_margin"),
        (lambda d: d.update(axis_scales={"L": "ratio", "R": "points", "chance_margin": 0.05}),
         "axis_scales.chance_margin"),
        (lambda d: d.update(axis_scales={"L": "chance", "R": "chance", "chance_margin": 0.05, "x": 1}),
         "axis_scales.x"),
        (lambda d: d.update(axis_scales=[1]), "axis_scales"),
    ],
)
def test_invalid_field_is_named(edit, field):
    data = _mapping()
    edit(data)
    with pytest.raises(ReferenceStandardError, match=re.escape(f"field '{field}'")):
        standard_from_dict(data, source="s.yaml")


def test_valid_mapping_accepted_with_tolerant_weight_sum():
    data = _mapping()
    data["weights"] = {"dominance": 0.1, "balance": 0.2, "floor": 0.7000000000000001}
    std = standard_from_dict(data)
    assert std.panel_names == ("a", "b")


def test_load_errors(tmp_path):
    with pytest.raises(ReferenceStandardError, match="no such reference standard"):
        load_standard(tmp_path / "missing.yaml")
    (tmp_path / "bad.yaml").write_text("version: [unclosed\n")
    with pytest.raises(ReferenceStandardError, match="not a readable YAML"):
        load_standard(tmp_path / "bad.yaml")
    (tmp_path / "list.yaml").write_text("- 1\n- 2\n")
    with pytest.raises(ReferenceStandardError, match="mapping at the top level"):
        load_standard(tmp_path / "list.yaml")


def test_edited_frozen_file_is_rejected(tmp_path, frozen_standard):
    path = save_standard(frozen_standard, tmp_path / "s.yaml")
    path.write_text(path.read_text().replace("dominance: 0.3", "dominance: 0.30000001").replace("floor: 0.3", "floor: 0.29999999"))
    with pytest.raises(ReferenceStandardError, match="content_hash"):
        load_standard(path)


def test_default_standard_path(monkeypatch, tmp_path, frozen_standard):
    monkeypatch.setenv("CRSBENCH_HOME", str(tmp_path))
    with pytest.raises(ReferenceStandardError, match="no default reference standard.*crsbench freeze"):
        default_standard_path()
    save_standard(frozen_standard, tmp_path / "standards" / DEFAULT_FILENAME)
    assert default_standard_path() == tmp_path / "standards" / DEFAULT_FILENAME


def test_shipped_profiles_name_the_default_standard():
    # A new default standard changes DEFAULT_STANDARD; this test then names each profile to update.
    from crsbench_lib.paths import configs_dir, standards_dir

    named = {p.name: yaml.safe_load(p.read_text())["standard"] for p in sorted(configs_dir().glob("*.yaml"))}
    defaults = {name: standard for name, standard in named.items() if str(standard).startswith("crs-default-")}
    assert defaults, "no shipped profile names a crs-default-* standard"
    assert {name: s for name, s in defaults.items() if s != DEFAULT_STANDARD} == {}
    assert (standards_dir() / DEFAULT_FILENAME).is_file()


def test_constructor_validates():
    with pytest.raises(ReferenceStandardError, match="anchors.D"):
        ReferenceStandard(
            version="v", anchors={"D": (1, 1), "C": (0.2, 0), "L": (0.5, 1), "R": (0.2, 0)},
            weights={"dominance": 0.3, "balance": 0.4, "floor": 0.3}, label_fractions=(1.0,), ece_bins=15,
        )


def test_panel_frame(frozen_standard):
    panel = frozen_standard.panel
    assert list(panel.columns) == list(AXES)
    assert ((panel >= 0) & (panel <= 1)).all().all()


def test_axis_scales_round_trip_and_leave_older_standards_unchanged(tmp_path, frozen_standard):
    # A standard on the study's scales writes no axis_scales field, so v1-v4 keep their hashes.
    assert "axis_scales" not in standard_from_dict(_mapping() | {"axis_scales": None}).to_dict()
    for name in ("crs-default-v1", "crs-default-v2", "crs-default-v3", "crs-default-v4"):
        shipped = load_standard(PACKAGE_DIR.parent / "standards" / f"{name}.yaml")
        assert shipped.axis_scales == AxisScales() and shipped.axis_scales.is_study
    chance = standard_from_dict(_mapping() | {"axis_scales": {"L": "chance", "R": "chance", "chance_margin": 0.05},
                                              "anchors": {**_mapping()["anchors"], "L": {"worst": 0.0, "best": 1.0},
                                                          "R": {"worst": 1.0, "best": 0.0}}})
    assert chance.to_dict()["axis_scales"] == {"L": "chance", "R": "chance", "chance_margin": 0.05}
    path = save_standard(chance, tmp_path / "c.yaml")
    again = load_standard(path)
    assert again.axis_scales == chance.axis_scales and again.content_hash == chance.content_hash
    study = standard_from_dict({**_mapping(), "axis_scales": {"L": "ratio", "R": "points"}})
    assert study.content_hash != chance.content_hash


def test_dominance_round_trip_and_leave_older_standards_unchanged(tmp_path):
    # A standard with the Pareto count writes no dominance field, so v1-v4 keep their hashes.
    assert "dominance" not in standard_from_dict(_mapping() | {"dominance": None}).to_dict()
    for name in ("crs-default-v1", "crs-default-v2", "crs-default-v3", "crs-default-v4"):
        shipped = load_standard(PACKAGE_DIR.parent / "standards" / f"{name}.yaml")
        assert shipped.dominance.is_pareto and shipped.dominance_noise is None
    noisy = standard_from_dict(_mapping() | {"dominance": {"form": "noise_aware",
                                                           "noise_sd": {"D": 0.01, "C": 0.02, "L": 0.02, "R": 0.03}}})
    assert noisy.dominance_noise.tolist() == [0.01, 0.02, 0.02, 0.03]
    again = load_standard(save_standard(noisy, tmp_path / "n.yaml"))
    assert again.dominance == noisy.dominance and again.content_hash == noisy.content_hash
    pareto = standard_from_dict(_mapping() | {"dominance": {"form": "pareto"}})
    assert pareto.content_hash == standard_from_dict(_mapping() | {"dominance": None}).content_hash
    assert pareto.content_hash != noisy.content_hash


def test_ece_estimator_round_trip_and_leave_older_standards_unchanged(tmp_path):
    # A standard with the plug-in ECE writes no ece_estimator field, so v1-v5 keep their hashes.
    plugin_mapping = {k: v for k, v in _mapping().items() if k != "ece_estimator"}
    assert "ece_estimator" not in standard_from_dict(plugin_mapping).to_dict()
    for name in ("crs-default-v1", "crs-default-v2", "crs-default-v3", "crs-default-v4", "crs-default-v5"):
        shipped = load_standard(PACKAGE_DIR.parent / "standards" / f"{name}.yaml")
        assert shipped.ece_estimator == "plugin"
    debiased = standard_from_dict(_mapping() | {"ece_estimator": "debiased"})
    assert debiased.to_dict()["ece_estimator"] == "debiased"
    again = load_standard(save_standard(debiased, tmp_path / "d.yaml"))
    assert again.ece_estimator == "debiased" and again.content_hash == debiased.content_hash
    plugin = standard_from_dict(_mapping() | {"ece_estimator": "plugin"})
    assert plugin.content_hash == standard_from_dict(plugin_mapping).content_hash != debiased.content_hash


@pytest.mark.parametrize("value", ["unbiased", 1, None])
def test_invalid_ece_estimator_is_named(value):
    with pytest.raises(ReferenceStandardError, match=re.escape("s.yaml: field 'ece_estimator' must be one of plugin, "
                                                               "debiased")):
        standard_from_dict(_mapping() | {"ece_estimator": value}, source="s.yaml")


@pytest.mark.parametrize(
    ("value", "field"),
    [
        ({"form": "soft"}, "dominance.form"),
        ({"form": "noise_aware"}, "dominance.noise_sd"),
        ({"form": "noise_aware", "noise_sd": {"D": 0.01, "C": 0.02, "L": 0.02}}, "dominance.noise_sd"),
        ({"form": "noise_aware", "noise_sd": {"D": 0.01, "C": 0.0, "L": 0.02, "R": 0.02}}, "dominance.noise_sd"),
        ({"form": "noise_aware", "noise_sd": {"D": 0.01, "C": "x", "L": 0.02, "R": 0.02}}, "dominance.noise_sd.C"),
        ({"form": "pareto", "noise_sd": {"D": 0.01, "C": 0.02, "L": 0.02, "R": 0.02}}, "dominance.noise_sd"),
        ({"form": "pareto", "scale": 1}, "dominance.scale"),
        ([1], "dominance"),
    ],
)
def test_invalid_dominance_is_named(value, field):
    with pytest.raises(ReferenceStandardError, match=re.escape(f"s.yaml: field '{field}'")):
        standard_from_dict(_mapping() | {"dominance": value}, source="s.yaml")


def test_crs_default_v8_is_frozen_from_the_template_on_generator_10():
    # v8 copies every setting of the template (the debiased ECE, chance scales, noise-aware dominance with the
    # template's noise scale, the robustness composite) and holds the default zoo's peers: every encoder but the
    # in-task reference (reference encoders stay in the panel; they are never ranked).
    from crsbench_lib.encoders.zoo import DEFAULT_ZOO, zoo_families

    v8 = load_standard(PACKAGE_DIR.parent / "standards" / "crs-default-v8.yaml")
    template = load_template()
    assert (v8.anchors, v8.weights, v8.axis_scales, v8.dominance, v8.ece_estimator, v8.robustness) == (
        template.anchors, template.weights, template.axis_scales, template.dominance, template.ece_estimator,
        template.robustness)
    assert (v8.label_fractions, v8.ece_bins) == (template.label_fractions, template.ece_bins)
    assert v8.ece_estimator == "debiased" and not v8.robustness.is_study
    families = zoo_families()
    assert set(v8.panel_names) == {name for name in DEFAULT_ZOO if families[name] != "intask"}
    assert "generator 10" in v8.description
    assert DEFAULT_STANDARD == v8.version


def test_crs_default_v7_stays_shipped_on_generator_9():
    v7 = load_standard(PACKAGE_DIR.parent / "standards" / "crs-default-v7.yaml")
    assert "generator 9" in v7.description and v7.ece_estimator == "debiased" and v7.robustness.is_study
    assert v7.dominance_noise.tolist() == [0.0083, 0.0218, 0.0137, 0.0168]
    assert len(v7.panel_names) == 19


def test_crs_default_v6_and_v5_stay_shipped_on_generator_8():
    # v6 (the debiased ECE) and v5 (the plug-in ECE) keep generator 8's panel and each its own noise scale.
    v6 = load_standard(PACKAGE_DIR.parent / "standards" / "crs-default-v6.yaml")
    v7 = load_standard(PACKAGE_DIR.parent / "standards" / "crs-default-v7.yaml")
    assert "generator 8" in v6.description and v6.ece_estimator == "debiased"
    assert v6.dominance_noise.tolist() == [0.0082, 0.0234, 0.0155, 0.0166]
    assert (v6.anchors, v6.weights, v6.axis_scales) == (v7.anchors, v7.weights, v7.axis_scales)
    v5 = load_standard(PACKAGE_DIR.parent / "standards" / "crs-default-v5.yaml")
    assert v5.ece_estimator == "plugin" and v5.dominance_noise.tolist() == [0.0082, 0.0203, 0.0156, 0.0167]
    assert (v5.anchors, v5.axis_scales, set(v5.panel_names)) == (v6.anchors, v6.axis_scales, set(v6.panel_names))


def test_robustness_round_trip_and_leave_older_standards_unchanged(tmp_path):
    # A standard with the study's composite writes no robustness field, so v1-v7 keep their hashes and scores.
    study_mapping = {k: v for k, v in _mapping().items() if k != "robustness"}
    assert "robustness" not in standard_from_dict(study_mapping).to_dict()
    for version in range(1, 8):
        shipped = load_standard(PACKAGE_DIR.parent / "standards" / f"crs-default-v{version}.yaml")
        assert shipped.robustness.is_study
    # The template counts no term twice: the worst family (inside the average) weighs 0.
    assert load_template().robustness == RobustnessComposite((0.5, 0.0, 0.5))
    declared = standard_from_dict(_mapping())
    again = load_standard(save_standard(declared, tmp_path / "r.yaml"))
    assert again.robustness == declared.robustness and again.content_hash == declared.content_hash
    assert declared.content_hash != standard_from_dict(study_mapping).content_hash


@pytest.mark.parametrize(
    "value",
    [{"average": 0.5, "shift": 0.5}, {"average": 0.5, "worst": 0.1, "shift": 0.5},
     {"average": 1.5, "worst": -0.5, "shift": 0.0}, {"average": "x", "worst": 0.0, "shift": 1.0}, [0.5, 0.5]],
)
def test_invalid_robustness_is_named(value):
    with pytest.raises(ReferenceStandardError, match=re.escape("s.yaml: field 'robustness")):
        standard_from_dict(_mapping() | {"robustness": value}, source="s.yaml")
