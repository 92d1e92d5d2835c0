import numpy as np
import pandas as pd
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
    # The floor travels with the ECE (a mean over the same rows), so the figure can draw it under each condition.
    assert "ece_floor" in table.columns
    clean = table[(table["condition"] == "clean") & (table["arm"] == "frozen") & (table["calibration"] == "none")]
    first = ece["encoder"].iloc[0]
    expected = clean[clean["encoder"] == first].groupby("dataset")["ece_floor"].mean().mean()
    assert ece[(ece["encoder"] == first) & (ece["condition"] == "clean")]["ece_floor"].iloc[0] == pytest.approx(expected)
    # A table without floors (an old run) reads as missing floors, not as zeros.
    assert summaries.ece_by_condition(table.drop(columns=["ece_floor"]))["ece_floor"].isna().all()


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


def test_dataset_overview_counts_what_the_table_holds(table):
    overview = summaries.dataset_overview(table)
    assert list(overview["dataset"]) == sorted(table["dataset"].unique())
    for row in overview.itertuples():
        rows = table[table["dataset"] == row.dataset]
        assert row.encoders == rows["encoder"].nunique()
        assert row.seeds == rows["seed"].nunique()
        assert row.corruptions == rows.loc[rows["condition"] == "corruption", "corruption"].nunique()
        assert getattr(row, "_8") == bool((rows["condition"] == "shift").any())  # "site B"
        assert getattr(row, "_4") == rows.loc[rows["condition"] == "clean", "n_test"].max()  # "test images"


def test_insertion_bars_align_entries_by_id():
    import pandas as pd

    from crsbench_lib.errors import SchemaError

    fixed = pd.DataFrame({"entry_id": [1, 2], "candidate": ["a", "b"], "crs_displacement": [0.0, -0.0]})
    cohort = pd.DataFrame({"entry_id": [2, 1], "candidate": ["b", "a"], "crs_displacement": [-0.2, 0.1]})
    bars = summaries.insertion_bars(fixed, cohort)
    assert bars.to_dict("list") == {"encoder": ["a", "b"], "fixed": [0.0, 0.0], "cohort": [0.1, 0.2]}
    with pytest.raises(SchemaError, match="entry 2"):
        summaries.insertion_bars(fixed, cohort.iloc[1:])


def test_untrained_encoders_reads_descriptions():
    import pandas as pd

    from crsbench_lib.errors import SchemaError

    zoo = pd.DataFrame({"name": ["a", "b", "c"], "description": ["small CNN, random initialisation", "Raw pixels", "SimCLR"]})
    assert summaries.untrained_encoders(zoo) == ["a", "b"]
    with pytest.raises(SchemaError):
        summaries.untrained_encoders(zoo[["name"]])


def test_augmentation_effect_matches_the_profile_and_marks_absent_pairs(table):
    profiles = encoder_profiles(raw_axes(table))
    raw = raw_axes(table)
    loss = raw.groupby(["encoder", "dataset"])["avg_corruption_loss"].mean().groupby(level="encoder").mean()
    pairs = pd.DataFrame({"augmented": ["enc00", "enc02", "missing"], "plain": ["enc01", "gone", "enc03"]})
    effect = summaries.augmentation_effect(pairs, table)
    assert effect["in_results"].tolist() == [True, False, False]
    first = effect.iloc[0]
    assert first["clean_aug"] == pytest.approx(profiles.loc["enc00", "D"])
    assert first["clean_gain"] == pytest.approx(profiles.loc["enc00", "D"] - profiles.loc["enc01", "D"])
    assert first["loss_change"] == pytest.approx(loss["enc00"] - loss["enc01"])
    # A half-present pair is absent: no number compares it with nothing.
    assert effect.iloc[1:][["clean_aug", "clean_plain", "clean_gain", "loss_change"]].isna().all().all()
    with pytest.raises(ValueError, match="plain"):
        summaries.augmentation_effect(pairs.drop(columns="plain"), table)


def test_augmentation_effect_reads_the_requested_arm(table):
    pairs = pd.DataFrame({"augmented": ["enc00"], "plain": ["enc01"]})
    frozen = summaries.augmentation_effect(pairs, table, arm="frozen")
    lora = summaries.augmentation_effect(pairs, table, arm="lora")
    assert frozen["clean_aug"].iloc[0] == pytest.approx(encoder_profiles(raw_axes(table, arm="frozen")).loc["enc00", "D"])
    assert lora["clean_aug"].iloc[0] == pytest.approx(encoder_profiles(raw_axes(table, arm="lora")).loc["enc00", "D"])


def test_reference_encoders_are_read_through_the_summaries_from_one_home():
    from crsbench_lib.encoders.zoo import zoo_families
    from crsbench_lib.report import roles

    # The chapters call summaries.reference_encoders; the fact itself lives in report.roles.
    assert summaries.reference_encoders is roles.reference_encoders
    assert summaries.REFERENCE_FAMILIES is roles.REFERENCE_FAMILIES
    # A table of the user's own encoders holds no reference.
    assert summaries.reference_encoders(zoo_families(), present=["my_encoder"]) == []


def test_tier_table_marks_references(synthetic_table, frozen_standard):
    from crsbench_lib.scoring.bootstrap import paired_seed_bootstrap

    boot = paired_seed_bootstrap(synthetic_table, frozen_standard, n_draws=50, references=["enc03"])
    table = summaries.tier_table(boot.summary, boot.top_k, tied=["enc03", boot.summary["encoder"].iloc[0]])
    # Candidates are marked from the summary's in_tier (the one definition), a tied reference in its own column.
    candidates = boot.summary["role"] != "reference"
    assert table["in the leading tier"].tolist() == (boot.summary["in_tier"].astype(bool) & candidates).tolist()
    assert not table.loc[table["encoder"] == "enc03 (reference)", "in the leading tier"].any()
    assert table["reference not separated from the leader"].tolist() == (~candidates).tolist()
    assert table["encoder"].tolist() == [e + (" (reference)" if e == "enc03" else "") for e in boot.summary["encoder"]]
    assert table.loc[table["encoder"] == "enc03 (reference)", "P(rank 1)"].isna().all()
    assert list(table["CRS"]) == sorted(table["CRS"], reverse=True)


def test_augmentation_effect_counts_the_datasets_where_augmentation_wins(table):
    from crsbench_lib.scoring.axes import raw_axes

    pairs = pd.DataFrame({"augmented": ["enc00", "x"], "plain": ["enc01", "y"]})
    effect = summaries.augmentation_effect(pairs, table)
    per_dataset = raw_axes(table).groupby(["encoder", "dataset"])[["D", "avg_corruption_loss"]].mean()
    aug, plain = per_dataset.loc["enc00"], per_dataset.loc["enc01"]
    row = effect.iloc[0]
    assert row["n_datasets"] == len(aug)
    assert row["clean_higher_in"] == int((aug["D"] > plain["D"]).sum())
    assert row["loss_lower_in"] == int((aug["avg_corruption_loss"] < plain["avg_corruption_loss"]).sum())
    assert effect.iloc[1][["n_datasets", "clean_higher_in", "loss_lower_in"]].tolist() == [0, 0, 0]


def test_newcomers_are_the_highest_auroc_candidates_references_left_out():
    import pytest

    from crsbench_lib.errors import NotebookError
    from crsbench_lib.report.summaries import choose_newcomers

    profiles = pd.DataFrame({"D": [0.9, 0.8, 0.7, 0.6]}, index=["ref", "a", "b", "c"])
    assert choose_newcomers(profiles, None, 2) == ["ref", "a"]
    assert choose_newcomers(profiles, None, 2, exclude=["ref"]) == ["a", "b"]
    # Named newcomers are taken as given, a reference included.
    assert choose_newcomers(profiles, ["ref"], 2, exclude=["ref"]) == ["ref"]
    with pytest.raises(NotebookError, match="unknown encoder 'zz'"):
        choose_newcomers(profiles, ["zz"], 1)
    with pytest.raises(NotebookError, match="between 1 and 3"):
        choose_newcomers(profiles, ["ref", "a", "b", "c"], 4)


def test_candidates_are_ranked_among_themselves_and_a_reference_takes_no_rank():
    import pandas as pd

    from crsbench_lib.report.summaries import candidate_rank_labels

    scores = pd.DataFrame({"encoder": ["ref", "a", "b", "c"], "crs": [0.9, 0.5, 0.7, 0.7]})
    assert candidate_rank_labels(scores, ["ref"]).tolist() == ["–", "3", "1", "1"]
    assert candidate_rank_labels(scores, []).tolist() == ["1", "4", "2", "2"]


def test_the_shown_overview_has_a_site_column_only_where_a_dataset_has_a_second_site(table):
    """On data with one site per dataset no "site B" column or caption names a site that is not there (issue 30)."""
    overview = summaries.dataset_overview(table)
    shifted = bool(overview[summaries.SITE_COLUMN].any())
    shown, caption = summaries.shown_overview(overview)
    assert (summaries.SITE_COLUMN in shown.columns) == shifted and ("site B" in caption) == shifted
    one_site = summaries.dataset_overview(table[table["condition"] != "shift"])
    shown, caption = summaries.shown_overview(one_site)
    assert "site B" not in " ".join(map(str, shown.columns)) + caption and "site A" not in caption
    assert list(shown.columns) == [c for c in one_site.columns if c != summaries.SITE_COLUMN]
    assert "none has a second site" in caption
