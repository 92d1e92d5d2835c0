"""Why this build's numbers differ from the study's: the analyses behind the explanation.

The chapter *Why our numbers differ from the study* is built from three
analyses, each computed here from the results table and the standard:

* :func:`cohort_facts`: how the cohort and the grid differ in size from the
  study's (encoders, datasets, seeds, test images);
* :func:`anchor_sensitivity`: how much of the ranking is set by the fixed
  anchors, by replacing each axis's anchors with the range this cohort actually
  spans (and all four at once) and rescoring;
* :func:`explain_differences`: one sentence per headline quantity, direction
  and size of the difference, from :mod:`crsbench_lib.report.grammar`.

What the simulation cannot represent is a fixed list, :data:`SIMULATION_LIMITS`.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
from crsbench_lib.scoring.rank_statistics import kendall_tau_b

from crsbench_lib.report import grammar
from crsbench_lib.report.context import BUILD_CREATED
from crsbench_lib.scoring import agreement, axes, crs
from crsbench_lib.scoring.published import PUBLISHED, PublishedFigures
from crsbench_lib.scoring.freeze import freeze_standard
from crsbench_lib.standard import AXES, HIGHER_IS_BETTER, ReferenceStandard

ALL_AXES = "all four"
TOP = 3

SIMULATION_LIMITS: tuple[tuple[str, str], ...] = (
    ("images", "Procedural phantoms at a few tens of pixels, not clinical photographs, fundus images or radiographs: "
               "textures, anatomy and acquisition physics are caricatures."),
    ("encoders", "A CPU zoo of small networks and hand-crafted features pretrained on phantoms, not foundation models "
                 "trained on millions of medical images; the gaps between them are of another kind and size."),
    ("labels", "Label noise is a small, known rate of labels flipped at random (at site B another labeller's "
               "rate): no ambiguous cases, no disagreement that depends on the image."),
    ("shift", "One simulated second site per domain, its acquisition, case mix, labeller and one shortcut cue set "
              "by stated rules, not a different hospital's whole population, workflow and history."),
    ("corruptions", "Synthetic corruptions at fixed severities; real artefacts co-occur and depend on the device."),
    ("scale", "A few seeds and at most a few thousand test images per dataset: intervals are wide and ties common."),
)


def _span(values: pd.Series) -> str:
    """``"a to b"``, or one number when every value is the same (``"-"`` when there is none)."""
    if not len(values):
        return "-"
    low, high = int(values.min()), int(values.max())
    return str(low) if low == high else f"{low} to {high}"


def _second_site(results: pd.DataFrame, simulated: bool | None) -> str:
    """What the table holds of a second site: on how many datasets, and whether it is simulated."""
    shifted = results.loc[results["condition"] == "shift", "dataset"].nunique()
    if not shifted:
        return "none"
    kind = "simulated site B" if simulated else "a second site"
    return f"{kind} ({shifted} of {results['dataset'].nunique()} datasets)"


def cohort_facts(results: pd.DataFrame, figures: PublishedFigures = PUBLISHED,
                 simulated: bool | None = True) -> pd.DataFrame:
    """The cohort and grid of this build beside the study's, where the study states them.

    Parameters
    ----------
    results : pandas.DataFrame
        The results table.
    figures : PublishedFigures
        The study's figures.
    simulated : bool or None
        Whether the table comes from the simulated cohort (its second site is
        then "simulated site B"; a user's second site is named as such).

    Returns
    -------
    pandas.DataFrame
        ``fact, study, this_build`` (text).
    """
    clean = results[(results["condition"] == "clean") & (results["calibration"] == "none")]
    test_sizes = clean.groupby("dataset", observed=True)["n_test"].max()
    lora = results[results["arm"] == "lora"]
    return pd.DataFrame([
        {"fact": "encoders", "study": str(figures.n_encoders), "this_build": str(results["encoder"].nunique())},
        {"fact": "domains", "study": ", ".join(figures.domains),
         "this_build": ", ".join(sorted(map(str, results["domain"].unique())))},
        {"fact": "datasets", "study": "-", "this_build": str(results["dataset"].nunique())},
        {"fact": "seeds", "study": "-", "this_build": str(results["seed"].nunique())},
        {"fact": "test images per dataset", "study": "-",
         "this_build": _span(test_sizes)},
        {"fact": "institutional shift", "study": " to ".join(figures.shift),
         "this_build": _second_site(results, simulated)},
        {"fact": "LoRA runs (encoder x dataset x seed)", "study": str(figures.lora_runs),
         "this_build": str(len(lora[["encoder", "dataset", "seed"]].drop_duplicates()))},
    ])


def observed_anchors(profiles: pd.DataFrame) -> dict[str, tuple[float, float]]:
    """Per axis, [worst, best] as this cohort spans it (min/max oriented by the axis's direction).

    Raises
    ------
    ValueError
        If an axis has no spread (worst equals best), which no standard accepts.
    """
    anchors: dict[str, tuple[float, float]] = {}
    for axis in AXES:
        low, high = float(profiles[axis].min()), float(profiles[axis].max())
        if low == high:
            raise ValueError(f"axis {axis}: every encoder has the same value {low!r}; no anchors can span it")
        anchors[axis] = (low, high) if HIGHER_IS_BETTER[axis] else (high, low)
    return anchors


def anchor_sensitivity(results: pd.DataFrame, standard: ReferenceStandard, arm: str = "frozen", top_k: int = TOP) -> pd.DataFrame:
    """How the CRS ranking moves when the anchors are replaced by the range this cohort spans.

    For each axis (and for all four at once) the standard's anchors are
    replaced by :func:`observed_anchors` and every encoder rescored. So that
    the anchors are the only change, both the reference ranking and every
    variant use one panel frozen from this table (the standard's panel members
    present in it, or every encoder when fewer than two are).

    Returns
    -------
    pandas.DataFrame
        ``anchors_from_cohort`` (the axis, or "all four"), ``tau_to_standard``
        (Kendall tau_b between this ranking and the ranking under the standard's
        anchors), ``top_k_overlap`` (shared members of the top ``top_k``),
        ``tau_auroc_crs`` (the AUROC-vs-CRS agreement under these anchors).
    """
    profiles = axes.encoder_profiles(axes.standard_axes(results, standard, arm=arm))
    present = [name for name in standard.panel_names if name in set(profiles.index)]
    panel = present if len(present) >= 2 else list(profiles.index)

    def rescored(anchors: dict[str, tuple[float, float]]) -> pd.DataFrame:
        base = replace(standard, anchors={**standard.anchors, **anchors})
        frozen = freeze_standard(results, version=f"{standard.version}+anchor-sensitivity", panel=panel, base=base,
                                 arm=arm, created=BUILD_CREATED)
        return crs.score_profiles(profiles, frozen).set_index("encoder").loc[profiles.index]

    reference = rescored({})
    spans = observed_anchors(profiles)
    choices: list[tuple[str, dict[str, tuple[float, float]]]] = [(a, {a: spans[a]}) for a in AXES]
    choices.append((ALL_AXES, spans))
    reference_top = set(reference["crs"].sort_values(ascending=False, kind="mergesort").index[:top_k])
    rows = []
    for label, anchors in choices:
        scored = rescored(anchors)
        rows.append({
            "anchors_from_cohort": label,
            "tau_to_standard": kendall_tau_b(reference["crs"].to_numpy(float), scored["crs"].to_numpy(float)),
            "top_k_overlap": len(reference_top & set(scored["crs"].sort_values(ascending=False, kind="mergesort").index[:top_k])),
            "tau_auroc_crs": agreement.score_agreement(scored.reset_index()).tau_b,
        })
    return pd.DataFrame(rows)


def explain_differences(comparison: pd.DataFrame) -> list[str]:
    """One sentence per quantity of :func:`crsbench_lib.report.comparison.published_comparison`.

    Rows where the build has no value say so; the others say whether this
    build's value is higher, lower or close to the study's.
    """
    sentences = []
    for row in comparison.itertuples(index=False):
        if pd.isna(row.this_build):
            sentences.append(f"{row.quantity}: this build has no such quantity (the arm or the cells are absent).")
            continue
        from crsbench_lib.report.comparison import quantity_subject

        text = grammar.compare_with_study(float(row.this_build), float(row.study), quantity_subject(str(row.quantity)))
        sentences.append(text)
    return sentences


def simulation_limits() -> pd.DataFrame:
    """:data:`SIMULATION_LIMITS` as a two-column table (``aspect, what the simulation cannot represent``)."""
    return pd.DataFrame(SIMULATION_LIMITS, columns=["aspect", "what the simulation cannot represent"])


#: Columns of :func:`gap_bearings`.
BEARING_COLUMNS = ("quantity", "study", "this_build", "measured here that bears on the gap", "where")


def gap_bearings(scores: pd.DataFrame, ece_floor: pd.DataFrame, compared: pd.DataFrame,
                 figures: PublishedFigures = PUBLISHED) -> pd.DataFrame:
    """For the headline gaps the book can speak to, what this build measures that bears on them.

    Two of the study's headline quantities have a property of this build measured
    elsewhere in the book that moves them in a known direction (a bearing, not a
    proof of cause: every input differs at once):

    * the AUROC-CRS Kendall τ: when one normalised axis is the lowest of every
      candidate, the CRS's floor term copies it; with discrimination as that axis
      the CRS follows AUROC by construction (the agreement chapter);
    * the relative ECE reduction by calibration: the plug-in ECE carries a
      finite-sample bias no calibrator removes (the debiased ECE removes it; the
      ECE floor, a perfectly calibrated predictor's ECE on as many test images,
      bounds it from above), so the smaller the debiased share of the clean
      ECE, the smaller a relative reduction can be (the calibration chapter).

    Parameters
    ----------
    scores : pandas.DataFrame
        Candidates' scores with ``s_D, s_C, s_L, s_R, crs``
        (:func:`crsbench_lib.scoring.crs.score_results`, references left out).
    ece_floor : pandas.DataFrame
        :func:`crsbench_lib.report.world.calibration_floor` (``ece``, ``ece_floor`` and, when the run
        has it, ``ece_debiased`` per dataset).
    compared : pandas.DataFrame
        :func:`crsbench_lib.report.comparison.published_comparison` (``quantity, study, this_build``).
    figures : PublishedFigures
        The study's figures.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`BEARING_COLUMNS`, one row per quantity whose bearing can be measured.

    Examples
    --------
    >>> scores = pd.DataFrame({"s_D": [0.3, 0.5, 0.6], "s_C": [0.8, 0.9, 0.7], "s_L": [0.7, 0.8, 0.9],
    ...                        "s_R": [0.6, 0.7, 0.8], "crs": [0.4, 0.55, 0.62]})
    >>> floor = pd.DataFrame({"ece": [0.04, 0.06], "ece_floor": [0.02, 0.03]})
    >>> compared = pd.DataFrame({"quantity": ["Kendall tau (AUROC vs CRS, full panel)",
    ...                                       "calibration: min ECE reduction", "calibration: max ECE reduction"],
    ...                          "study": [0.6, 0.54, 0.77], "this_build": [1.0, 0.1, 0.3]})
    >>> rows = gap_bearings(scores, floor, compared)
    >>> rows["measured here that bears on the gap"].tolist()[1]  # a run without a debiased ECE
    'the ECE floor is 50 % of the mean clean ECE (0.025 of 0.050); it bounds the finite-sample bias no calibrator removes from above, so a relative reduction is capped at no less than 50 %'
    """
    from crsbench_lib.scoring.agreement import auroc_variance_share, floor_axis_counts
    from crsbench_lib.report.sentences.insertion import AXIS_NAMES

    values = compared.set_index("quantity")
    rows = []
    tau_rows = [q for q in values.index if str(q).startswith("Kendall tau (AUROC vs CRS")]
    counts = floor_axis_counts(scores) if len(scores) else {}
    if tau_rows and counts:
        axis, count = next(iter(counts.items()))
        share = auroc_variance_share(scores)
        text = f"{AXIS_NAMES.get(axis, axis)} is the lowest normalised axis of {count} of {len(scores)} candidates"
        if axis == "D" and share is not None:
            text += (f", and the normalised AUROC explains {grammar.percent(share)} of the CRS's variance: the floor "
                     "term copies AUROC into the CRS")
        row = values.loc[tau_rows[0]]
        rows.append((tau_rows[0], row["study"], row["this_build"], text, "agreement"))
    have_floor = {"ece", "ece_floor"} <= set(ece_floor.columns) and ece_floor["ece_floor"].notna().any()
    reductions = [q for q in ("calibration: min ECE reduction", "calibration: max ECE reduction") if q in values.index]
    if have_floor and reductions:
        ece, floor = float(ece_floor["ece"].mean()), float(ece_floor["ece_floor"].mean())
        debiased = (float(ece_floor["ece_debiased"].mean()) if "ece_debiased" in ece_floor
                    and ece_floor["ece_debiased"].notna().any() else float("nan"))
        if ece > 0 and np.isfinite(debiased):
            # Amendment 27: the floor bounds the finite-sample bias from above; the debiased ECE removes it.
            share = max(debiased, 0.0) / ece
            text = (f"the debiased ECE is {grammar.percent(share)} of the mean clean plug-in ECE "
                    f"({grammar.fmt(debiased, 3)} of {grammar.fmt(ece, 3)}): the rest is finite-sample bias that no "
                    f"calibrator removes, so a relative reduction of the plug-in ECE is capped near "
                    f"{grammar.percent(share)} (the ECE floor, {grammar.fmt(floor, 3)}, only bounds that bias from above)")
        elif ece > 0:
            share = floor / ece
            text = (f"the ECE floor is {grammar.percent(share)} of the mean clean ECE ({grammar.fmt(floor, 3)} of "
                    f"{grammar.fmt(ece, 3)}); it bounds the finite-sample bias no calibrator removes from above, so a "
                    f"relative reduction is capped at no less than {grammar.percent(1 - share)}")
        if ece > 0:
            low, high = values.loc[reductions[0]], values.loc[reductions[-1]]
            rows.append(("calibration: ECE reduction", f"{grammar.fmt(float(low['study']), 2)} to "
                         f"{grammar.fmt(float(high['study']), 2)}", f"{grammar.fmt(float(low['this_build']), 2)} to "
                         f"{grammar.fmt(float(high['this_build']), 2)}", text, "calibration"))
    return pd.DataFrame(rows, columns=list(BEARING_COLUMNS))
