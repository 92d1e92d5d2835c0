"""The published study's headline figures, as data (method section 8).

These are the numbers the book sets beside what this project computes on its
own cohort. They are the study's, not ours: nothing here is an input to any
computation of the package, except the consistency audit of the reported rank
statistics (:mod:`crsbench_lib.scoring.consistency`).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from types import MappingProxyType
from typing import Any

import pandas as pd


def _frozen(mapping: dict[str, Any]) -> MappingProxyType[str, Any]:
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True)
class PublishedFigures:
    """Headline figures of the CRS-Bench study (method section 8).

    Each ``*_decimals`` field is the number of decimals the study reported,
    which the consistency audit needs to know which exact values rounding admits.
    """

    n_encoders: int
    domains: tuple[str, ...]
    shift: tuple[str, str]
    kendall_tau: float
    kendall_tau_decimals: int
    spearman_rho: float
    spearman_rho_decimals: int
    reversed_pairs: int
    n_pairs: int
    mean_abs_displacement: float
    mean_abs_displacement_decimals: int
    sum_sq_rank_differences: int
    sum_abs_rank_differences: int
    aggregate_auroc_top3: MappingProxyType[str, float]
    aggregate_crs_top3: MappingProxyType[str, float]
    bootstrap_p_rank1: MappingProxyType[str, float]
    bootstrap_p_top3: MappingProxyType[str, float]
    bootstrap_leading_pair_interval_overlaps_zero: bool
    weight_perturbations: int
    weight_mean_kendall_range: tuple[float, float]
    weight_top3_changes: int
    insertion_fixed_displacement: float
    calibration_primary_tests: int
    calibration_ece_reduction_range: tuple[float, float]
    corruption_cells: int
    corruption_auroc_ece_loss_r: float
    lora_runs: int
    lora_same_top3: bool
    lora_frozen_vs_adapted_kendall_tau: float


PUBLISHED = PublishedFigures(
    n_encoders=15,
    domains=("dermatology", "ophthalmology", "radiology"),
    shift=("CheXpert", "MIMIC-CXR"),
    kendall_tau=0.600,
    kendall_tau_decimals=3,
    spearman_rho=0.811,
    spearman_rho_decimals=3,
    reversed_pairs=21,
    n_pairs=105,
    mean_abs_displacement=1.87,
    mean_abs_displacement_decimals=2,
    sum_sq_rank_differences=106,
    sum_abs_rank_differences=28,
    aggregate_auroc_top3=_frozen({"MedGemma": 0.909, "MedSigLIP": 0.908, "PanDerm": 0.871}),
    aggregate_crs_top3=_frozen({"PanDerm": 0.703, "MedSigLIP": 0.701, "MedGemma": 0.645}),
    bootstrap_p_rank1=_frozen({"PanDerm": 0.664, "MedSigLIP": 0.336}),
    bootstrap_p_top3=_frozen({"PanDerm": 1.000, "MedSigLIP": 1.000, "MedGemma": 1.000}),
    bootstrap_leading_pair_interval_overlaps_zero=True,
    weight_perturbations=1000,
    weight_mean_kendall_range=(0.985, 0.986),
    weight_top3_changes=0,
    insertion_fixed_displacement=0.0,
    calibration_primary_tests=6,
    calibration_ece_reduction_range=(0.54, 0.77),
    corruption_cells=43,
    corruption_auroc_ece_loss_r=0.63,
    lora_runs=135,
    lora_same_top3=True,
    lora_frozen_vs_adapted_kendall_tau=0.562,
)


def published_table(figures: PublishedFigures = PUBLISHED) -> pd.DataFrame:
    """The published figures as a two-column table (figure, value) for the book."""
    rows = []
    for f in fields(figures):
        value = getattr(figures, f.name)
        if isinstance(value, MappingProxyType):
            value = ", ".join(f"{k} {v:.3f}" for k, v in value.items())
        elif isinstance(value, tuple):
            value = " - ".join(str(v) for v in value) if f.name.endswith("range") else ", ".join(map(str, value))
        rows.append({"figure": f.name, "value": str(value)})
    return pd.DataFrame(rows)
