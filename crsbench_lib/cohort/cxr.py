"""Radiology phantom: frontal chest films with four co-occurring findings.

Each image shows a thorax (soft tissue, spine and mediastinum), two lungs with
vascular markings and ribs, a heart and the diaphragm domes. Findings
(multi-label):

- cardiomegaly: cardiothoracic ratio drawn around 0.56 instead of 0.44
  (the conventional threshold is 0.5, so the two distributions overlap);
- effusion: fluid filling a costophrenic angle with a meniscus, one or both sides;
- nodule: a small round opacity in a lung;
- consolidation: a fuzzy air-space opacity in a lung.

Labels are drawn through a Gaussian copula: correlated normal scores cut at
each finding's prevalence, which gives realistic co-occurrence (effusion with
cardiomegaly, as in heart failure; effusion with consolidation, as in
pneumonia) without tying any two findings deterministically.

Site B is the institutional shift: a second scanner and population. Its films
are taken antero-posterior (heart magnified by about 10 %), with poorer
inspiration, patient rotation and shift, another contrast curve (gamma), more
noise, less sharpness, burned-in laterality markers and text, and the higher
prevalences of an inpatient population.
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtri

from crsbench_lib.cohort import _render as r

NAME = "cxr"
DOMAIN = "radiology"
TASK = "multilabel"
CLASS_NAMES: tuple[str, ...] = ("cardiomegaly", "effusion", "nodule", "consolidation")
SITES: tuple[str, ...] = ("A", "B")
#: Prevalence of each finding at each site.
PREVALENCE = {"A": np.array([0.20, 0.22, 0.15, 0.18]), "B": np.array([0.32, 0.35, 0.10, 0.28])}
#: Correlation of the copula's normal scores (cardiomegaly, effusion, nodule, consolidation).
CORRELATION = np.array(
    [
        [1.0, 0.5, 0.0, 0.1],
        [0.5, 1.0, 0.0, 0.35],
        [0.0, 0.0, 1.0, 0.05],
        [0.1, 0.35, 0.05, 1.0],
    ]
)
#: Probability that each label is flipped (reader error).
LABEL_NOISE = 0.02
#: Acquisition settings per site: gamma of the contrast curve, noise sd, blur (px at 32 px),
#: heart magnification, inspiration (lung height factor), rotation sd (rad), shift sd, marker probability.
ACQUISITION = {
    "A": {"gamma": 1.0, "noise": 0.015, "blur": 0.45, "magnify": 1.0, "inspiration": 1.0, "rotation": 0.02, "shift": 0.02, "markers": 0.1, "exposure": 0.05},
    "B": {"gamma": 0.65, "noise": 0.045, "blur": 0.9, "magnify": 1.1, "inspiration": 0.88, "rotation": 0.07, "shift": 0.06, "markers": 0.9, "exposure": 0.12},
}
#: Cardiothoracic ratio (mean, sd) without and with cardiomegaly.
CTR = ((0.45, 0.045), (0.56, 0.05))


def draw_labels(rng: np.random.Generator, n: int, site: str) -> np.ndarray:
    """Multi-label findings through a Gaussian copula (see module docstring)."""
    chol = np.linalg.cholesky(CORRELATION)
    z = rng.standard_normal((n, len(CLASS_NAMES))) @ chol.T
    return (z > ndtri(1.0 - PREVALENCE[site])).astype(np.uint8)


def generate(rng: np.random.Generator, n: int, side: int, site: str = "A") -> tuple[np.ndarray, np.ndarray]:
    """Draw ``n`` chest films at ``site``.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of all randomness.
    n : int
        Number of images.
    side : int
        Image side in pixels.
    site : {"A", "B"}
        Acquisition site (see :data:`ACQUISITION`).

    Returns
    -------
    images : numpy.ndarray
        ``uint8`` ``(n, side, side)``.
    labels : numpy.ndarray
        ``uint8`` ``(n, 4)`` 0/1 findings in the order of :data:`CLASS_NAMES`.
    """
    acq = ACQUISITION[site]
    s32 = side / 32.0
    true = draw_labels(rng, n, site)
    cardio, effusion, nodule, consol = (true[:, i].astype(bool) for i in range(4))

    # Positioning: rotation, shift and scale of the patient in the field.
    x0, y0 = r.grid(side)
    rot = rng.normal(0, acq["rotation"], n)
    scale = rng.uniform(0.92, 1.05, n)
    sx, sy = rng.normal(0, acq["shift"], n), rng.normal(0, acq["shift"], n)
    c, s = r.col(np.cos(rot)), r.col(np.sin(rot))
    x = ((x0 - r.col(sx)) * c + (y0 - r.col(sy)) * s) / r.col(scale)
    y = (-(x0 - r.col(sx)) * s + (y0 - r.col(sy)) * c) / r.col(scale)

    # Thorax and soft tissue.
    body_w = rng.uniform(0.85, 0.98, n)
    body = r.ramp(np.abs(x) - r.col(body_w) * (1.0 - 0.15 * np.clip(-y, 0, 1) ** 2), r.px(2.0, side))
    img = 0.06 + 0.42 * body

    # Lungs: two rounded regions, height set by inspiration; the diaphragm dome cuts them.
    insp = acq["inspiration"] * rng.uniform(0.92, 1.06, n)
    lung_top = -0.72
    lung_w = rng.uniform(0.28, 0.34, n)
    lung_cx = r.col(0.38 * body_w / 0.92)
    dome_y = r.col(lung_top + 1.35 * insp)  # apex of the domes
    lungs = np.zeros((n, side, side), dtype=np.float32)
    for sign in (-1.0, 1.0):
        # Each lung: medial border at the mediastinum, lateral border widening from a rounded
        # apex down to the costophrenic angle, floor at the diaphragm dome.
        depth = np.clip((y - lung_top) / (dome_y - lung_top), 0.0, 1.0)
        lateral = lung_cx + r.col(lung_w) * (0.45 + 0.55 * np.sqrt(depth))
        ax_ = sign * x
        dome = dome_y + (0.05 if sign > 0 else 0.0) + 0.3 * (ax_ - lung_cx) ** 2 - 0.1 * np.abs(ax_ - lung_cx)
        top = lung_top + 0.6 * ((ax_ - lung_cx) / r.col(lung_w)) ** 2
        inside = np.maximum(np.maximum(0.1 - ax_, ax_ - lateral), np.maximum(top - y, y - dome))
        lungs = np.maximum(lungs, r.ramp(inside, r.px(1.5, side)))
    vessels = r.smooth_noise(rng, n, side, 0.8 * s32)
    # Ribs: faint bands across the lungs, curving down laterally; vessels fade towards the periphery.
    rib_phase = r.col(rng.uniform(0, 2 * np.pi, n))
    rib_f = r.col(2 * np.pi / rng.uniform(0.24, 0.3, n))
    ribs = 0.5 + 0.5 * np.cos(rib_f * (y - 0.3 * np.abs(x) + 0.25 * x * x) + rib_phase)
    hilum = np.exp(-((np.abs(x) - 0.2) ** 2 + (y + 0.05) ** 2) / 0.08)
    lung_density = -0.30 + (0.025 + 0.04 * hilum) * vessels + 0.045 * ribs + 0.06 * hilum
    img = img + lungs * lung_density

    # Spine and mediastinum, then the heart (its width sets the cardiothoracic ratio).
    med_w = r.col(rng.uniform(0.1, 0.14, n))
    img = img + 0.22 * r.ramp(np.abs(x) - med_w, r.px(1.5, side)) * body
    ctr = np.where(cardio, rng.normal(*CTR[1], n), rng.normal(*CTR[0], n)) * acq["magnify"]
    thorax_w = 2 * (0.38 * body_w / 0.92 + lung_w)
    heart_hw = ctr * thorax_w / 2.0
    hcx = r.col(0.3 * heart_hw)  # the heart lies mostly left of the midline (image right)
    hcy = dome_y - r.col(rng.uniform(0.26, 0.32, n))
    hh = r.col(rng.uniform(0.28, 0.34, n))
    hd = np.sqrt(((x - hcx) / r.col(heart_hw)) ** 2 + ((y - hcy) / hh) ** 2) - 1.0
    heart = r.ramp(hd * r.col(heart_hw), r.px(1.5, side))
    img = img + 0.3 * heart * lungs + 0.08 * heart * (1.0 - lungs)

    # Effusion: fluid in one or both costophrenic angles with a concave meniscus.
    side_choice = rng.integers(0, 3, n)  # 0 right, 1 left, 2 both
    level = r.col(rng.uniform(0.04, 0.24, n))
    fluid = np.zeros_like(img)
    for k, sign in enumerate((-1.0, 1.0)):
        on = r.col(effusion & ((side_choice == k) | (side_choice == 2)))
        meniscus = dome_y - level + 0.4 * (np.abs(x) - lung_cx) ** 2 * np.sign(np.abs(x) - lung_cx) * -1.0
        region = r.ramp(meniscus - y, r.px(1.5, side)) * r.ramp(-sign * x, r.px(1.0, side)) * lungs
        fluid = np.maximum(fluid, region * on)
    img = img + r.col(rng.uniform(0.08, 0.22, n)) * fluid

    # Nodule and consolidation, placed inside a lung.
    lung_sign = np.where(rng.uniform(size=n) < 0.5, -1.0, 1.0)
    for present, radius, contrast, edge in (
        (nodule, rng.uniform(0.06, 0.1, n), rng.uniform(0.14, 0.3, n), 1.0),
        (consol, rng.uniform(0.14, 0.26, n), rng.uniform(0.10, 0.2, n), 4.0),
    ):
        px_ = lung_sign * (0.38 * body_w / 0.92) + rng.normal(0, 0.08, n)
        py_ = rng.uniform(-0.45, 0.2, n) * insp
        dd = np.sqrt((x - r.col(px_)) ** 2 + (y - r.col(py_)) ** 2)
        blob = r.ramp(dd - r.col(radius), r.px(edge, 32)) * lungs
        if edge > 2:  # consolidation: patchy, with air bronchograms
            blob = blob * (0.75 + 0.25 * r.smooth_noise(rng, n, side, 1.0 * s32))
        img = img + blob * r.col(contrast * present)

    # Detector and processing: exposure, contrast curve, sharpness, noise.
    img = np.clip(img * r.col(rng.normal(1.0, acq["exposure"], n)), 0, 1)
    img = img ** acq["gamma"]
    img = r.blur(img, acq["blur"] * s32)
    img = img + rng.normal(0, acq["noise"], img.shape).astype(np.float32)

    # Burned-in markers: a bright laterality block and a line of "text" in the corners.
    mark = rng.uniform(size=n) < acq["markers"]
    if mark.any():
        mx = r.col(np.where(rng.uniform(size=n) < 0.5, -0.78, 0.62) + rng.normal(0, 0.03, n))
        my = r.col(rng.uniform(-0.85, -0.6, n))
        block = r.ramp(np.maximum(np.abs(x0 - mx - 0.08), np.abs(y0 - my)) - 0.08, r.px(0.8, side))
        text_y = r.col(rng.uniform(0.75, 0.88, n))
        dashes = (np.cos(x0 * 2 * np.pi / r.px(3.0, side)) > 0.0) & (np.abs(x0 + 0.3) < 0.55)
        text = r.ramp(np.abs(y0 - text_y) - r.px(0.5, side), r.px(0.8, side)) * dashes
        img = np.maximum(img, np.maximum(block, 0.9 * text) * r.col(mark) * 0.95)

    labels = true.copy()
    flip = rng.uniform(size=true.shape) < LABEL_NOISE
    labels[flip] = 1 - labels[flip]
    return r.to_uint8(img), labels
