"""The Clinical Reliability Score against a fixed reference (method sections 4-5).

For a normalised profile ``s`` in [0, 1]^4 and the panel ``P`` (k normalised
profiles stored in the reference standard)::

    s_a       = clip((x_a - worst_a) / (best_a - worst_a), 0, 1)
    dominance = |{p in P : s >= p on every axis and s > p on at least one}| / k
                (Pareto; or, on a standard with noise-aware dominance,
                 (1/k) sum_p prod_a Phi((s_a - p_a) / (sqrt(2) sigma_a)))
    balance   = 1 - ||1 - s||_2 / 2
    floor     = min_a s_a
    CRS       = w_dom * dominance + w_bal * balance + w_floor * floor

Every step is row-wise: a candidate's CRS depends on its own profile and the
standard only, so scoring more candidates at once (or inserting new ones) does
not change any other candidate's score, to the last bit. The arithmetic is
written element by element (no reductions whose blocking could depend on the
number of rows) to keep that guarantee exact.

The *cohort-renormalised* alternative replaces the anchors by the cohort's
per-axis minimum and maximum (in the axis' direction) and the panel by the
cohort itself; it exists to show, in the insertion test, what fixed anchors
prevent.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import numpy as np
import pandas as pd
from scipy.special import ndtr

from crsbench_lib.errors import ReferenceStandardError, SchemaError
from crsbench_lib.results.validated import ValidatedResults, as_validated
from crsbench_lib.scoring.axes import encoder_profiles, standard_axes
from crsbench_lib.scoring.rank_statistics import descending_ranks
from crsbench_lib.standard import AXES, HIGHER_IS_BETTER, ReferenceStandard, as_standard, check_ece_bins

COMPONENTS: tuple[str, ...] = ("dominance", "balance", "floor")
NORMALISED_COLUMNS: tuple[str, ...] = tuple(f"s_{a}" for a in AXES)
COHORT_VERSION = "cohort-renormalised"
# Rows per block in the dominance test, so (rows x panel x 4) booleans stay small.
_BLOCK_CELLS = 1 << 22


def normalise_array(values: np.ndarray, worst: np.ndarray, best: np.ndarray) -> np.ndarray:
    """Fixed-anchor normalisation ``clip((x - worst) / (best - worst), 0, 1)``.

    Parameters
    ----------
    values : numpy.ndarray
        Raw profiles, shape (..., 4) in axis order D, C, L, R.
    worst, best : numpy.ndarray
        Anchors, shape (4,); ``best < worst`` on lower-is-better axes.

    Returns
    -------
    numpy.ndarray
        Same shape, in [0, 1] (NaN stays NaN).
    """
    x = np.asarray(values, dtype=float)
    worst = np.asarray(worst, dtype=float)
    best = np.asarray(best, dtype=float)
    return np.clip((x - worst) / (best - worst), 0.0, 1.0)


def _profile_array(profiles: pd.DataFrame | np.ndarray, what: str) -> np.ndarray:
    if isinstance(profiles, pd.DataFrame):
        missing = [a for a in AXES if a not in profiles.columns]
        if missing:
            raise SchemaError(f"{what} lack axis column{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
        array = profiles[list(AXES)].to_numpy(dtype=float)
    else:
        array = np.asarray(profiles, dtype=float)
        if array.ndim != 2 or array.shape[1] != len(AXES):
            raise SchemaError(f"{what} must have shape (n, {len(AXES)}), found {array.shape}")
    if np.isnan(array).any():
        raise SchemaError(f"{what} contain NaN")
    return array


def _unique_names(profiles: pd.DataFrame) -> None:
    if profiles.index.has_duplicates:
        repeated = profiles.index[profiles.index.duplicated()][0]
        raise SchemaError(f"profiles name encoder '{repeated}' twice")


def _normalised_array(normalised: pd.DataFrame | np.ndarray) -> np.ndarray:
    if isinstance(normalised, pd.DataFrame) and all(c in normalised.columns for c in NORMALISED_COLUMNS):
        normalised = normalised[list(NORMALISED_COLUMNS)].to_numpy(dtype=float)
    return _profile_array(normalised, "normalised profiles")


def normalise(profiles: pd.DataFrame, standard: ReferenceStandard) -> pd.DataFrame:
    """Normalise raw encoder profiles against a standard's fixed anchors.

    Parameters
    ----------
    profiles : pandas.DataFrame
        Raw profiles (index encoder, columns D, C, L, R).
    standard : ReferenceStandard

    Returns
    -------
    pandas.DataFrame
        Same index, columns D, C, L, R in [0, 1].
    """
    values = normalise_array(_profile_array(profiles, "profiles"), standard.worst, standard.best)
    return pd.DataFrame(values, index=profiles.index, columns=list(AXES))


def _pareto_dominates(s: np.ndarray, p: np.ndarray) -> np.ndarray:
    """(n, k) booleans: row i of ``s`` is >= member j on every axis and > on at least one."""
    geq = (s[:, None, :] >= p[None, :, :]).all(axis=2)
    gt = (s[:, None, :] > p[None, :, :]).any(axis=2)
    return geq & gt


def _pareto_counts(s: np.ndarray, p: np.ndarray) -> np.ndarray:
    """How many panel rows each row of ``s`` Pareto-dominates (integers, exact; in blocks of rows)."""
    k = p.shape[0]
    counts = np.empty(s.shape[0], dtype=np.int64)
    block = max(1, _BLOCK_CELLS // max(1, k * s.shape[1]))
    for start in range(0, s.shape[0], block):
        counts[start : start + block] = _pareto_dominates(s[start : start + block], p).sum(axis=1)
    return counts


def dominance_probability(normalised: np.ndarray, member: np.ndarray, noise_sd: np.ndarray) -> np.ndarray:
    """Smoothed dominance of each row over one panel member: the Pareto step with the axes' noise as its width.

    ``prod_a Phi((s_a - p_a) / (sqrt(2) * sigma_a))`` (method section 9,
    amendments 20 and 29). It would be the probability that the candidate's
    true profile lies above the member's on every axis if both observed values
    carried *independent* normal errors of standard deviation ``sigma_a``; the
    book's design is paired (the same test images and seeds for every
    encoder), so the errors are correlated, a pair's difference varies less,
    and the term is a smoothed count rather than that probability. As
    ``sigma -> 0`` it tends to the Pareto indicator (except on exact ties,
    where it is ``1/2`` per tied axis).

    Parameters
    ----------
    normalised : numpy.ndarray
        Shape (n, 4).
    member : numpy.ndarray
        One panel profile, shape (4,).
    noise_sd : numpy.ndarray
        Per-axis standard error of a normalised axis, shape (4,), > 0.

    Returns
    -------
    numpy.ndarray
        Shape (n,), in [0, 1].

    Examples
    --------
    >>> member, sigma = np.full(4, 0.5), np.full(4, 0.1)
    >>> float(dominance_probability(member[None], member, sigma)[0])  # a tie on every axis: (1/2)^4
    0.0625
    >>> s = np.array([[0.6, 0.5, 0.5, 0.5]])  # 0.1 above on D: Phi(0.1 / (sqrt(2) 0.1)) = 0.760, times (1/2)^3
    >>> float(dominance_probability(s, member, sigma)[0].round(3))
    0.095
    """
    scale = np.sqrt(2.0) * np.asarray(noise_sd, dtype=float)
    z = (np.asarray(normalised, dtype=float) - np.asarray(member, dtype=float)[None, :]) / scale[None, :]
    phi = ndtr(z)
    # Explicit product over the axes, left to right: bit-identical per row whatever the row count (and, on the
    # four axes, the same products as ever); any number of axes, so the knock-out can leave one out.
    out = phi[:, 0]
    for j in range(1, phi.shape[1]):
        out = out * phi[:, j]
    return out


def dominance_matrix(normalised: np.ndarray, panel: np.ndarray, noise_sd: np.ndarray | None = None) -> np.ndarray:
    """Dominance of every row over every panel member, shape (n, k).

    Pareto (``noise_sd`` None): 1.0 where the row dominates the member, else
    0.0; noise-aware: :func:`dominance_probability` per member.
    """
    s = np.asarray(normalised, dtype=float)
    p = np.asarray(panel, dtype=float)
    if noise_sd is None:
        return _pareto_dominates(s, p).astype(float)
    return np.column_stack([dominance_probability(s, p[j], noise_sd) for j in range(p.shape[0])])


def dominance_shares(normalised: np.ndarray, panel: np.ndarray, noise_sd: np.ndarray | None = None) -> np.ndarray:
    """Share of panel profiles each row dominates.

    Pareto (the study's form, ``noise_sd`` None): ``s`` dominates ``p`` when
    ``s >= p`` on every axis and ``s > p`` on at least one (a profile equal to
    a panel member does not dominate it). Noise-aware (``noise_sd`` given, the
    standard's ``dominance.noise_sd``): the mean over the panel of
    :func:`dominance_probability`, a smooth function of the profile, so that
    a candidate within its own noise of a member counts about half of it in
    every resample instead of all or nothing (method section 9, amendment 20).

    Parameters
    ----------
    normalised : numpy.ndarray
        Shape (n, 4).
    panel : numpy.ndarray
        Shape (k, 4), k >= 1.
    noise_sd : numpy.ndarray, optional
        Per-axis standard error of a normalised axis, shape (4,).

    Returns
    -------
    numpy.ndarray
        Shape (n,), in [0, 1].

    Examples
    --------
    >>> s = np.array([[0.6, 0.6, 0.6, 0.6], [0.5, 0.5, 0.5, 0.5]])
    >>> dominance_shares(s, np.array([[0.5, 0.5, 0.5, 0.5]])).tolist()
    [1.0, 0.0]
    >>> dominance_shares(s, np.array([[0.5, 0.5, 0.5, 0.5]]), np.full(4, 0.01)).round(4).tolist()
    [1.0, 0.0625]
    """
    s = np.asarray(normalised, dtype=float)
    p = np.asarray(panel, dtype=float)
    k = p.shape[0]
    if noise_sd is None:
        return _pareto_counts(s, p) / k
    total = np.zeros(s.shape[0])
    for j in range(k):  # one member at a time: the sum's order never depends on the row count
        total = total + dominance_probability(s, p[j], noise_sd)
    return total / k


def balance_scores(normalised: np.ndarray) -> np.ndarray:
    """``1 - ||1 - s||_2 / 2`` per row (1 at the ideal profile, 0 at the origin)."""
    gap = 1.0 - np.asarray(normalised, dtype=float)
    # Explicit sum over the four axes: bit-identical per row whatever the row count.
    squares = gap[:, 0] * gap[:, 0] + gap[:, 1] * gap[:, 1] + gap[:, 2] * gap[:, 2] + gap[:, 3] * gap[:, 3]
    return 1.0 - np.sqrt(squares) / 2.0


def floor_scores(normalised: np.ndarray) -> np.ndarray:
    """``min_a s_a`` per row (over however many axes the array holds; a minimum is exact in any order)."""
    s = np.asarray(normalised, dtype=float)
    out = s[:, 0]
    for j in range(1, s.shape[1]):
        out = np.minimum(out, s[:, j])
    return out


def _weight_array(weights: Mapping[str, float] | np.ndarray | ReferenceStandard) -> np.ndarray:
    if hasattr(weights, "weight_vector"):
        return np.asarray(weights.weight_vector, dtype=float)  # type: ignore[union-attr]
    if isinstance(weights, Mapping):
        missing = [c for c in COMPONENTS if c not in weights]
        if missing:
            raise ReferenceStandardError(f"field 'weights' lacks {', '.join(missing)}")
        w = np.array([float(weights[c]) for c in COMPONENTS])
    else:
        w = np.asarray(weights, dtype=float).reshape(-1)
        if w.shape != (len(COMPONENTS),):
            raise ReferenceStandardError(f"field 'weights' must have {len(COMPONENTS)} entries, found {w.shape[0]}")
    if (w < 0).any() or not np.isfinite(w).all() or abs(w.sum() - 1.0) > 1e-9:
        raise ReferenceStandardError(f"field 'weights' must be >= 0 and sum to 1, found {w.tolist()}")
    return w


def component_arrays(
    normalised: np.ndarray, panel: np.ndarray, weights: np.ndarray, noise_sd: np.ndarray | None = None
) -> np.ndarray:
    """Dominance, balance, floor and CRS as one (n, 4) array (vectorised core).

    ``noise_sd``: the standard's noise-aware dominance (``ReferenceStandard.dominance_noise``),
    ``None`` for the Pareto count.
    """
    dominance = dominance_shares(normalised, panel, noise_sd)
    balance = balance_scores(normalised)
    floor = floor_scores(normalised)
    crs = weights[0] * dominance + weights[1] * balance + weights[2] * floor
    return np.column_stack([dominance, balance, floor, crs])


def crs_components(
    normalised: pd.DataFrame | np.ndarray,
    panel: pd.DataFrame | np.ndarray,
    weights: Mapping[str, float] | np.ndarray | ReferenceStandard,
) -> pd.DataFrame:
    """Dominance, balance, floor and CRS of normalised profiles against a panel.

    Parameters
    ----------
    normalised : pandas.DataFrame or numpy.ndarray
        Normalised profiles (columns D, C, L, R, or s_D ... s_R), shape (n, 4).
    panel : pandas.DataFrame or numpy.ndarray
        The panel's normalised profiles, shape (k, 4), k >= 1.
    weights : mapping, array or ReferenceStandard
        Weights of dominance, balance and floor (non-negative, sum 1). A
        standard also brings its dominance form.

    Returns
    -------
    pandas.DataFrame
        Columns dominance, balance, floor, crs; the index of ``normalised`` if
        it is a DataFrame.

    Raises
    ------
    ReferenceStandardError
        If the panel is empty or the weights are invalid.
    """
    s = _normalised_array(normalised)
    p = _profile_array(panel, "panel profiles")
    if p.shape[0] == 0:
        raise ReferenceStandardError("the reference panel is empty: dominance is undefined")
    noise = weights.dominance_noise if isinstance(weights, ReferenceStandard) else None
    values = component_arrays(s, p, _weight_array(weights), noise)
    index = normalised.index if isinstance(normalised, pd.DataFrame) else None
    return pd.DataFrame(values, index=index, columns=[*COMPONENTS, "crs"])


def _ranked_table(profiles: pd.DataFrame, normalised: np.ndarray, components: np.ndarray, version: str) -> pd.DataFrame:
    table = pd.DataFrame({"encoder": [str(e) for e in profiles.index]})
    for a in AXES:
        table[a] = profiles[a].to_numpy(dtype=float)
    for j, name in enumerate(NORMALISED_COLUMNS):
        table[name] = normalised[:, j]
    for j, name in enumerate([*COMPONENTS, "crs"]):
        table[name] = components[:, j]
    table["rank"] = descending_ranks(components[:, 3], ties="min").astype("int64")
    table["standard_version"] = version
    order = np.lexsort((table["encoder"].to_numpy(), table["rank"].to_numpy()))
    return table.iloc[order].reset_index(drop=True)


def score_profiles(profiles: pd.DataFrame, standard: ReferenceStandard) -> pd.DataFrame:
    """Score raw encoder profiles against a reference standard.

    Parameters
    ----------
    profiles : pandas.DataFrame
        Raw profiles, index encoder, columns D, C, L, R (see
        :func:`~crsbench_lib.scoring.axes.encoder_profiles`).
    standard : ReferenceStandard
        Fixed anchors, weights and a non-empty panel.

    Returns
    -------
    pandas.DataFrame
        Sorted by rank: encoder, D, C, L, R (raw), s_D, s_C, s_L, s_R
        (normalised), dominance, balance, floor, crs, rank (1 = highest CRS;
        ties share the best rank) and standard_version.

    Raises
    ------
    ReferenceStandardError
        If the standard's panel is empty.
    SchemaError
        If a profile lacks an axis or holds NaN.
    """
    panel = standard.require_panel()
    _unique_names(profiles)
    raw = _profile_array(profiles, "profiles")
    s = normalise_array(raw, standard.worst, standard.best)
    components = component_arrays(s, panel, standard.weight_vector, standard.dominance_noise)
    return _ranked_table(profiles, s, components, standard.version)


def score_results(
    results: pd.DataFrame | ValidatedResults,
    standard: ReferenceStandard | str | os.PathLike[str] | None,
    arm: str = "frozen",
) -> pd.DataFrame:
    """Profiles of a results table's encoders, scored against a standard.

    The label fractions that enter ``L`` are the standard's, and the table's
    ECE binning must be the standard's.

    Parameters
    ----------
    results : pandas.DataFrame or ValidatedResults
        A results table (a DataFrame is validated here, once; a
        ValidatedResults is not checked again and keeps its raw axes, see
        :func:`~crsbench_lib.scoring.axes.raw_axes`).
    standard : ReferenceStandard, path or None
        The standard, a path to one, or ``None`` for the shipped default.
    arm : {"frozen", "lora"}

    Returns
    -------
    pandas.DataFrame
        As :func:`score_profiles`.

    Raises
    ------
    SchemaError
        If the table is malformed or lacks rows the axes need.
    ReferenceStandardError
        If the panel is empty or the ECE binning differs.
    """
    standard = as_standard(standard)
    standard.require_panel()
    table = as_validated(results)
    raw = standard_axes(table, standard, arm=arm)
    check_ece_bins(table.frame, standard, arm)
    return score_profiles(encoder_profiles(raw), standard)


def cohort_anchors(profiles: pd.DataFrame | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-axis (worst, best) of a cohort: its min and max in each axis' direction."""
    x = _profile_array(profiles, "profiles")
    if x.shape[0] == 0:
        raise SchemaError("cohort is empty")
    low, high = x.min(axis=0), x.max(axis=0)
    higher = np.array([HIGHER_IS_BETTER[a] for a in AXES])
    return np.where(higher, low, high), np.where(higher, high, low)


def cohort_normalise(profiles: pd.DataFrame | np.ndarray) -> np.ndarray:
    """Normalise against the cohort's own anchors.

    An axis on which every member has the same value has no spread to
    normalise: every member gets 1 there (each is at the cohort's best).
    """
    x = _profile_array(profiles, "profiles")
    worst, best = cohort_anchors(x)
    flat = worst == best
    with np.errstate(invalid="ignore", divide="ignore"):
        s = normalise_array(x, worst, np.where(flat, worst + 1.0, best))
    s[:, flat] = 1.0
    return s


def cohort_renormalised_scores(
    profiles: pd.DataFrame,
    weights: Mapping[str, float] | np.ndarray | ReferenceStandard,
) -> pd.DataFrame:
    """The cohort-renormalised CRS (the alternative fixed anchors replace).

    Anchors are the cohort's per-axis min and max (in each axis' direction) and
    the panel is the cohort's own normalised profiles, so every score depends on
    who else is in the cohort. Dominance is the Pareto count: a standard's
    noise-aware scale is measured in its own anchors' units, not the cohort's.

    Parameters
    ----------
    profiles : pandas.DataFrame
        Raw profiles of the cohort (index encoder, columns D, C, L, R).
    weights : mapping, array or ReferenceStandard
        Weights of dominance, balance and floor.

    Returns
    -------
    pandas.DataFrame
        As :func:`score_profiles`, with standard_version ``"cohort-renormalised"``.
    """
    _unique_names(profiles)
    s = cohort_normalise(profiles)
    components = component_arrays(s, s, _weight_array(weights))
    return _ranked_table(profiles, s, components, COHORT_VERSION)


def saturation_counts(normalised: pd.DataFrame | np.ndarray) -> pd.DataFrame:
    """How many normalised values sit on an anchor, per axis.

    Repeated saturation signals that the standard needs a new version
    (method section 4).

    Parameters
    ----------
    normalised : pandas.DataFrame or numpy.ndarray
        Normalised profiles (columns D, C, L, R or s_D ... s_R).

    Returns
    -------
    pandas.DataFrame
        Index axis (D, C, L, R), columns ``at_worst`` (== 0), ``at_best``
        (== 1), ``saturated`` (their sum) and ``n``.
    """
    s = _normalised_array(normalised)
    at_worst = (s == 0.0).sum(axis=0)
    at_best = (s == 1.0).sum(axis=0)
    return pd.DataFrame(
        {"at_worst": at_worst, "at_best": at_best, "saturated": at_worst + at_best, "n": s.shape[0]},
        index=pd.Index(list(AXES), name="axis"),
    ).astype("int64")
