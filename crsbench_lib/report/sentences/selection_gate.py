"""The sentences of the selection-gate chapter: who advances, and which thresholds bind.

The gate's outcome with the caution it calls for (:func:`describe_selection`)
and which thresholds stop any candidate (:func:`describe_threshold_binding`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from crsbench_lib.report.grammar import and_list, finite

if TYPE_CHECKING:
    import pandas as pd


def describe_selection(
    advance: Sequence[str],
    tier: Sequence[str],
    clears: Sequence[str],
    n_encoders: int,
    untrained: Sequence[str] = (),
    references: Sequence[str] = (),
    level: float = 0.95,
) -> str:
    """The selection gate's outcome, with the caution its outcome calls for.

    Parameters
    ----------
    advance : sequence of str
        Candidates both in the leading tier and clearing every threshold.
    tier : sequence of str
        The leading tier: the gate's ``leading_tier`` column, a copy of the
        bootstrap summary's ``in_tier`` (the confidence set for the best
        candidate, the same set the leading-tier page names).
    clears : sequence of str
        Candidates clearing every threshold.
    n_encoders : int
        Candidates screened (references not counted).
    untrained : sequence of str
        Encoders with no pretraining (random initialisation or no learning); one
        of them advancing says the thresholds are too lax for this cohort.
    references : sequence of str
        Encoders shown as references, not candidates: named, never advanced.
    level : float
        Simultaneous coverage of the tier's intervals.

    Examples
    --------
    >>> describe_selection(["cnn_random"], ["cnn_random", "mae"], ["cnn_random"], 15, untrained=["cnn_random"])
    '1 of 15 candidates clears every threshold; the leading tier (95 % simultaneous coverage) is cnn_random and mae. cnn_random advances for deployment evaluation. Caution: cnn_random has no pretraining, so a gate it passes does not separate learned representations from an untrained baseline on this cohort; raise the thresholds or question the cohort before acting on it.'
    >>> describe_selection(["a"], ["a"], ["a", "b"], 2, references=["r"]).split(". ", 1)[1]
    'a advances for deployment evaluation. r is a reference, not a candidate: shown, never advanced.'
    """
    if n_encoders < 0:
        raise ValueError(f"n_encoders must be non-negative, got {n_encoders}")
    if n_encoders > 0 and not tier:
        raise ValueError("the leading tier is empty among candidates: the point leader is always a member")
    stray = [name for name in advance if name not in set(tier) or name not in set(clears)]
    if stray:
        raise ValueError(f"{stray[0]!r} advances without being in the leading tier and clearing every threshold")
    leaked = [name for name in (*advance, *tier) if name in set(references)]
    if leaked:
        raise ValueError(f"reference {leaked[0]!r} cannot be in the leading tier or advance")
    text = (f"{len(clears)} of {n_encoders} candidates {'clears' if len(clears) == 1 else 'clear'} every threshold; "
            f"the leading tier ({finite(level, 'level') * 100:.0f} % simultaneous coverage) is "
            f"{and_list(list(tier)) if tier else 'empty'}. ")
    if references:
        refs = list(references)
        note = (f" {and_list(refs)} {'is a reference' if len(refs) == 1 else 'are references'}, not "
                f"{'a candidate' if len(refs) == 1 else 'candidates'}: shown, never advanced.")
    else:
        note = ""
    if not advance:
        if not clears:
            return text + "No encoder clears the gate: the thresholds ask more than any candidate offers; revisit the candidates or the clinical requirements." + note
        return text + "No encoder is both in the leading tier and clears the gate: revisit the candidates or the thresholds." + note
    verb = "advances" if len(advance) == 1 else "advance"
    text += f"{and_list(list(advance))} {verb} for deployment evaluation."
    baseline = [name for name in advance if name in set(untrained)]
    if baseline:
        names = ", ".join(baseline)
        text += (f" Caution: {names} {'has' if len(baseline) == 1 else 'have'} no pretraining, so a gate "
                 f"{'it passes' if len(baseline) == 1 else 'they pass'} does not separate learned representations from an "
                 "untrained baseline on this cohort; raise the thresholds or question the cohort before acting on it.")
    return text + note


def describe_threshold_binding(failures: "pd.DataFrame") -> str:
    """Which thresholds stop any candidate, and which filter nothing on this build.

    Parameters
    ----------
    failures : pandas.DataFrame
        :func:`~crsbench_lib.scoring.selection_gate.threshold_failures`: axis,
        rule, failing, failing_alone, candidates.

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({"axis": ["D", "C"], "rule": ["D >= 0.7", "C <= 0.1"], "failing": [12, 0],
    ...                       "failing_alone": [12, 0], "candidates": [19, 19]})
    >>> describe_threshold_binding(table)
    'D >= 0.7 stops 12 of 19 candidates (12 by itself). C <= 0.1 binds no candidate: every candidate meets it, so on this build it filters nothing.'
    """
    for column in ("axis", "rule", "failing", "failing_alone", "candidates"):
        if column not in failures.columns:
            raise ValueError(f"describe_threshold_binding: the table lacks column {column!r}")
    if failures.empty:
        raise ValueError("describe_threshold_binding: no thresholds")
    n = int(failures["candidates"].iloc[0])
    binding = failures[failures["failing"] > 0]
    idle = failures[failures["failing"] == 0]
    parts = [f"{row['rule']} stops {int(row['failing'])} of {n} candidates ({int(row['failing_alone'])} by itself)."
             for _, row in binding.iterrows()]
    if not idle.empty:
        rules = and_list(idle["rule"].astype(str).tolist())
        one = len(idle) == 1
        if binding.empty:
            parts.append(f"No threshold binds: every candidate meets {rules}, so on this build the gate filters "
                         "nothing and only the leading tier decides.")
        else:
            parts.append(f"{rules} {'binds' if one else 'bind'} no candidate: every candidate meets "
                         f"{'it' if one else 'them'}, so on this build {'it filters' if one else 'they filter'} nothing.")
    return " ".join(parts)
