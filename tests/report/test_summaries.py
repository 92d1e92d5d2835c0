import numpy as np
import pytest

from crsbench_lib.report import summaries
from crsbench_lib.scoring import encoder_profiles, raw_axes


def test_label_efficiency_matches_the_l_axis(table):
    curves = summaries.label_efficiency_curves(table)
    profiles = encoder_profiles(raw_axes(table))
    below = curves[curves["label_fraction"] < 1.0].groupby("encoder")["retention"].mean()
    # L averages retention over fractions per cell before seeds/datasets; all means are linear, so they agree.
    assert np.allclose(below.sort_index().to_numpy(), profiles["L"].sort_index().to_numpy())
    assert (curves.loc[curves["label_fraction"] == 1.0, "retention"] == 1.0).all()


def test_ece_by_condition_order(table):
    ece = summaries.ece_by_condition(table)
    conditions = list(dict.fromkeys(ece["condition"]))
    assert conditions[0] == "clean" and conditions[-1] == "shift (site B)"
    assert conditions[1:5] == ["labels 25%", "labels 10%", "labels 5%", "labels 1%"]
    assert conditions[5:8] == ["corruption s1", "corruption s3", "corruption s5"]


def test_rank_probabilities():
    draws = np.array([[0.9, 0.5, 0.1], [0.4, 0.5, 0.1], [0.9, 0.9, 0.1]])
    table = summaries.rank_probabilities(draws, ["a", "b", "c"])
    assert list(table.index) == ["a", "b", "c"]
    assert table.loc["a", 1] == pytest.approx(2 / 3)
    assert table.loc["b", 1] == pytest.approx(2 / 3)  # the tie in draw 3 shares rank 1
    assert table.loc["c", 3] == pytest.approx(1.0)
    assert np.allclose(table.sum(axis=1), 1.0)
    with pytest.raises(ValueError, match="shape"):
        summaries.rank_probabilities(draws, ["a", "b"])
