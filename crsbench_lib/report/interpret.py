"""Words that follow the numbers: the book's interpretation sentences.

Every sentence a chapter uses to interpret a result comes from a function of
this module, so that its wording is *computed* from the numbers it describes:
the direction of a change (a rise is never called a cut), whether that
direction is an improvement for the quantity (``better="lower"`` for ECE and
AUROC loss, ``"higher"`` for AUROC and retention), its size in words, whether
an interval excludes zero, a p-value, and ties. A template such as "the
calibrators cut ECE by {low} to {high}" can contradict its own numbers (a
negative cut); these functions cannot, and tests feed them numbers of both
signs and every size.

Sizes in words are conventions of this book, stated once here:

* relative changes (``|after - before| / |before|``): below
  :data:`NEGLIGIBLE_RELATIVE` "negligible", below 10 % "small", below 30 %
  "moderate", otherwise "large";
* rank correlations (Kendall's tau, Pearson's r, by absolute value): below 0.1
  "no", 0.1-0.3 "weak", 0.3-0.5 "moderate", 0.5-0.7 "strong", 0.7 and above
  "very strong" (the usual rule-of-thumb bands, e.g. Cohen 1988 for r).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Literal

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

Better = Literal["lower", "higher"]

NEGLIGIBLE_RELATIVE = 0.01
RELATIVE_SIZES: tuple[tuple[float, str], ...] = ((NEGLIGIBLE_RELATIVE, "negligible"), (0.10, "small"), (0.30, "moderate"))
LARGEST_RELATIVE = "large"
CORRELATION_SIZES: tuple[tuple[float, str], ...] = ((0.1, "no"), (0.3, "weak"), (0.5, "moderate"), (0.7, "strong"))
LARGEST_CORRELATION = "very strong"
# Two correlations closer than this are "about the same" when compared with the study.
CLOSE_CORRELATION = 0.05
P_FLOOR = 0.001


def _check_better(better: str) -> None:
    if better not in ("lower", "higher"):
        raise ValueError(f"better must be 'lower' or 'higher', got {better!r}")


def _finite(value: float, name: str) -> float:
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return number


def _fmt(value: float, digits: int) -> str:
    text = f"{value:.{digits}f}"
    # "-0.000" reads as a signed change that is not there.
    return text.lstrip("-") if float(text) == 0 else text


def _percent(fraction: float) -> str:
    return f"{abs(fraction) * 100:.0f} %"


def _band(magnitude: float, bands: tuple[tuple[float, str], ...], largest: str) -> str:
    """The word of the first band whose upper bound exceeds ``magnitude`` (``largest`` above them all)."""
    return next((word for bound, word in bands if magnitude < bound), largest)


def size_word(relative: float) -> str:
    """The size of a relative change in words.

    Parameters
    ----------
    relative : float
        ``(after - before) / |before|``; only the magnitude matters.

    Returns
    -------
    str
        "negligible", "small", "moderate" or "large".

    Examples
    --------
    >>> size_word(-0.43)
    'large'
    >>> size_word(0.05)
    'small'
    """
    return _band(abs(_finite(relative, "relative")), RELATIVE_SIZES, LARGEST_RELATIVE)


def correlation_word(value: float) -> str:
    """The strength of a correlation (tau, rho or r) in words, by its absolute value.

    Examples
    --------
    >>> correlation_word(-0.62)
    'strong'
    """
    return _band(abs(_finite(value, "correlation")), CORRELATION_SIZES, LARGEST_CORRELATION)


def p_value_text(p: float) -> str:
    """The one way this book writes a p-value's number: ``< 0.001`` below the floor, two significant digits otherwise.

    A permutation p-value is never zero: with ``B`` random pairings it is at
    least ``1 / (B + 1)`` (Phipson and Smyth 2010), and an exact test's is at
    least ``2 / n!``; rounding it to a fixed number of decimals would print
    0.000. Everything below :data:`P_FLOOR` is therefore written as an upper
    bound, never as a value. Tables (:func:`crsbench_lib.report.tables.show_table`,
    every column named in :data:`crsbench_lib.report.tables.P_VALUE_COLUMNS`)
    and prose (:func:`format_p`) both use this function.

    Parameters
    ----------
    p : float
        A p-value in [0, 1].

    Returns
    -------
    str
        E.g. ``"< 0.001"`` or ``"0.046"``.

    Raises
    ------
    ValueError
        If ``p`` is not a finite number in [0, 1].

    Examples
    --------
    >>> p_value_text(1 / 10000)
    '< 0.001'
    >>> p_value_text(0.04567)
    '0.046'
    """
    value = _finite(p, "p")
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"p must lie in [0, 1], got {p!r}")
    # Three decimals, as the floor has (APA style): ".2g" would print 0.0496 as 0.05, 0.5 as 0.5.
    return f"< {P_FLOOR:g}" if value < P_FLOOR else f"{value:.3f}"


def format_p(p: float) -> str:
    """A p-value in a sentence: ``p < 0.001`` below the floor, ``p = 0.046`` otherwise (:func:`p_value_text`).

    Examples
    --------
    >>> format_p(0.0000123)
    'p < 0.001'
    >>> format_p(0.04567)
    'p = 0.046'
    """
    text = p_value_text(p)
    return f"p {text}" if text.startswith("<") else f"p = {text}"


# What :func:`describe_interval` adds when an interval contains zero.
_NO_DIRECTION = ", so the data cannot tell the direction"
#: Most decimals :func:`describe_interval` uses to keep a non-zero end from reading as zero.
MAX_INTERVAL_DIGITS = 6


def describe_interval(low: float, high: float, level: float = 0.95, digits: int = 3) -> str:
    """Whether an interval of a difference excludes zero, in words.

    Parameters
    ----------
    low, high : float
        The interval's ends (``low <= high``).
    level : float
        Its coverage, e.g. 0.95.
    digits : int
        Decimals shown.

    Returns
    -------
    str
        E.g. "its 95 % interval [-0.060, -0.020] excludes zero" or "... includes
        zero, so the data cannot tell the direction".

    Examples
    --------
    >>> describe_interval(-0.06, -0.02)
    'its 95 % interval [-0.060, -0.020] excludes zero'

    An end that would round to zero gets more decimals, so an interval that
    excludes zero never reads as touching it:

    >>> describe_interval(-0.013, -0.0004)
    'its 95 % interval [-0.0130, -0.0004] excludes zero'
    """
    lo, hi = _finite(low, "low"), _finite(high, "high")
    if lo > hi:
        raise ValueError(f"interval ends out of order: low {low!r} > high {high!r}")
    while digits < MAX_INTERVAL_DIGITS and any(v != 0 and float(_fmt(v, digits)) == 0 for v in (lo, hi)):
        digits += 1
    span = f"its {level * 100:.0f} % interval [{_fmt(lo, digits)}, {_fmt(hi, digits)}]"
    if lo > 0 or hi < 0:
        return f"{span} excludes zero"
    return f"{span} includes zero{_NO_DIRECTION}"


def interval_excludes_zero(low: float, high: float) -> bool:
    """True when the closed interval ``[low, high]`` does not contain 0."""
    return _finite(low, "low") > 0 or _finite(high, "high") < 0


def describe_change(
    before: float,
    after: float,
    quantity: str,
    better: Better = "lower",
    interval: tuple[float, float] | None = None,
    level: float = 0.95,
    digits: int = 3,
) -> str:
    """One sentence on how a quantity moved, and whether that is an improvement.

    Parameters
    ----------
    before, after : float
        The quantity's value before and after (e.g. mean ECE before and after
        calibration).
    quantity : str
        Its name in the sentence ("the mean ECE").
    better : {"lower", "higher"}
        Which direction is an improvement for this quantity.
    interval : (float, float), optional
        An interval of ``after - before``; the sentence then says whether it
        excludes zero.
    level : float
        The interval's coverage.
    digits : int
        Decimals of the values.

    Returns
    -------
    str
        E.g. "The mean ECE fell from 0.120 to 0.070 (42 %, a large
        improvement)." A rise of a lower-is-better quantity is a
        deterioration, whatever its size; a change below
        :data:`NEGLIGIBLE_RELATIVE` of ``before`` is "essentially unchanged".

    Examples
    --------
    >>> describe_change(0.12, 0.07, "the mean ECE", better="lower")
    'The mean ECE fell from 0.120 to 0.070 (by 42 %, a large improvement).'
    >>> describe_change(0.10, 0.108, "the mean ECE", better="lower")
    'The mean ECE rose from 0.100 to 0.108 (by 8 %, a small deterioration).'
    """
    _check_better(better)
    b, a = _finite(before, "before"), _finite(after, "after")
    subject = quantity[:1].upper() + quantity[1:]
    delta = a - b
    relative = delta / abs(b) if b != 0 else (math.inf if delta else 0.0)
    if abs(relative) < NEGLIGIBLE_RELATIVE or delta == 0:
        sentence = f"{subject} is essentially unchanged ({_fmt(b, digits)} before, {_fmt(a, digits)} after)"
    else:
        verb = "rose" if delta > 0 else "fell"
        improved = (delta < 0) == (better == "lower")
        verdict = "improvement" if improved else "deterioration"
        size = f"by {_percent(relative)}, a {size_word(relative)} {verdict}" if math.isfinite(relative) else f"{'an' if verdict[0] == 'i' else 'a'} {verdict}"
        sentence = f"{subject} {verb} from {_fmt(b, digits)} to {_fmt(a, digits)} ({size})"
    if interval is not None:
        sentence += "; " + describe_interval(interval[0], interval[1], level=level, digits=digits)
    return sentence + "."


def describe_relative_changes(
    changes: Sequence[float],
    quantity: str,
    better: Better = "lower",
    unit: str = "groups",
) -> str:
    """Many relative changes of one quantity (e.g. one per dataset and calibrator), honestly summarised.

    Improvements and deteriorations are counted and their ranges given
    separately, so a sentence never speaks of a "cut" of -8 %.

    Parameters
    ----------
    changes : sequence of float
        Relative changes ``(after - before) / before``, one per group.
    quantity : str
        Name of the quantity ("the mean ECE").
    better : {"lower", "higher"}
        Which direction is an improvement.
    unit : str
        What a group is, plural ("groups", "datasets").

    Examples
    --------
    >>> describe_relative_changes([-0.43, -0.2, 0.08], "the mean ECE")
    'The mean ECE improved in 2 of 3 groups (fell by 20 % to 43 %) and deteriorated in 1 (rose by 8 %).'
    """
    _check_better(better)
    values = [_finite(v, "change") for v in changes]
    if not values:
        raise ValueError("describe_relative_changes needs at least one change")
    subject = quantity[:1].upper() + quantity[1:]
    same = [v for v in values if abs(v) < NEGLIGIBLE_RELATIVE]
    moved = [v for v in values if abs(v) >= NEGLIGIBLE_RELATIVE]
    good = [v for v in moved if (v < 0) == (better == "lower")]
    bad = [v for v in moved if v not in good]

    def span(group: list[float]) -> str:
        verb = "rose" if group[0] > 0 else "fell"
        low, high = min(abs(v) for v in group), max(abs(v) for v in group)
        amount = _percent(low) if _percent(low) == _percent(high) else f"{_percent(low)} to {_percent(high)}"
        return f"{verb} by {amount}"

    parts: list[str] = []
    n = len(values)
    if good:
        parts.append(f"improved in {len(good)} of {n} {unit} ({span(good)})")
    if bad:
        parts.append(f"deteriorated in {len(bad)}" + (f" of {n} {unit}" if not good else "") + f" ({span(bad)})")
    if same:
        parts.append(f"was essentially unchanged in {len(same)}" + (f" of {n} {unit}" if not parts else ""))
    if len(parts) == 1:
        return f"{subject} {parts[0]}."
    return f"{subject} {', '.join(parts[:-1])} and {parts[-1]}."


def describe_correlation(
    value: float,
    name: str = "Kendall's τ_b",
    interval: tuple[float, float] | None = None,
    p: float | None = None,
    level: float = 0.95,
) -> str:
    """A correlation in words: strength, sign, interval, p-value.

    Examples
    --------
    >>> describe_correlation(0.62, p=0.0004)
    "Kendall's τ_b = 0.620: a strong positive association (p < 0.001)."
    >>> describe_correlation(-0.05)
    "Kendall's τ_b = -0.050: no association to speak of."
    """
    r = _finite(value, "correlation")
    word = correlation_word(r)
    if word == "no":
        text = f"{name} = {_fmt(r, 3)}: no association to speak of"
    else:
        text = f"{name} = {_fmt(r, 3)}: a {word} {'positive' if r > 0 else 'negative'} association"
    extra: list[str] = []
    if interval is not None:
        extra.append(describe_interval(interval[0], interval[1], level=level))
    if p is not None:
        extra.append(format_p(p))
    if extra:
        text += " (" + "; ".join(extra) + ")"
    return text + "."


def _number(value: float, digits: int) -> str:
    """Whole numbers (counts) without decimals, the rest with ``digits``."""
    return str(int(value)) if float(value).is_integer() else _fmt(value, digits)


def _inside(value: float, interval: tuple[float, float]) -> bool:
    """Whether ``value`` lies in the closed interval (its bounds checked finite)."""
    low, high = (_finite(v, "interval") for v in interval)
    return low <= value <= high


def compare_with_study(
    ours: float,
    study: float,
    name: str,
    close: float = CLOSE_CORRELATION,
    digits: int = 3,
    interval: tuple[float, float] | None = None,
    level: float = 0.95,
) -> str:
    """This build's value beside the study's, with the direction of the difference.

    Parameters
    ----------
    ours, study : float
        This build's value and the study's.
    name : str
        What both values are.
    close : float
        Values closer than this read "close to".
    digits : int
    interval : (float, float), optional
        An interval of this build's value. When given, the sentence says
        whether the study's value lies inside it: a point that is "higher"
        while the study's value lies inside the interval is a difference the
        data cannot confirm.
    level : float
        Coverage of ``interval``.

    Examples
    --------
    >>> compare_with_study(0.31, 0.5, "τ_b")
    "This build's τ_b (0.310) is lower than the study's (0.500)."
    >>> compare_with_study(0.867, 0.562, "τ_b", interval=(0.556, 0.911))
    "This build's τ_b (0.867) is higher than the study's (0.562), but the study's value lies inside this build's 95 % interval [0.556, 0.911]: the data cannot tell the two apart."
    """
    a, b = _finite(ours, "ours"), _finite(study, "study")
    if abs(a - b) < close:
        relation = "close to"
    else:
        relation = "higher than" if a > b else "lower than"
    text = f"This build's {name} ({_number(a, digits)}) is {relation} the study's ({_number(b, digits)})"
    if interval is None:
        return text + "."
    bounds = f"this build's {level * 100:g} % interval [{_number(interval[0], digits)}, {_number(interval[1], digits)}]"
    if _inside(b, interval):
        joint = ", and" if relation == "close to" else ", but"
        return f"{text}{joint} the study's value lies inside {bounds}: the data cannot tell the two apart."
    return f"{text}, and the study's value lies outside {bounds}."


def study_in_interval(study: float, interval: tuple[float, float], level: float = 0.95, digits: int = 3) -> str:
    """Whether the study's value lies inside an interval of this build's, as a sentence.

    For a statistic whose interval belongs to a variant of the study's (e.g.
    the leave-self-out scoring beside the study's full-panel one), where
    :func:`compare_with_study` would compare unlike points.

    Examples
    --------
    >>> study_in_interval(0.562, (0.556, 0.911))
    "The study's value (0.562) lies inside this 95 % interval: the data cannot tell the two apart."
    """
    b = _finite(study, "study")
    where = "inside" if _inside(b, interval) else "outside"
    tail = ": the data cannot tell the two apart." if where == "inside" else "."
    return f"The study's value ({_number(b, digits)}) lies {where} this {level * 100:g} % interval{tail}"


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
    r = _finite(r, "r")
    low, high = (_finite(v, "interval") for v in interval)
    explained = r * r
    bound = CORRELATION_SIZES[-1][0]  # where "strong" becomes "very strong"
    bounds = f"[{_fmt(low, digits)}, {_fmt(high, digits)}]"
    if low >= bound:
        verdict = f"the whole {level * 100:g} % interval of r {bounds} lies above {bound:g}, so on this cohort the two losses largely move together"
    elif high < bound:
        verdict = (f"the whole {level * 100:g} % interval of r {bounds} lies below {bound:g}, so on this cohort they are "
                   "at most partly aligned, and a calibration view adds what the AUROC loss does not show")
    else:
        verdict = (f"the {level * 100:g} % interval of r {bounds} straddles {bound:g}, so these cells do not pin down "
                   "how closely the two move together")
    return (f"r² = {_fmt(explained, digits)}: across cells, the AUROC loss accounts for {_percent(explained)} of the "
            f"variance of the ECE increase and leaves {_percent(1 - explained)} unexplained; {verdict}.")


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
    "Kendall's τ_b (full panel) = 0.500: a strong positive association. This build's τ_b (full panel) (0.500) is lower than the study's (0.600)."
    """
    t = _finite(tau, "tau")
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
        parts.append(f"{reversed_pairs} of {n_pairs} pairwise decisions ({_percent(share)}) reverse between the two "
                     f"rankings, so {consequence}.")
    if study_tau is not None:
        parts.append(compare_with_study(t, study_tau, f"τ_b{label}"))
    return " ".join(parts)


def _names(names: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    items = [str(n) for n in names]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def describe_leading_tier(
    members: Sequence[str],
    p_rank1: Mapping[str, float],
    intervals: Mapping[str, tuple[float, float]],
    level: float = 0.95,
    references: Sequence[str] = (),
    tied_references: Sequence[str] = (),
    point_outside: Mapping[str, tuple[float, float, float]] | None = None,
) -> str:
    """Who leads, naming every candidate the draws cannot separate from the leader.

    Parameters
    ----------
    members : sequence of str
        The leader (highest point CRS among the candidates) first, then every
        candidate whose paired CRS difference with it has an interval that
        includes zero (:func:`~crsbench_lib.scoring.bootstrap.tied_with_leader`).
    p_rank1 : mapping
        P(rank 1) among the candidates, per candidate (at least the members).
    intervals : mapping
        Candidate -> (low, high) interval of ``CRS_leader - CRS_candidate``,
        for the members after the first and, when the leader stands alone,
        for the runner-up.
    level : float
        Coverage of the intervals.
    references : sequence of str
        Encoders shown as references and not ranked; named so the reader knows
        why they are absent from the sentence.
    tied_references : sequence of str
        The references whose CRS difference with the leader also has an
        interval that includes zero.
    point_outside : mapping, optional
        Candidate -> (point difference, basic low, basic high) for each
        compared candidate whose point difference with the leader lies outside
        its own percentile interval (``diff_point_inside`` false): the two
        encoders' draws are biased by different amounts, so the tier decision
        is said with the basic interval beside it.

    Returns
    -------
    str

    Examples
    --------
    >>> describe_leading_tier(["a", "b", "c"], {"a": 0.5, "b": 0.3, "c": 0.2},
    ...                       {"b": (-0.06, 0.08), "c": (-0.05, 0.1)})
    'The draws cannot separate 3 candidates for the lead: a, b and c (the 95 % interval of the CRS difference with a includes zero for b and c); treat them as a tier, not a winner and runners-up. Each ranks first in 50 %, 30 % and 20 % of draws.'
    >>> describe_leading_tier(["a"], {"a": 0.97, "b": 0.03}, {"b": (0.01, 0.05)}, references=["r"])
    'a leads: its CRS difference with the runner-up b has a 95 % interval [0.010, 0.050] that excludes zero, and it ranks first in 97 % of draws. Not ranked: r, shown as a reference.'
    """
    names = [str(m) for m in members]
    if not names:
        raise ValueError("describe_leading_tier needs the leader")
    leader, others = names[0], names[1:]
    pct = f"{level * 100:.0f} %"
    if others:
        text = (f"The draws cannot separate {len(names)} candidates for the lead: {_names(names)} (the {pct} "
                f"interval of the CRS difference with {leader} includes zero for {_names(others)}); treat them as a "
                f"tier, not a winner and runners-up. Each ranks first in "
                f"{_names([_percent(_finite(p_rank1[n], 'p_rank1')) for n in names])} of draws.")
    else:
        runner = [n for n in intervals if n != leader]
        if not runner:
            text = f"{leader} is the only candidate."
        else:
            low, high = intervals[runner[0]]
            if not interval_excludes_zero(low, high):
                raise ValueError(f"{runner[0]}'s interval [{low}, {high}] includes zero: it belongs in the tier")
            text = (f"{leader} leads: its CRS difference with the runner-up {runner[0]} has a "
                    + describe_interval(low, high, level=level).replace("its ", "", 1).replace(" excludes", " that excludes")
                    + f", and it ranks first in {_percent(_finite(p_rank1[leader], 'p_rank1'))} of draws.")
    for name, (diff, basic_low, basic_high) in (point_outside or {}).items():
        percentile_says = "inside" if name in others else "outside"
        basic_says = "outside" if interval_excludes_zero(basic_low, basic_high) else "inside"
        text += (f" For {name}, the point CRS difference with {leader} ({_finite(diff, 'diff'):.3f}) lies outside its "
                 f"own percentile interval: the two encoders' draws are biased by different amounts. Its basic "
                 f"interval [{basic_low:.3f}, {basic_high:.3f}] puts {name} {basic_says} the tier, "
                 + ("so both intervals agree." if basic_says == percentile_says else
                    "so its place in the tier depends on which interval one trusts."))
    if references:
        refs = list(references)
        text += f" Not ranked: {_names(refs)}, shown as {'a reference' if len(refs) == 1 else 'references'}"
        tied_refs = [r for r in refs if r in set(tied_references)]
        if tied_refs:
            text += (f"; the draws cannot separate {_names(tied_refs)} from {leader} either")
        text += "."
    return text


#: Efron & Tibshirani (1993, section 10.6): a bootstrap bias below this many standard errors is negligible.
NEGLIGIBLE_BIAS_SE = 0.25

_BIAS_COLUMNS = ("encoder", "crs", "crs_median", "bias", "bias_se", "crs_low", "crs_high", "crs_basic_low",
                 "crs_basic_high", "point_inside")


def _standard_errors(ratio: float) -> str:
    """A bias in standard errors of its draws; draws that do not vary have none to count in."""
    if math.isinf(ratio):
        return "with every draw equal (no spread to measure it against)"
    return f"{abs(ratio):.1f} standard errors"


def describe_bootstrap_bias(summary: "pd.DataFrame", level: float = 0.95, digits: int = 3) -> str:
    """What the bootstrap intervals of the CRS mean, and every point that falls outside its own.

    Parameters
    ----------
    summary : pandas.DataFrame
        A bootstrap summary (:func:`~crsbench_lib.scoring.bootstrap.interval_summary`
        columns under the names of the bootstrap's ``summary``): encoder, crs,
        crs_median, bias, bias_se, crs_low, crs_high, crs_basic_low,
        crs_basic_high, point_inside.
    level : float
        Coverage of the intervals.
    digits : int
        Decimals shown.

    Returns
    -------
    str
        Names every encoder whose point lies outside its percentile interval,
        with the draws' median, the bias in standard errors and the basic
        interval, and says what the intervals then mean; otherwise the bias
        largest against its standard error.

    Examples
    --------
    >>> import pandas as pd
    >>> row = dict(encoder="a", crs=0.65, crs_median=0.564, bias=-0.085, bias_se=-2.5, crs_low=0.506,
    ...            crs_high=0.639, crs_basic_low=0.661, crs_basic_high=0.794, point_inside=False)
    >>> text = describe_bootstrap_bias(pd.DataFrame([row]))
    >>> text[: text.index(", draws")]
    'For 1 of 1 encoders the point CRS lies outside its own 95 % percentile interval: a (0.650 against [0.506, 0.639]'
    >>> text[text.index("draws centred") : text.index("; basic")]
    'draws centred below the point with median 0.564 and bias -0.085, 2.5 standard errors'
    """
    missing = [c for c in _BIAS_COLUMNS if c not in summary.columns]
    if missing:
        raise ValueError(f"describe_bootstrap_bias: the summary lacks column {missing[0]!r}")
    if summary.empty:
        raise ValueError("describe_bootstrap_bias: the summary is empty")
    pct = f"{level * 100:.0f} %"
    outside = summary[~summary["point_inside"].astype(bool)]
    if outside.empty:
        worst = summary.loc[summary["bias_se"].abs().astype(float).idxmax()]
        size = "negligible" if abs(float(worst["bias_se"])) < NEGLIGIBLE_BIAS_SE else "not negligible"
        return (f"Every point CRS lies inside its own {pct} percentile interval. The bootstrap bias (mean of the "
                f"draws less the point) largest against its standard error is {_fmt(float(worst['bias']), digits)} "
                f"for {worst['encoder']}, {_standard_errors(float(worst['bias_se']))} ({size} by the "
                "quarter-standard-error rule of Efron & Tibshirani 1993, section 10.6).")
    parts = []
    for _, row in outside.iterrows():
        side = "below" if float(row["bias"]) < 0 else "above"
        parts.append(
            f"{row['encoder']} ({_fmt(float(row['crs']), digits)} against [{_fmt(float(row['crs_low']), digits)}, "
            f"{_fmt(float(row['crs_high']), digits)}], draws centred {side} the point with median "
            f"{_fmt(float(row['crs_median']), digits)} and bias {_fmt(float(row['bias']), digits)}, "
            f"{_standard_errors(float(row['bias_se']))}; basic interval [{_fmt(float(row['crs_basic_low']), digits)}, "
            f"{_fmt(float(row['crs_basic_high']), digits)}])"
        )
    n = len(outside)
    return (
        f"For {n} of {len(summary)} encoders the point CRS lies outside its own {pct} percentile interval: "
        + "; ".join(parts) + ". "
        "Two things shift the draws away from the point instead of spreading them around it: an axis whose own "
        "draws are biased moves every resampled profile against panel entries measured once, and the CRS is a "
        "non-smooth function of the profile (dominance counts panel members beaten on every axis, the floor takes "
        "a minimum). For these encoders the percentile interval describes the CRS a resample of the data gets, "
        "not a confidence interval around the point; the basic interval reflects it about the point and so corrects "
        "for the bias, but a bias of more than a quarter of a standard error warns that neither interval has its "
        f"nominal {pct} coverage (Efron & Tibshirani 1993, section 10.6). Read the point with its bias beside it; "
        "the paired differences and rank probabilities cancel the part of the bias two encoders share, not the "
        "difference between their biases."
    )


#: What each axis measures, for the bias sentence.
_AXIS_WORDS = {"D": "AUROC", "C": "ECE", "L": "retention", "R": "AUROC loss"}


def describe_bias_sources(decomposition: "pd.DataFrame", encoder: str, digits: int = 3) -> str:
    """Where one encoder's bootstrap bias of the CRS comes from, in words.

    Parameters
    ----------
    decomposition : pandas.DataFrame
        :func:`~crsbench_lib.scoring.bootstrap.bias_decomposition` (index
        encoder; bias, from_axes, from_nonsmooth, dominance, balance, floor,
        D ... R and D_se ... R_se).
    encoder : str
        The encoder to describe (e.g. the one with the largest bias).
    digits : int
        Decimals shown.

    Examples
    --------
    >>> import pandas as pd
    >>> row = dict(bias=-0.085, from_axes=-0.071, from_nonsmooth=-0.014, dominance=-0.082, balance=-0.003,
    ...            floor=0.0, D=0.0, C=0.009, L=0.0, R=0.0, D_se=-0.03, C_se=-2.1, L_se=-0.05, R_se=-0.05)
    >>> text = describe_bias_sources(pd.DataFrame([row], index=["a"]), "a")
    >>> text[: text.index(" (dominance")]
    "Of the bias of -0.085 for a, -0.071 comes from the axes' own resampling bias and -0.014 from the nonlinearity of the CRS"
    >>> text[text.index("The axis") : text.index(" (binned")]
    'The axis whose draws fall furthest behind the point is C: ECE rises by 0.009 on average, 2.1 standard deviations of its draws'
    """
    needed = ("bias", "from_axes", "from_nonsmooth", "dominance", "balance", "floor",
              *_AXIS_WORDS, *(f"{a}_se" for a in _AXIS_WORDS))
    missing = [c for c in needed if c not in decomposition.columns]
    if missing:
        raise ValueError(f"describe_bias_sources: the decomposition lacks column {missing[0]!r}")
    if encoder not in decomposition.index:
        raise ValueError(f"describe_bias_sources: no row for encoder {encoder!r}")
    row = decomposition.loc[encoder]
    text = (f"Of the bias of {_fmt(float(row['bias']), digits)} for {encoder}, "
            f"{_fmt(float(row['from_axes']), digits)} comes from the axes' own resampling bias and "
            f"{_fmt(float(row['from_nonsmooth']), digits)} from the nonlinearity of the CRS (dominance, floor, "
            "balance and clipping at the anchors; its draws rescored with every axis recentred on the point)")
    parts = {name: float(row[name]) for name in ("dominance", "balance", "floor")}
    largest = max(parts, key=lambda name: abs(parts[name]))
    text += f"; by component, {largest} carries {_fmt(parts[largest], digits)}."
    worst = min(_AXIS_WORDS, key=lambda axis: float(row[f"{axis}_se"]))
    moved = float(row[f"{worst}_se"])
    if moved >= -NEGLIGIBLE_BIAS_SE:
        return text + " No axis's draws are worse than its point by a quarter of a standard deviation or more."
    change = float(row[worst])
    text += (f" The axis whose draws fall furthest behind the point is {worst}: {_AXIS_WORDS[worst]} "
             f"{'rises' if change > 0 else 'falls'} by {_fmt(abs(change), digits)} on average, {abs(moved):.1f} "
             "standard deviations of its draws")
    if worst == "C":
        text += (" (binned ECE sums absolute gaps, and resampling the images with replacement adds noise to "
                 "every gap)")
    return text + ", while the panel entries stay as measured once."


def describe_score_orders(summary: "pd.DataFrame", rows: int | None = None, digits: int = 3) -> str:
    """The ordering rule of a bootstrap table, and where the score table's CRS orders differently.

    The bootstrap scores each encoder against the panel without its own entry
    (``crs``); the score table scores a panel member against the whole panel
    (``crs_full_panel``), its own stored entry included.

    Parameters
    ----------
    summary : pandas.DataFrame
        Columns encoder, crs, crs_full_panel, in the table's row order.
    rows : int, optional
        Compare only the first ``rows`` rows (default all).
    digits : int
        Decimals shown.

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({"encoder": ["a", "b", "c"], "crs": [0.65, 0.64, 0.63],
    ...                       "crs_full_panel": [0.64, 0.63, 0.638]})
    >>> describe_score_orders(table).split(": ")[-1]
    'there c ranks above b.'
    """
    for column in ("encoder", "crs", "crs_full_panel"):
        if column not in summary.columns:
            raise ValueError(f"describe_score_orders: the summary lacks column {column!r}")
    head = summary if rows is None else summary.head(rows)
    rule = ("Rows are in order of the point CRS the draws use: each encoder against the panel without its own "
            "entry (leave-self-out), and the leader, ties and rank probabilities follow that score.")
    full = head["crs_full_panel"].to_numpy(dtype=float)
    if not np.isfinite(full).all():
        return rule
    names = head["encoder"].astype(str).tolist()
    swaps = [(names[j], names[i]) for i in range(len(names)) for j in range(i + 1, len(names)) if full[j] > full[i]]
    if not swaps:
        return rule + " The score table's CRS (whole panel) orders these rows the same way."
    described = "; ".join(f"{hi} ranks above {lo}" for hi, lo in swaps)
    return (rule + " The score table orders some of them differently (it scores a panel member against the whole "
            f"panel, its own stored entry included): there {described}.")


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
                f"{_names(undefined)} is undefined (the predictor or the target is constant on every block).")
    elif interval is not None and not all(math.isfinite(float(end)) for end in interval):
        text = (f"the data cannot tell whether the CRS or AUROC predicts {target} better ({statistic} {_fmt(c, 3)} "
                f"for the CRS and {_fmt(a, 3)} for AUROC; no resample defines both taus, so there is no interval).")
    elif interval is not None:
        low, high = interval
        # The sentence itself says when the data cannot tell; the interval need not repeat it.
        span = describe_interval(low, high, level=level).removesuffix(_NO_DIRECTION)
        difference = f"the difference (CRS minus AUROC) is {_fmt(c - a, 3)}, {span}"
        against_point = (low > 0 and c - a <= 0) or (high < 0 and c - a >= 0)
        if interval_excludes_zero(low, high) and against_point:
            # A biased resampling can put the interval on the other side of the point: claim nothing.
            text = (f"the data cannot tell whether the CRS or AUROC predicts {target} better ({statistic} "
                    f"{_fmt(c, 3)} for the CRS and {_fmt(a, 3)} for AUROC; {difference}, on the other side of "
                    f"zero from the point, so the resampling is biased here).")
        elif interval_excludes_zero(low, high):
            winner, loser = ("the CRS", "AUROC") if low > 0 else ("AUROC", "the CRS")
            text = (f"{winner} predicts {target} better than {loser} ({statistic} {_fmt(c, 3)} for the CRS and "
                    f"{_fmt(a, 3)} for AUROC; {difference}).")
        else:
            text = (f"the data cannot tell whether the CRS or AUROC predicts {target} better ({statistic} "
                    f"{_fmt(c, 3)} for the CRS and {_fmt(a, 3)} for AUROC; {difference}).")
    elif abs(c - a) < tolerance:
        text = f"the CRS and AUROC predict {target} about equally well ({statistic} {_fmt(c, 3)} and {_fmt(a, 3)})."
    else:
        winner, loser = ("the CRS", "AUROC") if c > a else ("AUROC", "the CRS")
        hi, lo = max(c, a), min(c, a)
        text = f"{winner} predicts {target} better than {loser} ({statistic} {_fmt(hi, 3)} against {_fmt(lo, 3)})."
    if where:
        return f"{where}, {text}"
    return text[:1].upper() + text[1:]


def describe_overlap(frozen: Sequence[str], adapted: Sequence[str]) -> str:
    """How far two leading sets (e.g. frozen and adapted top *k*) agree.

    Examples
    --------
    >>> describe_overlap(["a", "b", "c"], ["a", "c", "d"])
    'The leading sets share 2 of 3 members (a, c); b leaves and d enters.'
    """
    first, second = list(frozen), list(adapted)
    shared = [x for x in first if x in second]
    left = [x for x in first if x not in second]
    entered = [x for x in second if x not in first]
    k = max(len(first), len(second))
    if not left and not entered:
        return f"The leading sets are the same {k} encoders ({', '.join(first)})."
    text = f"The leading sets share {len(shared)} of {k} members" + (f" ({', '.join(shared)})" if shared else "")
    moves = []
    if left:
        moves.append(f"{', '.join(left)} {'leaves' if len(left) == 1 else 'leave'}")
    if entered:
        moves.append(f"{', '.join(entered)} {'enters' if len(entered) == 1 else 'enter'}")
    return text + "; " + " and ".join(moves) + "."


def describe_selection(
    advance: Sequence[str],
    tier: Sequence[str],
    clears: Sequence[str],
    n_encoders: int,
    untrained: Sequence[str] = (),
    references: Sequence[str] = (),
) -> str:
    """The selection gate's outcome, with the caution its outcome calls for.

    Parameters
    ----------
    advance : sequence of str
        Candidates both in the leading tier and clearing every threshold.
    tier : sequence of str
        The leading tier.
    clears : sequence of str
        Candidates clearing every threshold.
    n_encoders : int
        Candidates screened (references not counted).
    untrained : sequence of str
        Encoders with no pretraining (random initialisation or no learning); one
        of them advancing says the thresholds are too lax for this cohort.
    references : sequence of str
        Encoders shown as references, not candidates: named, never advanced.

    Examples
    --------
    >>> describe_selection(["cnn_random"], ["cnn_random", "mae"], ["cnn_random"], 15, untrained=["cnn_random"])
    '1 of 15 candidates clears every threshold; the leading tier is cnn_random, mae. cnn_random advances for deployment evaluation. Caution: cnn_random has no pretraining, so a gate it passes does not separate learned representations from an untrained baseline on this cohort; raise the thresholds or question the cohort before acting on it.'
    >>> describe_selection(["a"], ["a"], ["a", "b"], 2, references=["r"]).split(". ", 1)[1]
    'a advances for deployment evaluation. r is a reference, not a candidate: shown, never advanced.'
    """
    if n_encoders < 0:
        raise ValueError(f"n_encoders must be non-negative, got {n_encoders}")
    leaked = [name for name in (*advance, *tier) if name in set(references)]
    if leaked:
        raise ValueError(f"reference {leaked[0]!r} cannot be in the leading tier or advance")
    text = (f"{len(clears)} of {n_encoders} candidates {'clears' if len(clears) == 1 else 'clear'} every threshold; "
            f"the leading tier is {', '.join(tier) if tier else 'empty'}. ")
    if references:
        refs = list(references)
        note = (f" {_names(refs)} {'is a reference' if len(refs) == 1 else 'are references'}, not "
                f"{'a candidate' if len(refs) == 1 else 'candidates'}: shown, never advanced.")
    else:
        note = ""
    if not advance:
        if not clears:
            return text + "No encoder clears the gate: the thresholds ask more than any candidate offers; revisit the candidates or the clinical requirements." + note
        if not tier:
            return text + "No encoder is stably ahead, so none advances: the seeds cannot separate the candidates." + note
        return text + "No encoder is both in the leading tier and clears the gate: revisit the candidates or the thresholds." + note
    verb = "advances" if len(advance) == 1 else "advance"
    text += f"{', '.join(advance)} {verb} for deployment evaluation."
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
        rules = _names(idle["rule"].astype(str).tolist())
        one = len(idle) == 1
        if binding.empty:
            parts.append(f"No threshold binds: every candidate meets {rules}, so on this build the gate filters "
                         "nothing and only the leading tier decides.")
        else:
            parts.append(f"{rules} {'binds' if one else 'bind'} no candidate: every candidate meets "
                         f"{'it' if one else 'them'}, so on this build {'it filters' if one else 'they filter'} nothing.")
    return " ".join(parts)


def describe_displacement(largest_fixed: float, largest_cohort: float, digits: int = 3) -> str:
    """What an insertion did to published scores, fixed reference against cohort renormalisation.

    Examples
    --------
    >>> describe_displacement(0.0, 0.12)
    'No published score moved under the fixed reference (largest change 0); under cohort renormalisation the largest change would have been 0.120.'
    """
    fixed, cohort = abs(_finite(largest_fixed, "largest_fixed")), abs(_finite(largest_cohort, "largest_cohort"))
    head = ("No published score moved under the fixed reference (largest change 0)" if fixed == 0 else
            f"Published scores moved under the fixed reference (largest change {fixed:.3g}): the standard is not being held fixed")
    tail = ("cohort renormalisation would not have moved them either" if cohort == 0 else
            f"under cohort renormalisation the largest change would have been {_fmt(cohort, digits)}")
    return f"{head}; {tail}."


def describe_rank_changes(scheme: str, order_changes: int, n_pairs: int, positions_shifted: int, n_existing: int,
                          noun: str = "existing encoders") -> str:
    """What an insertion did to the ranks of the existing entries: pairwise order apart from position.

    An existing entry's position in the list can change for two reasons: an
    entry placed above it (a newcomer), or a reordering of the existing entries
    among themselves. Only the second rewrites history; the sentence keeps the
    two apart (:func:`crsbench_lib.scoring.insertion.order_changes`).

    Parameters
    ----------
    scheme : str
        The scoring scheme, e.g. "the fixed reference", "cohort renormalisation".
    order_changes : int
        Pairs of existing entries ordered differently after the insertion.
    n_pairs : int
        Pairs of existing entries.
    positions_shifted : int
        Existing entries whose position in the whole list changed.
    n_existing : int
        Existing entries.
    noun : str
        What the entries are called.

    Returns
    -------
    str
        One sentence.

    Examples
    --------
    >>> describe_rank_changes("the fixed reference", 0, 136, 14, 17)
    'Under the fixed reference, no pair of the 17 existing encoders changed order (0 of 136 pairs), so their relative order is as before; 14 of them changed position only because newcomers were placed above them.'
    >>> describe_rank_changes("cohort renormalisation", 5, 136, 16, 17)
    'Under cohort renormalisation, 5 of 136 pairs of the 17 existing encoders changed order, and 16 of the 17 changed position.'
    """
    counts = {"order_changes": order_changes, "n_pairs": n_pairs, "positions_shifted": positions_shifted,
              "n_existing": n_existing}
    for name, value in counts.items():
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
            raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    if order_changes > n_pairs or positions_shifted > n_existing:
        raise ValueError(f"counts exceed their totals: {order_changes} of {n_pairs} pairs, "
                         f"{positions_shifted} of {n_existing} entries")
    if order_changes == 0:
        head = (f"Under {scheme}, no pair of the {n_existing} {noun} changed order (0 of {n_pairs} pairs), "
                "so their relative order is as before")
        if positions_shifted == 0:
            return f"{head}; none changed position either."
        return f"{head}; {positions_shifted} of them changed position only because newcomers were placed above them."
    return (f"Under {scheme}, {order_changes} of {n_pairs} pairs of the {n_existing} {noun} changed order, "
            f"and {positions_shifted} of the {n_existing} changed position.")


def describe_share(share: float, event: str) -> str:
    """How often something happened, in words ("never", "in 3 % of draws", "always").

    Examples
    --------
    >>> describe_share(0.0, "the top 3 changes")
    'the top 3 changes in none of the draws'
    """
    s = _finite(share, "share")
    if not 0.0 <= s <= 1.0:
        raise ValueError(f"share must lie in [0, 1], got {share!r}")
    if s == 0:
        return f"{event} in none of the draws"
    if s == 1:
        return f"{event} in every draw"
    shown = "< 1 %" if s < 0.01 else "> 99 %" if s > 0.99 else _percent(s)
    return f"{event} in {shown} of draws"


def describe_counts(counts: dict[str, int], noun: str) -> str:
    """Counts per category in one clause.

    Examples
    --------
    >>> describe_counts({"handcrafted": 8, "neural": 7}, "encoders")
    '8 handcrafted and 7 neural encoders.'
    """
    parts = [f"{n} {name}" for name, n in counts.items()]
    if not parts:
        return f"No {noun}."
    joined = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    return f"{joined} {noun}."


def describe_leaders(leaders: dict[str, str], what: str = "axis") -> str:
    """Who leads each ranking (or axis), and whether one encoder leads them all.

    Examples
    --------
    >>> describe_leaders({"AUROC": "a", "CRS": "b"}, what="ranking")
    'AUROC puts a first and CRS puts b first: the two rankings disagree on the leader.'
    >>> describe_leaders({"D": "a", "C": "a"})
    'a leads every axis (D, C).'
    """
    if not leaders:
        raise ValueError("describe_leaders needs at least one leader")
    names = set(leaders.values())
    if len(names) == 1:
        (name,) = names
        return f"{name} leads every {what} ({', '.join(leaders)})."
    if what == "ranking":
        firsts = " and ".join(f"{key} puts {name} first" for key, name in leaders.items())
        return f"{firsts}: the {len(leaders)} rankings disagree on the leader." if len(leaders) > 2 else \
            f"{firsts}: the two rankings disagree on the leader."
    listing = "; ".join(f"{key}: {name}" for key, name in leaders.items())
    plural = "axes" if what == "axis" else f"{what}s"
    return f"Leaders per {what}: {listing}. {len(names)} different encoders lead the {len(leaders)} {plural}."


def describe_saturation(saturation: "object") -> str:
    """Which axes have normalised values on an anchor.

    Parameters
    ----------
    saturation : pandas.DataFrame
        Index axis, columns ``at_worst, at_best, n``
        (:func:`crsbench_lib.scoring.crs.saturation_counts`).

    Examples
    --------
    >>> import pandas as pd
    >>> describe_saturation(pd.DataFrame({"at_worst": [0, 2], "at_best": [0, 1], "n": [6, 6]}, index=["D", "C"]))
    'Saturated: C (2 of 6 encoders at the worst anchor, 1 at the best).'
    """
    lines = []
    for axis, row in saturation.iterrows():
        if row["at_worst"] or row["at_best"]:
            lines.append(f"{axis} ({int(row['at_worst'])} of {int(row['n'])} encoders at the worst anchor, "
                         f"{int(row['at_best'])} at the best)")
    if not lines:
        return "No normalised value sits on an anchor: every axis still separates the encoders."
    return "Saturated: " + "; ".join(lines) + "."


def describe_difference(
    delta: float,
    subject: str,
    quantity: str,
    better: Better = "higher",
    digits: int = 3,
    interval: tuple[float, float] | None = None,
    level: float = 0.95,
) -> str:
    """A signed difference (already a change, e.g. a mean gain) in words.

    Without ``interval`` the sign of the point decides the verdict; with one,
    only an interval that excludes zero earns "an improvement" or "a
    deterioration", and one that includes zero says no change is detectable.

    Examples
    --------
    >>> describe_difference(-0.02, "Adaptation", "the mean clean AUROC")
    'Adaptation lowers the mean clean AUROC by 0.020 on average, a deterioration.'
    >>> describe_difference(0.003, "Adaptation", "the mean clean AUROC", interval=(-0.001, 0.007))
    'Adaptation raises the mean clean AUROC by 0.003 on average (95 % interval [-0.001, 0.007]): the interval includes zero, so no change is detectable.'
    """
    _check_better(better)
    d = _finite(delta, "delta")
    bounds = ""
    if interval is not None:
        low, high = (_finite(v, "interval") for v in interval)
        bounds = f" ({level * 100:g} % interval [{_fmt(low, digits)}, {_fmt(high, digits)}])"
    if round(d, digits) == 0 and interval is None:
        return f"{subject} leaves {quantity} essentially unchanged ({_fmt(d, digits)})."
    verb = "raises" if d > 0 else "lowers"
    head = f"{subject} {verb} {quantity} by {_fmt(abs(d), digits)} on average{bounds}"
    if interval is not None and low <= 0 <= high:
        return f"{head}: the interval includes zero, so no change is detectable."
    verdict = "an improvement" if (d > 0) == (better == "higher") else "a deterioration"
    return f"{head}, {verdict}."


def describe_excess_verdict(
    calibrator: str,
    before: float,
    after: float,
    interval: tuple[float, float],
    level: float = 0.95,
    digits: int = 3,
) -> str:
    """Whether a post-hoc calibrator helps, read from the change of the ECE excess over its floor.

    The ECE of a finite test set is positive even for perfectly calibrated
    probabilities; only the excess over that floor is miscalibration a
    calibrator can remove (method section 9, amendment 5). The verdict reads the
    interval of ``after - before`` alone: below zero "helps", above zero "makes
    it worse", spanning zero "does not help measurably", so it can never call a
    rise a cut.

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

    Examples
    --------
    >>> describe_excess_verdict("temperature", 0.05, 0.02, (-0.04, -0.02))
    'temperature helps: the mean ECE excess over its floor fell from 0.050 to 0.020 (by 60 %, a large improvement); its 95 % interval [-0.040, -0.020] excludes zero.'
    >>> describe_excess_verdict("isotonic", 0.01, 0.012, (-0.001, 0.005))
    'isotonic does not help measurably: the mean ECE excess over its floor rose from 0.010 to 0.012 (by 20 %, a moderate deterioration); its 95 % interval [-0.001, 0.005] includes zero, so the data cannot tell the direction.'
    """
    low, high = _finite(interval[0], "low"), _finite(interval[1], "high")
    if high < 0:
        verdict = "helps"
    elif low > 0:
        verdict = "does not help, it makes calibration worse"
    else:
        verdict = "does not help measurably"
    change = describe_change(before, after, "the mean ECE excess over its floor", better="lower",
                             interval=(low, high), level=level, digits=digits)
    return f"{calibrator} {verdict}: {change[:1].lower()}{change[1:]}"


def _change_clause(
    delta: float, quantity: str, better: Better, digits: int, agreeing: int | None = None, n: int | None = None
) -> str:
    """``"raises the clean AUROC by 0.012, an improvement"`` (or "leaves ... unchanged").

    With ``agreeing`` of ``n`` datasets showing the same direction as the mean,
    the verdict is given only when all of them do; otherwise the clause says
    the direction is not consistent.
    """
    if round(delta, digits) == 0:
        return f"leaves {quantity} essentially unchanged ({_fmt(delta, digits)})"
    verb = "raises" if delta > 0 else "lowers"
    verdict = "an improvement" if (delta > 0) == (better == "higher") else "a deterioration"
    head = f"{verb} {quantity} by {_fmt(abs(delta), digits)}"
    if agreeing is None or not n:
        return f"{head}, {verdict}"
    if agreeing == n:
        return f"{head} (on all {n} datasets), {verdict}"
    return f"{head} on average but in this direction on only {agreeing} of {n} datasets, not consistently"


def describe_augmentation(effect: "object", digits: int = 3) -> str:
    """What acquisition augmentation buys, one sentence per aug/noaug pair.

    Parameters
    ----------
    effect : pandas.DataFrame
        Rows of :func:`crsbench_lib.report.summaries.augmentation_effect`
        (``augmented, plain, in_results, clean_gain, loss_change``).
    digits : int
        Decimals of the differences.

    Returns
    -------
    str
        For a pair in the table, the sign, size and verdict of the clean-AUROC
        gain (higher is better) and of the change of the mean corruption AUROC
        loss (lower is better); for a pair missing from the table, that it is
        absent; for no pair at all, that the zoo has none.

    Examples
    --------
    >>> import pandas as pd
    >>> row = {"augmented": "a_aug", "plain": "a_noaug", "in_results": True, "clean_gain": 0.01, "loss_change": -0.02}
    >>> describe_augmentation(pd.DataFrame([row]))
    'Acquisition augmentation (a_aug against a_noaug) raises the clean AUROC by 0.010, an improvement, and lowers the mean corruption AUROC loss by 0.020, an improvement.'
    """
    sentences = []
    for row in effect.itertuples(index=False):
        pair = f"{row.augmented} against {row.plain}"
        if not bool(row.in_results):
            sentences.append(f"The pair {pair} is absent from this results table, so this run cannot say what "
                             "acquisition augmentation buys there.")
            continue
        n = int(getattr(row, "n_datasets", 0) or 0) or None
        gain = _finite(row.clean_gain, "clean_gain")
        higher = getattr(row, "clean_higher_in", None)
        clean = _change_clause(gain, "the clean AUROC", "higher", digits,
                               None if n is None else (int(higher) if gain > 0 else n - int(higher)), n)
        if math.isnan(float(row.loss_change)):
            loss = "the table has no corruption rows to measure its robustness"
        else:
            lower = getattr(row, "loss_lower_in", None)
            change = float(row.loss_change)
            loss = _change_clause(change, "the mean corruption AUROC loss", "lower", digits,
                                  None if n is None else (int(lower) if change < 0 else n - int(lower)), n)
        sentences.append(f"Acquisition augmentation ({pair}) {clean}, and {loss}.")
    if not sentences:
        return "The zoo has no pair of encoders that differ only by acquisition augmentation."
    return " ".join(sentences)


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
        worst = _and_list([f"{w:g}" for w in rows["worst"]])
        taus = _and_list([_fmt(float(t), digits) for t in rows["tau_auroc_crs"]])
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


def _is_missing(value: object) -> bool:
    """True for None and float NaN (a check with no value)."""
    return value is None or (isinstance(value, numbers.Real) and math.isnan(float(value)))


def describe_world_checks(checks: "object", digits: int = 3) -> str:
    """The world's must-show checks in sentences: what holds, what does not, by how much.

    Parameters
    ----------
    checks : pandas.DataFrame
        :func:`crsbench_lib.report.world.world_checks` output (columns check,
        dataset, value, rule, holds).
    digits : int

    Returns
    -------
    str
        One sentence for the margins of the best broad encoder over each
        baseline (per dataset), then one per other check that fails, then how
        many checks hold.

    Examples
    --------
    >>> import pandas as pd
    >>> rows = [("margin over pixels", "derm", 0.12, "best broad encoder - pixels >= 0.10", True),
    ...         ("margin over pixels", "cxr", 0.04, "best broad encoder - pixels >= 0.10", False)]
    >>> describe_world_checks(pd.DataFrame(rows, columns=["check", "dataset", "value", "rule", "holds"]))
    'The best broad encoder beats pixels by 0.120 clean AUROC on derm and 0.040 on cxr (rule: best broad encoder - pixels >= 0.10; not met on cxr). 1 of 2 checks hold.'
    """
    sentences = []
    margins = checks[checks["check"].str.startswith("margin over ")]
    for check, rows in margins.groupby("check", sort=False):
        baseline = check.removeprefix("margin over ")
        if rows["value"].isna().any():
            sentences.append(f"The margin over {baseline} cannot be measured: {baseline} or every broad encoder "
                             "is absent from this run.")
            continue
        values = [f"{_fmt(v, digits)} clean AUROC on {d}" if k == 0 else f"{_fmt(v, digits)} on {d}"
                  for k, (v, d) in enumerate(zip(rows["value"], rows["dataset"]))]
        joined = values[0] if len(values) == 1 else ", ".join(values[:-1]) + " and " + values[-1]
        failed = [str(d) for d, ok in zip(rows["dataset"], rows["holds"]) if not ok]
        verdict = "met on every dataset" if not failed else "not met on " + ", ".join(failed)
        sentences.append(f"The best broad encoder beats {baseline} by {joined} (rule: {rows['rule'].iloc[0]}; {verdict}).")
    not_margin = ~checks["check"].str.startswith("margin over ")
    holds = checks["holds"].astype(bool)
    # A rule that applies to no encoder (e.g. no clean AUROC above the site-B
    # threshold) holds with a NaN value: it was not tested, and must not read as passed.
    vacuous = not_margin & holds & checks["value"].map(_is_missing).astype(bool)
    for row in checks[not_margin & ~holds].itertuples(index=False):
        where = "" if row.dataset == "all" else f" on {row.dataset}"
        value = str(row.value) if isinstance(row.value, numbers.Integral) else _fmt(row.value, digits)
        sentences.append(f"The check '{row.check}'{where} fails: {value} against the rule {row.rule}.")
    for row in checks[vacuous].itertuples(index=False):
        where = "" if row.dataset == "all" else f" on {row.dataset}"
        sentences.append(f"The check '{row.check}'{where} had nothing to test: no encoder falls under its rule "
                         f"({row.rule}).")
    n_hold, n_vacuous = int(holds.sum()), int(vacuous.sum())
    untested = f", {n_vacuous} of them untested" if n_vacuous else ""
    sentences.append(f"{n_hold} of {len(checks)} checks hold{untested}.")
    return " ".join(sentences)


def _signed(value: float, digits: int) -> str:
    text = _fmt(value, digits)
    return text if text.startswith("-") or float(text) == 0 else "+" + text


def _and_list(items: Sequence[str], conjunction: str = "and") -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + f" {conjunction} " + items[-1]


def describe_class_margins(margins: "pd.DataFrame", min_margin: float, digits: int = 3) -> str:
    """Which classes carry the best broad encoder's margin over the baselines, and which hold it back.

    Parameters
    ----------
    margins : pandas.DataFrame
        :func:`crsbench_lib.report.world.class_margins` output.
    min_margin : float
        The world's rule (:data:`crsbench_lib.report.world.MIN_MARGIN`).
    digits : int

    Returns
    -------
    str
        Per dataset, one sentence on the classes where the margin over the
        better baseline reaches ``min_margin`` and those where it does not;
        where the dataset's rule fails (the mean over classes of the margin
        over either baseline is under ``min_margin``, as in
        :func:`~crsbench_lib.report.world.world_checks`) and an in-task
        reference is present, one sentence on whether the reference, taught
        the labels, clears the rule on the classes that fall short. Empty for
        an empty table.

    Examples
    --------
    >>> import pandas as pd
    >>> rows = [("cxr", "heart", "b", 0.85, 0.71, 0.72, 0.13, "ref", 0.81),
    ...         ("cxr", "nodule", "b", 0.60, 0.57, 0.56, 0.03, "ref", 0.65)]
    >>> describe_class_margins(pd.DataFrame(rows, columns=["dataset", "class", "best_broad", "broad", "pixels", "pca",
    ...                                                    "margin", "reference", "reference_auroc"]), 0.10)
    'On cxr the best broad encoder (b) beats the better of the pixel and PCA probes by at least 0.10 on heart (+0.130) but not on nodule (+0.030). The in-task reference (ref), pretrained on these labels, beats the better probe by +0.080 on nodule: short of 0.10 as well, so what holds the broad encoder back is hard for the backbones of this zoo, at its pretraining budget, even when they are taught it.'
    """
    sentences = []
    for dataset, rows in margins.groupby("dataset", sort=True):
        clear = rows[rows["margin"] >= min_margin]
        short = rows[~(rows["margin"] >= min_margin)]
        def listed(part: "pd.DataFrame", conjunction: str = "and") -> str:
            return _and_list([f"{c} ({_signed(m, digits)})" for c, m in zip(part["class"], part["margin"])], conjunction)

        head = (f"On {dataset} the best broad encoder ({rows['best_broad'].iloc[0]}) beats the better of the pixel "
                f"and PCA probes by at least {min_margin:.2f}")
        if short.empty:
            sentences.append(f"{head} on every class: {listed(clear)}.")
            continue
        if clear.empty:
            sentences.append(f"{head} on no class: {listed(short)}.")
        else:
            sentences.append(f"{head} on {listed(clear)} but not on {listed(short, 'or')}.")
        # The dataset's rule is on the macro-AUROC over each baseline, i.e. the mean of the per-class margins.
        macro = [float((rows["broad"] - rows[b]).mean()) for b in ("pixels", "pca") if rows[b].notna().all()]
        if not rows["reference"].iloc[0] or not macro or min(macro) >= min_margin:
            continue
        baseline = short[["pixels", "pca"]].max(axis=1)
        reference_margin = float((short["reference_auroc"] - baseline).mean())
        where = short["class"].iloc[0] if len(short) == 1 else "these classes on average"
        taught = (f"The in-task reference ({rows['reference'].iloc[0]}), pretrained on these labels, beats the better probe by "
                  f"{_signed(reference_margin, digits)} on {where}")
        if reference_margin >= min_margin:
            sentences.append(f"{taught}: the backbones of this zoo learn them when taught them, and the broad "
                             "recipes do not teach them.")
        else:
            sentences.append(f"{taught}: short of {min_margin:.2f} as well, so what holds the broad encoder back is "
                             "hard for the backbones of this zoo, at its pretraining budget, even when they are taught it.")
    return " ".join(sentences)


def describe_adapter_training(training: "pd.DataFrame") -> str:
    """How the LoRA arm's adapters trained: how many stopped while still improving, how many never moved.

    Parameters
    ----------
    training : pandas.DataFrame
        :func:`crsbench_lib.report.world.adapter_training` output.

    Returns
    -------
    str

    Examples
    --------
    >>> import pandas as pd
    >>> rows = [("a", "derm", 0, 1.0, 3, 3, 3, 0.5), ("a", "derm", 0, 0.1, 2, 0, 3, 0.7)]
    >>> describe_adapter_training(pd.DataFrame(rows, columns=["encoder", "dataset", "seed", "label_fraction",
    ...                                                        "epochs_run", "best_epoch", "max_epochs", "best_val_loss"]))
    'Of the 2 adapters of 1 LoRA run, 1 (50 %) reached its lowest validation loss at the last of its 3 epochs, so training stopped while it was still improving; 1 (50 %) never beat the frozen encoder it started from. Of the 1 trained on all labels, 1 (100 %) was still improving.'
    """
    if training.empty:
        return ("This run's manifest holds no adapter reports (its LoRA cells were computed before the runner "
                "recorded them), so how far the adapters trained is not known here.")
    n = len(training)
    runs = len(training[["encoder", "dataset", "seed"]].drop_duplicates())
    limit = training["max_epochs"]
    improving = training["best_epoch"] >= limit
    unmoved = int((training["best_epoch"] == 0).sum())
    epochs = int(limit.max()) if limit.nunique() == 1 else None
    last = f"the last of its {epochs} epochs" if epochs is not None else "its last allowed epoch"

    def count(k: int, total: int) -> str:
        return f"{k} ({_percent(k / total)})"

    def verb(k: int, singular: str, plural: str) -> str:
        return singular if k == 1 else plural

    head = f"Of the {n} adapters of {runs} LoRA run{'s' if runs != 1 else ''}, "
    k = int(improving.sum())
    if k:
        text = (head + f"{count(k, n)} reached {verb(k, 'its', 'their')} lowest validation loss at "
                + (last if k == 1 else last.replace("its", "their")) + ", so training stopped while "
                + verb(k, "it was", "they were") + " still improving")
    else:
        text = head + "every one stopped on its validation loss before the epoch limit, so longer training would not have changed them"
    if unmoved:
        text += (f"; {count(unmoved, n)} never beat the frozen encoder {verb(unmoved, 'it', 'they')} started from")
    full = training["label_fraction"] >= 1.0
    if full.any() and k:
        m = int((improving & full).sum())
        text += (f". Of the {int(full.sum())} trained on all labels, {count(m, int(full.sum()))} "
                 f"{verb(m, 'was', 'were')} still improving")
    return text + "."


def describe_measurement_budget(floor: "object", cost: "object", digits: int = 3) -> str:
    """What the test sizes let the calibration axis measure, and what the run cost.

    Parameters
    ----------
    floor : pandas.DataFrame
        :func:`crsbench_lib.report.world.calibration_floor` output.
    cost : pandas.DataFrame
        :func:`crsbench_lib.report.world.run_cost` output (may be empty).
    digits : int

    Returns
    -------
    str

    Examples
    --------
    >>> import pandas as pd
    >>> floor = pd.DataFrame([("derm", 2000, 0.05, 0.02, 0.03)],
    ...                      columns=["dataset", "test_images", "ece", "ece_floor", "ece_excess"])
    >>> cost = pd.DataFrame([("frozen", 9, 30.0)], columns=["arm", "cells", "cpu_minutes"])
    >>> describe_measurement_budget(floor, cost)
    'On derm (2000 test images) the mean clean ECE is 0.050 against a floor of 0.020 that a perfectly calibrated probe would still measure, so 60 % of it is miscalibration. The cells of this run took 30 CPU-minutes: 30 for the frozen arm (9 cells).'
    """
    sentences = []
    for row in floor.itertuples(index=False):
        head = f"On {row.dataset} ({int(row.test_images)} test images) the mean clean ECE is {_fmt(row.ece, digits)}"
        if math.isnan(float(row.ece_floor)):
            sentences.append(head + "; this table records no ECE floor.")
            continue
        share = max(0.0, float(row.ece) - float(row.ece_floor)) / float(row.ece) if float(row.ece) > 0 else 0.0
        sentences.append(f"{head} against a floor of {_fmt(row.ece_floor, digits)} that a perfectly calibrated probe "
                         f"would still measure, so {_percent(share)} of it is miscalibration.")
    if len(cost):
        parts = [f"{m:.0f} for the {arm} arm ({int(n)} cells)" for arm, n, m in cost.itertuples(index=False)]
        sentences.append(f"The cells of this run took {cost['cpu_minutes'].sum():.0f} CPU-minutes: {', '.join(parts)}.")
    return " ".join(sentences)
