"""The sentences of the agreement and sensitivity chapters: how far AUROC and CRS rank alike.

The rank agreement of AUROC and CRS with its reversed pairs and the study's
value (:func:`describe_agreement`), whether the two rankings differ beyond
their own seed noise (:func:`describe_measure_retest`), and how that
agreement and the top set move when a worst anchor moves
(:func:`describe_anchor_sweep`).
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


def describe_measure_retest(summary: pd.DataFrame, first: str = "D", second: str = "crs",
                            names: dict[str, str] | None = None) -> str:
    """Whether two measures rank the encoders apart beyond each ranking's own seed noise.

    Reads :func:`crsbench_lib.scoring.retest.retest_summary` of
    :func:`~crsbench_lib.scoring.retest.measure_retest_taus` (rankings scored
    one seed at a time). The verdict compares like with like: the τ_b between
    the two measures on *different* seeds against the test-retest τ_b of each
    measure (two seeds of one measure), pooled; with the few, overlapping seed
    pairs of a run it states whether the two ranges separate, not a test.

    Examples
    --------
    >>> import pandas as pd
    >>> from crsbench_lib.scoring.retest import ACROSS_MEASURES_OTHER_SEED, ACROSS_MEASURES_SAME_SEED, WITHIN_MEASURE
    >>> summary = pd.DataFrame({
    ...     "comparison": [WITHIN_MEASURE, WITHIN_MEASURE, ACROSS_MEASURES_SAME_SEED, ACROSS_MEASURES_OTHER_SEED],
    ...     "arms": ["D", "crs", "D vs crs", "D vs crs"], "n_pairs": [3, 3, 3, 6],
    ...     "mean_tau": [0.80, 0.70, 0.85, 0.72], "min_tau": [0.75, 0.64, 0.80, 0.66],
    ...     "max_tau": [0.86, 0.76, 0.90, 0.79]})
    >>> describe_measure_retest(summary)
    'Scored one seed at a time, two seeds of the same measure agree at a mean Kendall τ_b of 0.75 (0.64 to 0.86 over 6 seed pairs of AUROC and CRS): the test-retest baseline. AUROC on one seed against CRS on another agrees at τ_b 0.72 (0.66 to 0.79 over 6 pairs), and on the same seed at 0.85 (0.80 to 0.90 over 3 pairs; these share a training split). The ranges overlap: in this run AUROC and CRS order the encoders as alike as two runs of one measure do, so their disagreement cannot be told apart from the noise of re-running.'
    """
    from crsbench_lib.scoring.retest import ACROSS_MEASURES_OTHER_SEED, ACROSS_MEASURES_SAME_SEED, WITHIN_MEASURE

    names = {"D": "AUROC", "crs": "CRS", **(names or {})}
    a, b = names.get(first, first), names.get(second, second)
    pair = f"{first} vs {second}"
    base = summary[(summary["comparison"] == WITHIN_MEASURE) & summary["arms"].isin([first, second])]
    other = summary[(summary["comparison"] == ACROSS_MEASURES_OTHER_SEED) & (summary["arms"] == pair)]
    same = summary[(summary["comparison"] == ACROSS_MEASURES_SAME_SEED) & (summary["arms"] == pair)]
    if base.empty or other.empty:
        return (f"This run has a single seed, so neither ranking's test-retest noise can be measured: the {a}-{b} "
                "agreement cannot be compared with the noise of re-running.")
    n_base = int(base["n_pairs"].sum())
    mean_base = float((base["mean_tau"] * base["n_pairs"]).sum() / n_base)
    low, high = float(base["min_tau"].min()), float(base["max_tau"].max())
    o = other.iloc[0]
    text = (f"Scored one seed at a time, two seeds of the same measure agree at a mean Kendall τ_b of {mean_base:.2f} "
            f"({low:.2f} to {high:.2f} over {n_base} seed pairs of {and_list([a, b]) if len(base) > 1 else a}): "
            f"the test-retest baseline. {a} on one seed against {b} on another agrees at τ_b {o['mean_tau']:.2f} "
            f"({o['min_tau']:.2f} to {o['max_tau']:.2f} over {int(o['n_pairs'])} pairs)")
    if not same.empty:
        c = same.iloc[0]
        text += (f", and on the same seed at {c['mean_tau']:.2f} ({c['min_tau']:.2f} to {c['max_tau']:.2f} over "
                 f"{int(c['n_pairs'])} pairs; these share a training split)")
    text += ". "
    if o["max_tau"] < low:
        return text + (f"Every cross-measure pair falls below every test-retest pair: in this run {a} and {b} order "
                       "the encoders differently beyond the noise of re-running, as far as these few, overlapping "
                       "seed pairs show.")
    return text + (f"The ranges overlap: in this run {a} and {b} order the encoders as alike as two runs of one "
                   "measure do, so their disagreement cannot be told apart from the noise of re-running.")
