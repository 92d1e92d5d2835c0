"""The words of "how much data a decision needs" (``crsbench data-needs`` and the leading-tier chapter).

Every line is decided from :class:`~crsbench_lib.scoring.data_needs.DataNeeds`:
what each dataset's test set resolves, the leader's tier resolution, and per
axis what would resolve the closest call (method section 9, amendment 31).
"""

from __future__ import annotations

import math
from typing import Any

from crsbench_lib.scoring.data_needs import MAX_SEEDS

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
    if not math.isfinite(needed):
        return f"none up to {MAX_SEEDS} with these test images"
    return f"{int(needed)}"


def _joint(row: Any, needs: Any) -> str:
    """For a difference neither more test images nor more seeds alone resolve: the smallest joint need."""
    from crsbench_lib.scoring.data_needs import joint_needs

    both = joint_needs(row.difference, row.se_seed ** 2, row.se_images ** 2, needs.n_seeds, needs.interval,
                       interaction=row.interaction)
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
    >>> precision = pd.DataFrame([["derm", 600, 0.04, 0.011, 0.008, 0.012, 0.02, 0, 3, False]], columns=PRECISION_COLUMNS)
    >>> projection = pd.DataFrame([[a, 0.01, 0.001, 0.004, 0.012, False, 2.3, float("inf"), 0.0] for a in "DCLR"],
    ...                           columns=PROJECTION_COLUMNS)
    >>> needs = DataNeeds(precision, ("a", "b"), True, projection, 0.02, 0.05, {"derm": 600}, 3, 0.95)
    >>> lines = data_needs_lines(needs)
    >>> lines[1]
    "  derm: 600 test images; plug-in ECE floor 0.040; SE of a candidate's AUROC 0.0110, of its C 0.0080; largest C difference 0.0120, half-width 0.0200 (intervals simultaneous over the pairs): C separates none of the 3 candidate pairs here"
    >>> lines[4].split("; ")[1]
    'test images: x2.3: 1,380 test images per dataset'
    """
    from crsbench_lib.scoring.data_needs import oriented

    pct = f"{needs.interval * 100:g} %"
    lines = [f"what each dataset's test set resolves ({needs.n_seeds} seeds, {pct} intervals):"]
    for row in needs.precision.itertuples():
        reach = (f"C separates {row.c_pairs_separated} of the {row.c_pairs} candidate pairs" if row.c_separates else
                 f"C separates none of the {row.c_pairs} candidate pairs here")
        lines.append(
            f"  {row.dataset}: {row.n_test:,} test images; plug-in ECE floor {row.ece_floor:.3f}; SE of a "
            f"candidate's AUROC {row.auroc_se:.{DIGITS}f}, of its C {row.c_se:.{DIGITS}f}; largest C difference "
            f"{row.c_spread:.{DIGITS}f}, half-width {row.c_half_width:.{DIGITS}f} (intervals simultaneous over the "
            f"pairs): {reach}")
    first, second = needs.pair
    lines.append(f"leading tier: a CRS difference below about {needs.crs_resolution:.{DIGITS}f} is within the "
                 "leader's comparison noise")
    where = "shares the leading tier with it" if needs.pair_in_tier else "lies outside the leading tier"
    lines.append(f"closest call: {first} against {second}, which {where} (CRS difference "
                 f"{needs.crs_difference:.{DIGITS}f}); per axis (the CRS itself is not projected), positive = "
                 f"{first} better:")
    for row in needs.projection.itertuples():
        lines.append(
            f"  {row.axis}: {oriented(row.difference, row.axis):+.{DIGITS}f} (SE seeds {row.se_seed:.{DIGITS}f}, "
            f"test images {row.se_images:.{DIGITS}f}); test images: "
            f"{_needed(row.image_factor, needs.n_test, row.resolved)}; seeds: "
            f"{_seeds(row.seeds_needed, needs.n_seeds, row.resolved)}"
            + (_joint(row, needs) if not row.resolved and not math.isfinite(row.image_factor)
               and not math.isfinite(row.seeds_needed) else ""))
    lines.append("(projected for 80 % power, the observed difference taken as the truth and the variance "
                 "components as known: the test-image variance, and the seed-by-image part of the seeds' spread, "
                 "shrink as 1/n_test, the seeds' own as 1/n_seeds; with three seeds the achieved power where both "
                 "matter is nearer 75 %; method section 9, amendment 31)")
    return lines


def data_needs_markdown(needs: Any) -> str:
    """:func:`data_needs_lines` as a Markdown list (indented lines as sub-items), for the chapters.

    Examples
    --------
    >>> import pandas as pd
    >>> from crsbench_lib.scoring.data_needs import DataNeeds, PROJECTION_COLUMNS, PRECISION_COLUMNS
    >>> precision = pd.DataFrame([["derm", 600, 0.04, 0.011, 0.008, 0.012, 0.02, 0, 3, False]], columns=PRECISION_COLUMNS)
    >>> projection = pd.DataFrame([[a, 0.01, 0.001, 0.004, 0.012, False, 2.3, float("inf"), 0.0] for a in "DCLR"],
    ...                           columns=PROJECTION_COLUMNS)
    >>> text = data_needs_markdown(DataNeeds(precision, ("a", "b"), True, projection, 0.02, 0.05, {"derm": 600}, 3, 0.95))
    >>> [line[:12] for line in text.splitlines()[:3]]
    ['- what each ', '    - derm: ', '- leading ti']
    """
    return "\n".join(("    - " + line.strip()) if line.startswith("  ") else ("- " + line)
                     for line in data_needs_lines(needs))
