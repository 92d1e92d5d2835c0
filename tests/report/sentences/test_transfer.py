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
                    "the whole budget of 2000 steps and 0 (0 %) were still improving at its end; the median one "
                    "stopped after 600 steps, its best state at step 440. Among all 5 trained, 1 (20 %) were still "
                    "improving when the budget ran out and 1 (20 %) never beat the frozen probe they started from.")


def test_adapter_training_without_reports_or_full_label_adapters():
    from crsbench_lib.report.sentences.transfer import describe_adapter_training

    assert "no step-budget adapter reports" in describe_adapter_training(_adapters([]))
    only_fractions = _adapters([("a", "cxr", 0, 0.25, True, 300, 100, 500, False, False, 0.5, 0.4, 1e-3)])
    text = describe_adapter_training(only_fractions)
    assert "trained on all labels" not in text and "0 (0 %) were still improving" in text


def _summary(base, cross):
    from crsbench_lib.scoring.retest import ACROSS_SAME_SEED, WITHIN_ARM

    return pd.DataFrame([(WITHIN_ARM, "frozen", 3, sum(base) / 3, min(base), max(base)),
                         (ACROSS_SAME_SEED, "frozen vs lora", 3, sum(cross) / 3, min(cross), max(cross))],
                        columns=["comparison", "arms", "n_pairs", "mean_tau", "min_tau", "max_tau"])


@given(base=st.lists(st.floats(-1, 1), min_size=3, max_size=3), cross=st.lists(st.floats(-1, 1), min_size=3, max_size=3))
def test_describe_retest_places_the_adapted_tau_against_the_baseline_range(base, cross):
    text = transfer.describe_retest(_summary(base, cross))
    if max(cross) < min(base):
        assert "more than redrawing" in text
    elif min(cross) > max(base):
        assert "less than redrawing" in text
    else:
        assert "no more than" in text


def test_describe_retest_without_seed_pairs():
    assert "single seed" in transfer.describe_retest(_summary([0.5] * 3, [0.5] * 3).iloc[:0])
