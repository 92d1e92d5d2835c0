"""The sentence of the leave-one-dataset-out chapter: which profile predicts a held-out ranking.

:func:`describe_predictors` says whether the CRS or AUROC ranks encoders closer
to a held-out target, and claims a winner only where the interval of the
difference allows one.
"""

from __future__ import annotations

import math

from crsbench_lib.report.grammar import CLOSE_CORRELATION, NO_DIRECTION, and_list, describe_interval, fmt, interval_excludes_zero


def describe_predictors(crs_tau: float, auroc_tau: float, target: str = "the held-out AUROC ranking",
                        tolerance: float = CLOSE_CORRELATION, where: str | None = None,
                        interval: tuple[float, float] | None = None, level: float = 0.95,
                        statistic: str = "mean τ_b") -> str:
    """Which of two predictors (CRS, AUROC) ranks encoders closer to a target, or that the data cannot tell.

    Parameters
    ----------
    crs_tau, auroc_tau : float
        Each predictor's (mean) Kendall tau-b with the target.
    target : str
        What is predicted, in words.
    tolerance : float
        Without an interval: taus closer than this are "about equally well".
    where : str, optional
        A place or condition that opens the sentence ("On the second site").
    interval : (float, float), optional
        An interval of ``crs_tau - auroc_tau`` (e.g.
        :func:`crsbench_lib.scoring.lodo.tau_difference`). When given, it
        decides the claim: a winner only when the interval excludes zero on the
        side of the point difference, and no claim when it contains zero, lies
        on the other side of zero from the point, or is undefined (NaN).
    level : float
        The interval's coverage.
    statistic : str
        The name of the taus ("mean τ_b" over several held-out datasets, "τ_b"
        for one).

    Examples
    --------
    >>> describe_predictors(0.4, 0.6)
    'AUROC predicts the held-out AUROC ranking better than the CRS (mean τ_b 0.600 against 0.400).'
    >>> describe_predictors(0.84, 0.91, interval=(-0.15, 0.02), statistic="τ_b")
    'The data cannot tell whether the CRS or AUROC predicts the held-out AUROC ranking better (τ_b 0.840 for the CRS and 0.910 for AUROC; the difference (CRS minus AUROC) is -0.070, its 95 % interval [-0.150, 0.020] includes zero).'
    """
    c, a = float(crs_tau), float(auroc_tau)
    if not (math.isfinite(c) and math.isfinite(a)):
        undefined = [name for name, value in (("the CRS", c), ("AUROC", a)) if not math.isfinite(value)]
        text = (f"whether the CRS or AUROC predicts {target} better cannot be said: the {statistic} of "
                f"{and_list(undefined)} is undefined (the predictor or the target is constant on every block).")
    elif interval is not None and not all(math.isfinite(float(end)) for end in interval):
        text = (f"the data cannot tell whether the CRS or AUROC predicts {target} better ({statistic} {fmt(c, 3)} "
                f"for the CRS and {fmt(a, 3)} for AUROC; no resample defines both taus, so there is no interval).")
    elif interval is not None:
        low, high = interval
        # The sentence itself says when the data cannot tell; the interval need not repeat it.
        span = describe_interval(low, high, level=level).removesuffix(NO_DIRECTION)
        difference = f"the difference (CRS minus AUROC) is {fmt(c - a, 3)}, {span}"
        against_point = (low > 0 and c - a <= 0) or (high < 0 and c - a >= 0)
        if interval_excludes_zero(low, high) and against_point:
            # A biased resampling can put the interval on the other side of the point: claim nothing.
            text = (f"the data cannot tell whether the CRS or AUROC predicts {target} better ({statistic} "
                    f"{fmt(c, 3)} for the CRS and {fmt(a, 3)} for AUROC; {difference}, on the other side of "
                    f"zero from the point, so the resampling is biased here).")
        elif interval_excludes_zero(low, high):
            winner, loser = ("the CRS", "AUROC") if low > 0 else ("AUROC", "the CRS")
            text = (f"{winner} predicts {target} better than {loser} ({statistic} {fmt(c, 3)} for the CRS and "
                    f"{fmt(a, 3)} for AUROC; {difference}).")
        else:
            text = (f"the data cannot tell whether the CRS or AUROC predicts {target} better ({statistic} "
                    f"{fmt(c, 3)} for the CRS and {fmt(a, 3)} for AUROC; {difference}).")
    elif abs(c - a) < tolerance:
        text = f"the CRS and AUROC predict {target} about equally well ({statistic} {fmt(c, 3)} and {fmt(a, 3)})."
    else:
        winner, loser = ("the CRS", "AUROC") if c > a else ("AUROC", "the CRS")
        hi, lo = max(c, a), min(c, a)
        text = f"{winner} predicts {target} better than {loser} ({statistic} {fmt(hi, 3)} against {fmt(lo, 3)})."
    if where:
        return f"{where}, {text}"
    return text[:1].upper() + text[1:]
