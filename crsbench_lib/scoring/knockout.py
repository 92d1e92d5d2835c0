"""What each axis decides: the CRS ranking with one axis held constant (method section 9, amendment 28).

A composite's weights say how much each axis *may* move the score; what an
axis *does* move depends on how far the candidates spread on it once
normalised, and on how its spread lines up with the other axes'. The knock-out
answers that directly: for each axis ``a`` of D, C, L and R, the CRS is
computed again with the same standard (anchors, weights, panel, dominance
form) as if ``a`` told no encoder apart: dominance is counted on the other
three axes (against the panel's values on them), the floor is the minimum of
the other three, and balance keeps ``a``'s gap at one constant for every
encoder (the candidates' median ``1 - s_a``). An axis whose knock-out leaves
the ranking as it was decides nothing among these candidates, whatever its
weight; one whose knock-out changes the leader decides the choice.

Why not simply set ``s_a`` to a constant for candidates and panel alike: under
noise-aware dominance a tied axis contributes ``Phi(0) = 1/2`` to every
member's product, halving every candidate's dominance and so shifting the
weight between the CRS's components; and a constant ``s_a`` caps the floor at
that constant, blurring the other axes' floors (a referee measured the two
forms differing in 1.7 % of pairs and 5.7 % of leaders on random profiles).

Reported per axis: Kendall's tau-b between the full and the knocked-out CRS
of the candidates (:func:`~crsbench_lib.scoring.rank_statistics.kendall_tau_b`), the
number of candidate pairs whose order reverses (discordant pairs, ties in
either ranking counted as no reversal:
:func:`~crsbench_lib.scoring.rank_statistics.pair_counts`), and the leader with and
without the axis.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from crsbench_lib.scoring.rank_statistics import kendall_tau_b, pair_counts
from crsbench_lib.scoring.crs import (
    _profile_array,
    balance_scores,
    component_arrays,
    dominance_shares,
    floor_scores,
    normalise_array,
)
from crsbench_lib.standard import AXES, ReferenceStandard

#: Columns of :func:`axis_knockout`.
KNOCKOUT_COLUMNS: tuple[str, ...] = (
    "axis", "held_at", "tau_b", "reversed_pairs", "pairs", "leader", "leader_without", "leader_changes",
)


def knocked_out_crs(normalised: np.ndarray, panel: np.ndarray, standard: ReferenceStandard, axis: int,
                    value: float) -> np.ndarray:
    """The CRS of ``normalised`` profiles as if axis ``axis`` told no encoder apart (see the module docstring).

    Dominance on the other axes (:func:`~crsbench_lib.scoring.crs.dominance_shares`
    with their columns of the panel and of the noise), balance with the axis
    held at ``value``, the floor over the other axes
    (:func:`~crsbench_lib.scoring.crs.floor_scores`).

    Examples
    --------
    >>> from crsbench_lib.standard import load_template
    >>> standard = load_template()
    >>> s = np.array([[0.9, 0.5, 0.5, 0.5], [0.1, 0.5, 0.5, 0.5]])
    >>> crs = knocked_out_crs(s, s, standard, axis=0, value=0.5)
    >>> bool(crs[0] == crs[1])
    True
    """
    s = np.asarray(normalised, dtype=float)
    p = np.asarray(panel, dtype=float)
    keep = [j for j in range(s.shape[1]) if j != axis]
    noise = standard.dominance_noise
    dominance = dominance_shares(s[:, keep], p[:, keep], None if noise is None else np.asarray(noise)[keep])
    held = s.copy()
    held[:, axis] = value
    balance = balance_scores(held)
    floor = floor_scores(s[:, keep])
    w = np.asarray(standard.weight_vector, dtype=float)
    return w[0] * dominance + w[1] * balance + w[2] * floor


def axis_knockout(profiles: pd.DataFrame, standard: ReferenceStandard,
                  references: Sequence[str] = ()) -> pd.DataFrame:
    """The candidates' CRS ranking with each axis held constant, beside the full ranking.

    Parameters
    ----------
    profiles : pandas.DataFrame
        Raw profiles, index encoder, columns D, C, L, R
        (:func:`~crsbench_lib.scoring.axes.encoder_profiles`).
    standard : ReferenceStandard
        The standard that scores them (its panel is knocked out alike).
    references : sequence of str
        Reference encoders: left out before anything is computed (they are never
        ranked; method section 9, amendment 22).

    Returns
    -------
    pandas.DataFrame
        One row per axis (:data:`KNOCKOUT_COLUMNS`): ``held_at`` (the
        candidates' median normalised value the axis is held at), ``tau_b``
        (full against knocked-out CRS; NaN when either is constant),
        ``reversed_pairs`` of ``pairs``, ``leader`` (highest full CRS; ties
        broken by name), ``leader_without`` and ``leader_changes``.

    Raises
    ------
    ValueError
        With fewer than two candidates.

    Examples
    --------
    >>> from crsbench_lib.scoring.freeze import freeze_profiles
    >>> profiles = pd.DataFrame({"D": [0.86, 0.84, 0.80], "C": [0.05, 0.02, 0.03], "L": [0.9, 0.9, 0.8],
    ...                          "R": [0.04, 0.05, 0.06]}, index=["a", "b", "c"])
    >>> table = axis_knockout(profiles, freeze_profiles(profiles, "example"))
    >>> list(table["axis"]), int(table["pairs"].iloc[0])
    (['D', 'C', 'L', 'R'], 3)
    """
    kept = profiles.drop(index=[r for r in references if r in profiles.index])
    if len(kept) < 2:
        raise ValueError(f"axis_knockout: {len(kept)} candidate(s); at least 2 are needed to rank")
    names = np.array([str(e) for e in kept.index])
    s = normalise_array(_profile_array(kept, "profiles"), standard.worst, standard.best)
    panel = standard.require_panel()
    full = component_arrays(s, panel, np.asarray(standard.weight_vector, dtype=float), standard.dominance_noise)[:, 3]
    leader = _leader(names, full)
    rows = []
    for j, axis in enumerate(AXES):
        held = float(np.median(s[:, j]))
        without = knocked_out_crs(s, panel, standard, j, held)
        counts = pair_counts(full, without)
        new_leader = _leader(names, without)
        rows.append({"axis": axis, "held_at": held, "tau_b": kendall_tau_b(full, without),
                     "reversed_pairs": counts["discordant"], "pairs": counts["pairs"], "leader": leader,
                     "leader_without": new_leader, "leader_changes": new_leader != leader})
    return pd.DataFrame(rows, columns=list(KNOCKOUT_COLUMNS))


def _leader(names: np.ndarray, crs: np.ndarray) -> str:
    """The highest CRS; among tied leaders the first name, so the choice does not depend on row order."""
    best = crs.max()
    return str(sorted(names[crs == best])[0])
