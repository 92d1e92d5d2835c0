"""Evaluation engine: metrics, the frozen linear probe, label fractions, post-hoc
calibration, and the entry point that turns one cell's embeddings into result rows
(method section 2). Arrays in, rows out: no images, no torch."""

from crsbench_lib.evaluation.calibration import CALIBRATOR_NAMES, Calibrator, fit_calibrator
from crsbench_lib.evaluation.cell import (
    CellEmbeddings,
    ProbeConfig,
    evaluate_cell,
    evaluate_cell_predictions,
    rows_from_predictions,
)
from crsbench_lib.evaluation.fractions import fractions_used, label_fraction_subsets, validation_subsets
from crsbench_lib.metrics import (
    DEFAULT_ECE_BINS,
    ECE_VARIANTS,
    MetricSet,
    accuracy,
    adaptive_ece,
    brier_score,
    classwise_ece,
    ece_floor,
    evaluate_predictions,
    expected_calibration_error,
    macro_auroc,
    negative_log_likelihood,
    reliability_diagram,
)
from crsbench_lib.evaluation.probe import DEFAULT_C_GRID, FittedProbe, fit_probe

__all__ = [
    "CALIBRATOR_NAMES",
    "DEFAULT_C_GRID",
    "DEFAULT_ECE_BINS",
    "ECE_VARIANTS",
    "Calibrator",
    "CellEmbeddings",
    "FittedProbe",
    "MetricSet",
    "ProbeConfig",
    "accuracy",
    "adaptive_ece",
    "brier_score",
    "classwise_ece",
    "ece_floor",
    "evaluate_cell",
    "evaluate_cell_predictions",
    "evaluate_predictions",
    "expected_calibration_error",
    "fit_calibrator",
    "fit_probe",
    "fractions_used",
    "label_fraction_subsets",
    "macro_auroc",
    "negative_log_likelihood",
    "reliability_diagram",
    "rows_from_predictions",
    "validation_subsets",
]
