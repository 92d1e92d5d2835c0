"""Restricting dense prediction arrays to a chapter's filters."""

from __future__ import annotations

import numpy as np
import pytest

from crsbench_lib.errors import SchemaError
from crsbench_lib.results.predictions import dataset_arrays, restrict_arrays
from tests.scoring.test_bootstrap_two_level import synthetic_predictions

ARRAY_FIELDS = ("labels", "clean", "fraction_proba", "corrupted_images", "corrupted_proba", "shift_labels", "shift_proba")


@pytest.fixture(scope="module")
def predictions():
    return synthetic_predictions(n=30, n_corrupt=20)


def test_restriction_equals_arrays_of_the_filtered_predictions(predictions):
    keep_encoders, keep_seeds = ["gamma", "alpha"], [2, 0]
    restricted = restrict_arrays(dataset_arrays(predictions), datasets=["cxr"], encoders=keep_encoders, seeds=keep_seeds)
    expected = dataset_arrays([p for p in predictions if p.meta["dataset"] == "cxr"
                               and p.meta["encoder"] in keep_encoders and p.meta["seed"] in keep_seeds])
    assert list(restricted) == ["cxr"]
    got, want = restricted["cxr"], expected["cxr"]
    assert got.encoders == ("alpha", "gamma") and got.seeds == (0, 2)
    for field in ARRAY_FIELDS:
        a, b = getattr(got, field), getattr(want, field)
        assert (a is None) == (b is None), field
        if a is not None:
            np.testing.assert_array_equal(a, b, err_msg=field)


def test_no_filter_keeps_everything(predictions):
    arrays = dataset_arrays(predictions)
    restricted = restrict_arrays(arrays)
    assert sorted(restricted) == sorted(arrays)
    np.testing.assert_array_equal(restricted["derm"].clean, arrays["derm"].clean)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"datasets": ["nope"]}, "dataset 'nope'"),
    ({"encoders": ["nope"]}, "no encoder 'nope'"),
    ({"seeds": [9]}, "no seed 9"),
])
def test_unknown_names_are_rejected(predictions, kwargs, message):
    with pytest.raises(SchemaError, match=message):
        restrict_arrays(dataset_arrays(predictions), **kwargs)


def test_corruption_conditions_keep_their_own_image_sets_of_one_size():
    blocks = dataset_arrays(synthetic_predictions(n=30, n_corrupt=20, per_family=True))["derm"]
    assert blocks.corrupted_images.shape == (4, 20)  # 2 families x 2 severities, each its family's block
    assert (np.diff(blocks.corrupted_images, axis=1) > 0).all()  # sorted like the probabilities
    uneven = [p for p in synthetic_predictions(n=30, n_corrupt=20)
              if not (p.meta["condition"] == "corruption" and p.meta["corruption"] == "blur")]
    uneven += [p.__class__(p.meta, p.image[:10], p.labels[:10], p.probabilities[:10])
               for p in synthetic_predictions(n=30, n_corrupt=20)
               if p.meta["condition"] == "corruption" and p.meta["corruption"] == "blur"]
    with pytest.raises(SchemaError, match=r"corruption \('noise', 1\) has 20 test images, \('blur', 1\) 10"):
        dataset_arrays(uneven)
