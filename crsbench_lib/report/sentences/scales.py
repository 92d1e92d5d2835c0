"""What changes when label efficiency and robustness are measured against chance (method amendment 14).

:func:`describe_scale_change` reads :func:`crsbench_lib.scoring.axis_scales.scale_comparison`
and :func:`~crsbench_lib.scoring.axis_scales.scale_correlations`: how strongly
each scale's ``L`` and ``R`` follow clean AUROC, judged against the sampling
error of a Spearman correlation over that many encoders, and which encoder's
rank moves most between the scales.
"""

from __future__ import annotations

import math

import pandas as pd

from crsbench_lib.report.grammar import and_list, fmt, ordinal, percent
from crsbench_lib.report.sentences.lessons import world_name

_AXIS_NAMES = {"L": "label efficiency", "R": "robustness loss"}


def null_rho_bound(n: int) -> float:
    """|rho| beyond which a Spearman correlation of ``n`` items is more than two standard errors from zero.

    The Fisher transform ``z = atanh(rho)`` of Spearman's rho has standard
    error ``sqrt(1.06 / (n - 3))`` (Fieller, Hartley and Pearson 1957,
    Biometrika 44); the bound is ``tanh(2 * se)``.

    Examples
    --------
    >>> round(null_rho_bound(20), 3)
    0.462
    """
    if n < 4:
        return float("nan")
    return math.tanh(2.0 * math.sqrt(1.06 / (n - 3)))


def describe_standard_scales(version: str, label_efficiency: str, robustness: str) -> str:
    """Which scales of L and R a page's standard uses, said before any axis is read.

    Parameters
    ----------
    version : str
        The standard's version.
    label_efficiency, robustness : str
        Its ``axis_scales`` (``"ratio"``/``"chance"`` and ``"points"``/``"chance"``).

    Examples
    --------
    >>> describe_standard_scales("crs-default-v4", "ratio", "points")  # doctest: +NORMALIZE_WHITESPACE
    "The standard crs-default-v4 measures label efficiency as a retention ratio and robustness in AUROC points (the
    study's scales), so the axes, leaders and scores on this page carry the artefact the last section shows: an encoder
    near chance looks efficient and robust."
    """
    l_word = "as a retention ratio" if label_efficiency == "ratio" else "as the share of above-chance AUROC kept"
    r_word = "in AUROC points" if robustness == "points" else "as the share of above-chance AUROC lost"
    if label_efficiency == "ratio" and robustness == "points":
        tail = (" (the study's scales), so the axes, leaders and scores on this page carry the artefact the last "
                "section shows: an encoder near chance looks efficient and robust.")
    elif label_efficiency == "chance" and robustness == "chance":
        tail = " (the chance scales of method amendment 14)."
    else:
        tail = " (one study scale, one chance scale)."
    return f"The standard {version} measures label efficiency {l_word} and robustness {r_word}{tail}"


def describe_scale_change(comparison: pd.DataFrame, correlations: pd.DataFrame, chance_margin: float = 0.05,
                          simulated: bool | None = None) -> str:
    """The two scales of L and R compared, in words.

    Parameters
    ----------
    comparison : pandas.DataFrame
        :func:`~crsbench_lib.scoring.axis_scales.scale_comparison`.
    correlations : pandas.DataFrame
        :func:`~crsbench_lib.scoring.axis_scales.scale_correlations` of it.
    chance_margin : float
        The chance scales' margin.
    simulated : bool or None
        Whether the run is the simulated cohort (False: the user's own data);
        names the world the rank moves belong to
        (:func:`~crsbench_lib.report.sentences.lessons.world_name`).

    Examples
    --------
    >>> comparison = pd.DataFrame({"encoder": ["a", "b", "c", "d"], "D": [0.9, 0.8, 0.7, 0.55],
    ...     "rank_L_study": [4, 3, 2, 1], "rank_L_chance": [1, 2, 3, 4],
    ...     "rank_R_study": [4, 3, 2, 1], "rank_R_chance": [1, 2, 3, 4], "near_chance": [0, 0, 0, 0.5]})
    >>> correlations = pd.DataFrame({"rho_study": [-1.0, 1.0], "rho_chance": [1.0, -1.0], "n_encoders": [4, 4],
    ...     "rank_moves": [3, 3]}, index=pd.Index(["L", "R"], name="axis"))
    >>> print(describe_scale_change(comparison, correlations))  # doctest: +NORMALIZE_WHITESPACE
    Across 4 encoders, label efficiency follows clean AUROC at ρ = -1.00 on the study's scale and at ρ = 1.00 on the chance scale; robustness loss at ρ = 1.00 and ρ = -1.00 (with 4 encoders, |ρ| below 0.97 is within two sampling errors of no association). The largest move of one encoder's rank between the scales: a on label efficiency (4th on the study's scale, 1st on the chance scale) and a on robustness loss (4th, then 1st). 1 encoder has cells within 0.05 of chance: d (50 % of its cells); the chance scales score those cells as keeping nothing and losing everything. On the study's scales an encoder near chance keeps all of a small AUROC and has little to lose; that holds for any benchmark that measures L as a ratio and R in AUROC points. How far the ranks move, and how closely the chance-scaled axes still follow AUROC, belong to this build's world.
    """
    n = int(correlations["n_encoders"].iloc[0])
    bound = null_rho_bound(n)

    def rho(value: float) -> str:
        return "undefined" if pd.isna(value) else f"ρ = {fmt(float(value), 2)}"

    l_row, r_row = correlations.loc["L"], correlations.loc["R"]
    noise = ("" if math.isnan(bound) else
             f" (with {n} encoders, |ρ| below {fmt(bound, 2)} is within two sampling errors of no association)")
    parts = [f"Across {n} encoders, {_AXIS_NAMES['L']} follows clean AUROC at {rho(l_row['rho_study'])} on the study's "
             f"scale and at {rho(l_row['rho_chance'])} on the chance scale; {_AXIS_NAMES['R']} at "
             f"{rho(r_row['rho_study'])} and {rho(r_row['rho_chance'])}{noise}."]
    moves = []
    for axis in ("L", "R"):
        study, chance = comparison[f"rank_{axis}_study"].astype(float), comparison[f"rank_{axis}_chance"].astype(float)
        moved = (study - chance).abs()
        if moved.notna().any() and moved.max() > 0:
            i = int(moved.to_numpy().argmax())
            name = comparison["encoder"].iloc[i]
            first, second = ordinal(int(study.iloc[i])), ordinal(int(chance.iloc[i]))
            detail = (f"({first} on the study's scale, {second} on the chance scale)" if not moves
                      else f"({first}, then {second})")
            moves.append(f"{name} on {_AXIS_NAMES[axis]} {detail}")
    if moves:
        parts.append("The largest move of one encoder's rank between the scales: " + and_list(moves) + ".")
    near = comparison[comparison["near_chance"] > 0]
    if len(near):
        listed = and_list([f"{row.encoder} ({percent(row.near_chance)} of its cells)" for row in near.itertuples()])
        verb = "has" if len(near) == 1 else "have"
        noun = "encoder" if len(near) == 1 else "encoders"
        parts.append(f"{len(near)} {noun} {verb} cells within {chance_margin:g} of chance: {listed}; the chance "
                     "scales score those cells as keeping nothing and losing everything.")
    parts.append("On the study's scales an encoder near chance keeps all of a small AUROC and has little to lose; that "
                 "holds for any benchmark that measures L as a ratio and R in AUROC points. How far the ranks move, and "
                 f"how closely the chance-scaled axes still follow AUROC, belong to {world_name(simulated)}.")
    return " ".join(parts)


__all__ = ["describe_scale_change", "describe_standard_scales", "null_rho_bound"]
