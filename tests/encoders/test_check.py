"""The encoder check (crsbench_lib.encoders.check): facts of a good encoder, one-line errors for a broken contract."""

from __future__ import annotations

import numpy as np
import pytest

from crsbench_lib.encoders.base import Encoder
from crsbench_lib.encoders.check import check_encoder, check_images
from crsbench_lib.encoders.registry import build_encoder
from crsbench_lib.errors import EncoderError


class Fake(Encoder):
    """An encoder whose output is whatever ``out(images)`` gives."""

    name = "fake"
    family = "plugin"
    embedding_dim = 4

    def __init__(self, out) -> None:
        self.out = out

    @property
    def weights_hash(self) -> str:
        return "fake"

    def preprocess(self, images: np.ndarray) -> np.ndarray:
        return images

    def embed(self, images: np.ndarray) -> np.ndarray:
        return self.out(images)


def test_a_zoo_encoder_passes_with_its_facts() -> None:
    report = check_encoder(build_encoder("hog"), image_side=32, batch=4)
    assert (report.width, report.dtype, report.identical, report.n_nan, report.n_inf) == (324, "float32", True, 0, 0)
    assert report.batches == (4, 3) and report.ms_per_image > 0 and report.peak_memory_mib > 0
    lines = report.lines()
    assert "output width: 324" in lines and "NaN/inf: none" in lines and "bit-identical on a second run: yes" in lines
    assert report.adaptable.startswith("not adapted: no network")


def test_a_neural_encoder_can_be_adapted() -> None:
    assert check_encoder(build_encoder("cnn_random", device="cpu"), batch=2).adaptable == "yes"


def test_a_nondeterministic_encoder_is_reported_not_refused() -> None:
    rng = np.random.default_rng(0)
    report = check_encoder(Fake(lambda im: rng.normal(size=(len(im), 4)).astype(np.float32)), batch=3)
    assert report.identical is False and "bit-identical on a second run: no" in report.lines()


@pytest.mark.parametrize(("out", "message"), [
    (lambda im: np.zeros((len(im), 4, 2), np.float32), r"output has shape \(5, 4, 2\) on 5 images, expected \(5, D\)"),
    (lambda im: np.zeros((len(im), len(im)), np.float32), r"width changes between batches \(5 on 5 images, 4 on 4\)"),
    (lambda im: np.full((len(im), 4), np.nan, np.float32), r"holds 36 NaN and 0 inf of 36 values"),
    (lambda im: np.full((len(im), 4), np.inf, np.float32), r"holds 0 NaN and 36 inf"),
])
def test_a_broken_contract_is_one_line(out, message: str) -> None:
    with pytest.raises(EncoderError, match=message) as exc:
        check_encoder(Fake(out), batch=5)
    assert "\n" not in str(exc.value) and str(exc.value).startswith("fake: ")


def test_images_are_deterministic_rgb_at_the_side() -> None:
    a, b = check_images(4, 24, seed=0), check_images(4, 24, seed=1)
    assert a.shape == (4, 24, 24, 3) and a.dtype == np.uint8 and not np.array_equal(a, b)
    np.testing.assert_array_equal(a, check_images(4, 24, seed=0))
    with pytest.raises(EncoderError, match="batch must be >= 2"):
        check_encoder(build_encoder("pixels"), batch=1)
