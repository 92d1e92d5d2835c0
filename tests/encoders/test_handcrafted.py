"""Hand-crafted encoders: shapes, determinism, input handling, agreement with references."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from skimage.feature import graycomatrix, graycoprops, hog

from crsbench_lib.encoders.handcrafted import HANDCRAFTED, GLCMEncoder, HOGEncoder, LBPEncoder, _riu2_table
from crsbench_lib.encoders.registry import build_encoder
from crsbench_lib.errors import EncoderError

NAMES = sorted(HANDCRAFTED)


@pytest.mark.parametrize("name", NAMES)
def test_shape_dtype_and_finite(name: str, rgb_batch: np.ndarray) -> None:
    enc = build_encoder(name)
    z = enc.embed(rgb_batch)
    assert z.dtype == np.float32
    assert z.shape == (len(rgb_batch), enc.embedding_dim)
    assert np.isfinite(z).all()
    assert z.std(axis=0).max() > 0  # the descriptor varies across images


@pytest.mark.parametrize("name", NAMES)
def test_grey_and_rgb_inputs_and_batch_independence(name: str, rgb_batch: np.ndarray, grey_batch: np.ndarray) -> None:
    enc = build_encoder(name)
    z_grey = enc.embed(grey_batch)
    assert z_grey.shape == (len(grey_batch), enc.embedding_dim)
    # An image's embedding does not depend on the other images of its batch.
    whole = enc.embed(rgb_batch)
    parts = np.concatenate([enc.embed(rgb_batch[:5]), enc.embed(rgb_batch[5:])])
    if name == "kmeans":  # float32 BLAS products: equal up to rounding across batch sizes
        np.testing.assert_allclose(whole, parts, rtol=1e-4, atol=1e-4)
    else:
        np.testing.assert_array_equal(whole, parts)


@pytest.mark.parametrize("name", NAMES)
def test_side_64_and_resized_inputs(name: str, rgb_batch: np.ndarray) -> None:
    enc = build_encoder(name, image_side=64)
    big = np.repeat(np.repeat(rgb_batch, 2, axis=1), 2, axis=2)
    z = enc.embed(big)
    assert z.shape == (len(big), enc.embedding_dim) and np.isfinite(z).all()
    # 28-px input (MedMNIST) is resized to the working side.
    z28 = build_encoder(name).embed(rgb_batch[:, :28, :28])
    assert z28.shape[0] == len(rgb_batch)


def test_weights_hash_depends_on_side() -> None:
    assert build_encoder("hog").weights_hash != build_encoder("hog", image_side=64).weights_hash
    assert build_encoder("hog").weights_hash == build_encoder("hog").weights_hash


def test_hog_orientation_of_stripes() -> None:
    """Vertical stripes have horizontal gradients: votes land in the 0-degree bins (0 and 8 share them)."""
    x = np.zeros((1, 32, 32), dtype=np.uint8)
    x[:, :, ::4] = 255
    x[:, :, 1::4] = 255
    enc = HOGEncoder()
    raw = enc.features(enc.preprocess(x)).reshape(9, 9, 2, 2)  # (block, orientation, cell, cell)
    energy = raw.sum(axis=(0, 2, 3))
    assert energy[0] + energy[8] > 0.9 * energy.sum()
    assert np.all(raw <= 1.0) and np.all(raw >= 0.0)


def test_hog_close_to_scikit_image(grey_batch: np.ndarray) -> None:
    """Same layout as skimage's HOG; votes differ only by our linear bin interpolation."""
    enc = HOGEncoder()
    x = enc.preprocess(grey_batch)
    ours = enc.features(x)
    for k in range(3):
        ref = hog(
            x[k, 0].astype(np.float64), orientations=9, pixels_per_cell=(8, 8), cells_per_block=(2, 2),
            block_norm="L2-Hys", feature_vector=False,
        )  # fmt: skip
        # skimage orders (block_y, block_x, cell_y, cell_x, orientation); ours (block, orientation, cell_y, cell_x).
        ref = ref.reshape(9, 2, 2, 9).transpose(0, 3, 1, 2).reshape(-1)
        assert np.corrcoef(ours[k], ref)[0, 1] > 0.8


def test_glcm_matches_scikit_image(grey_batch: np.ndarray) -> None:
    enc = GLCMEncoder()
    x = enc.preprocess(grey_batch)
    ours = enc.features(x).reshape(len(x), 8, 6)
    q = np.minimum((x[:, 0] * 8).astype(np.int64), 7).astype(np.uint8)
    angles = [0, np.pi / 4, np.pi / 2, 3 * np.pi / 4]
    for k in range(3):
        P = graycomatrix(q[k], distances=[1, 2], angles=angles, levels=8, symmetric=True, normed=True)
        for prop, col in (("contrast", 0), ("dissimilarity", 1), ("homogeneity", 2), ("ASM", 3), ("correlation", 4)):
            ref = graycoprops(P, prop).reshape(-1)  # (distances, angles)
            # skimage rounds the distance-2 diagonal offsets to 1 px; ours are 2 px: compare the rest.
            keep = [0, 1, 2, 3, 4, 6]
            np.testing.assert_allclose(ours[k, keep, col], ref[keep], rtol=1e-4, atol=1e-5)


def test_riu2_table() -> None:
    table = _riu2_table(8)
    assert table[0] == 0 and table[255] == 8 and table[0b00000111] == 3
    assert table[0b01010101] == 9  # non-uniform
    assert set(np.unique(table)) == set(range(10))


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_lbp_histograms_are_distributions(seed: int) -> None:
    rng = np.random.default_rng(seed)
    imgs = rng.integers(0, 256, (3, 16, 16), dtype=np.uint8)
    z = LBPEncoder(image_side=16).embed(imgs).reshape(3, -1, 10)
    np.testing.assert_allclose(z.sum(-1), 1.0, rtol=1e-6)


def test_lbp_invariant_to_monotone_brightness(grey_batch: np.ndarray) -> None:
    enc = LBPEncoder()
    darker = (grey_batch // 2).astype(np.uint8) * 2  # keeps order up to ties
    assert np.abs(enc.embed(grey_batch) - enc.embed(darker)).max() < 0.2


def test_bad_input_raises(rgb_batch: np.ndarray) -> None:
    enc = build_encoder("pixels")
    with pytest.raises(EncoderError, match="uint8"):
        enc.embed(rgb_batch.astype(np.float32))
    with pytest.raises(EncoderError, match="shape"):
        enc.embed(rgb_batch[..., :2])
    with pytest.raises(EncoderError, match="image_side"):
        build_encoder("hog", image_side=30)
