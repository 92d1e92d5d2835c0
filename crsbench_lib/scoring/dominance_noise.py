"""The noise scale of noise-aware dominance, measured from the two-level bootstrap (method section 9, amendment 20).

Pareto dominance is a step function of the profiles: a candidate within its
own measurement noise of a panel member dominates it in some resamples and
not in others, so a point estimate of the dominance share is biased against
its resamples whenever profiles sit close together (on the v2 default run the
two best candidates' bootstrap bias was -0.033, two steps of ``0.3 / 18``).
A standard with ``dominance: {form: noise_aware}`` counts each panel member
with the probability that the candidate dominates it given each normalised
axis's standard error ``sigma_a``
(:func:`~crsbench_lib.scoring.crs.dominance_probability`). This module
measures ``sigma_a``: the bootstrap standard deviation of each encoder's
normalised, recentred profile draws, summarised over the panel members by the
median, so that one noisy member does not set the scale for all.

The scale is a constant of the standard, like its anchors: every candidate is
scored with the same ``sigma``, so the score stays a function of the
candidate's own profile and the standard (scoring more candidates changes no
other score).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pandas as pd

from crsbench_lib.errors import ReferenceStandardError
from crsbench_lib.scoring.bootstrap import _leave_self_out_crs
from crsbench_lib.scoring.crs import normalise_array
from crsbench_lib.scoring.two_level_bootstrap import TwoLevelBootstrapResult
from crsbench_lib.standard import AXES, Dominance, ReferenceStandard


def normalised_axis_se(result: TwoLevelBootstrapResult, standard: ReferenceStandard) -> pd.DataFrame:
    """Bootstrap standard error of every encoder's normalised axes.

    Parameters
    ----------
    result : TwoLevelBootstrapResult
        Draws of the raw profiles (``profile_draws``) and their resampling
        shift (``axis_shift``), from
        :func:`~crsbench_lib.scoring.two_level_bootstrap.two_level_bootstrap`.
    standard : ReferenceStandard
        Its anchors normalise the draws (``clip((x - worst) / (best - worst), 0, 1)``).

    Returns
    -------
    pandas.DataFrame
        Index encoder, columns D, C, L, R: the standard deviation (ddof 1) over
        the draws of the recentred, normalised axis.
    """
    draws = np.asarray(result.profile_draws, dtype=float)
    if result.recentred:
        draws = draws - result.axis_shift[list(AXES)].to_numpy(dtype=float)[None]
    n_draws, n_encoders, n_axes = draws.shape
    if n_draws < 2:
        raise ReferenceStandardError("measuring the axes' noise needs at least 2 bootstrap draws")
    normalised = normalise_array(draws.reshape(-1, n_axes), standard.worst, standard.best)
    spread = normalised.reshape(n_draws, n_encoders, n_axes).std(axis=0, ddof=1)
    return pd.DataFrame(spread, index=pd.Index(result.encoders, name="encoder"), columns=list(AXES))


def dominance_noise_sd(
    result: TwoLevelBootstrapResult, standard: ReferenceStandard, members: Sequence[str] | None = None
) -> np.ndarray:
    """The per-axis noise ``sigma`` of noise-aware dominance: the median standard error over panel members.

    Parameters
    ----------
    result : TwoLevelBootstrapResult
    standard : ReferenceStandard
    members : sequence of str, optional
        Whose standard errors are summarised; default the standard's panel
        members that the bootstrap scored (every encoder if none).

    Returns
    -------
    numpy.ndarray
        Shape (4,), axis order D, C, L, R, each > 0.

    Raises
    ------
    ReferenceStandardError
        If a named member is not in the bootstrap, or an axis never varies
        across the draws (a zero scale would make dominance a step again).
    """
    spread = normalised_axis_se(result, standard)
    if members is None:
        chosen = [name for name in standard.panel_names if name in spread.index] or list(spread.index)
    else:
        chosen = [str(name) for name in members]
        unknown = [name for name in chosen if name not in spread.index]
        if unknown:
            raise ReferenceStandardError(f"'{unknown[0]}' is not an encoder of the bootstrap")
    sigma = spread.loc[chosen].median(axis=0).to_numpy(dtype=float)
    if not (np.isfinite(sigma) & (sigma > 0)).all():
        flat = [axis for axis, value in zip(AXES, sigma, strict=True) if not (np.isfinite(value) and value > 0)]
        raise ReferenceStandardError(
            f"axis {', '.join(flat)} does not vary across the bootstrap draws: no noise scale to measure")
    return sigma


def with_noise_aware_dominance(standard: ReferenceStandard, noise_sd: Sequence[float]) -> ReferenceStandard:
    """The same standard with noise-aware dominance at scale ``noise_sd`` (D, C, L, R).

    Examples
    --------
    >>> from crsbench_lib.standard import load_template
    >>> std = with_noise_aware_dominance(load_template(), [0.01, 0.02, 0.02, 0.02])
    >>> std.dominance.form, std.dominance_noise.tolist()
    ('noise_aware', [0.01, 0.02, 0.02, 0.02])
    """
    return replace(standard, dominance=Dominance("noise_aware", tuple(float(v) for v in noise_sd)))


def _scored_draws(result: TwoLevelBootstrapResult, standard: ReferenceStandard) -> tuple[np.ndarray, np.ndarray]:
    """Point CRS (E,) and CRS draws (B, E) of a bootstrap's profiles, as the bootstrap scores them."""
    draws = np.asarray(result.profile_draws, dtype=float)
    if result.recentred:
        draws = draws - result.axis_shift[list(AXES)].to_numpy(dtype=float)[None]
    point = result.point_profiles.loc[list(result.encoders), list(AXES)].to_numpy(dtype=float)
    encoders = list(result.encoders)
    return _leave_self_out_crs(point[None], encoders, standard)[0], _leave_self_out_crs(draws, encoders, standard)


def form_comparison(
    result: TwoLevelBootstrapResult, standard: ReferenceStandard, noise_sd: Sequence[float] | None = None
) -> pd.DataFrame:
    """The same bootstrap draws scored with the Pareto count and with noise-aware dominance.

    Both forms score the bootstrap's own profile draws (recentred as it
    recentred them) against the standard's anchors, weights and panel without
    each encoder's own entry, so the two columns differ by the dominance form
    alone.

    Parameters
    ----------
    result : TwoLevelBootstrapResult
    standard : ReferenceStandard
        Anchors, weights and panel (its own dominance form is replaced).
    noise_sd : sequence of float, optional
        Scale of the noise-aware form (D, C, L, R); default the standard's own
        when it is noise-aware, else the one measured on these draws
        (:func:`dominance_noise_sd`).

    Returns
    -------
    pandas.DataFrame
        Index encoder, in the bootstrap's point order; columns role (from the
        bootstrap summary), and for each form (``pareto``, ``noise_aware``)
        ``crs_<form>``, ``bias_<form>`` (mean of the draws minus the point) and
        ``se_<form>`` (the draws' standard deviation).
    """
    if noise_sd is None:
        noise = standard.dominance_noise if standard.dominance_noise is not None else dominance_noise_sd(result, standard)
    else:
        noise = np.asarray(noise_sd, dtype=float)
    forms = {"pareto": replace(standard, dominance=Dominance()),
             "noise_aware": with_noise_aware_dominance(standard, noise)}
    order = [str(name) for name in result.summary["encoder"]]
    table = pd.DataFrame(index=pd.Index(order, name="encoder"))
    table["role"] = result.summary.set_index("encoder").loc[order, "role"].to_numpy()
    for form, std in forms.items():
        point, draws = _scored_draws(result, std)
        frame = pd.DataFrame({f"crs_{form}": point, f"bias_{form}": draws.mean(axis=0) - point,
                              f"se_{form}": draws.std(axis=0, ddof=1)}, index=list(result.encoders))
        table = table.join(frame)
    return table


__all__ = ["dominance_noise_sd", "form_comparison", "normalised_axis_se", "with_noise_aware_dominance"]
