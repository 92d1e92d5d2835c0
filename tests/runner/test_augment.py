"""Pretraining views: ranges, determinism, and which nuisances each arm adds."""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from crsbench_lib.runner.augment import acquisition, colour_jitter, exposure, gaussian_blur, resized_crop, target_view, view


def _batch(seed: int, n: int = 6) -> torch.Tensor:
    return torch.rand(n, 3, 32, 32, generator=torch.Generator().manual_seed(seed))


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), nuisances=st.booleans())
def test_views_stay_in_range_and_repeat_from_the_seed(seed: int, nuisances: bool) -> None:
    x = _batch(seed)
    a = view(x, torch.Generator().manual_seed(seed), nuisances)
    b = view(x, torch.Generator().manual_seed(seed), nuisances)
    assert a.shape == x.shape and torch.equal(a, b)
    assert float(a.min()) >= 0.0 and float(a.max()) <= 1.0


def test_base_view_is_the_prefix_of_the_augmented_view() -> None:
    """The two arms share crop and colour draws: acquisition nuisances come on top, nothing else changes."""
    x = _batch(0)
    g1, g2 = torch.Generator().manual_seed(5), torch.Generator().manual_seed(5)
    base = view(x, g1, False)
    full = view(x, g2, True)
    g3 = torch.Generator().manual_seed(5)
    v = colour_jitter(resized_crop(x, g3), g3)
    assert torch.equal(base, v) and torch.equal(full, acquisition(v, g3))
    assert not torch.equal(base, full)


def test_blur_preserves_constants_and_smooths_noise() -> None:
    flat = torch.full((2, 3, 16, 16), 0.4)
    assert torch.allclose(gaussian_blur(flat, torch.tensor([0.5, 1.5])), flat, atol=1e-6)
    noise = _batch(1, 2)
    blurred = gaussian_blur(noise, torch.tensor([0.3, 1.5]))
    assert blurred[1].std() < blurred[0].std() < noise[0].std()


def test_target_view_keeps_the_scene_in_place_and_its_colours_in_proportion() -> None:
    """A supervised view changes exposure only: nothing moves, flips or changes hue (targets stay true)."""
    x = torch.full((4, 3, 32, 32), 0.1)
    x[:, 0, 5, 20] = 0.4  # a red dot off-centre, at the same place in every image
    g = torch.Generator().manual_seed(7)
    v = target_view(x, g, False)
    for img in v:
        assert int(img[0].argmax()) == 5 * 32 + 20
        assert torch.allclose(img[:, 0, 0], img[0, 0, 0].expand(3), atol=1e-6), "grey stays grey"
        assert torch.allclose(img[0, 5, 20] / img[0, 0, 0], torch.tensor(4.0), atol=1e-4), "one gain for the whole image"
    g1, g2 = torch.Generator().manual_seed(3), torch.Generator().manual_seed(3)
    full = target_view(x, g1, True)
    assert torch.equal(full, acquisition(exposure(x, g2), g2))


def test_supervised_recipes_see_target_preserving_views_and_ssl_keeps_its_base_views() -> None:
    from crsbench_lib.encoders.recipes import (
        ACQUISITION_AUGMENTATIONS,
        BASE_AUGMENTATIONS,
        NEURAL_ZOO,
        SUPERVISED_AUGMENTATIONS,
        SUPERVISED_METHODS,
    )

    for spec in NEURAL_ZOO.values():
        if spec.method == "random":
            continue
        base = SUPERVISED_AUGMENTATIONS if spec.method in SUPERVISED_METHODS else BASE_AUGMENTATIONS
        extra = ACQUISITION_AUGMENTATIONS if spec.acquisition_augmentation else ()
        assert spec.augmentations == base + extra, spec.name
    assert not {"random resized crop", "horizontal flip", "colour jitter"} & set(SUPERVISED_AUGMENTATIONS)

