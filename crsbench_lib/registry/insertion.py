"""Insertion into a registry: what new candidates do to the published entries.

Under a fixed reference standard an entry's CRS depends on its own rows and the
standard only, so inserting candidates displaces no published score (crs-method
section 6, item 5): the CRS of every entry listed before an insertion is the
same double after it. Ranks can still shift by the number of newcomers placed
above, but the order *among* the published entries is unchanged. The
cohort-renormalised alternative (anchors and panel from the current cohort)
moves scores; :func:`renormalised_displacement` measures that contrast on the
same profiles.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from crsbench_lib.errors import RegistryError
from crsbench_lib.registry.entries import RAW_FIELDS, candidate_labels, same_float
from crsbench_lib.scoring.axes import AXES
from crsbench_lib.scoring.crs import cohort_renormalised_scores, rank_descending
from crsbench_lib.scoring.standard import ReferenceStandard


def _one_standard(entries: pd.DataFrame, what: str) -> str:
    versions = entries["standard_version"].unique()
    if len(versions) != 1:
        raise RegistryError(f"{what} must hold the entries of one standard, found {len(versions)}")
    return str(versions[0])


def displacement_table(before: pd.DataFrame, after: pd.DataFrame) -> pd.DataFrame:
    """CRS and rank of every entry listed before an insertion, before and after it.

    Parameters
    ----------
    before, after : pandas.DataFrame
        :meth:`Registry.entries` of one standard, taken before and after the
        insertion.

    Returns
    -------
    pandas.DataFrame
        One row per entry listed before, in its former rank order: entry_id,
        candidate, crs_before, crs_after, crs_displacement (after - before),
        bit_identical (the two doubles are the same bits), rank_before,
        rank_after (among all entries after), rank_among_published (rank of the
        new CRS among the previously listed entries only) and
        rank_displacement_among_published (that minus rank_before).

    Raises
    ------
    RegistryError
        If the snapshots hold several standards or different ones, or an entry
        listed before is missing after (superseded by a correction).
    """
    version = _one_standard(before, "before")
    if _one_standard(after, "after") != version:
        raise RegistryError("before and after must hold the same standard")
    old = before.set_index("entry_id")
    new = after.set_index("entry_id")
    missing = [int(i) for i in old.index if i not in new.index]
    if missing:
        raise RegistryError(f"entry #{missing[0]} listed before is no longer current (superseded by a correction)")
    crs_before = old["crs"].to_numpy(dtype=float)
    crs_after = new.loc[old.index, "crs"].to_numpy(dtype=float)
    rank_before = rank_descending(crs_before)
    among = rank_descending(crs_after)
    table = pd.DataFrame(
        {
            "entry_id": old.index.astype("int64"),
            "candidate": candidate_labels(old.reset_index()).to_numpy(),
            "crs_before": crs_before,
            "crs_after": crs_after,
            "crs_displacement": crs_after - crs_before,
            "bit_identical": [same_float(a, b) for a, b in zip(crs_before, crs_after, strict=True)],
            "rank_before": rank_before,
            "rank_after": new.loc[old.index, "rank"].to_numpy(dtype=np.int64),
            "rank_among_published": among,
            "rank_displacement_among_published": among - rank_before,
        }
    )
    return table.sort_values(["rank_before", "entry_id"], kind="mergesort").reset_index(drop=True)


def inserted_table(before: pd.DataFrame, after: pd.DataFrame) -> pd.DataFrame:
    """The entries listed after an insertion that were not listed before (the newcomers).

    Returns
    -------
    pandas.DataFrame
        entry_id, candidate, crs, rank (among all entries after), sorted by rank.
    """
    fresh = after[~after["entry_id"].isin(before["entry_id"])].copy()
    fresh["candidate"] = candidate_labels(fresh)
    return fresh[["entry_id", "candidate", "crs", "rank"]].sort_values("rank", kind="mergesort").reset_index(drop=True)


def _profiles(entries: pd.DataFrame) -> pd.DataFrame:
    profiles = entries[list(RAW_FIELDS)].set_axis(list(AXES), axis=1)
    profiles.index = pd.Index(candidate_labels(entries).to_numpy(), name="encoder")
    return profiles.astype(float)


def renormalised_displacement(
    before: pd.DataFrame, after: pd.DataFrame, weights: ReferenceStandard | Mapping[str, float]
) -> pd.DataFrame:
    """The same insertion scored the cohort-renormalised way (the contrast).

    The published entries' raw profiles are scored against the cohort of the
    entries before, then against the cohort after (anchors = the cohort's
    per-axis min and max, panel = the cohort itself).

    Parameters
    ----------
    before, after : pandas.DataFrame
        :meth:`Registry.entries` snapshots of one standard.
    weights : ReferenceStandard or mapping
        Component weights (take the standard's).

    Returns
    -------
    pandas.DataFrame
        entry_id, candidate, crs_before, crs_after, crs_displacement, rank_before,
        rank_after (among the published entries only), rank_displacement.
    """
    old = before.reset_index(drop=True)
    scored_before = cohort_renormalised_scores(_profiles(old), weights).set_index("encoder")
    scored_after = cohort_renormalised_scores(_profiles(after.reset_index(drop=True)), weights).set_index("encoder")
    labels = candidate_labels(old).to_numpy()
    crs_before = scored_before.loc[labels, "crs"].to_numpy(dtype=float)
    crs_after = scored_after.loc[labels, "crs"].to_numpy(dtype=float)
    rank_before = rank_descending(crs_before)
    rank_after = rank_descending(crs_after)
    table = pd.DataFrame(
        {
            "entry_id": old["entry_id"].astype("int64").to_numpy(),
            "candidate": labels,
            "crs_before": crs_before,
            "crs_after": crs_after,
            "crs_displacement": crs_after - crs_before,
            "rank_before": rank_before,
            "rank_after": rank_after,
            "rank_displacement": rank_after - rank_before,
        }
    )
    return table.sort_values(["rank_before", "entry_id"], kind="mergesort").reset_index(drop=True)


def displacement_summary(fixed: pd.DataFrame, renormalised: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per scoring scheme: how far the published entries moved.

    Returns
    -------
    pandas.DataFrame
        Index scheme ("fixed reference", "cohort-renormalised"), columns
        n_published, max_abs_crs_displacement, n_scores_moved,
        mean_abs_rank_displacement (among the published entries).
    """
    rows = {
        "fixed reference": {
            "n_published": len(fixed),
            "max_abs_crs_displacement": float(np.abs(fixed["crs_displacement"]).max()) if len(fixed) else 0.0,
            "n_scores_moved": int((~fixed["bit_identical"]).sum()),
            "mean_abs_rank_displacement": float(np.abs(fixed["rank_displacement_among_published"]).mean())
            if len(fixed) else 0.0,
        }
    }
    if renormalised is not None:
        rows["cohort-renormalised"] = {
            "n_published": len(renormalised),
            "max_abs_crs_displacement": float(np.abs(renormalised["crs_displacement"]).max())
            if len(renormalised) else 0.0,
            "n_scores_moved": int(
                sum(not same_float(a, b) for a, b in zip(renormalised["crs_before"], renormalised["crs_after"],
                                                          strict=True))
            ),
            "mean_abs_rank_displacement": float(np.abs(renormalised["rank_displacement"]).mean())
            if len(renormalised) else 0.0,
        }
    frame = pd.DataFrame.from_dict(rows, orient="index")
    frame.index.name = "scheme"
    return frame
