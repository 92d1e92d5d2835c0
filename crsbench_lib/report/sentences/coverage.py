"""The sentences of the self-audit: do the benchmark's intervals cover the simulated truth?

:func:`coverage_verdict` judges one observed coverage against its nominal
level and its own Monte-Carlo error; :func:`describe_coverage` says it for
every quantity of a coverage table (:func:`crsbench_lib.scoring.coverage.coverage_table`),
naming what the lesson belongs to: how the interval method behaves is a
property of any benchmark of this design, how far it misses here belongs to
this build's simulated world (its generator, encoders and sizes).
:func:`coverage_lessons` sorts the chapter's lessons for its "Is this real?"
section, and :func:`coverage_exercise_replicates` and
:func:`coverage_exercise_by_encoder` compute its exercises' answers from the
audit's own tables.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from crsbench_lib.report.grammar import and_list, finite, fmt, percent, value_range
from crsbench_lib.report.sentences.lessons import DESIGN, WORLD, Lesson, world_name

if TYPE_CHECKING:
    import pandas as pd

#: Monte-Carlo standard errors an observed coverage may lie from nominal and still "hold".
TOLERANCE_SE = 2.0
#: A judged Monte-Carlo error above which "within error" is said to hide shortfalls worth knowing.
RESOLVABLE_SE = 0.03
#: What each quantity is called in a sentence.
QUANTITY_NAMES: dict[str, str] = {
    "axis_D": "discrimination (D)", "axis_C": "calibration (C)", "axis_L": "label efficiency (L)",
    "axis_R": "robustness (R)", "crs": "each encoder's CRS", "crs_difference": "the pairwise CRS differences",
    "tau_auroc_crs": "Kendall's τ_b of AUROC and CRS",
}
_AXES_SHOWN = ("no page shows an axis interval; the CRS draws resample the axes, each encoder's profile draws "
               "recentred on its point profile (method section 9, amendment 15)")
#: Which interval the book's pages show for each audited quantity, and where (None: no page shows one).
BOOK_INTERVALS: dict[str, tuple[str | None, str]] = {
    "axis_D": (None, _AXES_SHOWN), "axis_C": (None, _AXES_SHOWN), "axis_L": (None, _AXES_SHOWN),
    "axis_R": (None, _AXES_SHOWN),
    "crs": ("percentile", "the leading-tier chapter's bootstrap summary, with the basic interval and the bias beside it"),
    "crs_difference": ("percentile", "the leading-tier chapter's pairwise table, with the basic interval beside it"),
    "tau_auroc_crs": ("percentile", "the agreement chapter"),
    "leading_tier": ("set", "the leading-tier and selection-gate chapters: the confidence set for the best, read on "
                            "one-sided bounds at each candidate's own critical value, centred on the point"),
}
#: What each quantity's estimator is, where a bias has a known source.
BIAS_SOURCES: dict[str, str] = {
    "axis_C": "binned ECE is biased upward on a finite test set (each bin's absolute gap between confidence and "
              "accuracy turns sampling noise into excess; the debiased ECE of amendment 21 removes only part of it "
              "where a bin is calibrated)",
    "crs": "the CRS's dominance share and floor are non-smooth functions of the profile",
    "crs_difference": "the CRS's dominance share and floor are non-smooth functions of the profile",
}


def _covered(row: pd.Series) -> str:
    """``"5 of 24"``: how many intervals held the truth."""
    n = int(row["n"])
    return f"{round(float(row['observed']) * n)} of {n}"


def judged_se(nominal: float, observed_se: float, n_replicates: int) -> float:
    """The Monte-Carlo error a coverage is judged against: the error it would have at the nominal level.

    ``sqrt(nominal (1 - nominal) / R)`` over ``R`` replicates (the replicate is
    the unit; a replicate's share of covering intervals has a variance of at
    most ``nominal (1 - nominal)`` when coverage is nominal, so this bounds the
    error under that hypothesis). The observed share's own error
    (``observed_se``) is not used: it grows as coverage falls (0.16 at a
    coverage of 0.7 over 8 replicates), so an interval that falls short would
    be judged by a wider yardstick than one that holds. The chapter's table
    prints this error too (:func:`coverage_verdict_table`), so each share has one.

    Examples
    --------
    >>> round(judged_se(0.95, 0.0, 19), 4), round(judged_se(0.95, 0.16, 8), 4)
    (0.05, 0.0771)
    """
    del observed_se  # kept in the signature for the callers that pass the table's column; see above
    return math.sqrt(nominal * (1.0 - nominal) / max(1, int(n_replicates)))


def coverage_verdict(observed: float, nominal: float, se: float) -> str:
    """``"holds"``, ``"under-covers"`` or ``"over-covers"``: observed against nominal, within ``TOLERANCE_SE`` se.

    Examples
    --------
    >>> coverage_verdict(0.80, 0.95, 0.03), coverage_verdict(0.93, 0.95, 0.03), coverage_verdict(1.0, 0.8, 0.02)
    ('under-covers', 'holds', 'over-covers')
    """
    gap = finite(observed, "observed") - finite(nominal, "nominal")
    if abs(gap) <= TOLERANCE_SE * finite(se, "se"):
        return "holds"
    return "under-covers" if gap < 0 else "over-covers"


def describe_coverage(table: pd.DataFrame, method: str = "percentile", world: str = "this build's simulated world") -> str:
    """What the audit found, one clause per quantity, for the intervals of ``method`` and the leading tier.

    Parameters
    ----------
    table : pandas.DataFrame
        A coverage table (quantity, method, nominal, observed, n, n_replicates, mc_se, mean_set_size).
    method : str
        The interval method described ("percentile": the intervals the book shows).
    world : str
        Names where the numbers come from.

    Returns
    -------
    str

    Raises
    ------
    ValueError
        If the table holds no row of ``method``.

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({"quantity": ["axis_D", "axis_C", "leading_tier"],
    ...     "method": ["percentile", "percentile", "set"], "nominal": [0.95, 0.95, 0.95],
    ...     "observed": [0.94, 0.70, 0.9], "n": [100, 100, 20], "n_replicates": [20, 20, 20],
    ...     "mc_se": [0.02, 0.05, 0.07], "mean_set_size": [float("nan"), float("nan"), 2.1]})
    >>> print(describe_coverage(table))  # doctest: +NORMALIZE_WHITESPACE
    Over 20 replicates of the protocol, the 95 % percentile intervals (nominal coverage 0.95) stay within two Monte-Carlo
    errors of it for discrimination (D) (94 of 100 intervals cover the truth, a share of 0.940, Monte-Carlo error 0.049) and fall short for
    calibration (C) (70 of 100, 0.700, error 0.049). With 20 replicates a shortfall below 0.10 goes unseen: more
    replicates would tell. The leading tier (2.1 encoders on average) held the truly best encoder in 18 of the 20
    replicates (a share of 0.900, error 0.049). Which interval falls short is a property of the interval method under this design;
    by how much is measured in this build's simulated world.
    """
    rows = table[table["method"] == method]
    if rows.empty:
        raise ValueError(f"the coverage table holds no {method!r} intervals")
    n_rep = int(rows["n_replicates"].max())
    clauses = {"holds": [], "under-covers": [], "over-covers": []}
    held_errors = [0.0]
    first = True
    for _, r in rows.iterrows():
        se = judged_se(float(r["nominal"]), float(r["mc_se"]), int(r["n_replicates"]))
        verdict = coverage_verdict(float(r["observed"]), float(r["nominal"]), se)
        if verdict == "holds":
            held_errors.append(se)
        name = QUANTITY_NAMES.get(str(r["quantity"]), str(r["quantity"]))
        detail = (f"{_covered(r)} intervals cover the truth, a share of {fmt(r['observed'], 3)}, Monte-Carlo error "
                  f"{fmt(se, 3)}" if first else f"{_covered(r)}, {fmt(r['observed'], 3)}, error {fmt(se, 3)}")
        first = False
        clauses[verdict].append(f"{name} ({detail})")
    verbs = {"holds": "stay within two Monte-Carlo errors of it for", "under-covers": "fall short for",
             "over-covers": "are wider than promised for"}
    parts = [f"{verbs[v]} {and_list(c)}" for v, c in clauses.items() if c]
    level = percent(float(rows["nominal"].iloc[0]))
    text = (f"Over {n_rep} replicates of the protocol, the {level} {method} intervals (nominal coverage "
            f"{fmt(rows['nominal'].iloc[0], 2)}) {and_list(parts)}.")
    if clauses["holds"] and max(held_errors) > RESOLVABLE_SE:
        text += (f" With {n_rep} replicates a shortfall below {fmt(TOLERANCE_SE * max(held_errors), 2)} goes unseen: "
                 "more replicates would tell.")
    tier = table[table["method"] == "set"]
    if not tier.empty:
        t = tier.iloc[0]
        se = judged_se(float(t["nominal"]), float(t["mc_se"]), int(t["n_replicates"]))
        text += (f" The leading tier ({fmt(t['mean_set_size'], 1)} encoders on average) held the truly best encoder "
                 f"in {round(float(t['observed']) * int(t['n_replicates']))} of the {int(t['n_replicates'])} replicates "
                 f"(a share of {fmt(t['observed'], 3)}, error {fmt(se, 3)}).")
    if clauses["under-covers"]:
        text += (" Which interval falls short is a property of the interval method under this design; "
                 f"by how much is measured in {world}.")
    else:
        text += f" These shares are measured in {world}, for these encoders and sizes only."
    return text


def describe_truth(truth: pd.DataFrame, table: pd.DataFrame, method: str = "percentile") -> str:
    """Who is truly best, and whether the truth is precise enough to judge the intervals by.

    The truth is an estimate too (a mean over training draws on a large test
    set); coverage can be read only where its Monte-Carlo error is small beside
    the intervals' widths. This sentence names the largest ratio of the
    truth's standard error to the mean interval width over the quantities.

    Parameters
    ----------
    truth : pandas.DataFrame
        A truth table (quantity, item, truth, truth_se) with a ``leading_tier`` row.
    table : pandas.DataFrame
        The coverage table of the same audit.
    method : str
        Whose widths are compared.

    Returns
    -------
    str

    Examples
    --------
    >>> import pandas as pd
    >>> truth = pd.DataFrame({"quantity": ["leading_tier"], "item": ["enc"], "truth": [0.021], "truth_se": [0.004]})
    >>> table = pd.DataFrame({"quantity": ["axis_D"], "method": ["percentile"], "mean_width": [0.04],
    ...                       "mean_truth_se": [0.002]})
    >>> describe_truth(truth, table)
    "The truly best encoder is enc, 0.021 above the runner-up in CRS (Monte-Carlo error 0.004). The truth's own Monte-Carlo error is at most 5 % of an interval's mean width (largest for discrimination (D)), so a miss is the interval's, not the truth's."
    """
    best = truth[truth["quantity"] == "leading_tier"]
    if len(best) != 1:
        raise ValueError("the truth table must name one truly best encoder (quantity 'leading_tier')")
    b = best.iloc[0]
    text = (f"The truly best encoder is {b['item']}, {fmt(b['truth'], 3)} above the runner-up in CRS "
            f"(Monte-Carlo error {fmt(b['truth_se'], 3)}).")
    rows = table[(table["method"] == method) & (table["mean_width"] > 0)]
    if rows.empty:
        return text
    ratio = rows["mean_truth_se"] / rows["mean_width"]
    worst = rows.loc[ratio.idxmax()]
    share = float(ratio.max())
    name = QUANTITY_NAMES.get(str(worst["quantity"]), str(worst["quantity"]))
    if share <= 0.1:
        return text + (f" The truth's own Monte-Carlo error is at most {percent(share)} of an interval's mean width "
                       f"(largest for {name}), so a miss is the interval's, not the truth's.")
    return text + (f" The truth's own Monte-Carlo error reaches {percent(share)} of an interval's mean width "
                   f"(for {name}): there, part of a miss may be the truth's; more training draws would tell.")


def describe_unaudited(profile: str) -> str:
    """What the chapter says for a run whose cohort is not the simulated one: there is no truth to audit against.

    Examples
    --------
    >>> describe_unaudited("mine").startswith("This build reads data whose truth is unknown")
    True
    """
    return ("This build reads data whose truth is unknown (profile "
            f"{profile}), so its intervals cannot be checked against it: the self-audit runs in the simulated "
            "world only. `crsbench coverage --profile default` audits the default profile's protocol there; "
            "its finding belongs to that world and to intervals of this design, not to this run's data.")


def signed(value: float, digits: int) -> str:
    """``+0.003``, ``-0.003`` or ``0.000``: a distance with its sign written out.

    Examples
    --------
    >>> signed(0.0123, 3), signed(-0.0001, 3)
    ('+0.012', '0.000')
    """
    text = fmt(value, digits)
    return text if text.startswith("-") or float(text) == 0 else "+" + text


def _verdicts(table: pd.DataFrame) -> dict[tuple[str, str], tuple[str, float, pd.Series]]:
    """(quantity, method) -> (verdict, judged error, row) for every row of a coverage table."""
    out = {}
    for _, r in table.iterrows():
        se = judged_se(float(r["nominal"]), float(r["mc_se"]), int(r["n_replicates"]))
        out[(str(r["quantity"]), str(r["method"]))] = (
            coverage_verdict(float(r["observed"]), float(r["nominal"]), se), se, r)
    return out


_VERBS = {"holds": "holds", "under-covers": "falls short", "over-covers": "is wider than promised"}


def coverage_verdict_table(table: pd.DataFrame) -> pd.DataFrame:
    """The page's coverage table: each share with the Monte-Carlo error its sentence quotes, and the verdict.

    ``mc_se`` here is :func:`judged_se`, the error at the nominal level, the one
    every sentence, the figure and the verdict use; the scoring table's
    ``mc_se`` (the observed share's own, cluster-robust error) is replaced, so
    the page prints one Monte-Carlo error per share. Why this one: a verdict
    tests "coverage is nominal", whose error is the error under that
    hypothesis; the observed share's error reads 0 when every replicate covers
    (8 of 8 would claim certainty from 8 replicates) and grows as coverage
    falls, so a short interval would be judged by a wider yardstick.

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({"quantity": ["axis_C", "leading_tier"], "method": ["percentile", "set"],
    ...     "nominal": 0.95, "observed": [0.458, 1.0], "n": [24, 8], "n_replicates": 8, "mc_se": [0.176, 0.0]})
    >>> coverage_verdict_table(table)[["observed", "mc_se", "verdict"]].round(3).values.tolist()
    [[0.458, 0.077, 'falls short'], [1.0, 0.077, 'holds']]
    """
    out = table[["quantity", "method", "nominal", "observed", "n"]].copy()
    verdicts = _verdicts(table)
    keys = list(zip(table["quantity"].astype(str), table["method"].astype(str)))
    out["mc_se"] = [verdicts[key][1] for key in keys]
    out["verdict"] = [_VERBS[verdicts[key][0]] for key in keys]
    return out.reset_index(drop=True)



def describe_methods(table: pd.DataFrame, world: str = "this build's simulated world") -> str:
    """Percentile against basic interval, quantity by quantity, with the estimator's bias that decides between them.

    The percentile interval ``[q(a), q(1 - a)]`` of the draws is where a
    resampled estimate falls; the basic interval ``[2 point - q(1 - a), 2 point
    - q(a)]`` reflects it about the point (Davison & Hinkley 1997, eq. 5.6). For
    an estimator biased by ``b`` the draws are biased by about ``b`` again around
    the point, so the percentile interval sits about ``2 b`` from the truth and the
    basic interval about ``0``: where a bias is large beside the interval's
    width, the percentile interval falls short and the basic one holds. The bias
    is read from the audit itself (mean of estimate less truth over the
    replicates, judged against twice its standard error).

    Parameters
    ----------
    table : pandas.DataFrame
        A coverage table with ``mean_error`` and ``error_se``
        (:func:`crsbench_lib.scoring.coverage.coverage_table`).
    world : str
        Names where the numbers come from.

    Returns
    -------
    str

    Raises
    ------
    ValueError
        If no quantity has both a percentile and a basic interval.

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({"quantity": ["axis_C", "axis_C", "axis_D", "axis_D"],
    ...     "method": ["basic", "percentile"] * 2, "nominal": 0.95, "observed": [0.96, 0.30, 0.95, 0.94],
    ...     "n": 80, "n_replicates": 16, "mc_se": [0.04, 0.10, 0.04, 0.04], "mean_width": 0.03,
    ...     "mean_error": [0.012, 0.012, 0.001, 0.001], "error_se": [0.001, 0.001, 0.002, 0.002]})
    >>> print(describe_methods(table))  # doctest: +NORMALIZE_WHITESPACE
    For calibration (C) the percentile interval falls short (24 of 80 cover the truth, a share of 0.300, error 0.054) while the
    basic interval holds (0.960, error 0.054): its estimate lies +0.012 from the truth on average (error 0.001, 80 %
    of the interval's half-width), because binned ECE is biased upward on a finite test set (each bin's absolute gap
    between confidence and accuracy turns sampling noise into excess; the debiased ECE of amendment 21 removes only
    part of it where a bin is calibrated); the draws add the bias again, the basic
    interval reflects them about the point and takes it out. Both intervals hold for discrimination (D). That a
    biased estimator's percentile interval falls short while the basic one holds belongs to the interval methods
    (any benchmark of this design); how large the bias is belongs to this build's simulated world.
    """
    verdicts = _verdicts(table)
    quantities = sorted({q for q, m in verdicts if m == "percentile"} & {q for q, m in verdicts if m == "basic"},
                        key=lambda q: list(QUANTITY_NAMES).index(q) if q in QUANTITY_NAMES else len(QUANTITY_NAMES))
    if not quantities:
        raise ValueError("the coverage table holds no quantity with both a percentile and a basic interval")
    both: dict[str, list[str]] = {"holds": [], "under-covers": []}
    sentences = []
    split_found = False
    other_parts = 0
    for q in quantities:
        (pv, pse, pr), (bv, bse, br) = verdicts[(q, "percentile")], verdicts[(q, "basic")]
        name = QUANTITY_NAMES.get(q, q)
        if pv == bv and pv in both:
            both[pv].append(name)
            continue
        if pv == bv:
            sentences.append(f"Both intervals are wider than promised for {name}.")
            continue
        textbook = pv == "under-covers" and bv == "holds"
        other_parts += not textbook
        text = (f"For {name} the percentile interval {_VERBS[pv]} ({_covered(pr)} cover "
                f"the truth, a share of {fmt(pr['observed'], 3)}, error {fmt(pse, 3)}) while the basic interval {_VERBS[bv]} ({fmt(br['observed'], 3)}, "
                f"error {fmt(bse, 3)})")
        bias, bias_se = float(pr.get("mean_error", math.nan)), float(pr.get("error_se", math.nan))
        half = float(pr.get("mean_width", math.nan)) / 2.0
        if math.isfinite(bias) and math.isfinite(bias_se) and abs(bias) > TOLERANCE_SE * bias_se:
            share = f", {percent(bias / half)} of the interval's half-width" if math.isfinite(half) and half > 0 else ""
            text += f": its estimate lies {signed(bias, 3)} from the truth on average (error {fmt(bias_se, 3)}{share})"
            if q in BIAS_SOURCES:
                text += f", because {BIAS_SOURCES[q]}"
            if textbook:
                text += "; the draws add the bias again, the basic interval reflects them about the point and takes it out"
                split_found = True
        elif math.isfinite(bias):
            text += (f"; its estimate's mean distance from the truth ({signed(bias, 3)}, error {fmt(bias_se, 3)}) "
                     "does not explain it")
        sentences.append(text + ".")
    if both["holds"]:
        sentences.append(f"Both intervals hold for {and_list(both['holds'])}.")
    if both["under-covers"]:
        sentences.append(f"Both fall short for {and_list(both['under-covers'])}.")
    parted = len(quantities) - len(both["holds"]) - len(both["under-covers"])
    if split_found:
        sentences.append("That a biased estimator's percentile interval falls short while the basic one holds belongs to "
                         "the interval methods (any benchmark of this design); how large the bias is belongs to "
                         f"{world}.")
    if other_parts or (parted and not split_found):
        sentences.append(f"Where the two methods part in any other way, the finding is measured in {world} only.")
    if parted == 0:
        sentences.append(f"The two methods give the same verdict for every quantity, in {world}.")
    return " ".join(sentences)


def describe_book_intervals(table: pd.DataFrame, intervals: dict[str, tuple[str | None, str]] | None = None) -> str:
    """Which interval the book's pages show for each quantity, and whether that interval held in this audit.

    Parameters
    ----------
    table : pandas.DataFrame
        A coverage table.
    intervals : dict, optional
        Quantity -> (method shown, where); default :data:`BOOK_INTERVALS`.

    Returns
    -------
    str

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({"quantity": ["crs", "leading_tier"], "method": ["percentile", "set"], "nominal": 0.95,
    ...     "observed": [0.94, 1.0], "n": [80, 16], "n_replicates": 16, "mc_se": [0.03, 0.0]})
    >>> print(describe_book_intervals(table, {"crs": ("percentile", "the tier chapter"),
    ...     "leading_tier": ("set", "the tier chapter"), "axis_D": (None, "no page"),
    ...     "axis_C": (None, "no page")}))  # doctest: +NORMALIZE_WHITESPACE
    The book's pages show the percentile interval for each encoder's CRS (the tier chapter; here it holds: 0.940,
    error 0.054) and the leading tier as a set for the truly best encoder (the tier chapter; here it holds: 1.000,
    error 0.054). For discrimination (D) and calibration (C): no page.
    """
    verdicts = _verdicts(table)
    shown: list[str] = []
    unshown: dict[str, list[str]] = {}
    for q, (method, where) in (intervals if intervals is not None else BOOK_INTERVALS).items():
        name = "the leading tier" if q == "leading_tier" else QUANTITY_NAMES.get(q, q)
        if method is None:
            unshown.setdefault(where, []).append(name)
            continue
        what = f"{name} as a set for the truly best encoder" if method == "set" else f"the {method} interval for {name}"
        if (q, method) in verdicts:
            verdict, se, r = verdicts[(q, method)]
            shown.append(f"{what} ({where}; here it {_VERBS[verdict]}: {fmt(r['observed'], 3)}, error {fmt(se, 3)})")
        else:
            shown.append(f"{what} ({where}; not audited here)")
    text = [f"The book's pages show {and_list(shown)}."] if shown else []
    text += [f"For {and_list(names)}: {where}." for where, names in unshown.items()]
    return " ".join(text)


def coverage_lessons(table: "pd.DataFrame | None", simulated: bool | None = None,
                     world: str | None = None) -> list[Lesson]:
    """The self-audit chapter's "Is this real?" lessons, decided from its coverage table.

    Parameters
    ----------
    table : pandas.DataFrame or None
        The audit's coverage table (:func:`crsbench_lib.scoring.coverage.coverage_table`),
        or None when no audit ran (a run on data whose truth is unknown).
    simulated : bool, optional
        Names the world when ``world`` is not given.
    world : str, optional
        Where the numbers come from (the page's phrase, e.g. "this build's
        simulated world (derm, 3 encoders, 8 replicates)").

    Returns
    -------
    list of Lesson
        Of the design: how small a shortfall an audit of this many replicates
        can see, and what a biased estimator does to each interval method; of
        the world: which intervals fall short here, and whether the tier held.

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({"quantity": ["axis_C", "axis_C", "leading_tier"],
    ...     "method": ["basic", "percentile", "set"], "nominal": 0.95, "observed": [0.958, 0.417, 1.0],
    ...     "n": [24, 24, 8], "n_replicates": 8, "mc_se": [0.07, 0.17, 0.0], "mean_width": [0.038, 0.038, float("nan")],
    ...     "mean_error": [0.009, 0.009, float("nan")], "error_se": [0.002, 0.002, float("nan")],
    ...     "mean_set_size": [float("nan"), float("nan"), 1.75]})
    >>> [lesson.scope for lesson in coverage_lessons(table, simulated=True)]
    ['design', 'design', 'world', 'world']
    >>> coverage_lessons(None, simulated=False)[1].text[:60]
    "This run's own data has no known truth, so none of this page"
    """
    replicate_design = ("Coverage can be measured only where the truth is known: a real cohort's intervals cannot be "
                        "audited this way, only the interval method can, on data simulated with a known truth.")
    if table is None or table.empty:
        return [Lesson(DESIGN, replicate_design),
                Lesson(WORLD, (f"{world_name(simulated)[0].upper()}{world_name(simulated)[1:]} has no known truth, so "
                               "none of this page's intervals is audited here; what an audit on generated data with a "
                               "known truth finds about the interval methods carries over, how far they miss does not."))]
    place = world or world_name(simulated)
    n_rep = int(table["n_replicates"].max())
    nominal = float(table["nominal"].iloc[0])
    se = judged_se(nominal, 0.0, n_rep)
    lessons = [Lesson(DESIGN, (
        f"{replicate_design} An audit of {n_rep} replicates judges a {percent(nominal)} interval with a Monte-Carlo "
        f"error of {fmt(se, 3)} (the replicate is the unit), so a shortfall below {fmt(TOLERANCE_SE * se, 2)} goes "
        f"unseen; seeing one of 0.05 takes {replicates_for(0.05, nominal)} replicates."))]
    verdicts = _verdicts(table)
    split = [q for (q, m), (v, _, _) in verdicts.items()
             if m == "percentile" and v == "under-covers" and verdicts.get((q, "basic"), ("",))[0] == "holds"]
    base = ("An estimator biased by b has bootstrap draws biased by about b again around the point, so its "
            "percentile interval sits about 2b from the truth while the basic interval, reflected about the point, "
            "sits about 0 from it.")
    if split:
        q = split[0]
        _, _, pr = verdicts[(q, "percentile")]
        _, _, br = verdicts[(q, "basic")]
        lessons.append(Lesson(DESIGN, base + (
            f" On this page {QUANTITY_NAMES.get(q, q)} shows it: its estimate lies {signed(float(pr['mean_error']), 3)} "
            f"from the truth on average, its percentile interval covers {fmt(pr['observed'], 3)} of the time and its "
            f"basic interval {fmt(br['observed'], 3)}.")))
    else:
        lessons.append(Lesson(DESIGN, base + (
            " On this page no quantity's percentile interval falls short while its basic interval holds: no "
            "estimator here is biased enough beside its interval's width for the audit to show it.")))
    short = [QUANTITY_NAMES.get(q, q) for (q, m), (v, _, _) in verdicts.items() if m == "percentile" and v == "under-covers"]
    held = [QUANTITY_NAMES.get(q, q) for (q, m), (v, _, _) in verdicts.items() if m == "percentile" and v == "holds"]
    text = f"In {place} the percentile intervals "
    text += (f"fall short for {and_list(short)}" if short else "fall short for no quantity")
    text += (f" and hold, within two Monte-Carlo errors, for {and_list(held)}." if held else ".")
    text += (" Which quantities fall short, and by how much, depends on this world's test-set sizes and encoders: "
             "on another cohort, watch first the ones that fall short here.")
    lessons.append(Lesson(WORLD, text))
    tier = table[table["method"] == "set"]
    if not tier.empty:
        t = tier.iloc[0]
        held_n = round(float(t["observed"]) * int(t["n_replicates"]))
        verdict = coverage_verdict(float(t["observed"]), float(t["nominal"]), se)
        lessons.append(Lesson(WORLD, (
            f"The leading tier held the truly best encoder in {held_n} of {int(t['n_replicates'])} replicates "
            f"({fmt(t['mean_set_size'], 1)} encoders on average), so here it {_VERBS[verdict]}. A set of about "
            f"{fmt(t['mean_set_size'], 1)} among few audited encoders says little about a tier among many: the audit "
            "shows the set's method at work, not its size on the book's zoo.")))
    return lessons


def replicates_for(shortfall: float, nominal: float = 0.95) -> int:
    """Replicates an audit needs before a coverage shortfall of ``shortfall`` lies two Monte-Carlo errors out.

    ``R >= nominal (1 - nominal) (2 / shortfall)**2`` (:func:`judged_se`, :data:`TOLERANCE_SE`).

    Examples
    --------
    >>> replicates_for(0.05), replicates_for(0.10)
    (76, 19)
    """
    gap = finite(shortfall, "shortfall")
    if gap <= 0:
        raise ValueError(f"shortfall must be positive, got {shortfall!r}")
    return math.ceil(round(nominal * (1.0 - nominal) * (TOLERANCE_SE / gap) ** 2, 9))


def coverage_exercise_replicates(table: "pd.DataFrame | None", shortfall: float = 0.05) -> str:
    """How many replicates the audit needs to see a shortfall of ``shortfall``, and which verdicts that could change.

    Parameters
    ----------
    table : pandas.DataFrame or None
        The audit's coverage table (None: no audit ran).
    shortfall : float
        The shortfall to be seen.

    Returns
    -------
    str

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({"quantity": ["crs", "axis_D"], "method": "percentile", "nominal": 0.95,
    ...     "observed": [0.875, 0.958], "n": 24, "n_replicates": 8, "mc_se": [0.12, 0.07]})
    >>> print(coverage_exercise_replicates(table))  # doctest: +NORMALIZE_WHITESPACE
    To see a shortfall of 0.05 below the nominal 0.95, two Monte-Carlo errors sqrt(0.95 x 0.05 / R) must be at
    most 0.05: R = 76 replicates, against this audit's 8, whose error of 0.077 hides any shortfall below 0.15. Of
    this page's "holds" verdicts, the percentile interval of each encoder's CRS (0.875) lies more than 0.05 below
    nominal: with 76 replicates and the same share it would read as falling short. Rerun: `crsbench notebook coverage -p n_replicates 76`
    (the audit's time grows in proportion).
    """
    if table is None or table.empty:
        return ("No audit ran in this build (its data has no known truth), so there is no count to extend. For an "
                f"audit on generated data the answer is a formula: R >= 0.95 x 0.05 x (2 / {shortfall:g})^2 = "
                f"{replicates_for(shortfall)} replicates.")
    nominal = float(table["nominal"].iloc[0])
    n_rep = int(table["n_replicates"].max())
    need = replicates_for(shortfall, nominal)
    se = judged_se(nominal, 0.0, n_rep)
    text = (f"To see a shortfall of {shortfall:g} below the nominal {fmt(nominal, 2)}, two Monte-Carlo errors "
            f"sqrt({fmt(nominal, 2)} x {fmt(1 - nominal, 2)} / R) must be at most {shortfall:g}: R = {need} replicates, "
            f"against this audit's {n_rep}, whose error of {fmt(se, 3)} hides any shortfall below "
            f"{fmt(TOLERANCE_SE * se, 2)}.")
    verdicts = _verdicts(table)
    hidden = [(q, m, r) for (q, m), (v, _, r) in verdicts.items()
              if v == "holds" and nominal - float(r["observed"]) > shortfall]
    if need <= n_rep:
        text += " This audit already has that many."
    elif hidden:
        said = and_list([f"the {m} interval of {QUANTITY_NAMES.get(q, q)} ({fmt(r['observed'], 3)})"
                         for q, m, r in hidden])
        text += (f" Of this page's \"holds\" verdicts, {said} {'lies' if len(hidden) == 1 else 'lie'} more than "
                 f"{shortfall:g} below nominal: with {need} replicates and the same share "
                 f"{'it' if len(hidden) == 1 else 'they'} would read as falling short.")
    else:
        text += (f" No \"holds\" verdict of this page lies more than {shortfall:g} below nominal, so more replicates "
                 "would confirm these verdicts unless the shares themselves move.")
    return text + f" Rerun: `crsbench notebook coverage -p n_replicates {need}` (the audit's time grows in proportion)."


def coverage_exercise_by_encoder(truth: "pd.DataFrame | None", intervals: "pd.DataFrame | None",
                                 quantity: str = "axis_C") -> str:
    """Coverage of one axis's percentile and basic intervals per audited encoder, beside its true value and bias.

    Parameters
    ----------
    truth, intervals : pandas.DataFrame or None
        The audit's truth and interval tables (None: no audit ran).
    quantity : str
        The axis read (``axis_C`` by default: binned ECE, biased upward).

    Returns
    -------
    str

    Examples
    --------
    >>> import pandas as pd
    >>> truth = pd.DataFrame({"quantity": "axis_C", "item": ["a", "b"], "truth": [0.02, 0.07], "truth_se": 0.005})
    >>> bounds = {("a", "percentile"): (0.025, 0.045), ("a", "basic"): (0.015, 0.035),
    ...           ("b", "percentile"): (0.060, 0.100), ("b", "basic"): (0.060, 0.100)}
    >>> rows = [dict(replicate=r, quantity="axis_C", item=i, method=m, estimate=e, low=lo, high=hi, nominal=0.95)
    ...         for r in range(4) for (i, m), (lo, hi) in bounds.items() for e in [0.03 if i == "a" else 0.08]]
    >>> print(coverage_exercise_by_encoder(truth, pd.DataFrame(rows)))  # doctest: +NORMALIZE_WHITESPACE
    Per audited encoder, the percentile interval of calibration (C) covers the truth in 0 of 4 replicates for a
    (true value 0.020; its estimate 0.010 above it on average, 100 % of the interval's half-width) and 4 of 4 for b
    (0.070; 0.010, 50 %). The basic interval covers 4 of 4 and 4 of 4 in the same order. The percentile interval
    falls shortest for a, whose bias is largest beside its interval: it is the bias against the width, not the bias
    alone, that moves a percentile interval off the truth. Binned ECE is biased upward most, relative to its
    spread, where the true ECE is small; here the best calibrated encoder, a, is also the one whose interval falls
    shortest. Rerun with two of them: `crsbench notebook coverage -p encoders "[a, b]"`.
    """
    if truth is None or intervals is None or truth.empty or intervals.empty:
        return ("No audit ran in this build (its data has no known truth), so no interval can be scored against "
                "one. In an audit on generated data the answer turns on the bias of binned ECE beside the interval's width.")
    from crsbench_lib.scoring.coverage import interval_hits

    hits = interval_hits(truth, intervals)
    rows = hits[hits["quantity"] == quantity]
    if rows.empty:
        raise ValueError(f"coverage_exercise_by_encoder: the audit has no intervals of {quantity!r}")
    true = truth[truth["quantity"] == quantity].set_index("item")["truth"].astype(float)
    per = rows.groupby(["item", "method"]).agg(covered=("covered", "sum"), n=("covered", "size"),
                                               error=("error", "mean"), width=("width", "mean"))
    items = sorted(true.index, key=lambda i: float(true[i]))
    name = QUANTITY_NAMES.get(quantity, quantity)
    parts, shares = [], {}
    for k, item in enumerate(items):
        row = per.loc[(item, "percentile")]
        half = float(row["width"]) / 2.0
        bias = float(row["error"])
        share = bias / half if half > 0 else math.nan
        shares[item] = (int(row["covered"]) / int(row["n"]), share)
        head = f"{int(row['covered'])} of {int(row['n'])}"
        if k == 0:
            parts.append(f"{head} replicates for {item} (true value {fmt(true[item], 3)}; its estimate "
                         f"{fmt(abs(bias), 3)} {'above' if bias >= 0 else 'below'} it on average, {percent(share)} of the "
                         "interval's half-width)")
        else:
            parts.append(f"{head} for {item} ({fmt(true[item], 3)}; {signed(bias, 3) if bias < 0 else fmt(bias, 3)}, "
                         f"{percent(share)})")
    text = f"Per audited encoder, the percentile interval of {name} covers the truth in {and_list(parts)}."
    basics = [f"{int(per.loc[(i, 'basic'), 'covered'])} of {int(per.loc[(i, 'basic'), 'n'])}" for i in items
              if (i, "basic") in per.index]
    if basics:
        text += f" The basic interval covers {and_list(basics)} in the same order."
    lowest = min(shares[i][0] for i in items)
    worst = [i for i in items if shares[i][0] == lowest]
    # "Largest" is read from the shares as printed: two biases both printed 64 % are level, neither is largest.
    finite_shares = [shares[i][1] for i in items if math.isfinite(shares[i][1])]
    top = percent(max(finite_shares)) if finite_shares else None
    largest = [i for i in items if math.isfinite(shares[i][1]) and percent(shares[i][1]) == top]
    one = len(worst) == 1
    if set(worst) & set(largest):
        level = [i for i in largest if i not in worst]
        if set(largest) <= set(worst):
            who = ("whose bias is largest beside its interval" if one
                   else "the encoders whose biases are largest beside their intervals" if len(largest) == len(worst)
                   else "among them the encoder whose bias is largest beside its interval")
        else:
            whose = "whose bias beside its interval" if one else "among them those whose bias beside its interval"
            who = f"{whose} ({top}) is the largest, level with {and_list(level)}'s"
        text += (f" The percentile interval falls shortest for {and_list(worst)}, {who}: it is the bias against the "
                 "width, not the bias alone, that moves a percentile interval off the truth.")
    elif largest:
        text += (f" The percentile interval falls shortest for {and_list(worst)}, though the largest bias beside its "
                 f"interval ({top}) is {and_list(largest)}'s: with this few replicates the shares are too coarse to "
                 "rank the encoders.")
    if quantity == "axis_C":
        best = items[0]
        text += (" Binned ECE is biased upward most, relative to its spread, where the true ECE is small; here the best "
                 f"calibrated encoder, {best}, is "
                 + ((f"{'also the one' if one else 'among those'} whose interval falls shortest.") if best in worst
                    else f"not the one whose interval falls shortest ({and_list(worst)} {'is' if one else 'are'})."))
    audited = ", ".join(items[:2])
    return text + f" Rerun with two of them: `crsbench notebook coverage -p encoders \"[{audited}]\"`."


__all__ = ["BIAS_SOURCES", "BOOK_INTERVALS", "QUANTITY_NAMES", "describe_book_intervals", "describe_methods",
           "describe_unaudited", "signed", "RESOLVABLE_SE", "TOLERANCE_SE", "coverage_verdict", "describe_coverage",
           "describe_truth", "judged_se", "coverage_lessons", "coverage_exercise_by_encoder",
           "coverage_exercise_replicates", "coverage_verdict_table", "replicates_for"]


def coverage_takeaway(table: "pd.DataFrame | None", profile: str, method: str = "percentile") -> str:
    """The self-audit's key takeaway: do the book's intervals hold the simulated truth as often as they promise?

    Parameters
    ----------
    table : pandas.DataFrame or None
        The audit's coverage table, or None when no audit ran (data whose truth is unknown).
    profile : str
        The profile the page reads (named when nothing is audited).
    method : str
        The interval method judged ("percentile": the intervals the book's pages show).

    Returns
    -------
    str
        One or two sentences: which quantities' intervals fall short (within
        two Monte-Carlo errors, :func:`coverage_verdict`), how small a shortfall
        the audit can miss, and whether the leading tier held the truly best.

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({"quantity": ["axis_D", "axis_C"], "method": "percentile", "nominal": 0.95,
    ...                       "observed": [0.94, 0.70], "n": 100, "n_replicates": 20, "mc_se": 0.02})
    >>> coverage_takeaway(table, "quick")
    'Over 20 replicates of the protocol, the 95 % percentile intervals fall short for calibration (C) (a share of 0.700) and hold, within two Monte-Carlo errors, for the other audited quantity.'
    """
    if table is None or table.empty:
        return (f"Coverage needs a known truth, which this build's data (profile {profile}) lacks: none of its "
                "intervals is audited here (0 replicates); the self-audit runs in the simulated world only.")
    rows = table[table["method"] == method]
    if rows.empty:
        raise ValueError(f"the coverage table holds no {method!r} intervals")
    verdicts = list(_verdicts(rows).values())
    short = sorted((float(r["observed"]), QUANTITY_NAMES.get(str(r["quantity"]), str(r["quantity"])))
                   for v, _, r in verdicts if v == "under-covers")
    n_rep, k = int(rows["n_replicates"].max()), len(verdicts)
    text = (f"Over {n_rep} replicates of the protocol, the {percent(float(rows['nominal'].iloc[0]))} {method} "
            "intervals fall short for ")
    if not short:
        unseen = TOLERANCE_SE * max(se for _, se, _ in verdicts)
        text += f"none of the {k} audited quantities (shares {value_range(list(rows['observed']), 2)})"
        text += (f"; with so few replicates a shortfall below {fmt(unseen, 2)} goes unseen." if unseen / TOLERANCE_SE
                 > RESOLVABLE_SE else ".")
    else:
        named = (and_list([f"{name} (a share of {fmt(obs, 3)})" for obs, name in short]) if len(short) <= 2 else
                 f"{len(short)} of the {k} audited quantities, most for {short[0][1]} (a share of {fmt(short[0][0], 3)})")
        rest = k - len(short)
        others = "the other audited quantity" if rest == 1 else f"the other {rest} audited quantities"
        text += named + (f" and hold, within two Monte-Carlo errors, for {others}." if rest and len(short) <= 2 else ".")
    tier = table[table["method"] == "set"]
    if not tier.empty:
        t = tier.iloc[0]
        text += (f" The leading tier held the truly best encoder in {round(float(t['observed']) * int(t['n_replicates']))}"
                 f" of {int(t['n_replicates'])} replicates.")
    return text
