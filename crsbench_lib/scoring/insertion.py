"""Insertion test (method section 6, item 5).

Score the existing encoders, add candidates, score again. Under a fixed
reference standard every existing score is unchanged to the last bit
(displacement exactly 0), because a CRS depends only on the encoder's own
profile and the standard. Under cohort renormalisation the anchors (cohort
min/max) and the panel (the cohort) change with the cohort, so existing
scores move.

Ranks need two measures, because an incumbent's *position* can change for two
different reasons:

* **pairwise order changes** (:func:`order_changes`): pairs of incumbents that
  the two scorings order differently. This is what the fixed-reference claim is
  about: with every incumbent's score unchanged, their relative order cannot
  change, so the count is 0 under a fixed reference, always;
* **positional shifts**: incumbents whose rank in the whole list changed. A
  newcomer placed above an incumbent pushes it down one place without any
  incumbent pair changing order, so positions shift under a fixed reference
  too; that is arithmetic, not a rewritten history.
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
        rank_cohort_before, rank_cohort_after (ranks "after" are positions in
        the whole list, newcomers included).
    candidates : pandas.DataFrame
        The candidates' fixed-reference scores (as :func:`score_profiles`).
    max_abs_fixed_displacement, max_abs_cohort_displacement : float
        Largest absolute change of an existing encoder's CRS.
    fixed_order_changes, cohort_order_changes : int
        Pairs of existing encoders whose relative order changed
        (:func:`order_changes`); 0 under the fixed reference.
    fixed_positions_shifted, cohort_positions_shifted : int
        Existing encoders whose rank in the whole list (newcomers included)
        differs from their rank before the insertion.
    n_pairs : int
        Pairs of existing encoders, ``n (n - 1) / 2``.
    """

    existing: pd.DataFrame
    candidates: pd.DataFrame
    max_abs_fixed_displacement: float
    max_abs_cohort_displacement: float
    fixed_order_changes: int
    cohort_order_changes: int
    fixed_positions_shifted: int
    cohort_positions_shifted: int
    n_pairs: int


def order_changes(before: np.ndarray | pd.Series, after: np.ndarray | pd.Series) -> int:
    """Pairs of items that two score vectors order differently.

    A pair ``(i, j)`` counts when ``sign(before_i - before_j) !=
    sign(after_i - after_j)``: a reversal, or a tie that forms or breaks. It
    counts more than Kendall's (1938) discordant pairs, which leave out pairs
    tied in either vector; it is 0 exactly when the relative order of the
    items, ties included, is unchanged, whatever happened to their positions in
    a longer list.

    Parameters
    ----------
    before, after : array-like
        Scores of the same items, in the same order, shape (n,).

    Returns
    -------
    int
        Between 0 and ``n (n - 1) / 2``.

    Raises
    ------
    ValueError
        If the shapes differ or a score is NaN.

    Examples
    --------
    >>> order_changes([0.9, 0.5, 0.1], [0.8, 0.6, 0.2])  # every score moved, no pair swapped
    0
    >>> order_changes([0.9, 0.5, 0.1], [0.4, 0.6, 0.2])
    1
    """
    a = np.asarray(before, dtype=float).reshape(-1)
    b = np.asarray(after, dtype=float).reshape(-1)
    if a.shape != b.shape:
        raise ValueError(f"before and after must score the same items, found {a.size} and {b.size} scores")
    if np.isnan(a).any() or np.isnan(b).any():
        raise ValueError("scores must not be NaN")
    upper = np.triu_indices(a.size, k=1)
    sign_before = np.sign(a[:, None] - a[None, :])[upper]
    sign_after = np.sign(b[:, None] - b[None, :])[upper]
    return int(np.count_nonzero(sign_before != sign_after))


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
        fixed_order_changes=order_changes(table["crs_fixed_before"], table["crs_fixed_after"]),
        cohort_order_changes=order_changes(table["crs_cohort_before"], table["crs_cohort_after"]),
        fixed_positions_shifted=int((table["rank_fixed_before"] != table["rank_fixed_after"]).sum()),
        cohort_positions_shifted=int((table["rank_cohort_before"] != table["rank_cohort_after"]).sum()),
        n_pairs=len(names) * (len(names) - 1) // 2,
    )


#: Columns of :func:`rank_change_table`.
RANK_CHANGE_COLUMNS: tuple[str, ...] = (
    "scheme", "max_abs_crs_displacement", "pairwise_order_changes", "n_pairs", "positions_shifted", "n_existing",
)


def rank_change_table(result: InsertionResult) -> pd.DataFrame:
    """One row per scoring scheme: score displacement, pairwise order changes and positional shifts.

    Parameters
    ----------
    result : InsertionResult
        :func:`insertion_test` output.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`RANK_CHANGE_COLUMNS`, rows "fixed reference" and
        "cohort-renormalised".

    Examples
    --------
    >>> from crsbench_lib.results.synthetic import synthetic_results
    >>> from crsbench_lib.scoring import freeze_standard
    >>> from crsbench_lib.scoring.axes import encoder_profiles, raw_axes
    >>> table = synthetic_results(n_encoders=5, corruptions=("noise",), random_state=0)
    >>> profiles = encoder_profiles(raw_axes(table))
    >>> std = freeze_standard(table, "doc-v1", created="2026-01-01T00:00:00Z")
    >>> out = rank_change_table(insertion_test(profiles.iloc[:3], profiles.iloc[3:], std))
    >>> int(out.set_index("scheme").at["fixed reference", "pairwise_order_changes"])
    0
    """
    n_existing = len(result.existing)
    rows = [
        ("fixed reference", result.max_abs_fixed_displacement, result.fixed_order_changes, result.n_pairs,
         result.fixed_positions_shifted, n_existing),
        ("cohort-renormalised", result.max_abs_cohort_displacement, result.cohort_order_changes, result.n_pairs,
         result.cohort_positions_shifted, n_existing),
    ]
    return pd.DataFrame(rows, columns=list(RANK_CHANGE_COLUMNS))
