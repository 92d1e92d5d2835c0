"""The sentences of the leading-tier chapter: what the tier is, who leads, and what the bootstrap intervals mean.

The one wording of the leading tier (:data:`LEADING_TIER_DEFINITION`, shown by
:func:`describe_tier_definition` on the leading-tier and gate pages and
repeated verbatim by the glossary and the method page), who is in it
(:func:`describe_leading_tier`), every point CRS outside its own percentile
interval and what the intervals then mean (:func:`describe_bootstrap_bias`),
where one encoder's bias comes from (:func:`describe_bias_sources`), and which
point CRS orders the table (:func:`describe_score_orders`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from crsbench_lib.report.grammar import and_list, finite, fmt, format_interval, interval_excludes_zero, percent
from crsbench_lib.report.sentences.references import name_references

if TYPE_CHECKING:
    import pandas as pd

#: The one definition of the leading tier, word for word on every page that defines it (the glossary entry,
#: the method page, the leading-tier and gate pages); membership is computed in one place,
#: :func:`~crsbench_lib.scoring.tier.best_confidence_set` (the ``in_tier`` column of a bootstrap summary).
LEADING_TIER_DEFINITION = (
    "The confidence set for the best candidate: every candidate that no other candidate is shown to beat. "
    "A rival is shown to beat a candidate when the lower bound of their paired CRS difference lies above zero; "
    "each candidate's bounds share its own one-sided critical value, taken over its comparisons with its "
    "rivals only, so that the truly best candidate stays in the set with at least the stated probability "
    "(95 % by default): only the best's own comparisons need to hold. The bounds are centred on the point "
    "difference, so a bias of the bootstrap draws moves no decision. "
    "The point leader is always a member, a reference is never one, and a rank probability such as P(top k) "
    "describes the draws without deciding membership."
)

def describe_critical_value(critical: float | Sequence[float], n_candidates: int, level: float = 0.95,
                            max_t: float | None = None) -> str:
    """The candidates' one-sided critical values of the tier, beside the one-comparison value.

    Parameters
    ----------
    critical : float or sequence of float
        Each candidate's critical value ``q_i`` (a summary's ``critical_value``), or one value.
    n_candidates : int
        Candidates ranked.
    level : float
        The tier's coverage of the best (at least).
    max_t : float, optional
        The earlier construction's two-sided max-t value over every pair, said beside when given.

    Examples
    --------
    >>> describe_critical_value([2.28, 2.54, 2.4], 19)
    "Each candidate's one-sided 95 % critical value lies between 2.28 and 2.54 standard errors (one comparison on its own would reach 1.64): the price of comparing each candidate with its 18 rivals at once."
    >>> describe_critical_value(2.3, 5, max_t=3.1).split("at once. ")[1]
    'The max-t construction over all 10 pairs of amendment 15 would reach 3.10, a tier at least as wide.'
    """
    from statistics import NormalDist

    values = sorted(float(v) for v in np.atleast_1d(np.asarray(critical, dtype=float)) if math.isfinite(float(v)))
    if not values:
        raise ValueError("describe_critical_value needs a finite critical value")
    one = NormalDist().inv_cdf(level)
    where = (f"is {values[0]:.2f}" if f"{values[0]:.2f}" == f"{values[-1]:.2f}"
             else f"lies between {values[0]:.2f} and {values[-1]:.2f}")
    text = (f"Each candidate's one-sided {level * 100:g} % critical value {where} standard errors (one comparison "
            f"on its own would reach {one:.2f}): the price of comparing each candidate with its {n_candidates - 1} "
            "rivals at once.")
    if max_t is not None and math.isfinite(max_t):
        pairs = n_candidates * (n_candidates - 1) // 2
        text += (f" The max-t construction over all {pairs} pairs of amendment 15 would reach {max_t:.2f}, a tier at "
                 "least as wide.")
    return text


#: The glue key under which the leading-tier and gate pages store their tier (tested to agree).
TIER_GLUE_KEY = "leading_tier_members"


def describe_tier_definition(level: float = 0.95) -> str:
    """The leading tier's definition as a page prints it, with the coverage the page uses.

    Parameters
    ----------
    level : float
        Simultaneous coverage of the intervals, in (0, 1).

    Returns
    -------
    str
        ``"The *leading tier* is "`` followed by :data:`LEADING_TIER_DEFINITION`
        (its first letter lower-cased) and the coverage this page uses. Plain
        Markdown: a notebook's Markdown output is rendered as CommonMark, so
        the page's own text links the glossary term.

    Examples
    --------
    >>> describe_tier_definition(0.9).split(". ")[-1]
    'On this page the coverage is 90 %.'
    """
    coverage = finite(level, "level")
    if not 0.0 < coverage < 1.0:
        raise ValueError(f"level must lie in (0, 1), got {level!r}")
    body = LEADING_TIER_DEFINITION[0].lower() + LEADING_TIER_DEFINITION[1:]
    return f"The *leading tier* is {body} On this page the coverage is {coverage * 100:.0f} %."


_COMPARISON_COLUMNS = ("encoder", "low", "high", "bias")


def _comparison(row: "pd.Series", digits: int) -> str:
    return (f"{format_interval(float(row['low']), float(row['high']), digits)} "
            f"(bias {fmt(finite(row['bias'], 'bias'), digits)})")


def describe_leading_tier(
    members: Sequence[str],
    p_rank1: Mapping[str, float],
    comparisons: "pd.DataFrame",
    level: float = 0.95,
    references: Sequence[str] = (),
    tied_references: Sequence[str] = (),
    digits: int = 3,
    families: Mapping[str, str] | None = None,
) -> str:
    """Who is in the leading tier, with the tier's interval behind each comparison with the leader.

    Parameters
    ----------
    members : sequence of str
        The tier (:func:`~crsbench_lib.scoring.bootstrap.tied_with_leader`,
        the bootstrap summary's ``in_tier``), the leader first.
    p_rank1 : mapping
        P(rank 1) among the candidates, per candidate (at least the members).
    comparisons : pandas.DataFrame
        :func:`~crsbench_lib.scoring.tier.leader_comparisons` of the leader
        with the other members, or with the runner-up when the leader stands
        alone: encoder, low, high (the tier's interval of
        ``CRS_leader - CRS_encoder``: each end at the critical value of the
        candidate whose membership it tests) and bias (of its draws).
    level : float
        The tier's coverage of the best (at least).
    references : sequence of str
        Encoders shown as references and not ranked; named so the reader knows
        why they are absent from the sentence.
    tied_references : sequence of str
        The references whose tier interval with the leader includes zero.
    digits : int
        Fewest decimals of an interval's ends (more where an end would round to zero).
    families : mapping of str to str, optional
        Encoder -> study family key, so that many references are named by their
        families (:func:`~crsbench_lib.report.sentences.references.name_references`);
        the tied ones are always named.

    Returns
    -------
    str

    Raises
    ------
    ValueError
        If a member's interval with the leader excludes zero or the lone
        leader's interval with the runner-up includes it (the comparisons do
        not belong to this tier), or a member lacks its comparison.

    Examples
    --------
    >>> import pandas as pd
    >>> rows = pd.DataFrame({"encoder": ["b", "c"], "low": [-0.06, -0.05], "high": [0.08, 0.1],
    ...                      "bias": [0.002, -0.004]})
    >>> describe_leading_tier(["a", "b", "c"], {"a": 0.5, "b": 0.3, "c": 0.2}, rows)
    'The leading tier holds 3 candidates: a, b and c. No candidate is shown to beat any of them, so treat them as a tier, not a winner and runners-up. The 95 % tier intervals of the CRS difference of a with b and c, centred on the point, are [-0.060, 0.080] (bias 0.002) and [-0.050, 0.100] (bias -0.004); each includes zero. Each ranks first in 50 %, 30 % and 20 % of draws.'
    >>> runner = pd.DataFrame({"encoder": ["b"], "low": [0.01], "high": [0.05], "bias": [0.001]})
    >>> describe_leading_tier(["a"], {"a": 0.97, "b": 0.03}, runner, references=["r"])
    'a alone forms the leading tier: every other candidate is shown below at least one other; its CRS difference with the runner-up b has a 95 % tier interval [0.010, 0.050] (bias 0.001) that excludes zero, and it ranks first in 97 % of draws. Not ranked: r, shown as a reference.'
    """
    names = [str(m) for m in members]
    if not names:
        raise ValueError("describe_leading_tier needs the leader")
    missing = [c for c in _COMPARISON_COLUMNS if c not in comparisons.columns]
    if missing:
        raise ValueError(f"describe_leading_tier: the comparisons lack column {missing[0]!r}")
    table = comparisons.assign(encoder=comparisons["encoder"].astype(str)).set_index("encoder")
    leader, others = names[0], names[1:]
    pct = f"{level * 100:.0f} %"
    if others:
        absent = [n for n in others if n not in table.index]
        if absent:
            raise ValueError(f"describe_leading_tier: no comparison of {leader} with member {absent[0]!r}")
        for name in others:
            if interval_excludes_zero(float(table.loc[name, "low"]), float(table.loc[name, "high"])):
                raise ValueError(f"{name}'s interval with {leader} excludes zero: it cannot be in the tier")
        shown = and_list([_comparison(table.loc[n], digits) for n in others])
        text = (f"The leading tier holds {len(names)} candidates: {and_list(names)}. No candidate is shown to beat any "
                "of them, so treat them as a tier, not a winner and runners-up. The "
                f"{pct} tier {'interval' if len(others) == 1 else 'intervals'} of the CRS difference of {leader} with "
                f"{and_list(others)}, centred on the point, {'is' if len(others) == 1 else 'are'} {shown}; "
                f"{'it includes' if len(others) == 1 else 'each includes'} zero. Each ranks first in "
                f"{and_list([percent(finite(p_rank1[n], 'p_rank1')) for n in names])} of draws.")
    else:
        runner = [n for n in table.index if n != leader]
        if not runner:
            text = f"{leader} is the only candidate."
        else:
            row = table.loc[runner[0]]
            if not interval_excludes_zero(float(row["low"]), float(row["high"])):
                raise ValueError(f"{runner[0]}'s interval [{row['low']}, {row['high']}] includes zero: "
                                 "it belongs in the tier")
            text = (f"{leader} alone forms the leading tier: every other candidate is shown below at least one "
                    f"other; its CRS difference with the runner-up {runner[0]} has a {pct} tier interval "
                    f"{_comparison(row, digits)} that excludes zero, and it ranks first in "
                    f"{percent(finite(p_rank1[leader], 'p_rank1'))} of draws.")
    if references:
        refs = [str(r) for r in references]
        shown_as = "a reference" if len(refs) == 1 else "references"
        text += f" Not ranked: {name_references(refs, families)}, shown as {shown_as}"
        tied_refs = [r for r in refs if r in set(tied_references)]
        if tied_refs:
            text += (f"; the draws cannot separate {and_list(tied_refs)} from {leader} either")
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
                f"draws less the point) largest against its standard error is {fmt(float(worst['bias']), digits)} "
                f"for {worst['encoder']}, {_standard_errors(float(worst['bias_se']))} ({size} by the "
                "quarter-standard-error rule of Efron & Tibshirani 1993, section 10.6).")
    parts = []
    for _, row in outside.iterrows():
        side = "below" if float(row["bias"]) < 0 else "above"
        parts.append(
            f"{row['encoder']} ({fmt(float(row['crs']), digits)} against "
            f"{format_interval(float(row['crs_low']), float(row['crs_high']), digits)}, draws centred {side} the "
            f"point with median {fmt(float(row['crs_median']), digits)} and bias {fmt(float(row['bias']), digits)}, "
            f"{_standard_errors(float(row['bias_se']))}; basic interval "
            f"{format_interval(float(row['crs_basic_low']), float(row['crs_basic_high']), digits)})"
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


def describe_bias_sources(decomposition: "pd.DataFrame", encoder: str, digits: int = 3, recentred: bool = False) -> str:
    """Where one encoder's bootstrap bias of the CRS comes from, in words.

    The decomposition measures the draws scored as drawn. When the bootstrap
    recentred each axis's draws on the point before scoring (``recentred``),
    the part from the axes is what the recentring removed and the part from
    the nonlinearity is the bias the bootstrap summary shows; the sentence
    says so, so that its number and the table's do not seem to disagree.

    Parameters
    ----------
    decomposition : pandas.DataFrame
        :func:`~crsbench_lib.scoring.two_level_bootstrap.bias_decomposition` (index
        encoder; bias, from_axes, from_nonsmooth, dominance, balance, floor,
        D ... R and D_se ... R_se).
    encoder : str
        The encoder to describe (e.g. the one with the largest bias).
    digits : int
        Decimals shown.
    recentred : bool
        Whether the bootstrap scored recentred draws
        (:attr:`~crsbench_lib.scoring.two_level_bootstrap.TwoLevelBootstrapResult.recentred`).

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
    >>> recentred = describe_bias_sources(pd.DataFrame([row], index=["a"]), "a", recentred=True)
    >>> recentred[: recentred.index(" (dominance")]
    "Scored as drawn, the CRS draws of a would sit -0.085 from the point: -0.071 from the axes' own resampling bias, which recentring each axis's draws on the point removes, and -0.014 from the nonlinearity of the CRS"
    """
    needed = ("bias", "from_axes", "from_nonsmooth", "dominance", "balance", "floor",
              *_AXIS_WORDS, *(f"{a}_se" for a in _AXIS_WORDS))
    missing = [c for c in needed if c not in decomposition.columns]
    if missing:
        raise ValueError(f"describe_bias_sources: the decomposition lacks column {missing[0]!r}")
    if encoder not in decomposition.index:
        raise ValueError(f"describe_bias_sources: no row for encoder {encoder!r}")
    row = decomposition.loc[encoder]
    if recentred:
        text = (f"Scored as drawn, the CRS draws of {encoder} would sit {fmt(float(row['bias']), digits)} from the "
                f"point: {fmt(float(row['from_axes']), digits)} from the axes' own resampling bias, which recentring "
                f"each axis's draws on the point removes, and {fmt(float(row['from_nonsmooth']), digits)} from the "
                "nonlinearity of the CRS (dominance, floor, balance and clipping at the anchors), which stays: it is "
                "the bias the bootstrap summary shows")
    else:
        text = (f"Of the bias of {fmt(float(row['bias']), digits)} for {encoder}, "
                f"{fmt(float(row['from_axes']), digits)} comes from the axes' own resampling bias and "
                f"{fmt(float(row['from_nonsmooth']), digits)} from the nonlinearity of the CRS (dominance, floor, "
                "balance and clipping at the anchors; its draws rescored with every axis recentred on the point)")
    parts = {name: float(row[name]) for name in ("dominance", "balance", "floor")}
    largest = max(parts, key=lambda name: abs(parts[name]))
    text += f"; by component, {largest} carries {fmt(parts[largest], digits)}{' of the bias as drawn' if recentred else ''}."
    worst = min(_AXIS_WORDS, key=lambda axis: float(row[f"{axis}_se"]))
    moved = float(row[f"{worst}_se"])
    if moved >= -NEGLIGIBLE_BIAS_SE:
        return text + " No axis's draws are worse than its point by a quarter of a standard deviation or more."
    change = float(row[worst])
    text += (f" The axis whose draws fall furthest behind the point is {worst}: {_AXIS_WORDS[worst]} "
             f"{'rises' if change > 0 else 'falls'} by {fmt(abs(change), digits)} on average, {abs(moved):.1f} "
             "standard deviations of its draws")
    if worst == "C":
        text += (" (binned ECE sums absolute gaps, and resampling the images with replacement adds noise to "
                 "every gap; the debiased ECE takes out only part of that where a bin is calibrated)")
    if recentred:
        return text + "; the recentring subtracts that shift before the draws meet the panel entries, measured once."
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


def short_names(names: Sequence[str], limit: int = 4) -> str:
    """Names for a short statement: all of them up to ``limit``, else the first and how many others.

    Examples
    --------
    >>> short_names(["a", "b"]), short_names(["a", "b", "c", "d", "e", "f"])
    ('a and b', 'a and 5 others')
    """
    shown = [str(n) for n in names]
    if len(shown) <= limit:
        return and_list(shown)
    return f"{shown[0]} and {len(shown) - 1} others"


def leading_tier_takeaway(
    members: Sequence[str],
    n_candidates: int,
    p_rank1: Mapping[str, float],
    comparisons: "pd.DataFrame",
    level: float = 0.95,
    digits: int = 3,
) -> str:
    """The leading-tier chapter's key takeaway: is first place a property of the encoders or of the noise?

    Parameters
    ----------
    members : sequence of str
        The leading tier, the leader first (as :func:`describe_leading_tier`).
    n_candidates : int
        Candidates ranked (references not counted).
    p_rank1 : mapping
        P(rank 1) per candidate (at least the leader).
    comparisons : pandas.DataFrame
        :func:`~crsbench_lib.scoring.tier.leader_comparisons` of the leader with the other members, or with the
        runner-up when the leader stands alone: encoder, low, high, bias.
    level : float
        Simultaneous coverage of the intervals.
    digits : int
        Fewest decimals of an interval's ends.

    Returns
    -------
    str
        One or two sentences for :func:`crsbench_lib.report.takeaway.glue_takeaway`: the leader's closest rival
        (the second member, or the runner-up) with the tier's interval of their CRS difference.

    Examples
    --------
    >>> import pandas as pd
    >>> rows = pd.DataFrame({"encoder": ["b"], "low": [-0.012], "high": [0.145], "bias": [-0.003]})
    >>> leading_tier_takeaway(["a", "b"], 6, {"a": 0.993, "b": 0.007}, rows)
    'First place is not settled by the data: 2 of 6 candidates (a and b) form the leading tier. a ranks first in > 99 % of draws, yet the 95 % tier interval of its CRS lead over b, [-0.012, 0.145], includes zero.'
    >>> leading_tier_takeaway(["a"], 6, {"a": 0.97}, rows.assign(low=0.01))
    'First place holds beyond the noise of seeds and test images: a alone forms the leading tier of 6 candidates; the 95 % tier interval of its CRS lead over the runner-up b, [0.010, 0.145], excludes zero. It ranks first in 97 % of draws.'
    """
    from crsbench_lib.report.grammar import small_percent

    names = [str(m) for m in members]
    if not names:
        raise ValueError("leading_tier_takeaway needs the leader")
    leader = names[0]
    share_first = finite(p_rank1[leader], "p_rank1")
    first = small_percent(share_first)
    # "yet" only where the rank probability seems to settle what the interval leaves open.
    joint = "yet" if share_first >= 0.5 else "and"
    table = comparisons.assign(encoder=comparisons["encoder"].astype(str)).set_index("encoder")
    rival = names[1] if len(names) > 1 else next((n for n in table.index if n != leader), None)
    if rival is None:
        return f"{leader} is the only candidate ranked (n = {n_candidates}): there is no first place to contest."
    if rival not in table.index:
        raise ValueError(f"leading_tier_takeaway: no comparison of {leader} with {rival!r}")
    low, high = float(table.loc[rival, "low"]), float(table.loc[rival, "high"])
    span = f"the {level * 100:.0f} % tier interval of its CRS lead over"
    shown = format_interval(low, high, digits)
    excludes = interval_excludes_zero(low, high)
    if len(names) > 1:
        if excludes:
            raise ValueError(f"{rival}'s interval with {leader} excludes zero: it cannot be in the tier")
        return (f"First place is not settled by the data: {len(names)} of {n_candidates} candidates "
                f"({short_names(names)}) form the leading tier. {leader} ranks first in {first} of draws, {joint} {span} "
                f"{rival}, {shown}, includes zero.")
    if not excludes:
        raise ValueError(f"{rival}'s interval with {leader} includes zero: it belongs in the tier")
    return (f"First place holds beyond the noise of seeds and test images: {leader} alone forms the leading tier of "
            f"{n_candidates} candidates; {span} the runner-up {rival}, {shown}, excludes zero. It ranks first in "
            f"{first} of draws.")


#: What a table cell shows where its column does not apply to the row (a candidate is never a "reference not
#: separated from the leader", a reference never "in the leading tier").
NOT_APPLICABLE = "–"
_ROLE_COLUMNS = {"in the leading tier": False, "reference not separated from the leader": True}


def mark_roles(table: "pd.DataFrame", reference_suffix: str = " (reference)") -> "pd.DataFrame":
    """The tier table with each role's column read as yes/no only on the rows it applies to, "–" elsewhere.

    ``in the leading tier`` applies to candidates, ``reference not separated
    from the leader`` to references (the rows whose encoder ends in
    ``reference_suffix``); a boolean False on a row the column does not
    describe would read "no", as if a tier member were separated from the leader.

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({"encoder": ["a", "r (reference)"], "in the leading tier": [True, False],
    ...                       "reference not separated from the leader": [False, True]})
    >>> mark_roles(table).values.tolist()
    [['a', 'yes', '–'], ['r (reference)', '–', 'yes']]
    """
    out = table.copy()
    reference = out["encoder"].astype(str).str.endswith(reference_suffix).to_numpy()
    for column, for_references in _ROLE_COLUMNS.items():
        if column in out.columns:
            applies = reference if for_references else ~reference
            out[column] = [("yes" if bool(v) else "no") if a else NOT_APPLICABLE
                           for v, a in zip(out[column], applies)]
    return out
