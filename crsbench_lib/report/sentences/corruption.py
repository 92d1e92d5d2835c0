"""The sentences of the corruption chapter: the per-model question and what the between-cell r measures.

The study asks whether an encoder that loses more discrimination under a
corruption also loses more calibration. That is a question *within* a cell
(one dataset and corruption family), across encoders, and
:func:`describe_within_cells` answers it with the within-cell correlation.
The correlation *between* cells correlates cell means, which the strength of
each corruption drives; :func:`describe_between_cells` says so, shows what
resampling the shared test images adds to its interval, and compares it with
the study's figure, which is a between-cell figure too.
:func:`describe_corruption_lesson` says which lesson belongs to any benchmark
of this design and which to this build's world.

Sizes are read from the interval's two ends with the correlation bands of
:mod:`crsbench_lib.report.grammar`, never from the point alone.
"""

from __future__ import annotations

import math

from crsbench_lib.report.grammar import (
    CORRELATION_SIZES,
    MAX_INTERVAL_DIGITS,
    correlation_word,
    describe_interval,
    finite,
    fmt,
    percent,
)

#: Where "strong" ends and "very strong" begins: a correlation at or above it makes one loss a close guide to the other.
CLOSE_GUIDE = CORRELATION_SIZES[-1][0]


def _interval(interval: tuple[float, float]) -> tuple[float, float]:
    low, high = (finite(v, "interval") for v in interval)
    if low > high:
        raise ValueError(f"interval ends out of order: low {low!r} > high {high!r}")
    return low, high


def _bounds(low: float, high: float, digits: int) -> str:
    """``[low, high]`` with enough decimals that a non-zero end never reads as zero."""
    while digits < MAX_INTERVAL_DIGITS and any(v != 0 and float(fmt(v, digits)) == 0 for v in (low, high)):
        digits += 1
    return f"[{fmt(low, digits)}, {fmt(high, digits)}]"


def _bands(low: float, high: float) -> tuple[str, str, str] | None:
    """(band of the end nearer zero, band of the farther end, sign), or None when the interval holds zero."""
    low, high = _interval((low, high))
    if low <= 0 <= high:
        return None
    near, far = (low, high) if low > 0 else (high, low)
    return correlation_word(near), correlation_word(far), "positive" if low > 0 else "negative"


def interval_strength(low: float, high: float) -> str:
    """The size of a correlation read from both ends of its interval.

    Returns
    -------
    str
        "no association it can detect" when the interval includes zero; else
        the band of both ends when they share it ("moderate positive"), or
        "X to Y" (e.g. "moderate to strong positive"), with the sign.

    Examples
    --------
    >>> interval_strength(0.30, 0.59)
    'moderate to strong positive'
    >>> interval_strength(0.72, 0.91)
    'very strong positive'
    >>> interval_strength(-0.1, 0.4)
    'no association it can detect'
    """
    bands = _bands(low, high)
    if bands is None:
        return "no association it can detect"
    first, last, sign = bands
    return f"{first} {sign}" if first == last else f"{first} to {last} {sign}"


def _strength_clause(low: float, high: float) -> str:
    """``" and runs from a moderate to a strong positive association"``, or nothing when the interval holds zero."""
    bands = _bands(low, high)
    if bands is None:
        return ""
    first, last, sign = bands
    if first == last:
        return f", all of it a {first} {sign} association" if first != "no" else ", all of it too weak to speak of"
    start = "no association to speak of" if first == "no" else f"a {first}"
    return f" and runs from {start} to a {last} {sign} association"


def describe_within_cells(
    mean_r: float,
    interval: tuple[float, float],
    median_r: float,
    n_below: int,
    n_cells: int,
    n_encoders: int,
    threshold: float = 0.3,
    bias: float | None = None,
    mc_se: float | None = None,
    level: float = 0.95,
    digits: int = 3,
) -> str:
    """The study's per-model question answered with the within-cell correlation.

    Within a cell, Pearson's r across encoders of each encoder's AUROC loss and
    ECE increase; ``r**2`` is the share of the spread of the ECE increase
    between encoders that a linear function of their AUROC loss accounts for.
    The verdict reads the interval of the mean within-cell r: its upper end
    below :data:`CLOSE_GUIDE` makes the AUROC loss at most a partial guide to
    an encoder's calibration loss, its lower end at or above it a close guide,
    and an interval that includes zero leaves open whether the two move
    together at all. When ``bias`` and its Monte-Carlo error ``mc_se`` are
    given (the bootstrap's mean of the draws less the point, Efron and
    Tibshirani 1993, ch. 10), a bias beyond twice that error is reported as
    the pull of test-image noise, towards or away from zero.

    Parameters
    ----------
    mean_r, median_r : float
        Mean and median of the within-cell r over cells.
    interval : (float, float)
        Interval of the mean within-cell r.
    n_below, n_cells : int
        Cells with r below ``threshold``, and cells.
    n_encoders : int
        Encoders per cell.
    threshold : float
        The bound counted.
    bias, mc_se : float, optional
        Bootstrap bias of the mean within-cell r and its Monte-Carlo standard error.
    level : float
        The interval's coverage.
    digits : int
        Decimals shown.

    Returns
    -------
    str

    Raises
    ------
    ValueError
        If a number is not finite, the counts are inconsistent or the interval's ends are out of order.

    Examples
    --------
    >>> describe_within_cells(0.495, (0.303, 0.592), 0.517, 6, 34, 20)
    'Within a cell, across its 20 encoders, an encoder that loses more AUROC under a corruption also tends to lose more calibration, but only partly: the mean within-cell r is 0.495 (its 95 % interval [0.303, 0.592] excludes zero and runs from a moderate to a strong positive association) and the median 0.517; at the mean, the AUROC loss accounts for 25 % of the spread of the ECE increase between encoders (35 % at the upper end of the interval), and in 6 of 34 cells (18 %) r is below 0.3. So the AUROC loss is at most a partial guide to which encoder stays calibrated under a corruption.'
    """
    r, median = finite(mean_r, "mean_r"), finite(median_r, "median_r")
    low, high = _interval(interval)
    if not (isinstance(n_cells, int) and isinstance(n_below, int) and 0 <= n_below <= n_cells and n_cells > 0):
        raise ValueError(f"need 0 <= n_below <= n_cells and n_cells > 0, got {n_below!r} of {n_cells!r}")
    if low <= 0 <= high:
        head = ("Within a cell, across its {n} encoders, the data cannot tell whether an encoder that loses more AUROC "
                "under a corruption also loses more calibration")
    elif low > 0 and high < CLOSE_GUIDE:
        head = ("Within a cell, across its {n} encoders, an encoder that loses more AUROC under a corruption also "
                "tends to lose more calibration, but only partly")
    elif low >= CLOSE_GUIDE:
        head = ("Within a cell, across its {n} encoders, an encoder that loses more AUROC under a corruption also "
                "loses more calibration, closely")
    elif high < 0:
        head = ("Within a cell, across its {n} encoders, an encoder that loses more AUROC under a corruption tends "
                "to lose less calibration")
    else:
        head = ("Within a cell, across its {n} encoders, an encoder that loses more AUROC under a corruption also "
                "tends to lose more calibration, by an amount these cells do not pin down")
    text = (head.format(n=n_encoders) + f": the mean within-cell r is {fmt(r, digits)} ("
            + describe_interval(low, high, level=level, digits=digits) + _strength_clause(low, high)
            + f") and the median {fmt(median, digits)}")
    top = max(abs(low), abs(high))
    text += (f"; at the mean, the AUROC loss accounts for {percent(r * r)} of the spread of the ECE increase between "
             f"encoders ({percent(top * top)} at the {'upper' if abs(high) >= abs(low) else 'lower'} end of the "
             f"interval), and in {n_below} of {n_cells} cells ({percent(n_below / n_cells)}) r is below {threshold:g}.")
    if high < CLOSE_GUIDE and low > -CLOSE_GUIDE:
        text += " So the AUROC loss is at most a partial guide to which encoder stays calibrated under a corruption."
    elif low >= CLOSE_GUIDE:
        text += " So the AUROC loss is a close guide to which encoder stays calibrated under a corruption."
    if bias is not None and mc_se is not None:
        text += " " + describe_image_noise(r, bias, mc_se, digits=digits)
    return text


def describe_image_noise(estimate: float, bias: float, mc_se: float, digits: int = 3) -> str:
    """What resampling the test images does to a correlation's draws: its bias, judged against Monte-Carlo error.

    Noise in each encoder's measured losses dilutes a correlation across
    encoders (draws that pull towards zero); a bias within twice its
    Monte-Carlo standard error is not distinguishable from none.

    Examples
    --------
    >>> describe_image_noise(0.495, -0.047, 0.002)
    "The draws centre 0.047 below the point (Monte-Carlo error 0.002), towards zero: the noise of the test images in each encoder's losses dilutes the correlation, so the point likely understates what larger test sets would show."
    >>> describe_image_noise(0.495, 0.003, 0.002)
    'The draws centre on the point (bias 0.003, within twice its Monte-Carlo error 0.002): no measurable dilution by test-image noise.'
    """
    r, b, se = finite(estimate, "estimate"), finite(bias, "bias"), finite(mc_se, "mc_se")
    if se < 0:
        raise ValueError(f"mc_se must be non-negative, got {mc_se!r}")
    if abs(b) <= 2 * se or r == 0:
        return (f"The draws centre on the point (bias {fmt(b, digits)}, within twice its Monte-Carlo error "
                f"{fmt(se, digits)}): no measurable dilution by test-image noise.")
    where = "below" if b < 0 else "above"
    if math.copysign(1.0, b) != math.copysign(1.0, r):
        return (f"The draws centre {fmt(abs(b), digits)} {where} the point (Monte-Carlo error {fmt(se, digits)}), "
                "towards zero: the noise of the test images in each encoder's losses dilutes the correlation, so the "
                "point likely understates what larger test sets would show.")
    return (f"The draws centre {fmt(abs(b), digits)} {where} the point (Monte-Carlo error {fmt(se, digits)}), away "
            "from zero: resampling the test images makes the two losses move together more, not less.")


def describe_between_cells(
    r: float,
    interval: tuple[float, float],
    interval_without_images: tuple[float, float],
    n_cells: int,
    study_r: float,
    study_cells: int,
    level: float = 0.95,
    digits: int = 3,
) -> str:
    """The between-cell r as what it is (a statement about corruption strength), beside the study's.

    The interval with the test images resampled is set beside the one that
    resamples encoders and datasets only, with the widths of both, so the
    reader sees what the shared images add. The study's r is a correlation of
    cell means too; the sentence compares with it alone and says where it lies
    relative to this build's interval, without reading agreement into an
    interval built on other encoders, data and corruptions.

    Parameters
    ----------
    r : float
        Pearson's r across cells.
    interval, interval_without_images : (float, float)
        Its interval with and without the image level.
    n_cells : int
    study_r : float
        The study's between-cell r.
    study_cells : int
        The study's number of cells.
    level : float
    digits : int

    Examples
    --------
    >>> describe_between_cells(0.836, (0.656, 0.904), (0.718, 0.909), 34, 0.63, 43)
    "Across the 34 cells, the cell means correlate at r = 0.836 (95 % interval [0.656, 0.904] with the shared test images resampled, [0.718, 0.909] with encoders and datasets alone: the images widen it from 0.191 to 0.248). A cell mean averages the encoders away, so this r says that corruptions which cost more AUROC also cost more calibration, a statement about the corruptions' strength, not about which model is robust. The study's r = 0.63 over 43 cells is also a correlation of cell means and compares with this figure only; it lies below this build's interval. The two come from different encoders, data and corruptions, so the gap describes the two settings, not an error in either."
    """
    value, study = finite(r, "r"), finite(study_r, "study_r")
    low, high = _interval(interval)
    low0, high0 = _interval(interval_without_images)
    width, width0 = high - low, high0 - low0
    change = "widen" if width > width0 else "narrow" if width < width0 else "leave"
    effect = (f"the images {change} it from {fmt(width0, digits)} to {fmt(width, digits)}" if change != "leave"
              else f"the images leave its width at {fmt(width, digits)}")
    text = (f"Across the {n_cells} cells, the cell means correlate at r = {fmt(value, digits)} ({level * 100:g} % "
            f"interval {_bounds(low, high, digits)} with the shared test images resampled, "
            f"{_bounds(low0, high0, digits)} with encoders and datasets alone: {effect}). A cell mean averages the "
            "encoders away, so this r says that corruptions which cost more AUROC also cost more calibration, a "
            "statement about the corruptions' strength, not about which model is robust.")
    where = "below" if study < low else "above" if study > high else "inside"
    text += (f" The study's r = {_study_number(study)} over {study_cells} cells is also a correlation of cell "
             f"means and compares with this figure only; it lies {where} this build's interval.")
    if where == "inside":
        text += (" An interval built on other encoders, data and corruptions that contains the study's value does "
                 "not make the two settings alike; it only fails to separate them.")
    else:
        text += (" The two come from different encoders, data and corruptions, so the gap describes the two settings, "
                 "not an error in either.")
    return text


def _study_number(value: float) -> str:
    """The study's figure as it reported it (two decimals unless more are needed)."""
    return f"{value:.2f}" if round(value, 2) == value else f"{value:.3f}"


def describe_corruption_lesson(simulated: bool) -> str:
    """Which lesson of the chapter belongs to any benchmark of this design, and which to this build's world.

    Examples
    --------
    >>> describe_corruption_lesson(True).startswith("That a correlation of cell means")
    True
    """
    world = ("this build's simulated world (synthetic corruptions at fixed severities on phantom images)"
             if simulated else "this build's cohort and its corruptions")
    return ("That a correlation of cell means measures how strong the corruptions are, and that the per-model "
            "question needs the correlation within a cell, across encoders, with the shared test images resampled, "
            f"holds for any benchmark of this design. The values of both correlations belong to {world}.")
