"""Speed of the evaluation engine for one (encoder, dataset, seed), on one core.

Workload: 2,000 x 256 train embeddings (synthetic Gaussian clusters), 4 classes,
500 validation and 1,000 test embeddings; 5 label fractions (1.0, 0.25, 0.10,
0.05, 0.01) each with the validation grid of C, 3 post-hoc calibrators and 40
corruption cells (8 corruptions x 5 severities) scored: one ``evaluate_cell`` call.

Baseline ("naive loop"): the same fits done the common way with no reuse: for
every label fraction a fresh ``StandardScaler`` and a fresh
``LogisticRegressionCV`` (same C grid, 5-fold CV on the train subset, NLL
scoring), a fresh ``LogisticRegression`` per calibrator (a logistic fit on the
validation logits, as a Platt/vector-style recalibration), and every corruption
cell scored with scikit-learn's metric functions.

Usage: ``python benchmarks/bench_probe.py [--repeats 3]``. Thread counts of the
BLAS libraries are pinned to 1 before numpy is imported.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.linear_model import LogisticRegression, LogisticRegressionCV  # noqa: E402
from sklearn.metrics import accuracy_score, brier_score_loss, log_loss, roc_auc_score  # noqa: E402
from sklearn.model_selection import StratifiedKFold  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

from crsbench_lib.evaluation import (  # noqa: E402
    CellEmbeddings,
    ProbeConfig,
    evaluate_cell,
    label_fraction_subsets,
)
from crsbench_lib.results.schema import SEVERITIES  # noqa: E402

N_TRAIN, N_VAL, N_TEST, DIM, N_CLASSES = 2000, 500, 1000, 256, 4
FRACTIONS = (1.0, 0.25, 0.10, 0.05, 0.01)
CORRUPTIONS = tuple(f"corruption{i}" for i in range(8))
META = {"encoder": "bench", "dataset": "gauss", "domain": "synthetic", "arm": "frozen"}


def make_cell(seed: int = 0, dim: int = DIM) -> CellEmbeddings:
    """Gaussian clusters shaped like real embeddings: class means, a shared low-rank
    correlated component (32 factors) and per-feature scales spanning two decades;
    overlapping enough that the clean macro-AUROC is about 0.9, not separable."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(0.0, 0.09, (N_CLASSES, dim))
    factors = rng.normal(0.0, 1.0 / np.sqrt(32), (32, dim))
    scales = np.exp(rng.uniform(np.log(0.1), np.log(10.0), dim))

    def split(n: int) -> tuple[np.ndarray, np.ndarray]:
        y = rng.integers(0, N_CLASSES, n)
        x = centres[y] + rng.normal(0.0, 1.0, (n, 32)) @ factors + rng.normal(0.0, 1.0, (n, dim))
        return (x * scales).astype(np.float32), y

    train, y_train = split(N_TRAIN)
    val, y_val = split(N_VAL)
    calibration, y_calibration = split(N_VAL)  # the calibrators' own split (method section 9, amendment 2)
    test, y_test = split(N_TEST)
    corrupted = {
        (c, s): (test + rng.normal(0.0, 0.15 * s, test.shape) * scales).astype(np.float32)
        for c in CORRUPTIONS
        for s in SEVERITIES
    }
    return CellEmbeddings(train, y_train, val, y_val, test, y_test, corrupted,
                          calibration=calibration, calibration_labels=y_calibration)


def engine(cell: CellEmbeddings, config: ProbeConfig) -> pd.DataFrame:
    return evaluate_cell(
        cell, "multiclass", N_CLASSES, seed=0, label_fractions=FRACTIONS, ece_bins=15, probe=config, meta=META
    )


def naive(cell: CellEmbeddings, config: ProbeConfig) -> int:
    subsets = label_fraction_subsets(cell.train_labels, FRACTIONS, 0, "multiclass")
    n_scored = 0

    def score(y: np.ndarray, p: np.ndarray) -> None:
        roc_auc_score(y, p, multi_class="ovr", average="macro", labels=np.arange(N_CLASSES))
        log_loss(y, p, labels=np.arange(N_CLASSES))
        accuracy_score(y, p.argmax(axis=1))
        np.mean([brier_score_loss(y == k, p[:, k]) for k in range(N_CLASSES)])

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clean = None
        for f in FRACTIONS:
            idx = subsets[f]
            scaler = StandardScaler().fit(cell.train[idx])
            smallest = int(np.bincount(cell.train_labels[idx]).min())
            model = LogisticRegressionCV(
                Cs=list(config.c_grid),
                cv=StratifiedKFold(max(2, min(5, smallest))),
                scoring="neg_log_loss",
                max_iter=config.max_iter,
                tol=config.tol,
            ).fit(scaler.transform(cell.train[idx]), cell.train_labels[idx])
            score(cell.test_labels, model.predict_proba(scaler.transform(cell.test)))
            n_scored += 1
            if f == 1.0:
                clean = (scaler, model)
        assert clean is not None
        scaler, model = clean
        val_logits = model.decision_function(scaler.transform(cell.val))
        test_logits = model.decision_function(scaler.transform(cell.test))
        for _ in config.calibrators:
            recal = LogisticRegression(max_iter=config.max_iter).fit(val_logits, cell.val_labels)
            score(cell.test_labels, recal.predict_proba(test_logits))
            n_scored += 1
        for array in cell.corrupted.values():
            score(cell.test_labels[: len(array)], model.predict_proba(scaler.transform(array)))
            n_scored += 1
    return n_scored


def best_time(func, *args, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        func(*args)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="timed repeats; the best is reported")
    parser.add_argument("--dim", type=int, default=DIM, help="embedding dimension (default 256)")
    args = parser.parse_args()
    cell = make_cell(dim=args.dim)
    config = ProbeConfig()
    rows = engine(cell, config)  # warm-up (imports, first-call overheads)
    t_engine = best_time(engine, cell, config, repeats=args.repeats)
    t_naive = best_time(naive, cell, config, repeats=max(1, args.repeats - 2))
    clean = rows[(rows["condition"] == "clean") & (rows["calibration"] == "none")].iloc[0]
    print(f"workload: {N_TRAIN} x {args.dim} train, {N_CLASSES} classes, {len(FRACTIONS)} label fractions, "
          f"C grid {config.c_grid}, {len(config.calibrators)} calibrators, {len(cell.corrupted)} corruption cells")
    print(f"clean macro-AUROC {clean['auroc']:.3f}, ECE {clean['ece']:.3f} (difficulty check)")
    print(f"evaluate_cell (one core): {t_engine:.2f} s for {len(rows)} rows "
          f"(target < 5 s: {'met' if t_engine < 5 else 'MISSED'})")
    print(f"naive loop (fresh LogisticRegressionCV per fit, no reuse): {t_naive:.2f} s")
    print(f"ratio naive / engine: {t_naive / t_engine:.1f}x")


if __name__ == "__main__":
    main()
