"""The sentences of the self-audit: do the benchmark's intervals cover the simulated truth?

:func:`coverage_verdict` judges one observed coverage against its nominal
level and its own Monte-Carlo error; :func:`describe_coverage` says it for
every quantity of a coverage table (:func:`crsbench_lib.scoring.coverage.coverage_table`),
naming what the lesson belongs to: how the interval method behaves is a
property of any benchmark of this design, how far it misses here belongs to
this build's simulated world (its generator, encoders and sizes).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from crsbench_lib.report.grammar import and_list, finite, fmt, percent

if TYPE_CHECKING:
    import pandas as pd

#: Monte-Carlo standard errors an observed coverage may lie from nominal and still "hold".
TOLERANCE_SE = 2.0
#: A judged Monte-Carlo error above which "within error" is said to hide shortfalls worth knowing.
RESOLVABLE_SE = 0.03
#: What each quantity is called in a sentence.
QUANTITY_NAMES: dict[str, str] = {
    "axis_D": "discrimination (D)", "axis_C": "calibration (C)", "axis_L": "label efficiency (L)",
    "axis_R": "robustness (R)", "crs": "each encoder's CRS", "crs_difference": "the pairwise CRS differences",
    "tau_auroc_crs": "Kendall's τ_b of AUROC and CRS",
}


def judged_se(nominal: float, observed_se: float, n_replicates: int) -> float:
    """The Monte-Carlo error a coverage is judged against.

    The larger of the observed share's own error and the binomial error of a
    share at the nominal level over ``n_replicates`` replicates,
    ``sqrt(nominal (1 - nominal) / R)``: a handful of replicates that all
    cover has an observed error of zero, which would make any miss significant.

    Examples
    --------
    >>> round(judged_se(0.95, 0.0, 19), 4)
    0.05
    """
    floor = math.sqrt(nominal * (1.0 - nominal) / max(1, int(n_replicates)))
    se = float(observed_se)
    return floor if not math.isfinite(se) else max(se, floor)


def coverage_verdict(observed: float, nominal: float, se: float) -> str:
    """``"holds"``, ``"under-covers"`` or ``"over-covers"``: observed against nominal, within ``TOLERANCE_SE`` se.

    Examples
    --------
    >>> coverage_verdict(0.80, 0.95, 0.03), coverage_verdict(0.93, 0.95, 0.03), coverage_verdict(1.0, 0.8, 0.02)
    ('under-covers', 'holds', 'over-covers')
    """
    gap = finite(observed, "observed") - finite(nominal, "nominal")
    if abs(gap) <= TOLERANCE_SE * finite(se, "se"):
        return "holds"
    return "under-covers" if gap < 0 else "over-covers"


def describe_coverage(table: pd.DataFrame, method: str = "percentile", world: str = "this build's simulated world") -> str:
    """What the audit found, one clause per quantity, for the intervals of ``method`` and the leading tier.

    Parameters
    ----------
    table : pandas.DataFrame
        A coverage table (quantity, method, nominal, observed, n, n_replicates, mc_se, mean_set_size).
    method : str
        The interval method described ("percentile": the intervals the book shows).
    world : str
        Names where the numbers come from.

    Returns
    -------
    str

    Raises
    ------
    ValueError
        If the table holds no row of ``method``.

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({"quantity": ["axis_D", "axis_C", "leading_tier"],
    ...     "method": ["percentile", "percentile", "set"], "nominal": [0.95, 0.95, 0.95],
    ...     "observed": [0.94, 0.70, 0.9], "n": [100, 100, 20], "n_replicates": [20, 20, 20],
    ...     "mc_se": [0.02, 0.05, 0.07], "mean_set_size": [float("nan"), float("nan"), 2.1]})
    >>> print(describe_coverage(table))  # doctest: +NORMALIZE_WHITESPACE
    Over 20 replicates of the protocol, the 95 % percentile intervals (nominal coverage 0.95) stay within two Monte-Carlo
    errors of it for discrimination (D) (0.940 of 100 intervals cover the truth, Monte-Carlo error 0.049) and fall short for
    calibration (C) (0.700 of 100, error 0.050). With 20 replicates a shortfall below 0.10 goes unseen: more
    replicates would tell. The leading tier (2.1 encoders on average) held the truly best encoder in 0.900 of the 20
    replicates (error 0.070). Which interval falls short is a property of the interval method under this design;
    by how much is measured in this build's simulated world.
    """
    rows = table[table["method"] == method]
    if rows.empty:
        raise ValueError(f"the coverage table holds no {method!r} intervals")
    n_rep = int(rows["n_replicates"].max())
    clauses = {"holds": [], "under-covers": [], "over-covers": []}
    held_errors = [0.0]
    first = True
    for _, r in rows.iterrows():
        se = judged_se(float(r["nominal"]), float(r["mc_se"]), int(r["n_replicates"]))
        verdict = coverage_verdict(float(r["observed"]), float(r["nominal"]), se)
        if verdict == "holds":
            held_errors.append(se)
        name = QUANTITY_NAMES.get(str(r["quantity"]), str(r["quantity"]))
        detail = (f"{fmt(r['observed'], 3)} of {int(r['n'])} intervals cover the truth, Monte-Carlo error {fmt(se, 3)}"
                  if first else f"{fmt(r['observed'], 3)} of {int(r['n'])}, error {fmt(se, 3)}")
        first = False
        clauses[verdict].append(f"{name} ({detail})")
    verbs = {"holds": "stay within two Monte-Carlo errors of it for", "under-covers": "fall short for",
             "over-covers": "are wider than promised for"}
    parts = [f"{verbs[v]} {and_list(c)}" for v, c in clauses.items() if c]
    level = percent(float(rows["nominal"].iloc[0]))
    text = (f"Over {n_rep} replicates of the protocol, the {level} {method} intervals (nominal coverage "
            f"{fmt(rows['nominal'].iloc[0], 2)}) {and_list(parts)}.")
    if clauses["holds"] and max(held_errors) > RESOLVABLE_SE:
        text += (f" With {n_rep} replicates a shortfall below {fmt(TOLERANCE_SE * max(held_errors), 2)} goes unseen: "
                 "more replicates would tell.")
    tier = table[table["method"] == "set"]
    if not tier.empty:
        t = tier.iloc[0]
        se = judged_se(float(t["nominal"]), float(t["mc_se"]), int(t["n_replicates"]))
        text += (f" The leading tier ({fmt(t['mean_set_size'], 1)} encoders on average) held the truly best encoder "
                 f"in {fmt(t['observed'], 3)} of the {int(t['n_replicates'])} replicates (error {fmt(se, 3)}).")
    if clauses["under-covers"]:
        text += (" Which interval falls short is a property of the interval method under this design; "
                 f"by how much is measured in {world}.")
    else:
        text += f" These shares are measured in {world}, for these encoders and sizes only."
    return text


def describe_truth(truth: pd.DataFrame, table: pd.DataFrame, method: str = "percentile") -> str:
    """Who is truly best, and whether the truth is precise enough to judge the intervals by.

    The truth is an estimate too (a mean over training draws on a large test
    set); coverage can be read only where its Monte-Carlo error is small beside
    the intervals' widths. This sentence names the largest ratio of the
    truth's standard error to the mean interval width over the quantities.

    Parameters
    ----------
    truth : pandas.DataFrame
        A truth table (quantity, item, truth, truth_se) with a ``leading_tier`` row.
    table : pandas.DataFrame
        The coverage table of the same audit.
    method : str
        Whose widths are compared.

    Returns
    -------
    str

    Examples
    --------
    >>> import pandas as pd
    >>> truth = pd.DataFrame({"quantity": ["leading_tier"], "item": ["enc"], "truth": [0.021], "truth_se": [0.004]})
    >>> table = pd.DataFrame({"quantity": ["axis_D"], "method": ["percentile"], "mean_width": [0.04],
    ...                       "mean_truth_se": [0.002]})
    >>> describe_truth(truth, table)
    "The truly best encoder is enc, 0.021 above the runner-up in CRS (Monte-Carlo error 0.004). The truth's own Monte-Carlo error is at most 5 % of an interval's mean width (discrimination (D)), so a miss is the interval's, not the truth's."
    """
    best = truth[truth["quantity"] == "leading_tier"]
    if len(best) != 1:
        raise ValueError("the truth table must name one truly best encoder (quantity 'leading_tier')")
    b = best.iloc[0]
    text = (f"The truly best encoder is {b['item']}, {fmt(b['truth'], 3)} above the runner-up in CRS "
            f"(Monte-Carlo error {fmt(b['truth_se'], 3)}).")
    rows = table[(table["method"] == method) & (table["mean_width"] > 0)]
    if rows.empty:
        return text
    ratio = rows["mean_truth_se"] / rows["mean_width"]
    worst = rows.loc[ratio.idxmax()]
    share = float(ratio.max())
    name = QUANTITY_NAMES.get(str(worst["quantity"]), str(worst["quantity"]))
    if share <= 0.1:
        return text + (f" The truth's own Monte-Carlo error is at most {percent(share)} of an interval's mean width "
                       f"({name}), so a miss is the interval's, not the truth's.")
    return text + (f" The truth's own Monte-Carlo error reaches {percent(share)} of an interval's mean width "
                   f"({name}): there, part of a miss may be the truth's; more training draws would tell.")


__all__ = ["QUANTITY_NAMES", "RESOLVABLE_SE", "TOLERANCE_SE", "coverage_verdict", "describe_coverage", "describe_truth", "judged_se"]
