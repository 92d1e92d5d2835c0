"""The words of the worked decision (the agreement chapter): one reversed pair, walked through axis by axis.

The pair is chosen by a rule from the build's numbers
(:func:`~crsbench_lib.scoring.agreement.decisive_reversal`: the reversed
candidate pair with the largest CRS gap), and every axis's paired difference is
read against its own interval (:func:`~crsbench_lib.scoring.data_needs.pair_projection`,
the seed-level interval of method section 9, amendment 26), so the page says
which axes carry the reversal and whether the data resolve them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from crsbench_lib.report.grammar import and_list, fmt, format_interval
from crsbench_lib.report.sentences.lessons import world_name

if TYPE_CHECKING:
    import pandas as pd

#: The axes in words, for the walk-through.
AXIS_WORDS: dict[str, str] = {"D": "discrimination (D, clean AUROC)", "C": "calibration (C, ECE)",
                              "L": "label efficiency (L)", "R": "robustness (R)"}
#: Whether a larger raw value is better, per axis (the standard's directions).
HIGHER_BETTER: dict[str, bool] = {"D": True, "C": False, "L": True, "R": False}


def describe_worked_decision(
    auroc_choice: str,
    crs_choice: str,
    n_reversed: int,
    n_pairs: int,
    scores: "pd.DataFrame",
    projection: "pd.DataFrame",
    level: float = 0.95,
    simulated: bool | None = None,
    digits: int = 3,
) -> str:
    """A reversed pair walked through: what AUROC and the CRS say, then each axis with its interval.

    Parameters
    ----------
    auroc_choice, crs_choice : str
        The encoder AUROC ranks higher and the one the CRS ranks higher.
    n_reversed, n_pairs : int
        Reversed candidate pairs, and all candidate pairs.
    scores : pandas.DataFrame
        The score table (``encoder``, ``D``, ``crs``).
    projection : pandas.DataFrame
        :func:`~crsbench_lib.scoring.data_needs.pair_projection` of
        ``crs_choice`` less ``auroc_choice`` (columns ``axis``, ``difference``,
        ``half_width``, ``resolved``).
    level : float
        The intervals' coverage.
    simulated : bool, optional
        Names the world.
    digits : int

    Returns
    -------
    str
        Markdown: the rule and the pair, one bullet per axis (who it favours,
        by how much, the interval and whether it excludes zero), and what
        carries the reversal.

    Examples
    --------
    >>> import pandas as pd
    >>> scores = pd.DataFrame({"encoder": ["a", "b"], "D": [0.86, 0.85], "crs": [0.60, 0.70]})
    >>> projection = pd.DataFrame({"axis": list("DCLR"), "difference": [-0.01, -0.02, 0.0, -0.03],
    ...     "half_width": [0.004, 0.01, 0.02, 0.05], "resolved": [True, True, False, False]})
    >>> text = describe_worked_decision("a", "b", 3, 10, scores, projection, simulated=True)
    >>> print(text.splitlines()[0])  # doctest: +NORMALIZE_WHITESPACE
    Of the 10 candidate pairs, 3 are ordered one way by clean AUROC and the other by the CRS; the one with the
    largest CRS gap is a against b. AUROC prefers a (0.860 against 0.850); the CRS prefers b (0.700 against
    0.600). Axis by axis, b against a (a positive difference favours b; paired 95 % intervals over seeds and
    test images):
    >>> print(text.splitlines()[-1])  # doctest: +NORMALIZE_WHITESPACE
    So the reversal rests on calibration (C, ECE), where b's advantage is resolved, while a's advantage in
    discrimination (D, clean AUROC) is resolved too: the two choices trade one for the other, and which matters
    more is the clinical use's question, not the benchmark's. (The pair was chosen from these data, so its
    intervals are not adjusted for the choice; "rests on" reads which axes are resolved, and how much each axis
    moves the CRS is the four-axes chapter's knock-out.) Which pair reverses is a fact of this build's simulated
    world; that a pair can reverse on axes AUROC does not see holds for any benchmark of this design.
    """
    table = scores.assign(encoder=scores["encoder"].astype(str)).set_index("encoder")
    first = (f"Of the {n_pairs} candidate pairs, {n_reversed} {'is' if n_reversed == 1 else 'are'} ordered one way by "
             "clean AUROC and the other by the CRS; the one with the largest CRS gap is "
             f"{auroc_choice} against {crs_choice}. AUROC prefers {auroc_choice} "
             f"({fmt(float(table.loc[auroc_choice, 'D']), digits)} against "
             f"{fmt(float(table.loc[crs_choice, 'D']), digits)}); the CRS prefers {crs_choice} "
             f"({fmt(float(table.loc[crs_choice, 'crs']), digits)} against "
             f"{fmt(float(table.loc[auroc_choice, 'crs']), digits)}). Axis by axis, {crs_choice} against "
             f"{auroc_choice} (a positive difference favours {crs_choice}; paired {level * 100:g} % intervals over "
             "seeds and test images):")
    lines = [first, ""]
    favours_crs, favours_auroc = [], []
    for row in projection.itertuples():
        axis = str(row.axis)
        # Oriented so that positive favours the CRS's choice, whatever the axis's direction.
        sign = 1.0 if HIGHER_BETTER[axis] else -1.0
        advantage, half = sign * float(row.difference), float(row.half_width)
        who = crs_choice if advantage > 0 else auroc_choice
        state = "resolved" if bool(row.resolved) else "within the noise"
        lines.append(f"- {AXIS_WORDS[axis]}: {'+' if advantage > 0 else ''}{fmt(advantage, digits + 1)} "
                     f"{format_interval(advantage - half, advantage + half, digits + 1)}, favouring {who}, "
                     f"{state}")
        if advantage > 0:
            favours_crs.append((AXIS_WORDS[axis], bool(row.resolved)))
        elif advantage < 0:
            favours_auroc.append((AXIS_WORDS[axis], bool(row.resolved)))
    lines.append("")
    crs_resolved = [name for name, resolved in favours_crs if resolved]
    auroc_resolved = [name for name, resolved in favours_auroc if resolved]
    if crs_resolved:
        text = (f"So the reversal rests on {and_list(crs_resolved)}, where {crs_choice}'s advantage is resolved")
        if auroc_resolved:
            text += (f", while {auroc_choice}'s advantage in {and_list(auroc_resolved)} is resolved too: the two "
                     "choices trade one for the other, and which matters more is the clinical use's question, not "
                     "the benchmark's.")
        else:
            text += (f", and {auroc_choice}'s AUROC lead is not resolved: a team choosing by AUROC would give up a "
                     "measured advantage for a difference the data cannot confirm.")
    elif favours_crs:
        text = (f"So the reversal rests on {and_list([n for n, _ in favours_crs])}, but none of {crs_choice}'s "
                "advantages is resolved: the CRS's preference is a reading of point estimates, and the data-needs "
                "section of the leading-tier chapter says what data would settle it.")
    else:
        text = (f"No axis favours {crs_choice}, so the CRS's preference comes from its dominance, balance and floor "
                "terms, not from any single axis.")
    lines.append(text + " (The pair was chosen from these data, so its intervals are not adjusted for the choice; "
                 "\"rests on\" reads which axes are resolved, and how much each axis moves the CRS is the four-axes "
                 f"chapter's knock-out.) Which pair reverses is a fact of {world_name(simulated)}; that a pair can "
                 "reverse on axes AUROC does not see holds for any benchmark of this design.")
    return "\n".join(lines)


def no_reversal_text(n_pairs: int, simulated: bool | None = None) -> str:
    """What the page says when AUROC and the CRS order every candidate pair alike.

    Examples
    --------
    >>> no_reversal_text(6).split(";")[0]
    'Clean AUROC and the CRS order all 6 candidate pairs alike'
    """
    return (f"Clean AUROC and the CRS order all {n_pairs} candidate pairs alike; in {world_name(simulated)} there is "
            "no decision the reliability axes change. The first exercise below (all the weight on the floor "
            "component) creates one.")
