"""The words of "how much data a decision needs" (``crsbench data-needs`` and the leading-tier chapter).

Every line is decided from :class:`~crsbench_lib.scoring.data_needs.DataNeeds`:
what each dataset's test set resolves, the leader's tier resolution, and per
axis what would resolve the closest call (method section 9, amendment 31).
"""

from __future__ import annotations

import math
from typing import Any

#: Decimals of the printed differences and standard errors.
DIGITS = 4


def _needed(factor: float, n_test: dict[str, int], resolved: bool) -> str:
    """``resolved now``, ``no test set (the seeds' spread covers it)`` or the test images per dataset."""
    if resolved:
        return "resolved now"
    if not math.isfinite(factor):
        return "no test set: the seeds' spread alone covers it"
    sizes = sorted({math.ceil(factor * n) for n in n_test.values()})
    return f"x{factor:.1f}: " + ", ".join(f"{n:,}" for n in sizes) + " test images per dataset"


def _seeds(needed: float, n_seeds: int, resolved: bool) -> str:
    if resolved:
        return f"{n_seeds} (as now)"
    return "no number of seeds: the test images' noise covers it" if not math.isfinite(needed) else f"{int(needed)}"


def _joint(row: Any, needs: Any) -> str:
    """For a difference neither more test images nor more seeds alone resolve: the smallest joint need."""
    from crsbench_lib.scoring.data_needs import joint_needs

    both = joint_needs(row.difference, row.se_seed ** 2, row.se_images ** 2, needs.n_seeds, needs.interval)
    if both is None:
        return "; not within 100 seeds and 100 times the test images either"
    m, k = both
    return f"; both together: {m} seeds and x{k:.1f} the test images"


def data_needs_lines(needs: Any) -> list[str]:
    """The report of :class:`~crsbench_lib.scoring.data_needs.DataNeeds`, line by line (indented lines belong to the line above).

    Examples
    --------
    >>> import pandas as pd
    >>> from crsbench_lib.scoring.data_needs import DataNeeds, PROJECTION_COLUMNS, PRECISION_COLUMNS
    >>> precision = pd.DataFrame([["derm", 600, 0.04, 0.011, 0.008, 0.012, 0.02, False]], columns=PRECISION_COLUMNS)
    >>> projection = pd.DataFrame([[a, 0.01, 0.001, 0.004, 0.012, False, 2.3, float("inf")] for a in "DCLR"],
    ...                           columns=PROJECTION_COLUMNS)
    >>> needs = DataNeeds(precision, ("a", "b"), True, projection, 0.02, 0.05, {"derm": 600}, 3, 0.95)
    >>> lines = data_needs_lines(needs)
    >>> lines[1]
    "  derm: 600 test images; ECE floor 0.040; SE of a candidate's AUROC 0.0110, of its C 0.0080; largest C difference 0.0120 against a paired half-width of 0.0200: C cannot separate any two candidates here"
    >>> lines[4].split("; ")[1]
    'test images: x2.3: 1,380 test images per dataset'
    """
    from crsbench_lib.scoring.data_needs import oriented

    pct = f"{needs.interval * 100:g} %"
    lines = [f"what each dataset's test set resolves ({needs.n_seeds} seeds, {pct} intervals):"]
    for row in needs.precision.itertuples():
        reach = ("C separates some candidates" if row.c_separates else
                 "C cannot separate any two candidates here")
        lines.append(
            f"  {row.dataset}: {row.n_test:,} test images; ECE floor {row.ece_floor:.3f}; SE of a candidate's "
            f"AUROC {row.auroc_se:.{DIGITS}f}, of its C {row.c_se:.{DIGITS}f}; largest C difference "
            f"{row.c_spread:.{DIGITS}f} against a paired half-width of {row.c_half_width:.{DIGITS}f}: {reach}")
    first, second = needs.pair
    lines.append(f"leading tier: a CRS difference below about {needs.crs_resolution:.{DIGITS}f} is within the "
                 "leader's comparison noise")
    where = "shares the leading tier with it" if needs.pair_in_tier else "lies outside the leading tier"
    lines.append(f"closest call: {first} against {second}, which {where} (CRS difference "
                 f"{needs.crs_difference:.{DIGITS}f}); per axis, positive = {first} better:")
    for row in needs.projection.itertuples():
        lines.append(
            f"  {row.axis}: {oriented(row.difference, row.axis):+.{DIGITS}f} (SE seeds {row.se_seed:.{DIGITS}f}, "
            f"test images {row.se_images:.{DIGITS}f}); test images: "
            f"{_needed(row.image_factor, needs.n_test, row.resolved)}; seeds: "
            f"{_seeds(row.seeds_needed, needs.n_seeds, row.resolved)}"
            + (_joint(row, needs) if not row.resolved and not math.isfinite(row.image_factor)
               and not math.isfinite(row.seeds_needed) else ""))
    lines.append("(projected for 80 % power, the observed difference taken as the truth: test-image variance "
                 "shrinks as 1/n_test, seed variance as 1/n_seeds; method section 9, amendment 31)")
    return lines




def data_needs_markdown(needs: Any) -> str:
    """:func:`data_needs_lines` as a Markdown list (indented lines as sub-items), for the chapters.

    Examples
    --------
    >>> import pandas as pd
    >>> from crsbench_lib.scoring.data_needs import DataNeeds, PROJECTION_COLUMNS, PRECISION_COLUMNS
    >>> precision = pd.DataFrame([["derm", 600, 0.04, 0.011, 0.008, 0.012, 0.02, False]], columns=PRECISION_COLUMNS)
    >>> projection = pd.DataFrame([[a, 0.01, 0.001, 0.004, 0.012, False, 2.3, float("inf")] for a in "DCLR"],
    ...                           columns=PROJECTION_COLUMNS)
    >>> text = data_needs_markdown(DataNeeds(precision, ("a", "b"), True, projection, 0.02, 0.05, {"derm": 600}, 3, 0.95))
    >>> [line[:12] for line in text.splitlines()[:3]]
    ['- what each ', '    - derm: ', '- leading ti']
    """
    return "\n".join(("    - " + line.strip()) if line.startswith("  ") else ("- " + line)
                     for line in data_needs_lines(needs))
