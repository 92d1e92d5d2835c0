"""The sentences of the insertion and registry chapters: what adding encoders does to published scores.

How far published scores move under the fixed reference and under cohort
renormalisation (:func:`describe_displacement`), and whether the existing
entries change order or only position (:func:`describe_rank_changes`).
"""

from __future__ import annotations

import numbers

from crsbench_lib.report.grammar import finite, fmt


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
