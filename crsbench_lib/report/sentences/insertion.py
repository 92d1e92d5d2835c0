"""The sentences of the insertion and registry chapters: what adding encoders does to published scores.

How far published scores move under the fixed reference and under cohort
renormalisation (:func:`describe_displacement`), and whether the existing
entries change order or only position (:func:`describe_rank_changes`), and
how that reordering compares with the reordering that redrawing the seeds
brings, read through the book's shared noise sentence (:func:`describe_rank_noise`).
"""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING

from crsbench_lib.report.grammar import finite, fmt
from crsbench_lib.report.sentences.noise import describe_tau_against_noise

if TYPE_CHECKING:
    import pandas as pd


def describe_displacement(largest_fixed: float, largest_cohort: float, digits: int = 3) -> str:
    """What an insertion did to published scores, fixed reference against cohort renormalisation.

    Examples
    --------
    >>> describe_displacement(0.0, 0.12)
    'No published score moved under the fixed reference (largest change 0); under cohort renormalisation the largest change would have been 0.120.'
    """
    fixed, cohort = abs(finite(largest_fixed, "largest_fixed")), abs(finite(largest_cohort, "largest_cohort"))
    head = ("No published score moved under the fixed reference (largest change 0)" if fixed == 0 else
            f"Published scores moved under the fixed reference (largest change {fixed:.3g}): the standard is not being held fixed")
    tail = ("cohort renormalisation would not have moved them either" if cohort == 0 else
            f"under cohort renormalisation the largest change would have been {fmt(cohort, digits)}")
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


def _span(low: float, high: float, digits: int) -> str:
    """``"10"`` or ``"10 to 16"`` (counts), ``"0.76 to 0.85"`` (values)."""
    lo, hi = (str(int(v)) if float(v).is_integer() else fmt(v, digits) for v in (low, high))
    return lo if lo == hi else f"{lo} to {hi}"


def describe_rank_noise(table: "pd.DataFrame", noise: "pd.DataFrame", level: float = 0.95,
                        simulated: bool | None = None) -> str:
    """Whether an insertion reorders the existing entries more or less than the ranking's own noise does.

    The τ_b part is the book's shared reading of a rank comparison against its
    noise (:func:`crsbench_lib.report.sentences.noise.describe_tau_against_noise` on
    :func:`crsbench_lib.scoring.retest.noise_baseline_table`: the insertion's
    τ_b per scheme beside the seed-redraw and bootstrap-draw τ_b of the same
    ranking). What only this chapter adds is the count of reordered pairs
    beside the seed pairs' range (:func:`crsbench_lib.scoring.insertion.rank_noise_table`;
    with the few, overlapping seed pairs of a run it says whether the counts
    separate, not a test) and what each reordering is: a re-run's is the
    measurement's noise, an insertion's is the scheme rewriting history from
    the same scores.

    Parameters
    ----------
    table : pandas.DataFrame
        Rows "fixed reference" and "cohort-renormalised", columns
        :data:`crsbench_lib.scoring.insertion.RANK_NOISE_COLUMNS`.
    noise : pandas.DataFrame
        :func:`crsbench_lib.scoring.insertion.insertion_noise_table` of the same insertion
        (each scheme's τ_b is judged against its own ranking's rows).
    level : float
        Coverage of the bootstrap rows' range.
    simulated : bool, optional
        Whether the run is the simulated cohort (the world its numbers belong to).

    Returns
    -------
    str

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from crsbench_lib.scoring.insertion import RANK_NOISE_COLUMNS
    >>> from crsbench_lib.scoring.retest import noise_baseline_table
    >>> rows = [("fixed reference", 1.0, 0, 136, 3, 0.81, 0.76, 0.85, 10, 16),
    ...         ("cohort-renormalised", 0.97, 2, 136, 3, 0.54, 0.46, 0.59, 28, 37)]
    >>> noise = noise_baseline_table({"the fixed reference": 1.0, "cohort renormalisation": 0.97},
    ...                              {"fixed reference": [0.76, 0.85, 0.81]}, {"fixed reference": np.linspace(0.8, 0.95, 11)})
    >>> describe_rank_noise(pd.DataFrame(rows, columns=list(RANK_NOISE_COLUMNS)), noise).split(". ")[-4] + "."
    'In pairs: the insertion reorders 0 of 136 pairs under the fixed reference and 2 under cohort renormalisation, while two seeds of the same ranking reorder 10 to 16 pairs (fixed reference) and 28 to 37 (cohort-renormalised).'
    """
    from crsbench_lib.scoring.insertion import COHORT, FIXED, NOISE_LABELS

    rows = {str(r.scheme): r for r in table.itertuples(index=False)}
    if set(rows) != {FIXED, COHORT}:
        raise ValueError(f"rank noise table: expected the rows {FIXED!r} and {COHORT!r}, got {sorted(rows)}")
    fixed, cohort = rows[FIXED], rows[COHORT]
    for scheme, value in ((FIXED, fixed.insertion_order_changes), (COHORT, cohort.insertion_order_changes)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
            raise ValueError(f"{scheme} order changes must be a non-negative integer, got {value!r}")
    text = describe_tau_against_noise(noise, level=level, simulated=simulated,
                                      judged_by={c: [r] for c, r in NOISE_LABELS.values()})
    world = "this build's simulated world" if simulated else "this build's world"
    moved, pairs = int(cohort.insertion_order_changes), int(cohort.n_pairs)
    head = (f" In pairs: the insertion reorders {int(fixed.insertion_order_changes)} of {pairs} pairs under the fixed "
            f"reference and {moved} under cohort renormalisation")
    if not int(cohort.retest_seed_pairs) or not int(fixed.retest_seed_pairs):
        return text + head + ("; this run has a single seed, so the count cannot be read against the ranking's own "
                              "seed noise.")
    low, high = float(cohort.retest_min_order_changes), float(cohort.retest_max_order_changes)
    text += (f"{head}, while two seeds of the same ranking reorder "
             f"{_span(float(fixed.retest_min_order_changes), float(fixed.retest_max_order_changes), 2)} pairs "
             f"({FIXED}) and {_span(low, high, 2)} ({COHORT}). ")
    if moved == 0:
        # Nothing to call history rewritten in order: say so, and what renormalisation would do where it reorders.
        text += ("Here renormalisation reorders no pair of the existing entries: on this insertion it rewrites their "
                 "published values, not their order. Where it does reorder pairs, it reorders the same scores with no "
                 "new measurement at all, unlike a redraw of the seeds, whose reordering is the measurement's noise; "
                 "the fixed reference does neither.")
    else:
        verdict = ("Renormalisation reorders fewer pairs than redrawing the seeds does" if moved < low else
                   "Renormalisation reorders more pairs than any redraw of the seeds does" if moved > high else
                   "Renormalisation reorders about as many pairs as redrawing the seeds does (within their range)")
        text += (f"{verdict}, but not in the same way: a redraw's reordering is the measurement's noise, while "
                 "renormalisation reorders the same scores with no new measurement at all, which is history "
                 "rewritten, and the fixed reference never does it.")
    base, renorm = float(fixed.retest_mean_tau), float(cohort.retest_mean_tau)
    if renorm < float(fixed.retest_min_tau):
        text += (f" Scored one seed at a time, the renormalised ranking is also the less reproducible one (mean τ_b "
                 f"{fmt(renorm, 2)} against {fmt(base, 2)}): its anchors are the cohort's own extremes and its panel the "
                 "cohort, so the seed noise of the encoders at the extremes moves every score.")
    return text + (" That a fixed reference reorders nothing holds for any benchmark of this design; how many pairs "
                   f"renormalisation reorders belongs to {world} and these newcomers.")
