"""Tests of the anchor rationale table (crsbench_lib/scoring/anchors.py)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from crsbench_lib.scoring.anchors import ANCHOR_COLUMNS, anchor_table
from crsbench_lib.standard import AXES, load_template


def test_one_point_is_a_hundredth_of_the_anchor_span() -> None:
    template = load_template()
    table = anchor_table(template).set_index("axis")
    assert list(table.index) == list(AXES)
    assert list(table.reset_index().columns) == list(ANCHOR_COLUMNS)
    for axis, (worst, best) in template.anchors.items():
        assert table.at[axis, "per_point"] == pytest.approx(abs(best - worst) / 100)
        assert table.at[axis, "reason"]


def test_the_table_follows_the_standard_not_the_defaults() -> None:
    template = load_template()
    wide = replace(template, anchors={**template.anchors, "R": (0.4, 0.0)})
    assert anchor_table(wide).set_index("axis").at["R", "per_point"] == pytest.approx(0.004)


def test_the_standards_readme_table_matches_the_template() -> None:
    from crsbench_lib.paths import project_root

    text = (project_root() / "standards" / "README.md").read_text()
    table = anchor_table(load_template()).set_index("axis")
    for axis in AXES:
        line = next(line for line in text.splitlines() if line.startswith(f"| {axis} |"))
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert float(cells[2]) == table.at[axis, "worst"] and float(cells[3]) == table.at[axis, "best"], axis
        assert float(cells[4].split()[0]) == pytest.approx(table.at[axis, "per_point"]), axis


def test_the_calibration_unit_names_the_ece_estimator() -> None:
    template = load_template()
    units = {e: anchor_table(replace(template, ece_estimator=e)).set_index("axis").at["C", "unit"]
             for e in ("plugin", "debiased")}
    assert units == {"plugin": "ECE", "debiased": "debiased ECE"}
