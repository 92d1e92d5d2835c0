"""The grammar of numbers to words that every sentence of the book is built from.

Every sentence a chapter uses to interpret a result is computed from the
numbers it describes, with the words of this module: the direction of a change
(a rise is never called a cut), whether that direction is an improvement for
the quantity (``better="lower"`` for ECE and AUROC loss, ``"higher"`` for
AUROC and retention), its size in words, whether an interval excludes zero, a
p-value, a list, and ties. A template such as "the calibrators cut ECE by
{low} to {high}" can contradict its own numbers (a negative cut); these
functions cannot, and tests feed them numbers of both signs and every size.
The chapters' own sentences, built from these words, live in
:mod:`crsbench_lib.report.sentences`.

Sizes in words are conventions of this book, stated once here:

* relative changes (``|after - before| / |before|``): below
  :data:`NEGLIGIBLE_RELATIVE` "negligible", below 10 % "small", below 30 %
  "moderate", otherwise "large";
* rank correlations (Kendall's tau, Pearson's r, by absolute value): below 0.1
  "no", 0.1-0.3 "weak", 0.3-0.5 "moderate", 0.5-0.7 "strong", 0.7 and above
  "very strong" (the usual rule-of-thumb bands, e.g. Cohen 1988 for r);
* changes judged against the measurement's own noise (:func:`noise_size_word`:
  ``|change| / noise``, the noise being e.g. the ECE floor, the half-width of
  an interval or a test-retest spread): below 0.1 "negligible", below 0.5
  "small", below 1 "moderate", and "large" only from the size of the noise
  itself upwards. Where the caller has the noise at hand it passes it, and the
  noise word replaces the relative band: a 36 % fall that is a quarter of the
  floor is small beside what the test set can resolve.

Every interval of the book is written by :func:`format_interval`: its ends keep
their sign and enough decimals to show whether it excludes zero.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

Better = Literal["lower", "higher"]

NEGLIGIBLE_RELATIVE = 0.01
RELATIVE_SIZES: tuple[tuple[float, str], ...] = ((NEGLIGIBLE_RELATIVE, "negligible"), (0.10, "small"), (0.30, "moderate"))
LARGEST_RELATIVE = "large"
CORRELATION_SIZES: tuple[tuple[float, str], ...] = ((0.1, "no"), (0.3, "weak"), (0.5, "moderate"), (0.7, "strong"))
#: Bands of ``|change| / noise`` (:func:`noise_size_word`): "large" only once a change reaches the noise itself.
NOISE_SIZES: tuple[tuple[float, str], ...] = ((0.1, "negligible"), (0.5, "small"), (1.0, "moderate"))
LARGEST_NOISE = "large"
LARGEST_CORRELATION = "very strong"
# Two correlations closer than this are "about the same" when compared with the study.
CLOSE_CORRELATION = 0.05
P_FLOOR = 0.001


def check_better(better: str) -> None:
    """Refuse a ``better`` other than "lower" or "higher" (the direction that is an improvement)."""
    if better not in ("lower", "higher"):
        raise ValueError(f"better must be 'lower' or 'higher', got {better!r}")


def finite(value: float, name: str) -> float:
    """``value`` as a float, refused (naming it ``name``) when it is not finite."""
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return number


def fmt(value: float, digits: int) -> str:
    """``value`` with ``digits`` decimals, a zero never signed.

    Examples
    --------
    >>> fmt(-0.0001, 3)
    '0.000'
    """
    text = f"{value:.{digits}f}"
    # "-0.000" reads as a signed change that is not there.
    return text.lstrip("-") if float(text) == 0 else text


def percent(fraction: float) -> str:
    """The magnitude of a fraction in whole percent, e.g. ``"42 %"`` for -0.42 (the sentence says the sign)."""
    return f"{abs(fraction) * 100:.0f} %"


def small_percent(share: float) -> str:
    """A share in whole percent that never rounds a rare or near-certain event to 0 % or 100 %.

    Examples
    --------
    >>> small_percent(0.004), small_percent(0.996), small_percent(0.42)
    ('< 1 %', '> 99 %', '42 %')
    """
    return "< 1 %" if 0 < share < 0.01 else "> 99 %" if 0.99 < share < 1 else percent(share)


def ordinal(k: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``11th``, ``22nd``: a rank in words.

    Examples
    --------
    >>> [ordinal(k) for k in (1, 2, 3, 4, 11, 12, 13, 21, 22, 111)]
    ['1st', '2nd', '3rd', '4th', '11th', '12th', '13th', '21st', '22nd', '111th']
    """
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{suffix}"


def pair_count(n: int) -> int:
    """The number of unordered pairs among ``n`` items, C(n, 2): what a rank comparison of ``n`` encoders decides.

    Examples
    --------
    >>> pair_count(19), pair_count(1)
    (171, 0)
    """
    return int(n) * (int(n) - 1) // 2


def value_range(values: Sequence[float], digits: int) -> str:
    """``0.020 to 0.025``, or ``between -0.017 and -0.005`` when an end is negative (no "-0.017 to -0.005").

    Examples
    --------
    >>> value_range([0.025, 0.02], 3), value_range([-0.017, -0.005], 3), value_range([0.5, 0.5], 1)
    ('0.020 to 0.025', 'between -0.017 and -0.005', '0.5')
    """
    low, high = fmt(min(values), digits), fmt(max(values), digits)
    if low == high:
        return low
    return f"between {low} and {high}" if low.startswith("-") or high.startswith("-") else f"{low} to {high}"


def relation(ours: float, study: float, close: float = CLOSE_CORRELATION) -> str:
    """``"close to"``, ``"higher than"`` or ``"lower than"`` the study's value: the book's one closeness rule.

    Examples
    --------
    >>> relation(0.90, 0.562), relation(0.58, 0.562), relation(0.3, 0.562)
    ('higher than', 'close to', 'lower than')
    """
    if abs(ours - study) < close:
        return "close to"
    return "higher than" if ours > study else "lower than"


def _band(magnitude: float, bands: tuple[tuple[float, str], ...], largest: str) -> str:
    """The word of the first band whose upper bound exceeds ``magnitude`` (``largest`` above them all)."""
    return next((word for bound, word in bands if magnitude < bound), largest)


def and_list(items: Sequence[object], conjunction: str = "and") -> str:
    """``a``, ``a and b``, ``a, b and c``: the items as a list in a sentence.

    Examples
    --------
    >>> and_list(["a", "b", "c"])
    'a, b and c'
    >>> and_list(["a", "b"], conjunction="or")
    'a or b'
    """
    words = [str(item) for item in items]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + f" {conjunction} " + words[-1]


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
    return _band(abs(finite(relative, "relative")), RELATIVE_SIZES, LARGEST_RELATIVE)


def noise_size_word(change: float, noise: float) -> str:
    """The size of a change in words, judged against the measurement's own noise.

    A fixed relative band calls a fall of 0.016 to 0.010 "large" (36 %) even
    when a perfectly calibrated probe on the same test set would still measure
    an ECE of 0.023: the change is a quarter of what the measurement can
    resolve. This word reads the ratio ``|change| / noise`` instead (bands
    :data:`NOISE_SIZES`), the noise being the scale of the measurement's own
    error: the ECE floor (Naeini et al. 2015; method section 9, amendment 5), an
    interval's half-width, or a test-retest spread.

    Parameters
    ----------
    change : float
        The change (only its magnitude matters).
    noise : float
        The noise scale, positive.

    Returns
    -------
    str
        "negligible", "small", "moderate" or "large".

    Raises
    ------
    ValueError
        If ``noise`` is not a positive finite number.

    Examples
    --------
    >>> noise_size_word(-0.006, 0.023)
    'small'
    >>> noise_size_word(0.03, 0.023)
    'large'
    """
    scale = finite(noise, "noise")
    if scale <= 0:
        raise ValueError(f"noise must be positive, got {noise!r}")
    return _band(abs(finite(change, "change")) / scale, NOISE_SIZES, LARGEST_NOISE)


def correlation_word(value: float) -> str:
    """The strength of a correlation (tau, rho or r) in words, by its absolute value.

    Examples
    --------
    >>> correlation_word(-0.62)
    'strong'
    """
    return _band(abs(finite(value, "correlation")), CORRELATION_SIZES, LARGEST_CORRELATION)


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
    value = finite(p, "p")
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


#: What :func:`describe_interval` adds when an interval contains zero.
NO_DIRECTION = ", so the data cannot tell the direction"
#: Most decimals :func:`format_interval` uses before it writes a non-zero end in scientific notation.
MAX_INTERVAL_DIGITS = 6


def _signed_end(value: float, digits: int) -> str:
    """One end of an interval with ``digits`` decimals, or in scientific notation when those would print it as zero."""
    text = fmt(value, digits)
    if value != 0 and float(text) == 0:
        # Still zero at the most decimals: the sign must show, so two significant digits.
        return f"{value:.1e}"
    return text


def interval_digits(low: float, high: float, digits: int = 3) -> int:
    """The decimals at which no non-zero end of ``[low, high]`` rounds to zero (at most :data:`MAX_INTERVAL_DIGITS`).

    Examples
    --------
    >>> interval_digits(-0.0002, 0.0057)
    4
    >>> interval_digits(0.12, 0.31)
    3
    """
    lo, hi = finite(low, "low"), finite(high, "high")
    while digits < MAX_INTERVAL_DIGITS and any(v != 0 and float(fmt(v, digits)) == 0 for v in (lo, hi)):
        digits += 1
    return digits


def format_interval(low: float, high: float, digits: int = 3) -> str:
    """An interval as the book writes it: ``[low, high]``, each end keeping its sign.

    The one home of interval formatting. Both ends get ``digits`` decimals, more
    when a non-zero end would round to zero (so ``[-0.0002, 0.0057]`` never
    reads ``[0.000, 0.006]``, an interval that seems to touch zero without
    saying on which side); an end still zero at :data:`MAX_INTERVAL_DIGITS`
    decimals is written in scientific notation. An end that is exactly zero is
    written ``0.000``, unsigned.

    Parameters
    ----------
    low, high : float
        The ends (``low <= high``).
    digits : int
        The fewest decimals shown.

    Returns
    -------
    str

    Raises
    ------
    ValueError
        If an end is not finite or the ends are out of order.

    Examples
    --------
    >>> format_interval(-0.0002, 0.0057)
    '[-0.0002, 0.0057]'
    >>> format_interval(0.7162, 0.9093)
    '[0.716, 0.909]'
    >>> format_interval(-1e-9, 2e-9)
    '[-1.0e-09, 2.0e-09]'
    """
    lo, hi = finite(low, "low"), finite(high, "high")
    if lo > hi:
        raise ValueError(f"interval ends out of order: low {low!r} > high {high!r}")
    shown = interval_digits(lo, hi, digits)
    return f"[{_signed_end(lo, shown)}, {_signed_end(hi, shown)}]"


def describe_interval(low: float, high: float, level: float = 0.95, digits: int = 3) -> str:
    """Whether an interval of a difference excludes zero, in words.

    Parameters
    ----------
    low, high : float
        The interval's ends (``low <= high``).
    level : float
        Its coverage, e.g. 0.95.
    digits : int
        Decimals shown (more where an end would round to zero, :func:`format_interval`).

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
    span = f"its {level * 100:.0f} % interval {format_interval(low, high, digits)}"
    if interval_excludes_zero(low, high):
        return f"{span} excludes zero"
    return f"{span} includes zero{NO_DIRECTION}"


def interval_excludes_zero(low: float, high: float) -> bool:
    """True when the closed interval ``[low, high]`` does not contain 0."""
    return finite(low, "low") > 0 or finite(high, "high") < 0


def describe_change(
    before: float,
    after: float,
    quantity: str,
    better: Better = "lower",
    interval: tuple[float, float] | None = None,
    level: float = 0.95,
    digits: int = 3,
    noise: float | None = None,
    noise_name: str = "the noise",
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
    noise : float, optional
        The measurement's own noise scale (e.g. the ECE floor). When given,
        the size word is judged against it (:func:`noise_size_word`) and the
        sentence says how many times the noise the change is; without it, the
        size word is the relative band of :func:`size_word`.
    noise_name : str
        What the noise is, in the sentence ("the mean ECE floor").

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
    >>> describe_change(0.016, 0.010, "the mean ECE excess", noise=0.023, noise_name="the ECE floor")
    'The mean ECE excess fell from 0.016 to 0.010 (by 38 %; the fall of 0.006 is 0.26 times the ECE floor of 0.023, a small improvement beside it).'
    """
    check_better(better)
    b, a = finite(before, "before"), finite(after, "after")
    subject = quantity[:1].upper() + quantity[1:]
    delta = a - b
    relative = delta / abs(b) if b != 0 else (math.inf if delta else 0.0)
    if abs(relative) < NEGLIGIBLE_RELATIVE or delta == 0:
        sentence = f"{subject} is essentially unchanged ({fmt(b, digits)} before, {fmt(a, digits)} after)"
    else:
        verb = "rose" if delta > 0 else "fell"
        improved = (delta < 0) == (better == "lower")
        verdict = "improvement" if improved else "deterioration"
        if noise is not None:
            scale = finite(noise, "noise")
            word = noise_size_word(delta, scale)
            share = f"by {percent(relative)}; " if math.isfinite(relative) else ""
            size = (f"{share}the {'rise' if delta > 0 else 'fall'} of {fmt(abs(delta), digits)} is "
                    f"{abs(delta) / scale:.2g} times {noise_name} of {fmt(scale, digits)}, a {word} {verdict} beside it")
        elif math.isfinite(relative):
            size = f"by {percent(relative)}, a {size_word(relative)} {verdict}"
        else:
            size = f"{'an' if verdict[0] == 'i' else 'a'} {verdict}"
        sentence = f"{subject} {verb} from {fmt(b, digits)} to {fmt(a, digits)} ({size})"
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
    check_better(better)
    values = [finite(v, "change") for v in changes]
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
        amount = percent(low) if percent(low) == percent(high) else f"{percent(low)} to {percent(high)}"
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


def _signed(value: float, digits: int) -> str:
    """``+0.003``, ``-0.003`` or ``0.000``: a change with its sign written out."""
    text = fmt(value, digits)
    return text if text.startswith("-") or float(text) == 0 else "+" + text


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
    only an interval that excludes zero earns a direction ("raises",
    "lowers") and a verdict. An interval that includes zero gets no direction
    verb at all: the point is written as a signed estimate, and the sentence
    says the data show neither a rise nor a fall and which changes they leave
    open (a sentence never says "raises" and "no change is detectable" at
    once). The interval is written by :func:`format_interval`.

    Examples
    --------
    >>> describe_difference(-0.02, "Adaptation", "the mean clean AUROC")
    'Adaptation lowers the mean clean AUROC by 0.020 on average, a deterioration.'
    >>> describe_difference(0.003, "Adaptation", "the mean clean AUROC", interval=(-0.0002, 0.0057))
    'Adaptation changes the mean clean AUROC by +0.003 on average (point estimate; 95 % interval [-0.0002, 0.0057]): the interval includes zero, so the data show neither a rise nor a fall, and any change from -0.0002 to +0.0057 is compatible with them.'
    """
    check_better(better)
    d = finite(delta, "delta")
    if interval is None:
        if round(d, digits) == 0:
            return f"{subject} leaves {quantity} essentially unchanged ({fmt(d, digits)})."
        verb = "raises" if d > 0 else "lowers"
        verdict = "an improvement" if (d > 0) == (better == "higher") else "a deterioration"
        return f"{subject} {verb} {quantity} by {fmt(abs(d), digits)} on average, {verdict}."
    low, high = (finite(v, "interval") for v in interval)
    shown = interval_digits(low, high, digits)
    bounds = f"{level * 100:g} % interval {format_interval(low, high, digits)}"
    if not interval_excludes_zero(low, high):
        return (f"{subject} changes {quantity} by {_signed(d, digits)} on average (point estimate; {bounds}): the "
                "interval includes zero, so the data show neither a rise nor a fall, and any change from "
                f"{_signed(low, shown)} to {_signed(high, shown)} is compatible with them.")
    if not ((d > 0 and low > 0) or (d < 0 and high < 0)):
        # A percentile interval can miss its own point; then neither side is claimed.
        return (f"{subject} changes {quantity} by {_signed(d, digits)} on average ({bounds}): the point is not on "
                "its interval's side of zero, so the sentence gives no direction.")
    verb = "raises" if d > 0 else "lowers"
    verdict = "an improvement" if (d > 0) == (better == "higher") else "a deterioration"
    return f"{subject} {verb} {quantity} by {fmt(abs(d), digits)} on average ({bounds}), {verdict}."


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
    r = finite(value, "correlation")
    word = correlation_word(r)
    if word == "no":
        text = f"{name} = {fmt(r, 3)}: no association to speak of"
    else:
        text = f"{name} = {fmt(r, 3)}: a {word} {'positive' if r > 0 else 'negative'} association"
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
    return str(int(value)) if float(value).is_integer() else fmt(value, digits)


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
        An interval of this build's value, stated beside it. It measures this
        build's own sampling noise only: the study's value, measured on other
        encoders and data with noise of its own, is not judged by it (issue 46,
        item 3), so the sentence gives no verdict on whether the study's value
        lies inside it.
    level : float
        Coverage of ``interval``.

    Examples
    --------
    >>> compare_with_study(0.31, 0.5, "τ_b")
    "This build's τ_b (0.310) is lower than the study's (0.500)."
    >>> compare_with_study(0.778, 0.562, "τ_b (full panel)")
    "This build's τ_b (full panel), 0.778, is higher than the study's (0.562)."
    >>> compare_with_study(0.867, 0.562, "τ_b", interval=(0.556, 0.911))
    "This build's τ_b (0.867; 95 % interval [0.556, 0.911]) is higher than the study's (0.562); the interval measures this build's own sampling noise only, not the study's, nor its different encoders and data."
    """
    a, b = finite(ours, "ours"), finite(study, "study")
    direction = relation(a, b, close)
    bounds = "" if interval is None else f"; {level * 100:g} % interval {format_interval(interval[0], interval[1], digits)}"
    # A name that already ends in a bracket ("τ_b (full panel)") takes its value between commas, not a second bracket.
    value = (f", {_number(a, digits)}{bounds}," if name.rstrip().endswith(")")
             else f" ({_number(a, digits)}{bounds})")
    text = f"This build's {name}{value} is {direction} the study's ({_number(b, digits)})"
    if interval is None:
        return text + "."
    return f"{text}; {OWN_NOISE_ONLY}."


#: What an interval of this build measures beside another study's value: this build's noise, nothing of the study's.
OWN_NOISE_ONLY = ("the interval measures this build's own sampling noise only, not the study's, nor its different "
                  "encoders and data")


def study_in_interval(study: float, interval: tuple[float, float], level: float = 0.95, digits: int = 3) -> str:
    """The study's value stated beside an interval of this build's, without a verdict.

    For a statistic whose interval belongs to a variant of the study's (e.g.
    the leave-self-out scoring beside the study's full-panel one), where
    :func:`compare_with_study` would compare unlike points. An interval of this
    build resamples this build's data only, so whether the study's value falls
    inside it judges nothing (issue 46, item 3): the sentence states both.

    Examples
    --------
    >>> study_in_interval(0.562, (0.556, 0.911))
    "The study's value is 0.562, beside this 95 % interval [0.556, 0.911]; the interval measures this build's own sampling noise only, not the study's, nor its different encoders and data."
    """
    b = finite(study, "study")
    bounds = format_interval(finite(interval[0], "interval"), finite(interval[1], "interval"), digits)
    return f"The study's value is {_number(b, digits)}, beside this {level * 100:g} % interval {bounds}; {OWN_NOISE_ONLY}."


def describe_share(share: float, event: str) -> str:
    """How often something happened, in words ("never", "in 3 % of draws", "always").

    Examples
    --------
    >>> describe_share(0.0, "the top 3 changes")
    'the top 3 changes in none of the draws'
    """
    s = finite(share, "share")
    if not 0.0 <= s <= 1.0:
        raise ValueError(f"share must lie in [0, 1], got {share!r}")
    if s == 0:
        return f"{event} in none of the draws"
    if s == 1:
        return f"{event} in every draw"
    shown = "< 1 %" if s < 0.01 else "> 99 %" if s > 0.99 else percent(s)
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
    return f"{and_list(parts)} {noun}."


def count_verb(k: int, n: int, singular: str, plural: str) -> str:
    """``k`` of ``n`` with the verb agreeing with the count: "1 of 3 does", "2 of 3 do", "none of the 3 do".

    Examples
    --------
    >>> [count_verb(k, 3, "does", "do") for k in (0, 1, 2, 3)]
    ['none of the 3 do', '1 of 3 does', '2 of 3 do', 'all 3 do']
    """
    if k == 0:
        return f"none of the {n} {plural}" if n != 1 else f"none {plural}"
    if k == n:
        return f"all {n} {plural}" if n != 1 else f"the only one {singular}"
    return f"{k} of {n} {singular if k == 1 else plural}"
