"""The sentences of the axes-under-stress part: the calibration and corruption chapters.

Whether a post-hoc calibrator helps, read from the ECE excess over its floor
(:func:`describe_excess_verdict`), and whether discrimination loss and
calibration loss move together across corruption cells
(:func:`describe_robustness_faces`), and how many probes chose an edge of
their C grid (:func:`describe_grid_edges`).
"""

from __future__ import annotations

from crsbench_lib.report.grammar import CORRELATION_SIZES, describe_change, finite, fmt, format_interval, percent
from crsbench_lib.scoring.probe_grid import EdgeShare

#: Largest share of edge choices at which the calibration axis is read as the encoders' (issue 27's bar): above it,
#: more than one probe in ten was stopped by the grid, too many to call the axis a property of the features.
EDGE_SHARE_READABLE = 0.10


def describe_excess_verdict(
    calibrator: str,
    before: float,
    after: float,
    interval: tuple[float, float],
    level: float = 0.95,
    digits: int = 3,
    floor: float | None = None,
) -> str:
    """Whether a post-hoc calibrator helps, read from the change of the ECE excess over its floor.

    The ECE of a finite test set is positive even for perfectly calibrated
    probabilities; only the excess over that floor is miscalibration a
    calibrator can remove (method section 9, amendment 5). The verdict reads the
    interval of ``after - before`` alone: below zero "helps", above zero "makes
    it worse", spanning zero "does not help measurably", so it can never call a
    rise a cut. Its size is judged against the floor itself when ``floor`` is
    given (:func:`~crsbench_lib.report.grammar.noise_size_word`): a fall of
    0.006 beside a floor of 0.023 is small beside what one probe's ECE can
    resolve, whatever share of the excess it is; without ``floor`` the size
    word is the relative band of the excess.

    Parameters
    ----------
    calibrator : str
        Its name ("temperature").
    before, after : float
        Mean ECE excess over the floor without and with the calibrator.
    interval : (float, float)
        Interval of the change ``after - before``.
    level : float
        The interval's coverage.
    digits : int
        Decimals shown.
    floor : float, optional
        The mean ECE floor of the uncalibrated probes (the noise the size word
        is judged against).

    Examples
    --------
    >>> describe_excess_verdict("temperature", 0.016, 0.010, (-0.012, -0.001), floor=0.023)
    'temperature helps: the mean ECE excess over its floor fell from 0.016 to 0.010 (by 38 %; the fall of 0.006 is 0.26 times the mean ECE floor of 0.023, a small improvement beside it); its 95 % interval [-0.012, -0.001] excludes zero.'
    >>> describe_excess_verdict("temperature", 0.05, 0.02, (-0.04, -0.02))
    'temperature helps: the mean ECE excess over its floor fell from 0.050 to 0.020 (by 60 %, a large improvement); its 95 % interval [-0.040, -0.020] excludes zero.'
    >>> describe_excess_verdict("isotonic", 0.01, 0.012, (-0.001, 0.005))
    'isotonic does not help measurably: the mean ECE excess over its floor rose from 0.010 to 0.012 (by 20 %, a moderate deterioration); its 95 % interval [-0.001, 0.005] includes zero, so the data cannot tell the direction.'
    """
    low, high = finite(interval[0], "low"), finite(interval[1], "high")
    if high < 0:
        verdict = "helps"
    elif low > 0:
        verdict = "does not help, it makes calibration worse"
    else:
        verdict = "does not help measurably"
    change = describe_change(before, after, "the mean ECE excess over its floor", better="lower",
                             interval=(low, high), level=level, digits=digits, noise=floor,
                             noise_name="the mean ECE floor")
    return f"{calibrator} {verdict}: {change[:1].lower()}{change[1:]}"


def describe_robustness_faces(r: float, interval: tuple[float, float], level: float = 0.95, digits: int = 2) -> str:
    """Do discrimination loss and calibration loss move together across corruption cells? In words.

    ``r**2`` is the share of the between-cell variance of the ECE increase
    that a linear function of the AUROC loss accounts for; ``1 - r**2`` is
    calibration damage the AUROC loss does not predict: the part a
    robustness view built on AUROC alone would miss.

    Parameters
    ----------
    r : float
        Pearson's r across cells.
    interval : (float, float)
        An interval of r (e.g. the cluster bootstrap's).
    level : float
        Its coverage.
    digits : int

    Examples
    --------
    >>> describe_robustness_faces(0.836, (0.718, 0.909))
    'r² = 0.70: across cells, the AUROC loss accounts for 70 % of the variance of the ECE increase and leaves 30 % unexplained; the whole 95 % interval of r [0.72, 0.91] lies above 0.7, so on this cohort the two losses largely move together.'
    """
    r = finite(r, "r")
    low, high = (finite(v, "interval") for v in interval)
    explained = r * r
    bound = CORRELATION_SIZES[-1][0]  # where "strong" becomes "very strong"
    bounds = format_interval(low, high, digits)
    if low >= bound:
        verdict = f"the whole {level * 100:g} % interval of r {bounds} lies above {bound:g}, so on this cohort the two losses largely move together"
    elif high < bound:
        verdict = (f"the whole {level * 100:g} % interval of r {bounds} lies below {bound:g}, so on this cohort they are "
                   "at most partly aligned, and a calibration view adds what the AUROC loss does not show")
    else:
        verdict = (f"the {level * 100:g} % interval of r {bounds} straddles {bound:g}, so these cells do not pin down "
                   "how closely the two move together")
    return (f"r² = {fmt(explained, digits)}: across cells, the AUROC loss accounts for {percent(explained)} of the "
            f"variance of the ECE increase and leaves {percent(1 - explained)} unexplained; {verdict}.")


def describe_grid_edges(share: EdgeShare, c_rule: str = "auroc") -> str:
    """How many probes chose an edge of the C grid, and what that does to the calibration axis.

    Parameters
    ----------
    share : EdgeShare
        Counts from :func:`crsbench_lib.scoring.probe_grid.edge_share`.
    c_rule : str
        The probes' selection criterion (the results table's ``c_rule``).

    Examples
    --------
    >>> print(describe_grid_edges(EdgeShare(180, 87, 23, (0.01, 0.1, 1.0, 10.0))))  # doctest: +NORMALIZE_WHITESPACE
    Of the 180 clean full-label probes, 110 (61 %) chose an edge of the C grid [0.01, 10] (87 the smallest value, 23
    the largest), where the validation AUROC might have preferred a C outside it. That is more than one probe in ten:
    the calibration axis partly measures where the grid ends, not the encoders. ...
    """
    if share.n_probes == 0:
        return "No clean full-label probe is in the table, so no probe's C can be placed on its grid."
    if share.fixed:
        return (f"The profile fixes every probe's C at {share.grid[0]:g}, so no probe chose it and none can run into "
                "the end of a grid; the calibration axis is each encoder's at that one regularisation, which may suit "
                "some encoders better than others.")
    n_edge = share.n_low + share.n_high
    grid = f"[{share.grid[0]:g}, {share.grid[-1]:g}]"
    criterion = "validation AUROC" if c_rule == "auroc" else "validation log-loss"
    head = (f"Of the {share.n_probes} clean full-label probes, {n_edge} ({percent(share.share)}) chose an edge of the C "
            f"grid {grid} ({share.n_low} the smallest value, {share.n_high} the largest)")
    if n_edge == 0:
        head = f"None of the {share.n_probes} clean full-label probes chose an edge of the C grid {grid}."
        reading = "Every probe's regularisation was set by its features, not by the grid's ends."
    elif share.share <= EDGE_SHARE_READABLE:
        head += f", where the {criterion} might have preferred a C outside it."
        reading = ("That is at most one probe in ten, so the grid's ends shape few of the calibration values; those "
                   "few probes' ECE may still reflect the grid, since nothing beyond it was tried.")
    else:
        head += f", where the {criterion} might have preferred a C outside it."
        reading = ("That is more than one probe in ten: the calibration axis partly measures where the grid ends, not "
                   "the encoders.")
    lesson = ("Which probes reach an edge belongs to this build's world; that an edge choice moves ECE (a heavily "
              "regularised probe is under-confident, a barely regularised one over-confident) holds for any "
              "benchmark that tunes a probe on a grid.")
    return f"{head} {reading} {lesson}"
