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

    return pd.DataFrame(rows, columns=["encoder", "dataset", "seed", "label_fraction", "epochs_run", "best_epoch",
                                       "max_epochs", "best_val_loss"])


def test_adapter_training_counts_adapters_still_improving_and_unmoved():
    from crsbench_lib.report.sentences.transfer import describe_adapter_training


    rows = [("a", "derm", s, f, 3, best, 3, 0.5) for s in (0, 1) for f, best in ((1.0, 3), (0.5, 3), (0.1, 0))]
    rows += [("b", "derm", 0, 1.0, 3, 2, 3, 0.4), ("b", "derm", 0, 0.5, 3, 3, 3, 0.4), ("b", "derm", 0, 0.1, 1, 0, 3, 0.4)]
    text = describe_adapter_training(_adapters(rows))
    assert text == ("Of the 9 adapters of 3 LoRA runs, 5 (56 %) reached their lowest validation loss at the last of "
                    "their 3 epochs, so training stopped while they were still improving; 3 (33 %) never beat the "
                    "frozen encoder they started from. Of the 3 trained on all labels, 2 (67 %) were still improving.")


def test_adapter_training_without_adapters_at_the_limit_or_without_reports():
    from crsbench_lib.report.sentences.transfer import describe_adapter_training


    early = _adapters([("a", "cxr", 0, 1.0, 4, 2, 5, 0.3), ("a", "cxr", 1, 1.0, 5, 4, 6, 0.3)])
    assert describe_adapter_training(early) == ("Of the 2 adapters of 2 LoRA runs, every one stopped on its "
                                                "validation loss before the epoch limit, so longer training would "
                                                "not have changed them.")
    mixed = _adapters([("a", "cxr", 0, 1.0, 5, 5, 5, 0.3), ("a", "cxr", 1, 1.0, 6, 6, 6, 0.3)])
    assert "at their last allowed epoch" in describe_adapter_training(mixed)
    assert "no adapter reports" in describe_adapter_training(_adapters([]))
