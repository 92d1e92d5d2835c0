"""The transfer sentences follow the leading sets and the adapters' training."""

import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from crsbench_lib.report.sentences import transfer


@given(a=st.sets(st.sampled_from("abcdef"), min_size=1, max_size=3), b=st.sets(st.sampled_from("abcdef"), min_size=1, max_size=3))
def test_describe_overlap(a, b):
    first, second = sorted(a), sorted(b)
    text = transfer.describe_overlap(first, second)
    if set(a) == set(b):
        assert "are the same" in text
    else:
        assert f"share {len(a & b)} of" in text
        for name in set(a) - set(b):
            assert name in text.split(";")[1]


def _adapters(rows):
    import pandas as pd

    from crsbench_lib.report.world import ADAPTER_COLUMNS

    return pd.DataFrame(rows, columns=list(ADAPTER_COLUMNS))


def test_adapter_training_counts_capped_unmoved_and_frozen_adapters():
    from crsbench_lib.report.sentences.transfer import describe_adapter_training

    nan = float("nan")
    rows = [("a", "derm", s, 1.0, True, 600, 440, 2000, False, False, 1.2, 1.1, 1e-3) for s in (0, 1)]
    rows += [("a", "derm", 0, 0.25, True, 2000, 2000, 2000, True, True, 1.3, 1.2, 1e-3),
             ("a", "derm", 1, 0.25, True, 160, 0, 2000, False, False, 1.3, 1.3, 1e-3),
             ("a", "derm", 0, 0.01, False, 0, 0, 2000, False, False, nan, nan, 1e-3),
             ("b", "derm", 0, 1.0, True, 2000, 1980, 2000, True, False, 1.0, 0.9, 3e-4)]
    text = describe_adapter_training(_adapters(rows))
    assert text == ("Of the 6 adapters of 3 LoRA runs, 5 were trained and 1 label-fraction adapter was left frozen "
                    "(too few validation images for early stopping). Of the 3 trained on all labels, 1 (33 %) ran "
                    "the whole of the budget of 2000 steps and 0 (0 %) were still improving at its end; the median one "
                    "stopped after 600 steps, its best state at step 440. Among all 5 trained, 1 (20 %) were still "
                    "improving when the budget ran out and 1 (20 %) never beat the frozen probe they started from.")


def test_adapter_training_without_reports_or_full_label_adapters():
    from crsbench_lib.report.sentences.transfer import describe_adapter_training

    assert "no step-budget adapter reports" in describe_adapter_training(_adapters([]))
    only_fractions = _adapters([("a", "cxr", 0, 0.25, True, 300, 100, 500, False, False, 0.5, 0.4, 1e-3)])
    text = describe_adapter_training(only_fractions)
    assert "trained on all labels" not in text and "0 (0 %) were still improving" in text


def test_adapter_training_names_one_budget_or_several():
    from crsbench_lib.report.sentences.transfer import describe_adapter_training

    one = [("a", "derm", 0, 1.0, True, 480, 320, 480, True, False, 1.2, 1.1, 1e-3)]
    assert "ran the whole of the budget of 480 steps" in describe_adapter_training(_adapters(one))
    two = one + [("b", "derm", 0, 1.0, True, 100, 50, 600, False, False, 1.2, 1.1, 1e-3)]
    assert "ran the whole of their step budget" in describe_adapter_training(_adapters(two))


@given(n=st.integers(3, 30))
def test_tau_step_is_what_one_adjacent_swap_does(n):
    from scipy import stats

    order = list(range(n))
    swapped = order[:]
    swapped[0], swapped[1] = swapped[1], swapped[0]
    tau, _ = stats.kendalltau(order, swapped)
    assert transfer.tau_step(n) == f"With {n} encoders, one swapped pair moves τ_b by {1 - tau:.3f}."


def test_the_transfer_pages_grammar_sentences_say_no_more_than_their_intervals():
    # Regression (issue 27): the transfer page's gain and study sentences (built by report.grammar, as the
    # transfer notebook calls them) no longer say "raises ... no change is detectable" in one sentence, nor
    # "the data cannot tell the two apart" for this build's interval against another study's.
    from crsbench_lib.report.grammar import compare_with_study, describe_difference

    gain = describe_difference(0.003, "Adaptation", "the mean clean AUROC", better="higher",
                               interval=(-0.0002, 0.0057), level=0.95)
    assert "raises" not in gain and "no change is detectable" not in gain and "[-0.0002, 0.0057]" in gain
    study = compare_with_study(0.867, 0.562, "τ_b (leave-self-out)", interval=(0.556, 0.911))
    assert "cannot tell the two apart" not in study and "own sampling noise" in study


# --- "Is this real?" and the exercise (issue 29) ----------------------------------------------------------

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from crsbench_lib.report.sentences.lessons import DESIGN, WORLD, describe_lessons  # noqa: E402
from crsbench_lib.scoring.retest import noise_baseline_table  # noqa: E402


def _noise(tau, low=0.56, high=1.0):
    return noise_baseline_table({"frozen against adapted": tau}, {"frozen": [0.61, 0.72, 0.78]},
                                {"frozen": np.linspace(low, high, 401), "adapted": np.linspace(low + 0.05, high, 401)})


def _training(n_full=10, capped=1, improving=0, kept=2, frozen=3):
    rows = []
    for i in range(n_full):
        cap = i < capped
        rows.append(("a", "derm", i, 1.0, True, 480 if cap else 200, 0 if i < kept else 100, 480, cap,
                     cap and i < improving, 1.0, 0.9, 1e-3))
    rows += [("a", "derm", i, 0.01, False, 0, 0, 480, False, False, float("nan"), float("nan"), 1e-3)
             for i in range(frozen)]
    return _adapters(rows)


def _lessons(tau=0.944, gain=0.005, interval=(0.003, 0.008), training=None, top=(["a", "b"], ["a", "b"]),
             noise=None, simulated=True, reversed_pairs=None):
    counted = round((1 - tau) * 18) if reversed_pairs is None else reversed_pairs  # untied: 36 pairs
    return transfer.transfer_lessons(tau, 9, _noise(tau) if noise is None else noise, gain, interval,
                                     _training() if training is None else training, *top, simulated=simulated,
                                     reversed_pairs=counted)


def test_transfer_lessons_place_design_and_world_and_cite_the_study():
    lessons = _lessons()
    assert [lesson.scope for lesson in lessons] == [DESIGN, DESIGN, WORLD, WORLD]
    assert "steps of 0.056" in lessons[0].text and "1 swapped pair of 36" in lessons[0].text
    assert "τ_b 0.562 frozen vs adapted over 135 LoRA runs, the same top 3" in lessons[2].study
    assert "the top 2 is the same in both arms" in lessons[2].text
    assert "the top 2 differs" in _lessons(top=(["a", "b"], ["a", "c"]))[2].text


@pytest.mark.parametrize("tau, word", [(0.9, "inside the draws' central range"), (0.3, "below the draws' central range"),
                                       (0.999, "above the draws' central range")])
def test_transfer_reordering_is_judged_against_the_draws(tau, word):
    noise = _noise(tau, low=0.56, high=0.98)
    text = _lessons(tau=tau, noise=noise)[2].text
    assert word in text
    assert ("no more than re-measuring" in text) == (word.startswith("inside"))
    assert ("does not carry over" in text) == (word.startswith("below"))


def test_transfer_reordering_between_two_ranges_and_without_draws():
    noise = noise_baseline_table({"x": 0.7}, {}, {"frozen": np.linspace(0.4, 0.6, 101), "adapted": np.linspace(0.8, 0.9, 101)})
    assert "between the rankings' central ranges" in _lessons(tau=0.7, noise=noise)[2].text
    bare = noise_baseline_table({"x": 0.7}, {"frozen": [0.6, 0.7]}, {})
    assert "no like-for-like test-retest range" in _lessons(tau=0.7, noise=bare)[2].text


def test_transfer_kept_probes_follow_the_counts():
    assert "Here 2 of 10 trained adapters (20 %) kept the probe and 3 of 13 adapters stayed frozen" in _lessons()[1].text
    assert "Here none did" in _lessons(training=_training(kept=0, frozen=0))[1].text
    assert "no adapter reports" in _lessons(training=_adapters([]))[1].text


@pytest.mark.parametrize("capped, most", [(1, False), (4, False), (5, True), (10, True)])
def test_transfer_gain_lesson_reads_the_step_cap(capped, most):
    text = _lessons(training=_training(capped=capped, improving=1))[3].text
    assert f"Of the 10 adapters trained on all labels, {capped} ({capped * 10} %) hit the 480-step cap" in text
    assert ("Most ran into the cap" in text) is most
    assert ("Most stopped early on validation" in text) is (not most)


def test_transfer_gain_lesson_follows_its_interval():
    assert "raises the mean clean AUROC by 0.005 on average (95 % interval [0.003, 0.008])" in _lessons()[3].text
    text = _lessons(gain=0.001, interval=(-0.002, 0.004))[3].text
    assert "raises" not in text and "neither a rise nor a fall" in text
    assert "lowers" in _lessons(gain=-0.02, interval=(-0.03, -0.01))[3].text
    no_full = _adapters([("a", "cxr", 0, 0.25, True, 300, 100, 500, False, False, 0.5, 0.4, 1e-3)])
    assert "not recorded for the full-label adapters" in _lessons(training=no_full)[3].text


def test_transfer_lessons_on_own_data_name_no_simulation():
    lessons = _lessons(simulated=False)
    for lesson in lessons:
        if lesson.scope == WORLD:
            assert "phantom" not in lesson.text.lower() and "simulated" not in lesson.text.lower()
    assert "This run's own data" in describe_lessons(lessons, simulated=False)


def _ranks(frozen, adapted):
    names = [f"e{i}" for i in range(len(frozen))]
    return pd.DataFrame({"encoder": names, "crs_frozen": frozen, "crs_lora": adapted})


def test_top_k_exercise_finds_the_cut_of_each_swap():
    # e4 and e5 swap (ranks 5 and 6): only the top 5 changes.
    ranks = _ranks([9, 8, 7, 6, 5, 4, 3], [9, 8, 7, 6, 4, 5, 3])
    text = transfer.transfer_exercise_top_k(ranks, 5)
    assert "the top-5 sets share 4 of 5 members" in text and "e4 leaves and e5 enters" in text
    assert "reorders 1 of 21 pairs" in text and "here at k = 5 and at no other k from 1 to 6" in text
    same = transfer.transfer_exercise_top_k(ranks, 3)
    assert "the top-3 sets are the same 3 encoders" in same and "at k = 5" in same
    assert len(same.split()) >= 25


def test_top_k_exercise_without_swaps_and_with_many():
    text = transfer.transfer_exercise_top_k(_ranks([5, 4, 3, 2, 1], [5, 4, 3, 2, 1]), 2)
    assert "reorders none of the 10 pairs" in text and "τ_b is then 1" in text
    reversed_ = transfer.transfer_exercise_top_k(_ranks([5, 4, 3, 2, 1], [1, 2, 3, 4, 5]), 2)
    assert "reorders 10 of 10 pairs" in reversed_ and "and 6 more" in reversed_ and "here at every k from 1 to 4" in reversed_
    with pytest.raises(ValueError, match="k must lie"):
        transfer.transfer_exercise_top_k(_ranks([2, 1], [2, 1]), 2)


def test_tau_lesson_states_the_counted_pairs_and_says_when_ties_put_tau_between_steps():
    assert "so 0.889 is 2 swapped pairs of 36." in _lessons(tau=8 / 9)[0].text
    # With ties, tau_b is no multiple of the step: the count comes from the facts, never from tau.
    text = _lessons(tau=1 - 3 / 36, reversed_pairs=1)[0].text
    assert "is 1 swapped pair of 36 (tied pairs put τ_b between the steps)" in text


# --- the key takeaway ----------------------------------------------------------------------------------

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from crsbench_lib.report.takeaway import check_takeaway  # noqa: E402
from crsbench_lib.scoring.retest import noise_baseline_table  # noqa: E402


def _transfer_noise(tau, frozen=(0.8, 1.0), adapted=(0.8, 1.0)):
    return noise_baseline_table({"frozen against adapted CRS": tau}, {"frozen": [0.9, 0.95]},
                                {"frozen": np.linspace(*frozen, 101), "adapted": np.linspace(*adapted, 101)})


def _takeaway(tau, reversed_pairs, noise, top_frozen, top_adapted):
    """The chapter's takeaway as the page renders it: its text file on the facts of the page's summary and noise."""
    from crsbench_lib.report.text import render
    from crsbench_lib.scoring.transfer import TransferSummary, transfer_facts

    summary = TransferSummary(tau, reversed_pairs, 0.01, len(top_frozen), top_frozen, top_adapted,
                              len(set(top_frozen) & set(top_adapted)), 9, 0.005)
    return render("transfer", "takeaway", transfer_facts(summary, noise))


@pytest.mark.parametrize("tau, reversed_pairs, noise, verdict, pairs", [
    (0.944, 1, _transfer_noise(0.944), "survives adaptation: frozen against adapted τ_b 0.944", "1 swapped pair of 36"),
    (0.611, 7, _transfer_noise(0.611), "does not survive adaptation intact", "7 swapped pairs of 36"),
    (0.6, 7, _transfer_noise(0.6, (0.5, 0.55), (0.45, 0.5)),
     "survives adaptation: frozen against adapted τ_b 0.600 (7 swapped pairs of 36) lies above", "7 swapped pairs of 36"),
    (0.7, 5, _transfer_noise(0.7, (0.5, 0.6), (0.8, 0.9)), "partly survives adaptation", "5 swapped pairs of 36"),
    (0.944, 1, pd.DataFrame(), "moves under adaptation", "1 swapped pair of 36"),
    (1.0, 0, _transfer_noise(1.0), "survives adaptation unchanged", "0 swapped pairs of 36"),
])
def test_transfer_takeaway_reads_the_tau_against_the_draws(tau, reversed_pairs, noise, verdict, pairs):
    text = _takeaway(tau, reversed_pairs, noise, ("a", "b", "c"), ("a", "b", "c"))
    assert check_takeaway(text) == text and verdict in text and f"({pairs})" in text
    assert text.startswith("The frozen CRS ranking of the 9 candidates") and "ties put" not in text
    assert text.endswith("The top-3 sets are the same 3 encoders (a, b, c).")


def test_transfer_takeaway_says_who_leaves_the_top_set():
    text = _takeaway(0.611, 7, _transfer_noise(0.611), ("a", "b", "c"), ("a", "b", "d"))
    assert text.endswith("The top-3 sets share 2 of 3 members (a, b); c leaves and d enters.")
    assert check_takeaway(text) == text
