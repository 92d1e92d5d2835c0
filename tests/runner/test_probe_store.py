"""The disk memo of fitted probes: a memoised fit is the fit, a damaged memo is a refit, never a wrong probe."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crsbench_lib.evaluation.probe import fit_probe, memoised_probes, probe_key
from crsbench_lib.runner.probe_store import ProbeStore


def _data(seed=0, n=80, dim=4, task="binary"):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, dim))
    if task == "multilabel":
        y = (rng.random((n, 3)) < 0.4).astype(np.int64)
        y[:4] = 1
        y[4:8] = 0
    elif task == "multiclass":
        y = np.arange(n) % 3
    else:
        y = np.arange(n) % 2
    return x[: n // 2], y[: n // 2], x[n // 2 :], y[n // 2 :]


def _same(a, b):
    return (a.C == b.C and a.val_nll == b.val_nll and np.array_equal(a.model.coef, b.model.coef)
            and np.array_equal(a.model.intercept, b.model.intercept)
            and np.array_equal(a.standardiser.mean, b.standardiser.mean))


@pytest.mark.parametrize("task,n_classes", [("binary", 2), ("multiclass", 3), ("multilabel", 3)])
def test_a_probe_read_back_is_the_fit_bit_for_bit(tmp_path, task, n_classes):
    xt, yt, xv, yv = _data(task=task)
    plain = fit_probe(xt, yt, xv, yv, task, n_classes, c_grid=(0.01, 1.0))
    store = ProbeStore(tmp_path)
    with memoised_probes(store):
        first = fit_probe(xt, yt, xv, yv, task, n_classes, c_grid=(0.01, 1.0))
    with memoised_probes(ProbeStore(tmp_path)):
        again = fit_probe(xt, yt, xv, yv, task, n_classes, c_grid=(0.01, 1.0))
    assert store.n_written == 1
    assert _same(plain, first) and _same(plain, again)
    assert np.array_equal(plain.predict_proba(xv), again.predict_proba(xv))


def test_a_damaged_or_foreign_memo_is_refitted_not_used(tmp_path):
    xt, yt, xv, yv = _data()
    store = ProbeStore(tmp_path)
    with memoised_probes(store):
        good = fit_probe(xt, yt, xv, yv, "binary", 2)
    (path,) = list(tmp_path.rglob("*.pkl"))
    data = bytearray(path.read_bytes())
    data[-5] ^= 0xFF  # one flipped bit in the payload
    path.write_bytes(bytes(data))
    fresh = ProbeStore(tmp_path)
    with memoised_probes(fresh):
        again = fit_probe(xt, yt, xv, yv, "binary", 2)
    assert fresh.n_read == 0 and fresh.n_written == 1 and _same(good, again)
    path.write_bytes(b"not a checksum\nnot a pickle")
    assert ProbeStore(tmp_path).get(path.stem) is None


def test_an_unwritable_memo_costs_a_refit_not_a_failure(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("a file where the memo's folder would go")
    store = ProbeStore(blocker)
    xt, yt, xv, yv = _data()
    with memoised_probes(store):
        probe = fit_probe(xt, yt, xv, yv, "binary", 2)
    assert store.n_written == 0 and _same(probe, fit_probe(xt, yt, xv, yv, "binary", 2))


def test_no_memo_outside_the_block(tmp_path):
    store = ProbeStore(tmp_path)
    xt, yt, xv, yv = _data()
    with memoised_probes(store):
        pass
    fit_probe(xt, yt, xv, yv, "binary", 2)
    assert store.n_written == 0 and not list(tmp_path.rglob("*.pkl"))


@settings(max_examples=25, deadline=None)
@given(which=st.sampled_from(["x_train", "y_train", "x_val", "y_val", "grid", "seed", "rule", "dtype"]))
def test_every_input_of_a_fit_is_in_its_key(which):
    xt, yt, xv, yv = _data()
    args = dict(x_train=xt, y_train=yt, x_val=xv, y_val=yv, task="binary", n_classes=2, grid=(0.1, 1.0),
                max_iter=100, tol=1e-4, seed=0, c_rule="auroc")
    changed = dict(args)
    if which in ("x_train", "x_val"):
        changed[which] = args[which].copy()
        changed[which][0, 0] += 1e-12
    elif which in ("y_train", "y_val"):
        changed[which] = 1 - args[which]
    elif which == "grid":
        changed["grid"] = (0.1, 10.0)
    elif which == "seed":
        changed["seed"] = 1
    elif which == "rule":
        changed["c_rule"] = "log_loss"
    else:
        changed["x_train"] = args["x_train"].astype(np.float32)
    assert probe_key(**args) == probe_key(**dict(args))
    assert probe_key(**changed) != probe_key(**args)
