"""The sentences of the agreement and sensitivity chapters: how far AUROC and CRS rank alike.

The rank agreement of AUROC and CRS with its reversed pairs and the study's
value (:func:`describe_agreement`), and how that agreement and the top set
move when a worst anchor moves (:func:`describe_anchor_sweep`). Whether the two
rankings differ beyond their own noise (seed redraws and bootstrap draws) is
read by the book's one shared sentence for every rank comparison,
:func:`crsbench_lib.report.sentences.noise.describe_tau_against_noise`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from crsbench_lib.report.grammar import and_list, compare_with_study, describe_correlation, finite, fmt, percent

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
    import numpy as np

    columns = [f"s_{axis}" for axis in _FLOOR_AXIS_NAMES]
    missing = [c for c in (*columns, "crs") if c not in scores.columns]
    if missing:
        raise ValueError(f"scores: missing column {missing[0]!r} (expected crsbench_lib.scoring.crs.score_results rows)")
    weight = finite(floor_weight, "floor_weight")
    n = len(scores)
    if n == 0:
        return "No candidate is scored, so no axis is anyone's floor."
    values = scores[columns].to_numpy(dtype=float)
    lowest = np.isclose(values, values.min(axis=1, keepdims=True), rtol=0, atol=1e-12)
    counts = {axis: int(lowest[:, k].sum()) for k, axis in enumerate(_FLOOR_AXIS_NAMES) if lowest[:, k].any()}
    ordered = sorted(counts.items(), key=lambda item: (-item[1], list(_FLOOR_AXIS_NAMES).index(item[0])))
    parts = [f"{_FLOOR_AXIS_NAMES[axis]} for {count}" + (f" of {n} candidates" if k == 0 else "")
             for k, (axis, count) in enumerate(ordered)]
    text = (f"The lowest normalised axis, whose value is the floor term ({percent(weight)} of the CRS), is "
            f"{and_list(parts)}.")
    s_d, score = scores["s_D"].to_numpy(dtype=float), scores["crs"].to_numpy(dtype=float)
    if n >= 3 and np.ptp(s_d) > 0 and np.ptp(score) > 0:
        r = float(np.corrcoef(s_d, score)[0, 1])
        text += (f" The normalised AUROC explains {percent(r * r)} of the CRS's variance across the candidates "
                 "(squared Pearson correlation).")
    world = "this build's simulated world" if simulated else "this build's world"
    return text + (" That the floor term repeats whichever axis is lowest holds for any benchmark of this design; "
                   "which axis that is depends on where these encoders sit between the standard's anchors, a "
                   f"property of {world}.")
