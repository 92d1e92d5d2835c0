"""Ophthalmology phantom: colour fundus photographs with five ordinal grades.

Each image is a fundus disc (orange-red, pigmentation and illumination vary)
on a black field, with an optic disc on the nasal side, a darker macula, and
four vascular arcades. The grade follows the international clinical diabetic
retinopathy scale (Wilkinson et al., Ophthalmology 2003): 0 none, 1 mild
(microaneurysms only), 2 moderate (more than microaneurysms: haemorrhages,
hard exudates), 3 severe (many haemorrhages in all quadrants, cotton-wool
spots, venous beading), 4 proliferative (new vessels, pre-retinal blood).

The grade sets the *expected* counts of each lesion type; counts are drawn from
over-dispersed (Gamma-Poisson) distributions so that neighbouring grades
overlap, and ``LABEL_NOISE`` of the grades are moved to a neighbouring grade
(grader disagreement is mostly between adjacent grades). The prior is
imbalanced like a screening population (most eyes have no retinopathy).
"""

from __future__ import annotations

import numpy as np

from crsbench_lib.cohort import _render as r

NAME = "fundus"
DOMAIN = "ophthalmology"
TASK = "multiclass"
CLASS_NAMES: tuple[str, ...] = ("grade 0", "grade 1", "grade 2", "grade 3", "grade 4")
SITES: tuple[str, ...] = ("A",)
#: Grade prior of a screening population (approximately 45/20/20/8/7 %).
CLASS_PRIOR = np.array([0.45, 0.20, 0.20, 0.08, 0.07])
#: Fraction of grades moved one step up or down (grader disagreement).
LABEL_NOISE = 0.06

#: Expected lesion counts per grade (rows: grades 0-4).
MICROANEURYSMS = np.array([0.4, 4.0, 7.0, 10.0, 9.0])
HAEMORRHAGES = np.array([0.1, 0.8, 3.5, 8.0, 7.0])
EXUDATES = np.array([0.1, 0.6, 4.0, 7.0, 6.0])
COTTON_WOOL = np.array([0.0, 0.1, 0.8, 2.5, 2.0])
#: Probability of new vessels at the disc and of a pre-retinal haemorrhage.
NEOVASCULAR = np.array([0.0, 0.0, 0.03, 0.12, 0.85])
PRERETINAL = np.array([0.0, 0.0, 0.01, 0.05, 0.35])
#: Spread (sd, normalised units) of the lesions around the macula.
POLE_SPREAD = 0.32
#: Over-dispersion of the lesion counts (Gamma shape; smaller overlaps more).
DISPERSION = 1.2

FUNDUS_LIGHT = np.array([0.88, 0.48, 0.22], dtype=np.float32)
FUNDUS_DARK = np.array([0.66, 0.28, 0.12], dtype=np.float32)
DISC = np.array([1.0, 0.92, 0.72], dtype=np.float32)
DISC_RIM = np.array([0.98, 0.72, 0.42], dtype=np.float32)
VESSEL = np.array([0.42, 0.08, 0.05], dtype=np.float32)
BLOOD = np.array([0.35, 0.04, 0.03], dtype=np.float32)
EXUDATE = np.array([0.98, 0.90, 0.45], dtype=np.float32)
COTTON = np.array([0.95, 0.85, 0.75], dtype=np.float32)


def _lesions(
    rng: np.random.Generator,
    img: np.ndarray,
    fundus_r: np.ndarray,
    centre: tuple[np.ndarray, np.ndarray],
    mean: np.ndarray,
    colour: np.ndarray,
    size_px: float,
    strength: float,
    side: int,
    cap: int = 25,
) -> np.ndarray:
    """Scatter Gamma-Poisson many blobs of one kind inside the fundus, one blur for all."""
    n = img.shape[0]
    counts = np.minimum(r.gamma_poisson(rng, mean, DISPERSION), cap)
    owner = np.repeat(np.arange(n), counts)
    # Lesions cluster in the posterior pole: a Gaussian cloud around the macula, kept inside the fundus.
    lx = centre[0][owner] + rng.normal(0, POLE_SPREAD, owner.size)
    ly = centre[1][owner] + rng.normal(0, POLE_SPREAD, owner.size)
    rr = np.sqrt(lx * lx + ly * ly)
    shrink = np.minimum(1.0, 0.85 * fundus_r[owner] / np.maximum(rr, 1e-6))
    weight = rng.uniform(0.6, 1.4, owner.size)
    canvas = r.splat(n, side, owner, lx * shrink, ly * shrink, weight)
    sigma = size_px * side / 32.0
    a = np.clip(r.blur(canvas, sigma) * (2 * np.pi * sigma**2) * strength, 0.0, 1.0)
    return r.composite(img, np.broadcast_to(colour, (n, 3)), a)


def generate(rng: np.random.Generator, n: int, side: int, site: str = "A") -> tuple[np.ndarray, np.ndarray]:
    """Draw ``n`` fundus-like images.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of all randomness.
    n : int
        Number of images.
    side : int
        Image side in pixels.
    site : str
        Only ``"A"``.

    Returns
    -------
    images : numpy.ndarray
        ``uint8`` ``(n, side, side, 3)``.
    labels : numpy.ndarray
        ``int64`` ``(n,)`` grades 0-4.
    """
    del site
    x, y = r.grid(side)
    s32 = side / 32.0
    true = rng.choice(len(CLASS_NAMES), size=n, p=CLASS_PRIOR)

    # Fundus: pigmentation, choroidal texture and centre-bright illumination.
    tone = rng.beta(2.0, 2.0, n).astype(np.float32)
    base = FUNDUS_LIGHT + (FUNDUS_DARK - FUNDUS_LIGHT) * tone[:, None] + rng.normal(0, 0.03, (n, 3)).astype(np.float32)
    fundus_r = rng.uniform(0.86, 0.96, n)
    ox, oy = rng.normal(0, 0.03, n), rng.normal(0, 0.03, n)
    fx, fy = x - r.col(ox), y - r.col(oy)
    rad = np.sqrt(fx * fx + fy * fy)
    texture = r.smooth_noise(rng, n, side, 1.5 * s32)
    illum = 1.0 - r.col(rng.uniform(0.25, 0.5, n)) * (rad / r.col(fundus_r)) ** 2
    img = base[:, None, None, :] * (illum * (1.0 + 0.04 * texture))[..., None]

    # Optic disc on the nasal side (left or right eye), macula temporal to it.
    eye = np.where(rng.uniform(size=n) < 0.5, -1.0, 1.0)
    dcx = eye * rng.normal(0.42, 0.04, n) + ox
    dcy = rng.normal(0.0, 0.05, n) + oy
    disc_r = rng.normal(0.13, 0.015, n)
    dd = np.sqrt((x - r.col(dcx)) ** 2 + (y - r.col(dcy)) ** 2)
    # A yellow-orange rim around a paler central cup (cup-to-disc ratio 0.3-0.6).
    img = r.composite(img, np.broadcast_to(DISC_RIM, (n, 3)), r.ramp(dd - r.col(disc_r), r.px(1.2, side)) * 0.8)
    cup = r.col(disc_r * rng.uniform(0.3, 0.6, n))
    img = r.composite(img, np.broadcast_to(DISC, (n, 3)), r.ramp(dd - cup, r.px(1.5, 32)) * 0.9)
    mcx = dcx - eye * rng.normal(0.55, 0.04, n)
    md = np.sqrt((x - r.col(mcx)) ** 2 + (y - r.col(dcy + 0.03)) ** 2)
    img = img * (1.0 - 0.25 * np.exp(-((md / 0.14) ** 2)))[..., None]

    # Vascular arcades: circular arcs leaving the disc, above and below, towards the macula.
    k = 4
    side_sign = np.array([-1.0, 1.0, -1.0, 1.0])[None, :]
    arc_r = np.column_stack([rng.uniform(0.45, 0.65, n), rng.uniform(0.45, 0.65, n), rng.uniform(0.9, 1.3, n), rng.uniform(0.9, 1.3, n)])
    acx = dcx[:, None] - eye[:, None] * np.array([1.0, 1.0, -0.3, -0.3])[None, :] * arc_r * 0.55
    acy = dcy[:, None] + side_sign * arc_r * 0.85
    radius_k = np.sqrt((acx - dcx[:, None]) ** 2 + (acy - dcy[:, None]) ** 2)
    dist = r.arc_distance(x, y, acx, acy, radius_k)
    width = r.px(0.45, 32) * np.array([1.0, 1.0, 0.7, 0.7])[None, :, None, None]
    # Each arc is kept on its own side of the disc (temporal for the main arcades, nasal for the others).
    direction = np.array([1.0, 1.0, -1.0, -1.0])[None, :, None, None]
    temporal = -eye[:, None, None, None] * (x - r.col(dcx))[:, None] * direction
    # Arcs stop short of closing around the macula.
    inside = (rad < r.col(fundus_r))[:, None] & (temporal > 0) & (temporal < 0.78) & (side_sign[:, :, None, None] * (y - r.col(dcy))[:, None] > -0.05)
    # Venous beading (severe grades): the vessel width pulses along the arc.
    beading = r.col(np.where(true >= 3, rng.uniform(0.3, 0.8, n), rng.uniform(0.0, 0.2, n)))
    pulse = 1.0 + beading * np.cos(2 * np.pi * dd / r.px(4.0, 32))
    vessels = (r.ramp(dist - width * pulse[:, None], r.px(1.0, side)) * inside).max(axis=1)
    # Vessels fade where they cross the bright disc (at this resolution they would draw a bar).
    on_disc = r.ramp(dd - r.col(disc_r), r.px(1.2, side))
    img = r.composite(img, VESSEL[None].repeat(n, 0), vessels * 0.7 * (1.0 - 0.75 * on_disc))

    # Lesions by grade.
    pole = (mcx, dcy + 0.03)
    img = _lesions(rng, img, fundus_r, pole, MICROANEURYSMS[true], BLOOD, 0.45, 1.0, side)
    img = _lesions(rng, img, fundus_r, pole, HAEMORRHAGES[true], BLOOD, 1.2, 0.9, side)
    img = _lesions(rng, img, fundus_r, pole, EXUDATES[true], EXUDATE, 0.7, 1.0, side)
    img = _lesions(rng, img, fundus_r, pole, COTTON_WOOL[true], COTTON, 1.4, 0.6, side, cap=6)

    # Proliferative signs: a tangle of fine new vessels on or near the disc, pre-retinal blood.
    neo = rng.uniform(size=n) < NEOVASCULAR[true]
    if neo.any():
        kn = 5
        t0 = rng.uniform(0, 2 * np.pi, (n, kn))
        l0 = rng.uniform(0.1, 0.3, (n, kn))
        sx = dcx[:, None] + rng.normal(0, 0.06, (n, kn))
        sy = dcy[:, None] + rng.normal(0, 0.06, (n, kn))
        idx = np.flatnonzero(neo)
        ex, ey = sx + l0 * np.cos(t0), sy + l0 * np.sin(t0)
        d = r.segment_distance(x, y, sx[idx], sy[idx], ex[idx], ey[idx])
        a = np.zeros((n, side, side), dtype=np.float32)
        a[idx] = r.ramp(d - r.px(0.25, 32), r.px(1.0, side)).max(axis=1) * 0.8
        img = r.composite(img, np.broadcast_to(np.array([0.6, 0.05, 0.08], dtype=np.float32), (n, 3)), a)
    pre = rng.uniform(size=n) < PRERETINAL[true]
    if pre.any():
        pcx = rng.uniform(-0.4, 0.4, n)
        pcy = rng.uniform(0.1, 0.5, n)
        pd = np.sqrt((x - r.col(pcx)) ** 2 + (y - r.col(pcy)) ** 2)
        a = r.ramp(pd - r.col(rng.uniform(0.12, 0.25, n)), r.px(1.5, side)) * r.col(pre) * 0.85
        img = r.composite(img, np.broadcast_to(BLOOD, (n, 3)), a)

    # Camera: black field outside the fundus, exposure, optics, noise.
    field = r.ramp(rad - r.col(fundus_r), r.px(1.0, side))
    img = img * field[..., None] * r.col(rng.uniform(0.92, 1.06, n))[..., None]
    img = r.blur(img, 0.4 * s32)
    img = img + rng.normal(0, 0.01, img.shape).astype(np.float32)

    labels = true.copy()
    flip = rng.uniform(size=n) < LABEL_NOISE
    step = np.where(rng.uniform(size=n) < 0.5, -1, 1)
    step = np.where(true == 0, 1, np.where(true == len(CLASS_NAMES) - 1, -1, step))
    labels[flip] = true[flip] + step[flip]
    return r.to_uint8(img), labels.astype(np.int64)
