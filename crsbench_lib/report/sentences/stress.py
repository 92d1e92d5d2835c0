"""The sentences of the axes-under-stress part: the calibration and corruption chapters.

Whether a post-hoc calibrator helps, read from the change of the debiased ECE
(:func:`describe_calibrator_verdict`), and whether discrimination loss and
calibration loss move together across corruption cells
(:func:`describe_robustness_faces`), and how many probes chose an edge of the
grid of their inverse penalty 1/λ (:func:`describe_grid_edges`; scikit-learn
calls it ``C``, which the prose never does: C is the calibration axis), the
calibration chapter's "Is this real?" lessons (:func:`calibration_lessons`) and
its exercise's answer (:func:`calibration_exercise_by_encoder`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from crsbench_lib.report.grammar import (
    CORRELATION_SIZES,
    and_list,
    describe_change,
    finite,
    fmt,
    format_interval,
    interval_excludes_zero,
    noise_size_word,
    percent,
)
from crsbench_lib.report.sentences.lessons import DESIGN, WORLD, Lesson, world_name
from crsbench_lib.scoring.probe_grid import EdgeShare
from crsbench_lib.scoring.rank_statistics import descending_ranks

if TYPE_CHECKING:
    import pandas as pd

#: What the prose calls the probe's regularisation parameter (scikit-learn's ``C``): never "C", the calibration axis.
INVERSE_PENALTY = "inverse penalty 1/λ"

#: Largest share of edge choices at which the calibration axis is read as the encoders' (issue 27's bar): above it,
#: more than one probe in ten was stopped by the grid, too many to call the axis a property of the features.
EDGE_SHARE_READABLE = 0.10


def describe_calibrator_verdict(
    calibrator: str,
    before: float,
    after: float,
    interval: tuple[float, float],
    level: float = 0.95,
    digits: int = 3,
    floor: float | None = None,
    measure: str = "the mean debiased ECE",
) -> str:
    """Whether a post-hoc calibrator helps, read from the change of the debiased ECE (the axis C's measure).

    The verdict reads the interval of ``after - before`` alone (method section
    9, amendment 27): below zero "helps", above zero "makes it worse", spanning
    zero "does not help measurably", so it can never call a rise a cut. Its
    size is judged against the plug-in ECE's floor when ``floor`` is given
    (:func:`~crsbench_lib.report.grammar.noise_size_word`): the floor is the
    largest bias the plug-in ECE of these probes carries, the scale below which
    one probe's ECE says little; without ``floor`` the size word is the
    relative band.

    Parameters
    ----------
    calibrator : str
        Its name ("temperature").
    before, after : float
        The mean of ``measure`` without and with the calibrator.
    interval : (float, float)
        Interval of the change ``after - before``.
    level : float
        The interval's coverage.
    digits : int
        Decimals shown.
    floor : float, optional
        The mean plug-in ECE floor of the uncalibrated probes (the scale the
        size word is judged against).
    measure : str
        What ``before`` and ``after`` are, in words.

    Examples
    --------
    >>> describe_calibrator_verdict("temperature", 0.016, 0.010, (-0.012, -0.001), floor=0.023)
    'temperature helps: the mean debiased ECE fell from 0.016 to 0.010 (by 38 %; the fall of 0.006 is 0.26 times the mean ECE floor of 0.023, a small improvement beside it); its 95 % interval [-0.012, -0.001] excludes zero.'
    >>> describe_calibrator_verdict("temperature", 0.05, 0.02, (-0.04, -0.02))
    'temperature helps: the mean debiased ECE fell from 0.050 to 0.020 (by 60 %, a large improvement); its 95 % interval [-0.040, -0.020] excludes zero.'
    >>> describe_calibrator_verdict("isotonic", 0.01, 0.012, (-0.001, 0.005))
    'isotonic does not help measurably: the mean debiased ECE rose from 0.010 to 0.012 (by 20 %, a moderate deterioration); its 95 % interval [-0.001, 0.005] includes zero, so the data cannot tell the direction.'
    """
    low, high = finite(interval[0], "low"), finite(interval[1], "high")
    if high < 0:
        verdict = "helps"
    elif low > 0:
        verdict = "does not help, it makes calibration worse"
    else:
        verdict = "does not help measurably"
    change = describe_change(before, after, measure, better="lower",
                             interval=(low, high), level=level, digits=digits, noise=floor,
                             noise_name="the mean ECE floor")
    return f"{calibrator} {verdict}: {change[:1].lower()}{change[1:]}"


def describe_robustness_faces(r: float, interval: tuple[float, float], level: float = 0.95, digits: int = 2) -> str:
    """Do discrimination loss and calibration loss move together across corruption cells? In words.

    ``r**2`` is the share of the between-cell variance of the ECE increase
    that a linear function of the AUROC loss accounts for; ``1 - r**2`` is
    calibration damage the AUROC loss does not predict: the part a
    robustness view built on AUROC alone would miss.

    Parameters
    ----------
    r : float
        Pearson's r across cells.
    interval : (float, float)
        An interval of r (e.g. the cluster bootstrap's).
    level : float
        Its coverage.
    digits : int

    Examples
    --------
    >>> describe_robustness_faces(0.836, (0.718, 0.909))
    'r² = 0.70: across cells, the AUROC loss accounts for 70 % of the variance of the ECE increase and leaves 30 % unexplained; the whole 95 % interval of r [0.72, 0.91] lies above 0.7, so on this cohort the two losses largely move together.'
    """
    r = finite(r, "r")
    low, high = (finite(v, "interval") for v in interval)
    explained = r * r
    bound = CORRELATION_SIZES[-1][0]  # where "strong" becomes "very strong"
    bounds = format_interval(low, high, digits)
    if low >= bound:
        verdict = f"the whole {level * 100:g} % interval of r {bounds} lies above {bound:g}, so on this cohort the two losses largely move together"
    elif high < bound:
        verdict = (f"the whole {level * 100:g} % interval of r {bounds} lies below {bound:g}, so on this cohort they are "
                   "at most partly aligned, and a calibration view adds what the AUROC loss does not show")
    else:
        verdict = (f"the {level * 100:g} % interval of r {bounds} straddles {bound:g}, so these cells do not pin down "
                   "how closely the two move together")
    return (f"r² = {fmt(explained, digits)}: across cells, the AUROC loss accounts for {percent(explained)} of the "
            f"variance of the ECE increase and leaves {percent(1 - explained)} unexplained; {verdict}.")


def describe_grid_edges(share: EdgeShare, c_rule: str = "auroc", simulated: bool | None = None) -> str:
    """How many probes chose an edge of the grid of their inverse penalty 1/λ, and what that does to the calibration axis.

    The probe's regularisation parameter is scikit-learn's ``C``, the inverse
    of the penalty's strength λ; the sentence calls it the inverse penalty
    1/λ, so that C means only the calibration axis.

    Parameters
    ----------
    share : EdgeShare
        Counts from :func:`crsbench_lib.scoring.probe_grid.edge_share`.
    c_rule : str
        The probes' selection criterion (the results table's ``c_rule``).
    simulated : bool or None
        Whether the run is the simulated cohort (False: the user's own data);
        names the world the edge count belongs to
        (:func:`~crsbench_lib.report.sentences.lessons.world_name`).

    Examples
    --------
    >>> print(describe_grid_edges(EdgeShare(180, 87, 23, (0.01, 0.1, 1.0, 10.0))))  # doctest: +NORMALIZE_WHITESPACE
    Of the 180 clean full-label probes, 110 (61 %) chose an edge of the grid of the inverse penalty 1/λ [0.01, 10]
    (87 the smallest value, the strongest penalty, 23 the largest, the weakest), where the validation AUROC might
    have preferred a 1/λ outside it. That is more than one probe in ten: the calibration axis partly measures where
    the grid ends, not the encoders. ...
    """
    if share.n_probes == 0:
        return f"No clean full-label probe is in the table, so no probe's {INVERSE_PENALTY} can be placed on its grid."
    if share.fixed:
        return (f"The profile fixes every probe's {INVERSE_PENALTY} at {share.grid[0]:g}, so no probe chose it and none "
                "can run into the end of a grid; the calibration axis is each encoder's at that one regularisation, "
                "which may suit some encoders better than others.")
    n_edge = share.n_low + share.n_high
    grid = f"[{share.grid[0]:g}, {share.grid[-1]:g}]"
    criterion = "validation AUROC" if c_rule == "auroc" else "validation log-loss"
    head = (f"Of the {share.n_probes} clean full-label probes, {n_edge} ({percent(share.share)}) chose an edge of the "
            f"grid of the {INVERSE_PENALTY} {grid} ({share.n_low} the smallest value, the strongest penalty, "
            f"{share.n_high} the largest, the weakest)")
    if n_edge == 0:
        head = f"None of the {share.n_probes} clean full-label probes chose an edge of the grid of the {INVERSE_PENALTY} {grid}."
        reading = "Every probe's regularisation was set by its features, not by the grid's ends."
    elif share.share <= EDGE_SHARE_READABLE:
        head += f", where the {criterion} might have preferred a 1/λ outside it."
        reading = ("That is at most one probe in ten, so the grid's ends shape few of the calibration values; those "
                   "few probes' ECE may still reflect the grid, since nothing beyond it was tried.")
    else:
        head += f", where the {criterion} might have preferred a 1/λ outside it."
        reading = ("That is more than one probe in ten: the calibration axis partly measures where the grid ends, not "
                   "the encoders.")
    lesson = (f"Which probes reach an edge belongs to {world_name(simulated)}; that an edge choice moves ECE (a heavily "
              "regularised probe is under-confident, a barely regularised one over-confident) holds for any "
              "benchmark that tunes a probe on a grid.")
    return f"{head} {reading} {lesson}"


def calibration_lessons(
    effect: "pd.DataFrame",
    ece: "pd.DataFrame",
    floor: float | None = None,
    simulated: bool | None = None,
    study_range: tuple[float, float] | None = None,
    study_tests: int | None = None,
) -> list[Lesson]:
    """The calibration chapter's "Is this real?" lessons, decided from the page's numbers.

    Parameters
    ----------
    effect : pandas.DataFrame
        :func:`~crsbench_lib.scoring.calibration_ablation.calibrator_effect` by
        calibrator on the debiased ECE: calibration, before, after,
        change_low, change_high, auroc_change_low, auroc_change_high.
    ece : pandas.DataFrame
        :func:`~crsbench_lib.scoring.calibration_ablation.calibration_summary`
        by calibrator: calibration, ece_before, ece_after (the plug-in ECE).
    floor : float, optional
        Mean plug-in ECE floor of the uncalibrated probes.
    simulated : bool, optional
        Names the world.
    study_range : (float, float), optional
        The study's range of ECE reductions (``PUBLISHED.calibration_ece_reduction_range``).
    study_tests : int, optional
        The study's number of primary tests.

    Returns
    -------
    list of Lesson
        Of the design: the ECE floor (with ``floor``) and what a monotone
        calibrator can do to AUROC; of this build's world: which calibrators
        help, and by how much beside the floor.

    Examples
    --------
    >>> import pandas as pd
    >>> effect = pd.DataFrame({"calibration": ["temperature", "isotonic"], "before": [0.030, 0.030],
    ...     "after": [0.022, 0.021], "change_low": [-0.014, -0.015], "change_high": [-0.002, 0.001],
    ...     "auroc_change_low": [-0.0002, -0.0038], "auroc_change_high": [0.0001, -0.0012]})
    >>> ece = pd.DataFrame({"calibration": ["temperature", "isotonic"], "ece_before": [0.038, 0.038],
    ...                     "ece_after": [0.032, 0.030]})
    >>> lessons = calibration_lessons(effect, ece, floor=0.023)
    >>> [lesson.scope for lesson in lessons]
    ['design', 'design', 'world']
    >>> lessons[0].text.split(": ")[1][:75]
    "here the uncalibrated probes' mean plug-in ECE is 0.038 and its floor 0.023"
    """
    for column in ("calibration", "before", "after", "change_low", "change_high",
                   "auroc_change_low", "auroc_change_high"):
        if column not in effect.columns:
            raise ValueError(f"calibration_lessons: the effect table lacks column {column!r}")
    if effect.empty or ece.empty:
        raise ValueError("calibration_lessons: no calibrator")
    before = float(ece["ece_before"].mean())
    debiased = float(effect["before"].mean())
    lessons = []
    if floor is not None and math.isfinite(floor) and before > 0:
        lessons.append(Lesson(DESIGN, (
            "A finite test set gives even perfectly calibrated probabilities a positive binned ECE, its floor: here "
            f"the uncalibrated probes' mean plug-in ECE is {fmt(before, 3)} and its floor {fmt(floor, 3)}, and the "
            f"debiased ECE (the axis C) puts their miscalibration at {fmt(debiased, 3)}. The floor is the plug-in's "
            "bias for a perfectly calibrated predictor and only bounds it for a miscalibrated one, so subtracting it "
            "would understate the miscalibration; this page reads the debiased ECE and shows the floor as that "
            "bound. Any benchmark that reports binned ECE on test sets of this size carries the bias; more test "
            "images lower it (method section 9, amendments 21 and 27).")))
    rows = effect.set_index(effect["calibration"].astype(str))
    parts = []
    if "temperature" in rows.index:
        low, high = float(rows.loc["temperature", "auroc_change_low"]), float(rows.loc["temperature", "auroc_change_high"])
        parts.append(f"temperature scaling's mean AUROC change has the interval {format_interval(low, high, 4)}, "
                     + ("which includes zero, as the design says" if not interval_excludes_zero(low, high)
                        else "which excludes zero: with a softmax over several classes a one-vs-rest AUROC can move"))
    if "isotonic" in rows.index:
        low, high = float(rows.loc["isotonic", "auroc_change_low"]), float(rows.loc["isotonic", "auroc_change_high"])
        verdict = ("lies below zero: its ties cost a little AUROC" if high < 0 else "lies above zero" if low > 0
                   else "includes zero: its ties cost no AUROC the data can see")
        parts.append(f"isotonic regression's {format_interval(low, high, 4)} {verdict}")
    lessons.append(Lesson(DESIGN, (
        "Temperature scaling divides every logit by one number, a monotone map: it cannot reorder one label's cases, "
        "so a binary or per-label AUROC cannot move. Isotonic regression is monotone too but maps scores onto steps, "
        "and the ties it creates can lower AUROC." + (f" On this page {'; '.join(parts)}." if parts else ""))))
    verdicts = {"helps": [], "does not help measurably": [], "makes calibration worse": [], "has no verdict": []}
    plural = {"helps": "help", "does not help measurably": "do not help measurably",
              "makes calibration worse": "make calibration worse", "has no verdict": "have no verdict"}
    for name, row in rows.iterrows():
        low, high = float(row["change_low"]), float(row["change_high"])
        if not (math.isfinite(low) and math.isfinite(high)):
            key = "has no verdict"
        else:
            key = "helps" if high < 0 else "makes calibration worse" if low > 0 else "does not help measurably"
        verdicts[key].append(str(name))
    said = [f"{and_list(names)} {verb if len(names) == 1 else plural[verb]}" for verb, names in verdicts.items() if names]
    table = ece.set_index(ece["calibration"].astype(str))
    falls = ((table["ece_before"] - table["ece_after"]) / table["ece_before"]).astype(float)
    removed = ((rows["before"] - rows["after"]) / rows["before"]).astype(float)
    text = (f"In {world_name(simulated)} {'; '.join(said)}: the mean debiased ECE {_range_words(-removed)} and the "
            f"plug-in ECE {_range_words(-falls)}")
    if floor is not None and math.isfinite(floor) and floor > 0:
        change = (rows["before"] - rows["after"]).astype(float)
        largest = float(change.abs().max())
        text += (f"; the largest change of the mean debiased ECE, {fmt(largest, 3)}, is {largest / floor:.2f} times "
                 f"the plug-in ECE's floor, {noise_size_word(largest, floor)} beside it")
    share = debiased / before if before > 0 else math.nan
    text += "."
    if math.isfinite(share):
        text += (f" How much a calibrator can remove depends on how much miscalibration there is (here the debiased "
                 f"ECE is {percent(share)} of the plug-in ECE): on a cohort whose probes are more over- or "
                 "under-confident the same calibrators would remove more, on one already well calibrated less.")
    study = ""
    if study_range is not None:
        study = (f"ECE fell by {percent(study_range[0])} to {percent(study_range[1])}"
                 + (f" across {study_tests} primary tests" if study_tests else "") + ", AUROC essentially unchanged.")
    lessons.append(Lesson(WORLD, text, study=study))
    return lessons


def _range_words(changes: "pd.Series") -> str:
    """``falls by 17 % to 27 %``, ``rises by 5 %`` or ``changes by -3 % to +4 %``: relative changes as a range."""
    values = sorted(float(v) for v in changes if math.isfinite(float(v)))
    if not values:
        return "changes by an undefined share"
    low, high = values[0], values[-1]
    if high < 0 or low > 0:
        ends = sorted({percent(low), percent(high)}, key=lambda w: float(w.split()[0]))
        return f"{'falls' if high < 0 else 'rises'} by {' to '.join(ends)}"
    signed = [("-" if v < 0 else "+" if v > 0 else "") + percent(v) for v in (low, high)]
    return f"changes by {signed[0]} to {signed[1]}"


def calibration_exercise_by_encoder(paired: "pd.DataFrame", calibrator: str = "temperature") -> str:
    """Which encoder gains most from a calibrator, and whether the gain follows the miscalibration there was.

    Parameters
    ----------
    paired : pandas.DataFrame
        :func:`~crsbench_lib.scoring.calibration_ablation.paired_calibration`
        (encoder, calibration, ece_before, ece_after, auroc_before; and
        ece_floor_before when the table has the floor).
    calibrator : str
        The calibrator read.

    Returns
    -------
    str

    Examples
    --------
    >>> import pandas as pd
    >>> paired = pd.DataFrame({"encoder": ["a", "a", "b", "b", "c", "c"], "calibration": "temperature",
    ...     "ece_before": [0.06, 0.07, 0.03, 0.03, 0.02, 0.03], "ece_after": [0.03, 0.04, 0.03, 0.02, 0.025, 0.03],
    ...     "auroc_before": [0.70, 0.72, 0.85, 0.85, 0.80, 0.80], "ece_floor_before": 0.02})
    >>> print(calibration_exercise_by_encoder(paired))  # doctest: +NORMALIZE_WHITESPACE
    Summarised by encoder, temperature gains most for a: its mean ECE falls from 0.065 to 0.035 (by 46 %; 0.030, 1.50
    times its mean ECE floor of 0.020, large beside it). a was also the worst calibrated of the 3 encoders before
    calibration, so the gain follows the miscalibration there was to remove. Its AUROC before calibration, 0.710,
    ranks 3 of 3: among the weakest discriminators. 1 of 3 encoders' mean ECE rises with temperature (c).
    """
    rows = paired[paired["calibration"].astype(str) == calibrator]
    if rows.empty:
        raise ValueError(f"calibration_exercise_by_encoder: no row of calibrator {calibrator!r}")
    agg = {"ece_before": ("ece_before", "mean"), "ece_after": ("ece_after", "mean"),
           "auroc_before": ("auroc_before", "mean")}
    if "ece_floor_before" in rows.columns and rows["ece_floor_before"].notna().all():
        agg["floor"] = ("ece_floor_before", "mean")
    table = rows.groupby(rows["encoder"].astype(str), sort=True).agg(**agg)
    table["fall"] = table["ece_before"] - table["ece_after"]
    n = len(table)
    best = str(table["fall"].idxmax())
    row = table.loc[best]
    fall = float(row["fall"])
    relative = fall / float(row["ece_before"]) if float(row["ece_before"]) > 0 else math.nan
    text = (f"Summarised by encoder, {calibrator} gains most for {best}: its mean ECE "
            f"{'falls' if fall > 0 else 'changes'} from {fmt(float(row['ece_before']), 3)} to "
            f"{fmt(float(row['ece_after']), 3)} (by {percent(relative)}")
    if "floor" in table.columns and float(row["floor"]) > 0:
        text += (f"; {fmt(fall, 3)}, {fall / float(row['floor']):.2f} times its mean ECE floor of "
                 f"{fmt(float(row['floor']), 3)}, {noise_size_word(fall, float(row['floor']))} beside it")
    text += ")."
    worst = str(table["ece_before"].idxmax())
    if worst == best:
        text += (f" {best} was also the worst calibrated of the {n} encoders before calibration, so the gain follows "
                 "the miscalibration there was to remove.")
    else:
        rank = int(descending_ranks(table["ece_before"].to_numpy(float), ties="min")[list(table.index).index(best)])
        text += (f" It ranks {rank} of {n} by ECE before calibration (the worst calibrated, {worst}, gains "
                 f"{fmt(float(table.loc[worst, 'fall']), 3)}), so the gain is not simply the miscalibration there was "
                 "to remove.")
    auroc_rank = int(descending_ranks(table["auroc_before"].to_numpy(float), ties="min")[list(table.index).index(best)])
    standing = ("among the strongest discriminators" if auroc_rank <= n / 3 else
                "among the weakest discriminators" if auroc_rank > 2 * n / 3 else "a middling discriminator")
    text += (f" Its AUROC before calibration, {fmt(float(row['auroc_before']), 3)}, ranks {auroc_rank} of {n}: "
             f"{standing}.")
    rises = table.index[table["fall"] < 0].tolist()
    if rises:
        text += (f" {len(rises)} of {n} encoders' mean ECE rises with {calibrator} ({and_list(rises)}).")
    else:
        text += f" No encoder's mean ECE rises with {calibrator}."
    return text


def calibration_exercise_subset(
    paired: "pd.DataFrame",
    top: int = 5,
    calibrator: str = "temperature",
    n_draws: int = 1000,
    interval: float = 0.95,
    random_state: int = 0,
) -> str:
    """Does a calibrator still help measurably among the best discriminators alone? The page's ablation on a subset.

    The ``top`` encoders by mean AUROC before calibration are kept and the
    crossed bootstrap of the page
    (:func:`~crsbench_lib.scoring.calibration_ablation.calibrator_effect`, on
    the debiased ECE) is run on them with the page's settings; the verdict and
    the debiased ECE are set beside the whole table's.

    Parameters
    ----------
    paired : pandas.DataFrame
        :func:`~crsbench_lib.scoring.calibration_ablation.paired_calibration`, with the debiased ECE.
    top : int
        Encoders kept.
    calibrator : str
        The calibrator read.
    n_draws, interval, random_state
        The page's bootstrap settings.

    Returns
    -------
    str
        The verdicts, the debiased ECEs, what the difference means, and the rerun command.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> rows = [dict(encoder=e, dataset=d, seed=s, calibration="temperature", auroc_before=a, auroc_after=a,
    ...              ece_debiased_before=x + rng.normal(0, 0.002), ece_debiased_after=0.002 + rng.normal(0, 0.002),
    ...              ece_before=x + 0.02, ece_after=0.022)
    ...         for e, a, x in (("a", 0.9, 0.004), ("b", 0.85, 0.005), ("c", 0.6, 0.05), ("d", 0.55, 0.06))
    ...         for d in ("d1", "d2") for s in (0, 1)]
    >>> calibration_exercise_subset(pd.DataFrame(rows), top=2).split(". ")[0]
    'Kept: the 2 encoders with the highest AUROC before calibration (a and b)'
    """
    from crsbench_lib.scoring.calibration_ablation import calibrator_effect

    rows = paired[paired["calibration"].astype(str) == calibrator]
    if rows.empty:
        raise ValueError(f"calibration_exercise_subset: no row of calibrator {calibrator!r}")
    auroc = rows.groupby(rows["encoder"].astype(str))["auroc_before"].mean().sort_values(ascending=False, kind="stable")
    if len(auroc) < 2:
        return (f"This table holds {len(auroc)} encoder, so there is no subset of the best discriminators to set "
                "beside the whole; rerun the page on a table with several encoders.")
    if top < 1:
        raise ValueError(f"top must be at least 1, got {top}")
    top = min(top, len(auroc) - 1)
    kept = auroc.index[:top].tolist()
    settings = dict(by=["calibration"], n_draws=n_draws, interval=interval, random_state=random_state)
    whole = calibrator_effect(rows, **settings).iloc[0]
    part = calibrator_effect(rows[rows["encoder"].astype(str).isin(kept)], **settings).iloc[0]
    pct = f"{interval * 100:.0f} %"

    def verdict(row: "pd.Series") -> str:
        low, high = float(row["change_low"]), float(row["change_high"])
        word = "helps" if high < 0 else "makes calibration worse" if low > 0 else "does not help measurably"
        return (f"{word} (the debiased ECE {fmt(float(row['before']), 4)} before, "
                f"{fmt(float(row['after']), 4)} after; {pct} interval of the change "
                f"{format_interval(low, high, 4)})")

    text = (f"Kept: the {top} encoders with the highest AUROC before calibration ({and_list(kept)}). Among them "
            f"{calibrator} {verdict(part)}; over all {len(auroc)} encoders it {verdict(whole)}.")
    before_part, before_whole = float(part["before"]), float(whole["before"])
    less = before_part < before_whole

    def width(row: "pd.Series") -> float:
        return float(row["change_high"]) - float(row["change_low"])

    text += (f" The best discriminators start with {'less' if less else 'more'} miscalibration to remove "
             f"({fmt(before_part, 4)} against {fmt(before_whole, 4)}), and the interval, resting on {top} encoders "
             f"instead of {len(auroc)}, is {'wider' if width(part) > width(whole) else 'no wider'}. ")
    helps_part, helps_whole = float(part["change_high"]) < 0, float(whole["change_high"]) < 0
    change_part, change_whole = float(part["change"]), float(whole["change"])
    ratio = change_part / change_whole if change_whole != 0 else math.nan
    sizes = f"{fmt(change_part, 4)} against {fmt(change_whole, 4)}"
    if helps_part == helps_whole and helps_whole:
        text += (f"The verdict holds among them (a change of {sizes}): the calibrator's gain is not only a "
                 "correction of the weak encoders.")
    elif helps_part == helps_whole:
        text += (f"Neither set shows a measurable gain (a change of {sizes}): the verdict does not depend on the "
                 "weak encoders here.")
    elif helps_whole and math.isfinite(ratio) and ratio >= 0.5:
        text += (f"The verdict changes though the change is about as large ({sizes}): on {top} encoders the "
                 "interval is too wide to exclude zero. Fewer encoders, not a smaller gain, decide it here; "
                 "\"does not help measurably\" is not \"does not help\".")
    elif helps_whole:
        text += (f"The verdict changes and the change is smaller ({sizes}): most of the measurable gain over the "
                 "whole table comes from the encoders left out, so a claim that calibration helps depends on which "
                 "encoders a benchmark includes.")
    else:
        text += (f"The verdict changes ({sizes}): among the best discriminators the calibrator helps measurably, "
                 "which the whole table, weaker encoders included, does not show.")
    names = ", ".join(kept)
    return text + f"\n\nRerun: `crsbench notebook calibration -p encoders '[{names}]'`"


#: The calibrators' names at the start of a sentence.
CALIBRATOR_NAMES: dict[str, str] = {"temperature": "Temperature scaling", "vector": "Vector scaling",
                                    "isotonic": "Isotonic regression"}


def _ece_clause(before: float, after: float, digits: int) -> str:
    """``cuts the mean ECE by 21 % (0.125 to 0.099)``, or the rise, or that it stays."""
    if round(before - after, digits) == 0:
        return f"leaves the mean ECE at {fmt(after, digits)}"
    verb = "cuts" if after < before else "raises"
    share = f" by {percent((after - before) / before)}" if before > 0 else ""
    return f"{verb} the mean ECE{share} ({fmt(before, digits)} to {fmt(after, digits)})"


def _auroc_clause(change: float, low: float, high: float, pct: str) -> str:
    """Whether the calibrator costs AUROC, read from the interval of its mean AUROC change."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return "with no bootstrap interval of its AUROC change"
    interval = f"{pct} interval {format_interval(low, high, 4)}"
    if high < 0:
        return f"at a measurable AUROC cost (change {fmt(change, 4)}, {interval})"
    if low > 0:
        signed = fmt(change, 4) if fmt(change, 4).startswith("-") else "+" + fmt(change, 4)
        return f"and raises the AUROC measurably (change {signed}, {interval})"
    return f"without a measurable AUROC cost (change {fmt(change, 4)}, {interval})"


def _debiased_clause(change: float, low: float, high: float, digits: int) -> str:
    """How the debiased ECE (the axis C's measure) moves, and whether that lies beyond the crossed bootstrap's noise."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return "no bootstrap draw defines the change of its debiased ECE"
    moves = ("stays" if round(change, digits) == 0 else
             f"{'falls' if change < 0 else 'rises'} by {fmt(abs(change), digits)}")
    where = "within" if low <= 0 <= high else "beyond"
    return (f"its debiased ECE (the axis C's measure) {moves}, {where} the bootstrap noise "
            f"(interval {format_interval(low, high, digits)})")


def calibration_takeaway(
    effect: "pd.DataFrame", ece: "pd.DataFrame", calibrator: str = "temperature", level: float = 0.95, digits: int = 3
) -> str:
    """The calibration chapter's key takeaway: does calibrating cost AUROC, and is its ECE gain beyond the noise?

    Parameters
    ----------
    effect : pandas.DataFrame
        :func:`~crsbench_lib.scoring.calibration_ablation.calibrator_effect` by
        calibrator on the debiased ECE: calibration, change, change_low,
        change_high, auroc_change, auroc_change_low, auroc_change_high.
    ece : pandas.DataFrame
        :func:`~crsbench_lib.scoring.calibration_ablation.calibration_summary`
        by calibrator: calibration, ece_before, ece_after.
    calibrator : str
        The calibrator the takeaway leads with (the first row's when absent).
    level : float
        The intervals' coverage.
    digits : int

    Returns
    -------
    str
        The lead calibrator's ECE change, whether it costs AUROC (its
        interval), whether its change of the debiased ECE is beyond the
        bootstrap noise; then which calibrators lower AUROC measurably.

    Examples
    --------
    >>> import pandas as pd
    >>> effect = pd.DataFrame({"calibration": ["temperature", "isotonic"], "change": [-0.022, -0.023],
    ...     "change_low": [-0.083, -0.081], "change_high": [0.010, 0.009],
    ...     "auroc_change": [-0.0002, -0.0145], "auroc_change_low": [-0.0012, -0.0219],
    ...     "auroc_change_high": [0.0008, -0.0067]})
    >>> ece = pd.DataFrame({"calibration": ["temperature", "isotonic"], "ece_before": [0.125, 0.125],
    ...                     "ece_after": [0.099, 0.094]})
    >>> print(calibration_takeaway(effect, ece))  # doctest: +NORMALIZE_WHITESPACE
    Temperature scaling cuts the mean ECE by 21 % (0.125 to 0.099) without a measurable AUROC cost (change -0.0002,
    95 % interval [-0.0012, 0.0008]); its debiased ECE (the axis C's measure) falls by 0.022, within the bootstrap
    noise (interval [-0.083, 0.010]). Of the 2 calibrators, only isotonic lowers AUROC measurably.
    """
    if effect.empty or ece.empty:
        raise ValueError("calibration_takeaway: no calibrator")
    rows = effect.set_index(effect["calibration"].astype(str))
    name = calibrator if calibrator in rows.index else str(rows.index[0])
    row = rows.loc[name]
    table = ece.set_index(ece["calibration"].astype(str))
    pct = f"{level * 100:g} %"
    head = CALIBRATOR_NAMES.get(name, name[:1].upper() + name[1:])
    text = (f"{head} {_ece_clause(float(table.loc[name, 'ece_before']), float(table.loc[name, 'ece_after']), digits)} "
            + _auroc_clause(float(row["auroc_change"]), float(row["auroc_change_low"]), float(row["auroc_change_high"]),
                            pct)
            + "; " + _debiased_clause(float(row["change"]), float(row["change_low"]),
                                      float(row["change_high"]), digits) + ".")
    if len(rows) > 1:
        costly = [str(c) for c, high in zip(rows.index, rows["auroc_change_high"]) if float(high) < 0]
        if not costly:
            text += f" None of the {len(rows)} calibrators lowers AUROC measurably."
        elif len(costly) == len(rows):
            text += f" All {len(rows)} calibrators lower AUROC measurably."
        else:
            verb = "lowers" if len(costly) == 1 else "lower"
            text += f" Of the {len(rows)} calibrators, only {and_list(costly)} {verb} AUROC measurably."
    return text
