"""Freezing a reference standard from a results table (method section 3).

The file format, loading and hashing live in :mod:`crsbench_lib.standard`; this
module is the one step that needs the scorer: it computes the panel's raw
profiles (:func:`freeze_standard`) and normalises them against the base
standard's anchors (:func:`freeze_profiles`, also used to refreeze a panel from
profiles recomputed on part of a table).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timezone

import pandas as pd

from crsbench_lib.errors import ReferenceStandardError
from crsbench_lib.results.validated import ValidatedResults, as_validated
from crsbench_lib.scoring.axes import encoder_profiles, standard_axes
from crsbench_lib.scoring.crs import normalise_array
from crsbench_lib.standard import AXES, ReferenceStandard, check_ece_bins, load_standard, load_template


def _base_standard(base: ReferenceStandard | str | os.PathLike[str] | None) -> ReferenceStandard:
    if base is None:
        return load_template()
    if isinstance(base, ReferenceStandard):
        return base
    return load_standard(base)


def _check_version(version: object) -> None:
    # Checked before the table is read, so that a bad name fails at once.
    if not isinstance(version, str) or not version.strip():
        raise ReferenceStandardError("field 'version' must be a non-empty string")


def freeze_profiles(
    profiles: pd.DataFrame,
    version: str,
    panel: Sequence[str] | None = None,
    base: ReferenceStandard | str | os.PathLike[str] | None = None,
    arm: str = "frozen",
    *,
    created: str | None = None,
    description: str | None = None,
    source_results_hash: str = "",
) -> ReferenceStandard:
    """Freeze a reference standard from raw encoder profiles.

    The anchors, weights, label fractions and ECE binning are copied from
    ``base``; the panel is the given encoders' raw profiles normalised against
    those anchors, ``s = clip((x - worst) / (best - worst), 0, 1)``. This is the
    step :func:`freeze_standard` takes after computing the profiles; analyses
    that recompute profiles on part of a table (leave-one-dataset-out) refreeze
    with it.

    Parameters
    ----------
    profiles : pandas.DataFrame
        Raw profiles indexed by encoder with columns ``D, C, L, R``
        (:func:`~crsbench_lib.scoring.axes.encoder_profiles`).
    version : str
        Version id of the new standard.
    panel : sequence of str, optional
        Panel members; default every encoder of ``profiles``.
    base : ReferenceStandard or path, optional
        Where the settings come from; default the shipped template.
    arm : {"frozen", "lora"}
        Arm the profiles come from (recorded).
    created : str, optional
        Creation time (ISO 8601); default now (UTC, seconds).
    description : str, optional
        Free text kept in the file.
    source_results_hash : str
        Hash of the results table the profiles come from (recorded).

    Returns
    -------
    ReferenceStandard

    Raises
    ------
    ReferenceStandardError
        If the version is empty, a panel name is not an encoder of
        ``profiles``, a name repeats, or the panel is empty.

    Examples
    --------
    >>> import pandas as pd
    >>> profiles = pd.DataFrame({"D": [0.9, 0.7], "C": [0.05, 0.1], "L": [0.95, 0.9], "R": [0.02, 0.08]},
    ...                         index=["a", "b"])
    >>> std = freeze_profiles(profiles, "demo-v1", created="2026-01-01T00:00:00Z")
    >>> std.version, std.panel_names, std.panel_profiles.shape
    ('demo-v1', ('a', 'b'), (2, 4))
    """
    _check_version(version)
    base_std = _base_standard(base)
    if panel is None:
        names = [str(n) for n in profiles.index]
    else:
        names = [str(n) for n in panel]
        unknown = [n for n in names if n not in profiles.index]
        if unknown:
            raise ReferenceStandardError(
                f"panel member '{unknown[0]}' is not an encoder of the results table (arm '{arm}'); "
                f"known: {', '.join(map(str, profiles.index))}"
            )
        if len(set(names)) != len(names):
            raise ReferenceStandardError("field 'panel' names a member twice")
    if not names:
        raise ReferenceStandardError("field 'panel' must name at least one encoder")
    normalised = normalise_array(profiles.loc[names, list(AXES)].to_numpy(dtype=float), base_std.worst, base_std.best)
    stamp = created if created is not None else datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return replace(
        base_std,
        version=version,
        created=stamp,
        description=description if description is not None else f"Frozen from a results table (arm {arm}).",
        arm=arm,
        panel_names=tuple(names),
        panel_profiles=normalised,
        source_results_hash=source_results_hash,
    )


def freeze_standard(
    results: pd.DataFrame | ValidatedResults,
    version: str,
    panel: Sequence[str] | None = None,
    base: ReferenceStandard | str | os.PathLike[str] | None = None,
    arm: str = "frozen",
    *,
    created: str | None = None,
    description: str | None = None,
) -> ReferenceStandard:
    """Freeze a reference standard from a results table.

    The anchors, weights, label fractions and ECE binning are copied from
    ``base``; the panel is the given encoders' profiles (method section 3),
    normalised against those anchors (:func:`freeze_profiles`).

    Parameters
    ----------
    results : pandas.DataFrame or ValidatedResults
        A results table (a DataFrame is validated here).
    version : str
        Version id of the new standard.
    panel : sequence of str, optional
        Panel members; default every encoder of the arm.
    base : ReferenceStandard or path, optional
        Where the settings come from; default the shipped template.
    arm : {"frozen", "lora"}
        Arm whose profiles form the panel.
    created : str, optional
        Creation time (ISO 8601); default now (UTC, seconds).
    description : str, optional
        Free text kept in the file.

    Returns
    -------
    ReferenceStandard

    Raises
    ------
    SchemaError
        If the table is malformed or lacks rows the axes need.
    ReferenceStandardError
        If the version is empty, a panel name is not an encoder of the table,
        a name repeats, the panel is empty, or the ECE binning differs.

    Examples
    --------
    >>> from crsbench_lib.results.synthetic import synthetic_results
    >>> std = freeze_standard(synthetic_results(n_encoders=3, seeds=(0,)), "demo-v1",
    ...                       created="2026-01-01T00:00:00Z")
    >>> std.version, len(std.panel_names), std.arm
    ('demo-v1', 3, 'frozen')
    """
    _check_version(version)
    base_std = _base_standard(base)
    table = as_validated(results)
    check_ece_bins(table.frame, base_std, arm)
    profiles = encoder_profiles(standard_axes(table, base_std, arm=arm))
    return freeze_profiles(
        profiles,
        version,
        panel=panel,
        base=base_std,
        arm=arm,
        created=created,
        description=description,
        source_results_hash=table.hash,
    )


__all__ = ["freeze_profiles", "freeze_standard"]
