"""The scoring layer: results table in, tables out (no torch, no images).

Axes and profiles (:mod:`.axes`), the versioned reference standard
(:mod:`.standard`), the fixed-reference Clinical Reliability Score
(:mod:`.crs`), and the rank analyses of crs-method section 6: agreement
(:mod:`.agreement`), paired-seed bootstrap (:mod:`.bootstrap`), weight and panel
sensitivity (:mod:`.sensitivity`), the insertion test (:mod:`.insertion`), the
published figures (:mod:`.published`) and the audit of reported rank
statistics (:mod:`.consistency`).
"""

from crsbench_lib.scoring.agreement import (
    RankAgreement,
    kendall_tau_b,
    kendall_tau_to_reference,
    rank_agreement,
    rank_table,
    score_agreement,
    spearman_rho,
)
from crsbench_lib.scoring.axes import AXES, HIGHER_IS_BETTER, encoder_profiles, per_seed_axes, raw_axes
from crsbench_lib.scoring.bootstrap import (
    BootstrapResult,
    TwoLevelBootstrapResult,
    paired_seed_bootstrap,
    two_level_bootstrap,
)
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
from crsbench_lib.scoring.insertion import InsertionResult, insertion_test
from crsbench_lib.scoring.published import PUBLISHED, PublishedFigures, published_table
from crsbench_lib.scoring.sensitivity import (
    PanelPerturbation,
    WeightPerturbation,
    dirichlet_weights,
    panel_perturbation,
    weight_perturbation,
)
from crsbench_lib.scoring.standard import (
    ReferenceStandard,
    as_standard,
    default_standard_path,
    freeze_standard,
    load_standard,
    load_template,
    results_hash,
    save_standard,
    template_standard_path,
)

__all__ = [
    "AXES",
    "COMPONENTS",
    "HIGHER_IS_BETTER",
    "PUBLISHED",
    "BootstrapResult",
    "TwoLevelBootstrapResult",
    "ConsistencyResult",
    "InsertionResult",
    "PanelPerturbation",
    "PublishedFigures",
    "RankAgreement",
    "ReferenceStandard",
    "WeightPerturbation",
    "as_standard",
    "check_published",
    "check_rank_statistics",
    "cohort_renormalised_scores",
    "crs_components",
    "default_standard_path",
    "dirichlet_weights",
    "encoder_profiles",
    "freeze_standard",
    "insertion_test",
    "kendall_tau_b",
    "kendall_tau_to_reference",
    "load_standard",
    "load_template",
    "normalise",
    "normalise_array",
    "paired_seed_bootstrap",
    "two_level_bootstrap",
    "panel_perturbation",
    "per_seed_axes",
    "published_table",
    "rank_agreement",
    "rank_table",
    "raw_axes",
    "results_hash",
    "saturation_counts",
    "save_standard",
    "score_agreement",
    "score_profiles",
    "score_results",
    "spearman_rho",
    "template_standard_path",
    "weight_perturbation",
]
