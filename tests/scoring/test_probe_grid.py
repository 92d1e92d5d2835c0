"""Edge choices of the probes' C grid: counted per clean full-label probe, refused when off the grid."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crsbench_lib.errors import SchemaError
from crsbench_lib.results.synthetic import synthetic_results
from crsbench_lib.scoring.probe_grid import edge_share, grid_edges

GRID = (1e-4, 1e-3, 0.01, 0.1, 1.0, 10.0, 100.0, 1000.0)


def _table():
    return synthetic_results(n_encoders=3, corruptions=("noise",), random_state=1)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, len(GRID) - 1), min_size=3, max_size=3))
def test_edges_count_the_grid_ends_once_per_probe(choice):
    table = _table()
    names = sorted(table["encoder"].unique())
    table["probe_c"] = table["encoder"].map({n: GRID[i] for n, i in zip(names, choice)})
    edges = grid_edges(table, GRID)
    per_encoder = edges.groupby("encoder").size()
    n_cells = int(per_encoder.iloc[0])
    assert (per_encoder == n_cells).all() and len(edges) == n_cells * len(names)  # one row per encoder x dataset x seed
    share = edge_share(edges, GRID)
    assert share.n_low == n_cells * sum(i == 0 for i in choice)
    assert share.n_high == n_cells * sum(i == len(GRID) - 1 for i in choice)
    assert share.share == pytest.approx((share.n_low + share.n_high) / len(edges))


def test_only_the_uncalibrated_clean_full_label_rows_count():
    table = _table()
    table["probe_c"] = 1.0
    # Other conditions carry other C values (label-fraction probes choose their own): they must not be counted.
    table.loc[table["condition"] != "clean", "probe_c"] = GRID[0]
    edges = grid_edges(table, GRID)
    assert set(edges["edge"]) == {"interior"}


def test_a_c_off_the_grid_names_the_probe():
    table = _table()
    table["probe_c"] = 0.5
    with pytest.raises(SchemaError, match=r"chose C = 0.5, which is not on the grid"):
        grid_edges(table, GRID)


@pytest.mark.parametrize("grid", [(), (0.0, 1.0), (1.0, float("nan")), ("a", 1.0)])
def test_a_bad_grid_is_refused(grid):
    table = _table()
    table["probe_c"] = 1.0
    with pytest.raises(SchemaError, match="probe grid"):
        grid_edges(table, grid)


def test_no_probe_c_column_or_unknown_arm():
    table = _table().drop(columns=["probe_c"], errors="ignore")
    with pytest.raises(SchemaError, match="no 'probe_c'"):
        grid_edges(table, GRID)
    with pytest.raises(SchemaError, match="unknown arm"):
        grid_edges(table, GRID, arm="nope")


def test_the_grid_is_read_in_any_order():
    table = _table()
    table["probe_c"] = 1000.0
    assert edge_share(grid_edges(table, GRID[::-1]), GRID[::-1]).n_high == len(grid_edges(table, GRID))
    assert np.isnan(edge_share(grid_edges(table, GRID).iloc[:0], GRID).share)


def test_the_manifest_grid_reads_back_or_is_refused(tmp_path):
    import json

    from crsbench_lib.results.manifest import read_manifest
    from crsbench_lib.scoring.probe_grid import manifest_grid

    path = tmp_path / "manifest.json"
    path.write_text(json.dumps({"config": {"probe": {"C": [0.01, 1, 100.0]}}}))
    assert manifest_grid(read_manifest(path)) == (0.01, 1.0, 100.0)
    path.write_text(json.dumps({"config": {"probe": {}}}))
    assert manifest_grid(read_manifest(path)) is None and manifest_grid(None) is None
    path.write_text(json.dumps({"config": {"probe": {"C": ["a"]}}}))
    with pytest.raises(SchemaError, match=r"manifest.json: run manifest key 'config.probe.C'"):
        manifest_grid(read_manifest(path))


def test_a_one_value_grid_is_fixed_not_an_edge():
    table = _table()
    table["probe_c"] = 1.0
    edges = grid_edges(table, (1.0,))
    assert set(edges["edge"]) == {"fixed"}
    share = edge_share(edges, (1.0,))
    assert share.fixed and share.n_low == share.n_high == 0 and share.share == 0.0
