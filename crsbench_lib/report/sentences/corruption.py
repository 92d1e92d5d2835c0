"""The sentences of the corruption chapter: the per-model question and what the between-cell r measures.

The study asks whether an encoder that loses more discrimination under a
corruption also loses more calibration. That is a question *within* a cell
(one dataset and corruption family), across encoders, and
:func:`describe_within_cells` answers it with the within-cell correlation.
The correlation *between* cells correlates cell means, which the strength of
each corruption drives; :func:`describe_between_cells` says so, shows what
resampling the shared test images adds to its interval, and compares it with
the study's figure, which is a between-cell figure too.
:func:`corruption_lessons` sorts the chapter's lessons into those of any
benchmark of this design and those of this build's world ("Is this real?"),
and :func:`corruption_exercise_clip` and :func:`corruption_exercise_draws`
compute the exercises' answers from the page's own table and draws.

Sizes are read from the interval's two ends with the correlation bands of
:mod:`crsbench_lib.report.grammar`, never from the point alone.
"""

from __future__ import annotations

import math

from statistics import NormalDist
from typing import TYPE_CHECKING

from crsbench_lib.report.grammar import (
    CORRELATION_SIZES,
    MAX_INTERVAL_DIGITS,
    correlation_word,
    describe_interval,
    finite,
    fmt,
    noise_size_word,
    percent,
)
from crsbench_lib.report.sentences.lessons import DESIGN, WORLD, Lesson, world_name

if TYPE_CHECKING:
    import pandas as pd

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


def within_case(low: float, high: float) -> str:
    """What the interval of the mean within-cell r says, the verdict of :func:`describe_within_cells` and the takeaway.

    Parameters
    ----------
    low, high : float
        The interval's ends.

    Returns
    -------
    str
        "unknown" (it includes zero), "partial" (positive, below :data:`CLOSE_GUIDE`), "close" (at or above it
        throughout), "negative" (below zero) or "unpinned" (positive, reaching past :data:`CLOSE_GUIDE`).

    Examples
    --------
    >>> [within_case(*i) for i in ((-0.3, 0.7), (0.3, 0.6), (0.75, 0.9), (-0.6, -0.2), (0.4, 0.8))]
    ['unknown', 'partial', 'close', 'negative', 'unpinned']
    """
    low, high = _interval((low, high))
    if low <= 0 <= high:
        return "unknown"
    if low > 0 and high < CLOSE_GUIDE:
        return "partial"
    if low >= CLOSE_GUIDE:
        return "close"
    return "negative" if high < 0 else "unpinned"


_SUBJECT = "Within a cell, across its {n} encoders, an encoder that loses more AUROC under a corruption "
#: The head of the within-cell sentence, per :func:`within_case`.
_WITHIN_HEADS: dict[str, str] = {
    "unknown": ("Within a cell, across its {n} encoders, the data cannot tell whether an encoder that loses more AUROC "
                "under a corruption also loses more calibration"),
    "partial": _SUBJECT + "also tends to lose more calibration, but only partly",
    "close": _SUBJECT + "also loses more calibration, closely",
    "negative": _SUBJECT + "tends to lose less calibration",
    "unpinned": _SUBJECT + "also tends to lose more calibration, by an amount these cells do not pin down",
}
#: The takeaway's answer to the chapter's question, per :func:`within_case`: a clause that stands alone
#: in the box (a reader sees the takeaway before the question).
_ANSWERS: dict[str, str] = {
    "unknown": "Whether AUROC loss predicts calibration loss, the data cannot tell",
    "partial": "AUROC loss only partly predicts calibration loss",
    "close": "AUROC loss closely predicts calibration loss",
    "negative": "Encoders that lose more AUROC lose less calibration",
    "unpinned": "AUROC loss predicts calibration loss by an unpinned amount",
}


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
    head = _WITHIN_HEADS[within_case(low, high)]
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
    # Widths of the printed ends, so that the sentence's widths agree with its intervals as printed.
    width, width0 = (float(fmt(b, digits)) - float(fmt(a, digits)) for a, b in ((low, high), (low0, high0)))
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


def _width_change(resampled: tuple[float, float], fixed: tuple[float, float], digits: int) -> tuple[str, bool]:
    """``"from 0.210 to 0.263"`` and whether resampling the images widened the interval."""
    # Widths of the printed ends, so the sentence's numbers agree with the table's rounded interval.
    wide = float(fmt(resampled[1], digits)) - float(fmt(resampled[0], digits))
    narrow = float(fmt(fixed[1], digits)) - float(fmt(fixed[0], digits))
    return f"from {fmt(narrow, digits)} to {fmt(wide, digits)}", wide > narrow


def corruption_lessons(
    between: tuple[float, float, float],
    between_fixed: tuple[float, float],
    within: tuple[float, float, float],
    within_fixed: tuple[float, float],
    n_cells: int,
    study_r: float | None = None,
    study_cells: int | None = None,
    simulated: bool | None = None,
    digits: int = 3,
) -> list[Lesson]:
    """The corruption chapter's "Is this real?" lessons, decided from the page's two correlations.

    Parameters
    ----------
    between : (float, float, float)
        The between-cell r and its interval with the test images resampled.
    between_fixed : (float, float)
        Its interval with the images held fixed.
    within : (float, float, float)
        The mean within-cell r and its interval with the images resampled.
    within_fixed : (float, float)
        Its interval with the images held fixed.
    n_cells : int
        Corruption cells.
    study_r, study_cells : optional
        The study's between-cell r and its number of cells.
    simulated : bool, optional
        Names the world.
    digits : int
        Decimals shown.

    Returns
    -------
    list of Lesson
        Two of the design (what a correlation of cell means measures; what
        shared test images do to an interval) and two of this build's world
        (how far the AUROC loss guides the calibration loss within a cell; how
        strongly the corruptions' two costs go together across cells, beside
        the study's figure).

    Examples
    --------
    >>> lessons = corruption_lessons((0.883, 0.687, 0.950), (0.741, 0.950), (0.520, 0.331, 0.604), (0.378, 0.622), 34,
    ...                              study_r=0.63, study_cells=43, simulated=True)
    >>> [lesson.scope for lesson in lessons]
    ['design', 'design', 'world', 'world']
    >>> lessons[3].study
    'r = 0.63 over 43 cells, a correlation of cell means too.'
    """
    r_b, low_b, high_b = (finite(v, "between") for v in between)
    r_w, low_w, high_w = (finite(v, "within") for v in within)
    gap = r_b - r_w
    order = ("higher than" if gap > 0 else "lower than" if gap < 0 else "equal to")
    lessons = [Lesson(DESIGN, (
        "A correlation of cell means averages the encoders away, so it measures how strong the corruptions are, "
        "not which model is robust; the per-model question needs the correlation within a cell, across encoders. "
        f"The two can differ by any amount: on this page the between-cell r ({fmt(r_b, digits)}) is "
        f"{order} the mean within-cell r ({fmt(r_w, digits)})"
        + (f", by {fmt(abs(gap), digits)}." if gap else "."))),
    ]
    span_b, wider_b = _width_change((low_b, high_b), between_fixed, digits)
    span_w, wider_w = _width_change((low_w, high_w), within_fixed, digits)
    if wider_b and wider_w:
        effect = (f"resampling them widens the interval of the mean within-cell r {span_w} and that of the "
                  f"between-cell r {span_b}")
    elif not wider_b and not wider_w:
        effect = (f"here resampling them does not widen either interval (within {span_w}, between {span_b}), so the "
                  "images add no spread these draws can see")
    else:
        effect = (f"here resampling them moves the width of the mean within-cell r's interval {span_w} and of the "
                  f"between-cell r's {span_b}")
    lessons.append(Lesson(DESIGN, (
        "Every encoder in a cell is scored on the same test images, so their sampling error is shared and an "
        f"interval that holds the images fixed leaves it out: {effect}.")))
    world = world_name(simulated)
    if low_w <= 0 <= high_w:
        guide = ("the data cannot tell whether an encoder that loses more AUROC also loses more calibration "
                 f"(mean within-cell r {fmt(r_w, digits)}, interval [{fmt(low_w, digits)}, {fmt(high_w, digits)}])")
        expect = "a cohort with more encoders or larger test sets could settle it either way"
    elif low_w > 0 and high_w < CLOSE_GUIDE:
        guide = (f"the AUROC loss is at most a partial guide to which encoder stays calibrated (mean within-cell r "
                 f"{fmt(r_w, digits)}, interval [{fmt(low_w, digits)}, {fmt(high_w, digits)}], below "
                 f"{CLOSE_GUIDE:g} at its upper end)")
        expect = ("expect a robustness view built on AUROC alone to miss part of the calibration damage on another "
                  "cohort too; how large a part is that cohort's measurement")
    elif low_w >= CLOSE_GUIDE:
        guide = (f"the AUROC loss is a close guide to which encoder stays calibrated (mean within-cell r "
                 f"{fmt(r_w, digits)}, interval [{fmt(low_w, digits)}, {fmt(high_w, digits)}])")
        expect = "another cohort's encoders may part the two losses where these do not"
    elif high_w < 0:
        guide = (f"an encoder that loses more AUROC tends to lose less calibration (mean within-cell r "
                 f"{fmt(r_w, digits)}, interval [{fmt(low_w, digits)}, {fmt(high_w, digits)}])")
        expect = "another cohort may not share this trade-off"
    else:
        guide = (f"the two losses go together within a cell by an amount these cells do not pin down (mean "
                 f"within-cell r {fmt(r_w, digits)}, interval [{fmt(low_w, digits)}, {fmt(high_w, digits)}])")
        expect = "more cells or encoders would tell"
    lessons.append(Lesson(WORLD, f"In {world} {guide}; {expect}."))
    strength = interval_strength(low_b, high_b)
    text = (f"Across the {n_cells} cells of {world} the corruptions that cost more AUROC also cost "
            f"{'more' if r_b > 0 else 'less'} calibration (between-cell r {fmt(r_b, digits)}, interval "
            f"[{fmt(low_b, digits)}, {fmt(high_b, digits)}]: {strength}). That is a fact of these corruption "
            "families and severities: another set of corruptions, milder or of other kinds, can move it.")
    study = ""
    if study_r is not None:
        study = (f"r = {_study_number(finite(study_r, 'study_r'))}"
                 + (f" over {study_cells} cells" if study_cells else "") + ", a correlation of cell means too.")
    lessons.append(Lesson(WORLD, text, study=study))
    return lessons


def corruption_exercise_clip(
    results: "pd.DataFrame",
    page: Mapping[str, float],
    arm: str = "frozen",
    threshold: float = 0.3,
    digits: int = 3,
) -> str:
    """Both correlations with the losses clipped at zero, re-scored from the page's table, beside the page's.

    Parameters
    ----------
    results : pandas.DataFrame
        The page's results table.
    page : mapping
        The page's unclipped numbers: ``between_r``, ``between_low``,
        ``between_high``, ``within_r``, ``within_low``, ``within_high``
        (the intervals with the images resampled), ``n_below``.
    arm : str
        The arm.
    threshold : float
        The within-cell r below which a cell is counted.
    digits : int
        Decimals shown.

    Returns
    -------
    str
        The clipped correlations, each change judged against the half-width of
        the page's interval, and what clipping does.

    Examples
    --------
    >>> page = {"between_r": 0.883, "between_low": 0.687, "between_high": 0.950, "within_r": 0.520,
    ...         "within_low": 0.331, "within_high": 0.604, "n_below": 6}
    >>> corruption_exercise_clip(results, page)  # doctest: +SKIP

    (``results`` is a full results table; :func:`describe_clip_change` shows the words.)
    """
    from crsbench_lib.scoring import corruption_cells, corruption_within

    cells = corruption_cells.corruption_cells(results, arm=arm, clip=True)
    between = corruption_cells.cell_correlation(cells)
    within = corruption_within.summarise_within(
        corruption_within.within_cell_correlations(results, arm=arm, clip=True), threshold=threshold)
    return describe_clip_change(page, between.r, within.mean_r, within.n_below, within.n_cells, threshold, digits)


def describe_clip_change(
    page: Mapping[str, float], between_r: float, within_r: float, n_below: int, n_cells: int, threshold: float = 0.3,
    digits: int = 3,
) -> str:
    """The clipped correlations beside the page's, each change judged against the page's interval (see
    :func:`corruption_exercise_clip`).

    Examples
    --------
    >>> page = {"between_r": 0.883, "between_low": 0.687, "between_high": 0.950, "within_r": 0.520,
    ...         "within_low": 0.331, "within_high": 0.604, "n_below": 6}
    >>> print(describe_clip_change(page, 0.877, 0.596, 3, 34))  # doctest: +NORMALIZE_WHITESPACE
    Clipped at zero, the between-cell r is 0.877 (0.883 on the page: a change of -0.006, negligible beside the
    half-width 0.131 of its interval) and the mean within-cell r 0.596 (0.520: +0.076, moderate beside the half-width
    0.136); 3 of 34 cells have a within-cell r below 0.3 (6 on the page). Clipping turns every improvement under a
    corruption (a probe that gains AUROC or calibration on noisy images) into zero. Here it moves the within-cell r
    more than the between-cell r: the gains it removes sit among the encoders of a cell, where a few small gains
    pull a within-cell r down, while the between-cell r rests on the cell means, which the strong corruptions drive.
    The robustness axis clips for the same reason: an encoder earns no credit for improving under damage.
    """
    rows = []
    for key, new, label in (("between", between_r, "the between-cell r"), ("within", within_r, "the mean within-cell r")):
        old = finite(page[f"{key}_r"], f"{key}_r")
        half = (finite(page[f"{key}_high"], f"{key}_high") - finite(page[f"{key}_low"], f"{key}_low")) / 2.0
        change = finite(new, key) - old
        word = noise_size_word(change, half) if half > 0 else "unjudged"
        rows.append((label, new, old, change, word, half))
    (lb, nb, ob, cb, wb, hb), (lw, nw, ow, cw, ww, hw) = rows
    signed = lambda v: fmt(v, digits) if v <= 0 or float(fmt(v, digits)) == 0 else "+" + fmt(v, digits)  # noqa: E731
    text = (f"Clipped at zero, {lb} is {fmt(nb, digits)} ({fmt(ob, digits)} on the page: a change of {signed(cb)}, {wb} "
            f"beside the half-width {fmt(hb, digits)} of its interval) and {lw} {fmt(nw, digits)} ({fmt(ow, digits)}: "
            f"{signed(cw)}, {ww} beside the half-width {fmt(hw, digits)}); {n_below} of {n_cells} cells have a "
            f"within-cell r below {threshold:g} ({int(page['n_below'])} on the page).")
    text += (" Clipping turns every improvement under a corruption (a probe that gains AUROC or calibration on noisy "
             "images) into zero.")
    if abs(cw) > abs(cb):
        text += (" Here it moves the within-cell r more than the between-cell r: the gains it removes sit among the "
                 f"encoders of a cell, where a few small gains {'pull a within-cell r down' if cw > 0 else 'hold a within-cell r up'}, "
                 "while the between-cell r rests on the cell means, which the strong corruptions drive.")
    else:
        text += (" It moves the between-cell r at least as much as the mean within-cell r here: the clipped gains sit "
                 "in whole cells, not between encoders within a cell.")
    return text + (" The robustness axis clips for the same reason: an encoder earns no credit for improving under "
                   "damage.")


def corruption_exercise_draws(summary: "pd.DataFrame", n_draws: int = 200, level: float = 0.95, digits: int = 3) -> str:
    """How far a rerun with ``n_draws`` draws would move each interval's mean and ends, from the page's own draws.

    The Monte-Carlo error of the draws' mean is the spread of the draws over
    the square root of their number (``mc_se`` of the page's table times
    ``sqrt(B / n_draws)``); an end of a percentile interval, a quantile, moves
    more: its Monte-Carlo error is about ``sd sqrt(p (1 - p) / n) / phi(z_p)``
    for a normal spread (``p = (1 - level) / 2``), some 2.7 times the mean's at
    95 %.

    Parameters
    ----------
    summary : pandas.DataFrame
        The page's bootstrap summary: statistic, images, estimate, ci_low,
        ci_high, mc_se, n_draws.
    n_draws : int
        The rerun's draws.
    level : float
        The intervals' coverage.
    digits : int
        Decimals shown.

    Returns
    -------
    str

    Examples
    --------
    >>> import pandas as pd
    >>> summary = pd.DataFrame({"statistic": ["mean within-cell r"] * 2, "images": ["resampled", "fixed"],
    ...     "estimate": 0.52, "ci_low": [0.331, 0.378], "ci_high": [0.604, 0.622], "mc_se": [0.0022, 0.0020],
    ...     "n_draws": 1000})
    >>> corruption_exercise_draws(summary).split(";")[0]
    'At 200 draws instead of 1000, the mean of the draws of the mean within-cell r (images resampled) moves by about 0.005 and each end of its 95 % interval by about 0.013'
    """
    for column in ("statistic", "images", "mc_se", "n_draws"):
        if column not in summary.columns:
            raise ValueError(f"corruption_exercise_draws: the summary lacks column {column!r}")
    p = (1.0 - finite(level, "level")) / 2.0
    z = NormalDist().inv_cdf(1.0 - p)
    factor = math.sqrt(p * (1.0 - p)) / NormalDist().pdf(z)
    parts, moves = [], {}
    total = int(summary["n_draws"].iloc[0])
    for _, row in summary.iterrows():
        sd = float(row["mc_se"]) * math.sqrt(int(row["n_draws"]))
        mean_move, end_move = sd / math.sqrt(n_draws), factor * sd / math.sqrt(n_draws)
        name = f"{row['statistic']} (images {row['images']})"
        moves[name] = end_move
        parts.append(f"the mean of the draws of the {name} moves by about {fmt(mean_move, digits)} and each end of "
                     f"its {level * 100:.0f} % interval by about {fmt(end_move, digits)}")
    text = f"At {n_draws} draws instead of {total}, " + "; ".join(parts) + "."
    text += (f" The ends move about {factor:.1f} times as much as the mean, since a quantile rests on the few draws "
             "in a tail.")
    for statistic in dict.fromkeys(str(v) for v in summary["statistic"]):
        pair = {images: moves[f"{statistic} (images {images})"] for images in ("resampled", "fixed")
                if f"{statistic} (images {images})" in moves}
        if len(pair) == 2:
            ahead = "resampled" if pair["resampled"] >= pair["fixed"] else "fixed"
            text += (f" For the {statistic} the interval with the images {ahead} moves more ({fmt(pair[ahead], digits)} "
                     f"against {fmt(pair['fixed' if ahead == 'resampled' else 'resampled'], digits)})"
                     + (", because resampling the images adds spread to every draw." if ahead == "resampled"
                        else ", its draws spreading wider here."))
    text += " "
    largest_end = max(moves.values())
    at_page = largest_end * math.sqrt(n_draws / total)
    return text + (f"At the page's {total} draws the same end moves by about {fmt(at_page, digits)}: more draws shrink "
                   "the Monte-Carlo error on top of the data's sampling error, never the sampling error itself, which "
                   "is what the interval's width measures.")


def corruption_takeaway(mean_r: float, interval: tuple[float, float], n_encoders: int, between_r: float,
                        n_cells: int, level: float = 0.95, digits: int = 3) -> str:
    """The corruption chapter's key takeaway: does an encoder that loses more AUROC also lose more calibration?

    The answer is the within-cell correlation's (:func:`within_case`, as
    :func:`describe_within_cells` reads it), judged on its interval with the
    shared test images resampled; the between-cell r is named for what it
    measures instead.

    Parameters
    ----------
    mean_r : float
        Mean within-cell r over cells.
    interval : (float, float)
        Its interval (encoders, datasets and test images resampled).
    n_encoders : int
        Encoders per cell.
    between_r : float
        Pearson's r of the cell means.
    n_cells : int
        Cells.
    level : float
        The interval's coverage.
    digits : int
        Decimals shown.

    Returns
    -------
    str
        Two sentences.

    Examples
    --------
    >>> corruption_takeaway(0.359, (-0.296, 0.715), 6, 0.673, 9)
    'Whether AUROC loss predicts calibration loss, the data cannot tell: within a cell, across its 6 encoders, AUROC loss and ECE increase correlate at a mean r of 0.359 (95 % interval [-0.296, 0.715], test images resampled). The between-cell r of 0.673 over 9 cells says how strong the corruptions are, not which model is robust.'
    """
    r, between = finite(mean_r, "mean_r"), finite(between_r, "between_r")
    low, high = _interval(interval)
    return (f"{_ANSWERS[within_case(low, high)]}: within a cell, across its {n_encoders} encoders, AUROC loss and ECE "
            f"increase correlate at a mean r of {fmt(r, digits)} ({level * 100:g} % interval "
            f"{_bounds(low, high, digits)}, test images resampled). The between-cell r of {fmt(between, digits)} over "
            f"{n_cells} cells says how strong the corruptions are, not which model is robust.")
