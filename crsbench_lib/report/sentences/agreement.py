"""The sentences of the agreement and sensitivity chapters: how far AUROC and CRS rank alike.

The rank agreement of AUROC and CRS with its reversed pairs and the study's
value (:func:`describe_agreement`), whether the CRS reorders the AUROC ranking beyond
its own noise (:func:`describe_reordering`, in place of a test of no association), and how that agreement and the top set
move when a worst anchor moves (:func:`describe_anchor_sweep`). Whether the two
rankings differ beyond their own noise (seed redraws and bootstrap draws) is
read by the book's one shared sentence for every rank comparison,
:func:`crsbench_lib.report.sentences.noise.describe_tau_against_noise`.

The agreement chapter's "Is this real?" lessons (:func:`agreement_lessons`) and
its exercises' computed solutions (:func:`agreement_exercise_floor_only`,
:func:`agreement_exercise_anchors`) are decided from the page's numbers; the
sensitivity chapter's live in :mod:`crsbench_lib.report.sentences.sensitivity`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from crsbench_lib.report.grammar import (
    CLOSE_CORRELATION,
    and_list,
    compare_with_study,
    describe_correlation,
    finite,
    fmt,
    format_interval,
    ordinal,
    percent,
    relation,
)
from crsbench_lib.report.sentences.lessons import DESIGN, WORLD, Lesson, world_name
from crsbench_lib.scoring.agreement import check_floor_columns, auroc_variance_share, floor_axis_counts

if TYPE_CHECKING:
    import pandas as pd


def describe_agreement(
    tau: float,
    interval: tuple[float, float] | None = None,
    p: float | None = None,
    study_tau: float | None = None,
    reversed_pairs: int | None = None,
    n_pairs: int | None = None,
    scoring: str | None = None,
) -> str:
    """AUROC-vs-CRS rank agreement in words.

    Parameters
    ----------
    tau : float
        Kendall's tau_b between the AUROC and the CRS rankings.
    interval : (float, float), optional
        An interval of tau.
    p : float, optional
        A p-value of tau against no association.
    study_tau : float, optional
        The study's tau, for comparison.
    reversed_pairs, n_pairs : int, optional
        Pairs the two rankings order differently, out of all pairs.
    scoring : str, optional
        How the CRS behind tau was scored (e.g. "full panel"), named beside
        every tau of the sentence, so that two scorings of the same encoders
        never share one unlabelled name.

    Examples
    --------
    >>> describe_agreement(0.5, study_tau=0.5, reversed_pairs=11, n_pairs=45)
    "Kendall's τ_b = 0.500: a strong positive association. 11 of 45 pairwise decisions (24 %) reverse between the two rankings, so AUROC and CRS agree in broad strokes and disagree on specific choices. This build's τ_b (0.500) is close to the study's (0.500)."
    >>> describe_agreement(0.5, study_tau=0.6, scoring="full panel")
    "Kendall's τ_b (full panel) = 0.500: a strong positive association. This build's τ_b (full panel), 0.500, is lower than the study's (0.600)."
    """
    t = finite(tau, "tau")
    label = f" ({scoring})" if scoring else ""
    parts = [describe_correlation(t, name=f"Kendall's τ_b{label}", interval=interval, p=p)]
    if reversed_pairs is not None and n_pairs:
        share = reversed_pairs / n_pairs
        if reversed_pairs == 0:
            consequence = "the two rankings agree on every choice"
        elif t >= 0.3:
            consequence = "AUROC and CRS agree in broad strokes and disagree on specific choices"
        else:
            consequence = "AUROC is a poor guide to the CRS order"
        parts.append(f"{reversed_pairs} of {n_pairs} pairwise decisions ({percent(share)}) reverse between the two "
                     f"rankings, so {consequence}.")
    if study_tau is not None:
        parts.append(compare_with_study(t, study_tau, f"τ_b{label}"))
    return " ".join(parts)


def describe_reordering(tau: float, share: float, name: str = "the AUROC-CRS τ_b", level: float = 0.95) -> str:
    """Whether the CRS reorders the AUROC ranking beyond the CRS ranking's own noise, in words.

    The question the AUROC-CRS τ_b can answer (issue 46, item 3). A
    permutation test of "no association" cannot: the CRS contains the
    normalised AUROC by construction (its floor term, wherever discrimination
    is a candidate's lowest axis), so it rejects by design. ``share`` is
    :func:`crsbench_lib.scoring.retest.reorder_tail_share`: how often the
    point CRS ranking and one of its own bootstrap draws agree no better than
    AUROC and CRS do. Below ``(1 - level) / 2`` the τ_b lies below the central
    ``level`` of that one-dose reference, the verdict of the page's noise
    sentence.

    Examples
    --------
    >>> describe_reordering(0.906, 0.031)
    "Does the CRS reorder the candidates beyond its own noise? The point CRS ranking and one of its own bootstrap draws agree at a τ_b at or below the AUROC-CRS τ_b (0.906) in 3.1 % of draws (one dose of noise), not below 2.5 %: the CRS ranking's own noise could move it this far."
    >>> print(describe_reordering(0.88, 0.004).split(": ")[-1])
    a reordering beyond the CRS ranking's own noise.
    """
    t, q = finite(tau, "tau"), finite(share, "share")
    tail = (1.0 - float(level)) / 2.0
    shown = f"{q * 100:.1f} %" if q < 0.1 else percent(q)
    threshold = f"{tail * 100:g} %"
    verdict = (f"below {threshold}: a reordering beyond the CRS ranking's own noise" if q < tail
               else f"not below {threshold}: the CRS ranking's own noise could move it this far")
    return ("Does the CRS reorder the candidates beyond its own noise? The point CRS ranking and one of its own "
            f"bootstrap draws agree at a τ_b at or below {name} ({fmt(t, 3)}) in {shown} of draws (one dose of "
            f"noise), {verdict}.")


def describe_anchor_sweep(sweep: "object", digits: int = 3, standard_version: str = "the standard") -> str:
    """What moving each worst anchor does to the AUROC-CRS agreement and the top k.

    Parameters
    ----------
    sweep : pandas.DataFrame or None
        :func:`crsbench_lib.scoring.sensitivity.anchor_sweep` output (columns
        axis, worst, is_default, tau_auroc_crs, top_k, top_k_changed); None
        when the results table lacks the panel's raw profiles.
    digits : int
    standard_version : str
        Named when ``sweep`` is None.

    Returns
    -------
    str
        One sentence per axis: Kendall tau-b at each worst anchor tried, in
        the anchor's order, and for which worst anchors the top set differs
        from the one at the standard's own anchors.

    Examples
    --------
    >>> import pandas as pd
    >>> rows = [("C", 0.1, False, 0.2, "a, b", True), ("C", 0.2, True, 0.3, "b, c", False)]
    >>> sweep = pd.DataFrame(rows, columns=["axis", "worst", "is_default", "tau_auroc_crs", "top_k", "top_k_changed"])
    >>> describe_anchor_sweep(sweep)
    "Worst C anchor at 0.1 and 0.2 (the standard's: 0.2): AUROC-CRS Kendall τ_b 0.200 and 0.300 respectively; the top set changes at 0.1 (a, b)."
    """
    if sweep is None:
        return (f"The anchor sweep renormalises the reference panel of {standard_version}, whose raw profiles "
                "this results table does not hold; run it on the table the standard was frozen from.")
    sentences = []
    for axis, rows in sweep.groupby("axis", sort=False):
        rows = rows.sort_values("worst")
        worst = and_list([f"{w:g}" for w in rows["worst"]])
        taus = and_list([fmt(float(t), digits) for t in rows["tau_auroc_crs"]])
        default = rows.loc[rows["is_default"].astype(bool), "worst"]
        own = f" (the standard's: {default.iloc[0]:g})" if len(default) else ""
        changed = rows[rows["top_k_changed"].astype(bool)]
        if changed.empty:
            top = "the top set stays the same at every value"
        else:
            where = "; ".join(f"{w:g} ({names})" for w, names in zip(changed["worst"], changed["top_k"]))
            top = f"the top set changes at {where}"
        # Value by value, in the order of the anchor: a min-max range would hide which end moves tau.
        sentences.append(f"Worst {axis} anchor at {worst}{own}: AUROC-CRS Kendall τ_b "
                         f"{taus}{' respectively' if len(rows) > 1 else ''}; {top}.")
    if not sentences:
        return "No anchor was varied."
    return " ".join(sentences)


#: The axes' names in the floor sentence.
_FLOOR_AXIS_NAMES: dict[str, str] = {"D": "discrimination (D)", "C": "calibration (C)", "L": "label efficiency (L)",
                                     "R": "robustness (R)"}


def describe_floor_axis(scores: "pd.DataFrame", floor_weight: float, simulated: bool | None = None) -> str:
    """Which normalised axis is each candidate's floor, and how much of the CRS the normalised AUROC explains.

    The floor term of the CRS is the lowest of a candidate's four normalised
    axes (method section 5). When one axis is the lowest for most candidates,
    that share of the score *is* that axis, and the CRS follows it: a high
    AUROC-CRS τ is then partly the floor term repeating AUROC, not evidence
    that reliability agrees with discrimination.

    Parameters
    ----------
    scores : pandas.DataFrame
        Rows of the candidates (references left out) with the normalised
        columns ``s_D, s_C, s_L, s_R`` and ``crs``
        (:func:`crsbench_lib.scoring.crs.score_results`).
    floor_weight : float
        The standard's weight of the floor term.
    simulated : bool, optional
        Whether the run is the simulated cohort (the world the count belongs to).

    Returns
    -------
    str
        How many candidates have each axis as their floor (ties count for
        every tied axis), and the share of the CRS's variance across the
        candidates that the normalised AUROC explains (squared Pearson
        correlation; not given for fewer than 3 candidates or a constant column).

    Examples
    --------
    >>> import pandas as pd
    >>> rows = [(0.7, 0.8, 0.85, 0.82, 0.69), (0.5, 0.8, 0.6, 0.7, 0.52), (0.3, 0.7, 0.2, 0.5, 0.30)]
    >>> scores = pd.DataFrame(rows, columns=["s_D", "s_C", "s_L", "s_R", "crs"])
    >>> describe_floor_axis(scores, 0.3)  # doctest: +NORMALIZE_WHITESPACE
    "The lowest normalised axis, whose value is the floor term (30 % of the CRS), is discrimination (D) for 2 of 3
    candidates and label efficiency (L) for 1. The normalised AUROC explains 99 % of the CRS's variance across the
    candidates (squared Pearson correlation). That the floor term repeats whichever axis is lowest holds for any
    benchmark of this design; which axis that is depends on where these encoders sit between the standard's anchors,
    a property of this build's world."
    """
    check_floor_columns(scores)
    weight = finite(floor_weight, "floor_weight")
    counts = floor_axis_counts(scores)
    n = len(scores)
    if n == 0:
        return "No candidate is scored, so no axis is anyone's floor."
    parts = [f"{_FLOOR_AXIS_NAMES[axis]} for {count}" + (f" of {n} candidates" if k == 0 else "")
             for k, (axis, count) in enumerate(counts.items())]
    text = (f"The lowest normalised axis, whose value is the floor term ({percent(weight)} of the CRS), is "
            f"{and_list(parts)}.")
    share = auroc_variance_share(scores)
    if share is not None:
        text += (f" The normalised AUROC explains {percent(share)} of the CRS's variance across the candidates "
                 "(squared Pearson correlation).")
    return text + (" That the floor term repeats whichever axis is lowest holds for any benchmark of this design; "
                   "which axis that is depends on where these encoders sit between the standard's anchors, a "
                   f"property of {world_name(simulated)}.")


def agreement_lessons(
    scores: "pd.DataFrame",
    tau: float,
    reversed_pairs: int,
    n_pairs: int,
    floor_weight: float,
    interval: tuple[float, float] | None = None,
    level: float = 0.95,
    interval_scoring: str = "",
    study_tau: float | None = None,
    study_n: int | None = None,
    study_reversed: int | None = None,
    study_pairs: int | None = None,
    simulated: bool | None = None,
) -> list[Lesson]:
    """The agreement chapter's "Is this real?" lessons, decided from the page's numbers.

    Two lessons of the design (the step of τ_b per reversed pair; the floor
    term copies the lowest axis into the CRS) and two of this build's world
    (which axis is the candidates' floor, and how much of the CRS the
    normalised AUROC explains, with the prediction it implies; this build's
    τ_b beside the study's, judged against this run's own interval).

    Parameters
    ----------
    scores : pandas.DataFrame
        The ranked candidates' rows (``s_D, s_C, s_L, s_R, crs``), references
        left out (:func:`crsbench_lib.scoring.crs.score_results`).
    tau : float
        Kendall's τ_b between AUROC and CRS (full panel).
    reversed_pairs, n_pairs : int
        Pairs the two rankings order oppositely, out of all pairs.
    floor_weight : float
        The standard's weight of the floor term.
    interval : (float, float), optional
        A percentile interval of τ_b (e.g. of the leave-self-out scores).
    level : float
        Its coverage.
    interval_scoring : str
        How the CRS behind the interval was scored, named beside it.
    study_tau, study_n, study_reversed, study_pairs : optional
        The study's τ_b, encoders, reversed pairs and pairs.
    simulated : bool or None
        Whether the run is the simulated cohort (False: the user's own data).

    Returns
    -------
    list of Lesson

    Examples
    --------
    >>> import pandas as pd
    >>> rows = [(0.7, 0.8, 0.85, 0.82, 0.69), (0.5, 0.8, 0.6, 0.7, 0.52), (0.3, 0.7, 0.4, 0.5, 0.30)]
    >>> scores = pd.DataFrame(rows, columns=["s_D", "s_C", "s_L", "s_R", "crs"])
    >>> lessons = agreement_lessons(scores, 1.0, 0, 3, 0.3, study_tau=0.6, study_n=15, study_reversed=21,
    ...                             study_pairs=105)
    >>> [lesson.scope for lesson in lessons]
    ['design', 'design', 'world', 'world']
    >>> print(lessons[2].text)  # doctest: +NORMALIZE_WHITESPACE
    Discrimination is the lowest normalised axis of all 3 candidates here, so the floor term (30 % of the CRS) is the
    normalised AUROC itself; the normalised AUROC explains 99 % of the CRS's variance across them (squared Pearson
    r). Part of the
    AUROC-CRS agreement (τ_b 1.000) is therefore built in: expect more disagreement on a cohort whose encoders are
    weakest in calibration, label efficiency or robustness, where another axis is the floor.
    """
    t = finite(tau, "tau")
    weight = finite(floor_weight, "floor_weight")
    n = len(scores)
    lessons: list[Lesson] = []
    if n_pairs:
        step = 2 / n_pairs
        untied = 1 - 2 * reversed_pairs / n_pairs
        text = (f"τ_b moves in steps of 2 / C(n, 2) per reversed pair: {n} candidates make {n_pairs} pairs, so one "
                f"reversal costs {fmt(step, 3)}")
        if abs(untied - t) < 1e-9:
            plural = "s give" if reversed_pairs != 1 else " gives"
            text += f"; here {reversed_pairs} reversed pair{plural} τ_b = 1 − 2 × {reversed_pairs}/{n_pairs} = {fmt(t, 3)}."
        else:
            text += (f"; here ties take τ_b to {fmt(t, 3)} rather than the untied 1 − 2 × {reversed_pairs}/{n_pairs} "
                     f"= {fmt(untied, 3)}.")
        text += " Read the reversed pairs, not only τ_b: one reversal can be the very pair a team is choosing between."
        study = ""
        if study_pairs and study_n:
            study = (f"{study_n} encoders, {study_pairs} pairs, a step of {fmt(2 / study_pairs, 3)}"
                     + (f"; {study_reversed} reversed pairs" if study_reversed is not None else "") + ".")
        lessons.append(Lesson(DESIGN, text, study=study))
    if weight > 0:
        lessons.append(Lesson(DESIGN, (
            f"The floor term ({percent(weight)} of the CRS) is each candidate's lowest normalised axis: where one axis "
            "is the lowest for every candidate, that share of the CRS is a monotone copy of the axis, and the CRS's "
            "rank agreement with that axis is pulled towards 1 by construction.")))
    else:
        lessons.append(Lesson(DESIGN, "This standard gives the floor term no weight, so no axis is copied into the "
                                      "CRS by construction: every term reads all four axes."))
    counts = floor_axis_counts(scores) if n else {}
    if counts:
        d_count = counts.get("D", 0)
        share = auroc_variance_share(scores)
        explained = (f"; the normalised AUROC explains {percent(share)} of the CRS's variance across them "
                     "(squared Pearson r)" if share is not None else "")
        if weight == 0:
            text = (f"Discrimination is the lowest normalised axis of {d_count} of {n} candidates here, but the "
                    f"floor term has no weight, so that does not enter the CRS{explained}.")
        elif d_count == n or d_count > n / 2:
            who = f"all {n} candidates" if d_count == n else f"{d_count} of {n} candidates"
            what = "is the normalised AUROC itself" if d_count == n else "is the normalised AUROC for most of them"
            text = (f"Discrimination is the lowest normalised axis of {who} here, so the floor term "
                    f"({percent(weight)} of the CRS) {what}{explained}. Part of the AUROC-CRS agreement "
                    f"(τ_b {fmt(t, 3)}) is therefore built in: expect more disagreement on a cohort whose encoders "
                    "are weakest in calibration, label efficiency or robustness, where another axis is the floor.")
        else:
            top_axis, top_count = next(iter(counts.items()))
            text = (f"Discrimination is the lowest normalised axis of only {d_count} of {n} candidates here "
                    f"({_FLOOR_AXIS_NAMES[top_axis]} is the lowest of {top_count}), so the floor term mostly adds "
                    f"another axis rather than repeating AUROC{explained}. The AUROC-CRS τ_b ({fmt(t, 3)}) is "
                    "agreement between different axes: expect it to rise on a cohort whose encoders are weakest in "
                    "discrimination.")
        lessons.append(Lesson(WORLD, text))
    if study_tau is not None:
        s = finite(study_tau, "study_tau")
        text = f"AUROC and CRS agree at τ_b {fmt(t, 3)} here, {relation(t, s)} the study's {fmt(s, 3)}"
        if n_pairs and study_pairs and study_reversed is not None:
            text += (f"; {reversed_pairs} of {n_pairs} pairs reverse ({percent(reversed_pairs / n_pairs)}), against "
                     f"the study's {study_reversed} of {study_pairs} ({percent(study_reversed / study_pairs)})")
        if interval is not None:
            low, high = finite(interval[0], "interval low"), finite(interval[1], "interval high")
            scored = f" ({interval_scoring} scores)" if interval_scoring else ""
            bounds = f"this run's {level * 100:g} % interval {format_interval(low, high)}{scored}"
            # The interval is this run's sampling distribution; the study's τ_b is another estimate, on other
            # encoders and data, with noise of its own: the interval cannot judge it (issue 46, item 3).
            text += (f". {bounds[0].upper()}{bounds[1:]} measures this run's own sampling noise only; the study's "
                     "τ_b, measured on other encoders and data with noise of its own, is not judged by it.")
        else:
            text += "."
        reversed_text = (f", {study_reversed} of {study_pairs} pairs reversed"
                         if study_pairs and study_reversed is not None else "")
        study = f"τ_b {fmt(s, 3)}" + (f" over {study_n} encoders" if study_n else "") + reversed_text + "."
        lessons.append(Lesson(WORLD, text, study=study))
    return lessons


def _candidate_agreement(scores: "pd.DataFrame", column: str) -> "object":
    from crsbench_lib.scoring.agreement import rank_agreement

    indexed = scores.set_index("encoder")
    return rank_agreement(indexed["D"], indexed[column])


def agreement_exercise_floor_only(scores: "pd.DataFrame", digits: int = 3) -> str:
    """The floor-only exercise's solution: the page's candidates re-scored with weights (0, 0, 1), in words.

    With all the weight on the floor, a candidate's CRS is its lowest
    normalised axis (the ``floor`` column of the scored table): no new run is
    needed.

    Parameters
    ----------
    scores : pandas.DataFrame
        The ranked candidates (``encoder, D, s_D, s_C, s_L, s_R, floor, crs``),
        references left out.
    digits : int

    Returns
    -------
    str
        τ_b and the reversed pairs under the standard's weights and under the
        floor-only weights, and why they moved, read from which axis is each
        candidate's floor.

    Examples
    --------
    >>> import pandas as pd
    >>> scores = pd.DataFrame({"encoder": ["a", "b", "c"], "D": [0.9, 0.8, 0.7], "s_D": [0.8, 0.6, 0.4],
    ...     "s_C": [0.9, 0.9, 0.9], "s_L": [0.9, 0.9, 0.9], "s_R": [0.9, 0.9, 0.9], "floor": [0.8, 0.6, 0.4],
    ...     "crs": [0.7, 0.75, 0.5]})
    >>> print(agreement_exercise_floor_only(scores))  # doctest: +NORMALIZE_WHITESPACE
    **In this build:** with weights dominance 0, balance 0 and floor 1, Kendall's τ_b (full panel) between AUROC and
    CRS goes from 0.333 to 1.000, and the reversed pairs from 1 to 0 of 3. Discrimination is the lowest normalised
    axis of all 3 candidates, so the floor-only CRS is the normalised AUROC itself and the two rankings agree on every
    pair. The reversal under the standard's weights came from dominance and balance, the only terms that read the
    other three axes: on this cohort a floor-heavy weighting ranks by AUROC under another name.
    """
    default, floor_only = _candidate_agreement(scores, "crs"), _candidate_agreement(scores, "floor")
    n = len(scores)
    counts = floor_axis_counts(scores)
    d_count = counts.get("D", 0)
    text = (f"**In this build:** with weights dominance 0, balance 0 and floor 1, Kendall's τ_b (full panel) between "
            f"AUROC and CRS goes from {fmt(default.tau_b, digits)} to {fmt(floor_only.tau_b, digits)}, and the "
            f"reversed pairs from {default.reversed_pairs} to {floor_only.reversed_pairs} of {default.n_pairs}.")
    others = [f"{_FLOOR_AXIS_NAMES[axis]} for {count}" for axis, count in counts.items() if axis != "D"]
    reversals = ("The reversal" if default.reversed_pairs == 1 else f"The {default.reversed_pairs} reversals")
    if d_count == n and floor_only.reversed_pairs == 0:
        text += (f" Discrimination is the lowest normalised axis of all {n} candidates, so the floor-only CRS is the "
                 "normalised AUROC itself and the two rankings agree on every pair.")
        if default.reversed_pairs:
            text += (f" {reversals} under the standard's weights came from dominance and balance, the only terms that "
                     "read the other three axes: on this cohort a floor-heavy weighting ranks by AUROC under another "
                     "name.")
    elif floor_only.tau_b > default.tau_b:
        text += (f" Discrimination is the lowest normalised axis of {d_count} of {n} candidates, so moving the weight "
                 "to the floor brings the CRS closer to AUROC; the reversals that remain involve the candidates whose "
                 f"floor is another axis ({and_list(others)}), which now decides their score alone.")
    else:
        text += (f" The floor-only CRS agrees no better with AUROC: discrimination is the lowest axis of only "
                 f"{d_count} of {n} candidates, and for the others ({and_list(others) if others else 'none'}) another "
                 "axis now decides the score alone, so the weight moved away from the terms that carry AUROC.")
    return text


def agreement_exercise_anchors(
    before: "pd.DataFrame",
    after: "pd.DataFrame",
    axis: str,
    anchors: tuple[float, float],
    default_anchors: tuple[float, float],
    unit: str = "",
    digits: int = 3,
) -> str:
    """The anchors exercise's solution: the page's candidates re-scored with other anchors on one axis, in words.

    Parameters
    ----------
    before, after : pandas.DataFrame
        The ranked candidates scored with the standard's anchors and with the
        exercise's (``encoder, D, <axis>, s_<axis>, s_D, s_C, s_L, s_R, crs``),
        references left out.
    axis : str
        The axis whose anchors change ("C").
    anchors, default_anchors : (float, float)
        The exercise's and the standard's (worst, best).
    unit : str
        The raw axis's unit, e.g. "ECE".
    digits : int

    Returns
    -------
    str
        What one normalised point is before and after, how many normalised
        points the candidates' spread on the axis covers, τ_b and the reversed
        pairs before and after, which candidates change CRS rank, and why.

    Examples
    --------
    >>> import pandas as pd
    >>> def table(s_c):
    ...     return pd.DataFrame({"encoder": ["a", "b"], "D": [0.9, 0.8], "C": [0.02, 0.06], "s_D": [0.8, 0.6],
    ...         "s_C": s_c, "s_L": [0.9, 0.9], "s_R": [0.9, 0.9], "crs": [0.7, 0.6]})
    >>> text = agreement_exercise_anchors(table([0.9, 0.7]), table([0.93, 0.8]), "C", (0.3, 0.0), (0.2, 0.0), "ECE")
    >>> print(text.split(". ")[0])  # doctest: +NORMALIZE_WHITESPACE
    **In this build:** with the C anchors at [0.3, 0.0] instead of [0.2, 0.0], one normalised point of C is 0.003 ECE
    instead of 0.002, and the candidates' spread on C (0.020 to 0.060 ECE) covers 13 normalised points instead of 20
    """
    from crsbench_lib.scoring.rank_statistics import descending_ranks

    column = f"s_{axis}"
    old_point = abs(default_anchors[1] - default_anchors[0]) / 100
    new_point = abs(anchors[1] - anchors[0]) / 100
    raw = before[axis].astype(float)
    old_span = (before[column].max() - before[column].min()) * 100
    new_span = (after[column].max() - after[column].min()) * 100
    unit_word = f" {unit}" if unit else ""
    def pair(values: tuple[float, float]) -> str:
        return "[" + ", ".join(f"{v:.1f}" if v == round(v, 1) else f"{v:g}" for v in values) + "]"

    text = (f"**In this build:** with the {axis} anchors at {pair(anchors)} instead of "
            f"{pair(default_anchors)}, one normalised point of {axis} is "
            f"{fmt(new_point, digits)}{unit_word} instead of {fmt(old_point, digits)}, and the candidates' spread on "
            f"{axis} ({fmt(raw.min(), digits)} to {fmt(raw.max(), digits)}{unit_word}) covers {new_span:.0f} "
            f"normalised points instead of {old_span:.0f}.")
    old, new = _candidate_agreement(before, "crs"), _candidate_agreement(after, "crs")
    if fmt(old.tau_b, digits) == fmt(new.tau_b, digits) and old.reversed_pairs == new.reversed_pairs:
        text += (f" Kendall's τ_b (full panel) between AUROC and CRS stays at {fmt(old.tau_b, digits)} "
                 f"({old.reversed_pairs} reversed pairs of {old.n_pairs}).")
    else:
        text += (f" Kendall's τ_b (full panel) between AUROC and CRS goes from {fmt(old.tau_b, digits)} to "
                 f"{fmt(new.tau_b, digits)} ({old.reversed_pairs} then {new.reversed_pairs} reversed pairs of "
                 f"{old.n_pairs}).")
    ranks_before = dict(zip(before["encoder"], descending_ranks(before["crs"].to_numpy(float), ties="min")))
    ranks_after = dict(zip(after["encoder"], descending_ranks(after["crs"].to_numpy(float), ties="min")))
    moved = [(name, int(ranks_before[name]), int(ranks_after[name])) for name in before["encoder"]
             if ranks_before[name] != ranks_after.get(name, ranks_before[name])]
    d_span = (before["s_D"].max() - before["s_D"].min()) * 100
    floors = floor_axis_counts(after).get(axis, 0)
    beside = "smaller than" if new_span < d_span else "no smaller than"
    lowest = (f"the lowest axis of none of the {len(after)} candidates" if floors == 0 else
              f"the lowest axis of {floors} of {len(after)} candidates")
    if not moved:
        text += (f" No candidate changes its CRS rank. The new anchors stretch {axis}'s scale by one factor for every "
                 f"candidate, keeping their order on {axis}; {axis} is {lowest} and its spread of {new_span:.0f} "
                 f"points is {beside} discrimination's {d_span:.0f}: no pair close in CRS was far enough apart "
                 f"on {axis} to swap. Anchors set an axis's scale: a ranking moves only where the rescaled axis "
                 "decided a close pair.")
    else:
        listed = and_list([f"{name} ({ordinal(a)} → {ordinal(b)})" for name, a, b in moved])
        noun = "candidate changes its" if len(moved) == 1 else "candidates change their"
        text += (f" {len(moved)} {noun} CRS rank: {listed}. The new anchors stretch {axis}'s scale by one factor "
                 f"for every candidate, keeping their order on {axis}, so only pairs that were close in CRS and apart "
                 f"on {axis} swap; {axis} is {lowest}, and its spread of {new_span:.0f} points sits beside "
                 f"discrimination's {d_span:.0f}.")
    return text
