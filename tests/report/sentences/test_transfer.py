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
