"""The leading-tier chapter's teaching sentences: the reference's standing, "Is this real?" and the exercises.

Whether any candidate beats the in-task reference, axis by axis
(:func:`describe_reference_standing`, with the paired standard errors of
:func:`crsbench_lib.scoring.bootstrap.paired_reference_se`), the chapter's lessons sorted into those of any
benchmark of this design and those of this build's world
(:func:`leading_tier_lessons`), and the exercises' answers computed from the
page's own bootstrap draws: the tier at another coverage
(:func:`leading_tier_exercise_coverage`), with fewer draws
(:func:`leading_tier_exercise_draws`) and P(top k) for another k
(:func:`leading_tier_exercise_top_k`). The chapter's other sentences live in
:mod:`crsbench_lib.report.sentences.leading_tier`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from crsbench_lib.report.grammar import and_list, finite, fmt, percent
from crsbench_lib.report.sentences.lessons import DESIGN, WORLD, Lesson, world_name
from crsbench_lib.scoring.rank_statistics import descending_ranks

if TYPE_CHECKING:
    import pandas as pd

#: The columns a standing table may hold, with whether higher is better and what they are called in a sentence.
_STANDING_AXES = {"CRS": (True, "CRS"), "D": (True, "D (AUROC)"), "C": (False, "C (ECE, lower is better)"),
                  "L": (True, "L (label efficiency)"), "R": (False, "R (robustness loss, lower is better)")}


def describe_reference_standing(
    profiles: "pd.DataFrame",
    reference: str,
    candidates: Sequence[str],
    se: "pd.DataFrame | None" = None,
    level: float = 0.95,
    digits: int = 3,
) -> str:
    """Whether any candidate beats the in-task reference, axis by axis: is the reference a ceiling here?

    A reference pretrained on the evaluation labels is often read as what the
    task allows. Whether it is one is a measurement: a candidate whose
    pretraining is close to the task can pass it on some axes. The sentence
    counts, per column shown, the candidates better than the reference at the
    point and, with ``se``, those whose paired interval excludes zero. The
    intervals are simultaneous over the candidates compared in a column
    (Bonferroni: the normal quantile of ``1 - (1 - level) / (2 m)`` for ``m``
    candidates), so that the paragraph holds its claims to the same standard
    as the page's leading tier, whose statements are simultaneous too (method
    section 9, amendment 30): a one-pair interval that excludes zero for one
    of twelve candidates is what one in twenty such intervals does by chance.

    Parameters
    ----------
    profiles : pandas.DataFrame
        Index encoder; any of the columns CRS, D, C, L, R (raw units; C and R
        lower is better).
    reference : str
        The reference's row.
    candidates : sequence of str
        The candidates' rows.
    se : pandas.DataFrame, optional
        :func:`crsbench_lib.scoring.bootstrap.paired_reference_se`.
    level : float
        Simultaneous coverage of a column's paired intervals.
    digits : int
        Decimals shown.

    Returns
    -------
    str

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({"CRS": [0.60, 0.70, 0.50], "D": [0.846, 0.856, 0.70]}, index=["ref", "a", "b"])
    >>> print(describe_reference_standing(table, "ref", ["a", "b"]))  # doctest: +NORMALIZE_WHITESPACE
    Is the in-task reference ref, pretrained on the evaluation labels, a ceiling? Not here: on CRS 1 of the 2
    candidates scores better than it (the best, a, 0.700 against 0.600); on D (AUROC) 1 (the best, a, 0.856 against
    0.846). It marks what its pretraining reaches, not what the task allows: a candidate whose pretraining is close to
    the task can pass it.
    >>> describe_reference_standing(table.loc[["ref", "b"]], "ref", ["b"]).split(": ")[0]
    'Is the in-task reference ref, pretrained on the evaluation labels, a ceiling? On this build, yes for every column shown'
    """
    from statistics import NormalDist

    if reference not in profiles.index:
        raise ValueError(f"describe_reference_standing: no row for reference {reference!r}")
    names = [str(c) for c in candidates if str(c) != reference]
    absent = [c for c in names if c not in profiles.index]
    if absent or not names:
        raise ValueError(f"describe_reference_standing: no candidate row{' for ' + repr(absent[0]) if absent else ''}")
    columns = [c for c in _STANDING_AXES if c in profiles.columns]
    if not columns:
        raise ValueError("describe_reference_standing: none of the columns CRS, D, C, L, R")
    # Simultaneous over the m candidates of a column (Bonferroni), as the page's tier is simultaneous.
    z = NormalDist().inv_cdf(1.0 - (1.0 - finite(level, "level")) / (2.0 * len(names)))
    beaten, unbeaten = [], []
    resolved_any = False  # with se: does any candidate clear its simultaneous interval on any column?
    for column in columns:
        higher, label = _STANDING_AXES[column]
        ref = finite(profiles.loc[reference, column], f"{column} of {reference}")
        values = profiles.loc[names, column].astype(float)
        gain = (values - ref) if higher else (ref - values)
        better = gain[gain > 0].sort_values(ascending=False)
        if better.empty:
            unbeaten.append(column)
            continue
        best = str(better.index[0])
        clause = (f"{label} {len(better)}" + (f" of the {len(names)} candidates "
                                               f"{'scores' if len(better) == 1 else 'score'} better than it"
                                               if not beaten else "")
                  + f" (the best, {best}, {fmt(float(profiles.loc[best, column]), digits)} against {fmt(ref, digits)}")
        if se is not None and column in se.columns:
            clear = [n for n in better.index if float(se.loc[n, column]) >= 0 and gain[n] > z * float(se.loc[n, column])]
            resolved_any = resolved_any or bool(clear)
            interval = (f"the paired interval of the difference, simultaneous at {level * 100:.0f} % over the "
                        f"{len(names)} candidates,")
            if len(better) == 1:
                clause += f"; {interval} {'excludes' if clear else 'includes'} zero"
            else:
                named = f" ({and_list(clear)})" if 0 < len(clear) <= 3 else ""
                clause += f"; for {len(clear) if clear else 'none'} of them{named} {interval} excludes zero"
        beaten.append(clause + ")")
    head = f"Is the in-task reference {reference}, pretrained on the evaluation labels, a ceiling?"
    if not beaten:
        return (f"{head} On this build, yes for every column shown: no candidate scores better than it on "
                f"{and_list(columns)}, so here it marks what the task allows with these features.")
    if se is not None and not resolved_any:
        # The verdict follows the intervals when there are any: point gains alone do not show it passed.
        text = f"{head} Not shown here: at the point, on {'; on '.join(beaten)}"
        if unbeaten:
            text += f"; on {and_list(unbeaten)} no candidate scores better"
        return (text + ". No candidate's gain clears its simultaneous interval, so the data do not show the "
                "reference passed; nor do they show it to be a ceiling.")
    text = f"{head} Not here: on {'; on '.join(beaten)}"
    if unbeaten:
        text += f"; on {and_list(unbeaten)} no candidate scores better"
    return (text + ". It marks what its pretraining reaches, not what the task allows: a candidate whose "
            "pretraining is close to the task can pass it.")


def _tier_inputs(summary: "pd.DataFrame", encoders: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """(point CRS, is candidate) in the column order of the draws."""
    table = summary.assign(encoder=summary["encoder"].astype(str)).set_index("encoder")
    names = [str(e) for e in encoders]
    point = table.loc[names, "crs"].to_numpy(dtype=float)
    roles = table.loc[names, "role"].astype(str).to_numpy() if "role" in table.columns else np.full(len(names), "candidate")
    return point, roles == "candidate"


def _tier_of(draws: np.ndarray, point: np.ndarray, candidates: np.ndarray, names: Sequence[str], level: float):
    """The tier (by point CRS, the leader first), its largest critical value, each candidate's distance and own value.

    The distance of candidate i is ``max_j (c_j - c_i) / se_ji`` over the other candidates: i is in the tier when
    it is below i's own critical value ``q_i`` (no rival's lower bound lies above zero).
    """
    from crsbench_lib.scoring.tier import best_confidence_set

    decision = best_confidence_set(draws, point, candidates, level)
    order = np.argsort(-point, kind="stable")
    members = [str(names[i]) for i in order if decision.in_tier[i]]
    distance = {}
    for i in np.flatnonzero(candidates):
        rivals = [(point[j] - point[i]) / decision.se[j, i] for j in np.flatnonzero(candidates)
                  if j != i and decision.se[j, i] > 0]
        distance[str(names[i])] = max(rivals) if rivals else -np.inf
    own = {str(names[i]): float(decision.critical_values[i]) for i in np.flatnonzero(candidates)}
    return members, decision.critical_value, distance, own


def _nearest(members: Sequence[str], distance: Mapping[str, float]) -> str:
    """The member nearest to leaving and the outsider nearest to joining, in standard errors."""
    inside = [m for m in members if np.isfinite(distance.get(m, -np.inf))]
    outside = [n for n in distance if n not in set(members)]
    parts = []
    if inside:
        edge = max(inside, key=lambda m: distance[m])
        if distance[edge] > 0:
            parts.append(f"the member nearest to leaving, {edge}, sits {distance[edge]:.2f} standard errors below its "
                         "strongest rival")
    if outside:
        edge = min(outside, key=lambda n: distance[n])
        parts.append(f"the outsider nearest to joining, {edge}, sits {distance[edge]:.2f} standard errors below its "
                     "strongest rival")
    return and_list(parts) if parts else ""


def leading_tier_exercise_coverage(
    crs_draws: np.ndarray, encoders: Sequence[str], summary: "pd.DataFrame", level: float, page_level: float = 0.95
) -> str:
    """The leading tier at another coverage, from the page's own draws, and why it moved or did not.

    Parameters
    ----------
    crs_draws : numpy.ndarray
        (B, E) CRS draws of the page's bootstrap.
    encoders : sequence of str
        Their column names.
    summary : pandas.DataFrame
        The bootstrap summary (encoder, crs, role).
    level : float
        The exercise's coverage.
    page_level : float
        The page's coverage.

    Returns
    -------
    str

    Examples
    --------
    >>> import pandas as pd
    >>> rng = np.random.default_rng(1)
    >>> point = np.array([0.70, 0.66, 0.50])
    >>> draws = point + rng.normal(0.0, 0.02, (400, 3))
    >>> summary = pd.DataFrame({"encoder": ["a", "b", "c"], "crs": point, "role": "candidate"})
    >>> leading_tier_exercise_coverage(draws, ["a", "b", "c"], summary, 0.5).split(": ")[0]
    'At 50 % coverage the largest critical value falls from 2.02 to 0.42 standard errors and the tier holds 1 candidate (a), against 2 at 95 %'
    """
    point, candidates = _tier_inputs(summary, encoders)
    names = [str(e) for e in encoders]
    base, q0, _, _ = _tier_of(crs_draws, point, candidates, names, page_level)
    new, q1, distance, _ = _tier_of(crs_draws, point, candidates, names, level)
    move = "falls" if q1 < q0 else "rises" if q1 > q0 else "stays"
    text = (f"At {level * 100:.0f} % coverage the largest critical value {move} from {q0:.2f} to {q1:.2f} standard "
            f"errors and the tier holds {len(new)} candidate{'s' if len(new) != 1 else ''} ({and_list(new)})")
    if new == base:
        text += f", the same as at {page_level * 100:.0f} %"
    else:
        left, joined = [m for m in base if m not in new], [m for m in new if m not in base]
        text += f", against {len(base)} at {page_level * 100:.0f} %"
        if left:
            text += f": {and_list(left)} {'leaves' if len(left) == 1 else 'leave'}"
        if joined:
            text += f"{': ' if not left else '; '}{and_list(joined)} {'joins' if len(joined) == 1 else 'join'}"
    text += ". A candidate stays in the tier while no rival is more than its own critical value above it"
    near = _nearest(new, distance)
    text += f" ({near})." if near else "."
    if level < page_level:
        text += (" Lower coverage narrows every interval, so a tier can only shrink or stay: it buys a smaller set "
                 "at the price of a higher chance of leaving the truly best candidate out.")
    elif level > page_level:
        text += (" Higher coverage widens every interval, so a tier can only grow or stay: a surer set, and a "
                 "never a smaller one.")
    return text


def leading_tier_exercise_draws(
    crs_draws: np.ndarray, encoders: Sequence[str], summary: "pd.DataFrame", n_draws: int = 200, level: float = 0.95
) -> str:
    """The tier from two disjoint sets of ``n_draws`` of the page's draws: how much does Monte-Carlo error move it?

    Two disjoint sets of draws stand for two reruns with fewer draws and other
    seeds; the tier and the critical value of each are set beside the page's.

    Examples
    --------
    >>> import pandas as pd
    >>> rng = np.random.default_rng(2)
    >>> point = np.array([0.70, 0.69, 0.50])
    >>> draws = point + rng.normal(0.0, 0.02, (1000, 3))
    >>> summary = pd.DataFrame({"encoder": ["a", "b", "c"], "crs": point, "role": "candidate"})
    >>> leading_tier_exercise_draws(draws, ["a", "b", "c"], summary).split(";")[0]
    "With the first 200 of the page's 1000 draws the tier is a and b (largest critical value 2.01)"
    """
    draws = np.asarray(crs_draws, dtype=float)
    total = draws.shape[0]
    if not 2 <= n_draws <= total // 2:
        raise ValueError(f"n_draws must lie in [2, {total // 2}] for two disjoint sets of {total} draws, got {n_draws}")
    point, candidates = _tier_inputs(summary, encoders)
    names = [str(e) for e in encoders]
    full, q, distance, own = _tier_of(draws, point, candidates, names, level)
    first, q1, _, _ = _tier_of(draws[:n_draws], point, candidates, names, level)
    last, q2, _, _ = _tier_of(draws[-n_draws:], point, candidates, names, level)
    text = (f"With the first {n_draws} of the page's {total} draws the tier is {and_list(first)} (largest critical value "
            f"{q1:.2f}); with the last {n_draws}, {and_list(last)} ({q2:.2f}); with all {total}, {and_list(full)} "
            f"({q:.2f}).")
    if first == last == full:
        shift = max(abs(q1 - q), abs(q2 - q))
        margins = {name: abs(d - own[name]) for name, d in distance.items() if np.isfinite(d)}
        closest = min(margins, key=margins.get) if margins else None
        text += (" The tier does not move: the largest critical value, a quantile of the largest one-sided "
                 f"standardised deviation of a candidate's comparisons, shifts by up to {shift:.2f} standard errors "
                 "with fewer draws")
        if closest is not None and margins[closest] <= shift:
            text += (f", and {closest} sits within that shift of the edge ({distance[closest]:.2f} standard errors "
                     "below its strongest rival), so another rerun could move it.")
        else:
            near = _nearest(full, distance)
            text += ", and no candidate sits that close to the edge" + (f" ({near})." if near else ".")
    else:
        moved = sorted(set(first) ^ set(full) | set(last) ^ set(full))
        text += (f" {and_list(moved)} {'moves' if len(moved) == 1 else 'move'} with the draws: "
                 f"{'its gap to a rival sits' if len(moved) == 1 else 'their gaps to a rival sit'} at the edge of what the "
                 "intervals resolve, so with fewer draws Monte-Carlo error alone decides membership there; "
                 "more draws, not another seed, settle it.")
    return text + (" P(rank 1) and the other shares move by Monte-Carlo error too: with "
                   f"{n_draws} draws a share has a standard error of up to {100 * 0.5 / np.sqrt(n_draws):.1f} "
                   "percentage points (the most, for a share near one half).")


def leading_tier_exercise_top_k(
    crs_draws: np.ndarray, encoders: Sequence[str], summary: "pd.DataFrame", k: int, page_k: int = 3
) -> str:
    """P(top k) for another k, from the page's draws, and why the tier does not follow it.

    Examples
    --------
    >>> import pandas as pd
    >>> rng = np.random.default_rng(3)
    >>> point = np.array([0.70, 0.69, 0.50, 0.40])
    >>> draws = point + rng.normal(0.0, 0.02, (500, 4))
    >>> summary = pd.DataFrame({"encoder": list("abcd"), "crs": point, "role": "candidate", "in_tier": [1, 1, 0, 0]})
    >>> leading_tier_exercise_top_k(draws, list("abcd"), summary, 3, page_k=2).split(". ")[0]
    'In the top 3 in every draw: a, b and c (in the top 2 in every draw: a and b)'
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    point, candidates = _tier_inputs(summary, encoders)
    names = [str(e) for e, c in zip(encoders, candidates, strict=True) if c]
    draws = np.asarray(crs_draws, dtype=float)[:, candidates]
    ranks = descending_ranks(draws, ties="min", axis=1)
    order = np.argsort(-point[candidates], kind="stable")

    def always(top: int) -> list[str]:
        share = (ranks <= top).mean(axis=0)
        return [names[i] for i in order if share[i] >= 1.0]

    new, old = always(k), always(page_k)
    share = (ranks <= k).mean(axis=0)
    tier = summary.loc[summary["in_tier"].astype(bool), "encoder"].astype(str).tolist() if "in_tier" in summary else []
    text = (f"In the top {k} in every draw: {and_list(new) if new else 'none'} (in the top {page_k} in every draw: "
            f"{and_list(old) if old else 'none'}).")
    members = [n for n in tier if n in names]
    if members:
        text += (" P(top " + str(k) + ") of the tier's members: "
                 + and_list([f"{n} {share[names.index(n)]:.3f}" for n in members]) + ".")
        text += (f" The leading tier is the same {len(members)} candidates whatever k: it is read on the tier "
                 "intervals of the CRS differences, and k only chooses which share of the draws the table counts.")
    outside = [i for i in order if share[i] < 1.0]
    nearest = f" (the nearest, {names[outside[0]]}, is in the top {k} in {share[outside[0]]:.3f} of draws)" if outside else ""
    if k > page_k and len(new) > len(old):
        text += (f" A larger k puts more candidates always inside it ({len(new)} against {len(old)}), because a wider "
                 "cut-off is easier to clear in every draw.")
    elif k > page_k:
        text += (f" A larger k adds no candidate to those always inside it here: the next ones still miss the top {k} "
                 f"in some draws{nearest}.")
    elif k < page_k:
        text += (f" A smaller k is harder to clear in every draw, so {'fewer' if len(new) < len(old) else 'no fewer'} "
                 "candidates are always inside it.")
    return text + (" Always in the top k and in the tier are different claims: one counts draws, the other reads the "
                   "tier intervals.")


def leading_tier_lessons(
    members: Sequence[str],
    n_candidates: int,
    p_rank1: Mapping[str, float],
    critical_value: float,
    n_seeds: int,
    n_seed_resamples: int,
    level: float = 0.95,
    simulated: bool | None = None,
    study_p_rank1: Mapping[str, float] | None = None,
    study_encoders: int | None = None,
) -> list[Lesson]:
    """The leading-tier chapter's "Is this real?" lessons, from the page's numbers.

    Parameters
    ----------
    members : sequence of str
        The tier, the leader first.
    n_candidates : int
        Candidates ranked.
    p_rank1 : mapping
        P(rank 1) per candidate.
    critical_value : float
        The largest of the candidates' one-sided critical values (NaN when there is none).
    n_seeds, n_seed_resamples : int
        Seeds of the run, and distinct resamples of them among the draws.
    level : float
        Simultaneous coverage.
    simulated : bool, optional
        Names the world.
    study_p_rank1 : mapping, optional
        The study's P(rank 1) of its leaders (``PUBLISHED.bootstrap_p_rank1``).
    study_encoders : int, optional
        The study's number of encoders.

    Returns
    -------
    list of Lesson
        Two of the design (a tier decided by one-sided bounds; the seed
        level's few distinct resamples) and one of this build's world (the
        tier's size and the leader's share of first places).

    Examples
    --------
    >>> lessons = leading_tier_lessons(["a", "b"], 19, {"a": 0.6, "b": 0.4}, 3.5, 3, 10)
    >>> [lesson.scope for lesson in lessons]
    ['design', 'design', 'world']
    >>> lessons[1].text[:88]
    'With 3 seeds the seed level of any bootstrap has at most 10 distinct resamples (C(5, 3))'
    """
    from statistics import NormalDist

    names = [str(m) for m in members]
    if not names:
        raise ValueError("leading_tier_lessons needs the tier (the leader at least)")
    pairs = n_candidates * (n_candidates - 1) // 2
    one = NormalDist().inv_cdf(level)  # one-sided: a rival above the candidate
    pct = f"{level * 100:.0f} %"
    if math.isfinite(critical_value) and n_candidates >= 2:
        width = (f" With {n_candidates} candidates each candidate is compared with its {n_candidates - 1} rivals at "
                 f"once, so its bounds reach up to {critical_value:.2f} standard errors where one comparison alone "
                 f"would reach {one:.2f}: more candidates widen the bounds, and the tier with them, though far less "
                 f"than holding all {pairs} pairs at once would.")
    else:
        width = ""
    lessons = [Lesson(DESIGN, (
        "A tier, not a winner: the best candidate is reported as the set no rival is shown to beat, read on "
        f"one-sided {pct} bounds of the paired CRS differences centred on the point, which hold the best with at "
        "least that probability." + width))]
    possible = math.comb(2 * n_seeds - 1, n_seeds) if n_seeds > 0 else 0
    lessons.append(Lesson(DESIGN, (
        f"With {n_seeds} seed{'s' if n_seeds != 1 else ''} the seed level of any bootstrap has at most {possible} "
        f"distinct resamples (C({2 * n_seeds - 1}, {n_seeds})), and this page's draws hit {n_seed_resamples}. The "
        "intervals see only the seed-to-seed and test-image variation this run contains, never variation between "
        "datasets or cohorts, so they are a lower bound on the uncertainty.")))
    leader = names[0]
    share = finite(p_rank1.get(leader, math.nan), "p_rank1 of the leader") if leader in p_rank1 else math.nan
    size = (f"the tier holds {len(names)} of the {n_candidates} candidates ({and_list(names)})" if len(names) > 1
            else f"{leader} alone forms the tier among {n_candidates} candidates")
    text = f"In {world_name(simulated)} {size}"
    if math.isfinite(share):
        text += f", and the leader {leader} ranks first in {percent(share)} of draws"
    text += (". Which candidates are in it, and how many, is a measurement: more seeds or test images narrow the "
             "intervals and can shrink it, and candidates further apart on another cohort would leave fewer in it.")
    study = ""
    if study_p_rank1:
        leaders = list(study_p_rank1)
        study = (f"{and_list(leaders)} shared the lead"
                 + (f" of {study_encoders} encoders" if study_encoders else "")
                 + f" (P(rank 1) {and_list([f'{v:.3f}' for v in study_p_rank1.values()])}), the interval of their "
                 "difference including zero.")
    lessons.append(Lesson(WORLD, text, study=study))
    return lessons
