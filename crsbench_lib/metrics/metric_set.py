"""Every results-table metric of one prediction at once (method section 2, step 3)."""

from __future__ import annotations

from dataclasses import dataclass

from crsbench_lib.metrics.auroc import _auroc_checked
from crsbench_lib.metrics.calibration import (
    DEFAULT_ECE_BINS,
    ECE_VARIANTS,
    _check_bins,
    _ece_checked,
    _ece_floor_checked,
)
from crsbench_lib.metrics.scores import _accuracy_checked, _brier_checked, _nll_checked
from crsbench_lib.metrics.validation import validate_predictions


@dataclass(frozen=True)
class MetricSet:
    """The metrics of one evaluation, as stored in a results row."""

    auroc: float
    ece: float
    ece_floor: float
    ece_debiased: float
    brier: float
    nll: float
    accuracy: float
    n_test: int
    n_skipped: int
    ece_bins: int
    ece_variant: str

    def as_dict(self) -> dict[str, object]:
        """The fields as a plain dict keyed by results-table column names."""
        return {
            "auroc": self.auroc,
            "ece": self.ece,
            "ece_floor": self.ece_floor,
            "ece_excess": self.ece - self.ece_floor,
            "ece_debiased": self.ece_debiased,
            "brier": self.brier,
            "nll": self.nll,
            "accuracy": self.accuracy,
            "n_test": self.n_test,
            "n_skipped": self.n_skipped,
            "ece_bins": self.ece_bins,
            "ece_variant": self.ece_variant,
        }


def evaluate_predictions(
    labels: object, probabilities: object, task: str, n_bins: int = DEFAULT_ECE_BINS
) -> MetricSet:
    """Every results-table metric of one prediction, validating the input once.

    Returns
    -------
    MetricSet
        AUROC (:func:`~crsbench_lib.metrics.auroc.macro_auroc`), ECE (:func:`~crsbench_lib.metrics.calibration.expected_calibration_error`)
        its floor (:func:`~crsbench_lib.metrics.calibration.ece_floor`), the debiased ECE
        (:func:`~crsbench_lib.metrics.calibration.debiased_ece`), Brier, NLL, accuracy, ``n_test``, ``n_skipped``, ``ece_bins`` and
        ``ece_variant``.

    Raises
    ------
    EvaluationError
        Invalid input, or AUROC undefined (single-outcome test split).
    """
    n_bins = _check_bins(n_bins)
    y, p = validate_predictions(labels, probabilities, task)
    auroc = _auroc_checked(y, p, task)
    return MetricSet(
        auroc=auroc.value,
        ece=_ece_checked(y, p, task, n_bins),
        ece_floor=_ece_floor_checked(p, task, n_bins),
        ece_debiased=_ece_checked(y, p, task, n_bins, debias=True),
        brier=_brier_checked(y, p, task),
        nll=_nll_checked(y, p, task),
        accuracy=_accuracy_checked(y, p, task),
        n_test=int(y.shape[0]),
        n_skipped=auroc.n_skipped,
        ece_bins=n_bins,
        ece_variant=ECE_VARIANTS[task],
    )
