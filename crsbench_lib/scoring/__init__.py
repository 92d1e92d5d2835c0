"""The scoring layer: results table in, tables out (no torch, no images).

Axes and profiles (:mod:`.axes`), freezing a reference standard
(:mod:`.freeze`; the file format is :mod:`crsbench_lib.standard`), the fixed-reference Clinical Reliability Score
(:mod:`.crs`), and the rank analyses of method section 6: agreement
(:mod:`.agreement`, its statistics in :mod:`.rank_statistics`), paired-seed bootstrap (:mod:`.bootstrap`, from predictions
:mod:`.two_level_bootstrap`), weight and panel
sensitivity (:mod:`.sensitivity`), the insertion test (:mod:`.insertion`), the
published figures (:mod:`.published`) and the audit of reported rank
statistics (:mod:`.consistency`).
"""

from crsbench_lib.scoring.agreement import RankAgreement, rank_agreement, rank_table, score_agreement
from crsbench_lib.scoring.rank_statistics import (
    descending_ranks,
    kendall_tau_b,
    kendall_tau_to_reference,
    reversed_pairs,
    spearman_rho,
)
from crsbench_lib.scoring.axes import encoder_profiles, per_seed_axes, raw_axes
from crsbench_lib.scoring.bootstrap import BootstrapResult, paired_seed_bootstrap
from crsbench_lib.scoring.consistency import ConsistencyResult, check_published, check_rank_statistics
from crsbench_lib.scoring.crs import (
    COMPONENTS,
    cohort_renormalised_scores,
    crs_components,
    normalise,
    normalise_array,
    saturation_counts,
    score_profiles,
    score_results,
)
from crsbench_lib.scoring.freeze import freeze_standard
from crsbench_lib.scoring.insertion import InsertionResult, insertion_test
from crsbench_lib.scoring.published import PUBLISHED, PublishedFigures, published_table
from crsbench_lib.scoring.sensitivity import (
    PanelPerturbation,
    WeightPerturbation,
    dirichlet_weights,
    panel_perturbation,
    weight_perturbation,
)
from crsbench_lib.scoring.two_level_bootstrap import TwoLevelBootstrapResult

__all__ = [
    "COMPONENTS",
    "PUBLISHED",
    "BootstrapResult",
    "TwoLevelBootstrapResult",
    "ConsistencyResult",
    "InsertionResult",
    "PanelPerturbation",
    "PublishedFigures",
    "RankAgreement",
    "WeightPerturbation",
    "check_published",
    "check_rank_statistics",
    "cohort_renormalised_scores",
    "crs_components",
    "dirichlet_weights",
    "encoder_profiles",
    "freeze_standard",
    "insertion_test",
    "descending_ranks",
    "kendall_tau_b",
    "kendall_tau_to_reference",
    "normalise",
    "normalise_array",
    "paired_seed_bootstrap",
    "panel_perturbation",
    "per_seed_axes",
    "published_table",
    "rank_agreement",
    "rank_table",
    "raw_axes",
    "saturation_counts",
    "score_agreement",
    "score_profiles",
    "score_results",
    "reversed_pairs",
    "spearman_rho",
    "weight_perturbation",
]
