"""A synthetic results table, for tests and scoring benchmarks only.

It has the full shape of a real run (every condition, corruption cell and
calibration row) but its metrics are drawn from a seeded random model with a
latent quality per encoder; nothing in the book is computed from it. The ECE
floor columns (``ece_floor``, ``ece_excess``, and ``ece_reference`` on
corruption rows) come from a second random stream, so adding them left the
other metrics as they were.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from crsbench_lib.results.schema import CLEAN_CONDITION, SEVERITIES, validate_results

DEFAULT_FRACTIONS: tuple[float, ...] = (0.25, 0.10, 0.05, 0.01)
DEFAULT_CORRUPTIONS: tuple[str, ...] = ("noise", "blur", "jpeg", "pixelate", "brightness", "contrast")
DEFAULT_DATASETS: tuple[tuple[str, str, str], ...] = (
    ("derm", "dermatology", "multiclass"),
    ("fundus", "ophthalmology", "multiclass"),
    ("cxr", "radiology", "multilabel"),
)


def synthetic_results(
    n_encoders: int = 15,
    seeds: tuple[int, ...] = (0, 1, 2),
    datasets: tuple[tuple[str, str, str], ...] = DEFAULT_DATASETS,
    label_fractions: tuple[float, ...] = DEFAULT_FRACTIONS,
    corruptions: tuple[str, ...] = DEFAULT_CORRUPTIONS,
    severities: tuple[int, ...] = SEVERITIES,
    arms: tuple[str, ...] = ("frozen",),
    shift_dataset: str | None = "cxr",
    random_state: int = 0,
) -> pd.DataFrame:
    """Build a validated synthetic results table.

    Parameters
    ----------
    n_encoders : int
        Number of encoders, named ``enc00``, ``enc01``, ...
    seeds, datasets, label_fractions, corruptions, severities, arms
        The grid. ``datasets`` holds (name, domain, task) triples.
    shift_dataset : str or None
        Dataset that gets ``shift`` rows (a second site).
    random_state : int
        Seed of the metric model.

    Returns
    -------
    pandas.DataFrame
        A table that passes :func:`~crsbench_lib.results.schema.validate_results`.
    """
    rng = np.random.default_rng(random_state)
    floor_rng = np.random.default_rng([random_state, 1])
    quality = rng.uniform(0.65, 0.92, n_encoders)
    miscalibration = rng.uniform(0.02, 0.15, n_encoders)
    fragility = rng.uniform(0.0, 0.25, n_encoders)
    hunger = rng.uniform(0.0, 0.3, n_encoders)
    rows: list[dict[str, object]] = []

    def add(enc: int, ds: tuple[str, str, str], seed: int, arm: str, **kwargs: object) -> None:
        auroc = float(np.clip(kwargs.pop("auroc"), 0.5, 0.999))
        ece = float(np.clip(kwargs.pop("ece"), 0.001, 0.5))
        ece_clean = float(kwargs.pop("ece_clean", ece))
        row = {
            "encoder": f"enc{enc:02d}",
            "dataset": ds[0],
            "domain": ds[1],
            "task": ds[2],
            "seed": seed,
            "arm": arm,
            **CLEAN_CONDITION,
            "auroc": auroc,
            "ece": ece,
            "brier": float(np.clip(0.5 - 0.4 * (auroc - 0.5) + ece / 2, 0, 1)),
            "nll": float(1.5 - (auroc - 0.5) + 2 * ece),
            "accuracy": float(np.clip(auroc - 0.15, 0, 1)),
            "n_test": 1000,
            "config_hash": "synthetic",
        }
        row.update(kwargs)
        # A finite test set gives even a calibrated predictor an ECE of a few hundredths.
        row["ece_floor"] = float(floor_rng.uniform(0.01, 0.03))
        row["ece_excess"] = ece - row["ece_floor"]
        # The debiased ECE removes about sqrt(2) - 1 of a calibrated bin's floor (metrics.calibration.debiased_ece).
        row["ece_debiased"] = ece - (np.sqrt(2.0) - 1.0) * row["ece_floor"]
        if row["condition"] == "corruption":
            row["ece_reference"] = float(np.clip(ece_clean + floor_rng.normal(0, 0.005), 0.001, 0.5))
        rows.append(row)

    for arm in arms:
        boost = 0.03 if arm == "lora" else 0.0
        for enc in range(n_encoders):
            for ds in datasets:
                ds_effect = rng.normal(0, 0.03)
                for seed in seeds:
                    base = quality[enc] + boost + ds_effect + rng.normal(0, 0.01)
                    cal = miscalibration[enc] + rng.normal(0, 0.01)
                    add(enc, ds, seed, arm, auroc=base, ece=cal)
                    for temp in ("temperature", "vector", "isotonic"):
                        add(enc, ds, seed, arm, calibration=temp, auroc=base - abs(rng.normal(0, 0.002)),
                            ece=cal * rng.uniform(0.25, 0.5))
                    for fraction in label_fractions:
                        drop = hunger[enc] * (1 - fraction) ** 0.5 * (base - 0.5) + rng.normal(0, 0.005)
                        add(enc, ds, seed, arm, condition="label_fraction", label_fraction=fraction,
                            label_fraction_used=fraction, auroc=base - drop, ece=cal + drop / 2)
                    for corruption in corruptions:
                        sensitivity = fragility[enc] * rng.uniform(0.3, 1.2)
                        for severity in severities:
                            loss = sensitivity * severity / 5 * (base - 0.5) + rng.normal(0, 0.005)
                            add(enc, ds, seed, arm, condition="corruption", corruption=corruption, severity=severity,
                                auroc=base - loss, ece=cal + loss * rng.uniform(0.2, 0.8), ece_clean=cal)
                    if ds[0] == shift_dataset:
                        add(enc, ds, seed, arm, condition="shift", auroc=base - rng.uniform(0.02, 0.1),
                            ece=cal + rng.uniform(0.0, 0.08))
    return validate_results(pd.DataFrame(rows), source="synthetic results")
