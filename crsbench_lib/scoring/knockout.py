"""What each axis decides: the CRS ranking with one axis held constant (method section 9, amendment 28).

A composite's weights say how much each axis *may* move the score; what an
axis *does* move depends on how far the candidates spread on it once
normalised, and on how its spread lines up with the other axes'. The knock-out
answers that directly: for each axis ``a`` of D, C, L and R, every normalised
value of ``a`` (the candidates' and the reference panel's) is set to one
constant, the candidates' median ``s_a``, and the CRS is computed again with
the same standard (anchors, weights, panel, dominance form). An axis whose
knock-out leaves the ranking as it was decides nothing among these
candidates, whatever its weight; one whose knock-out changes the leader
decides the choice.

Holding the panel's value constant too matters: otherwise the dominance term
would still compare each candidate's constant with the panel's spread on
``a``, and the knock-out would add a shift of its own.

Reported per axis: Kendall's tau-b between the full and the knocked-out CRS
of the candidates (:func:`~crsbench_lib.scoring.agreement.kendall_tau_b`), the
number of candidate pairs whose order reverses (discordant pairs, ties in
either ranking counted as no reversal:
:func:`~crsbench_lib.scoring.agreement.pair_counts`), and the leader with and
without the axis.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from crsbench_lib.scoring.agreement import kendall_tau_b, pair_counts
from crsbench_lib.scoring.crs import _profile_array, component_arrays, normalise_array
from crsbench_lib.standard import AXES, ReferenceStandard

#: Columns of :func:`axis_knockout`.
KNOCKOUT_COLUMNS: tuple[str, ...] = (
    "axis", "held_at", "tau_b", "reversed_pairs", "pairs", "leader", "leader_without", "leader_changes",
)


def knocked_out_crs(normalised: np.ndarray, panel: np.ndarray, standard: ReferenceStandard, axis: int,
                    value: float) -> np.ndarray:
    """The CRS of ``normalised`` profiles with axis ``axis`` set to ``value`` for them and for the panel.

    Examples
    --------
    >>> from crsbench_lib.standard import load_template
    >>> standard = load_template()
    >>> s = np.array([[0.9, 0.5, 0.5, 0.5], [0.1, 0.5, 0.5, 0.5]])
    >>> crs = knocked_out_crs(s, s, standard, axis=0, value=0.5)
    >>> bool(crs[0] == crs[1])
    True
    """
    s = np.array(normalised, dtype=float, copy=True)
    p = np.array(panel, dtype=float, copy=True)
    s[:, axis] = value
    p[:, axis] = value
    return component_arrays(s, p, np.asarray(standard.weight_vector, dtype=float), standard.dominance_noise)[:, 3]


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
