"""Freezing a reference standard from a results table."""

import pytest
import yaml

from crsbench_lib.errors import ReferenceStandardError, SchemaError
from crsbench_lib.scoring.freeze import freeze_standard
from crsbench_lib.standard import load_template


def test_freeze_panel_subset_and_errors(synthetic_table):
    std = freeze_standard(synthetic_table, "sub", panel=["enc03", "enc01"])
    assert std.panel_names == ("enc03", "enc01")
    assert std.panel_profiles.shape == (2, 4)
    with pytest.raises(ReferenceStandardError, match="panel member 'nope' is not an encoder"):
        freeze_standard(synthetic_table, "x", panel=["nope"])
    with pytest.raises(ReferenceStandardError, match="twice"):
        freeze_standard(synthetic_table, "x", panel=["enc01", "enc01"])
    with pytest.raises(ReferenceStandardError, match="version"):
        freeze_standard(synthetic_table, "  ")


def test_freeze_uses_base_settings(tmp_path, synthetic_table):
    base = load_template().to_dict()
    base["weights"] = {"dominance": 0.5, "balance": 0.25, "floor": 0.25}
    base["label_fractions"] = [1.0, 0.25]
    (tmp_path / "base.yaml").write_text(yaml.safe_dump(base))
    std = freeze_standard(synthetic_table, "b", base=tmp_path / "base.yaml")
    assert std.weights["dominance"] == 0.5
    assert std.label_fractions == (1.0, 0.25)


def test_freeze_rejects_other_ece_binning(synthetic_table):
    table = synthetic_table.copy()
    table["ece_bins"] = 10
    with pytest.raises(ReferenceStandardError, match="10 bins.*requires 15"):
        freeze_standard(table, "x")


def test_freeze_rejects_bad_table(synthetic_table):
    with pytest.raises(SchemaError):
        freeze_standard(synthetic_table.drop(columns=["ece"]), "x")
