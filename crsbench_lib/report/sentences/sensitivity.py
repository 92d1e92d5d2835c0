"""The sensitivity chapter's "Is this real?" lessons and its exercises' computed solutions.

What the weight, panel and anchor perturbations of
:mod:`crsbench_lib.scoring.sensitivity` say once sorted into lessons of any
benchmark of this design (how far a Dirichlet centred on the weights reaches;
that with fixed anchors only the dominance term reads the panel) and lessons
of this build's world (how often the top k moves under these encoders, which
anchor moves the agreement most), with the study's figures beside them
(:func:`sensitivity_lessons`); and the exercises' answers, recomputed on the
page from its own profiles with the exercise's parameter
(:func:`sensitivity_exercise_concentration`, :func:`sensitivity_exercise_subset`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from crsbench_lib.report.grammar import and_list, describe_share, finite, fmt, percent, small_percent
from crsbench_lib.report.sentences.lessons import DESIGN, WORLD, Lesson

if TYPE_CHECKING:
    import pandas as pd


def dirichlet_sd(weight: float, concentration: float) -> float:
    """One standard deviation of a weight ``w`` under a Dirichlet of concentration ``c`` centred on the weights.

    ``sqrt(w (1 - w) / (c + 1))`` (the Dirichlet's marginal is a Beta of
    ``c w`` and ``c (1 - w)``); a weight of 0 stays 0.

    Examples
    --------
    >>> round(dirichlet_sd(0.4, 100), 3)
    0.049
    >>> dirichlet_sd(0.0, 5)
    0.0
    """
    w, c = finite(weight, "weight"), finite(concentration, "concentration")
    if c <= 0:
        raise ValueError(f"concentration must be positive, got {concentration!r}")
    return math.sqrt(w * (1 - w) / (c + 1))


def _sd_range(weights: Mapping[str, float], concentration: float) -> str:
    sds = [dirichlet_sd(w, concentration) for w in weights.values() if w > 0]
    low, high = fmt(min(sds), 3), fmt(max(sds), 3)
    return low if low == high else f"{low}–{high}"


def _share_words(share: float, what: str = "draws") -> str:
    """``in 24 % of draws``, ``in none of the draws``, ``in every draw`` (with ``what`` for "draws")."""
    return describe_share(share, "").strip().replace("draw", what.removesuffix("s"))


def _share_bare(share: float, what: str = "draws") -> str:
    """As :func:`_share_words` without the leading "in"."""
    return _share_words(share, what).removeprefix("in ")


def _membership(p_top_k: Mapping[str, float], default_top: Sequence[str], top_k: int) -> tuple[list[str], str]:
    """Default members kept in every draw, and the candidates whose membership depends on the draw, in words."""
    kept = [name for name in default_top if p_top_k.get(name, 0.0) >= 1.0]
    leaving = [(name, p_top_k.get(name, 0.0)) for name in default_top if p_top_k.get(name, 0.0) < 1.0]
    entering = sorted(((name, p) for name, p in p_top_k.items() if name not in default_top and p == p and p > 0),
                      key=lambda item: -item[1])
    moving = [f"{name} (in the top {top_k} in {small_percent(p)} of draws)" if k == 0 else
              f"{name} ({small_percent(p)})" for k, (name, p) in enumerate(leaving + entering)]
    return kept, and_list(moving) if moving else "none"


def sensitivity_lessons(
    weights: Mapping[str, float],
    concentration: float,
    n_draws: int,
    mean_tau: float,
    share_top_changed: float,
    top_k: int,
    default_top: Sequence[str],
    p_top_k: Mapping[str, float],
    share_loo_changed: float,
    share_subsets_changed: float,
    anchor_sweep: "pd.DataFrame | None" = None,
    study_mean_tau_range: tuple[float, float] | None = None,
    study_top_changes: int | None = None,
    study_draws: int | None = None,
    simulated: bool | None = None,
) -> list[Lesson]:
    """The sensitivity chapter's "Is this real?" lessons, decided from the page's numbers.

    Parameters
    ----------
    weights : mapping
        The standard's weights (dominance, balance, floor).
    concentration : float
        The Dirichlet concentration of the weight draws.
    n_draws : int
        Weight draws.
    mean_tau : float
        Mean Kendall τ_b of the perturbed rankings to the default one.
    share_top_changed : float
        Share of weight draws whose top k differs from the default.
    top_k : int
    default_top : sequence of str
        The default top k.
    p_top_k : mapping of str to float
        Share of weight draws that put each candidate in the top k.
    share_loo_changed, share_subsets_changed : float
        Share of leave-one-out and of random sub-panels that change the top k.
    anchor_sweep : pandas.DataFrame, optional
        :func:`crsbench_lib.scoring.sensitivity.anchor_sweep` output; None
        when the table lacks the panel's raw profiles.
    study_mean_tau_range : (float, float), optional
        The study's range of mean τ_b under weight draws.
    study_top_changes, study_draws : int, optional
        The study's draws changing the top 3, out of its draws.
    simulated : bool or None
        Whether the run is the simulated cohort (False: the user's own data).

    Returns
    -------
    list of Lesson
        Two of the design (the reach of the Dirichlet; the panel moves only
        the dominance share), one or two of this world (the top k under the
        weight and panel draws; which worst anchor moves the agreement most).

    Examples
    --------
    >>> lessons = sensitivity_lessons({"dominance": 0.3, "balance": 0.4, "floor": 0.3}, 100, 1000, 0.996, 0.0, 3,
    ...                               ["a", "b", "c"], {"a": 1.0, "b": 1.0, "c": 1.0, "d": 0.0}, 0.0, 0.0)
    >>> [lesson.scope for lesson in lessons]
    ['design', 'design', 'world']
    >>> print(lessons[2].text)  # doctest: +NORMALIZE_WHITESPACE
    Over 1000 weight draws the mean τ_b to the default ranking is 0.996, and the top 3 (a, b and c) changes in none
    of the draws: near the default weights, the weights do not decide who leads here. Leave-one-out panels change it
    in none of the panels and random sub-panels in none of the panels. Expect more changes on a cohort whose
    leading candidates are closer together on the axes the weights trade off.
    """
    tau = finite(mean_tau, "mean_tau")
    dominance = finite(weights.get("dominance", 0.0), "dominance weight")
    named = and_list([f"{name} {w:g}" for name, w in weights.items()])
    lessons = [Lesson(DESIGN, (
        f"A Dirichlet of concentration {concentration:g} centred on the standard's weights ({named}) moves each "
        f"non-zero weight by one standard deviation of {_sd_range(weights, concentration)}: a ranking that survives "
        "these draws is stable near the default weights, not under any weighting. A far-off weighting (the floor "
        "alone, robustness alone) is another question, which the agreement chapter's weights parameter asks."))]
    if dominance > 0:
        lessons.append(Lesson(DESIGN, (
            f"With fixed anchors only the dominance term reads the panel: another panel can move at most the "
            f"dominance share ({percent(dominance)} of the CRS) of any score, never its balance and floor terms, and "
            "never an encoder's own axis values.")))
    else:
        lessons.append(Lesson(DESIGN, "This standard gives dominance no weight, so the panel does not enter the CRS "
                                      "at all: panel perturbations cannot move any score."))
    top = and_list(list(default_top))
    text = (f"Over {n_draws} weight draws the mean τ_b to the default ranking is {fmt(tau, 3)}, and the top {top_k} "
            f"({top}) changes {_share_words(share_top_changed)}")
    if share_top_changed == 0:
        text += ": near the default weights, the weights do not decide who leads here."
    else:
        kept, moving = _membership(p_top_k, default_top, top_k)
        text += (f": the candidates whose place depends on the draw are {moving}"
                 + (f", while {and_list(kept)} stay{'s' if len(kept) == 1 else ''} in every draw" if kept else "")
                 + ".")
    text += (f" Leave-one-out panels change it {_share_words(share_loo_changed, 'panels')} and random sub-panels "
             f"{_share_words(share_subsets_changed, 'panels')}.")
    text += (" Expect more changes on a cohort whose leading candidates are closer together on the axes the "
             "weights trade off.")
    study = ""
    if study_mean_tau_range is not None:
        low, high = study_mean_tau_range
        study = f"mean τ_b {fmt(low, 3)} to {fmt(high, 3)}" + (f" over {study_draws} draws" if study_draws else "")
        if study_top_changes is not None:
            study += ("; the top 3 never changed" if study_top_changes == 0 else
                      f"; {study_top_changes} draws changed the top 3")
        study += "."
    lessons.append(Lesson(WORLD, text, study=study))
    if anchor_sweep is not None and len(anchor_sweep):
        spans = []
        for axis, rows in anchor_sweep.groupby("axis", sort=False):
            values = rows["tau_auroc_crs"].astype(float)
            spans.append((axis, float(values.min()), float(values.max())))
        # Axes whose printed spans are equally wide are named together ("least on C and D"), never one of them.
        width = {axis: round(float(fmt(high, 3)) - float(fmt(low, 3)), 3) for axis, low, high in spans}
        widest_axes = [a for a, *_ in spans if width[a] == max(width.values())]
        narrowest_axes = [a for a, *_ in spans if width[a] == min(width.values())]
        widest = (and_list(widest_axes), *next((lo, hi) for a, lo, hi in spans if a == widest_axes[0]))
        narrowest = (and_list(narrowest_axes), *next((lo, hi) for a, lo, hi in spans if a == narrowest_axes[0]))
        tried = anchor_sweep[~anchor_sweep["is_default"].astype(bool)]
        changed = tried[tried["top_k_changed"].astype(bool)]
        if widest_axes == narrowest_axes:
            text = (f"Moving one worst anchor at a time moves the AUROC-CRS τ_b equally on {widest[0]} "
                    f"({fmt(widest[1], 3)} to {fmt(widest[2], 3)} for {widest_axes[0]}).")
        else:
            text = (f"Moving one worst anchor at a time moves the AUROC-CRS τ_b most on {widest[0]} "
                    f"({fmt(widest[1], 3)} to {fmt(widest[2], 3)}"
                    + (f" for {widest_axes[0]}" if len(widest_axes) > 1 else "") + f") and least on {narrowest[0]} "
                    f"({fmt(narrowest[1], 3)} to {fmt(narrowest[2], 3)}"
                    + (f" for {narrowest_axes[0]}" if len(narrowest_axes) > 1 else "") + ").")
        anchor_share = len(changed) / max(len(tried), 1)
        if changed.empty:
            text += f" No worst anchor tried changes the top {top_k}."
        else:
            where = and_list([f"{row.axis} at {row.worst:g}" for row in changed.itertuples(index=False)])
            text += (f" The top {top_k} changes with {len(changed)} of the {len(tried)} worst anchors tried away from "
                     f"the standard's ({where})")
            if anchor_share > share_top_changed:
                text += (f", more often than under the weight draws (in {small_percent(share_top_changed)} of them): "
                         "here the anchors, fixed once from what the raw values mean, carry more of the top "
                         f"{top_k} than weights near the defaults do.")
            else:
                text += (f", no more often than under the weight draws (in {small_percent(share_top_changed)} of "
                         "them).")
        text += (" Which anchor matters depends on where these encoders sit between the anchors: on another cohort "
                 "another axis may lead.")
        lessons.append(Lesson(WORLD, text))
    return lessons


def sensitivity_exercise_concentration(
    weights: Mapping[str, float],
    default_concentration: float,
    concentration: float,
    default_mean_tau: float,
    default_share: float,
    mean_tau: float,
    share: float,
    top_k: int,
    default_top: Sequence[str],
    p_top_k: Mapping[str, float],
    digits: int = 3,
) -> str:
    """The loosened-Dirichlet exercise's solution: the page's weight draws redone at another concentration, in words.

    Parameters
    ----------
    weights : mapping
        The standard's weights.
    default_concentration, concentration : float
        The page's concentration and the exercise's.
    default_mean_tau, default_share : float
        Mean τ_b to the default ranking and share of draws changing the top k, on the page.
    mean_tau, share : float
        The same at the exercise's concentration.
    top_k : int
    default_top : sequence of str
    p_top_k : mapping of str to float
        Share of the exercise's draws that put each candidate in the top k.
    digits : int

    Returns
    -------
    str

    Examples
    --------
    >>> print(sensitivity_exercise_concentration({"dominance": 0.3, "balance": 0.4, "floor": 0.3}, 100, 5,
    ...     0.996, 0.003, 0.97, 0.244, 3, ["a", "b", "c"], {"a": 1.0, "b": 1.0, "c": 0.756, "d": 0.244}))
    ... # doctest: +NORMALIZE_WHITESPACE
    **In this build:** at concentration 5 instead of 100, one standard deviation of each weight grows from
    0.046–0.049 to 0.187–0.200; the mean τ_b to the default ranking goes from 0.996 to 0.970, and the top 3 changes in
    24 % of draws instead of < 1 % of draws. The top 3 is stable only near the default weights: further away, the
    candidates whose place depends on the draw are c (in the top 3 in 76 % of draws) and d (24 %), while a and b
    stay in every draw, so their lead does not hang on the weights.
    """
    head = (f"**In this build:** at concentration {concentration:g} instead of {default_concentration:g}, one "
            f"standard deviation of each weight grows from {_sd_range(weights, default_concentration)} to "
            f"{_sd_range(weights, concentration)}; the mean τ_b to the default ranking goes from "
            f"{fmt(default_mean_tau, digits)} to {fmt(mean_tau, digits)}, and the top {top_k} changes "
            f"{_share_words(share)} instead of {_share_bare(default_share)}.")
    if concentration > default_concentration:
        head = head.replace("grows from", "shrinks from")
    kept, moving = _membership(p_top_k, default_top, top_k)
    if share > default_share:
        tail = (f" The top {top_k} is stable only near the default weights: further away, the candidates whose "
                f"place depends on the draw are {moving}")
        if kept:
            tail += (f", while {and_list(kept)} stay{'s' if len(kept) == 1 else ''} in every draw, so "
                     f"{'its' if len(kept) == 1 else 'their'} lead does not hang on the weights.")
        else:
            tail += ", and no default member stays in every draw: the whole top set is a weighting choice."
    elif share == default_share == 0:
        tail = (f" Even far from the default weights the top {top_k} never changes: its members lead on every "
                "term the weights trade off, so no weighting near or far separates them from the rest.")
    else:
        tail = (f" The top {top_k} changes no more often than at the page's concentration: its members' lead does "
                "not hang on how far the weights move.")
    return head + tail


def sensitivity_exercise_subset(
    subset_size: int,
    panel_size: int,
    default_subset_size: int,
    default_mean_tau: float,
    default_share: float,
    mean_tau: float,
    share: float,
    dominance_weight: float,
    top_k: int,
    digits: int = 3,
) -> str:
    """The small-sub-panel exercise's solution: the page's random sub-panels redone at another size, in words.

    Parameters
    ----------
    subset_size, panel_size, default_subset_size : int
        The exercise's sub-panel size, the full panel's, and the page's sub-panel size.
    default_mean_tau, default_share : float
        Mean τ_b to the default ranking and share of sub-panels changing the top k, on the page.
    mean_tau, share : float
        The same at the exercise's size.
    dominance_weight : float
        The standard's weight of dominance.
    top_k : int
    digits : int

    Returns
    -------
    str

    Examples
    --------
    >>> print(sensitivity_exercise_subset(3, 19, 13, 0.983, 0.0, 0.936, 0.219, 0.3, 3))
    ... # doctest: +NORMALIZE_WHITESPACE
    **In this build:** with random sub-panels of 3 of the 19 members instead of 13, the mean τ_b to the default
    ranking goes from 0.983 to 0.936, and the top 3 changes in 22 % of panels instead of none of the panels. Dominance
    is the mean over the panel's members of how surely an encoder dominates each, so one member carries 1/3 of it
    instead of 1/13: a member in or out moves a score by up to 0.3 × 1/3 = 0.100 CRS instead of 0.023. With so few
    members, who is in the panel decides part of the top 3: a fixed panel is part of the design, and it needs enough
    members for the dominance term to be stable.
    """
    w = finite(dominance_weight, "dominance_weight")
    text = (f"**In this build:** with random sub-panels of {subset_size} of the {panel_size} members instead of "
            f"{default_subset_size}, the mean τ_b to the default ranking goes from {fmt(default_mean_tau, digits)} to "
            f"{fmt(mean_tau, digits)}, and the top {top_k} changes {_share_words(share, 'panels')} instead of "
            f"{_share_bare(default_share, 'panels')}.")
    text += (f" Dominance is the mean over the panel's members of how surely an encoder dominates each, so one member "
             f"carries 1/{subset_size} of it instead of 1/{default_subset_size}: a member in or out moves a score by "
             f"up to {w:g} × 1/{subset_size} = {fmt(w / subset_size, digits)} CRS instead of "
             f"{fmt(w / default_subset_size, digits)}.")
    if share > default_share:
        text += (f" With so few members, who is in the panel decides part of the top {top_k}: a fixed panel is part "
                 "of the design, and it needs enough members for the dominance term to be stable.")
    else:
        text += (f" Even so the top {top_k} holds as often as with the page's sub-panels: its members dominate "
                 "nearly any few panel members, so the panel's size does not decide who leads here.")
    return text


#: A share of perturbations below which the top k "barely" depends on the design choices.
RARE_CHANGE = 0.05


def sensitivity_takeaway(
    top_k: int,
    default_top: Sequence[str],
    n_draws: int,
    mean_tau: float,
    share_weights: float,
    share_leave_one_out: float,
    share_subsets: float,
) -> str:
    """The sensitivity chapter's key takeaway: whether the top k survives the weight and panel perturbations.

    Parameters
    ----------
    top_k : int
        Size of the top set.
    default_top : sequence of str
        The top k under the standard's weights and panel.
    n_draws : int
        Weight vectors drawn.
    mean_tau : float
        Mean Kendall τ_b of the perturbed rankings to the default one.
    share_weights, share_leave_one_out, share_subsets : float
        Shares of weight draws, leave-one-out panels and random sub-panels that change the top k.

    Returns
    -------
    str
        One or two sentences for :func:`crsbench_lib.report.takeaway.glue_takeaway`.

    Examples
    --------
    >>> sensitivity_takeaway(3, ["a", "b", "c"], 1000, 0.991, 0.0, 0.0, 0.0)
    'The top 3 (a, b and c) survives every perturbation tried: no weight draw of 1000 (mean τ_b 0.991 to the default ranking), leave-one-out panel or random sub-panel changes it.'
    >>> sensitivity_takeaway(3, ["a", "b", "c"], 1000, 0.95, 0.24, 0.0, 0.05).split(": ", 1)[1]
    'it changes in 24 % of 1000 weight draws (mean τ_b 0.950 to the default ranking), in none of the leave-one-out panels and in 5 % of random sub-panels.'
    """
    shares = [finite(s, "share") for s in (share_weights, share_leave_one_out, share_subsets)]
    tau = fmt(finite(mean_tau, "mean_tau"), 3)
    top = f"The top {top_k} ({and_list(list(default_top))})"
    if not any(shares):
        return (f"{top} survives every perturbation tried: no weight draw of {n_draws} (mean τ_b {tau} to the default "
                "ranking), leave-one-out panel or random sub-panel changes it.")
    weights_text = _share_words(shares[0]).replace("draws", f"{n_draws} weight draws").replace(
        "every draw", f"every one of {n_draws} weight draws")
    # A top k that moves in a few per cent of perturbations barely depends on them; say which it is.
    verb = "barely depends on" if max(shares) < RARE_CHANGE else "depends on"
    return (f"{top} {verb} these design choices: it changes {weights_text} (mean τ_b {tau} to the default "
            f"ranking), {_share_words(shares[1], 'leave-one-out panels')} and "
            f"{_share_words(shares[2], 'random sub-panels')}.")


__all__ = ["dirichlet_sd", "sensitivity_exercise_concentration", "sensitivity_exercise_subset", "sensitivity_lessons", "sensitivity_takeaway"]
