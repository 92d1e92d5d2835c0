"""The self-audit's figure: one marker per quantity and method, bars of two judged Monte-Carlo errors, the nominal line."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crsbench_lib.report.plots.coverage import coverage_figure
from crsbench_lib.report.sentences.coverage import judged_se


def _table(observed=(0.4, 0.96, 0.94, 0.95, 1.0), se=(0.12, 0.05, 0.04, 0.04, 0.0)):
    return pd.DataFrame({
        "quantity": ["axis_C", "axis_C", "crs", "crs", "leading_tier"],
        "method": ["percentile", "basic", "percentile", "basic", "set"],
        "nominal": 0.95, "observed": list(observed), "n_replicates": 16, "mc_se": list(se),
    })


def _bars(fig):
    """(method, x, y, low, high) of every errorbar point, each method's in the table's order."""
    out = []
    for container in fig.axes[0].containers:
        line, (segments,) = container.lines[0], container.lines[2]
        for (x, y), seg in zip(line.get_xydata(), segments.get_segments(), strict=True):
            out.append((container.get_label(), x, y, seg[0][0], seg[1][0]))
    return out


def test_each_quantity_and_method_has_its_bar_and_the_nominal_line(check_figure):
    table = _table()
    fig = coverage_figure(table)
    check_figure(fig)
    bars = _bars(fig)
    assert sorted(b[0] for b in bars) == sorted(table["method"])
    # The rows: C, the CRS, the leading tier (in that order, top to bottom).
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels == ["calibration (C)", "each encoder's CRS", "the leading tier"]
    assert any(np.allclose(line.get_xdata(), 0.95) for line in fig.axes[0].get_lines())


@settings(max_examples=15, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=5, max_size=5), st.lists(st.floats(0.0, 0.3), min_size=5, max_size=5))
def test_bars_span_two_judged_errors_clipped_to_the_unit_interval(observed, se):
    import matplotlib.pyplot as plt

    plt.close("all")
    table = _table(observed, se)
    bars = _bars(coverage_figure(table))
    assert len(bars) == len(table)
    for method in set(table["method"]):
        rows = table[table["method"] == method]
        drawn = [b for b in bars if b[0] == method]
        for (_, row), (_, x, _, low, high) in zip(rows.iterrows(), drawn, strict=True):
            half = 2 * judged_se(0.95, float(row["mc_se"]), 16)
            assert x == pytest.approx(row["observed"])
            assert low == pytest.approx(max(0.0, x - half)) and high == pytest.approx(min(1.0, x + half))


def test_bad_tables_are_refused():
    with pytest.raises(ValueError, match="missing column.*'mc_se'"):
        coverage_figure(_table().drop(columns="mc_se"))
    with pytest.raises(ValueError, match="empty"):
        coverage_figure(_table().iloc[:0])
