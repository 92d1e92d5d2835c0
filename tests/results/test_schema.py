import numpy as np
import pandas as pd
import pytest

from crsbench_lib.errors import SchemaError
from crsbench_lib.results import COLUMNS, empty_results, read_results, to_csv, validate_results, write_results
from crsbench_lib.results.schema import CLEAN_CONDITION
from crsbench_lib.results.select import clean_mask
from crsbench_lib.results.synthetic import synthetic_results


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return synthetic_results(n_encoders=3, seeds=(0, 1), corruptions=("noise", "blur"))


def test_synthetic_table_is_valid(table):
    assert set(table["condition"]) == {"clean", "label_fraction", "corruption", "shift"}
    assert list(table.columns[: len(COLUMNS)]) == [c.name for c in COLUMNS]
    assert table["seed"].dtype == np.int64


def test_clean_condition_is_what_clean_mask_selects(table):
    fields = table[list(CLEAN_CONDITION)]
    matches = np.logical_and.reduce([fields[k].to_numpy() == v for k, v in CLEAN_CONDITION.items()])
    assert matches.any()
    assert np.array_equal(matches, clean_mask(table, calibration="none"))
    with pytest.raises(TypeError):
        CLEAN_CONDITION["severity"] = 1  # type: ignore[index]


def test_empty_table_validates():
    assert validate_results(empty_results()).empty


def test_missing_column_named(table):
    with pytest.raises(SchemaError, match="missing required column 'ece'"):
        validate_results(table.drop(columns=["ece"]))


def test_wrong_type_names_column_and_row(table):
    bad = table.copy()
    bad["seed"] = bad["seed"].astype(object)
    bad.loc[3, "seed"] = "three"
    with pytest.raises(SchemaError, match=r"column 'seed' must be numeric.*row 3"):
        validate_results(bad)


def test_nan_metric_named(table):
    bad = table.copy()
    bad.loc[[5, 7], "brier"] = np.nan
    with pytest.raises(SchemaError, match=r"column 'brier' is NaN in rows 5, 7"):
        validate_results(bad)


def test_auroc_outside_unit_interval(table):
    bad = table.copy()
    bad.loc[2, "auroc"] = 1.2
    with pytest.raises(SchemaError, match=r"'auroc' must lie in \[0, 1\].*row 2"):
        validate_results(bad)


def test_unknown_condition(table):
    bad = table.copy()
    bad["condition"] = bad["condition"].astype(object)
    bad.loc[0, "condition"] = "rotated"
    with pytest.raises(SchemaError, match=r"'condition' has unknown value 'rotated' in row 0"):
        validate_results(bad)


def test_duplicate_rows(table):
    bad = pd.concat([table, table.iloc[[4]]], ignore_index=True)
    with pytest.raises(SchemaError, match=rf"duplicate rows .* rows 4, {len(table)}"):
        validate_results(bad)


def test_corruption_rows_need_severity(table):
    bad = table.copy()
    row = bad.index[bad["condition"] == "corruption"][0]
    bad.loc[row, "severity"] = 0
    with pytest.raises(SchemaError, match="severity"):
        validate_results(bad)


def test_parquet_roundtrip_is_exact_and_order_free(table, tmp_path):
    a = write_results(table, tmp_path / "a.parquet")
    b = write_results(table.sample(frac=1.0, random_state=1), tmp_path / "b.parquet")
    assert a.read_bytes() == b.read_bytes()
    back = read_results(a)
    pd.testing.assert_frame_equal(back, validate_results(back))
    assert len(back) == len(table)


def test_csv_export_reads_back(table, tmp_path):
    path = to_csv(table, tmp_path / "t.csv")
    back = read_results(path)
    assert len(back) == len(table)
    assert (back["standard_version"] == "").all()


def test_read_missing_file(tmp_path):
    with pytest.raises(SchemaError, match="no such results file"):
        read_results(tmp_path / "nope.parquet")


def test_read_garbage_file(tmp_path):
    path = tmp_path / "junk.parquet"
    path.write_bytes(b"not parquet")
    with pytest.raises(SchemaError, match="junk.parquet: not a readable results table"):
        read_results(path)


def test_failed_write_leaves_no_file(table, tmp_path):
    bad = table.drop(columns=["auroc"])
    with pytest.raises(SchemaError):
        write_results(bad, tmp_path / "out.parquet")
    assert list(tmp_path.iterdir()) == []
