"""The LODO sentence claims a better predictor only where the numbers allow it."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crsbench_lib.report import grammar
from crsbench_lib.report.sentences import lodo

unit = st.floats(min_value=-1.0, max_value=1.0, allow_nan=False)


@given(crs=unit, auroc=unit)
def test_describe_predictors_names_the_better_one(crs, auroc):
    text = lodo.describe_predictors(crs, auroc)
    if abs(crs - auroc) < grammar.CLOSE_CORRELATION:
        assert "about equally well" in text
    elif crs > auroc:
        assert text.startswith("The CRS predicts")
    else:
        assert text.startswith("AUROC predicts")


def test_describe_predictors_with_a_place():
    assert lodo.describe_predictors(0.2, 0.067, where="On the second site").startswith("On the second site, the CRS predicts")


@given(crs=st.floats(-1, 1, allow_nan=False), auroc=st.floats(-1, 1, allow_nan=False),
       low=st.floats(-2, 2, allow_nan=False), width=st.floats(0, 2, allow_nan=False))
def test_describe_predictors_with_an_interval_claims_only_what_it_excludes(crs, auroc, low, width):
    text = lodo.describe_predictors(crs, auroc, interval=(low, low + width), target="the site-B ranking")
    if low > 0 and crs > auroc:
        assert text.startswith("The CRS predicts the site-B ranking better than AUROC") and "excludes zero" in text
    elif low + width < 0 and crs < auroc:
        assert text.startswith("AUROC predicts the site-B ranking better than the CRS") and "excludes zero" in text
    elif low > 0 or low + width < 0:
        # The interval excludes zero on the other side from the point: no claim either way.
        assert text.startswith("The data cannot tell") and "better than" not in text and "other side" in text
    elif low == 0 == width and crs == auroc:
        # A degenerate interval at zero with equal taus: the central resamples all tie.
        assert "equally well" in text and "exactly 0 across the central 95 %" in text and "better than" not in text
    else:
        # No claim when the interval contains zero, whatever the point values say.
        assert text.startswith("The data cannot tell whether") and "better than" not in text
        assert "includes zero" in text


def test_describe_predictors_with_an_interval_and_a_place():
    text = lodo.describe_predictors(0.84, 0.905, interval=(-0.1, -0.02), where="On the second site", statistic="τ_b")
    assert text.startswith("On the second site, AUROC predicts")
    assert "τ_b 0.840 for the CRS and 0.905 for AUROC" in text and "mean" not in text


@pytest.mark.parametrize("crs, auroc, interval", [(float("nan"), 0.5, None), (0.3, float("nan"), (0.1, 0.2)),
                                                  (float("nan"), float("nan"), (float("nan"), float("nan")))])
def test_describe_predictors_says_when_a_tau_is_undefined(crs, auroc, interval):
    text = lodo.describe_predictors(crs, auroc, interval=interval)
    assert "cannot be said" in text and "undefined" in text and "better than" not in text


def test_describe_predictors_without_a_defined_interval_makes_no_claim():
    text = lodo.describe_predictors(0.6, 0.2, interval=(float("nan"), float("nan")))
    assert text.startswith("The data cannot tell") and "no interval" in text


# --- the new-domain sentences ---------------------------------------------------------------------------

import pandas as pd  # noqa: E402


def membership(new: dict[str, bool], held_out: str = "derm", domain: str = "dermatology") -> pd.DataFrame:
    return pd.DataFrame({"held_out": held_out, "domain": domain, "encoder": list(new),
                         "seen": ["none" if v else domain for v in new.values()], "new": list(new.values())})


@pytest.mark.parametrize("k, too_few", [(3, True), (4, True), (6, True), (7, False), (9, False)])
def test_new_domain_encoders_says_when_too_few_for_a_tau(k, too_few):
    table = membership({f"e{i}": i < k for i in range(12)})
    text = lodo.describe_new_domain_encoders(table)
    assert f"{k} of 12 encoders never saw its domain" in text
    step = 2 / (k * (k - 1) / 2)
    assert f"moves τ_b by {step:.3f}" in text
    assert ("too few for τ_b to mean much" in text) is too_few


def test_new_domain_encoders_with_none_new_and_with_families():
    text = lodo.describe_new_domain_encoders(membership({"a": False, "b": False}))
    assert "0 of 2 encoders never saw its domain;" in text and "no pair to rank" in text
    text = lodo.describe_new_domain_encoders(membership({"a": True, "b": True, "c": False}),
                                             families={"a": "classical", "b": "random", "c": "broad_ssl"})
    assert text.endswith("Over all held-out datasets, 2 distinct encoders are new to some held-out domain: 1 of the "
                         "classical family and 1 of the random family.")


def summary_rows(one_seed_max: float, one_seed_min: float, retest_min: float = 0.7, retest_max: float = 0.8,
                 retest_pairs: int = 3, one_seed_pairs: int = 6, n: int = 9) -> pd.DataFrame:
    return pd.DataFrame({"held_out": "derm", "domain": "dermatology", "target": "crs", "predictor": ["crs", "auroc"],
                         "kendall_tau": [0.5, 0.4], "n_encoders": n, "tau_resolution": 2 / (n * (n - 1) / 2),
                         "retest_tau": (retest_min + retest_max) / 2, "retest_min": retest_min,
                         "retest_max": retest_max, "retest_pairs": retest_pairs,
                         "one_seed_tau": [one_seed_max, one_seed_min], "one_seed_min": one_seed_min,
                         "one_seed_max": one_seed_max, "one_seed_pairs": one_seed_pairs})


def _difference(estimate, low, high, blocks=3):
    from crsbench_lib.scoring.lodo import TauDifference

    return TauDifference("crs", "auroc", 0.5 + estimate, 0.5, estimate, low, high, 0.95, 1000, 9, blocks)


@given(low=st.floats(-1, 1, allow_nan=False), width=st.floats(0, 1, allow_nan=False))
def test_new_domain_findings_count_the_comparisons_below_their_targets_noise(low, width):
    """The ~970-word new-domain paragraph became two sentences computed from its tables (lecturer's item 10)."""
    high = low + width
    text = lodo.describe_new_domain_findings(summary_rows(high, low), {})
    # summary_rows gives both predictors the same one-seed range [low, high] and the retest range [0.7, 0.8].
    if high < 0.7:
        assert text.startswith("In all 2 comparisons") and "exception" not in text
    else:
        assert text.startswith("In none of the 2 comparisons")
    assert text.count(". ") == 0 and text.endswith(".")  # one sentence without the differences


def test_new_domain_findings_give_each_targets_difference_and_verdict():
    rows = pd.concat([summary_rows(0.3, 0.2), summary_rows(0.75, 0.6).assign(held_out="cxr")])
    both = {"crs": _difference(0.044, -0.118, 0.225), "auroc": _difference(-0.022, -0.213, 0.158)}
    text = lodo.describe_new_domain_findings(rows, both, n_draws=1000)
    assert text.startswith("In 2 of 4 comparisons")
    assert ("the exceptions are cxr: the held-out CRS predicted by the CRS; cxr: the held-out CRS predicted by AUROC "
            "(the ranges overlap)") in text
    one = lodo.describe_new_domain_findings(pd.concat([summary_rows(0.3, 0.2), summary_rows(0.75, 0.6).assign(
        held_out="cxr").iloc[:1]]), {})
    assert one.startswith("In 2 of 3 comparisons") and "the exception is cxr: the held-out CRS predicted by the CRS" in one
    chance = lodo.describe_new_domain_findings(pd.concat([summary_rows(0.3, 0.2), summary_rows(0.95, 0.85).assign(
        held_out="cxr").iloc[:1]]), {})
    assert "(every prediction pair above every test-retest pair: chance)" in chance
    assert ("is 0.044 for the held-out CRS (95 % interval [-0.118, 0.225]) and -0.022 for the held-out AUROC (95 % "
            "interval [-0.213, 0.158]): every interval includes zero, so the data cannot tell") in text
    assert "(1000 paired encoder resamples)." in text and len(text.split()) < 130
    split = lodo.describe_new_domain_findings(rows, {"crs": _difference(0.2, 0.05, 0.3),
                                                     "auroc": _difference(-0.02, -0.2, 0.15)})
    assert "for the held-out CRS (95 % interval [0.050, 0.300]), which favours the CRS" in split
    assert "which includes zero" in split and "better only where its interval favours it" in split
    single = lodo.describe_new_domain_findings(summary_rows(0.3, 0.2, retest_pairs=0, one_seed_pairs=0), {})
    assert single.startswith("No comparison has a test-retest baseline")


def _noise_blocks(taus, boot=(0.9, 1.0), one_seed=None, seeds=(0.9, 0.95)):
    import numpy as np

    from crsbench_lib.scoring.retest import noise_baseline_table

    blocks = []
    for held_out, (crs, auroc) in taus.items():
        names = {p: f"{p} without {held_out} against AUROC on {held_out}" for p in ("CRS", "AUROC")}
        blocks.append(noise_baseline_table(
            {names["CRS"]: crs, names["AUROC"]: auroc}, {"r": list(seeds)}, {"r": np.linspace(*boot, 101)},
            one_seed={names[p]: list(v) for p, v in (one_seed or {}).items()}).assign(held_out=held_out))
    return pd.concat(blocks, ignore_index=True)


def test_the_noise_baseline_is_one_table_and_one_sentence():
    """Three ~300-word paragraphs became one table and one sentence (lecturer's item 10), the lesson once."""
    noise = _noise_blocks({"cxr": (0.743, 0.766), "derm": (0.579, 0.649)},
                            one_seed={"CRS": (0.6, 0.8), "AUROC": (0.7, 0.78)})
    table = lodo.held_out_noise_summary(noise)
    assert list(table.columns) == ["held_out", "predictor", "tau", "draw_low", "draw_high", "gap", "one_seed_max",
                                   "redraw_min"]
    assert table[["held_out", "predictor"]].values.tolist() == [["cxr", "CRS"], ["cxr", "AUROC"], ["derm", "CRS"],
                                                               ["derm", "AUROC"]]
    text = lodo.describe_held_out_noise(noise, simulated=True)
    assert text.startswith("All 4 held-out τ_b (each predictor on each held-out dataset, 0.579 to 0.766) lie below "
                           "the central 95 % of two bootstrap draws of their held-out AUROC ranking")
    assert "every one-seed prediction pair lies below every seed-redraw pair" in text
    assert text.count("That a rank comparison means something only beside") == 1
    assert text.endswith("this build's simulated world.")
    mixed = lodo.describe_held_out_noise(_noise_blocks({"cxr": (0.95, 0.7)}))
    assert "Of the 2 held-out τ_b" in mixed and "1 lies below" in mixed and "and 1 inside" in mixed
    none = lodo.describe_held_out_noise(_noise_blocks({"cxr": (0.95, 0.97)}))
    assert "0 lie below" in none and "neither prediction falls short" in none
    assert "no noise baseline" in lodo.describe_held_out_noise(noise.iloc[:0])
    # On a user's own data the lesson names the run's data, not a build's world (issue 30).
    own = lodo.describe_held_out_noise(noise, simulated=False)
    assert own.endswith("a finding of this run's own data.") and "build's" not in own


# --- "Is this real?" and the exercise (issue 29) ----------------------------------------------------------

import numpy as np  # noqa: E402

from crsbench_lib.report.sentences.lessons import DESIGN, WORLD, describe_lessons  # noqa: E402
from crsbench_lib.scoring.lodo import TauDifference  # noqa: E402
from crsbench_lib.scoring.retest import noise_baseline_table  # noqa: E402


def _membership(seen_all: int, new_only: int = 9):
    names = [f"b{i}" for i in range(seen_all)] + [f"n{i}" for i in range(new_only)]
    return pd.concat([pd.DataFrame({"held_out": d, "encoder": names, "new": [False] * seen_all + [True] * new_only})
                      for d in ("cxr", "derm", "fundus")])


def _held_out_noise(taus, low=0.87, high=0.98):
    blocks = []
    for dataset in ("cxr", "derm", "fundus"):
        block = noise_baseline_table({f"CRS without {dataset}": taus[0], f"AUROC without {dataset}": taus[1]},
                                     {"the AUROC ranking": [0.95, 0.96]}, {"the AUROC ranking": np.linspace(low, high, 401)})
        blocks.append(block.assign(held_out=dataset))
    return pd.concat(blocks, ignore_index=True)


def _lodo_lessons(crs=0.653, auroc=0.696, interval=(-0.135, 0.036), membership=None, noise=None, simulated=True):
    return lodo.lodo_lessons(crs, auroc, interval, 3, 19, _membership(9, 10) if membership is None else membership,
                             _held_out_noise((crs, auroc)) if noise is None else noise, simulated=simulated)


def test_lodo_lessons_scopes_and_the_interval_lesson():
    lessons = _lodo_lessons()
    # The last lesson counts which encoders each held-out domain is new to: this run's zoo, not the design.
    assert [lesson.scope for lesson in lessons] == [DESIGN, DESIGN, WORLD, WORLD, WORLD]
    assert "resamples the 19 candidates" in lessons[1].text and "moves a τ_b by 0.012" in lessons[1].text
    assert "each mean rests on 3 τ_b values" in lessons[1].text


def test_lodo_design_lesson_says_what_a_held_out_dataset_is_new_to():
    design = _lodo_lessons()[0]
    assert design.scope == DESIGN and "only among the encoders to which it is new" in design.text
    assert "Here" not in design.text  # the counts are this run's, in a lesson of their own
    counted = _lodo_lessons()[-1]
    assert counted.scope == WORLD
    text = counted.text
    assert "Here 9 of 19 candidates were pretrained or fitted on pools that draw from every held-out domain" in text
    assert "tests transfer to a new task, not to a new domain" in text and "10 per held-out dataset" in text
    assert "moves τ_b by 0.044" in text and "too coarse" not in text
    everyone = _lodo_lessons(membership=_membership(19, 0))[-1].text
    assert "all 19 candidates were pretrained" in everyone and "new task in a seen domain only" in everyone
    nobody = _lodo_lessons(membership=_membership(0, 19))[-1].text
    assert "none of the 19 candidates saw every held-out domain" in nobody
    few = _lodo_lessons(membership=_membership(15, 4))[-1].text
    assert "4 per held-out dataset" in few and "too coarse for τ_b to mean much" in few
    unknown = _lodo_lessons(membership=pd.DataFrame(columns=["held_out", "encoder", "new"]))[0].text
    assert "is not known for this run" in unknown


@pytest.mark.parametrize("interval, word", [((-0.135, 0.036), "nor a worse one detectably"),
                                            ((-0.2, -0.01), "to predict AUROC, AUROC on the other datasets does better"),
                                            ((0.01, 0.2), "carry information about how encoders rank")])
def test_lodo_predictor_lesson_follows_the_interval(interval, word):
    point = sum(interval) / 2
    text = _lodo_lessons(crs=0.6 + point, auroc=0.6, interval=interval)[2].text
    assert word in text
    assert ("better than" in text) == (interval[0] > 0 or interval[1] < 0)


def test_lodo_noise_lesson_counts_where_each_tau_falls():
    below = _lodo_lessons()[3].text
    assert "6 lie below the central 95 %" in below and "0 inside and 0 above" in below and "room for a better" in below
    inside = _lodo_lessons(crs=0.9, auroc=0.95, interval=(-0.1, 0.01))[3].text
    assert "0 lie below" in inside and "6 inside" in inside and "Neither prediction falls short" in inside
    mixed = _lodo_lessons(crs=0.6, auroc=0.95, interval=(-0.4, -0.2))[3].text
    assert "3 lie below" in mixed and "3 inside" in mixed and "Where a τ_b lies inside" in mixed
    bare = _lodo_lessons(noise=pd.DataFrame())[3].text
    assert "no noise baseline" in bare


def test_lodo_lessons_on_own_data_name_no_simulation():
    lessons = _lodo_lessons(simulated=False)
    assert all("phantom" not in x.text.lower() and "simulated" not in x.text.lower() for x in lessons if x.scope == WORLD)
    assert "This run's own data" in describe_lessons(lessons, simulated=False)


def _diff(crs, auroc, low, high, n=9):
    return TauDifference("crs", "auroc", crs, auroc, crs - auroc, low, high, 0.95, 1000, n, 3)


def test_lodo_exercise_compares_like_with_like_and_follows_the_verdicts():
    same = lodo.lodo_exercise_arm(_diff(0.611, 0.685, -0.3, 0.09), _diff(0.667, 0.722, -0.22, 0.16), 19)
    assert "the frozen arm of the same 9" in same and "The verdict is the same in both arms (the data cannot tell)" in same
    assert "+0.056 (1.0 swapped pairs per held-out ranking" in same and len(same.split()) >= 25
    changed = lodo.lodo_exercise_arm(_diff(0.5, 0.7, -0.3, -0.05), _diff(0.667, 0.722, -0.22, 0.16), 19)
    assert "The verdict changes with the arm (frozen: AUROC predicts better; adapted: the data cannot tell)" in changed
    assert "-0.167" not in changed and "CRS's mean τ_b by +0.167" in changed
    missing = lodo.lodo_exercise_arm(None, None, 19)
    assert "no lora arm" in missing and len(missing.split()) >= 25


# --- the key takeaway ----------------------------------------------------------------------------------

from crsbench_lib.report.takeaway import check_takeaway  # noqa: E402


@pytest.mark.parametrize("crs, auroc, interval, claim", [
    (0.653, 0.696, (-0.135, 0.036), "the CRS and AUROC on the other datasets predict a new dataset's AUROC ranking indistinguishably"),
    (0.5, 0.7, (-0.3, -0.05), "AUROC on the other datasets predicts a new dataset's AUROC ranking better than the CRS"),
    (0.8, 0.6, (0.05, 0.3), "the CRS predicts a new dataset's AUROC ranking better than AUROC on the other datasets"),
    (0.5, 0.7, (0.05, 0.3), "excludes its own point -0.200"),
])
def test_lodo_takeaway_follows_the_interval(crs, auroc, interval, claim):
    text = lodo.lodo_takeaway(crs, auroc, interval, 3, _held_out_noise((crs, auroc)))
    assert check_takeaway(text) == text and claim in text and text.startswith("Over 3 held-out datasets, ")
    assert grammar.format_interval(*interval) in text and grammar.fmt(crs - auroc, 3) in text
    assert ("better than" in text) == (claim.endswith("the CRS") or claim.endswith("other datasets"))


def test_lodo_takeaway_places_the_taus_against_the_held_out_noise():
    below = lodo.lodo_takeaway(0.653, 0.696, (-0.135, 0.036), 3, _held_out_noise((0.653, 0.696)))
    assert "All 6 held-out τ_b fall below" in below and "mean τ_b 0.653 against 0.696" in below
    inside = lodo.lodo_takeaway(0.9, 0.95, (-0.1, 0.01), 3, _held_out_noise((0.9, 0.95)))
    assert "None of the 6 held-out τ_b falls below" in inside
    mixed = lodo.lodo_takeaway(0.6, 0.95, (-0.4, -0.2), 3, _held_out_noise((0.6, 0.95)))
    assert "Of the 6 held-out τ_b, 3 fall below" in mixed and "3 within it" in mixed
    for text in (below, inside, mixed):
        assert check_takeaway(text) == text
    bare = lodo.lodo_takeaway(0.6, 0.95, (-0.4, -0.2), 3, pd.DataFrame())
    assert "held-out τ_b" not in bare and check_takeaway(bare) == bare
    undefined = lodo.lodo_takeaway(float("nan"), 0.5, (float("nan"), float("nan")), 3)
    assert "cannot be said" in undefined and "better than" not in undefined and check_takeaway(undefined) == undefined
