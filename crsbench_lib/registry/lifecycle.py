"""Standards lifecycle: how many entries saturate each anchor, and when to re-version.

A normalised value at 0 or 1 sits on an anchor (method section 4): the
standard can no longer tell such candidates apart on that axis. Once it keeps
happening, the anchors need a new standard version (registering it changes no
entry under the older one). The rule used here: an anchor (axis and side) is
flagged when at least :data:`SATURATION_MIN_ENTRIES` current entries *and* at
least :data:`SATURATION_MIN_SHARE` of them sit on it.
"""

from __future__ import annotations

import math

import pandas as pd

from crsbench_lib.registry.entries import NORM_FIELDS
from crsbench_lib.scoring.crs import saturation_counts
from crsbench_lib.standard import AXES

#: An anchor is "repeatedly" saturated from this many entries on ...
SATURATION_MIN_ENTRIES: int = 2
#: ... when they are also at least this share of the standard's current entries.
SATURATION_MIN_SHARE: float = 0.2


def saturation_table(entries: pd.DataFrame) -> pd.DataFrame:
    """Per standard and axis, how many current entries sit on each anchor.

    Parameters
    ----------
    entries : pandas.DataFrame
        Output of :meth:`Registry.entries` (columns standard_version, norm_D ...
        norm_R, superseded_by).

    Returns
    -------
    pandas.DataFrame
        Columns ``standard_version, axis, at_worst, at_best, saturated, n``
        (counts from :func:`crsbench_lib.scoring.crs.saturation_counts`).
    """
    frames = []
    current = entries[entries["superseded_by"].isna()] if "superseded_by" in entries.columns else entries
    for version in dict.fromkeys(current["standard_version"]):
        normalised = current.loc[current["standard_version"] == version, list(NORM_FIELDS)]
        normalised = normalised.set_axis(list(AXES), axis=1)
        counts = saturation_counts(normalised).reset_index()
        counts.insert(0, "standard_version", version)
        frames.append(counts)
    columns = ["standard_version", "axis", "at_worst", "at_best", "saturated", "n"]
    if not frames:
        return pd.DataFrame(columns=columns)
    return pd.concat(frames, ignore_index=True)[columns]


def saturation_notes(
    table: pd.DataFrame,
    min_entries: int = SATURATION_MIN_ENTRIES,
    min_share: float = SATURATION_MIN_SHARE,
) -> dict[str, list[str]]:
    """One line per repeatedly saturated anchor, per standard.

    Parameters
    ----------
    table : pandas.DataFrame
        Output of :func:`saturation_table`.
    min_entries : int
        Least number of entries on an anchor to flag it.
    min_share : float
        Least share of the standard's current entries on an anchor to flag it.

    Returns
    -------
    dict
        ``{standard_version: [line, ...]}``; a standard with nothing to flag
        maps to an empty list.
    """
    notes: dict[str, list[str]] = {}
    for version, group in table.groupby("standard_version", sort=False):
        lines: list[str] = []
        for record in group.itertuples(index=False):
            for side, count in (("best", int(record.at_best)), ("worst", int(record.at_worst))):
                needed = max(min_entries, math.ceil(min_share * int(record.n)))
                if count >= needed:
                    lines.append(
                        f"{count} of {int(record.n)} entries sit on the {side} anchor of axis {record.axis}: "
                        f"the standard no longer separates them there; consider freezing a new standard version "
                        f"(entries under '{version}' stay as they are)"
                    )
        notes[str(version)] = lines
    return notes
