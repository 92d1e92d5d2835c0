"""Insertion test (crs-method section 6, item 5).

Score the existing encoders, add candidates, score again. Under a fixed
reference standard every existing score is unchanged to the last bit
(displacement exactly 0), because a CRS depends only on the encoder's own
profile and the standard. Under cohort renormalisation the anchors (cohort
min/max) and the panel (the cohort) change with the cohort, so existing
scores move.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from crsbench_lib.errors import SchemaError
from crsbench_lib.scoring.crs import cohort_renormalised_scores, score_profiles
from crsbench_lib.standard import ReferenceStandard


@dataclass(frozen=True, eq=False)
class InsertionResult:
    """Outcome of :func:`insertion_test`.

    Attributes
    ----------
    existing : pandas.DataFrame
        Per existing encoder: crs_fixed_before, crs_fixed_after,
        fixed_displacement, rank_fixed_before, rank_fixed_after,
        crs_cohort_before, crs_cohort_after, cohort_displacement,
        rank_cohort_before, rank_cohort_after.
    candidates : pandas.DataFrame
        The candidates' fixed-reference scores (as :func:`score_profiles`).
    max_abs_fixed_displacement, max_abs_cohort_displacement : float
    """

    existing: pd.DataFrame
    candidates: pd.DataFrame
    max_abs_fixed_displacement: float
    max_abs_cohort_displacement: float


def insertion_test(existing: pd.DataFrame, candidates: pd.DataFrame, standard: ReferenceStandard) -> InsertionResult:
    """Compare fixed-reference and cohort-renormalised scores before and after inserting candidates.

    Parameters
    ----------
    existing : pandas.DataFrame
        Raw profiles of the encoders already scored (index encoder, columns D, C, L, R).
    candidates : pandas.DataFrame
        Raw profiles of the newcomers (names must not repeat existing ones).
    standard : ReferenceStandard
        The fixed standard; its weights also weigh the cohort-renormalised CRS.

    Returns
    -------
    InsertionResult

    Raises
    ------
    SchemaError
        If a candidate repeats an existing name, or profiles lack an axis or hold NaN.
    ReferenceStandardError
        If the standard's panel is empty.
    """
    clash = sorted(set(map(str, existing.index)) & set(map(str, candidates.index)))
    if clash:
        raise SchemaError(f"candidate '{clash[0]}' is already an existing encoder")
    if existing.index.has_duplicates or candidates.index.has_duplicates:
        raise SchemaError("profiles name an encoder twice")
    cohort = pd.concat([existing, candidates])
    names = [str(e) for e in existing.index]

    def by_name(table: pd.DataFrame) -> pd.DataFrame:
        return table.set_index("encoder").loc[names]

    fixed_before = by_name(score_profiles(existing, standard))
    fixed_after_all = score_profiles(cohort, standard)
    fixed_after = by_name(fixed_after_all)
    cohort_before = by_name(cohort_renormalised_scores(existing, standard))
    cohort_after = by_name(cohort_renormalised_scores(cohort, standard))

    table = pd.DataFrame(
        {
            "encoder": names,
            "crs_fixed_before": fixed_before["crs"].to_numpy(),
            "crs_fixed_after": fixed_after["crs"].to_numpy(),
            "rank_fixed_before": fixed_before["rank"].to_numpy(),
            "rank_fixed_after": fixed_after["rank"].to_numpy(),
            "crs_cohort_before": cohort_before["crs"].to_numpy(),
            "crs_cohort_after": cohort_after["crs"].to_numpy(),
            "rank_cohort_before": cohort_before["rank"].to_numpy(),
            "rank_cohort_after": cohort_after["rank"].to_numpy(),
        }
    )
    table["fixed_displacement"] = table["crs_fixed_after"] - table["crs_fixed_before"]
    table["cohort_displacement"] = table["crs_cohort_after"] - table["crs_cohort_before"]
    candidate_names = {str(c) for c in candidates.index}
    return InsertionResult(
        existing=table,
        candidates=fixed_after_all[fixed_after_all["encoder"].isin(candidate_names)].reset_index(drop=True),
        max_abs_fixed_displacement=float(np.abs(table["fixed_displacement"]).max()),
        max_abs_cohort_displacement=float(np.abs(table["cohort_displacement"]).max()),
    )
