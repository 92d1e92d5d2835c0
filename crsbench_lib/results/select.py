"""Row selections of the results table that every layer shares.

Label fractions are compared with one tolerance, :data:`FRACTION_ATOL`, so that
a fraction written as ``0.1`` and one computed as ``0.1000000000000000`` select
the same rows everywhere.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: Two label fractions closer than this are the same fraction (0.1 vs 0.10000000000000002).
FRACTION_ATOL = 1e-9


def same_fraction(values: object, fraction: float) -> np.ndarray:
    """Boolean mask: which ``values`` equal ``fraction`` within :data:`FRACTION_ATOL`.

    Examples
    --------
    >>> same_fraction([1.0, 0.1 + 2e-17, 0.25], 0.1).tolist()
    [False, True, False]
    """
    return np.isclose(np.asarray(values, dtype=float), fraction, rtol=0.0, atol=FRACTION_ATOL)


def clean_mask(table: pd.DataFrame, arm: str | None = None, calibration: str | None = None) -> np.ndarray:
    """Boolean mask of the clean rows at 100% labels, optionally of one arm and one calibration.

    Parameters
    ----------
    table : pandas.DataFrame
        A results table (or a part of one with columns condition, label_fraction,
        and arm / calibration when those are given).
    arm : str, optional
        Keep only this arm.
    calibration : str, optional
        Keep only this calibration (``"none"``: the uncalibrated rows).

    Returns
    -------
    numpy.ndarray of bool
    """
    mask = (table["condition"].to_numpy() == "clean") & same_fraction(table["label_fraction"], 1.0)
    if arm is not None:
        mask &= table["arm"].to_numpy() == arm
    if calibration is not None:
        mask &= table["calibration"].to_numpy() == calibration
    return mask


def clean_rows(table: pd.DataFrame, arm: str | None = None, calibration: str | None = None) -> pd.DataFrame:
    """The clean rows at 100% labels (see :func:`clean_mask`), in table order.

    Examples
    --------
    >>> from crsbench_lib.results.synthetic import synthetic_results
    >>> table = synthetic_results(n_encoders=2, corruptions=("noise",), random_state=0)
    >>> set(clean_rows(table, arm="frozen")["condition"])
    {'clean'}
    """
    return table[clean_mask(table, arm=arm, calibration=calibration)]


__all__ = ["FRACTION_ATOL", "clean_mask", "clean_rows", "same_fraction"]
