"""The sentences of the leading-tier chapter: who leads, and what the bootstrap intervals mean.

Who the draws cannot separate from the leader (:func:`describe_leading_tier`),
every point CRS outside its own percentile interval and what the intervals then
mean (:func:`describe_bootstrap_bias`), where one encoder's bias comes from
(:func:`describe_bias_sources`), and which point CRS orders the table
(:func:`describe_score_orders`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from crsbench_lib.report.grammar import and_list, describe_interval, finite, fmt, interval_excludes_zero, percent

if TYPE_CHECKING:
    import pandas as pd


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
        text = (f"The draws cannot separate {len(names)} candidates for the lead: {and_list(names)} (the {pct} "
                f"interval of the CRS difference with {leader} includes zero for {and_list(others)}); treat them as a "
                f"tier, not a winner and runners-up. Each ranks first in "
                f"{and_list([percent(finite(p_rank1[n], 'p_rank1')) for n in names])} of draws.")
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
                    + f", and it ranks first in {percent(finite(p_rank1[leader], 'p_rank1'))} of draws.")
    for name, (diff, basic_low, basic_high) in (point_outside or {}).items():
        percentile_says = "inside" if name in others else "outside"
        basic_says = "outside" if interval_excludes_zero(basic_low, basic_high) else "inside"
        text += (f" For {name}, the point CRS difference with {leader} ({finite(diff, 'diff'):.3f}) lies outside its "
                 f"own percentile interval: the two encoders' draws are biased by different amounts. Its basic "
                 f"interval [{basic_low:.3f}, {basic_high:.3f}] puts {name} {basic_says} the tier, "
                 + ("so both intervals agree." if basic_says == percentile_says else
                    "so its place in the tier depends on which interval one trusts."))
    if references:
        refs = list(references)
        text += f" Not ranked: {and_list(refs)}, shown as {'a reference' if len(refs) == 1 else 'references'}"
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
            f"{row['encoder']} ({fmt(float(row['crs']), digits)} against [{fmt(float(row['crs_low']), digits)}, "
            f"{fmt(float(row['crs_high']), digits)}], draws centred {side} the point with median "
            f"{fmt(float(row['crs_median']), digits)} and bias {fmt(float(row['bias']), digits)}, "
            f"{_standard_errors(float(row['bias_se']))}; basic interval [{fmt(float(row['crs_basic_low']), digits)}, "
            f"{fmt(float(row['crs_basic_high']), digits)}])"
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
        :func:`~crsbench_lib.scoring.two_level_bootstrap.bias_decomposition` (index
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
    text = (f"Of the bias of {fmt(float(row['bias']), digits)} for {encoder}, "
            f"{fmt(float(row['from_axes']), digits)} comes from the axes' own resampling bias and "
            f"{fmt(float(row['from_nonsmooth']), digits)} from the nonlinearity of the CRS (dominance, floor, "
            "balance and clipping at the anchors; its draws rescored with every axis recentred on the point)")
    parts = {name: float(row[name]) for name in ("dominance", "balance", "floor")}
    largest = max(parts, key=lambda name: abs(parts[name]))
    text += f"; by component, {largest} carries {fmt(parts[largest], digits)}."
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
