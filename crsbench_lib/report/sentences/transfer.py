"""The sentences of the transfer chapter: what adaptation changes, and how far the adapters trained.

How far the frozen and adapted top-k sets agree (:func:`describe_overlap`),
and how the LoRA arm's adapters trained (:func:`describe_adapter_training`).
Whether adaptation reorders more than the ranking's own noise is read by the
book's one shared sentence for every rank comparison,
:func:`crsbench_lib.report.sentences.noise.describe_tau_against_noise`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from crsbench_lib.report.grammar import percent

if TYPE_CHECKING:
    import pandas as pd


def describe_overlap(frozen: Sequence[str], adapted: Sequence[str]) -> str:
    """How far two top-k sets (e.g. frozen and adapted) agree (not the leading tier, which is a confidence set).

    Examples
    --------
    >>> describe_overlap(["a", "b", "c"], ["a", "c", "d"])
    'The top-3 sets share 2 of 3 members (a, c); b leaves and d enters.'
    """
    first, second = list(frozen), list(adapted)
    shared = [x for x in first if x in second]
    left = [x for x in first if x not in second]
    entered = [x for x in second if x not in first]
    k = max(len(first), len(second))
    if not left and not entered:
        return f"The top-{k} sets are the same {k} encoders ({', '.join(first)})."
    text = f"The top-{k} sets share {len(shared)} of {k} members" + (f" ({', '.join(shared)})" if shared else "")
    moves = []
    if left:
        moves.append(f"{', '.join(left)} {'leaves' if len(left) == 1 else 'leave'}")
    if entered:
        moves.append(f"{', '.join(entered)} {'enters' if len(entered) == 1 else 'enter'}")
    return text + "; " + " and ".join(moves) + "."


def describe_adapter_training(training: "pd.DataFrame") -> str:
    """How the LoRA arm's adapters trained: how many ran the whole budget, how many were still improving, how many never moved.

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
    >>> from crsbench_lib.report.world import ADAPTER_COLUMNS
    >>> rows = [("a", "derm", 0, 1.0, True, 480, 320, 640, False, False, 1.2, 1.1, 1e-3),
    ...         ("a", "derm", 0, 0.25, True, 640, 640, 640, True, True, 1.3, 1.2, 1e-3),
    ...         ("a", "derm", 0, 0.01, False, 0, 0, 640, False, False, float("nan"), float("nan"), 1e-3)]
    >>> describe_adapter_training(pd.DataFrame(rows, columns=list(ADAPTER_COLUMNS)))
    'Of the 3 adapters of 1 LoRA run, 2 were trained and 1 label-fraction adapter was left frozen (too few validation images for early stopping). Of the 1 trained on all labels, 0 (0 %) ran the whole of the budget of 640 steps and 0 (0 %) were still improving at its end; the median one stopped after 480 steps, its best state at step 320. Among all 2 trained, 1 (50 %) were still improving when the budget ran out and 0 (0 %) never beat the frozen probe they started from.'
    """
    if training.empty:
        return ("This run's manifest holds no step-budget adapter reports (its LoRA cells were computed before "
                "the runner recorded them), so how far the adapters trained is not known here.")
    n = len(training)
    runs = len(training[["encoder", "dataset", "seed"]].drop_duplicates())
    trained = training[training["trained"]]
    frozen = n - len(trained)
    budgets = training["max_steps"].unique()
    budget = f"the budget of {int(budgets[0])} steps" if len(budgets) == 1 else "their step budget"

    def count(k: int, total: int) -> str:
        return f"{k} ({percent(k / total)})" if total else str(k)

    text = f"Of the {n} adapters of {runs} LoRA run{'s' if runs != 1 else ''}, {len(trained)} were trained"
    if frozen:
        text += (f" and {frozen} label-fraction adapter{' was' if frozen == 1 else 's were'} left frozen "
                 "(too few validation images for early stopping)")
    text += "."
    full = trained[trained["label_fraction"] >= 1.0]
    if len(full):
        text += (f" Of the {len(full)} trained on all labels, {count(int(full['hit_cap'].sum()), len(full))} ran "
                 f"the whole of {budget} and {count(int(full['improving_at_end'].sum()), len(full))} "
                 f"were still improving at its end; the median one stopped after {int(full['steps_run'].median())} "
                 f"steps, its best state at step {int(full['best_step'].median())}.")
    if len(trained):
        text += (f" Among all {len(trained)} trained, {count(int(trained['improving_at_end'].sum()), len(trained))} "
                 f"were still improving when the budget ran out and "
                 f"{count(int((trained['best_step'] == 0).sum()), len(trained))} never beat the frozen "
                 "probe they started from.")
    return text


def tau_step(n_encoders: int) -> str:
    """How far one swapped pair moves Kendall's τ_b among ``n_encoders`` (no ties): ``2 / C(n, 2)``.

    Examples
    --------
    >>> tau_step(10)
    'With 10 encoders, one swapped pair moves τ_b by 0.044.'
    """
    pairs = n_encoders * (n_encoders - 1) // 2
    if pairs < 1:
        return ""
    return f"With {n_encoders} encoders, one swapped pair moves τ_b by {2 / pairs:.3f}."
