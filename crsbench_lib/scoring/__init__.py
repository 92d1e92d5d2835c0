"""The scoring layer: results table in, tables out (no torch, no images).

Axes and profiles (:mod:`.axes`), the versioned reference standard
(:mod:`.standard`), the fixed-reference Clinical Reliability Score
(:mod:`.crs`), and the rank analyses of crs-method section 6.
"""

from crsbench_lib.scoring.axes import AXES, HIGHER_IS_BETTER, encoder_profiles, per_seed_axes, raw_axes
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
from crsbench_lib.scoring.standard import (
    ReferenceStandard,
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
    "ReferenceStandard",
    "cohort_renormalised_scores",
    "crs_components",
    "default_standard_path",
    "encoder_profiles",
    "freeze_standard",
    "load_standard",
    "load_template",
    "normalise",
    "normalise_array",
    "per_seed_axes",
    "raw_axes",
    "results_hash",
    "saturation_counts",
    "save_standard",
    "score_profiles",
    "score_results",
    "template_standard_path",
]
