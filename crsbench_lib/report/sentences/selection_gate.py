"""The sentences of the selection-gate chapter: who advances, and which thresholds bind.

The gate's outcome with the caution it calls for (:func:`describe_selection`),
which thresholds stop any candidate (:func:`describe_threshold_binding`), the
chapter's "Is this real?" lessons (:func:`selection_gate_lessons`) and its
exercise, the gate re-applied with other thresholds
(:func:`selection_gate_exercise`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from crsbench_lib.report.grammar import and_list, finite, fmt
from crsbench_lib.report.sentences.lessons import DESIGN, WORLD, Lesson, world_name
from crsbench_lib.report.sentences.references import name_references

if TYPE_CHECKING:
    import pandas as pd


def describe_selection(
    advance: Sequence[str],
    tier: Sequence[str],
    clears: Sequence[str],
    n_encoders: int,
    untrained: Sequence[str] = (),
    references: Sequence[str] = (),
    level: float = 0.95,
    references_clearing: Sequence[str] = (),
    families: Mapping[str, str] | None = None,
) -> str:
    """The selection gate's outcome, with the caution its outcome calls for.

    Parameters
    ----------
    advance : sequence of str
        Candidates both in the leading tier and clearing every threshold.
    tier : sequence of str
        The leading tier: the gate's ``leading_tier`` column, a copy of the
        bootstrap summary's ``in_tier`` (the confidence set for the best
        candidate, the same set the leading-tier page names).
    clears : sequence of str
        Candidates clearing every threshold.
    n_encoders : int
        Candidates screened (references not counted).
    untrained : sequence of str
        Encoders with no pretraining (random initialisation or no learning); one
        of them advancing (a candidate of the user's), or clearing every
        threshold as a reference, says the thresholds are too lax for this cohort.
    references : sequence of str
        Encoders shown as references, not candidates: named (by count and family
        when many), never advanced.
    level : float
        Simultaneous coverage of the tier's intervals.
    references_clearing : sequence of str
        The references that clear every threshold (gated like candidates); the
        untrained ones among them earn the caution.
    families : mapping of str to str, optional
        Encoder -> study family key, to name many references by their families.

    Examples
    --------
    >>> describe_selection(["cnn_random"], ["cnn_random", "mae"], ["cnn_random"], 15, untrained=["cnn_random"])
    '1 of 15 candidates clears every threshold; the leading tier (at least 95 % coverage of the best) is cnn_random and mae. cnn_random advances for deployment evaluation. Caution: cnn_random has no pretraining, so a gate it passes does not separate learned representations from an untrained baseline on this cohort; raise the thresholds or question the cohort before acting on it.'
    >>> describe_selection(["a"], ["a"], ["a", "b"], 2, references=["r"]).split(". ", 1)[1]
    'a advances for deployment evaluation. r is a reference, not a candidate: shown, never advanced.'
    >>> describe_selection(["a"], ["a"], ["a"], 4, untrained=["pixels"], references=["pixels"],
    ...                    references_clearing=["pixels"]).split(". ", 2)[2]
    'Caution: pixels, a reference with no pretraining, clears every threshold too, so the thresholds do not separate learned representations from an untrained baseline on this cohort; raise them or question the cohort before acting on the gate. pixels is a reference, not a candidate: shown, never advanced.'
    """
    if n_encoders < 0:
        raise ValueError(f"n_encoders must be non-negative, got {n_encoders}")
    if n_encoders > 0 and not tier:
        raise ValueError("the leading tier is empty among candidates: the point leader is always a member")
    stray = [name for name in advance if name not in set(tier) or name not in set(clears)]
    if stray:
        raise ValueError(f"{stray[0]!r} advances without being in the leading tier and clearing every threshold")
    leaked = [name for name in (*advance, *tier) if name in set(references)]
    if leaked:
        raise ValueError(f"reference {leaked[0]!r} cannot be in the leading tier or advance")
    text = (f"{len(clears)} of {n_encoders} candidates {'clears' if len(clears) == 1 else 'clear'} every threshold; "
            f"the leading tier (at least {finite(level, 'level') * 100:.0f} % coverage of the best) is "
            f"{and_list(list(tier)) if tier else 'empty'}. ")
    if references:
        refs = [str(r) for r in references]
        note = (f" {name_references(refs, families)} {'is a reference' if len(refs) == 1 else 'are references'}, not "
                f"{'a candidate' if len(refs) == 1 else 'candidates'}: shown, never advanced.")
    else:
        note = ""
    # An untrained reference never advances, but one that clears every threshold says the thresholds are too lax.
    lax = [str(name) for name in references_clearing if name in set(untrained) and name in set(references)]
    if lax:
        one = len(lax) == 1
        note = (f" Caution: {and_list(lax)}, {'a reference' if one else 'references'} with no pretraining, "
                f"{'clears' if one else 'clear'} every threshold too, so the thresholds do not separate learned "
                "representations from an untrained baseline on this cohort; raise them or question the cohort "
                "before acting on the gate." + note)
    if not advance:
        if not clears:
            return text + "No encoder clears the gate: the thresholds ask more than any candidate offers; revisit the candidates or the clinical requirements." + note
        return text + "No encoder is both in the leading tier and clears the gate: revisit the candidates or the thresholds." + note
    verb = "advances" if len(advance) == 1 else "advance"
    text += f"{and_list(list(advance))} {verb} for deployment evaluation."
    baseline = [name for name in advance if name in set(untrained)]
    if baseline:
        names = ", ".join(baseline)
        text += (f" Caution: {names} {'has' if len(baseline) == 1 else 'have'} no pretraining, so a gate "
                 f"{'it passes' if len(baseline) == 1 else 'they pass'} does not separate learned representations from an "
                 "untrained baseline on this cohort; raise the thresholds or question the cohort before acting on it.")
    return text + note


def describe_threshold_binding(failures: "pd.DataFrame") -> str:
    """Which thresholds stop any candidate, and which filter nothing on this build.

    Parameters
    ----------
    failures : pandas.DataFrame
        :func:`~crsbench_lib.scoring.selection_gate.threshold_failures`: axis,
        rule, failing, failing_alone, candidates.

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({"axis": ["D", "C"], "rule": ["D >= 0.7", "C <= 0.1"], "failing": [12, 0],
    ...                       "failing_alone": [12, 0], "candidates": [19, 19]})
    >>> describe_threshold_binding(table)
    'D >= 0.7 stops 12 of 19 candidates (12 by itself). C <= 0.1 binds no candidate: every candidate meets it, so on this build it filters nothing.'
    >>> describe_threshold_binding(table.assign(failing=[19, 0]))
    'D >= 0.7 stops 19 of 19 candidates (12 by itself): every candidate misses it, so on its own it closes the gate. C <= 0.1 binds no candidate: every candidate meets it, so on this build it filters nothing.'
    """
    for column in ("axis", "rule", "failing", "failing_alone", "candidates"):
        if column not in failures.columns:
            raise ValueError(f"describe_threshold_binding: the table lacks column {column!r}")
    if failures.empty:
        raise ValueError("describe_threshold_binding: no thresholds")
    n = int(failures["candidates"].iloc[0])
    binding = failures[failures["failing"] > 0]
    idle = failures[failures["failing"] == 0]
    parts = [f"{row['rule']} stops {int(row['failing'])} of {n} candidates ({int(row['failing_alone'])} by itself)"
             + (": every candidate misses it, so on its own it closes the gate." if int(row["failing"]) == n else ".")
             for _, row in binding.iterrows()]
    if not idle.empty:
        rules = and_list(idle["rule"].astype(str).tolist())
        one = len(idle) == 1
        if binding.empty:
            parts.append(f"No threshold binds: every candidate meets {rules}, so on this build the gate filters "
                         "nothing and only the leading tier decides.")
        else:
            parts.append(f"{rules} {'binds' if one else 'bind'} no candidate: every candidate meets "
                         f"{'it' if one else 'them'}, so on this build {'it filters' if one else 'they filter'} nothing.")
    return " ".join(parts)


_HIGHER = {"D": True, "C": False, "L": True, "R": False}
_AXIS_NAMES = {"D": "discrimination", "C": "calibration", "L": "label efficiency", "R": "robustness"}


def _rule(axis: str, value: float) -> str:
    """``D >= 0.85``: a threshold as the gate table writes it."""
    return f"{axis} {'>=' if _HIGHER[axis] else '<='} {value:g}"


def _best(values: Mapping[str, float], axis: str) -> tuple[str, float]:
    """The candidate best on ``axis`` (highest for D and L, lowest for C and R) and its value."""
    if not values:
        raise ValueError(f"no candidate value on axis {axis!r}")
    pick = max if _HIGHER[axis] else min
    name = pick(values, key=lambda k: finite(values[k], f"{axis} of {k}"))
    return name, float(values[name])


def _meets(value: float, axis: str, threshold: float) -> bool:
    return value >= threshold if _HIGHER[axis] else value <= threshold


def selection_gate_lessons(
    failures: "pd.DataFrame",
    candidate_profiles: "pd.DataFrame",
    n_advance: int,
    untrained_failed: Mapping[str, Sequence[str]] | None = None,
    robustness_scale: str | None = None,
    simulated: bool | None = None,
) -> list[Lesson]:
    """The selection gate's "Is this real?" lessons, decided from the gate's own numbers.

    Parameters
    ----------
    failures : pandas.DataFrame
        :func:`~crsbench_lib.scoring.selection_gate.threshold_failures` (axis,
        rule, failing, failing_alone, candidates).
    candidate_profiles : pandas.DataFrame
        The candidates' raw profiles (index encoder; a column per gated axis).
    n_advance : int
        Candidates that advance.
    untrained_failed : mapping, optional
        Each untrained encoder (no pretraining: a reference encoder of the zoo,
        gated though never advanced, or a candidate of the user's) and the axes
        it fails.
    robustness_scale : {"chance", "points"}, optional
        The standard's robustness scale (``standard.axis_scales.robustness``):
        what the number of an R threshold means.
    simulated : bool, optional
        Names the world (:func:`~crsbench_lib.report.sentences.lessons.world_name`).

    Returns
    -------
    list of Lesson
        Two of the design (a gate is a conjunction; a threshold is a number on
        the standard's scale, when R is gated and its scale known) and up to
        two of this build's world (where the thresholds fall against these
        candidates; whether the untrained networks get through).

    Examples
    --------
    >>> import pandas as pd
    >>> failures = pd.DataFrame({"axis": ["D", "R"], "rule": ["D >= 0.7", "R <= 0.15"], "failing": [9, 19],
    ...                          "failing_alone": [0, 10], "candidates": 19})
    >>> profiles = pd.DataFrame({"D": [0.856, 0.6], "R": [0.171, 0.4]}, index=["a", "b"])
    >>> lessons = selection_gate_lessons(failures, profiles, 0, robustness_scale="chance")
    >>> [lesson.scope for lesson in lessons]
    ['design', 'design', 'world']
    >>> lessons[2].text[:95]
    "In this build's world no candidate advances: R <= 0.15 stops every one of the 19, the best (a, "
    """
    for column in ("axis", "rule", "failing", "failing_alone", "candidates"):
        if column not in failures.columns:
            raise ValueError(f"selection_gate_lessons: the failures table lacks column {column!r}")
    if failures.empty:
        raise ValueError("selection_gate_lessons: no thresholds")
    n = int(failures["candidates"].iloc[0])
    closers = failures[failures["failing"] == n]["rule"].astype(str).tolist() if n else []
    idle = failures[failures["failing"] == 0]["rule"].astype(str).tolist()
    example = []
    if closers:
        example.append(f"{and_list(closers)} {'is' if len(closers) == 1 else 'are'} of the first kind")
    if idle:
        example.append(f"{and_list(idle)} {'is' if len(idle) == 1 else 'are'} of the second")
    here = (f" On this page {'; '.join(example)}." if example
            else " On this page every threshold stops some candidates and none stops all of them.")
    lessons = [Lesson(DESIGN, (
        "A gate is a conjunction: a candidate advances only if it clears every threshold and belongs to the "
        "leading tier. A threshold that every candidate misses therefore closes the gate whatever the others say, "
        "and one that no candidate misses filters nothing; which thresholds do either depends on where they sit "
        "against the candidates, not on the gate." + here))]
    r_rows = failures[failures["axis"] == "R"]
    if robustness_scale in ("chance", "points") and not r_rows.empty and "D" in candidate_profiles.columns:
        threshold = float(str(r_rows["rule"].iloc[0]).split()[-1])
        name, auroc = _best(candidate_profiles["D"].to_dict(), "D")
        above = max(auroc - 0.5, 0.0)
        if robustness_scale == "chance":
            meaning = (f"the share of the above-chance AUROC lost, so R <= {threshold:g} lets the best candidate "
                       f"here ({name}, AUROC {fmt(auroc, 3)}) lose at most {fmt(threshold * above, 3)} AUROC points, "
                       f"where the study's points scale would let it lose {threshold:g}")
        else:
            share = threshold / above if above > 0 else math.inf
            meaning = (f"AUROC points lost, so R <= {threshold:g} lets the best candidate here ({name}, AUROC "
                       f"{fmt(auroc, 3)}) lose {threshold:g} points, "
                       + (f"{share * 100:.0f} % of its above-chance AUROC" if math.isfinite(share)
                          else "more than its whole above-chance AUROC"))
        lessons.append(Lesson(DESIGN, (
            "A threshold is a number on the standard's scale, and the same number asks different things under "
            f"different standards: this standard's robustness axis counts {meaning}.")))
    world = world_name(simulated)
    worst = failures.sort_values("failing", ascending=False, kind="stable").iloc[0]
    axis = str(worst["axis"])
    if int(worst["failing"]) == 0:
        outcome = (f"In {world} no threshold stops any candidate: the gate filters nothing, and the leading tier "
                   "alone decides who advances.")
    else:
        values = candidate_profiles[axis].to_dict() if axis in candidate_profiles.columns else {}
        best = ""
        if values:
            name, value = _best(values, axis)
            meets = _meets(value, axis, float(str(worst["rule"]).split()[-1]))
            best = f", the best ({name}, {axis} {fmt(value, 3)}) {'meeting' if meets else 'missing'} it"
        stops = (f"every one of the {n}" if int(worst["failing"]) == n else f"{int(worst['failing'])} of the {n}")
        head = (f"In {world} {'no candidate advances' if n_advance == 0 else f'{n_advance} of {n} candidates advance'}: "
                f"{worst['rule']} stops {stops}{best}.")
        outcome = (head + " The default thresholds are round placeholders, not clinical requirements, so where "
                   "they fall against these encoders is a fact of this world: another cohort's encoders can meet "
                   f"{worst['rule']} and miss another threshold instead.")
    lessons.append(Lesson(WORLD, outcome))
    if untrained_failed:
        through = [name for name, axes in untrained_failed.items() if not axes]
        stopped = {name: list(axes) for name, axes in untrained_failed.items() if axes}
        if through:
            text = (f"{and_list(through)} {'has' if len(through) == 1 else 'have'} no pretraining and "
                    f"{'clears' if len(through) == 1 else 'clear'} every threshold here: the thresholds do not "
                    "separate learned features from random ones on this cohort, so they are too lax for it.")
        else:
            # A threshold separates learned from random features when it stops every untrained network and
            # lets some candidate through (one that stops every candidate separates nothing).
            open_axes = set(failures.loc[failures["failing"] < n, "axis"].astype(str))
            shared = sorted(set.intersection(*(set(a) for a in stopped.values())) & open_axes, key="DCLR".index)
            one = len(stopped) == 1
            fails = "; ".join(f"{k} fails {and_list(v)}" for k, v in stopped.items())
            text = (f"The one untrained encoder does not get through here ({fails})" if one
                    else f"No untrained encoder gets through here ({fails})")
            if shared:
                text += (f": {and_list(shared)}, which some trained candidates meet, "
                         f"separate{'s' if len(shared) == 1 else ''} learned features from random ones on this cohort.")
            else:
                text += (": but no threshold that any trained candidate meets stops "
                         f"{'it' if one else 'them all'}, so the thresholds do not separate learned features from "
                         "random ones on this cohort.")
            text += " On a cohort where random features do well, the same thresholds could let one through."
        lessons.append(Lesson(WORLD, text))
    return lessons


def selection_gate_exercise(
    profiles: "pd.DataFrame",
    summary: "pd.DataFrame",
    thresholds: Mapping[str, float],
    changes: Mapping[str, float | None],
    references: Sequence[str] = (),
) -> str:
    """The gate re-applied with some thresholds changed (or dropped), and what it shows, in words.

    Parameters
    ----------
    profiles : pandas.DataFrame
        The raw point profiles the page gated (index encoder; D, C, L, R), e.g.
        the bootstrap's ``point_profiles``.
    summary : pandas.DataFrame
        The bootstrap summary whose ``in_tier`` the page read.
    thresholds : mapping
        The page's thresholds.
    changes : mapping
        Axis -> new threshold, or None to drop that threshold.
    references : sequence of str
        The references (gated, never advanced).

    Returns
    -------
    str
        How many candidates clear and advance under the changed gate, each
        changed threshold's reach (the best candidate's value and how many it
        stops), which threshold now decides, and what that means.

    Examples
    --------
    >>> import pandas as pd
    >>> profiles = pd.DataFrame({"D": [0.856, 0.80], "R": [0.17, 0.30]}, index=pd.Index(["a", "b"], name="encoder"))
    >>> summary = pd.DataFrame({"encoder": ["a", "b"], "in_tier": [True, False]})
    >>> print(selection_gate_exercise(profiles, summary, {"D": 0.7, "R": 0.15}, {"D": 0.85}))
    ... # doctest: +NORMALIZE_WHITESPACE
    With D >= 0.85 (R <= 0.15 unchanged), 0 of 2 candidates clear every threshold and none advances. The best
    candidate on D is a at 0.856, so D >= 0.85 stops 1 of 2 and only a meets it. What decides is R <= 0.15: every
    candidate misses it, so the gate stays shut whatever the other thresholds ask; loosening any other threshold
    would change nothing.
    >>> selection_gate_exercise(profiles, summary, {"D": 0.7, "R": 0.15}, {"R": None}).split(". ")[0]
    'With no R threshold (D >= 0.7 unchanged), 2 of 2 candidates clear every threshold and a advances'
    """
    absent = [axis for axis, value in changes.items() if value is None and axis not in thresholds]
    if absent:
        raise ValueError(f"selection_gate_exercise: the page has no {absent[0]} threshold to drop")
    new = {axis: value for axis, value in {**dict(thresholds), **dict(changes)}.items() if value is not None}
    if not new:
        members = summary.loc[summary["in_tier"].astype(bool), "encoder"].astype(str).tolist()
        return (f"With no threshold left, the gate filters nothing and the leading tier alone decides: its "
                f"{len(members)} member{'s' if len(members) != 1 else ''} ({and_list(members) if members else 'none'}) "
                "would advance. A gate without thresholds is a leaderboard with a tier.")
    from crsbench_lib.scoring.selection_gate import selection_gate, threshold_failures

    gate = selection_gate(profiles, new, summary, references=references)
    candidates = gate[gate["role"] == "candidate"]
    n = len(candidates)
    clear = candidates.loc[candidates["clears_gate"], "encoder"].tolist()
    advance = candidates.loc[candidates["decision"] == "advance", "encoder"].tolist()
    failures = threshold_failures(gate, new)
    changed = [f"{_rule(a, v)}" if v is not None else f"no {a} threshold" for a, v in changes.items()]
    kept = [_rule(a, v) for a, v in new.items() if a not in changes]
    text = (f"With {and_list(changed)}" + (f" ({and_list(kept)} unchanged)" if kept else "")
            + f", {len(clear)} of {n} candidates {'clears' if len(clear) == 1 else 'clear'} every threshold and "
            + ("none advances." if not advance else f"{and_list(advance)} {'advances' if len(advance) == 1 else 'advance'}."))
    values = profiles.set_index("encoder") if "encoder" in profiles.columns else profiles
    values = values.set_axis(values.index.astype(str)).loc[candidates["encoder"].tolist()]
    for axis, value in changes.items():
        if value is None:
            continue
        name, best = _best(values[axis].to_dict(), axis)
        stopped = int(failures.loc[failures["axis"] == axis, "failing"].iloc[0])
        reach = [e for e in values.index if _meets(float(values.loc[e, axis]), axis, value)]
        text += (f" The best candidate on {axis} is {name} at {fmt(best, 3)}, so {_rule(axis, value)} stops {stopped} "
                 f"of {n}" + (f" and only {and_list(reach)} {'meets' if len(reach) == 1 else 'meet'} it." if 0 < len(reach) <= 3
                              else f"; {len(reach)} meet it." if reach
                              else ": the requirement lies beyond every candidate, out of this zoo's reach."))
    closers = failures[failures["failing"] == n]["rule"].tolist() if n else []
    if advance:
        text += (f" {and_list(advance)} {'is' if len(advance) == 1 else 'are'} in the leading tier and clear"
                 f"{'s' if len(advance) == 1 else ''} the changed gate: the thresholds now let the tier decide among "
                 "those who meet every requirement.")
        failed = gate.set_index("encoder")["failed_axes"]
        stuck = [f"{e} fails {and_list([a.strip() for a in str(failed[e]).split(',')])}"
                 for e in candidates.loc[candidates["leading_tier"].astype(bool), "encoder"] if e not in set(advance)]
        if stuck:
            text += f" The rest of the tier stays behind: {'; '.join(stuck)}."
        outside = [e for e in clear if e not in set(advance)]
        if outside:
            text += (f" {and_list(outside)} {'clears' if len(outside) == 1 else 'clear'} it too but "
                     f"{'stays' if len(outside) == 1 else 'stay'} outside the tier.")
    elif closers:
        text += (f" What decides is {and_list(closers)}: every candidate misses "
                 f"{'it' if len(closers) == 1 else 'each of them'}, so the gate stays shut whatever the other "
                 "thresholds ask; loosening any other threshold would change nothing.")
    elif clear:
        text += (f" {and_list(clear)} {'clears' if len(clear) == 1 else 'clear'} every threshold but "
                 f"{'is' if len(clear) == 1 else 'are'} outside the leading tier: the data show another candidate "
                 "above, so the tier, not a threshold, stops them.")
    else:
        text += (" No single threshold stops everyone: each candidate misses a different requirement, so only "
                 "loosening several at once would let one through.")
    return text


def selection_gate_takeaway(
    advance: Sequence[str],
    tier: Sequence[str],
    clears: Sequence[str],
    n_candidates: int,
    failures: "pd.DataFrame",
    untrained: Sequence[str] = (),
) -> str:
    """The selection gate's key takeaway: who advances, and what decided it.

    Parameters
    ----------
    advance, tier, clears : sequence of str
        As :func:`describe_selection`: the candidates that advance, the leading tier, the candidates clearing
        every threshold.
    n_candidates : int
        Candidates screened (references not counted).
    failures : pandas.DataFrame
        :func:`~crsbench_lib.scoring.selection_gate.threshold_failures` (rule, failing).
    untrained : sequence of str
        Encoders with no pretraining; one of them advancing is named as the caution it calls for.

    Returns
    -------
    str
        One or two sentences for :func:`crsbench_lib.report.takeaway.glue_takeaway`.

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({"rule": ["D >= 0.7", "R <= 0.15"], "failing": [3, 5]})
    >>> selection_gate_takeaway(["a"], ["a", "b"], ["a", "c"], 6, table)
    '1 of 6 candidates advances to deployment evaluation: a, the only one both clearing all 2 thresholds and in the leading tier.'
    >>> selection_gate_takeaway([], ["a"], [], 6, table)
    'No candidate advances: none of the 6 clears every threshold, and R <= 0.15 stops the most (5 of them).'
    """
    from crsbench_lib.report.sentences.leading_tier import short_names

    if any(name not in set(tier) or name not in set(clears) for name in advance):
        raise ValueError("a candidate advances without being in the leading tier and clearing every threshold")
    n_rules = len(failures)
    if advance:
        names = short_names(list(advance))
        if len(advance) == 1:
            text = (f"1 of {n_candidates} candidates advances to deployment evaluation: {names}, the only one both "
                    f"clearing all {n_rules} thresholds and in the leading tier.")
        else:
            text = (f"{len(advance)} of {n_candidates} candidates advance to deployment evaluation ({names}): each "
                    f"clears all {n_rules} thresholds and sits in the leading tier.")
        baseline = [name for name in advance if name in set(untrained)]
        if baseline:
            text += (f" Yet {and_list(baseline)} {'has' if len(baseline) == 1 else 'have'} no pretraining: these "
                     "thresholds do not separate learned representations from an untrained baseline here.")
        return text
    if clears:
        return (f"No candidate advances: {len(clears)} of {n_candidates} clear every threshold "
                f"({short_names(list(clears))}), but none of them is in the leading tier ({short_names(list(tier))}).")
    worst = failures.sort_values("failing", ascending=False, kind="stable").iloc[0]
    count = int(worst["failing"])
    stops = "stops every one of them" if count == n_candidates else f"stops the most ({count} of them)"
    return (f"No candidate advances: none of the {n_candidates} clears every threshold, and {worst['rule']} "
            f"{stops}.")
