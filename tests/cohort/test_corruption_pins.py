"""Pins of the existing corruption catalogues: their outputs must not move.

The default run's cached corrupted embeddings are keyed by (CORRUPTION_VERSION,
domain, family, severity, seed), so a catalogue added beside the three original
ones must leave every one of their outputs bit-identical. These digests were
taken before the ultrasound, pathology, microscopy, ct and oct catalogues were
added; a change to any of them needs a CORRUPTION_VERSION bump and new pins.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from crsbench_lib.cohort.corruptions import _DEFAULT_DOMAIN, CORRUPTION_VERSION, IMAGE_BLOCKS, corrupt

#: sha256 (first 16 hex digits) of severities 1 and 5 at seed 3 on the grey then the RGB batch.
PINNED: dict[tuple[str, str], str] = {
    ("dermatology", "gaussian_noise"): "59f6bad777f959f5",
    ("dermatology", "gaussian_blur"): "eb3f2299a311431a",
    ("dermatology", "motion_blur"): "546d1cd42fac7256",
    ("dermatology", "jpeg"): "77f840967037a0a1",
    ("dermatology", "pixelate"): "5a36d950d2db38d1",
    ("dermatology", "brightness_up"): "50b8fe060947cd71",
    ("dermatology", "brightness_down"): "4e7a9009e6d73667",
    ("dermatology", "contrast"): "86a3fa238cd0a792",
    ("dermatology", "gamma"): "540fe385d5204d41",
    ("dermatology", "black_corner"): "bed6155fef5c9b7d",
    ("dermatology", "ruler_marks"): "d367290529938fb6",
    ("ophthalmology", "gaussian_noise"): "59f6bad777f959f5",
    ("ophthalmology", "gaussian_blur"): "eb3f2299a311431a",
    ("ophthalmology", "motion_blur"): "546d1cd42fac7256",
    ("ophthalmology", "jpeg"): "77f840967037a0a1",
    ("ophthalmology", "pixelate"): "5a36d950d2db38d1",
    ("ophthalmology", "brightness_up"): "50b8fe060947cd71",
    ("ophthalmology", "brightness_down"): "4e7a9009e6d73667",
    ("ophthalmology", "contrast"): "86a3fa238cd0a792",
    ("ophthalmology", "gamma"): "540fe385d5204d41",
    ("ophthalmology", "uneven_illumination"): "fea7fd85d03e61a6",
    ("ophthalmology", "haze"): "1a6c4c37aa9f7c93",
    ("radiology", "gaussian_noise"): "a37416a15c84ef51",
    ("radiology", "gaussian_blur"): "eb3f2299a311431a",
    ("radiology", "motion_blur"): "546d1cd42fac7256",
    ("radiology", "jpeg"): "77f840967037a0a1",
    ("radiology", "pixelate"): "5a36d950d2db38d1",
    ("radiology", "brightness_up"): "9551e37f8ed805e3",
    ("radiology", "brightness_down"): "1a700e737e018952",
    ("radiology", "contrast"): "86a3fa238cd0a792",
    ("radiology", "gamma"): "540fe385d5204d41",
    ("radiology", "local_contrast"): "73f49f623f3a77f8",
    ("radiology", "grid_lines"): "f650b8944e5fb610",
    ("radiology", "burned_markers"): "75d4b35e43e42bba",
}
#: The same on a call without ``domain`` (severity 3, seed 7): the table a family falls back to.
PINNED_DEFAULT: dict[str, str] = {
    "gaussian_noise": "469dc9a3d4063ce5",
    "gaussian_blur": "edc682b44845eceb",
    "motion_blur": "96fc9f2d86af3e70",
    "jpeg": "60f7d0890b1df6fa",
    "pixelate": "d73ed589afc77c09",
    "brightness_up": "6f2dac9e752dd9fb",
    "brightness_down": "f7247941bd92ecba",
    "contrast": "a8a9bbeddebc33c4",
    "gamma": "690220574c0d25ec",
    "local_contrast": "f7941c7836e7ca80",
    "grid_lines": "3248b114046c5548",
    "burned_markers": "cea8e5734c3cd6ec",
    "uneven_illumination": "eb5552760794f494",
    "haze": "6730051ea09083e4",
    "black_corner": "4c0eb6d0b65d11d5",
    "ruler_marks": "a58144e5af0097c0",
}
ORIGINAL_DEFAULT_DOMAIN = {
    **dict.fromkeys(
        ("gaussian_noise", "gaussian_blur", "motion_blur", "jpeg", "pixelate", "brightness_up", "brightness_down",
         "contrast", "gamma", "black_corner", "ruler_marks"),
        "dermatology",
    ),
    "local_contrast": "radiology", "grid_lines": "radiology", "burned_markers": "radiology",
    "uneven_illumination": "ophthalmology", "haze": "ophthalmology",
}


def pin_batch(rgb: bool) -> np.ndarray:
    """Four 32-px images of smooth waves plus noise, from numpy alone (no generator version involved)."""
    rng = np.random.default_rng(20240611)
    side = 32
    g = (np.arange(side) + 0.5) / side
    y, x = np.meshgrid(g, g, indexing="ij")
    n = 4
    f = rng.uniform(1, 4, (n, 2))
    ph = rng.uniform(0, 6.28, (n, 2))
    base = 0.5 + 0.25 * np.sin(2 * np.pi * f[:, 0, None, None] * x + ph[:, 0, None, None]) * np.cos(
        2 * np.pi * f[:, 1, None, None] * y + ph[:, 1, None, None]
    )
    base = base + 0.08 * rng.standard_normal((n, side, side))
    if rgb:
        base = base[..., None] * np.array([1.0, 0.8, 0.9])
    return np.clip(np.rint(base * 255), 0, 255).astype(np.uint8)


@pytest.mark.parametrize(("domain", "family"), list(PINNED))
def test_existing_family_output_is_pinned(domain: str, family: str) -> None:
    h = hashlib.sha256()
    for rgb in (False, True):
        for severity in (1, 5):
            h.update(corrupt(pin_batch(rgb), family, severity, seed=3, domain=domain).tobytes())
    assert h.hexdigest()[:16] == PINNED[(domain, family)]


@pytest.mark.parametrize("family", list(PINNED_DEFAULT))
def test_default_table_of_an_existing_family_is_pinned(family: str) -> None:
    assert _DEFAULT_DOMAIN[family] == ORIGINAL_DEFAULT_DOMAIN[family]
    h = hashlib.sha256()
    for rgb in (False, True):
        h.update(corrupt(pin_batch(rgb), family, 3, seed=7).tobytes())
    assert h.hexdigest()[:16] == PINNED_DEFAULT[family]


def test_version_and_blocks_of_the_original_domains_are_unchanged() -> None:
    assert CORRUPTION_VERSION == "3"
    camera = {"gaussian_noise": 0, "gaussian_blur": 1, "motion_blur": 2, "jpeg": 3, "pixelate": 4,
              "brightness_up": 5, "brightness_down": 6, "contrast": 7, "gamma": 8}
    assert IMAGE_BLOCKS["dermatology"] == {**camera, "black_corner": 9, "ruler_marks": 10}
    assert IMAGE_BLOCKS["ophthalmology"] == {**camera, "uneven_illumination": 9, "haze": 10}
    assert IMAGE_BLOCKS["radiology"] == {**camera, "local_contrast": 9, "grid_lines": 10, "burned_markers": 11}
