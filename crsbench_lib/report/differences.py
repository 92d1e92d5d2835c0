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

import pandas as pd
from scipy import stats

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
    ("labels", "Label noise is a small, known rate of labels flipped at random: no reader disagreement, "
               "no ambiguous cases."),
    ("shift", "One simulated second site with a handful of scanner effects, not a different hospital's population, "
              "workflow and prevalence."),
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
            "tau_to_standard": float(stats.kendalltau(reference["crs"], scored["crs"]).statistic),
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
        text = grammar.compare_with_study(float(row.this_build), float(row.study), row.quantity)
        sentences.append(text)
    return sentences


def simulation_limits() -> pd.DataFrame:
    """:data:`SIMULATION_LIMITS` as a two-column table (``aspect, what the simulation cannot represent``)."""
    return pd.DataFrame(SIMULATION_LIMITS, columns=["aspect", "what the simulation cannot represent"])
