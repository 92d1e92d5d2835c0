"""The sentences of the cohort, zoo and four-axes chapters: the world the benchmark runs on.

What the world's must-show checks say (:func:`describe_world_checks`), which
classes carry the best broad encoder's margin (:func:`describe_class_margins`),
what the test sizes let the calibration axis measure and what the run cost
(:func:`describe_measurement_budget`), what acquisition augmentation buys
(:func:`describe_augmentation`), and who leads each axis and which axes
saturate (:func:`describe_leaders`, :func:`describe_saturation`). Numbers
become words through :mod:`crsbench_lib.report.grammar`.

The cohort chapter's "Is this real?" lessons (:func:`cohort_lessons`) and its
corruption exercise's computed answer (:func:`corruption_losses`,
:func:`cohort_exercise_corruptions`) are here too; the zoo chapter's live in
:mod:`crsbench_lib.report.sentences.zoo`, the four-axes chapter's in
:mod:`crsbench_lib.report.sentences.four_axes`.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from crsbench_lib.report.grammar import Better, and_list, finite, fmt, value_range
from crsbench_lib.report.sentences.lessons import DESIGN, WORLD, Lesson
from crsbench_lib.report.sentences.references import MAX_NAMED, name_references, reference_verb

if TYPE_CHECKING:
    import pandas as pd


def _is_missing(value: object) -> bool:
    """True for None and float NaN (a check with no value)."""
    return value is None or (isinstance(value, numbers.Real) and math.isnan(float(value)))


def describe_world_checks(checks: "object", digits: int = 3) -> str:
    """The world's must-show checks in sentences: what holds, what does not, by how much.

    Parameters
    ----------
    checks : pandas.DataFrame
        :func:`crsbench_lib.report.world.world_checks` output (columns check,
        dataset, value, rule, holds).
    digits : int

    Returns
    -------
    str
        One sentence for the margins of the best broad encoder over each
        baseline (per dataset), then one per other check that fails, then how
        many checks hold.

    Examples
    --------
    >>> import pandas as pd
    >>> rows = [("margin over pixels", "derm", 0.12, "best broad encoder - pixels >= 0.10", True),
    ...         ("margin over pixels", "cxr", 0.04, "best broad encoder - pixels >= 0.10", False)]
    >>> describe_world_checks(pd.DataFrame(rows, columns=["check", "dataset", "value", "rule", "holds"]))
    'The best broad encoder beats pixels by 0.120 clean AUROC on derm and 0.040 on cxr (rule: best broad encoder - pixels >= 0.10; not met on cxr). 1 of 2 checks hold.'
    """
    sentences = []
    margins = checks[checks["check"].str.startswith("margin over ")]
    for check, rows in margins.groupby("check", sort=False):
        baseline = check.removeprefix("margin over ")
        if rows["value"].isna().any():
            sentences.append(f"The margin over {baseline} cannot be measured: {baseline} or every broad encoder "
                             "is absent from this run.")
            continue
        values = [f"{fmt(v, digits)} clean AUROC on {d}" if k == 0 else f"{fmt(v, digits)} on {d}"
                  for k, (v, d) in enumerate(zip(rows["value"], rows["dataset"]))]
        joined = and_list(values)
        failed = [str(d) for d, ok in zip(rows["dataset"], rows["holds"]) if not ok]
        verdict = "met on every dataset" if not failed else "not met on " + ", ".join(failed)
        sentences.append(f"The best broad encoder beats {baseline} by {joined} (rule: {rows['rule'].iloc[0]}; {verdict}).")
    not_margin = ~checks["check"].str.startswith("margin over ")
    holds = checks["holds"].astype(bool)
    # A rule that applies to no encoder (e.g. no clean AUROC above the site-B
    # threshold) holds with a NaN value: it was not tested, and must not read as passed.
    vacuous = not_margin & holds & checks["value"].map(_is_missing).astype(bool)
    for row in checks[not_margin & ~holds].itertuples(index=False):
        where = "" if row.dataset == "all" else f" on {row.dataset}"
        value = str(row.value) if isinstance(row.value, numbers.Integral) else fmt(row.value, digits)
        sentences.append(f"The check '{row.check}'{where} fails: {value} against the rule {row.rule}.")
    for row in checks[vacuous].itertuples(index=False):
        where = "" if row.dataset == "all" else f" on {row.dataset}"
        sentences.append(f"The check '{row.check}'{where} had nothing to test: no encoder falls under its rule "
                         f"({row.rule}).")
    n_hold, n_vacuous = int(holds.sum()), int(vacuous.sum())
    untested = f", {n_vacuous} of them untested" if n_vacuous else ""
    sentences.append(f"{n_hold} of {len(checks)} checks hold{untested}.")
    return " ".join(sentences)


def _signed(value: float, digits: int) -> str:
    text = fmt(value, digits)
    return text if text.startswith("-") or float(text) == 0 else "+" + text


def describe_class_margins(margins: "pd.DataFrame", min_margin: float, digits: int = 3) -> str:
    """Which classes carry the best broad encoder's margin over the baselines, and which hold it back.

    Parameters
    ----------
    margins : pandas.DataFrame
        :func:`crsbench_lib.report.world.class_margins` output.
    min_margin : float
        The world's rule (:data:`crsbench_lib.report.world.MIN_MARGIN`).
    digits : int

    Returns
    -------
    str
        Per dataset, one sentence on the classes where the margin over the
        better baseline reaches ``min_margin`` and those where it does not;
        where the dataset's rule fails (the mean over classes of the margin
        over either baseline is under ``min_margin``, as in
        :func:`~crsbench_lib.report.world.world_checks`) and an in-task
        reference is present, one sentence on whether the reference, taught
        the labels, clears the rule on the classes that fall short. Empty for
        an empty table.

    Examples
    --------
    >>> import pandas as pd
    >>> rows = [("cxr", "heart", "b", 0.85, 0.71, 0.72, 0.13, "ref", 0.81),
    ...         ("cxr", "nodule", "b", 0.60, 0.57, 0.56, 0.03, "ref", 0.65)]
    >>> describe_class_margins(pd.DataFrame(rows, columns=["dataset", "class", "best_broad", "broad", "pixels", "pca",
    ...                                                    "margin", "reference", "reference_auroc"]), 0.10)
    'On cxr the best broad encoder (b) beats the better of the pixel and PCA probes by at least 0.10 on heart (+0.130) but not on nodule (+0.030). The in-task reference (ref), pretrained on these labels, beats the better probe by +0.080 on nodule: short of 0.10 as well, so what holds the broad encoder back is hard for the backbones of this zoo, at its pretraining budget, even when they are taught it.'
    """
    sentences = []
    for dataset, rows in margins.groupby("dataset", sort=True):
        clear = rows[rows["margin"] >= min_margin]
        short = rows[~(rows["margin"] >= min_margin)]
        def listed(part: "pd.DataFrame", conjunction: str = "and") -> str:
            return and_list([f"{c} ({_signed(m, digits)})" for c, m in zip(part["class"], part["margin"])], conjunction)

        head = (f"On {dataset} the best broad encoder ({rows['best_broad'].iloc[0]}) beats the better of the pixel "
                f"and PCA probes by at least {min_margin:.2f}")
        if short.empty:
            sentences.append(f"{head} on every class: {listed(clear)}.")
            continue
        if clear.empty:
            sentences.append(f"{head} on no class: {listed(short)}.")
        else:
            sentences.append(f"{head} on {listed(clear)} but not on {listed(short, 'or')}.")
        # The dataset's rule is on the macro-AUROC over each baseline, i.e. the mean of the per-class margins.
        macro = [float((rows["broad"] - rows[b]).mean()) for b in ("pixels", "pca") if rows[b].notna().all()]
        if not rows["reference"].iloc[0] or not macro or min(macro) >= min_margin:
            continue
        baseline = short[["pixels", "pca"]].max(axis=1)
        reference_margin = float((short["reference_auroc"] - baseline).mean())
        where = short["class"].iloc[0] if len(short) == 1 else "these classes on average"
        taught = (f"The in-task reference ({rows['reference'].iloc[0]}), pretrained on these labels, beats the better probe by "
                  f"{_signed(reference_margin, digits)} on {where}")
        if reference_margin >= min_margin:
            sentences.append(f"{taught}: the backbones of this zoo learn them when taught them, and the broad "
                             "recipes do not teach them.")
        else:
            sentences.append(f"{taught}: short of {min_margin:.2f} as well, so what holds the broad encoder back is "
                             "hard for the backbones of this zoo, at its pretraining budget, even when they are taught it.")
    return " ".join(sentences)


def describe_measurement_budget(floor: "object", cost: "object", digits: int = 3) -> str:
    """What the test sizes let the calibration axis measure, and what the run cost.

    Parameters
    ----------
    floor : pandas.DataFrame
        :func:`crsbench_lib.report.world.calibration_floor` output.
    cost : pandas.DataFrame
        :func:`crsbench_lib.report.world.run_cost` output (may be empty).
    digits : int

    Returns
    -------
    str

    Examples
    --------
    >>> import pandas as pd
    >>> floor = pd.DataFrame([("derm", 2000, 0.05, 0.02, 0.03)],
    ...                      columns=["dataset", "test_images", "ece", "ece_floor", "ece_excess"])
    >>> cost = pd.DataFrame([("frozen", 9, 30.0)], columns=["arm", "cells", "cpu_minutes"])
    >>> describe_measurement_budget(floor, cost)
    'On derm (2000 test images) the mean clean ECE is 0.050 against a floor of 0.020 that a perfectly calibrated probe would still measure: it exceeds the floor by 0.030, 1.5 times the floor. The cells of this run took 30 CPU-minutes: 30 for the frozen arm (9 cells).'

    The excess is written in absolute terms and as a multiple of the floor,
    never as a share of the ECE: a floor and miscalibration do not add (binned
    ECE is not additive), so no part of an ECE "is" miscalibration.
    """
    sentences = []
    for row in floor.itertuples(index=False):
        head = f"On {row.dataset} ({int(row.test_images)} test images) the mean clean ECE is {fmt(row.ece, digits)}"
        if math.isnan(float(row.ece_floor)):
            sentences.append(head + "; this table records no ECE floor.")
            continue
        ece, ece_floor = finite(row.ece, "ece"), finite(row.ece_floor, "ece_floor")
        excess = ece - ece_floor
        against = f"{head} against a floor of {fmt(ece_floor, digits)} that a perfectly calibrated probe would still measure"
        if round(excess, digits) <= 0:
            sentences.append(f"{against}: it does not exceed the floor ({_signed(excess, digits)}), so this test "
                             "size shows no miscalibration beyond what sampling alone produces.")
        else:
            multiple = f", {excess / ece_floor:.2g} times the floor" if ece_floor > 0 else ""
            sentences.append(f"{against}: it exceeds the floor by {fmt(excess, digits)}{multiple}.")
    if len(cost):
        parts = [f"{m:.0f} for the {arm} arm ({int(n)} cells)" for arm, n, m in cost.itertuples(index=False)]
        sentences.append(f"The cells of this run took {cost['cpu_minutes'].sum():.0f} CPU-minutes: {', '.join(parts)}.")
    return " ".join(sentences)


def _change_clause(
    delta: float, quantity: str, better: Better, digits: int, agreeing: int | None = None, n: int | None = None
) -> str:
    """``"raises the clean AUROC by 0.012, an improvement"`` (or "leaves ... unchanged").

    With ``agreeing`` of ``n`` datasets showing the same direction as the mean,
    the mean's verdict is given either way, and the clause says when the
    direction is not consistent over the datasets (so two pairs moving the same
    way are labelled alike).
    """
    if round(delta, digits) == 0:
        return f"leaves {quantity} essentially unchanged ({fmt(delta, digits)})"
    verb = "raises" if delta > 0 else "lowers"
    verdict = "an improvement" if (delta > 0) == (better == "higher") else "a deterioration"
    head = f"{verb} {quantity} by {fmt(abs(delta), digits)}"
    if agreeing is None or not n:
        return f"{head}, {verdict}"
    if agreeing == n:
        return f"{head} (on all {n} datasets), {verdict}"
    return f"{head} on average, {verdict}, but in this direction on only {agreeing} of {n} datasets, not consistently"


def describe_augmentation(effect: "object", digits: int = 3) -> str:
    """What acquisition augmentation buys, one sentence per aug/noaug pair.

    Parameters
    ----------
    effect : pandas.DataFrame
        Rows of :func:`crsbench_lib.report.summaries.augmentation_effect`
        (``augmented, plain, in_results, clean_gain, loss_change``).
    digits : int
        Decimals of the differences.

    Returns
    -------
    str
        For a pair in the table, the sign, size and verdict of the clean-AUROC
        gain (higher is better) and of the change of the mean corruption AUROC
        loss (lower is better); for a pair missing from the table, that it is
        absent; for no pair at all, that the zoo has none.

    Examples
    --------
    >>> import pandas as pd
    >>> row = {"augmented": "a_aug", "plain": "a_noaug", "in_results": True, "clean_gain": 0.01, "loss_change": -0.02}
    >>> describe_augmentation(pd.DataFrame([row]))
    'Acquisition augmentation (a_aug against a_noaug) raises the clean AUROC by 0.010, an improvement, and lowers the mean corruption AUROC loss by 0.020, an improvement.'
    """
    sentences = []
    for row in effect.itertuples(index=False):
        pair = f"{row.augmented} against {row.plain}"
        if not bool(row.in_results):
            sentences.append(f"The pair {pair} is absent from this results table, so this run cannot say what "
                             "acquisition augmentation buys there.")
            continue
        n = int(getattr(row, "n_datasets", 0) or 0) or None
        gain = finite(row.clean_gain, "clean_gain")
        higher = getattr(row, "clean_higher_in", None)
        clean = _change_clause(gain, "the clean AUROC", "higher", digits,
                               None if n is None else (int(higher) if gain > 0 else n - int(higher)), n)
        if math.isnan(float(row.loss_change)):
            loss = "the table has no corruption rows to measure its robustness"
        else:
            lower = getattr(row, "loss_lower_in", None)
            change = float(row.loss_change)
            loss = _change_clause(change, "the mean corruption AUROC loss", "lower", digits,
                                  None if n is None else (int(lower) if change < 0 else n - int(lower)), n)
        sentences.append(f"Acquisition augmentation ({pair}) {clean}, and {loss}.")
    if not sentences:
        return "The zoo has no pair of encoders that differ only by acquisition augmentation."
    return " ".join(sentences)


def describe_leaders(
    leaders: dict[str, str], what: str = "axis", candidates: int | None = None, excluded: Sequence[str] = (),
    families: Mapping[str, str] | None = None,
) -> str:
    """Who leads each ranking (or axis), and whether one encoder leads them all.

    Parameters
    ----------
    leaders : dict
        Axis (or ranking) -> the encoder that leads it.
    what : str
        "axis" or "ranking".
    candidates : int, optional
        How many candidates the leaders were chosen among; the sentence then
        says so.
    excluded : sequence of str
        Encoders scored but excluded from leadership (the reference encoders),
        named beside the candidates (by count and family when many).
    families : mapping of str to str, optional
        Encoder -> study family key, to name many excluded references by their families.

    Examples
    --------
    >>> describe_leaders({"AUROC": "a", "CRS": "b"}, what="ranking")
    'AUROC puts a first and CRS puts b first: the two rankings disagree on the leader.'
    >>> describe_leaders({"D": "a", "C": "a"})
    'a leads every axis (D, C).'
    >>> describe_leaders({"D": "a", "C": "b"}, candidates=19, excluded=["ref"])
    'Leaders per axis among the 19 candidates (the reference ref is excluded from leadership): D: a; C: b. 2 different encoders lead the 2 axes.'
    """
    if not leaders:
        raise ValueError("describe_leaders needs at least one leader")
    among = ""
    if candidates is not None:
        among = f" among the {candidates} candidates"
        if excluded:
            refs = [str(name) for name in excluded]
            named = name_references(refs, families)
            # A count names its own noun ("11 reference encoders"); a few names need one.
            noun = "" if len(refs) > MAX_NAMED else ("the reference " if len(refs) == 1 else "the references ")
            among += f" ({noun}{named} {reference_verb(refs)} excluded from leadership)"
    names = set(leaders.values())
    if len(names) == 1:
        (name,) = names
        return f"{name} leads every {what} ({', '.join(leaders)}){among}."
    if what == "ranking":
        firsts = " and ".join(f"{key} puts {name} first" for key, name in leaders.items())
        return f"{firsts}{among}: the {len(leaders)} rankings disagree on the leader." if len(leaders) > 2 else \
            f"{firsts}{among}: the two rankings disagree on the leader."
    listing = "; ".join(f"{key}: {name}" for key, name in leaders.items())
    plural = "axes" if what == "axis" else f"{what}s"
    return f"Leaders per {what}{among}: {listing}. {len(names)} different encoders lead the {len(leaders)} {plural}."


def describe_saturation(saturation: "object") -> str:
    """Which axes have normalised values on an anchor.

    Parameters
    ----------
    saturation : pandas.DataFrame
        Index axis, columns ``at_worst, at_best, n``
        (:func:`crsbench_lib.scoring.crs.saturation_counts`).

    Examples
    --------
    >>> import pandas as pd
    >>> describe_saturation(pd.DataFrame({"at_worst": [0, 2], "at_best": [0, 1], "n": [6, 6]}, index=["D", "C"]))
    'Saturated: C (2 of 6 encoders at the worst anchor, 1 at the best).'
    >>> describe_saturation(pd.DataFrame({"at_worst": [0], "at_best": [0], "n": [6]}, index=["D"]))
    'No normalised value sits on an anchor, so no axis is saturated. That is all this count shows: whether an axis separates the encoders is a question of its spread between encoders against its seed-to-seed noise, which this count does not measure.'
    """
    lines = []
    for axis, row in saturation.iterrows():
        if row["at_worst"] or row["at_best"]:
            lines.append(f"{axis} ({int(row['at_worst'])} of {int(row['n'])} encoders at the worst anchor, "
                         f"{int(row['at_best'])} at the best)")
    if not lines:
        # Not saturated is not the same as separating: an axis can sit between its anchors and still spread the
        # encoders less than re-running with a new seed moves them.
        return ("No normalised value sits on an anchor, so no axis is saturated. That is all this count shows: "
                "whether an axis separates the encoders is a question of its spread between encoders against its "
                "seed-to-seed noise, which this count does not measure.")
    return "Saturated: " + "; ".join(lines) + "."


# ---------------------------------------------------------------- "Is this real?" and exercises: the cohort chapter


def cohort_lessons(
    floor: "pd.DataFrame",
    shifted: Sequence[str],
    datasets: Sequence[str],
    study_shift: tuple[str, str] | None = None,
    simulated: bool | None = None,
    digits: int = 3,
) -> list[Lesson]:
    """The cohort chapter's "Is this real?" lessons, decided from the page's numbers.

    Parameters
    ----------
    floor : pandas.DataFrame
        :func:`crsbench_lib.report.world.calibration_floor` output (dataset,
        test_images, ece, ece_floor, ece_excess).
    shifted : sequence of str
        The datasets with a second site.
    datasets : sequence of str
        Every dataset of the run.
    study_shift : (str, str), optional
        The study's shift (source, target).
    simulated : bool or None
        Whether the run is the simulated cohort (False: the user's own data).
    digits : int

    Returns
    -------
    list of Lesson
        One of the design (the finite-sample ECE floor), two of this world
        (how far the probes' ECE exceeds that floor; which datasets carry the
        site shift).

    Examples
    --------
    >>> import pandas as pd
    >>> floor = pd.DataFrame([("a", 2000, 0.034, 0.020, 0.014), ("b", 2000, 0.037, 0.024, 0.013)],
    ...                      columns=["dataset", "test_images", "ece", "ece_floor", "ece_excess"])
    >>> lessons = cohort_lessons(floor, ["a"], ["a", "b"], ("CheXpert", "MIMIC-CXR"))
    >>> [lesson.scope for lesson in lessons]
    ['design', 'world', 'world']
    >>> print(lessons[1].text)  # doctest: +NORMALIZE_WHITESPACE
    Here the probes' mean clean ECE exceeds its floor by 0.54 to 0.70 times the floor on every dataset: on average
    they are miscalibrated by less than the floor itself, so most of each ECE is the floor's sampling bias rather than
    miscalibration. Expect calibration to separate encoders more on a cohort whose probes are miscalibrated by several
    floors, or whose test sets are larger.
    """
    lessons: list[Lesson] = []
    rows = floor.dropna(subset=["ece_floor"]) if "ece_floor" in floor else floor.iloc[:0]
    if len(rows):
        sizes = sorted({int(n) for n in rows["test_images"]})
        size = f"{sizes[0]}" if len(sizes) == 1 else f"{sizes[0]} to {sizes[-1]}"
        lessons.append(Lesson(DESIGN, (
            "Binned ECE on a finite test set is never zero: a perfectly calibrated probe with these confidences would "
            f"still measure {value_range(list(rows['ece_floor']), digits)} on {size} test images. An ECE near that floor "
            "is mostly sampling bias, not miscalibration. The floor is a bias the encoders share, not the noise of "
            "their difference: whether two encoders differ in calibration is judged by the paired bootstrap of that "
            "difference, which can exclude zero for a difference smaller than the floor. The floor shrinks only as "
            "one over the square root of the test size (four times the images, about half the floor).")))
        ratios = [(str(d), (e - f) / f) for d, e, f in zip(rows["dataset"], rows["ece"], rows["ece_floor"]) if f > 0]
        if ratios:
            values = [r for _, r in ratios]
            spread = f"{min(values):.2f}" if f"{min(values):.2f}" == f"{max(values):.2f}" else \
                f"{min(values):.2f} to {max(values):.2f}"
            below = [d for d, r in ratios if r < 1]
            if len(below) == len(ratios):
                text = (f"Here the probes' mean clean ECE exceeds its floor by {spread} times the floor on every "
                        "dataset: on average they are miscalibrated by less than the floor itself, so most of each "
                        "ECE is the floor's sampling bias rather than miscalibration. Expect calibration to "
                        "separate encoders more on a cohort whose probes are miscalibrated by several floors, or whose "
                        "test sets are larger.")
            elif not below:
                text = (f"Here the probes' mean clean ECE exceeds its floor by {spread} times the floor on every "
                        "dataset: the miscalibration is measurable beyond what the test size alone produces, so most "
                        "of each ECE is miscalibration rather than the floor's sampling bias. Expect calibration to "
                        "matter less on a cohort whose probes come out nearly calibrated.")
            else:
                above = [d for d, r in ratios if r >= 1]
                text = (f"Here the probes' mean clean ECE exceeds its floor by {spread} times the floor: by more than "
                        f"one floor on {and_list(above)}, by less on {and_list(below)}. The ECE is mostly "
                        f"miscalibration on the first and mostly the floor's sampling bias on the second.")
            lessons.append(Lesson(WORLD, text))
    n = len(datasets)
    study = f"one shift, {study_shift[0]} to {study_shift[1]}." if study_shift else ""
    if not shifted:
        text = (f"None of the {n} datasets has a second site, so robustness here is corruption loss alone: a cohort "
                "with a second site adds a shift term this run cannot measure.")
    elif len(shifted) == n:
        text = (f"Every one of the {n} datasets has a second site, so the site-shift term of robustness is measured "
                "on every task.")
    else:
        verb = "has" if len(shifted) == 1 else "have"
        rest = "that one task" if len(shifted) == 1 else f"those {len(shifted)} tasks"
        text = (f"Only {and_list(list(shifted))} of the {n} datasets {verb} a second site, so the site-shift term of "
                f"robustness rests on {rest}: expect an encoder's R to move on a cohort that shifts another domain.")
    lessons.append(Lesson(WORLD, text, study=study))
    return lessons


def corruption_losses(results: "pd.DataFrame", severity: int | None = None, arm: str = "frozen") -> "pd.DataFrame":
    """Mean clean-minus-corrupted AUROC per dataset and corruption family, at one severity.

    Parameters
    ----------
    results : pandas.DataFrame
        A results table.
    severity : int, optional
        The severity (default: the table's highest).
    arm : str

    Returns
    -------
    pandas.DataFrame
        Columns dataset, corruption, loss (mean over encoders and seeds of the
        clean AUROC minus the corrupted one, uncalibrated probes at 100 %
        labels), severity; sorted by dataset and descending loss.

    Examples
    --------
    >>> from crsbench_lib.results.synthetic import synthetic_results
    >>> table = synthetic_results(n_encoders=2, corruptions=("noise",), random_state=0)
    >>> list(corruption_losses(table).columns)
    ['dataset', 'corruption', 'loss', 'severity']
    """
    import pandas as pd

    from crsbench_lib.results.select import clean_rows, same_fraction

    rows = results[(results["condition"] == "corruption") & (results["arm"] == arm)
                   & (results["calibration"] == "none") & same_fraction(results["label_fraction"], 1.0)]
    if rows.empty:
        return pd.DataFrame(columns=["dataset", "corruption", "loss", "severity"])
    level = int(rows["severity"].max()) if severity is None else int(severity)
    rows = rows[rows["severity"] == level]
    clean = clean_rows(results, arm=arm, calibration="none").groupby(["encoder", "dataset", "seed"])["auroc"].mean()
    keys = list(zip(rows["encoder"], rows["dataset"], rows["seed"]))
    loss = clean.reindex(keys).to_numpy() - rows["auroc"].to_numpy(dtype=float)
    frame = pd.DataFrame({"dataset": rows["dataset"].to_numpy(), "corruption": rows["corruption"].to_numpy(),
                          "loss": loss})
    out = frame.groupby(["dataset", "corruption"], observed=True)["loss"].mean().reset_index()
    out["severity"] = level
    return out.sort_values(["dataset", "loss"], ascending=[True, False]).reset_index(drop=True)


def cohort_exercise_corruptions(losses: "pd.DataFrame", digits: int = 3) -> str:
    """The corruption-sheet exercise's solution: which corruption family costs the probes most AUROC, per dataset.

    Parameters
    ----------
    losses : pandas.DataFrame
        :func:`corruption_losses` output.
    digits : int

    Returns
    -------
    str

    Examples
    --------
    >>> import pandas as pd
    >>> losses = pd.DataFrame({"dataset": ["a", "a"], "corruption": ["blur", "jpeg"], "loss": [0.12, 0.01],
    ...                        "severity": [5, 5]})
    >>> print(cohort_exercise_corruptions(losses))  # doctest: +NORMALIZE_WHITESPACE
    **In this build**, at severity 5 (mean over encoders and seeds of the clean AUROC minus the corrupted one; the
    corruption chapter averages over every severity, so its order can differ), on a blur costs most (0.120) and jpeg
    least (0.010; the costliest 12 times as much). The robustness
    axis averages the families with equal weight, so an encoder's R depends on which families a benchmark draws: a
    cohort whose scanners fail in other ways would weigh the encoders' robustness differently. How damaging a
    corruption looks on the sheet and how much AUROC it costs are different questions; set your prediction beside
    these numbers.
    """
    if losses.empty:
        return "**In this build** the table has no corruption rows, so no family's cost can be read."
    level = int(losses["severity"].iloc[0])
    parts, ratios, free = [], [], []
    for dataset, rows in losses.groupby("dataset", sort=True):
        rows = rows.sort_values("loss", ascending=False)
        top, low = rows.iloc[0], rows.iloc[-1]
        part = (f"on {dataset} {top['corruption']} costs most ({fmt(float(top['loss']), digits)}) and "
                f"{low['corruption']} least ({fmt(float(low['loss']), digits)}")
        if float(low["loss"]) > 0 and float(top["loss"]) > 0:
            ratio = float(top["loss"]) / float(low["loss"])
            ratios.append(ratio)
            part += f"; the costliest {ratio:.0f} times as much)" if ratio >= 1.5 else "; about as much)"
        else:
            part += ")"
            if float(low["loss"]) <= 0:
                free.append(f"{low['corruption']} on {dataset}")
        parts.append(part)
    text = (f"**In this build**, at severity {level} (mean over encoders and seeds of the clean AUROC minus the "
            f"corrupted one; the corruption chapter averages over every severity, so its order can differ), "
            f"{'; '.join(parts)}.")
    if free:
        text += (f" At severity {level}, {and_list(free)} cost{'s' if len(free) == 1 else ''} no AUROC on average "
                 "(the corrupted images score as well as the clean ones).")
    if ratios and max(ratios) >= 1.5 or free:
        text += (" The robustness axis averages the families with equal weight, so an encoder's R depends on which "
                 "families a benchmark draws: a cohort whose scanners fail in other ways would weigh the encoders' "
                 "robustness differently.")
    else:
        text += (" The families cost about the same here, so which families a benchmark draws matters little to "
                 "R on this cohort.")
    text += (" How damaging a corruption looks on the sheet and how much AUROC it costs are different questions; set "
             "your prediction beside these numbers.")
    return text


# ---------------------------------------------------------------- the cohort chapter's key takeaway


def _second_sites(datasets: Sequence[str], shifted: Sequence[str]) -> str:
    """``"only cxr has a second site"``, ``"none has a second site"`` or ``"each has a second site"``."""
    if len(datasets) == 1:
        return "it has a second site" if shifted else "it has no second site"
    if not shifted:
        return "none has a second site"
    if len(shifted) == len(datasets):
        return "each has a second site"
    verb = "has" if len(shifted) == 1 else "have"
    return f"only {and_list(list(shifted))} {verb} a second site"


def cohort_takeaway(overview: "pd.DataFrame", floor: "pd.DataFrame", zoo: "pd.DataFrame", digits: int = 3) -> str:
    """The cohort chapter's key takeaway: which data and encoders produce the book's numbers, and the ECE floor.

    Parameters
    ----------
    overview : pandas.DataFrame
        :func:`crsbench_lib.report.summaries.dataset_overview` (columns
        ``dataset``, ``test images``, ``site B``).
    floor : pandas.DataFrame
        :func:`crsbench_lib.report.world.calibration_floor` output (column
        ``ece_floor``; NaN where the table records none).
    zoo : pandas.DataFrame
        :func:`crsbench_lib.report.summaries.zoo_table` (one row per encoder of
        the zoo, column ``in this run``).
    digits : int

    Returns
    -------
    str
        How many of the zoo's encoders run on which datasets, of what test
        size, which have a second site; then the ECE a perfectly calibrated
        probe would still measure at that size (the floor), where recorded.

    Examples
    --------
    >>> import pandas as pd
    >>> overview = pd.DataFrame({"dataset": ["cxr", "derm"], "test images": [200, 200], "site B": [True, False]})
    >>> floor = pd.DataFrame({"dataset": ["cxr", "derm"], "ece_floor": [0.062, 0.072]})
    >>> zoo = pd.DataFrame({"name": ["a", "b", "c"], "in this run": [True, True, False]})
    >>> print(cohort_takeaway(overview, floor, zoo))  # doctest: +NORMALIZE_WHITESPACE
    Every number of this book comes from 2 of the zoo's 3 encoders on 2 datasets (cxr and derm), 200 test images
    each; only cxr has a second site. At that size a perfectly calibrated probe still measures an ECE of 0.062 to
    0.072: a plug-in ECE near that is mostly sampling bias.
    """
    datasets = [str(d) for d in overview["dataset"]]
    sizes = sorted({int(n) for n in overview["test images"]})
    size = f"{sizes[0]} test images each" if len(sizes) == 1 else f"{sizes[0]} to {sizes[-1]} test images"
    shifted = [d for d, site in zip(datasets, overview["site B"]) if bool(site)]
    n_run = int(zoo["in this run"].astype(bool).sum())
    noun = "dataset" if len(datasets) == 1 else "datasets"
    text = (f"Every number of this book comes from {n_run} of the zoo's {len(zoo)} encoders on {len(datasets)} {noun} "
            f"({and_list(datasets)}), {size}; {_second_sites(datasets, shifted)}.")
    floors = [float(v) for v in floor["ece_floor"] if not _is_missing(v)] if "ece_floor" in floor else []
    if floors:
        text += (f" At that size a perfectly calibrated probe still measures an ECE of {value_range(floors, digits)}: "
                 "a plug-in ECE near that is mostly sampling bias.")
    else:
        text += " This table records no ECE floor, so how much of each ECE is sampling bias is not stated here."
    return text
