"""The predictions store: content-addressed beside the cell store, verified the same way."""

from __future__ import annotations

import numpy as np

from crsbench_lib.results.predictions import META_COLUMNS, ConditionPredictions
from crsbench_lib.runner.cache import CellStatus
from crsbench_lib.runner.prediction_store import PredictionStore


def _predictions() -> list[ConditionPredictions]:
    meta = {name: "x" for name in META_COLUMNS}
    meta.update(task="multiclass", seed=0, severity=0, ece_bins=15, label_fraction=1.0, label_fraction_used=1.0,
                probe_c=1.0, condition="clean", calibration="none")
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(3), size=20)
    return [ConditionPredictions.build(meta, np.arange(20), rng.integers(0, 3, 20), p, "multiclass")]


def test_round_trip_and_damage_is_detected(tmp_path):
    store = PredictionStore(tmp_path)
    assert store.inspect("k")[0] is CellStatus.MISSING
    stored = _predictions()
    store.save("k", stored)
    fresh = PredictionStore(tmp_path)
    assert fresh.inspect("k")[0] is CellStatus.INTACT
    loaded = fresh.load("k")
    assert np.array_equal(loaded[0].probabilities, stored[0].probabilities) and loaded[0].meta == stored[0].meta
    data = bytearray(store.path("k").read_bytes())
    data[len(data) // 2] ^= 0x01
    store.path("k").write_bytes(bytes(data))
    status, reason = PredictionStore(tmp_path).inspect("k")
    assert status is CellStatus.DAMAGED and "sha256" in reason
    assert store.size_bytes() == len(data)


def test_the_optional_features_column_round_trips(tmp_path):
    from dataclasses import replace

    store = PredictionStore(tmp_path)
    stored = [replace(p, meta={**p.meta, "features": "adapted"}) for p in _predictions()]
    store.save("k", stored)
    loaded = PredictionStore(tmp_path).load("k")
    assert [p.meta["features"] for p in loaded] == ["adapted"] * len(stored)
