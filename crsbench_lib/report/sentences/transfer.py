"""The sentences of the transfer chapter: what adaptation changes, and how far the adapters trained.

How far the frozen and adapted leading sets agree (:func:`describe_overlap`)
and how the LoRA arm's adapters trained (:func:`describe_adapter_training`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from crsbench_lib.report.grammar import percent

if TYPE_CHECKING:
    import pandas as pd


def describe_overlap(frozen: Sequence[str], adapted: Sequence[str]) -> str:
    """How far two leading sets (e.g. frozen and adapted top *k*) agree.

    Examples
    --------
    >>> describe_overlap(["a", "b", "c"], ["a", "c", "d"])
    'The leading sets share 2 of 3 members (a, c); b leaves and d enters.'
    """
    first, second = list(frozen), list(adapted)
    shared = [x for x in first if x in second]
    left = [x for x in first if x not in second]
    entered = [x for x in second if x not in first]
    k = max(len(first), len(second))
    if not left and not entered:
        return f"The leading sets are the same {k} encoders ({', '.join(first)})."
    text = f"The leading sets share {len(shared)} of {k} members" + (f" ({', '.join(shared)})" if shared else "")
    moves = []
    if left:
        moves.append(f"{', '.join(left)} {'leaves' if len(left) == 1 else 'leave'}")
    if entered:
        moves.append(f"{', '.join(entered)} {'enters' if len(entered) == 1 else 'enter'}")
    return text + "; " + " and ".join(moves) + "."


def describe_adapter_training(training: "pd.DataFrame") -> str:
    """How the LoRA arm's adapters trained: how many stopped while still improving, how many never moved.

    Parameters
    ----------
    training : pandas.DataFrame
        :func:`crsbench_lib.report.world.adapter_training` output.

    Returns
    -------
    str

    Examples
    --------
    >>> import pandas as pd
    >>> rows = [("a", "derm", 0, 1.0, 3, 3, 3, 0.5), ("a", "derm", 0, 0.1, 2, 0, 3, 0.7)]
    >>> describe_adapter_training(pd.DataFrame(rows, columns=["encoder", "dataset", "seed", "label_fraction",
    ...                                                        "epochs_run", "best_epoch", "max_epochs", "best_val_loss"]))
    'Of the 2 adapters of 1 LoRA run, 1 (50 %) reached its lowest validation loss at the last of its 3 epochs, so training stopped while it was still improving; 1 (50 %) never beat the frozen encoder it started from. Of the 1 trained on all labels, 1 (100 %) was still improving.'
    """
    if training.empty:
        return ("This run's manifest holds no adapter reports (its LoRA cells were computed before the runner "
                "recorded them), so how far the adapters trained is not known here.")
    n = len(training)
    runs = len(training[["encoder", "dataset", "seed"]].drop_duplicates())
    limit = training["max_epochs"]
    improving = training["best_epoch"] >= limit
    unmoved = int((training["best_epoch"] == 0).sum())
    epochs = int(limit.max()) if limit.nunique() == 1 else None
    last = f"the last of its {epochs} epochs" if epochs is not None else "its last allowed epoch"

    def count(k: int, total: int) -> str:
        return f"{k} ({percent(k / total)})"

    def verb(k: int, singular: str, plural: str) -> str:
        return singular if k == 1 else plural

    head = f"Of the {n} adapters of {runs} LoRA run{'s' if runs != 1 else ''}, "
    k = int(improving.sum())
    if k:
        text = (head + f"{count(k, n)} reached {verb(k, 'its', 'their')} lowest validation loss at "
                + (last if k == 1 else last.replace("its", "their")) + ", so training stopped while "
                + verb(k, "it was", "they were") + " still improving")
    else:
        text = head + "every one stopped on its validation loss before the epoch limit, so longer training would not have changed them"
    if unmoved:
        text += (f"; {count(unmoved, n)} never beat the frozen encoder {verb(unmoved, 'it', 'they')} started from")
    full = training["label_fraction"] >= 1.0
    if full.any() and k:
        m = int((improving & full).sum())
        text += (f". Of the {int(full.sum())} trained on all labels, {count(m, int(full.sum()))} "
                 f"{verb(m, 'was', 'were')} still improving")
    return text + "."
