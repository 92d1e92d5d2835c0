"""The study's reported figures beside the same quantities computed on this build.

The *published* chapter and the chapter on why the numbers differ both read
:func:`published_comparison`: one row per quantity the study reports, the
study's value (:data:`crsbench_lib.scoring.published.PUBLISHED`) and this
build's, computed by the same definitions (the scoring layer does every
computation; this module only gathers them). :func:`leaders_table` sets the
three leaders under AUROC and under the CRS side by side.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from crsbench_lib.scoring import (
    agreement,
    axes,
    bootstrap,
    calibration_ablation,
    corruption_cells,
    crs,
    insertion,
    sensitivity,
    transfer,
    two_level_bootstrap,
)
from crsbench_lib.results.validated import ValidatedResults, as_validated
from crsbench_lib.scoring.published import PUBLISHED, PublishedFigures
from crsbench_lib.standard import ReferenceStandard

COMPARISON_COLUMNS: tuple[str, ...] = ("quantity", "study", "this_build")
#: The scoring of this build's tau and rho beside the study's. The study ranks its
#: encoders by their published CRS, each scored against the fixed panel that holds
#: all of them (method sections 5 and 6 (item 1)); amendment 4 takes an encoder's own
#: entry out of the panel only inside bootstrap draws. The comparable value is
#: therefore the full-panel one; the leave-self-out value is the point estimate of
#: the bootstrap intervals and is always labelled :data:`LEAVE_SELF_OUT` where shown.
FULL_PANEL = "full panel"
#: The scoring of the bootstrap draws: every encoder against the panel without its own entry.
LEAVE_SELF_OUT = "leave-self-out"
#: Rows of :func:`published_comparison` that count things (shown without decimals).
COUNT_QUANTITIES: frozenset[str] = frozenset(
    {"encoders", "reversed pairs", "pairs", "weight draws: top-3 changes", "corruption cells"}
)
def quantity_subject(quantity: str) -> str:
    """A compared quantity as the subject of "This build's ... is lower": a count becomes "count of <things>".

    Examples
    --------
    >>> quantity_subject("encoders"), quantity_subject("Kendall tau (AUROC vs CRS, full panel)")
    ('count of encoders', 'Kendall tau (AUROC vs CRS, full panel)')
    """
    return f"count of {quantity}" if quantity in COUNT_QUANTITIES else quantity


LEADERS = 3  # the study reports its top three under each ranking
NEWCOMERS = 3  # the insertion test inserts the three strongest encoders (highest clean AUROC)


def published_comparison(
    results: pd.DataFrame | ValidatedResults,
    standard: ReferenceStandard,
    n_draws: int = 1000,
    random_state: int = 0,
    figures: PublishedFigures = PUBLISHED,
    boot: bootstrap.BootstrapResult | two_level_bootstrap.TwoLevelBootstrapResult | None = None,
    references: Sequence[str] = (),
) -> pd.DataFrame:
    """Every headline quantity of the study, as reported and as computed on ``results``.

    Parameters
    ----------
    results : pandas.DataFrame or ValidatedResults
        The results table (frozen arm scored; the LoRA arm, if present, for the
        transfer row).
    standard : ReferenceStandard
        The standard every score is computed against.
    n_draws : int
        Bootstrap draws and weight perturbations.
    random_state : int
        Seed of both.
    figures : PublishedFigures
        The study's figures.
    boot : BootstrapResult or TwoLevelBootstrapResult, optional
        The ranking bootstrap to report, e.g. the two-level bootstrap of the
        run's stored predictions (a chapter computes it once and shows it too);
        ``None`` runs the paired-seed bootstrap of ``results`` with ``n_draws``
        and ``random_state``. A bootstrap passed in should name the same
        ``references``.
    references : sequence of str
        Encoders scored but not candidates (e.g. one pretrained on the
        evaluation labels): never ranked (not in the rank agreement, the
        encoder count, the insertion's registry, the leader, the top 3 or
        the top CRS), as the study's figures rank its candidates only.

    Returns
    -------
    pandas.DataFrame
        ``quantity, study, this_build`` (object columns: ints for the counts of
        :data:`COUNT_QUANTITIES`, floats otherwise; ``this_build`` is NaN where
        the build has no such quantity, e.g. no LoRA arm). Kendall's tau and
        Spearman's rho rank the candidates by their full-panel CRS, as the
        study does (:data:`FULL_PANEL`).

    Examples
    --------
    >>> from crsbench_lib.results.synthetic import synthetic_results
    >>> from crsbench_lib.scoring import freeze_standard
    >>> table = synthetic_results(n_encoders=5, seeds=(0, 1), corruptions=("noise", "blur"), severities=(1,))
    >>> std = freeze_standard(table, "doc-v1", created="2026-01-01T00:00:00Z")
    >>> published_comparison(table, std, n_draws=20).loc[0, "this_build"]
    5
    """
    table = as_validated(results)  # once: the scores, profiles and bootstrap below share its raw axes
    scores = crs.score_results(table, standard)
    profiles = axes.encoder_profiles(axes.standard_axes(table, standard))
    references = [str(name) for name in references if str(name) in set(map(str, profiles.index))]
    # Every rank of the comparison ranks the candidates only, as the study's did (all its models were candidates).
    candidates = scores[~scores["encoder"].astype(str).isin(references)]
    agree = agreement.score_agreement(candidates)
    if boot is None:
        boot = bootstrap.paired_seed_bootstrap(table, standard, n_draws=n_draws, random_state=random_state,
                                               references=references)
    weights = sensitivity.weight_perturbation(profiles, standard, n_draws=n_draws, random_state=random_state,
                                              references=references)
    registry = profiles.drop(index=references)
    newcomers = list(registry["D"].sort_values(ascending=False, kind="mergesort").index[:NEWCOMERS])
    inserted = insertion.insertion_test(registry.drop(index=newcomers), registry.loc[newcomers], standard)
    cal_low, cal_high = calibration_ablation.reduction_range(calibration_ablation.calibration_ablation(table))
    cell_r = corruption_cells.cell_correlation(corruption_cells.corruption_cells(table.frame))
    lora_tau = math.nan
    frame = table.frame
    lora_encoders = sorted(frame.loc[frame["arm"] == "lora", "encoder"].unique())
    if lora_encoders:
        lora_tau = transfer.transfer_summary(
            crs.score_results(frame[frame["encoder"].isin(lora_encoders)], standard),
            crs.score_results(table, standard, arm="lora"),
            references=references,
        ).kendall_tau
    rows = [
        ("encoders", figures.n_encoders, agree.n),
        (f"Kendall tau (AUROC vs CRS, {FULL_PANEL})", figures.kendall_tau, agree.tau_b),
        (f"Spearman rho (AUROC vs CRS, {FULL_PANEL})", figures.spearman_rho, agree.rho),
        ("reversed pairs", figures.reversed_pairs, agree.reversed_pairs),
        ("pairs", figures.n_pairs, agree.n_pairs),
        ("mean |rank displacement|", figures.mean_abs_displacement, agree.mean_abs_displacement),
        ("top CRS", max(figures.aggregate_crs_top3.values()), candidates["crs"].max()),
        ("P(rank 1) of the leader", max(figures.bootstrap_p_rank1.values()),
         boot.summary.loc[~boot.summary["encoder"].astype(str).isin(references), "p_rank1"].max()),
        ("weight draws: mean tau", float(np.mean(figures.weight_mean_kendall_range)), weights.mean_tau),
        ("weight draws: top-3 changes", figures.weight_top3_changes, int(weights.top_k_changed.sum())),
        ("insertion: fixed displacement", figures.insertion_fixed_displacement, inserted.max_abs_fixed_displacement),
        ("calibration: min ECE reduction", figures.calibration_ece_reduction_range[0], cal_low),
        ("calibration: max ECE reduction", figures.calibration_ece_reduction_range[1], cal_high),
        ("corruption cells", figures.corruption_cells, cell_r.n),
        ("corruption r (AUROC loss, ECE increase)", figures.corruption_auroc_ece_loss_r, cell_r.r),
        (f"LoRA: frozen vs adapted tau ({FULL_PANEL})", figures.lora_frozen_vs_adapted_kendall_tau, lora_tau),
    ]
    # Object columns keep counts as ints (shown as 15, not 15.000) beside the floats.
    typed = [(quantity, *(_typed(quantity, v) for v in values)) for quantity, *values in rows]
    return pd.DataFrame(typed, columns=list(COMPARISON_COLUMNS), dtype=object)


def _typed(quantity: str, value: object) -> int | float:
    number = float(value)  # type: ignore[arg-type]
    return int(number) if quantity in COUNT_QUANTITIES and number.is_integer() else number


def leaders_table(
    scores: pd.DataFrame, figures: PublishedFigures = PUBLISHED, k: int = LEADERS, references: Sequence[str] = ()
) -> pd.DataFrame:
    """The leaders under aggregate AUROC and under CRS, the study's beside this build's, in long form.

    Parameters
    ----------
    scores : pandas.DataFrame
        :func:`crsbench_lib.scoring.crs.score_results` output (``encoder, D, crs``).
    figures : PublishedFigures
        The study's figures (its top three under each ranking).
    k : int
        How many leaders of this build to list.
    references : sequence of str
        Encoders that are not candidates and so never leaders (the study's
        leaders are all candidates).

    Returns
    -------
    pandas.DataFrame
        ``ranking, position, study, this_build``: ``ranking`` is "AUROC" or
        "CRS", ``study`` and ``this_build`` read "name value". Long form keeps
        the table within the text column.
    """
    missing = [c for c in ("encoder", "D", "crs") if c not in scores.columns]
    if missing:
        raise ValueError(f"leaders_table: scores lack column(s) {', '.join(missing)}")
    rows = []
    scores = scores[~scores["encoder"].astype(str).isin([str(name) for name in references])]
    for ranking, column, study in (("AUROC", "D", figures.aggregate_auroc_top3), ("CRS", "crs", figures.aggregate_crs_top3)):
        ours = scores.sort_values([column, "encoder"], ascending=[False, True]).head(k)
        theirs = [f"{name} {value:.3f}" for name, value in study.items()]
        mine = [f"{r.encoder} {getattr(r, column):.3f}" for r in ours.itertuples()]
        for position in range(max(len(theirs), len(mine))):
            rows.append({
                "ranking": ranking,
                "position": position + 1,
                "study": theirs[position] if position < len(theirs) else "-",
                "this_build": mine[position] if position < len(mine) else "-",
            })
    return pd.DataFrame(rows)
