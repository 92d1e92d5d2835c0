"""The metrics layer: metrics on (labels, probabilities) arrays (method section 2, step 3; no torch, no images).

Validation and the shape conventions (:mod:`.validation`), AUROC
(:mod:`.auroc`), calibration error and its bins (:mod:`.calibration`), Brier,
NLL and accuracy (:mod:`.scores`), and every results-table metric at once
(:mod:`.metric_set`). AUROC and ECE exist once each, in their plain form and
in the weighted form under bootstrap draws of image multiplicities; the
evaluation and scoring layers both use them.
"""

from crsbench_lib.metrics.auroc import AurocResult, binary_auroc, class_auroc, macro_auroc
from crsbench_lib.metrics.calibration import (
    DEFAULT_ECE_BINS,
    ECE_VARIANTS,
    adaptive_ece,
    classwise_ece,
    ece_floor,
    expected_calibration_error,
    reliability_diagram,
)
from crsbench_lib.metrics.metric_set import MetricSet, evaluate_predictions
from crsbench_lib.metrics.scores import accuracy, brier_score, negative_log_likelihood
from crsbench_lib.metrics.validation import check_task, validate_predictions

__all__ = [
    "DEFAULT_ECE_BINS",
    "ECE_VARIANTS",
    "AurocResult",
    "MetricSet",
    "accuracy",
    "adaptive_ece",
    "binary_auroc",
    "brier_score",
    "check_task",
    "class_auroc",
    "classwise_ece",
    "ece_floor",
    "evaluate_predictions",
    "expected_calibration_error",
    "macro_auroc",
    "negative_log_likelihood",
    "reliability_diagram",
    "validate_predictions",
]
