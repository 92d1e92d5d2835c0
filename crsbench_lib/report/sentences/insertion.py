"""The sentences of the insertion and registry chapters: what adding encoders does to published scores.

How far published scores move under the fixed reference and under cohort
renormalisation (:func:`describe_displacement`), and whether the existing
entries change order or only position (:func:`describe_rank_changes`), and
how that reordering compares with the reordering that redrawing the seeds
brings, read through the book's shared noise sentence (:func:`describe_rank_noise`).
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from crsbench_lib.report.grammar import finite, fmt
from crsbench_lib.report.sentences.lessons import DESIGN, WORLD, Lesson, world_name
from crsbench_lib.report.sentences.references import name_references
from crsbench_lib.report.sentences.noise import describe_tau_against_noise

if TYPE_CHECKING:
    import pandas as pd


def describe_displacement(largest_fixed: float, largest_cohort: float, digits: int = 3) -> str:
    """What an insertion did to published scores, fixed reference against cohort renormalisation.

    Examples
    --------
    >>> describe_displacement(0.0, 0.12)
    'No published score moved under the fixed reference (largest change 0); under cohort renormalisation the largest change would have been 0.120.'
    """
    fixed, cohort = abs(finite(largest_fixed, "largest_fixed")), abs(finite(largest_cohort, "largest_cohort"))
    head = ("No published score moved under the fixed reference (largest change 0)" if fixed == 0 else
            f"Published scores moved under the fixed reference (largest change {fixed:.3g}): the standard is not being held fixed")
    tail = ("cohort renormalisation would not have moved them either" if cohort == 0 else
            f"under cohort renormalisation the largest change would have been {fmt(cohort, digits)}")
    return f"{head}; {tail}."


def describe_registry_cohort(published: Sequence[str], newcomers: Sequence[str], references: Sequence[str],
                             n_adapted: int, families: Mapping[str, str] | None = None) -> str:
    """Why the registry's insertion numbers differ from the insertion chapter's: another cohort.

    The registry is a leaderboard of entries: every published encoder and
    every newcomer (held-out encoders and LoRA-adapted entries). The book's
    registry publishes candidates only, as every page ranks them; a reference
    encoder published by hand is named as an entry. The insertion chapter ranks
    the frozen candidates only, so the cohort over which scores are
    renormalised, and the pairs counted, differ between the two pages.

    Parameters
    ----------
    published, newcomers : sequence of str
        The registry's published entries and the inserted ones.
    references : sequence of str
        The reference encoders of the zoo (:mod:`crsbench_lib.report.roles`).
    n_adapted : int
        LoRA-adapted newcomers.
    families : mapping of str to str, optional
        Encoder -> study family key, to name many references by their families.

    Examples
    --------
    >>> describe_registry_cohort(["a", "b", "ref"], ["c", "a+lora"], ["ref"], 1)
    "The registry ranks 5 entries: 3 published (the reference ref among them, as an entry, while every other page leaves references unranked) and 2 newcomers (1 LoRA-adapted). The insertion chapter ranks the frozen candidates only, another cohort, so its cohort-renormalised displacement and its pair counts need not match this page's."
    >>> describe_registry_cohort(["a", "b"], ["c"], ["ref"], 0).split(". ")[0]
    'The registry ranks 3 entries: 2 published and 1 newcomer, candidates only (no reference encoder is an entry, as no page ranks one)'
    """
    present = [str(r) for r in references if r in set(published) | set(newcomers)]
    refs = ("" if not present else
            f" (the reference{'s' if len(present) > 1 else ''} {name_references(present, families)} among them, as "
            f"{'entries' if len(present) > 1 else 'an entry'}, while every other page leaves references unranked)")
    adapted = f" ({n_adapted} LoRA-adapted)" if n_adapted else ""
    only = (", candidates only (no reference encoder is an entry, as no page ranks one)"
            if references and not present else "")
    return (f"The registry ranks {len(published) + len(newcomers)} entries: {len(published)} published{refs} and "
            f"{len(newcomers)} newcomer{'s' if len(newcomers) != 1 else ''}{adapted}{only}. The insertion chapter "
            "ranks the frozen candidates only, another cohort, so its cohort-renormalised displacement and its pair "
            "counts need not match this page's.")


def describe_rank_changes(scheme: str, order_changes: int, n_pairs: int, positions_shifted: int, n_existing: int,
                          noun: str = "existing encoders") -> str:
    """What an insertion did to the ranks of the existing entries: pairwise order apart from position.

    An existing entry's position in the list can change for two reasons: an
    entry placed above it (a newcomer), or a reordering of the existing entries
    among themselves. Only the second rewrites history; the sentence keeps the
    two apart (:func:`crsbench_lib.scoring.insertion.order_changes`).

    Parameters
    ----------
    scheme : str
        The scoring scheme, e.g. "the fixed reference", "cohort renormalisation".
    order_changes : int
        Pairs of existing entries ordered differently after the insertion.
    n_pairs : int
        Pairs of existing entries.
    positions_shifted : int
        Existing entries whose position in the whole list changed.
    n_existing : int
        Existing entries.
    noun : str
        What the entries are called.

    Returns
    -------
    str
        One sentence.

    Examples
    --------
    >>> describe_rank_changes("the fixed reference", 0, 136, 14, 17)
    'Under the fixed reference, no pair of the 17 existing encoders changed order (0 of 136 pairs), so their relative order is as before; 14 of them changed position only because newcomers were placed above them.'
    >>> describe_rank_changes("cohort renormalisation", 5, 136, 16, 17)
    'Under cohort renormalisation, 5 of 136 pairs of the 17 existing encoders changed order, and 16 of the 17 changed position.'
    """
    counts = {"order_changes": order_changes, "n_pairs": n_pairs, "positions_shifted": positions_shifted,
              "n_existing": n_existing}
    for name, value in counts.items():
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
            raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    if order_changes > n_pairs or positions_shifted > n_existing:
        raise ValueError(f"counts exceed their totals: {order_changes} of {n_pairs} pairs, "
                         f"{positions_shifted} of {n_existing} entries")
    if order_changes == 0:
        head = (f"Under {scheme}, no pair of the {n_existing} {noun} changed order (0 of {n_pairs} pairs), "
                "so their relative order is as before")
        if positions_shifted == 0:
            return f"{head}; none changed position either."
        return f"{head}; {positions_shifted} of them changed position only because newcomers were placed above them."
    return (f"Under {scheme}, {order_changes} of {n_pairs} pairs of the {n_existing} {noun} changed order, "
            f"and {positions_shifted} of the {n_existing} changed position.")


def _span(low: float, high: float, digits: int) -> str:
    """``"10"`` or ``"10 to 16"`` (counts), ``"0.76 to 0.85"`` (values)."""
    lo, hi = (str(int(v)) if float(v).is_integer() else fmt(v, digits) for v in (low, high))
    return lo if lo == hi else f"{lo} to {hi}"


def describe_rank_noise(table: "pd.DataFrame", noise: "pd.DataFrame", level: float = 0.95,
                        simulated: bool | None = None) -> str:
    """Whether an insertion reorders the existing entries more or less than the ranking's own noise does.

    The τ_b part is the book's shared reading of a rank comparison against its
    noise (:func:`crsbench_lib.report.sentences.noise.describe_tau_against_noise` on
    :func:`crsbench_lib.scoring.retest.noise_baseline_table`: the insertion's
    τ_b per scheme beside the seed-redraw and bootstrap-draw τ_b of the same
    ranking). What only this chapter adds is the count of reordered pairs
    beside the seed pairs' range (:func:`crsbench_lib.scoring.insertion.rank_noise_table`;
    with the few, overlapping seed pairs of a run it says whether the counts
    separate, not a test) and what each reordering is: a re-run's is the
    measurement's noise, an insertion's is the scheme rewriting history from
    the same scores.

    Parameters
    ----------
    table : pandas.DataFrame
        Rows "fixed reference" and "cohort-renormalised", columns
        :data:`crsbench_lib.scoring.insertion.RANK_NOISE_COLUMNS`.
    noise : pandas.DataFrame
        :func:`crsbench_lib.scoring.insertion.insertion_noise_table` of the same insertion
        (each scheme's τ_b is judged against its own ranking's rows).
    level : float
        Coverage of the bootstrap rows' range.
    simulated : bool, optional
        Whether the run is the simulated cohort (the world its numbers belong to).

    Returns
    -------
    str

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from crsbench_lib.scoring.insertion import RANK_NOISE_COLUMNS
    >>> from crsbench_lib.scoring.retest import noise_baseline_table
    >>> rows = [("fixed reference", 1.0, 0, 136, 3, 0.81, 0.76, 0.85, 10, 16),
    ...         ("cohort-renormalised", 0.97, 2, 136, 3, 0.54, 0.46, 0.59, 28, 37)]
    >>> noise = noise_baseline_table({"the fixed reference": 1.0, "cohort renormalisation": 0.97},
    ...                              {"fixed reference": [0.76, 0.85, 0.81]}, {"fixed reference": np.linspace(0.8, 0.95, 11)})
    >>> describe_rank_noise(pd.DataFrame(rows, columns=list(RANK_NOISE_COLUMNS)), noise).split(2 * chr(10))[1].split(". ")[0] + "."
    'In pairs: the insertion reorders 0 of 136 pairs under the fixed reference and 2 under cohort renormalisation, while two seeds of the same ranking reorder 10 to 16 pairs (fixed reference) and 28 to 37 (cohort-renormalised).'
    """
    from crsbench_lib.scoring.insertion import COHORT, FIXED, NOISE_LABELS

    rows = {str(r.scheme): r for r in table.itertuples(index=False)}
    if set(rows) != {FIXED, COHORT}:
        raise ValueError(f"rank noise table: expected the rows {FIXED!r} and {COHORT!r}, got {sorted(rows)}")
    fixed, cohort = rows[FIXED], rows[COHORT]
    for scheme, value in ((FIXED, fixed.insertion_order_changes), (COHORT, cohort.insertion_order_changes)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
            raise ValueError(f"{scheme} order changes must be a non-negative integer, got {value!r}")
    text = describe_tau_against_noise(noise, level=level, simulated=simulated,
                                      judged_by={c: [r] for c, r in NOISE_LABELS.values()})
    world = world_name(simulated)
    moved, pairs = int(cohort.insertion_order_changes), int(cohort.n_pairs)
    # The pairs in a paragraph of their own: the τ_b reading above is already a paragraph's worth.
    head = (f"\n\nIn pairs: the insertion reorders {int(fixed.insertion_order_changes)} of {pairs} pairs under the fixed "
            f"reference and {moved} under cohort renormalisation")
    if not int(cohort.retest_seed_pairs) or not int(fixed.retest_seed_pairs):
        return text + head + ("; this run has a single seed, so the count cannot be read against the ranking's own "
                              "seed noise.")
    low, high = float(cohort.retest_min_order_changes), float(cohort.retest_max_order_changes)
    text += (f"{head}, while two seeds of the same ranking reorder "
             f"{_span(float(fixed.retest_min_order_changes), float(fixed.retest_max_order_changes), 2)} pairs "
             f"({FIXED}) and {_span(low, high, 2)} ({COHORT}). ")
    if moved == 0:
        # Nothing to call history rewritten in order: say so, and what renormalisation would do where it reorders.
        text += ("Here renormalisation reorders no pair of the existing entries: on this insertion it rewrites their "
                 "published values, not their order. Where it does reorder pairs, it reorders the same scores with no "
                 "new measurement at all, unlike a redraw of the seeds, whose reordering is the measurement's noise; "
                 "the fixed reference does neither.")
    else:
        verdict = ("Renormalisation reorders fewer pairs than redrawing the seeds does" if moved < low else
                   "Renormalisation reorders more pairs than any redraw of the seeds does" if moved > high else
                   "Renormalisation reorders about as many pairs as redrawing the seeds does (within their range)")
        text += (f"{verdict}, but not in the same way: a redraw's reordering is the measurement's noise, while "
                 "renormalisation reorders the same scores with no new measurement at all, which is history "
                 "rewritten, and the fixed reference never does it.")
    base, renorm = float(fixed.retest_mean_tau), float(cohort.retest_mean_tau)
    if renorm < float(fixed.retest_min_tau):
        text += (f" Scored one seed at a time, the renormalised ranking is also the less reproducible one (mean τ_b "
                 f"{fmt(renorm, 2)} against {fmt(base, 2)}): its anchors are the cohort's own extremes and its panel the "
                 "cohort, so the seed noise of the encoders at the extremes moves every score.")
    return text + (" That a fixed reference reorders nothing holds for any benchmark of this design; how many pairs "
                   f"renormalisation reorders belongs to {world} and these newcomers.")


# --- "Is this real?" and the exercises of the insertion and registry chapters ----------------------------

#: The axes' names in a sentence.
AXIS_NAMES: dict[str, str] = {"D": "discrimination (D)", "C": "calibration (C)", "L": "label efficiency (L)",
                              "R": "robustness (R)"}


def new_extremes(existing: "pd.DataFrame", newcomers: "pd.DataFrame") -> dict[str, str]:
    """The axes on which newcomers fall outside the range the existing encoders span, and on which side.

    Under cohort renormalisation the anchors are the cohort's per-axis minimum
    and maximum, so a newcomer outside that range moves an anchor, and every
    existing score on that axis with it.

    Parameters
    ----------
    existing, newcomers : pandas.DataFrame
        Raw profiles (columns ``D, C, L, R``; one row per encoder).

    Returns
    -------
    dict
        Axis -> "best", "worst" or "best and worst" (which end the newcomers
        extend, by the axis's direction: higher D and L, lower C and R are
        better), in the order D, C, L, R.

    Examples
    --------
    >>> import pandas as pd
    >>> old = pd.DataFrame({"D": [0.7, 0.8], "C": [0.05, 0.03], "L": [0.6, 0.7], "R": [0.2, 0.3]})
    >>> new_extremes(old, pd.DataFrame({"D": [0.85], "C": [0.04], "L": [0.65], "R": [0.35]}))
    {'D': 'best', 'R': 'worst'}
    """
    from crsbench_lib.standard import HIGHER_IS_BETTER

    out: dict[str, str] = {}
    if not len(newcomers):
        return out
    for axis in ("D", "C", "L", "R"):
        if axis not in existing.columns or axis not in newcomers.columns:
            continue
        above = float(newcomers[axis].max()) > float(existing[axis].max())
        below = float(newcomers[axis].min()) < float(existing[axis].min())
        if above or below:
            higher = HIGHER_IS_BETTER[axis]
            sides = [side for side, hit in (("best", above if higher else below), ("worst", below if higher else above))
                     if hit]
            out[axis] = " and ".join(sides)
    return out


def _axes_words(extremes: "Mapping[str, str]") -> str:
    """``"a new best on discrimination (D) and a new worst on robustness (R)"``, grouped by side."""
    from crsbench_lib.report.grammar import and_list

    groups: dict[str, list[str]] = {}
    for axis, side in extremes.items():
        groups.setdefault(side, []).append(AXIS_NAMES.get(axis, axis))
    return and_list([f"a new {side} on {and_list(names)}" for side, names in groups.items()])


def _fixed_lesson(largest_fixed: float, n: int, noun: str, what: str) -> str:
    fixed = abs(finite(largest_fixed, "largest_fixed"))
    head = (f"Under a fixed standard a score depends only on its own profile, its anchors and panel frozen once, so "
            f"inserting {what} cannot move a registered score")
    if fixed == 0:
        return f"{head}: here the largest change of the {n} {noun} is exactly 0."
    return (f"{head}: here the largest change of the {n} {noun} is {fixed:.3g}, so the standard was not held fixed, "
            "which this design forbids; treat the run as suspect.")


def _study_displacement() -> str:
    from crsbench_lib.scoring.published import PUBLISHED

    return f"fixed-reference displacement {PUBLISHED.insertion_fixed_displacement:.1f}."


def _renormalised(largest_cohort: float, order_changes: int, n_pairs: int, noun: str,
                  retest: tuple[float, float] | None) -> str:
    cohort = abs(finite(largest_cohort, "largest_cohort"))
    if cohort == 0:
        return f"Under cohort renormalisation the same insertion would not have moved the {noun} either."
    text = (f"Under cohort renormalisation the same insertion would have moved the {noun} by up to {fmt(cohort, 3)} "
            f"and reordered {order_changes} of {n_pairs} pairs")
    if retest is None:
        return text + " (a single seed: no seed-redraw count to read it against)."
    low, high = retest
    verdict = ("fewer than" if order_changes < low else "more than" if order_changes > high else "within")
    text += (f", {verdict} the {_span(low, high, 2)} pairs that two seeds of the renormalised ranking reorder; a "
             "redraw's reordering is the measurement's noise, renormalisation's is the same scores rewritten")
    return text + "."


def insertion_lessons(largest_fixed: float, largest_cohort: float, fixed_order_changes: int, cohort_order_changes: int,
                      n_pairs: int, positions_shifted: int, n_existing: int, rank_noise: "pd.DataFrame",
                      extended_axes: "Mapping[str, str]", simulated: bool | None = None) -> list[Lesson]:
    """The insertion chapter's "Is this real?" lessons, decided from the page's displacement numbers.

    Parameters
    ----------
    largest_fixed, largest_cohort : float
        Largest absolute change of an existing score, fixed reference and cohort renormalisation.
    fixed_order_changes, cohort_order_changes : int
        Pairs of existing encoders reordered under each scheme.
    n_pairs : int
        Pairs of existing encoders.
    positions_shifted : int
        Existing encoders whose place in the whole list changed under the fixed reference.
    n_existing : int
        Existing encoders.
    rank_noise : pandas.DataFrame
        :func:`crsbench_lib.scoring.insertion.rank_noise_table` (the seed-redraw order changes).
    extended_axes : mapping of str to str
        :func:`new_extremes` of the newcomers.
    simulated : bool or None
        Whether the run is simulated (no lesson of the world names it).

    Returns
    -------
    list of Lesson
        Two of the design (a fixed anchor cannot move a registered score; a
        pairwise order is history, a position is not), one of the world (what
        renormalisation would have done here, and why).

    Examples
    --------
    >>> import pandas as pd
    >>> lessons = insertion_lessons(0.0, 0.146, 0, 2, 120, 16, 16, pd.DataFrame(), {"D": "best", "L": "best"})
    >>> [lesson.scope for lesson in lessons], lessons[0].study
    (['design', 'design', 'world'], 'fixed-reference displacement 0.0.')
    >>> lessons[0].text
    'Under a fixed standard a score depends only on its own profile, its anchors and panel frozen once, so inserting candidates cannot move a registered score: here the largest change of the 16 existing scores is exactly 0.'
    """
    from crsbench_lib.scoring.insertion import COHORT

    lessons = [Lesson(DESIGN, _fixed_lesson(largest_fixed, n_existing, "existing scores", "candidates"),
                      study=_study_displacement())]
    if fixed_order_changes:
        order = (f"Under the fixed reference {fixed_order_changes} of {n_pairs} pairs of existing encoders changed "
                 "order, which a fixed standard cannot do: the standard was not held fixed.")
    else:
        shifted = (f"{positions_shifted} of the {n_existing} changed position only because newcomers ranked above them"
                   if positions_shifted else "none changed position either, every newcomer ranking below them")
        order = (f"A registered ranking is a set of pairwise orders, not a list of places: under the fixed reference "
                 f"0 of {n_pairs} pairs of existing encoders changed order, while {shifted}. A place moves whenever a "
                 "better encoder arrives; the order of two registered encoders never does.")
    lessons.append(Lesson(DESIGN, order))
    rows = {str(r.scheme): r for r in rank_noise.itertuples(index=False)} if len(rank_noise) else {}
    row = rows.get(COHORT)
    retest = ((float(row.retest_min_order_changes), float(row.retest_max_order_changes))
              if row is not None and int(row.retest_seed_pairs) else None)
    text = _renormalised(largest_cohort, int(cohort_order_changes), n_pairs, "existing scores", retest)
    if abs(float(largest_cohort)) > 0:
        text += (f" Renormalisation rewrites old scores whenever the cohort's extremes or its panel change: here the "
                 f"newcomers set {_axes_words(extended_axes)}, moving those anchors. Expect "
                 "rewrites from any newcomer outside the cohort's range, at either end of an axis, and from every "
                 "arrival through the panel."
                 if extended_axes else
                 " The newcomers lie inside the cohort's range on every axis, so no anchor moved: the change comes "
                 "from the panel, which renormalisation redraws with every arrival.")
    lessons.append(Lesson(WORLD, text))
    return lessons


def insertion_exercise_weakest(weak: object, strong: object, weakest: "list[str]",
                               extended_axes: "Mapping[str, str]") -> str:
    """The solution of the exercise "insert the weakest encoders instead", computed on the page.

    Parameters
    ----------
    weak : InsertionResult
        :func:`crsbench_lib.scoring.insertion.insertion_test` with the weakest newcomers.
    strong : InsertionResult
        The page's insertion (the strongest newcomers).
    weakest : list of str
        The weakest newcomers.
    extended_axes : mapping of str to str
        :func:`new_extremes` of the weakest newcomers.

    Returns
    -------
    str

    Examples
    --------
    >>> from types import SimpleNamespace as R
    >>> weak = R(max_abs_fixed_displacement=0.0, max_abs_cohort_displacement=0.08, cohort_order_changes=1, n_pairs=120)
    >>> strong = R(max_abs_fixed_displacement=0.0, max_abs_cohort_displacement=0.146, cohort_order_changes=2, n_pairs=120)
    >>> insertion_exercise_weakest(weak, strong, ["pixels", "lbp"], {"D": "worst"}).split(". ")[0]
    'In this build the two weakest candidates by clean AUROC are pixels and lbp'
    """
    from crsbench_lib.report.grammar import and_list

    fixed = abs(float(weak.max_abs_fixed_displacement))
    cohort, strong_cohort = abs(float(weak.max_abs_cohort_displacement)), abs(float(strong.max_abs_cohort_displacement))
    count = {1: "one", 2: "two", 3: "three"}.get(len(weakest), str(len(weakest)))
    text = (f"In this build the {count} weakest candidates by clean AUROC are {and_list(weakest)}. Inserted instead of "
            f"the strongest, they move {'no' if fixed == 0 else 'some'} existing score under the fixed reference "
            f"(largest change {fixed:.3g}), as under any fixed standard. ")
    if cohort == 0:
        text += "Under cohort renormalisation they move no existing score either"
    else:
        than = ("more than" if round(cohort, 3) > round(strong_cohort, 3) else
                "less than" if round(cohort, 3) < round(strong_cohort, 3) else "as much as")
        text += (f"Under cohort renormalisation they still move existing scores, by up to {fmt(cohort, 3)}, and "
                 f"reorder {int(weak.cohort_order_changes)} of {int(weak.n_pairs)} pairs: {than} the strongest "
                 f"newcomers, which moved them by up to {fmt(strong_cohort, 3)} and reordered "
                 f"{int(strong.cohort_order_changes)} of {int(strong.n_pairs)}")
    text += (f". They set {_axes_words(extended_axes)}, which moves those anchors of the renormalised scale"
             if extended_axes else
             ". They lie inside the cohort's range on every axis, so no anchor moves; the change comes from the "
             "panel they join")
    return text + (". So yes: renormalisation rewrites history whoever arrives, strong or weak; only its size depends "
                   "on how far the newcomers stretch the cohort's range and change its panel." if cohort else
                   ". Here renormalisation leaves history alone, but only because these newcomers change neither "
                   "the anchors nor the panel's order.")


def registry_lessons(n_published: int, n_identical: int, n_newcomers: int, largest_fixed: float,
                     summary: "pd.DataFrame", verified: bool, n_entries: int, saturation: "pd.DataFrame",
                     simulated: bool | None = None) -> list[Lesson]:
    """The registry chapter's "Is this real?" lessons, decided from the page's numbers.

    Parameters
    ----------
    n_published, n_identical : int
        Published entries, and those whose CRS is the same double after the insertion.
    n_newcomers : int
        Candidates inserted.
    largest_fixed : float
        Largest change of a published CRS (fixed reference).
    summary : pandas.DataFrame
        :func:`crsbench_lib.registry.insertion.displacement_summary` (index scheme).
    verified : bool
        Whether :func:`crsbench_lib.registry.verify_registry` found no problem.
    n_entries : int
        Entries it recomputed.
    saturation : pandas.DataFrame
        :func:`crsbench_lib.registry.lifecycle.saturation_table` after the insertion.
    simulated : bool or None
        Whether the run is simulated (no lesson of the world names it).

    Returns
    -------
    list of Lesson
        Three of the design (an insertion cannot rewrite a published score;
        ``verify`` checks reproducibility, not validity; a fixed anchor cannot
        stretch, so a saturated one calls for a new version), two of the world
        (what renormalisation would have done here; how close the anchors are
        to saturating).

    Examples
    --------
    >>> import pandas as pd
    >>> summary = pd.DataFrame({"n_published": [17, 17], "max_abs_crs_displacement": [0.0, 0.06], "n_scores_moved": [0, 17],
    ...     "n_pairs": [136, 136], "pairwise_order_changes": [0, 0], "n_positions_shifted": [17, 17]},
    ...     index=pd.Index(["fixed reference", "cohort-renormalised"], name="scheme"))
    >>> sat = pd.DataFrame({"standard_version": "v", "axis": list("DCLR"), "at_worst": 0, "at_best": 0, "saturated": 0, "n": 30})
    >>> lessons = registry_lessons(17, 17, 13, 0.0, summary, True, 30, sat)
    >>> [lesson.scope for lesson in lessons]
    ['design', 'design', 'design', 'world', 'world']
    >>> lessons[0].text.split(": ")[1]
    'here 17 of 17 published CRS values are the same double as before the 13 candidates arrived.'
    """
    if n_identical == n_published and abs(float(largest_fixed)) == 0:
        first = (f"A published score is a function of its stored rows and the fixed standard alone, so an insertion "
                 f"cannot rewrite it: here {n_identical} of {n_published} published CRS values are the same double as "
                 f"before the {n_newcomers} candidates arrived.")
    else:
        first = (f"A published score is a function of its stored rows and the fixed standard alone, so an insertion "
                 f"cannot rewrite it: here only {n_identical} of {n_published} published CRS values are the same double "
                 f"(largest change {abs(float(largest_fixed)):.3g}), so the standard was not held fixed, which this "
                 "design forbids.")
    lessons = [Lesson(DESIGN, first, study=_study_displacement())]
    lessons.append(Lesson(DESIGN, (
        f"`verify` recomputes every entry from its stored rows and checks the log's hash chain, so anyone can check "
        f"the lesson above: here it {'found nothing to report on' if verified else 'found problems in'} {n_entries} "
        "entries. It proves a score reproducible, not valid: a score computed on the wrong data stays wrong, "
        "faithfully.")))
    lessons.append(Lesson(DESIGN, (
        "A fixed anchor cannot stretch: as stronger encoders arrive, the best anchors saturate first, and the remedy "
        "is a new standard version, which leaves every entry under the old one as it is.")))
    if "cohort-renormalised" in summary.index:
        row = summary.loc["cohort-renormalised"]
        moved, n, pairs = int(row["n_scores_moved"]), int(row["n_published"]), int(row["n_pairs"])
        changes, largest = int(row["pairwise_order_changes"]), float(row["max_abs_crs_displacement"])
        if moved == 0:
            text = "Under cohort renormalisation the same insertion would not have moved any published score either."
        else:
            text = (f"Under cohort renormalisation the same insertion would have moved {moved} of {n} published scores, "
                    f"by up to {fmt(largest, 3)}, and reordered {changes} of {pairs} pairs: ")
            text += ("it would have rewritten the published values while keeping their order, so a reader comparing "
                     "scores across time, not ranks, would have been misled." if changes == 0 else
                     "it would have rewritten both the values and the order of what was published.")
        lessons.append(Lesson(WORLD, text))
    at_best = int(saturation["at_best"].sum()) if len(saturation) else 0
    at_worst = int(saturation["at_worst"].sum()) if len(saturation) else 0
    if not at_best and not at_worst:
        text = "No entry sits on an anchor of any axis: the fixed anchors still separate these candidates."
    else:
        spots = and_list_counts(saturation)
        text = (f"Entries sit on anchors ({spots}): there the fixed standard no longer separates them, and a new "
                "standard version is due.")
    lessons.append(Lesson(WORLD, text))
    return lessons


def and_list_counts(saturation: "pd.DataFrame") -> str:
    """Where entries sit on anchors, e.g. ``"3 on the best anchor of D and 1 on the worst of R"``.

    Examples
    --------
    >>> import pandas as pd
    >>> and_list_counts(pd.DataFrame({"axis": ["D", "R"], "at_best": [3, 0], "at_worst": [0, 1]}))
    '3 on the best anchor of D and 1 on the worst anchor of R'
    """
    from crsbench_lib.report.grammar import and_list

    parts = [f"{int(count)} on the {side} anchor of {row.axis}" for row in saturation.itertuples(index=False)
             for side, count in (("best", row.at_best), ("worst", row.at_worst)) if int(count)]
    return and_list(parts) if parts else "none"


def registry_exercise(summary: "pd.DataFrame", newcomers: "list[str]", lora_candidates: bool) -> str:
    """The solution of the exercise "publish into your own registry, holding back other encoders", computed on the page.

    Parameters
    ----------
    summary : pandas.DataFrame
        :func:`crsbench_lib.registry.insertion.displacement_summary` of the exercise's insertion.
    newcomers : list of str
        The encoders held back and inserted.
    lora_candidates : bool
        Whether the LoRA candidates were inserted too.

    Returns
    -------
    str

    Examples
    --------
    >>> import pandas as pd
    >>> summary = pd.DataFrame({"n_published": [18, 18], "max_abs_crs_displacement": [0.0, 0.04], "n_scores_moved": [0, 18],
    ...     "n_pairs": [153, 153], "pairwise_order_changes": [0, 1], "n_positions_shifted": [17, 18]},
    ...     index=pd.Index(["fixed reference", "cohort-renormalised"], name="scheme"))
    >>> registry_exercise(summary, ["a", "b"], False).split(": ")[0]
    'In this build, holding back a and b and inserting them without the LoRA candidates leaves 0 of 18 published scores moved under the fixed reference (largest change 0)'
    """
    from crsbench_lib.report.grammar import and_list

    fixed = summary.loc["fixed reference"]
    n, moved = int(fixed["n_published"]), int(fixed["n_scores_moved"])
    text = (f"In this build, holding back {and_list(newcomers)} and inserting them "
            f"{'with' if lora_candidates else 'without'} the LoRA candidates leaves {moved} of {n} published scores "
            f"moved under the fixed reference (largest change {float(fixed['max_abs_crs_displacement']):.3g})")
    text += (": the same answer as the page's, and the answer for any encoders held back, because a fixed standard "
             "scores each entry from its own rows. " if moved == 0 else
             ": the standard was not held fixed, which this design forbids. ")
    if "cohort-renormalised" in summary.index:
        row = summary.loc["cohort-renormalised"]
        text += (f"Cohort renormalisation would have moved {int(row['n_scores_moved'])} of {n} by up to "
                 f"{fmt(float(row['max_abs_crs_displacement']), 3)} and reordered {int(row['pairwise_order_changes'])} "
                 f"of {int(row['n_pairs'])} pairs: its answer depends on who arrives, which is why a registry cannot "
                 "be built on it. ")
    return text + ("Then `verify` on your own file recomputes every entry from its stored rows; it reports OK as long "
                   "as nobody edited the file.")


# --- The key takeaways of the insertion and registry chapters ----------------------------------------------

def _seed_reorder_clause(changes: int, rank_noise: "pd.DataFrame | None") -> str:
    """``", within the 0 to 1 pairs two seeds of that ranking reorder"``, or nothing without a second seed."""
    from crsbench_lib.scoring.insertion import COHORT

    if rank_noise is None:
        return ""
    rows = rank_noise[rank_noise["scheme"] == COHORT]
    if rows.empty or not int(rows.iloc[0]["retest_seed_pairs"]):
        return ""
    low, high = float(rows.iloc[0]["retest_min_order_changes"]), float(rows.iloc[0]["retest_max_order_changes"])
    where = "fewer than" if changes < low else "more than" if changes > high else "within"
    return f", {where} the {_span(low, high, 2)} that two seeds of that ranking reorder"


def insertion_takeaway(n_newcomers: int, n_existing: int, largest_fixed: float, largest_cohort: float,
                       cohort_order_changes: int, n_pairs: int, rank_noise: "pd.DataFrame | None" = None) -> str:
    """The insertion chapter's key takeaway: did the published scores move, under each scheme?

    Parameters
    ----------
    n_newcomers, n_existing : int
        Candidates inserted, and existing (published) encoders.
    largest_fixed, largest_cohort : float
        Largest absolute change of an existing score under the fixed reference and under cohort renormalisation.
    cohort_order_changes, n_pairs : int
        Pairs of existing encoders that renormalisation reorders, and pairs.
    rank_noise : pandas.DataFrame, optional
        :func:`crsbench_lib.scoring.insertion.rank_noise_table`: the range of pairs two seeds of the
        renormalised ranking reorder, the noise its reordering is read beside.

    Returns
    -------
    str
        One or two sentences.

    Examples
    --------
    >>> insertion_takeaway(3, 17, 0.0, 0.128, 2, 136)
    'Inserting 3 newcomers into a registry of 17 encoders moved no published score under the fixed reference (largest change 0). Cohort renormalisation would have rewritten them by up to 0.128 and reordered 2 of 136 pairs.'
    """
    fixed, cohort = abs(finite(largest_fixed, "largest_fixed")), abs(finite(largest_cohort, "largest_cohort"))
    head = f"Inserting {n_newcomers} newcomers into a registry of {n_existing} encoders"
    text = (f"{head} moved no published score under the fixed reference (largest change 0)." if fixed == 0 else
            f"{head} moved published scores under the fixed reference (largest change {fixed:.3g}): the standard "
            "was not held fixed.")
    if cohort == 0:
        return text + " Cohort renormalisation would not have moved them either."
    return (text + f" Cohort renormalisation would have rewritten them by up to {fmt(cohort, 3)} and reordered "
            f"{int(cohort_order_changes)} of {int(n_pairs)} pairs"
            + _seed_reorder_clause(int(cohort_order_changes), rank_noise) + ".")


def registry_takeaway(n_published: int, n_identical: int, n_newcomers: int, summary: "pd.DataFrame",
                      verified: bool, n_entries: int) -> str:
    """The registry chapter's key takeaway: can a published score change when new candidates arrive?

    Parameters
    ----------
    n_published, n_identical : int
        Published entries, and those whose CRS is the same double after the insertion.
    n_newcomers : int
        Candidates inserted.
    summary : pandas.DataFrame
        :func:`crsbench_lib.registry.insertion.displacement_summary` (index scheme).
    verified : bool
        Whether :func:`crsbench_lib.registry.verify_registry` found no problem.
    n_entries : int
        Entries it recomputed.

    Returns
    -------
    str
        Two sentences.

    Examples
    --------
    >>> import pandas as pd
    >>> summary = pd.DataFrame({"n_published": [3], "max_abs_crs_displacement": [0.103], "n_scores_moved": [3]},
    ...                        index=pd.Index(["cohort-renormalised"], name="scheme"))
    >>> registry_takeaway(3, 3, 5, summary, True, 8)
    'No newcomer rewrote a published score: after 5 candidates arrived, 3 of 3 published CRS values are the same double as before, and `verify` recomputed all 8 entries without a difference. Cohort renormalisation would have moved 3 of them, by up to 0.103.'
    """
    if n_identical == n_published:
        text = (f"No newcomer rewrote a published score: after {n_newcomers} candidates arrived, {n_identical} of {n_published} published CRS values are "
                "the same double as before")
    else:
        text = (f"Newcomers rewrote published scores here, which the design forbids: after {n_newcomers} candidates arrived, only {n_identical} of "
                f"{n_published} published CRS values are the same double as before")
    text += (f", and `verify` recomputed all {n_entries} entries without a difference." if verified else
             f", and `verify` found problems among the {n_entries} entries.")
    if "cohort-renormalised" not in summary.index:
        return text
    row = summary.loc["cohort-renormalised"]
    moved = int(row["n_scores_moved"])
    if moved == 0:
        return text + " Cohort renormalisation would not have moved any of them either."
    return text + (f" Cohort renormalisation would have moved {moved} of them, by up to "
                   f"{fmt(float(row['max_abs_crs_displacement']), 3)}.")
