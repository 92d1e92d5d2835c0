"""The four-axes chapter's "Is this real?" lessons and its exercises' computed solutions.

Which of the chapter's lessons hold for any benchmark that normalises four raw
axes between fixed anchors (an encoder's normalised values depend on it alone;
what the study's and the chance scales do to an encoder near chance), and
which are measurements of this build's encoders (who leads each axis among
the candidates, how closely label efficiency and robustness follow clean
AUROC): :func:`four_axes_lessons`. The exercises' answers are recomputed on the
page from its results table: the LoRA arm's profiles beside the frozen ones
(:func:`four_axes_exercise_lora`) and the leaders of one dataset beside those
of all (:func:`four_axes_exercise_subset`). The leaders sentence itself is
:func:`crsbench_lib.report.sentences.cohort.describe_leaders`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING

from crsbench_lib.report.grammar import and_list, fmt, ordinal
from crsbench_lib.report.sentences.lessons import DESIGN, WORLD, Lesson
from crsbench_lib.report.sentences.scales import null_rho_bound

if TYPE_CHECKING:
    import pandas as pd

#: The axes' names in these sentences.
AXIS_NAMES: dict[str, str] = {"D": "discrimination", "C": "calibration", "L": "label efficiency", "R": "robustness"}
#: Whether a higher raw value is better, per axis (as :data:`crsbench_lib.standard.HIGHER_IS_BETTER`).
_HIGHER: dict[str, bool] = {"D": True, "C": False, "L": True, "R": False}
#: A mean LoRA change below this share of the candidates' spread on an axis "barely" moves it.
BARELY = 0.10


def _d_rank(profiles: "pd.DataFrame", name: str) -> int:
    """1-based rank of ``name`` on D among the profiles (1 = highest AUROC; ties share the best rank)."""
    d = profiles["D"].astype(float)
    return int((d > d[name]).sum()) + 1


def four_axes_lessons(
    profiles: "pd.DataFrame",
    leaders: Mapping[str, str],
    saturation: "pd.DataFrame",
    correlations: "pd.DataFrame",
    label_efficiency: str,
    robustness: str,
    chance_margin: float = 0.05,
    simulated: bool | None = None,
) -> list[Lesson]:
    """The four-axes chapter's "Is this real?" lessons, decided from the page's numbers.

    Parameters
    ----------
    profiles : pandas.DataFrame
        Raw profiles of the candidates (index encoder, columns D, C, L, R),
        references left out.
    leaders : mapping of str to str
        Axis -> the candidate that leads it
        (:func:`crsbench_lib.report.summaries.axis_leaders`).
    saturation : pandas.DataFrame
        :func:`crsbench_lib.scoring.crs.saturation_counts` (index axis,
        columns at_worst, at_best, n).
    correlations : pandas.DataFrame
        :func:`crsbench_lib.scoring.axis_scales.scale_correlations` (rows L
        and R; rho_study, rho_chance, n_encoders).
    label_efficiency, robustness : str
        The standard's scales (``"ratio"``/``"chance"``, ``"points"``/``"chance"``).
    chance_margin : float
        The chance scales' margin.
    simulated : bool or None
        Whether the run is the simulated cohort (False: the user's own data).

    Returns
    -------
    list of Lesson
        Two of the design (fixed anchors and saturation; the scales), two of
        this world (the leaders among the candidates; how closely L and R
        follow clean AUROC on the standard's scales).

    Examples
    --------
    >>> import pandas as pd
    >>> profiles = pd.DataFrame({"D": [0.9, 0.8, 0.6], "C": [0.05, 0.02, 0.04], "L": [0.9, 0.8, 0.5],
    ...                          "R": [0.1, 0.2, 0.4]}, index=["a", "b", "c"])
    >>> saturation = pd.DataFrame({"at_worst": [0] * 4, "at_best": [0] * 4, "n": [3] * 4}, index=list("DCLR"))
    >>> correlations = pd.DataFrame({"rho_study": [0.2, 0.1], "rho_chance": [0.9, -0.9], "n_encoders": [20, 20]},
    ...                             index=["L", "R"])
    >>> lessons = four_axes_lessons(profiles, {"D": "a", "C": "b", "L": "a", "R": "a"}, saturation, correlations,
    ...                             "chance", "chance")
    >>> [lesson.scope for lesson in lessons]
    ['design', 'design', 'world', 'world']
    >>> print(lessons[2].text)  # doctest: +NORMALIZE_WHITESPACE
    Among the 3 candidates, 2 different encoders lead the 4 axes: a leads discrimination, label efficiency and
    robustness; b leads calibration from 2nd of 3 on discrimination. No single axis orders the candidates as the four do, which is why one number
    hides choices.
    """
    n_values = int(saturation["n"].sum()) if len(saturation) else 0
    saturated = int((saturation["at_worst"] + saturation["at_best"]).sum()) if len(saturation) else 0
    text = ("Each normalised value depends on the encoder and the standard's fixed anchors alone: adding or removing "
            "an encoder moves no other encoder's axis values, and a value on an anchor (saturated) stops separating "
            "the encoders beyond it.")
    if saturated:
        axes = [str(axis) for axis, row in saturation.iterrows() if row["at_worst"] or row["at_best"]]
        text += (f" Here {saturated} of {n_values} normalised values {'sits' if saturated == 1 else 'sit'} on an anchor "
                 f"({and_list(axes)}): "
                 "the standard needs a new version where that repeats.")
    else:
        text += f" Here none of the {n_values} normalised values sits on an anchor."
    lessons = [Lesson(DESIGN, text)]
    study_l, study_r = label_efficiency == "ratio", robustness == "points"
    if study_l or study_r:
        scaled = and_list(([f"L as a retention ratio"] if study_l else []) + ([f"R as a loss in AUROC points"]
                                                                              if study_r else []))
        lessons.append(Lesson(DESIGN, (
            f"This standard measures {scaled} (the study's scales): an encoder near chance keeps all of a small "
            "AUROC and has little left to lose, so it can lead those axes for want of discrimination, on any "
            "benchmark that measures them so.")))
    else:
        lessons.append(Lesson(DESIGN, (
            "This standard measures L and R against chance (the share of the above-chance AUROC kept and lost), so "
            "an encoder near chance no longer looks efficient or robust for want of discrimination; the price, on "
            f"any benchmark scored so: a cell within {chance_margin:g} of chance counts as keeping nothing and losing "
            "everything.")))
    n = len(profiles)
    distinct = list(dict.fromkeys(leaders.values()))
    d_leader = leaders.get("D")
    parts = []
    for name in distinct:
        axes = [AXIS_NAMES[a] for a, who in leaders.items() if who == name]
        where = "" if name == d_leader or name not in profiles.index else (
            f" from {ordinal(_d_rank(profiles, name))} of {n} on discrimination")
        parts.append(f"{name} leads {and_list(axes)}{where}")
    if len(distinct) == 1:
        text = (f"Among the {n} candidates, {distinct[0]} leads all {len(leaders)} axes: on this cohort the axes agree "
                "at the top, and the CRS's choice of a leader is no choice. Expect them to split on a cohort whose "
                "encoders trade one property for another.")
    else:
        text = (f"Among the {n} candidates, {len(distinct)} different encoders lead the {len(leaders)} axes: "
                f"{'; '.join(parts)}. No single axis orders the candidates as the four do, which is why one number "
                "hides choices.")
    lessons.append(Lesson(WORLD, text))
    column = {"L": "rho_chance" if not study_l else "rho_study", "R": "rho_chance" if not study_r else "rho_study"}
    if "L" in correlations.index and "R" in correlations.index:
        count = int(correlations["n_encoders"].iloc[0])
        bound = null_rho_bound(count)
        rho_l, rho_r = float(correlations.at["L", column["L"]]), float(correlations.at["R", column["R"]])
        if not (math.isnan(rho_l) or math.isnan(rho_r) or math.isnan(bound)):
            follow = [axis for axis, rho in (("label efficiency", rho_l), ("robustness", rho_r)) if abs(rho) > bound]
            text = (f"On the standard's scales, across {count} encoders, label efficiency follows clean AUROC at "
                    f"ρ = {fmt(rho_l, 2)} and the robustness loss at ρ = {fmt(rho_r, 2)} "
                    f"({'it falls as AUROC rises' if rho_r < 0 else 'it rises with AUROC'}; |ρ| below "
                    f"{fmt(bound, 2)} is within two sampling errors of none).")
            if len(follow) == 2:
                text += (" Both largely repeat discrimination here, so the four axes carry less independent "
                         "information than four numbers suggest and the CRS tracks AUROC (the agreement chapter "
                         "measures how closely). Expect the axes to separate more on a cohort whose encoders differ "
                         "in recipe more than in how well they discriminate.")
            elif follow:
                other = "robustness" if follow[0] == "label efficiency" else "label efficiency"
                text += (f" {follow[0].capitalize()} repeats discrimination here; {other} is not told apart from "
                         "independent of it, and carries what AUROC does not.")
            else:
                text += (" Neither is told apart from independent of discrimination: here the axes carry what AUROC "
                         "does not, and the CRS can disagree with it.")
            lessons.append(Lesson(WORLD, text))
    return lessons


def _normalised_points(change: "pd.Series | float", anchors: tuple[float, float]) -> "pd.Series | float":
    """A raw change in normalised points (1/100 of the anchor span), positive when it moves towards the best anchor."""
    worst, best = anchors
    return change / (best - worst) * 100


def four_axes_exercise_lora(
    frozen: "pd.DataFrame",
    lora: "pd.DataFrame",
    anchors: Mapping[str, tuple[float, float]],
    digits: int = 1,
) -> str:
    """The LoRA exercise's solution: the adapted profiles beside the frozen ones, in normalised points.

    Parameters
    ----------
    frozen, lora : pandas.DataFrame
        Raw profiles of the frozen and the LoRA arm (index encoder, columns D,
        C, L, R); compared on the encoders of both.
    anchors : mapping of str to (float, float)
        The standard's (worst, best) per axis.
    digits : int
        Decimals of the points.

    Returns
    -------
    str
        The mean change per axis (positive = better), the axis that moves
        most and the encoder behind its largest single change, judged
        against the encoders' spread on that axis in the frozen arm.

    Examples
    --------
    >>> import pandas as pd
    >>> frozen = pd.DataFrame({"D": [0.8, 0.7], "C": [0.03, 0.05], "L": [0.7, 0.5], "R": [0.2, 0.3]}, index=["a", "b"])
    >>> lora = frozen + pd.DataFrame({"D": [0.004, 0.002], "C": [0.0, 0.0], "L": [-0.02, -0.01], "R": [0.0, 0.0]},
    ...                              index=["a", "b"])
    >>> anchors = {"D": (0.5, 1.0), "C": (0.2, 0.0), "L": (0.0, 1.0), "R": (1.0, 0.0)}
    >>> print(four_axes_exercise_lora(frozen, lora, anchors))  # doctest: +NORMALIZE_WHITESPACE
    **In this build:** 2 encoders have a LoRA arm. Their mean change per axis in normalised points (one point is a
    hundredth of the anchor span; positive is better): D +0.6, C 0.0, L -1.5 and R 0.0. The largest is L (-1.5 points;
    the largest single change is a's, -2.0), 8 % of the 20 points that separate these encoders on L in the frozen arm:
    the adapters barely move the profiles, so the adapted ranking largely repeats the frozen one.
    """
    common = [name for name in frozen.index if name in lora.index]
    if not common:
        return "**In this build:** no encoder has both a frozen and a LoRA arm, so the arms cannot be compared."
    points = {}
    for axis in ("D", "C", "L", "R"):
        change = lora.loc[common, axis].astype(float) - frozen.loc[common, axis].astype(float)
        points[axis] = _normalised_points(change, anchors[axis])
    means = {axis: float(values.mean()) for axis, values in points.items()}

    def signed(value: float) -> str:
        text = fmt(value, digits)
        return text if text.startswith("-") or float(text) == 0 else "+" + text

    listed = and_list([f"{axis} {signed(value)}" for axis, value in means.items()])
    axis = max(means, key=lambda a: abs(means[a]))
    single = points[axis].abs().idxmax()
    frozen_points = _normalised_points(frozen.loc[common, axis].astype(float), anchors[axis])
    spread = abs(float(frozen_points.max() - frozen_points.min()))
    ratio = abs(means[axis]) / spread if spread > 0 else math.inf
    text = (f"**In this build:** {len(common)} encoder{'s have' if len(common) != 1 else ' has'} a LoRA arm. Their "
            "mean change per axis in normalised points (one point is a hundredth of the anchor span; positive is "
            f"better): {listed}. The largest is {axis} ({signed(means[axis])} points; the largest single change is "
            f"{single}'s, {signed(float(points[axis][single]))})")
    if spread > 0:
        text += (f", {ratio * 100:.0f} % of the {spread:.0f} points that separate these encoders on {axis} in the "
                 "frozen arm")
    if ratio < BARELY:
        text += ": the adapters barely move the profiles, so the adapted ranking largely repeats the frozen one."
    else:
        text += (f": adaptation moves {axis} by a visible part of what separates the encoders, so the adapted ranking "
                 "can differ from the frozen one on that axis.")
    return text


def four_axes_exercise_subset(
    leaders: Mapping[str, str],
    subset_leaders: Mapping[str, str],
    subset: str,
    subset_profiles: "pd.DataFrame | None" = None,
    shift_overall: bool = False,
    shift_in_subset: bool = False,
    digits: int = 3,
) -> str:
    """The one-dataset exercise's solution: the candidates' axis leaders on one dataset beside those of all.

    Parameters
    ----------
    leaders, subset_leaders : mapping of str to str
        Axis -> leading candidate on all datasets and on the subset.
    subset : str
        The subset's name (e.g. "derm").
    subset_profiles : pandas.DataFrame, optional
        The candidates' raw profiles on the subset; gives the values of a
        changed leader and of the overall leader there.
    shift_overall, shift_in_subset : bool
        Whether the whole table and the subset have a second site (the
        site-shift term of R).
    digits : int

    Returns
    -------
    str

    Examples
    --------
    >>> print(four_axes_exercise_subset({"D": "a", "R": "a"}, {"D": "a", "R": "p"}, "derm", shift_overall=True))
    ... # doctest: +NORMALIZE_WHITESPACE
    **In this build:** on derm alone the candidates' leaders are D: a and R: p. 1 of 2 axes keep their leader (D);
    robustness passes from a to p. An all-dataset leader leads the average over datasets: on one dataset another
    candidate can lead an axis it does not lead overall, so a leader chosen on the pooled table is a choice for that
    mix of tasks. There is no second site on derm, so its R is the corruption losses alone, without the site-shift
    term of the all-dataset R.
    """
    listed = and_list([f"{axis}: {name}" for axis, name in subset_leaders.items()])
    kept = [a for a in leaders if subset_leaders.get(a) == leaders[a]]
    changed = [a for a in leaders if a in subset_leaders and subset_leaders[a] != leaders[a]]
    text = f"**In this build:** on {subset} alone the candidates' leaders are {listed}."
    if not changed:
        text += (f" Every axis keeps its leader: on {subset} the same candidates lead as on the pooled table, so "
                 "the leaders are not an artefact of averaging over datasets here.")
    else:
        moves = []
        for axis in changed:
            old, new = leaders[axis], subset_leaders[axis]
            values = ""
            if subset_profiles is not None and old in subset_profiles.index and new in subset_profiles.index:
                values = (f" ({fmt(float(subset_profiles.at[new, axis]), digits)} against "
                          f"{fmt(float(subset_profiles.at[old, axis]), digits)} on {subset})")
            moves.append(f"{AXIS_NAMES[axis]} passes from {old} to {new}{values}")
        head = (f" {len(kept)} of {len(leaders)} axes keep their leader ({', '.join(kept)}); " if kept else
                " No axis keeps its leader: ")
        text += (head + "; ".join(moves) + ". An all-dataset leader leads the average over datasets: on one dataset "
                 "another candidate can lead an axis it does not lead overall, so a leader chosen on the pooled table "
                 "is a choice for that mix of tasks.")
    if shift_overall and not shift_in_subset:
        text += (f" There is no second site on {subset}, so its R is the corruption losses alone, without the "
                 "site-shift term of the all-dataset R.")
    return text


def _axis_rank(profiles: "pd.DataFrame", axis: str, name: str) -> int:
    """1-based rank of ``name`` on ``axis`` among the profiles (1 = best; ties share the best rank)."""
    values = profiles[axis].astype(float).dropna()
    mine = float(values[name])
    better = (values > mine) if _HIGHER[axis] else (values < mine)
    return int(better.sum()) + 1


def four_axes_takeaway(profiles: "pd.DataFrame", leaders: Mapping[str, str]) -> str:
    """The four-axes chapter's key takeaway: does the best discriminator lead the other axes too?

    Parameters
    ----------
    profiles : pandas.DataFrame
        Raw profiles of the candidates (index encoder, columns D, C, L, R),
        references left out.
    leaders : mapping of str to str
        Axis -> the candidate that leads it
        (:func:`crsbench_lib.report.summaries.axis_leaders`), with ``"D"``.

    Returns
    -------
    str
        Whether one encoder leads all four axes; if not, where the best
        discriminator ranks on each axis it does not lead.

    Examples
    --------
    >>> import pandas as pd
    >>> profiles = pd.DataFrame({"D": [0.9, 0.8, 0.6], "C": [0.05, 0.02, 0.04], "L": [0.9, 0.8, 0.5],
    ...                          "R": [0.1, 0.2, 0.4]}, index=["a", "b", "c"])
    >>> print(four_axes_takeaway(profiles, {"D": "a", "C": "b", "L": "a", "R": "a"}))  # doctest: +NORMALIZE_WHITESPACE
    2 different encoders lead the 4 axes among the 3 candidates: the best discriminator, a, ranks 3rd of 3 on
    calibration, so clean AUROC alone does not name the best encoder on every axis.
    """
    n = len(profiles)
    names = set(leaders.values())
    if len(names) == 1:
        (name,) = names
        return (f"{name} leads all {len(leaders)} axes among the {n} candidates: in this build the best discriminator "
                "is also the best calibrated, the most label-efficient and the most robust.")
    top = leaders["D"]
    # An axis the best discriminator has no value on (NaN) gives it no rank there.
    others = [a for a in leaders if a != "D" and leaders[a] != top and not math.isnan(float(profiles.loc[top, a]))]
    ranks = [f"{ordinal(_axis_rank(profiles, axis, top))}" + (" of " + str(n) if k == 0 else "") + f" on {AXIS_NAMES[axis]}"
             for k, axis in enumerate(others)]
    if not ranks:
        return (f"{len(names)} different encoders lead the {len(leaders)} axes among the {n} candidates, so clean "
                "AUROC alone does not name the best encoder on every axis.")
    return (f"{len(names)} different encoders lead the {len(leaders)} axes among the {n} candidates: the best "
            f"discriminator, {top}, ranks {and_list(ranks)}, so clean AUROC alone does not name the best encoder on "
            "every axis.")


def describe_retention_scale(scale: str, version: str) -> str:
    """What the label-efficiency figure draws, on the scale the standard's L uses (the figure's y axis).

    Written to follow "Figure N shows" and to precede "The axis L is the mean of the points left of 100 %",
    which holds because the figure draws the retention on the axis's own scale
    (:func:`crsbench_lib.report.plots.profiles.retention_on_scale`).

    Examples
    --------
    >>> describe_retention_scale("chance", "crs-default-v5")
    "each encoder's above-chance AUROC at a fraction of the train labels over its above-chance AUROC with all labels, (AUROC_f − 0.5) / (AUROC_100% − 0.5): the chance scale on which standard crs-default-v5 measures L"
    >>> describe_retention_scale("ratio", "crs-v1")
    "each encoder's AUROC at a fraction of the train labels divided by its own AUROC with all labels, AUROC_f / AUROC_100%: the study's ratio scale, on which standard crs-v1 measures L"
    """
    if scale == "chance":
        return ("each encoder's above-chance AUROC at a fraction of the train labels over its above-chance AUROC with "
                f"all labels, (AUROC_f − 0.5) / (AUROC_100% − 0.5): the chance scale on which standard {version} "
                "measures L")
    if scale == "ratio":
        return ("each encoder's AUROC at a fraction of the train labels divided by its own AUROC with all labels, "
                f"AUROC_f / AUROC_100%: the study's ratio scale, on which standard {version} measures L")
    raise ValueError(f"unknown label-efficiency scale {scale!r} (expected 'ratio' or 'chance')")


__all__ = ["AXIS_NAMES", "describe_retention_scale", "four_axes_exercise_lora", "four_axes_exercise_subset",
           "four_axes_lessons", "four_axes_takeaway"]


def _axis_words(axis: object) -> str:
    """``discrimination (D)``: an axis's name with its letter."""
    return f"{AXIS_NAMES.get(str(axis), str(axis))} ({axis})"


def describe_knockout(table: "pd.DataFrame", simulated: bool | None = None) -> str:
    """What each axis decides among the candidates, from :func:`~crsbench_lib.scoring.knockout.axis_knockout`.

    An axis decides the choice when holding it constant changes the leader, the
    order when it reverses some pairs, and nothing when it reverses none. The
    counts are of the point ranking (a counterfactual of the score, not a
    sampling statement); which axis decides is this build's world's, that the
    weights alone do not say it holds for any composite.

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({"axis": ["D", "C", "L", "R"], "tau_b": [0.70, 1.0, 0.94, 0.85],
    ...     "reversed_pairs": [10, 0, 2, 5], "pairs": [66] * 4, "leader": ["a"] * 4,
    ...     "leader_without": ["b", "a", "a", "c"], "leader_changes": [True, False, False, True]})
    >>> print(describe_knockout(table, simulated=True))  # doctest: +NORMALIZE_WHITESPACE
    Held constant one at a time, discrimination (D) reverses 10 of the 66 candidate pairs (τ_b 0.70 with the full
    ranking) and moves the lead from a to b; calibration (C) reverses none; label efficiency (L) reverses 2 (τ_b
    0.94); robustness (R) reverses 5 (τ_b 0.85) and moves the lead from a to c. So discrimination (D) and
    robustness (R) each decide the leader, and calibration (C) decides nothing among these candidates. Which axis
    decides is a fact of this build's simulated world; that an axis's weight does not say what it decides holds for
    any composite score.
    """
    from crsbench_lib.report.sentences.lessons import world_name

    if table.empty:
        return "No axis was knocked out: the page has fewer than two candidates to rank."
    parts = []
    for row in table.itertuples():
        name = _axis_words(row.axis)
        k = int(row.reversed_pairs)
        if k == 0:
            text = f"{name} reverses none"
        else:
            tau = "" if not math.isfinite(float(row.tau_b)) else f" (τ_b {fmt(float(row.tau_b), 2)})"
            head = f" of the {int(row.pairs)} candidate pairs" if not parts else ""
            text = f"{name} reverses {k}{head}{tau if parts else ''}"
            if not parts:
                text += f"{tau[:-1]} with the full ranking)" if tau else ""
        if bool(row.leader_changes):
            text += f" and moves the lead from {row.leader} to {row.leader_without}"
        parts.append(text)
    deciding = [_axis_words(a) for a in table.loc[table["leader_changes"].astype(bool), "axis"]]
    idle = [_axis_words(a) for a in table.loc[table["reversed_pairs"] == 0, "axis"]]
    text = "Held constant one at a time, " + "; ".join(parts) + "."
    if deciding:
        text += (f" So {and_list(deciding)} {'each decide' if len(deciding) > 1 else 'decides'} the leader"
                 if deciding else "")
    else:
        text += " So no single axis decides the leader on its own"
    text += (f", and {and_list(idle)} {'decide' if len(idle) > 1 else 'decides'} nothing among these candidates."
             if idle else ".")
    return (text + f" Which axis decides is a fact of {world_name(simulated)}; that an axis's weight does not say "
            "what it decides holds for any composite score.")
