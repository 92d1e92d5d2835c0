"""Corruption catalogues of ultrasound, pathology, microscopy, CT and OCT images (after MedMNIST-C).

The catalogues of :mod:`crsbench_lib.cohort.corruptions` cover camera images
(dermatology, fundus) and radiographs. MedMNIST-C (Di Salvo, Doerrich & Ledig,
2024) gives every 2D MedMNIST dataset a catalogue of its own; this module adds
the five imaging modalities those three do not describe, each on a physical
scale (severity 1 barely visible, 5 an image to retake), with the reasons for
the choice of families:

- **ultrasound** (B-mode, BreastMNIST). The display is log-compressed, so gain
  and attenuation act as *additive* shifts of ``dB / displayed dynamic range``
  (60 dB): ``speckle`` (multiplicative Rayleigh speckle, the modality's noise,
  instead of sensor noise), gain up and down (``brightness_up``/``_down`` as a
  level shift in dB), ``dynamic_range`` (a wider compression range washes the
  greys out towards white), ``depth_attenuation`` (a mis-set time-gain
  compensation leaves the echo falling with depth, i.e. with the image row),
  ``acoustic_shadow`` (a dark band below a strongly attenuating structure),
  probe or patient ``motion_blur``, the grey map's ``gamma``, ``jpeg`` and a
  coarser line density (``pixelate``). No defocus blur (MedMNIST-C has none for
  BreastMNIST either): the beam's focus sets the speckle grain.
- **pathology** (H&E bright-field slides, PathMNIST): ``stain_variation`` in the
  haematoxylin-eosin optical-density space (Ruifrok & Johnston's stain vectors;
  the main shift between laboratories), scanner defocus (``gaussian_blur``) and
  ``motion_blur`` (stitching), ``jpeg`` (slide scanners store JPEG tiles),
  ``pixelate`` (a lower scan magnification), lamp intensity in stops
  (``brightness_up``/``_down``, transmitted light is linear in it),
  ``contrast``, colour ``saturation`` (scanner colour profile), and the slide
  artefacts of MedMNIST-C: air ``bubbles`` under the coverslip,
  ``stain_deposit`` (precipitated dye), plus ``tissue_fold`` (a band of doubled
  section thickness, whose optical density adds by Beer-Lambert's law).
- **microscopy** (BloodMNIST: Romanowsky-stained blood smears, bright field,
  RGB; TissueMNIST: DAPI-stained kidney-cortex nuclei, confocal fluorescence,
  grey): camera ``gaussian_noise`` with read and shot (Poisson) parts,
  ``gaussian_blur`` (focus), ``motion_blur`` (stage vibration), exposure in
  stops, ``contrast``, ``uneven_illumination`` (a multiplicative bias field:
  Koehler alignment, vignetting, uneven excitation), ``jpeg``, ``pixelate``,
  ``stain_variation`` (on a smear the azure-eosin balance moves with the
  buffer's pH, the H&E vectors standing in for the blue-purple and pink dyes;
  on a grey fluorescence image the dye's amount scales its emission) and
  ``stain_deposit`` (dark dye granules on a smear, bright fluorescent debris
  on a grey image).
- **ct** (abdominal CT slices in an abdominal window, Organ{A,C,S}MNIST):
  ``low_dose_noise`` (quantum noise whose sd grows as 1/sqrt(dose), with the
  band-pass texture filtered back-projection gives it), ``window_level`` and
  ``window_width`` errors in Hounsfield units, metal or photon-starvation
  ``streaks``, ``gaussian_blur`` (a smoother kernel, thicker slices),
  ``motion_blur`` (breathing), ``jpeg`` (lossy archive) and ``pixelate`` (a
  coarser reconstruction matrix). Pixels at either end of the window hold
  Hounsfield units beyond it (air, bone), which noise, streaks or window errors
  of tens of HU do not bring back into view: those families leave them saturated.
- **oct** (retinal OCT B-scans, OCTMNIST; log display of 45 dB): ``speckle``,
  ``depth_attenuation`` (sensitivity roll-off with depth), ``axial_motion``
  (B-scan misalignment: each A-scan column displaced along depth by the eye's
  axial motion), ``gaussian_blur`` (defocus of the sample arm), a weak signal
  (``brightness_down``, in dB), ``dynamic_range``, ``jpeg`` and ``pixelate``.

Every family is a function of ``(images, parameters, rng)`` on float images in
``[0, 1]``, ``(N, H, W)`` or ``(N, H, W, 3)``, vectorised over the batch. Grey
input to a colour family: ``saturation`` takes it as the RGB image with three
equal channels and returns the result's luminance (BT.601 weights), which is
the grey image unchanged (no chroma); ``stain_variation`` and
``stain_deposit`` read a grey image as fluorescence (the only grey stained
images of the catalogues): the dye's amount scales the intensity, deposits
glow.
Depth is the image row (the transducer and the OCT beam at the top, as the
MedMNIST images are oriented). Random parts are drawn for the largest severity
and used in part at smaller ones (the first ``count`` of five bubbles, ...), so
a stronger severity adds to the weaker one's corruption.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
from scipy import ndimage

from crsbench_lib.cohort import _render as r

Row = Mapping[str, tuple[float, ...]]
Implementation = Callable[[np.ndarray, dict[str, float], np.random.Generator], np.ndarray]


def _db(values: tuple[float, ...], range_db: float, sign: float = 1.0) -> tuple[float, ...]:
    """Grey-level shifts of a log display: ``dB / displayed dynamic range``."""
    return tuple(round(sign * v / range_db, 6) for v in values)


_FIVE = (0, 0, 0, 0, 0)
# The camera rows of the existing catalogues (corruptions._CAMERA), restated where the physics is the same.
_BLUR = {"sigma_px": (0.5, 0.75, 1.0, 1.3, 1.7)}
_MOTION = {"length_px": (1.5, 2.5, 3.5, 4.5, 6.0)}
_JPEG = {"quality": (60, 45, 30, 20, 12)}
_PIXELATE = {"fraction": (0.6, 0.5, 0.4, 0.3, 0.22)}
_STOPS_UP = {"stops": (0.25, 0.5, 0.75, 1.0, 1.3), "level": _FIVE}
_STOPS_DOWN = {"stops": (-0.25, -0.5, -0.75, -1.0, -1.3), "level": _FIVE}
_CONTRAST = {"factor": (0.85, 0.72, 0.6, 0.5, 0.4)}
_GAMMA = {"log_gamma": (0.15, 0.3, 0.45, 0.6, 0.8)}
#: Displayed dynamic range of a B-mode image and of an OCT B-scan, dB.
_US_DB, _OCT_DB = 60.0, 45.0
#: Abdominal CT window width, HU (MedMNIST's Organ{A,C,S} images use an abdominal window).
_CT_WINDOW_HU = 400.0

#: Parameters at severities 1-5 of every family of the five modalities (units in the comments).
MODALITY_TABLES: dict[str, dict[str, Row]] = {
    "ultrasound": {
        # Coefficient of variation of the multiplicative speckle (0.52: fully developed Rayleigh speckle);
        # grain: correlation length in pixels of a 32-px image.
        "speckle": {"cv": (0.1, 0.18, 0.26, 0.36, 0.5), "grain_px": (0.6, 0.6, 0.6, 0.6, 0.6)},
        # Uncompensated round-trip loss at the deepest row, dB (soft tissue: ~1 dB/cm/MHz round trip).
        "depth_attenuation": {"loss_db": (4, 8, 12, 17, 24), "range_db": (_US_DB,) * 5},
        "motion_blur": _MOTION,
        "jpeg": _JPEG,
        "pixelate": _PIXELATE,
        # Overall gain +-3 to 16 dB on the 60 dB display.
        "brightness_up": {"stops": _FIVE, "level": _db((3, 6, 9, 12, 16), _US_DB)},
        "brightness_down": {"stops": _FIVE, "level": _db((3, 6, 9, 12, 16), _US_DB, -1.0)},
        # Compression range set to 66-105 dB on an image made for 60 dB.
        "dynamic_range": {"range_db": (66, 72, 80, 90, 105), "reference_db": (_US_DB,) * 5},
        "gamma": _GAMMA,
        # Shadow: extra loss below the structure, dB; band width in pixels of a 32-px image.
        "acoustic_shadow": {"loss_db": (10, 15, 20, 27, 35), "width_px": (2.0, 2.5, 3.0, 3.5, 4.0),
                            "range_db": (_US_DB,) * 5},
    },
    "pathology": {
        # Log-sd of each stain's amount (haematoxylin, eosin): exp(0.6) = 1.8-fold at severity 5.
        "stain_variation": {"sigma": (0.12, 0.22, 0.33, 0.45, 0.6)},
        "gaussian_blur": _BLUR,
        "motion_blur": _MOTION,
        "jpeg": _JPEG,
        "pixelate": _PIXELATE,
        "brightness_up": _STOPS_UP,
        "brightness_down": _STOPS_DOWN,
        "contrast": _CONTRAST,
        # Log of the chroma factor, direction drawn per image (exp(0.8) = 2.2-fold or 0.45-fold).
        "saturation": {"log_factor": (0.15, 0.3, 0.45, 0.6, 0.8)},
        # Bubbles per image; mean radius in pixels of a 32-px image (about 3.5 um per pixel in PathMNIST).
        "bubbles": {"count": (1, 2, 2, 3, 3), "radius_px": (2.5, 3.0, 3.5, 4.0, 4.5)},
        # Extra section thickness in the fold (1: a doubled section); fold width in pixels of a 32-px image.
        "tissue_fold": {"extra_thickness": (0.5, 0.75, 1.0, 1.5, 2.0), "width_px": (3, 4, 5, 6, 7)},
        # Dye granules per image.
        "stain_deposit": {"count": (3, 6, 10, 15, 22)},
    },
    "microscopy": {
        # Camera read noise and shot-noise sd at full scale, [0, 1] intensities.
        "gaussian_noise": {"read": (0.01, 0.02, 0.03, 0.045, 0.065), "shot": (0.02, 0.035, 0.05, 0.07, 0.1)},
        "gaussian_blur": _BLUR,
        "motion_blur": _MOTION,
        "jpeg": _JPEG,
        "pixelate": _PIXELATE,
        "brightness_up": _STOPS_UP,
        "brightness_down": _STOPS_DOWN,
        "contrast": _CONTRAST,
        # As pathology's, milder: one lab's smears, an automated stainer.
        "stain_variation": {"sigma": (0.1, 0.18, 0.27, 0.36, 0.48)},
        # Fraction of the light lost at the far side of the field.
        "uneven_illumination": {"drop": (0.1, 0.17, 0.25, 0.33, 0.42)},
        "stain_deposit": {"count": (2, 4, 6, 9, 12)},
    },
    "ct": {
        # Dose as a fraction of the image's; noise sd 10 HU at full dose, added sd = 10 * sqrt(1/dose - 1) HU.
        "low_dose_noise": {"dose_fraction": (0.5, 0.25, 0.125, 0.0625, 0.03125), "sd_full_hu": (10,) * 5,
                           "window_hu": (_CT_WINDOW_HU,) * 5},
        "gaussian_blur": _BLUR,
        "motion_blur": _MOTION,
        "jpeg": _JPEG,
        "pixelate": _PIXELATE,
        # Window centre off by this many HU (direction drawn per image), in a 400 HU window.
        "window_level": {"offset_hu": (20, 40, 60, 85, 115), "window_hu": (_CT_WINDOW_HU,) * 5},
        # Window width off by this factor, wider or narrower (drawn per image).
        "window_width": {"ratio": (1.15, 1.3, 1.5, 1.75, 2.1)},
        # Peak streak amplitude, HU; straight streaks through one dense point.
        "streaks": {"amplitude_hu": (25, 45, 70, 100, 140), "count": (2, 3, 4, 5, 6),
                    "window_hu": (_CT_WINDOW_HU,) * 5},
    },
    "oct": {
        "speckle": {"cv": (0.12, 0.2, 0.28, 0.38, 0.5), "grain_px": (0.5, 0.5, 0.5, 0.5, 0.5)},
        "gaussian_blur": _BLUR,
        # sd of the A-scans' axial displacement, pixels of a 32-px image (about 60 um each in OCTMNIST).
        "axial_motion": {"shift_px": (0.4, 0.7, 1.0, 1.4, 2.0)},
        "jpeg": _JPEG,
        "pixelate": _PIXELATE,
        # Sensitivity roll-off over the imaged depth, dB, on the 45 dB display.
        "depth_attenuation": {"loss_db": (3, 6, 9, 13, 18), "range_db": (_OCT_DB,) * 5},
        # Weak signal (media opacity, poor alignment), dB.
        "brightness_down": {"stops": _FIVE, "level": _db((2, 4, 6, 9, 12), _OCT_DB, -1.0)},
        "dynamic_range": {"range_db": (49, 54, 60, 68, 78), "reference_db": (_OCT_DB,) * 5},
    },
}

# Image blocks (method section 9, amendment 11): a family shared with the
# camera catalogues keeps its camera index, a new family takes a free one; the
# indices are declared once here and never renumbered.
#: Block index of every family of the five modalities.
MODALITY_BLOCKS: dict[str, dict[str, int]] = {
    "ultrasound": {"speckle": 0, "depth_attenuation": 1, "motion_blur": 2, "jpeg": 3, "pixelate": 4,
                   "brightness_up": 5, "brightness_down": 6, "dynamic_range": 7, "gamma": 8, "acoustic_shadow": 9},
    "pathology": {"stain_variation": 0, "gaussian_blur": 1, "motion_blur": 2, "jpeg": 3, "pixelate": 4,
                  "brightness_up": 5, "brightness_down": 6, "contrast": 7, "saturation": 8, "bubbles": 9,
                  "tissue_fold": 10, "stain_deposit": 11},
    "microscopy": {"gaussian_noise": 0, "gaussian_blur": 1, "motion_blur": 2, "jpeg": 3, "pixelate": 4,
                   "brightness_up": 5, "brightness_down": 6, "contrast": 7, "stain_variation": 8,
                   "uneven_illumination": 9, "stain_deposit": 10},
    "ct": {"low_dose_noise": 0, "gaussian_blur": 1, "motion_blur": 2, "jpeg": 3, "pixelate": 4,
           "window_level": 5, "window_width": 6, "streaks": 7},
    "oct": {"speckle": 0, "gaussian_blur": 1, "axial_motion": 2, "jpeg": 3, "pixelate": 4,
            "depth_attenuation": 5, "brightness_down": 6, "dynamic_range": 7},
}


# --- helpers (as in corruptions.py, which imports this module) ---------------------------------


def _scale_px(value: float, side: int) -> float:
    """A length given in pixels of a 32-px image, at this side."""
    return value * side / 32.0


def _like(field: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Give a per-pixel ``(N, H, W)`` field a channel axis when ``x`` is RGB."""
    return field[..., None] if x.ndim == 4 else field


def _per_image(values: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Per-image values ``(N,)`` shaped to broadcast against ``x``."""
    v = r.col(values)
    return v[..., None] if x.ndim == 4 else v


def _directions(rng: np.random.Generator, n: int) -> np.ndarray:
    """+1 or -1 per image, equally likely."""
    return np.where(rng.uniform(size=n) < 0.5, -1.0, 1.0)


def _standardised(field: np.ndarray) -> np.ndarray:
    """Zero mean, unit sd per image of an ``(N, ...)`` field."""
    axes = tuple(range(1, field.ndim))
    field = field - field.mean(axis=axes, keepdims=True)
    return field / (field.std(axis=axes, keepdims=True) + 1e-6)


#: Luminance weights (ITU-R BT.601) for grey input to a colour family.
_LUMA = np.array([0.299, 0.587, 0.114], dtype=np.float32)


def _colour(x: np.ndarray, op: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """Apply an RGB operation; a grey image goes in as three equal channels and comes back as luminance."""
    if x.ndim == 4:
        return op(x)
    return op(np.repeat(x[..., None], 3, axis=-1)) @ _LUMA


def _unsaturated(x: np.ndarray) -> np.ndarray:
    """1 inside the display window, 0 at its ends (CT: air and bone lie far beyond a 400 HU window)."""
    return ((x > 0.0) & (x < 1.0)).astype(np.float32)


# --- ultrasound and OCT ------------------------------------------------------------------------

#: Coefficient of variation of a Rayleigh amplitude, sqrt(4 / pi - 1).
_RAYLEIGH_CV = float(np.sqrt(4.0 / np.pi - 1.0))


def _speckle(x: np.ndarray, p: dict[str, float], rng: np.random.Generator) -> np.ndarray:
    """Multiplicative speckle: the magnitude of a correlated complex Gaussian field (Rayleigh), unit mean.

    Scaled to the row's coefficient of variation; at the largest (0.5 < 0.52)
    the field stays non-negative.
    """
    n, side = x.shape[0], x.shape[1]
    parts = rng.standard_normal((2, n, side, side), dtype=np.float32)
    grain = _scale_px(p["grain_px"], side)
    amplitude = np.hypot(r.blur(parts[0], grain), r.blur(parts[1], grain))
    amplitude /= amplitude.mean(axis=(1, 2), keepdims=True)
    field = 1.0 + (p["cv"] / _RAYLEIGH_CV) * (amplitude - 1.0)
    return x * _like(field, x)


def _depth(side: int) -> np.ndarray:
    """Depth of each row, 0 at the top (transducer, beam entry) to 1 at the bottom, shaped ``(1, H, 1)``."""
    return ((np.arange(side, dtype=np.float32) + 0.5) / side)[None, :, None]


def _depth_attenuation(x: np.ndarray, p: dict[str, float], rng: np.random.Generator) -> np.ndarray:
    """Residual loss growing linearly in dB with depth: a linear ramp down the rows of a log display."""
    return x - _like(_depth(x.shape[1]) * (p["loss_db"] / p["range_db"]), x)


def _dynamic_range(x: np.ndarray, p: dict[str, float], rng: np.random.Generator) -> np.ndarray:
    """A wider log-compression range: the top of the display stays, every grey moves towards it."""
    return 1.0 - (1.0 - x) * (p["reference_db"] / p["range_db"])


def _acoustic_shadow(x: np.ndarray, p: dict[str, float], rng: np.random.Generator) -> np.ndarray:
    """A vertical band below a strongly attenuating structure loses ``loss_db`` (soft-edged)."""
    n, side = x.shape[0], x.shape[1]
    gx, gy = r.grid(side)
    centre = r.col(rng.uniform(-0.6, 0.6, n))
    top = r.col(rng.uniform(-0.7, 0.1, n))
    half = r.px(_scale_px(p["width_px"], side), side) / 2
    band = r.ramp(np.abs(gx - centre) - half, r.px(1.0, side)) * r.ramp(top - gy, r.px(1.5, side))
    return x - _like(band * (p["loss_db"] / p["range_db"]), x)


def _axial_motion(x: np.ndarray, p: dict[str, float], rng: np.random.Generator) -> np.ndarray:
    """Each column (A-scan) displaced along depth by a smooth random path (linear interpolation, edges repeated)."""
    n, side = x.shape[0], x.shape[1]
    walk = ndimage.gaussian_filter1d(rng.standard_normal((n, side)), _scale_px(3.0, side), axis=1, mode="nearest")
    shift = (_standardised(walk) * _scale_px(p["shift_px"], side)).astype(np.float32)
    rows = np.clip(np.arange(side, dtype=np.float32)[None, :, None] - shift[:, None, :], 0, side - 1)
    y0 = np.floor(rows).astype(np.int64)
    y1 = np.minimum(y0 + 1, side - 1)
    w = _like(rows - y0, x)
    img, cols = np.arange(n)[:, None, None], np.arange(side)[None, None, :]
    return x[img, y0, cols] * (1 - w) + x[img, y1, cols] * w


# --- CT ----------------------------------------------------------------------------------------


def _low_dose_noise(x: np.ndarray, p: dict[str, float], rng: np.random.Generator) -> np.ndarray:
    """Extra quantum noise of a reduced dose, band-pass (filtered back-projection's ramp-shaped spectrum)."""
    n, side = x.shape[0], x.shape[1]
    white = rng.standard_normal((n, side, side), dtype=np.float32)
    texture = _standardised(r.blur(white, _scale_px(0.5, side)) - r.blur(white, _scale_px(2.0, side)))
    sd = p["sd_full_hu"] * np.sqrt(1.0 / p["dose_fraction"] - 1.0) / p["window_hu"]
    return x + sd * _like(texture, x) * _unsaturated(x)


def _window_level(x: np.ndarray, p: dict[str, float], rng: np.random.Generator) -> np.ndarray:
    """Window centre off by ``offset_hu`` (up or down per image): a grey shift that leaves saturated pixels."""
    shift = _directions(rng, x.shape[0]) * p["offset_hu"] / p["window_hu"]
    return x + _per_image(shift, x) * _unsaturated(x)


def _window_width(x: np.ndarray, p: dict[str, float], rng: np.random.Generator) -> np.ndarray:
    """Window width wider or narrower (per image) by ``ratio``, about the window's centre."""
    factor = np.exp(_directions(rng, x.shape[0]) * np.log(p["ratio"]))
    return np.where(_unsaturated(x) > 0, 0.5 + (x - 0.5) * _per_image(factor, x), x)


#: Lines drawn per image for ``streaks`` (the row's count uses the first ones).
_MAX_STREAKS = 6


def _streaks(x: np.ndarray, p: dict[str, float], rng: np.random.Generator) -> np.ndarray:
    """Straight dark or bright streaks through one dense point (metal, photon starvation), fading with distance."""
    n, side = x.shape[0], x.shape[1]
    gx, gy = r.grid(side)
    cx, cy = rng.uniform(-0.6, 0.6, (2, n))
    angle = rng.uniform(0, np.pi, (n, _MAX_STREAKS))
    sign = np.where(rng.uniform(size=(n, _MAX_STREAKS)) < 0.65, -1.0, 1.0)  # photon starvation: mostly dark
    dx, dy = gx - r.col(cx), gy - r.col(cy)
    width = r.px(_scale_px(0.7, side), side)
    field = np.zeros((n, side, side), dtype=np.float32)
    for k in range(int(p["count"])):  # one line at a time: memory of one batch, whatever the image side
        across = np.abs(dx * r.col(np.sin(angle[:, k])) - dy * r.col(np.cos(angle[:, k])))
        field += r.col(sign[:, k]) * np.exp(-0.5 * (across / width) ** 2)
    field *= np.exp(-np.sqrt(dx * dx + dy * dy) / 1.2)  # fading away from the dense object
    return x + _like(field * (p["amplitude_hu"] / p["window_hu"]), x) * _unsaturated(x)


# --- stained slides and smears -----------------------------------------------------------------

#: Optical density of haematoxylin, eosin and DAB per unit amount (Ruifrok & Johnston 2001), rows normalised.
_RGB_FROM_HED = np.array([[0.65, 0.70, 0.29], [0.07, 0.99, 0.11], [0.27, 0.57, 0.78]], dtype=np.float64)
_RGB_FROM_HED /= np.linalg.norm(_RGB_FROM_HED, axis=1, keepdims=True)
_HED_FROM_RGB = np.linalg.inv(_RGB_FROM_HED)
#: Transmission floor: one grey level, so that black pixels have a finite optical density.
_MIN_T = 1.0 / 255.0


def _optical_density(x: np.ndarray) -> np.ndarray:
    return -np.log(np.maximum(x, _MIN_T))


def _stain_variation(x: np.ndarray, p: dict[str, float], rng: np.random.Generator) -> np.ndarray:
    """Each image's haematoxylin and eosin amounts scaled by log-normal factors (Beer-Lambert, HED space).

    The unstained background (optical density 0) stays white, as stain uptake
    changes and the lamp does not.
    """
    z = rng.standard_normal((x.shape[0], 3))
    z[:, 2] = 0.0  # the third (DAB) channel is the residual of an H&E slide: left alone
    gain = np.exp(p["sigma"] * z).astype(np.float32)
    if x.ndim == 3:  # fluorescence: emission is linear in the dye's amount
        return x * _per_image(gain[:, 0], x)
    amounts = _optical_density(x) @ _HED_FROM_RGB.astype(np.float32)
    return np.exp(-((amounts * gain[:, None, None, :]) @ _RGB_FROM_HED.astype(np.float32)))


def _saturation(x: np.ndarray, p: dict[str, float], rng: np.random.Generator) -> np.ndarray:
    """Chroma (distance from the luminance) scaled up or down per image by ``exp(log_factor)``."""
    factor = np.exp(_directions(rng, x.shape[0]) * p["log_factor"]).astype(np.float32)[:, None, None, None]

    def op(rgb: np.ndarray) -> np.ndarray:
        luma = (rgb @ _LUMA)[..., None]
        return luma + (rgb - luma) * factor

    return _colour(x, op)


#: Bubbles drawn per image (the row's count uses the first ones).
_MAX_BUBBLES = 5


def _bubbles(x: np.ndarray, p: dict[str, float], rng: np.random.Generator) -> np.ndarray:
    """Air bubbles under the coverslip: a dark refracting rim around a lighter, defocused disc."""
    n, side = x.shape[0], x.shape[1]
    gx, gy = r.grid(side)
    cx, cy = rng.uniform(-0.8, 0.8, (2, n, _MAX_BUBBLES))
    scale = rng.uniform(0.75, 1.25, (n, _MAX_BUBBLES))
    inside = np.zeros((n, side, side), dtype=np.float32)
    rim = np.zeros_like(inside)
    for k in range(int(p["count"])):  # one bubble at a time: memory of one batch, whatever the image side
        radius = r.col(scale[:, k] * r.px(_scale_px(p["radius_px"], side), side))
        d = np.sqrt((gx - r.col(cx[:, k])) ** 2 + (gy - r.col(cy[:, k])) ** 2)
        inside = np.maximum(inside, r.ramp(d - radius, r.px(1.0, side)))
        rim = np.maximum(rim, r.ramp(np.abs(d - radius) - r.px(0.4, side), r.px(0.8, side)))
    lighter = 0.5 * r.blur(x, _scale_px(0.8, side)) + 0.5
    out = x + (lighter - x) * _like(0.7 * inside, x)
    return r.composite(out, np.full((n, 3), 0.3, np.float32) if x.ndim == 4 else r.col(np.full(n, 0.3)), 0.75 * rim)


def _tissue_fold(x: np.ndarray, p: dict[str, float], rng: np.random.Generator) -> np.ndarray:
    """A band of extra section thickness: optical density multiplied by ``1 + extra_thickness`` in it."""
    n, side = x.shape[0], x.shape[1]
    gx, gy = r.grid(side)
    phi = rng.uniform(0, np.pi, n)
    across = gx * r.col(np.cos(phi)) + gy * r.col(np.sin(phi)) - r.col(rng.uniform(-0.5, 0.5, n))
    band = r.ramp(np.abs(across) - r.px(_scale_px(p["width_px"], side), side) / 2, r.px(1.0, side))
    thickness = 1.0 + p["extra_thickness"] * _like(band, x)
    return np.exp(-_optical_density(x) * thickness)


#: Granules drawn per image (the row's count uses the first ones); dye colour, blue-purple.
_MAX_DEPOSITS = 25
_DYE = np.array([0.22, 0.12, 0.35], dtype=np.float32)
#: Grey level of a fluorescent granule.
_GLOW = 0.9


def _stain_deposit(x: np.ndarray, p: dict[str, float], rng: np.random.Generator) -> np.ndarray:
    """Granules of precipitated dye: small dark blue-purple blobs (grey, fluorescence: bright debris)."""
    n, side = x.shape[0], x.shape[1]
    at_x, at_y = rng.uniform(-0.95, 0.95, (2, n, _MAX_DEPOSITS))
    strength = rng.uniform(0.6, 1.0, (n, _MAX_DEPOSITS))
    k = int(p["count"])
    owner = np.repeat(np.arange(n), k)
    alpha = r.blobs(n, side, owner, at_x[:, :k].ravel(), at_y[:, :k].ravel(), 0.6, strength[:, :k].ravel())
    colour = np.repeat(_DYE[None], n, axis=0) if x.ndim == 4 else r.col(np.full(n, _GLOW))
    return r.composite(x, colour, 0.9 * alpha)


#: The implementation of every family new in this module.
MODALITY_IMPLEMENTATIONS: dict[str, Implementation] = {
    "speckle": _speckle,
    "depth_attenuation": _depth_attenuation,
    "dynamic_range": _dynamic_range,
    "acoustic_shadow": _acoustic_shadow,
    "axial_motion": _axial_motion,
    "low_dose_noise": _low_dose_noise,
    "window_level": _window_level,
    "window_width": _window_width,
    "streaks": _streaks,
    "stain_variation": _stain_variation,
    "saturation": _saturation,
    "bubbles": _bubbles,
    "tissue_fold": _tissue_fold,
    "stain_deposit": _stain_deposit,
}
