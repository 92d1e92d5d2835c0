"""Insertion into a registry: what new candidates do to the published entries.

Under a fixed reference standard an entry's CRS depends on its own rows and the
standard only, so inserting candidates displaces no published score (method
section 6, item 5): the CRS of every entry listed before an insertion is the
same double after it. Two rank measures keep apart what the claim covers and
what it does not (:mod:`crsbench_lib.scoring.insertion`): the *pairwise order
changes* among the published entries (:func:`~crsbench_lib.scoring.insertion.order_changes`),
which a fixed reference keeps at 0, and the *positional shifts* (an entry's
rank in the whole list), which newcomers placed above cause under any scheme.
The cohort-renormalised alternative (anchors and panel from the current cohort)
moves scores and can reorder published entries; :func:`renormalised_displacement`
measures that contrast on the same profiles.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from crsbench_lib.errors import RegistryError
from crsbench_lib.registry.entries import RAW_FIELDS, candidate_labels, same_float
from crsbench_lib.registry.store import AddReport, Registry, select_encoders
from crsbench_lib.results.schema import validate_results
from crsbench_lib.scoring.axes import raw_axes
from crsbench_lib.scoring.crs import cohort_renormalised_scores
from crsbench_lib.scoring.rank_statistics import descending_ranks
from crsbench_lib.scoring.insertion import order_changes
from crsbench_lib.standard import AXES, ReferenceStandard


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
        rank_change_among_published (rank_before minus that: positive = higher).

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
    rank_before = descending_ranks(crs_before, ties="min")
    among = descending_ranks(crs_after, ties="min")
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
            "rank_change_among_published": rank_before - among,
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
        rank_after (among all entries after), rank_among_published (rank of the
        new CRS among the previously listed entries only) and
        rank_change_among_published (rank_before minus that: positive = higher): the columns
        of :func:`displacement_table`, less ``bit_identical``.
    """
    old = before.reset_index(drop=True)
    scored_before = cohort_renormalised_scores(_profiles(old), weights).set_index("encoder")
    scored_after = cohort_renormalised_scores(_profiles(after.reset_index(drop=True)), weights).set_index("encoder")
    labels = candidate_labels(old).to_numpy()
    crs_before = scored_before.loc[labels, "crs"].to_numpy(dtype=float)
    crs_after = scored_after.loc[labels, "crs"].to_numpy(dtype=float)
    rank_before = descending_ranks(crs_before, ties="min")
    among = descending_ranks(crs_after, ties="min")
    table = pd.DataFrame(
        {
            "entry_id": old["entry_id"].astype("int64").to_numpy(),
            "candidate": labels,
            "crs_before": crs_before,
            "crs_after": crs_after,
            "crs_displacement": crs_after - crs_before,
            "rank_before": rank_before,
            "rank_after": scored_after.loc[labels, "rank"].to_numpy(dtype=np.int64),
            "rank_among_published": among,
            "rank_change_among_published": rank_before - among,
        }
    )
    return table.sort_values(["rank_before", "entry_id"], kind="mergesort").reset_index(drop=True)


def _scheme_row(table: pd.DataFrame, moved: int) -> dict[str, object]:
    if not len(table):
        return {"n_published": 0, "max_abs_crs_displacement": 0.0, "n_scores_moved": 0, "n_pairs": 0,
                "pairwise_order_changes": 0, "n_positions_shifted": 0}
    n = len(table)
    return {
        "n_published": n,
        "max_abs_crs_displacement": float(np.abs(table["crs_displacement"]).max()),
        "n_scores_moved": moved,
        "n_pairs": n * (n - 1) // 2,
        "pairwise_order_changes": order_changes(table["crs_before"], table["crs_after"]),
        "n_positions_shifted": int((table["rank_after"] != table["rank_before"]).sum()),
    }


def displacement_summary(fixed: pd.DataFrame, renormalised: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per scoring scheme: how far the published entries moved.

    Parameters
    ----------
    fixed : pandas.DataFrame
        :func:`displacement_table` (fixed reference).
    renormalised : pandas.DataFrame, optional
        :func:`renormalised_displacement` (the contrast).

    Returns
    -------
    pandas.DataFrame
        Index scheme ("fixed reference", "cohort-renormalised"), columns
        n_published, max_abs_crs_displacement, n_scores_moved (CRS values that
        are not the same double), n_pairs (pairs of published entries),
        pairwise_order_changes (pairs of published entries ordered differently
        after the insertion: 0 under a fixed reference) and n_positions_shifted
        (published entries whose rank in the whole list changed, which a
        newcomer placed above causes under either scheme).

    Examples
    --------
    >>> before = pd.DataFrame({"crs_before": [0.6, 0.4], "crs_after": [0.6, 0.4], "crs_displacement": [0.0, 0.0],
    ...                        "bit_identical": [True, True], "rank_before": [1, 2], "rank_after": [2, 3]})
    >>> row = displacement_summary(before).loc["fixed reference"]
    >>> int(row["pairwise_order_changes"]), int(row["n_positions_shifted"])
    (0, 2)
    """
    rows = {"fixed reference": _scheme_row(fixed, int((~fixed["bit_identical"].astype(bool)).sum()))}
    if renormalised is not None:
        moved = sum(not same_float(a, b) for a, b in zip(renormalised["crs_before"], renormalised["crs_after"],
                                                         strict=True))
        rows["cohort-renormalised"] = _scheme_row(renormalised, int(moved))
    frame = pd.DataFrame.from_dict(rows, orient="index")
    frame.index.name = "scheme"
    return frame


def strongest_encoders(results: pd.DataFrame, n: int, arm: str = "frozen") -> list[str]:
    """The ``n`` encoders with the highest raw discrimination ``D`` (ties by name).

    The natural "new candidates" of an insertion demonstration: the strongest
    arrivals are the ones that would disturb a cohort-renormalised ranking most.

    Raises
    ------
    RegistryError
        If ``n`` is not between 1 and the number of encoders minus one (someone
        must be left to publish first).
    """
    raw = raw_axes(results, arm=arm)
    discrimination = raw.groupby(["encoder", "dataset"], sort=True)["D"].mean().groupby(level="encoder").mean()
    if not 1 <= n < len(discrimination):
        raise RegistryError(f"parameter 'n': need 1 <= n < {len(discrimination)} (encoders in arm '{arm}'), got {n}")
    ordered = sorted(discrimination.items(), key=lambda item: (-float(item[1]), str(item[0])))
    return [str(name) for name, _ in ordered[:n]]


@dataclass
class InsertionRun:
    """A registration followed by an insertion, and what it did to the published entries.

    Attributes
    ----------
    standard_version : str
        The standard everything was scored under.
    published : list of str
        Encoders registered first.
    newcomers : list of str
        Candidate labels inserted afterwards.
    before, after : pandas.DataFrame
        :meth:`Registry.entries` of the standard before and after the insertion.
    displacement : pandas.DataFrame
        :func:`displacement_table` (fixed reference).
    renormalised : pandas.DataFrame
        :func:`renormalised_displacement` (the contrast).
    inserted : pandas.DataFrame
        :func:`inserted_table`.
    summary : pandas.DataFrame
        :func:`displacement_summary` of both schemes.
    reports : list of AddReport
        The additions, in order.
    """

    standard_version: str
    published: list[str]
    newcomers: list[str]
    before: pd.DataFrame
    after: pd.DataFrame
    displacement: pd.DataFrame
    renormalised: pd.DataFrame
    inserted: pd.DataFrame
    summary: pd.DataFrame
    reports: list[AddReport] = field(default_factory=list)


def register_then_insert(
    registry: Registry,
    results: pd.DataFrame,
    standard: ReferenceStandard | str | os.PathLike[str],
    held_out: Sequence[str],
    *,
    arm: str = "frozen",
    lora_candidates: bool = True,
) -> InsertionRun:
    """Publish a cohort minus ``held_out``, then insert the held-out and adapted candidates.

    Parameters
    ----------
    registry : Registry
        Where to publish (a fresh one shows the clearest picture; an existing
        one works too: identical additions are idempotent).
    results : pandas.DataFrame
        The results table.
    standard : ReferenceStandard, path or str
        As for :meth:`Registry.add`.
    held_out : sequence of str
        Encoders of ``arm`` kept out of the first registration and inserted
        afterwards as new candidates (may be empty when ``lora_candidates``).
    arm : str
        The arm of the first registration.
    lora_candidates : bool
        Also insert the ``lora`` arm of every encoder that has one, as further
        new candidates (only when ``arm`` is ``frozen``).

    Returns
    -------
    InsertionRun

    Raises
    ------
    RegistryError
        If a held-out name is not an encoder of the arm, nothing would be
        published first, or there is no newcomer at all.
    """
    table = validate_results(results)
    everyone = select_encoders(table, arm)
    held = select_encoders(table, arm, held_out) if len(held_out) else []
    published = [e for e in everyone if e not in held]
    if not published:
        raise RegistryError("parameter 'held_out': every encoder is held out; nothing would be published first")
    adapted = sorted(set(table.loc[table["arm"] == "lora", "encoder"].astype(str))) if (
        lora_candidates and arm == "frozen") else []
    if not held and not adapted:
        raise RegistryError("no new candidates: hold some encoders out, or give the table a lora arm")
    first = registry.add(table, standard, encoders=published, arm=arm)
    version = first.standard.version
    before = registry.entries(version)
    reports = [first]
    if held:
        reports.append(registry.add(table, version, encoders=held, arm=arm))
    if adapted:
        reports.append(registry.add(table, version, encoders=adapted, arm="lora"))
    after = registry.entries(version)
    fixed = displacement_table(before, after)
    renormalised = renormalised_displacement(before, after, registry.get_standard(version))
    inserted = inserted_table(before, after)
    return InsertionRun(
        standard_version=version,
        published=published,
        newcomers=list(inserted["candidate"]),
        before=before,
        after=after,
        displacement=fixed,
        renormalised=renormalised,
        inserted=inserted,
        summary=displacement_summary(fixed, renormalised),
        reports=reports,
    )
