"""The sentences of the transfer chapter: what adaptation changes, and how far the adapters trained.

How far the frozen and adapted leading sets agree (:func:`describe_overlap`),
how the LoRA arm's adapters trained (:func:`describe_adapter_training`) and
whether adaptation reorders more than the ranking's own noise (:func:`describe_retest`).
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
    'Of the 3 adapters of 1 LoRA run, 2 were trained and 1 label-fraction adapter was left frozen (too few validation images for early stopping). Of the 1 trained on all labels, 0 (0 %) ran the whole budget of 640 steps and 0 (0 %) were still improving at its end; the median one stopped after 480 steps, its best state at step 320. Among all 2 trained, 1 (50 %) were still improving when the budget ran out and 0 (0 %) never beat the frozen probe they started from.'
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
                 f"the whole {budget.removeprefix('the ')} and {count(int(full['improving_at_end'].sum()), len(full))} "
                 f"were still improving at its end; the median one stopped after {int(full['steps_run'].median())} "
                 f"steps, its best state at step {int(full['best_step'].median())}.")
    if len(trained):
        text += (f" Among all {len(trained)} trained, {count(int(trained['improving_at_end'].sum()), len(trained))} "
                 f"were still improving when the budget ran out and "
                 f"{count(int((trained['best_step'] == 0).sum()), len(trained))} never beat the frozen "
                 "probe they started from.")
    return text


def describe_retest(summary: "pd.DataFrame", adapted: str = "lora", frozen: str = "frozen") -> str:
    """Whether adaptation reorders the encoders more than redrawing the training split does.

    Compares, scored one seed at a time (:func:`crsbench_lib.scoring.retest.retest_summary`),
    the frozen-against-adapted tau on the *same* seed with the frozen arm's
    test-retest tau (two seeds, each ranking as noisy as a one-seed study).
    With the few seed pairs of a run the comparison uses their range: below
    the smallest test-retest tau, adaptation reorders more than the noise;
    within the range, no more than it; above, less.

    Examples
    --------
    >>> import pandas as pd
    >>> from crsbench_lib.scoring.retest import ACROSS_SAME_SEED, WITHIN_ARM
    >>> summary = pd.DataFrame({"comparison": [WITHIN_ARM, ACROSS_SAME_SEED], "arms": ["frozen", "frozen vs lora"],
    ...                         "n_pairs": [3, 3], "mean_tau": [0.70, 0.45], "min_tau": [0.64, 0.38],
    ...                         "max_tau": [0.78, 0.51]})
    >>> describe_retest(summary)
    'Scored one seed at a time, two frozen seeds rank the encoders alike at a mean Kendall τ_b of 0.70 (0.64 to 0.78 over 3 seed pairs): that is the test-retest baseline, what redrawing the training split alone does. Frozen against adapted on the same seed, τ_b is 0.45 (0.38 to 0.51): below every test-retest pair, so adaptation reorders the encoders more than redrawing the split does.'
    """
    from crsbench_lib.scoring.retest import ACROSS_SAME_SEED, WITHIN_ARM

    base = summary[(summary["comparison"] == WITHIN_ARM) & (summary["arms"] == frozen)]
    cross = summary[(summary["comparison"] == ACROSS_SAME_SEED) & (summary["arms"] == f"{frozen} vs {adapted}")]
    if base.empty or cross.empty:
        return ("The run has a single seed, so no test-retest baseline can be measured: the frozen-against-adapted "
                "τ_b cannot be compared with the noise of the ranking itself.")
    b, c = base.iloc[0], cross.iloc[0]
    text = (f"Scored one seed at a time, two {frozen} seeds rank the encoders alike at a mean Kendall τ_b of "
            f"{b['mean_tau']:.2f} ({b['min_tau']:.2f} to {b['max_tau']:.2f} over {int(b['n_pairs'])} seed pairs): "
            "that is the test-retest baseline, what redrawing the training split alone does. "
            f"Frozen against adapted on the same seed, τ_b is {c['mean_tau']:.2f} ({c['min_tau']:.2f} to "
            f"{c['max_tau']:.2f}): ")
    if c["max_tau"] < b["min_tau"]:
        return text + "below every test-retest pair, so adaptation reorders the encoders more than redrawing the split does."
    if c["min_tau"] > b["max_tau"]:
        return text + ("above every test-retest pair, so adaptation reorders the encoders less than redrawing the "
                       "split does: the frozen ranking of one seed predicts the adapted ranking of that seed better "
                       "than it predicts the frozen ranking of another seed.")
    return text + ("within the range of the test-retest pairs, so adaptation reorders the encoders no more than "
                   "redrawing the split does, as far as this run's seeds can tell.")
