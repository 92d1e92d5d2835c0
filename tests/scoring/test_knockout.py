"""The per-axis knock-out: an axis held constant decides nothing, and what it decided shows."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crsbench_lib.scoring.crs import score_profiles
from crsbench_lib.scoring.freeze import freeze_profiles
from crsbench_lib.scoring.knockout import KNOCKOUT_COLUMNS, axis_knockout, knocked_out_crs
from crsbench_lib.scoring.crs import normalise_array


def _profiles(rows: dict[str, tuple[float, float, float, float]]) -> pd.DataFrame:
    return pd.DataFrame.from_dict(rows, orient="index", columns=["D", "C", "L", "R"])


def test_an_axis_on_which_the_candidates_agree_decides_nothing():
    # Every candidate has the same C: knocking C out changes no score and no order.
    profiles = _profiles({"a": (0.86, 0.03, 0.90, 0.05), "b": (0.80, 0.03, 0.85, 0.07), "c": (0.75, 0.03, 0.80, 0.09)})
    standard = freeze_profiles(profiles, "t")
    table = axis_knockout(profiles, standard).set_index("axis")
    assert list(table.columns) == list(KNOCKOUT_COLUMNS[1:])
    assert table.loc["C", "tau_b"] == pytest.approx(1.0) and table.loc["C", "reversed_pairs"] == 0
    assert not table.loc["C", "leader_changes"]


def test_the_axis_that_carries_the_leader_changes_it_when_knocked_out():
    # a leads on D only; b leads on everything else by a little: without D, b leads.
    profiles = _profiles({"a": (0.90, 0.05, 0.80, 0.08), "b": (0.80, 0.03, 0.82, 0.07), "c": (0.70, 0.06, 0.70, 0.12)})
    standard = freeze_profiles(profiles, "t")
    full = score_profiles(profiles, standard)
    leader = full.iloc[0]["encoder"]
    table = axis_knockout(profiles, standard).set_index("axis")
    assert (table["leader"] == leader).all()
    changed = table[table["leader_changes"]]
    assert all(table.loc[a, "leader_without"] != leader for a in changed.index)
    assert table["pairs"].eq(3).all()


def test_references_are_left_out_before_anything_is_computed():
    profiles = _profiles({"a": (0.86, 0.03, 0.90, 0.05), "b": (0.80, 0.04, 0.85, 0.07), "hog": (0.70, 0.02, 0.99, 0.01)})
    standard = freeze_profiles(profiles, "t")
    table = axis_knockout(profiles, standard, references=["hog"])
    assert table["pairs"].eq(1).all() and "hog" not in set(table["leader"]) | set(table["leader_without"])
    with pytest.raises(ValueError, match="at least 2"):
        axis_knockout(profiles, standard, references=["hog", "b"])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(*[st.floats(0.0, 1.0)] * 4), min_size=3, max_size=8), st.integers(0, 3))
def test_knocked_out_axis_no_longer_moves_any_score(rows, axis):
    # Changing the knocked-out axis's raw value of any candidate leaves every knocked-out CRS unchanged.
    profiles = pd.DataFrame(rows, columns=["D", "C", "L", "R"], index=[f"e{i}" for i in range(len(rows))])
    profiles["C"] = profiles["C"] * 0.2
    standard = freeze_profiles(profiles, "t")
    s = normalise_array(profiles.to_numpy(float), standard.worst, standard.best)
    before = knocked_out_crs(s, standard.require_panel(), standard, axis, 0.5)
    moved = s.copy()
    moved[:, axis] = np.linspace(0, 1, len(rows))
    after = knocked_out_crs(moved, standard.require_panel(), standard, axis, 0.5)
    np.testing.assert_allclose(before, after)
