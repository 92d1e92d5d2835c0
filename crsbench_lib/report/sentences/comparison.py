"""The sentences of the published and differences chapters: what a comparison with the study can and cannot show.

Both chapters set the study's headline figures beside this build's
(:func:`crsbench_lib.report.comparison.published_comparison`). Their "Is this
real?" lessons (:func:`published_lessons`, :func:`differences_lessons`) stay
modest by construction: the two columns differ in encoders, data and sizes all
at once, so a gap says that the two differ and in which direction, never why,
and no row of the study is a target. The lessons of the design are the ones a
comparison can check: that every quantity is computable by the same
definition, that a quantity fixed by the design (the insertion's fixed
displacement) matches, that rounded rank statistics constrain each other, and
that anchors decide how the axes are weighed. The exercises' solutions
(:func:`published_exercise_draws`, :func:`differences_exercise_anchor`) are
computed from the page's tables.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from crsbench_lib.report.grammar import CLOSE_CORRELATION, and_list, fmt, pair_count
from crsbench_lib.report.sentences.lessons import DESIGN, WORLD, Lesson
from crsbench_lib.report.sentences.references import MAX_NAMED, name_references, reference_verb

if TYPE_CHECKING:
    import pandas as pd

#: Rows of :func:`crsbench_lib.report.comparison.published_comparison` computed from random draws
#: (the bootstrap and the weight perturbations); every other row is a function of the results table alone.
DRAW_QUANTITIES: tuple[str, ...] = ("P(rank 1) of the leader", "weight draws: mean tau", "weight draws: top-3 changes")
#: The row of :func:`crsbench_lib.report.comparison.published_comparison` that the design fixes (0 under a fixed standard).
FIXED_QUANTITY = "insertion: fixed displacement"
#: The two rows that replace the cohort table's one ``encoders`` row (:func:`split_encoder_count`): every encoder
#: of the results table is scored; only the candidates (references left out) are ranked.
ENCODERS_SCORED = "encoders scored"
CANDIDATES_RANKED = "candidates ranked"
#: How the audit's statuses (:func:`crsbench_lib.scoring.consistency.check_published`) read in a takeaway.
_AUDIT_SHORT: dict[str, str] = {
    "consistent": "consistent: one permutation of its {n} ranks realises all three",
    "inconsistent": "inconsistent: no permutation of its {n} ranks realises all three",
    "undetermined": "undetermined: no permutation of its {n} ranks found, none ruled out",
}


def direction_counts(compared: "pd.DataFrame", close: float = CLOSE_CORRELATION) -> dict[str, list[str]]:
    """Which quantities of a comparison are higher, lower, close to or equal to the study's, as the sentences say.

    The rule is :func:`crsbench_lib.report.grammar.compare_with_study`'s:
    values closer than ``close`` are "close", the others higher or lower; a
    value printed the same as the study's (three decimals) is "equal", as
    :func:`describe_quantities` says it.

    Parameters
    ----------
    compared : pandas.DataFrame
        ``quantity, study, this_build`` (``this_build`` NaN where the build has no value).
    close : float
        The closeness of :func:`~crsbench_lib.report.grammar.compare_with_study`.

    Returns
    -------
    dict
        ``{"higher": [...], "lower": [...], "close": [...], "equal": [...], "absent": [...]}``, quantity names in
        table order.

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({"quantity": ["a", "b", "c", "d", "e"], "study": [0.6, 15, 0.5, 0.1, 0.0],
    ...                       "this_build": [0.9, 19, 0.52, float("nan"), 0.0]})
    >>> direction_counts(table)
    {'higher': ['a', 'b'], 'lower': [], 'close': ['c'], 'equal': ['e'], 'absent': ['d']}
    """
    out: dict[str, list[str]] = {"higher": [], "lower": [], "close": [], "equal": [], "absent": []}
    for row in compared.itertuples(index=False):
        ours = float(row.this_build) if row.this_build is not None else math.nan
        if not math.isfinite(ours):
            out["absent"].append(str(row.quantity))
            continue
        study = float(row.study)
        key = ("equal" if _equal(ours, study) else "close" if abs(ours - study) < close else
               "higher" if ours > study else "lower")
        out[key].append(str(row.quantity))
    return out


def _equal(ours: float, study: float) -> bool:
    """Equal as printed (three decimals): a sentence never calls two equal numbers "close"."""
    return fmt(ours, 3) == fmt(study, 3)


def describe_quantities(compared: "pd.DataFrame") -> list[str]:
    """One sentence per quantity of a comparison: higher, lower, close to or equal to the study's value.

    :func:`crsbench_lib.report.grammar.compare_with_study` for each row, except
    that a value equal to the study's (as printed) is said to equal it, not to
    be "close to" it; a row this build lacks says so.

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({"quantity": ["insertion: fixed displacement", "τ_b", "LoRA τ_b"],
    ...                       "study": [0.0, 0.6, 0.56], "this_build": [0.0, 0.906, float("nan")]})
    >>> for line in describe_quantities(table):
    ...     print(line)
    This build's insertion: fixed displacement (0) equals the study's (0).
    This build's τ_b (0.906) is higher than the study's (0.600).
    LoRA τ_b: this build has no such quantity (the arm or the cells are absent).
    """
    from crsbench_lib.report.comparison import quantity_subject
    from crsbench_lib.report.grammar import compare_with_study

    lines = []
    for row in compared.itertuples(index=False):
        ours = float(row.this_build) if row.this_build is not None else math.nan
        if not math.isfinite(ours):
            lines.append(f"{row.quantity}: this build has no such quantity (the arm or the cells are absent).")
            continue
        text = compare_with_study(ours, float(row.study), quantity_subject(str(row.quantity)))
        lines.append(text.replace(" is close to the study's ", " equals the study's ")
                     if _equal(ours, float(row.study)) else text)
    return lines


def describe_directions(compared: "pd.DataFrame") -> str:
    """How many of a comparison's quantities are higher, lower, close or equal, as one sentence.

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({"quantity": ["a", "b", "c"], "study": [0.6, 0.5, 0.0], "this_build": [0.9, 0.52, 0.0]})
    >>> describe_directions(table)
    "Of the 3 quantities with a value here, 1 is higher than the study's, 0 lower, 1 close (within 0.05) and 1 equal."
    """
    return _directions_sentence(direction_counts(compared)) + "."


def _value(compared: "pd.DataFrame", quantity: str) -> float:
    rows = compared[compared["quantity"] == quantity]
    if rows.empty:
        return math.nan
    value = rows.iloc[0]["this_build"]
    return float(value) if value is not None else math.nan


def _study(compared: "pd.DataFrame", quantity: str) -> float:
    rows = compared[compared["quantity"] == quantity]
    return float(rows.iloc[0]["study"]) if not rows.empty else math.nan


def _directions_sentence(counts: dict[str, list[str]]) -> str:
    equal = len(counts.get("equal", []))
    measured = len(counts["higher"]) + len(counts["lower"]) + len(counts["close"]) + equal
    higher = len(counts["higher"])
    parts = [f"{higher} {'is' if higher == 1 else 'are'} higher than the study's", f"{len(counts['lower'])} lower",
             f"{len(counts['close'])} close (within {CLOSE_CORRELATION:g})"] + ([f"{equal} equal"] if equal else [])
    return f"Of the {measured} quantities with a value here, {and_list(parts)}"


def published_lessons(compared: "pd.DataFrame", study_status: str, build_status: str | None,
                      simulated: bool | None = None) -> list[Lesson]:
    """The published chapter's "Is this real?" lessons, decided from the page's comparison and audit.

    Parameters
    ----------
    compared : pandas.DataFrame
        :func:`crsbench_lib.report.comparison.published_comparison`.
    study_status : str
        :func:`crsbench_lib.scoring.consistency.check_published`'s status
        ("consistent", "inconsistent" or "undetermined").
    build_status : str or None
        The same audit of this build's rounded statistics; None when its ranks are tied.
    simulated : bool or None
        Whether the run is simulated (no lesson of the world names it).

    Returns
    -------
    list of Lesson
        Two of the design (every quantity computable, and only the one the
        design fixes expected to match; rank statistics audit each other), one
        of the world (the directions of the gaps, and what they cannot show).

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({"quantity": ["encoders", "pairs", FIXED_QUANTITY, "Kendall tau"],
    ...                       "study": [15, 105, 0.0, 0.6], "this_build": [19, 171, 0.0, 0.906]})
    >>> lessons = published_lessons(table, "consistent", "consistent")
    >>> [lesson.scope for lesson in lessons]
    ['design', 'design', 'world']
    >>> print(lessons[0].text.split(". ")[1])
    Only a quantity the design fixes is expected to match: the insertion's fixed-reference displacement is 0 here and 0 in the study
    """
    counts = direction_counts(compared)
    total = len(compared)
    absent = counts["absent"]
    text = (f"Every quantity the study reports has a definition in this package, and {total - len(absent)} of "
            f"{total} are computed on this run by it"
            + (f" ({and_list(absent)} {'is' if len(absent) == 1 else 'are'} absent: the arm or the cells are missing)"
               if absent else "") + ". ")
    fixed, fixed_study = _value(compared, FIXED_QUANTITY), _study(compared, FIXED_QUANTITY)
    if not math.isfinite(fixed):
        text += "The one quantity the design fixes, the insertion's fixed-reference displacement, is absent here."
    elif fixed == 0:
        text += (f"Only a quantity the design fixes is expected to match: the insertion's fixed-reference displacement "
                 f"is 0 here and {fixed_study:g} in the study. Every other row depends on the encoders and the data.")
    else:
        text += (f"The one quantity the design fixes, the insertion's fixed-reference displacement, is {fixed:.3g} "
                 "here, not 0: the standard was not held fixed, which this design forbids.")
    lessons = [Lesson(DESIGN, text)]
    audit = {"consistent": "consistent (one permutation realises all three)",
             "inconsistent": "inconsistent (no permutation realises all three)",
             "undetermined": "undetermined (the search found no permutation within its budget, nor proved none exists)"}
    study_words = audit.get(study_status, study_status)
    build_words = (f"this build's, rounded the same way, are {audit.get(build_status, build_status)}"
                   if build_status is not None else
                   "this build's ranks are tied, so the no-ties audit does not apply to them")
    lessons.append(Lesson(DESIGN, (
        "Rounded τ_b, ρ and mean rank displacement of n untied ranks each fix an integer (discordant pairs, the sum "
        "of squared and the sum of absolute rank differences), so a reader can check them against each other: the "
        f"study's are {study_words}; {build_words}. A consistent triple shows the numbers fit together, not that "
        "they are right.")))
    n_build, n_study = _value(compared, "encoders"), _study(compared, "encoders")
    text = _directions_sentence(counts) + ". "
    if math.isfinite(n_build) and math.isfinite(n_study) and n_build >= 2 and n_study >= 2:
        text += (f"The two rank different encoders on different data at different sizes ({int(n_build)} candidates "
                 f"here, one swapped pair moving τ_b by {2 / pair_count(int(n_build)):.3f}; {int(n_study)} in the study, "
                 f"by {2 / pair_count(int(n_study)):.3f}). ")
    else:
        text += "The two rank different encoders on different data at different sizes. "
    text += ("So a gap shows that the two differ and in which direction, not why, and no row of the study is a target "
             "this build should reach.")
    lessons.append(Lesson(WORLD, text))
    return lessons


def _direction_clause(counts: dict[str, list[str]]) -> str:
    """``4 higher, 8 lower, 3 close, 1 equal``: the directions of a comparison (:func:`direction_counts`), for a takeaway.

    A "close" or "equal" count of zero is left out (higher and lower always show).
    """
    shown = [f"{len(counts.get(key, []))} {key}" for key in ("higher", "lower", "close", "equal")
             if counts.get(key) or key in ("higher", "lower")]
    return ", ".join(shown)


def published_takeaway(compared: "pd.DataFrame", study_status: str) -> str:
    """The published chapter's key takeaway: how many of the study's quantities are computed here, and its audit.

    Parameters
    ----------
    compared : pandas.DataFrame
        :func:`crsbench_lib.report.comparison.published_comparison`.
    study_status : str
        :func:`crsbench_lib.scoring.consistency.check_published`'s status.

    Returns
    -------
    str
        Two sentences for :func:`crsbench_lib.report.takeaway.glue_takeaway`.

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({"quantity": ["encoders", "pairs", FIXED_QUANTITY, "Kendall tau"],
    ...                       "study": [15, 105, 0.0, 0.6], "this_build": [19, 171, 0.0, 0.906]})
    >>> published_takeaway(table, "consistent")
    "This build computes 4 of the study's 4 headline quantities by its definitions: 3 higher, 0 lower, 1 equal; only the design-fixed insertion displacement should match, and does (0 here and in the study). The study's rounded τ, ρ and mean displacement are consistent: one permutation of its 15 ranks realises all three."
    """
    counts = direction_counts(compared)
    total = len(compared)
    measured = total - len(counts["absent"])
    text = (f"This build computes {measured} of the study's {total} headline quantities by its definitions: "
            f"{_direction_clause(counts)}")
    fixed, fixed_study = _value(compared, FIXED_QUANTITY), _study(compared, FIXED_QUANTITY)
    if not math.isfinite(fixed):
        text += "; the design-fixed insertion displacement is absent here."
    elif fixed == fixed_study:
        text += f"; only the design-fixed insertion displacement should match, and does ({fixed:g} here and in the study)."
    else:
        text += (f"; the design-fixed insertion displacement is {fixed:.3g} here, not {fixed_study:g}: the standard "
                 "was not held fixed.")
    n_study = _study(compared, "encoders")
    ranks = str(int(n_study)) if math.isfinite(n_study) else "reported"
    audit = _AUDIT_SHORT.get(study_status, study_status).format(n=ranks)
    return text + f" The study's rounded τ, ρ and mean displacement are {audit}."


def split_encoder_count(facts: "pd.DataFrame", n_scored: int, references: Sequence[str],
                        study_candidates: int | None = None) -> "pd.DataFrame":
    """The cohort table with its ``encoders`` row split into the encoders scored and the candidates ranked.

    A reference encoder (classical features, a random network, the in-task
    reference: :mod:`crsbench_lib.report.roles`) is scored but never ranked,
    so the comparison's ``encoders`` row (candidates) can be short of the
    table's encoders; the two rows say which count is which. The
    study's models were all candidates, so both its rows carry its count.

    Parameters
    ----------
    facts : pandas.DataFrame
        :func:`crsbench_lib.report.differences.cohort_facts` (``fact, study, this_build``, text).
    n_scored : int
        Encoders of the results table (every one scored).
    references : sequence of str
        The references among them (scored, not ranked).
    study_candidates : int, optional
        The study's count (default: its ``encoders`` row).

    Returns
    -------
    pandas.DataFrame
        ``facts`` with :data:`ENCODERS_SCORED` and :data:`CANDIDATES_RANKED` in place of ``encoders``.

    Examples
    --------
    >>> import pandas as pd
    >>> facts = pd.DataFrame({"fact": ["encoders", "seeds"], "study": ["15", "-"], "this_build": ["20", "3"]})
    >>> split_encoder_count(facts, 20, ["intask"]).values.tolist()
    [['encoders scored', '15', '20'], ['candidates ranked', '15', '19'], ['seeds', '-', '3']]
    """
    import pandas as pd

    rows = facts[facts["fact"] == "encoders"]
    study = str(study_candidates) if study_candidates is not None else (str(rows.iloc[0]["study"]) if len(rows) else "-")
    split = pd.DataFrame({"fact": [ENCODERS_SCORED, CANDIDATES_RANKED], "study": [study, study],
                          "this_build": [str(int(n_scored)), str(int(n_scored) - len(references))]})
    at = int(rows.index[0]) if len(rows) else 0
    position = list(facts.index).index(at) if len(rows) else 0
    rest = facts.drop(index=rows.index)
    return pd.concat([rest.iloc[:position], split, rest.iloc[position:]], ignore_index=True)


def describe_encoder_counts(n_scored: int, references: Sequence[str], families: Mapping[str, str] | None = None) -> str:
    """Which count of encoders is which: scored (every encoder of the table) against ranked (the candidates).

    Parameters
    ----------
    n_scored : int
        Encoders of the results table (every one scored).
    references : sequence of str
        The reference encoders among them (scored, drawn, in the panel, never ranked).
    families : mapping of str to str, optional
        Encoder -> study family key: many references are then named by their
        families (:func:`crsbench_lib.report.sentences.references.name_references`).

    Examples
    --------
    >>> describe_encoder_counts(20, ["intask_supervised_s"])
    "This build scores 20 encoders and ranks 19 of them as candidates: intask_supervised_s is scored but never ranked (a reference encoder), so every rank statistic on this page, and the comparison's encoders row, counts the 19 candidates, as the study ranks only the foundation models a team might adopt."
    >>> families = {"pixels": "classical", "hog": "classical", "lbp": "classical", "cnn_random": "random",
    ...             "intask_supervised_s": "intask"}
    >>> describe_encoder_counts(12, sorted(families), families).split(": ", 1)[1]
    "5 reference encoders (3 classical feature extractors, 1 random-initialisation network and 1 in-task reference; the zoo table of the cohort chapter lists them) are scored but never ranked, so every rank statistic on this page, and the comparison's encoders row, counts the 7 candidates, as the study ranks only the foundation models a team might adopt."
    >>> describe_encoder_counts(6, [])
    'This build scores and ranks the same 6 encoders: none is a reference.'
    """
    n = int(n_scored)
    if not references:
        return f"This build scores and ranks the same {n} encoders: none is a reference."
    names = sorted(str(name) for name in references)
    k = n - len(names)
    which = name_references(names, families)
    # Named one by one, the names do not say what they are; a count names its own noun.
    what = "" if len(names) > MAX_NAMED else (" (a reference encoder)" if len(names) == 1 else " (reference encoders)")
    return (f"This build scores {n} encoders and ranks {k} of them as candidates: {which} "
            f"{reference_verb(names)} scored but never ranked{what}, so every rank statistic on this page, and the "
            f"comparison's encoders row, counts the {k} candidates, as the study ranks only the foundation models a "
            "team might adopt.")


def differences_takeaway(facts: "pd.DataFrame", anchors: "pd.DataFrame", compared: "pd.DataFrame",
                         all_axes: str = "all four", top_k: int = 3) -> str:
    """The differences chapter's key takeaway: the inputs differ at once, and how much the anchors decide.

    Parameters
    ----------
    facts : pandas.DataFrame
        The cohort table (``fact, study, this_build``; :data:`CANDIDATES_RANKED` or ``encoders``).
    anchors : pandas.DataFrame
        :func:`crsbench_lib.report.differences.anchor_sensitivity`.
    compared : pandas.DataFrame
        :func:`crsbench_lib.report.comparison.published_comparison`.
    all_axes : str
        The label of the row that re-anchors every axis at once.
    top_k : int
        The size of the top set whose overlap the anchor table counts.

    Returns
    -------
    str
        Two sentences for :func:`crsbench_lib.report.takeaway.glue_takeaway`.

    Examples
    --------
    >>> import pandas as pd
    >>> facts = pd.DataFrame({"fact": [CANDIDATES_RANKED], "study": ["15"], "this_build": ["19"]})
    >>> anchors = pd.DataFrame({"anchors_from_cohort": ["C", "all four"], "tau_to_standard": [0.905, 0.889],
    ...                         "top_k_overlap": [2, 2], "tau_auroc_crs": [0.83, 0.85]})
    >>> table = pd.DataFrame({"quantity": ["a", "b"], "study": [0.6, 15], "this_build": [0.9, 19]})
    >>> differences_takeaway(facts, anchors, table)
    "This build differs from the study in its inputs (19 candidates against 15, other images and encoders), so of 2 quantities 2 higher, 0 lower: directions, not causes. Taking all four anchors from this cohort gives τ_b 0.889 to the standard's ranking, keeping 2 of the top 3: the fixed anchors decide part of it."
    """
    fact = {str(r.fact): (str(r.study), str(r.this_build)) for r in facts.itertuples(index=False)}
    count = next(((label, fact[name]) for name, label in ((CANDIDATES_RANKED, "candidates"), ("encoders", "encoders"))
                  if name in fact and fact[name][0] not in ("-", "")), None)
    inputs = (f"{count[1][1]} {count[0]} against {count[1][0]}, other images and encoders" if count else
              "images and encoders")
    counts = direction_counts(compared)
    measured = len(compared) - len(counts["absent"])
    text = (f"This build differs from the study in its inputs ({inputs}), so of {measured} quantities "
            f"{_direction_clause(counts)}: directions, not causes.")
    rows = anchors.set_index("anchors_from_cohort")
    if rows.empty:
        return text
    taus = rows["tau_to_standard"].astype(float)
    if (taus >= 1).all() and (rows["top_k_overlap"].astype(int) >= int(top_k)).all():
        return text + (" Anchors taken from this cohort, one axis or all four at once, leave the CRS ranking "
                       f"unchanged (τ_b {fmt(1.0, 3)}): the fixed anchors decide none of it.")
    # The re-anchoring that moves the ranking most (the first such row: one axis before all four).
    label = str(taus.idxmin())
    most = rows.loc[label]
    which = "all four anchors" if label == all_axes else f"{label}'s anchors alone"
    return text + (f" Taking {which} from this cohort gives τ_b {fmt(float(most['tau_to_standard']), 3)} to the "
                   f"standard's ranking, keeping {int(most['top_k_overlap'])} of the top {int(top_k)}: the fixed "
                   "anchors decide part of it.")


def published_exercise_draws(compared: "pd.DataFrame", n_draws: int, new_draws: int = 200) -> str:
    """The solution of the exercise "recompute with fewer draws: which rows change?", computed from the page's table.

    Only :data:`DRAW_QUANTITIES` depend on random draws; for the leader's
    P(rank 1) the sentence gives its Monte Carlo standard error
    ``sqrt(p (1 - p) / B)`` at both numbers of draws.

    Parameters
    ----------
    compared : pandas.DataFrame
        :func:`crsbench_lib.report.comparison.published_comparison`.
    n_draws : int
        The page's draws.
    new_draws : int
        The exercise's.

    Returns
    -------
    str

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({"quantity": ["encoders", *DRAW_QUANTITIES], "study": [15, 0.664, 0.986, 0],
    ...                       "this_build": [19, 0.471, 0.996, 3]})
    >>> published_exercise_draws(table, 1000).split(". ")[0]
    'In this build 3 of the 4 rows depend on random draws (P(rank 1) of the leader 0.471, weight draws: mean tau 0.996 and weight draws: top-3 changes 3); the other 1 is computed from the results table alone and stays exactly as it is'
    """
    rows = [r for r in compared.itertuples(index=False) if r.quantity in DRAW_QUANTITIES]
    present = [r for r in rows if r.this_build is not None and math.isfinite(float(r.this_build))]
    others = len(compared) - len(rows)

    def shown(row: object) -> str:
        value = float(row.this_build)
        return f"{row.quantity} {int(value) if value.is_integer() and 'changes' in row.quantity else fmt(value, 3)}"

    text = (f"In this build {len(rows)} of the {len(compared)} rows depend on random draws"
            + (f" ({and_list([shown(r) for r in present])})" if present else "")
            + f"; the other {others} {'is' if others == 1 else 'are'} computed from the results table alone and "
            f"{'stays' if others == 1 else 'stay'} exactly as {'it is' if others == 1 else 'they are'}. ")
    p = _value(compared, DRAW_QUANTITIES[0])
    if math.isfinite(p):
        se_now, se_new = (math.sqrt(p * (1 - p) / b) for b in (int(n_draws), int(new_draws)))
        text += (f"The leader's P(rank 1), {fmt(p, 3)} from {int(n_draws)} draws, has a Monte Carlo standard error of "
                 f"{fmt(se_now, 3)}; with {int(new_draws)} draws it grows to {fmt(se_new, 3)}, so expect it to move "
                 f"by up to about {fmt(2 * se_new, 3)} (two standard errors)")
        text += (", and the leader itself may change where two encoders' chances are that close. " if p < 0.5 + 2 * se_new
                 else ". ")
    text += (f"The weight-perturbation rows average over {int(new_draws)} perturbations instead of {int(n_draws)}, so "
             "they move too, the mean τ_b the less the closer it lies to 1. Fewer draws change the precision of "
             "these rows, never what they estimate, and none of the study's values.")
    return text


def differences_lessons(facts: "pd.DataFrame", anchors: "pd.DataFrame", compared: "pd.DataFrame",
                        all_axes: str = "all four", simulated: bool | None = None) -> list[Lesson]:
    """The differences chapter's "Is this real?" lessons, decided from the page's three tables.

    Parameters
    ----------
    facts : pandas.DataFrame
        :func:`crsbench_lib.report.differences.cohort_facts` (``fact, study, this_build``).
    anchors : pandas.DataFrame
        :func:`crsbench_lib.report.differences.anchor_sensitivity`.
    compared : pandas.DataFrame
        :func:`crsbench_lib.report.comparison.published_comparison`.
    all_axes : str
        The label of the row that re-anchors every axis at once.
    simulated : bool or None
        Whether the run is simulated (no lesson of the world names it).

    Returns
    -------
    list of Lesson
        One of the design (anchors weigh the axes against each other), two of
        the world (which axis's anchors matter most here; what the comparison
        with the study can and cannot show).

    Examples
    --------
    >>> import pandas as pd
    >>> anchors = pd.DataFrame({"anchors_from_cohort": ["D", "C", "L", "R", "all four"],
    ...     "tau_to_standard": [0.989, 0.905, 0.958, 0.989, 0.905], "top_k_overlap": [3, 2, 3, 3, 2],
    ...     "tau_auroc_crs": [0.916, 0.832, 0.863, 0.895, 0.853]})
    >>> facts = pd.DataFrame({"fact": ["encoders"], "study": ["15"], "this_build": ["20"]})
    >>> lessons = differences_lessons(facts, anchors, pd.DataFrame(columns=["quantity", "study", "this_build"]))
    >>> [lesson.scope for lesson in lessons]
    ['design', 'world', 'world']
    >>> print(lessons[1].text.split(";")[0])
    Here the anchors of C matter most: replacing them alone by this cohort's range gives τ_b 0.905 to the standard's ranking and keeps 2 of 3 members of the top 3
    """
    rows = anchors.set_index("anchors_from_cohort")
    single = rows.drop(index=[all_axes], errors="ignore")
    every = rows.loc[all_axes] if all_axes in rows.index else None
    taus = single["tau_to_standard"].astype(float)
    text = ("Re-anchoring one axis to this cohort's own range rescales it without reordering the encoders on that "
            "axis, so any move of the CRS ranking comes from how the axes are weighed against each other. ")
    if (taus >= 1).all() and (every is None or float(every["tau_to_standard"]) >= 1):
        text += ("Here the ranking does not move at all (τ_b 1 for every re-anchoring): these encoders' order does "
                 "not depend on where the anchors sit, which a benchmark of this design should still check and report.")
    else:
        span = fmt(taus.min(), 3) if fmt(taus.min(), 3) == fmt(taus.max(), 3) else f"{fmt(taus.min(), 3)} to {fmt(taus.max(), 3)}"
        text += (f"Here τ_b to the standard's ranking is {span} for one axis at a time"
                 + (f" and {fmt(float(every['tau_to_standard']), 3)} for all four at once" if every is not None else "")
                 + ": the anchors decide part of the ranking, which is why a benchmark of this design fixes them once, "
                   "from what the raw values mean, and publishes them.")
    lessons = [Lesson(DESIGN, text)]

    order = single.assign(tau=taus).sort_values(["tau", "top_k_overlap"], kind="mergesort")
    most, least = order.iloc[0], order.iloc[-1]
    top = int(single["top_k_overlap"].max()) if len(single) else 0
    if float(most["tau"]) == float(least["tau"]):
        text = (f"Here every axis's anchors matter alike: replacing any one by this cohort's range gives τ_b "
                f"{fmt(float(most['tau']), 3)} to the standard's ranking")
    else:
        ties = [str(name) for name, value in taus.items() if value == float(least["tau"])]
        text = (f"Here the anchors of {order.index[0]} matter most: replacing them alone by this cohort's range gives "
                f"τ_b {fmt(float(most['tau']), 3)} to the standard's ranking and keeps {int(most['top_k_overlap'])} of "
                f"{top} members of the top {top}; those of {and_list(ties)} matter least (τ_b "
                f"{fmt(float(least['tau']), 3)})")
    text += (". Which axis that is depends on how this build's encoders spread between the anchors; another cohort "
             "may put it elsewhere.")
    lessons.append(Lesson(WORLD, text))

    fact = {str(r.fact): (str(r.study), str(r.this_build)) for r in facts.itertuples(index=False)}
    listed = [f"{fact[name][1]} {label} against {fact[name][0]}" for name, label in
              ((CANDIDATES_RANKED, "candidates"), ("encoders", "encoders"),
               ("LoRA runs (encoder x dataset x seed)", "LoRA runs"))
              if name in fact and fact[name][0] not in ("-", "")]
    if "institutional shift" in fact:
        listed.append(f"{fact['institutional shift'][1]} against {fact['institutional shift'][0]}")
    same = sorted(name for name, (study, here) in fact.items() if study not in ("-", "") and study == here)
    unreported = sorted(name for name, (study, _) in fact.items() if study in ("-", ""))
    text = ("Where the study reports an input of the cohort table, this build differs"
            + (f" ({and_list(listed)})" if listed else "")
            + (f", except for the {and_list(same)}" if same else "")
            + (f"; the study does not report the {and_list(unreported)}" if unreported else "") + ". ")
    if len(compared):
        text += _directions_sentence(direction_counts(compared)) + ". "
    text += ("With several inputs different at once, this page can show that each quantity is computed the same way "
             "and which way it differs, and name what bears on a gap, not prove which input causes it.")
    lessons.append(Lesson(WORLD, text))
    return lessons


def differences_exercise_anchor(base: "pd.DataFrame", whatif: "pd.DataFrame", row: Mapping[str, float],
                                axis: str, new_anchors: tuple[float, float], old_anchors: tuple[float, float],
                                top_k: int = 3) -> str:
    """The solution of the exercise "move the calibration anchor yourself", computed from the page's scores.

    Parameters
    ----------
    base, whatif : pandas.DataFrame
        Candidates' scores (``encoder, D, crs``) under the standard and under the what-if anchors.
    row : mapping
        The anchor table's row of ``axis`` (``tau_to_standard``, ``top_k_overlap``).
    axis : str
        The axis moved.
    new_anchors, old_anchors : (float, float)
        The what-if and the standard's anchors, [worst, best].
    top_k : int
        Size of the compared top sets.

    Returns
    -------
    str

    Examples
    --------
    >>> import pandas as pd
    >>> base = pd.DataFrame({"encoder": list("abcd"), "D": [0.9, 0.8, 0.7, 0.6], "crs": [0.7, 0.6, 0.5, 0.4]})
    >>> whatif = base.assign(crs=[0.7, 0.5, 0.6, 0.4])
    >>> text = differences_exercise_anchor(base, whatif, {"tau_to_standard": 0.9, "top_k_overlap": 3}, "C", (0.3, 0.0), (0.2, 0.0))
    >>> print(text.split(". ")[0])
    In this build, widening the C anchors from [0.2, 0.0] to [0.3, 0.0] gives a CRS ranking with τ_b 0.667 to the standard's (1 of 6 pairs swapped) and keeps 3 of 3 members of the top 3
    """
    from crsbench_lib.scoring.agreement import score_agreement
    from crsbench_lib.scoring.rank_statistics import kendall_tau_b, reversed_pairs

    merged = base[["encoder", "D", "crs"]].merge(whatif[["encoder", "crs"]], on="encoder", suffixes=("", "_whatif"))
    before, after = merged["crs"].to_numpy(float), merged["crs_whatif"].to_numpy(float)
    tau = kendall_tau_b(before, after)
    n = len(merged)
    swapped = reversed_pairs(before, after)
    top_base = set(merged.sort_values("crs", ascending=False, kind="mergesort")["encoder"].head(top_k))
    top_new = set(merged.sort_values("crs_whatif", ascending=False, kind="mergesort")["encoder"].head(top_k))
    agree_base = score_agreement(merged[["encoder", "D", "crs"]]).tau_b
    agree_new = score_agreement(merged[["encoder", "D", "crs_whatif"]].rename(columns={"crs_whatif": "crs"})).tau_b
    (ow, ob), (nw, nb) = old_anchors, new_anchors
    verb = ("widening" if abs(nw - nb) > abs(ow - ob) else "narrowing" if abs(nw - nb) < abs(ow - ob) else "moving")
    text = (f"In this build, {verb} the {axis} anchors from [{float(ow)!r}, {float(ob)!r}] to [{float(nw)!r}, "
            f"{float(nb)!r}] gives a CRS ranking "
            f"with τ_b {fmt(tau, 3)} to the standard's ({swapped} of {pair_count(n)} pairs swapped) and keeps "
            f"{len(top_base & top_new)} of {top_k} members of the top {top_k}. ")
    moved = float(row["tau_to_standard"])
    if fmt(tau, 3) == fmt(1.0, 3):
        compare = "the what-if does not move the ranking at all"
    else:
        compare = "the what-if moves the ranking " + (
            "less than that" if tau > moved else "more than that" if tau < moved else "as much")
    text += (f"Re-anchoring {axis} to this cohort's own range (the row {axis} of the anchor table) gave τ_b "
             f"{fmt(moved, 3)}; {compare}. ")
    if fmt(agree_new, 3) == fmt(agree_base, 3):
        closer = "so the CRS stays as close to AUROC as it was"
    else:
        closer = f"so the CRS moves {'closer to' if agree_new > agree_base else 'further from'} AUROC"
    text += (f"AUROC and CRS agree at τ_b {fmt(agree_new, 3)} under the what-if against {fmt(agree_base, 3)} under the "
             f"standard, {closer}. ")
    text += ("A wider anchor squeezes the axis's normalised values together, so it weighs less in the CRS and the "
             "other axes decide more; a narrower one does the opposite. How far that moves a ranking depends on how "
             "the encoders spread on the axis and how close they sit on the others." if verb != "moving" else
             "The anchors span the same width, so only where the encoders fall between them changes.")
    return text
