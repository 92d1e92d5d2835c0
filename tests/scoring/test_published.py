import dataclasses

import pytest

from crsbench_lib.scoring.published import PUBLISHED, published_table


def test_headline_figures():
    assert PUBLISHED.n_encoders == 15
    assert PUBLISHED.n_pairs == PUBLISHED.n_encoders * (PUBLISHED.n_encoders - 1) // 2
    assert PUBLISHED.reversed_pairs == round((1 - PUBLISHED.kendall_tau) / 2 * PUBLISHED.n_pairs)
    assert list(PUBLISHED.aggregate_crs_top3) == ["PanDerm", "MedSigLIP", "MedGemma"]
    assert sum(PUBLISHED.bootstrap_p_rank1.values()) == pytest.approx(1.0)


def test_published_is_read_only():
    with pytest.raises(dataclasses.FrozenInstanceError):
        PUBLISHED.kendall_tau = 0.5  # type: ignore[misc]
    with pytest.raises(TypeError):
        PUBLISHED.aggregate_auroc_top3["X"] = 1.0  # type: ignore[index]


def test_table_lists_every_field():
    table = published_table()
    assert len(table) == len(dataclasses.fields(PUBLISHED))
    assert table.set_index("figure").loc["kendall_tau", "value"] == "0.6"
