"""The zoo spreads on a small phantom cohort, and pretraining beats random initialisation (slow).

Four simple axes per encoder, averaged over the three phantom datasets, with a
standardised logistic-regression probe:

- D: clean macro-AUROC (one-vs-rest for multi-class, per label for multi-label);
- C: 1 - expected calibration error (10 equal-width bins; top-label for
  multi-class, mean over labels for multi-label);
- L: macro-AUROC with 10 % of the training labels;
- R: mean macro-AUROC over the domain's corruption families at severity 3,
  divided by the clean macro-AUROC.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.preprocessing import StandardScaler

from crsbench_lib.embeddings.store import EmbeddingStore
from crsbench_lib.encoders.neural import NEURAL_ZOO
from crsbench_lib.encoders.registry import DEFAULT_ZOO, build_encoder

SIZES = {"train": 400, "val": 100, "test": 200, "shift_test": 200}


def _probe(train: np.ndarray, y: np.ndarray, multilabel: bool) -> list[LogisticRegression]:
    targets = [y[:, k] for k in range(y.shape[1])] if multilabel else [y]
    return [LogisticRegression(C=0.5, max_iter=300).fit(train, t) for t in targets]


def _proba(models: list[LogisticRegression], x: np.ndarray, multilabel: bool) -> np.ndarray:
    if multilabel:
        return np.stack([m.predict_proba(x)[:, 1] for m in models], axis=1)
    return models[0].predict_proba(x)


def _auroc(p: np.ndarray, y: np.ndarray, multilabel: bool) -> float:
    if multilabel:
        return float(np.mean([roc_auc_score(y[:, k], p[:, k]) for k in range(y.shape[1])]))
    return float(roc_auc_score(y, p, multi_class="ovr", average="macro"))


def _ece(p: np.ndarray, y: np.ndarray, multilabel: bool, bins: int = 10) -> float:
    def ece(conf: np.ndarray, hit: np.ndarray) -> float:
        idx = np.minimum((conf * bins).astype(int), bins - 1)
        return float(sum(abs(hit[idx == b].mean() - conf[idx == b].mean()) * (idx == b).mean() for b in range(bins) if (idx == b).any()))

    if multilabel:
        return float(np.mean([ece(p[:, k], y[:, k].astype(float)) for k in range(y.shape[1])]))
    return ece(p.max(axis=1), (p.argmax(axis=1) == y).astype(float))


@pytest.mark.slow
def test_zoo_spreads(tmp_path: Path) -> None:
    cohort = pytest.importorskip("crsbench_lib.cohort")
    store = EmbeddingStore(tmp_path)
    datasets = [cohort.build_dataset(n, seed=0, sizes=SIZES) for n in cohort.PHANTOM_DATASETS]
    axes = {name: np.zeros(4) for name in DEFAULT_ZOO}
    clean_auroc: dict[str, dict[str, float]] = {ds.name: {} for ds in datasets}
    for name in DEFAULT_ZOO:
        enc = build_encoder(name, device="cpu")
        for ds in datasets:
            ml = ds.task == "multilabel"
            y_tr, y_te = ds.split("train").labels, ds.split("test").labels
            scaler = StandardScaler().fit(store.embed(enc, ds, "train"))
            tr = scaler.transform(store.embed(enc, ds, "train"))
            te = scaler.transform(store.embed(enc, ds, "test"))
            models = _probe(tr, y_tr, ml)
            p = _proba(models, te, ml)
            d = _auroc(p, y_te, ml)
            clean_auroc[ds.name][name] = d
            rng = np.random.default_rng(0)
            few = rng.permutation(len(tr))[: len(tr) // 10]
            while not ml and len(np.unique(y_tr[few])) < ds.n_classes:  # keep every class present
                few = rng.permutation(len(tr))[: len(tr) // 10]
            low = _auroc(_proba(_probe(tr[few], y_tr[few], ml), te, ml), y_te, ml)
            corrupted = [
                _auroc(_proba(models, scaler.transform(store.embed(enc, ds, "test", corruption=f, severity=3)), ml), y_te, ml)
                for f in cohort.corruption_families(ds.domain)
            ]
            axes[name] += np.array([d, 1 - _ece(p, y_te, ml), low, np.mean(corrupted) / d]) / len(datasets)
    spreads = {ds: max(v.values()) - min(v.values()) for ds, v in clean_auroc.items()}
    print("clean macro-AUROC spread per dataset:", spreads)
    for name, a in axes.items():
        family = NEURAL_ZOO[name].family if name in NEURAL_ZOO else "classical"
        print(f"{name:<24} {family:<16} D {a[0]:.3f}  C {a[1]:.3f}  L {a[2]:.3f}  R {a[3]:.3f}")
    assert max(spreads.values()) >= 0.1
    best = {int(np.argmax([axes[n][k] for n in DEFAULT_ZOO])) for k in range(4)}
    assert len(best) > 1, "one encoder is best on all four axes"
    broad = [n for n, spec in NEURAL_ZOO.items() if spec.family in ("broad_ssl", "broad_multitask")]
    random = [n for n, spec in NEURAL_ZOO.items() if spec.method == "random"]
    assert max(axes[n][0] for n in broad) > max(axes[n][0] for n in random), "no broad pretraining beats random init"
