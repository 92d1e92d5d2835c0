"""Ophthalmology phantom: colour fundus photographs with five ordinal grades.

Each image is a fundus disc (orange-red; pigmentation, choroidal texture and
illumination vary) on a black field, with an optic disc on the nasal side, a
darker macula, vascular arcades with random branches, and the whole eye
turned, shifted and zoomed at random (fixation and field of view vary). The
grade follows the international clinical diabetic retinopathy scale
(Wilkinson et al., *Ophthalmology* 2003): 0 none, 1 mild (microaneurysms
only), 2 moderate (haemorrhages, hard exudates), 3 severe (many haemorrhages,
cotton-wool spots, venous beading), 4 proliferative (new vessels, pre-retinal
blood).

The grade sets the *expected* counts of small lesions scattered around the
posterior pole; counts are over-dispersed (Gamma-Poisson), so neighbouring
grades overlap, and grade-independent look-alikes (drusen, which resemble
exudates; dust specks on the optics, which resemble haemorrhages; the light
reflex of young retinas) appear in every grade. Lesions are a few pixels at
random places: their average effect on pixel values is far smaller than the
image-to-image spread of pigmentation and exposure, so a linear read-out of
pixels is weak and counting local structures is what the task needs.
``LABEL_NOISE`` of the grades move to a neighbouring grade (grader
disagreement). The prior is imbalanced like a screening population.

Site B (world v4; four parts, each with a switch,
:mod:`crsbench_lib.cohort.shortcuts`): *acquisition*, a hand-held camera
(grainy noise, softer optics, darker and greener, uneven illumination,
in-camera sharpening; its sampling is left at the grid's, because the
generator draws microaneurysms at the smallest size a 32-px encoder resolves
and a coarser chain would erase the grade's evidence for every encoder
alike); *population*, a diabetic clinic's case mix (prior 0.35 / 0.20 / 0.25
/ 0.10 / 0.10); *labelling*, one grader instead of an adjudicated grade (15 %
of grades one step off instead of 6 %; an assumed rate: single graders
disagree with an adjudicated reference more than adjudicators do, Krause et
al., *Ophthalmology* 2018). The shortcut cue is the field-mask notch of
site A's referral-clinic camera (:data:`CUE`), used more for referable eyes.
"""

from __future__ import annotations

import numpy as np

from crsbench_lib.cohort import _render as r
from crsbench_lib.cohort.acquisition import Attribute, Phantoms, Scanner, acquire, nuisance_attributes, typed
from crsbench_lib.cohort.shortcuts import ShortcutCue, check_shift_parts, cue_site, cue_stream

NAME = "fundus"
DOMAIN = "ophthalmology"
TASK = "multiclass"
CLASS_NAMES: tuple[str, ...] = ("grade 0", "grade 1", "grade 2", "grade 3", "grade 4")
SITES: tuple[str, ...] = ("A", "B")
#: Acquisition sites: ``A`` (evaluation) and three fundus cameras seen only in pretraining pools.
#: Sites pretraining pools draw from (never an evaluation shift site).
POOL_SITES: tuple[str, ...] = ("A", "P1", "P2", "P3")
SCANNERS: dict[str, Scanner] = {
    "A": Scanner(vignette=0.2, noise=0.025),
    # Another desktop camera: darker, greener.
    "P1": Scanner(exposure=-0.3, gamma=1.1, white_balance=(0.92, 1.06, 1.0), vignette=0.3),
    # A camera with a harsher tone curve and sharper optics.
    "P2": Scanner(exposure=0.15, gamma=0.85, blur_px=0.35, noise=0.02),
    # A hand-held camera: soft, noisy, uneven.
    "P3": Scanner(noise=0.05, blur_px=0.75, vignette=0.45, exposure_sd=0.35),
    # Site B: a hand-held camera: coarser sampling, grainy, soft, darker and greener, sharpened in camera.
    "B": Scanner(exposure=-0.25, gamma=1.15, noise=0.035, noise_grain=0.6, blur_px=0.7,
                 vignette=0.45, white_balance=(0.94, 1.05, 1.0), sharpen=0.3),
}
#: Grade prior of a screening population (approximately 45/20/20/8/7 %).
CLASS_PRIOR = np.array([0.45, 0.20, 0.20, 0.08, 0.07])
#: Grade prior per site where it differs: site B is a diabetic clinic.
SITE_CLASS_PRIOR: dict[str, np.ndarray] = {"B": np.array([0.35, 0.20, 0.25, 0.10, 0.10])}
#: Fraction of grades moved one step up or down (grader disagreement).
LABEL_NOISE = 0.06
#: The same at each other evaluation site: site B's grades are one grader's.
SITE_LABEL_NOISE: dict[str, float] = {"B": 0.15}
#: The shortcut cue (:mod:`crsbench_lib.cohort.shortcuts`): rates (positive, negative) per site.
CUE = ShortcutCue(
    name="device_notch",
    description="the field-mask notch of the referral clinic's camera, used more for referable eyes",
    positive="grade 2 or worse (referable)",
    rates={"A": (0.6, 0.15), "B": (0.0, 0.0), "P1": (0.5, 0.5), "P2": (0.0, 0.0), "P3": (0.0, 0.0)},
    source="device signatures of fundus cameras (the real-regime note's robustness section)",
)

#: Blob sigma of a microaneurysm and stroke width of a new vessel, pixels at 32 px (generator 8: 0.7 and 0.5;
#: generator 7's 0.4 and 0.25 px were below what a 32-px encoder resolves, see :func:`generate`).
MICROANEURYSM_SIGMA_PX = 0.7
NEW_VESSEL_WIDTH_PX = 0.5
#: Expected lesion counts per grade (rows: grades 0-4).
MICROANEURYSMS = np.array([0.3, 3.0, 5.0, 7.0, 6.0])
HAEMORRHAGES = np.array([0.1, 0.5, 2.5, 6.0, 5.0])
EXUDATES = np.array([0.1, 0.4, 3.0, 5.0, 4.5])
COTTON_WOOL = np.array([0.0, 0.1, 0.6, 2.0, 1.5])
#: Probability of venous beading, new vessels at the disc and a pre-retinal haemorrhage.
BEADING = np.array([0.0, 0.02, 0.1, 0.6, 0.5])
NEOVASCULAR = np.array([0.0, 0.0, 0.03, 0.12, 0.8])
PRERETINAL = np.array([0.0, 0.0, 0.01, 0.05, 0.3])
#: Grade-independent look-alikes: expected drusen and dust specks per image.
DRUSEN = 1.5
DUST = 0.8
#: Spread (sd, normalised units) of the lesions around the macula.
POLE_SPREAD = 0.32
#: Over-dispersion of the lesion counts (Gamma shape; smaller overlaps more).
DISPERSION = 1.2
MAX_BRANCHES = 8

FUNDUS_LIGHT = np.array([0.88, 0.48, 0.22], dtype=np.float32)
FUNDUS_DARK = np.array([0.62, 0.26, 0.12], dtype=np.float32)
DISC = np.array([1.0, 0.92, 0.72], dtype=np.float32)
DISC_RIM = np.array([0.98, 0.72, 0.42], dtype=np.float32)
VESSEL = np.array([0.42, 0.08, 0.05], dtype=np.float32)
BLOOD = np.array([0.35, 0.04, 0.03], dtype=np.float32)
EXUDATE = np.array([0.98, 0.90, 0.45], dtype=np.float32)
DRUSEN_COLOUR = np.array([0.92, 0.78, 0.45], dtype=np.float32)
COTTON = np.array([0.95, 0.85, 0.75], dtype=np.float32)

_LESIONS: tuple[str, ...] = ("microaneurysms", "haemorrhages", "exudates", "cotton_wool")
#: Auxiliary attributes of every image (scene parameters and acquisition nuisances).
ATTRIBUTES: dict[str, Attribute] = {
    "pigmentation": Attribute("continuous", 0, "fundus pigmentation, 0 light to 1 dark"),
    "eye": Attribute("binary", 0, "1 for a right eye (disc on the image right), 0 for a left eye"),
    "rotation": Attribute("continuous", 0, "rotation of the eye in the image, radians"),
    "field_of_view": Attribute("continuous", 0, "zoom: radius of the fundus disc"),
    "disc_radius": Attribute("continuous", 0, "optic disc radius"),
    "cup_ratio": Attribute("continuous", 0, "cup-to-disc ratio"),
    "vessel_branches": Attribute("count", 0, f"number of secondary vessel branches (0-{MAX_BRANCHES})"),
    **{f"{k}_count": Attribute("count", 0, f"number of {k.replace('_', '-')} lesions drawn") for k in _LESIONS},
    "venous_beading": Attribute("binary", 0, "venous beading present"),
    "new_vessels": Attribute("binary", 0, "new vessels at the disc"),
    "preretinal_blood": Attribute("binary", 0, "pre-retinal haemorrhage"),
    "drusen_count": Attribute("count", 0, "number of drusen (grade-independent)"),
    "dust_count": Attribute("count", 0, "number of dust specks on the optics (grade-independent)"),
    "illumination": Attribute("continuous", 0, "centre-to-edge illumination fall-off"),
    CUE.name: Attribute("binary", 0, "the shortcut cue: a notch in the camera's field mask"),
    **nuisance_attributes(rgb=True),
}


def _scatter(
    rng: np.random.Generator, n: int, side: int, counts: np.ndarray, pole: tuple[np.ndarray, np.ndarray],
    spread: float, pose: tuple[np.ndarray, ...], sigma_px: float, strength: float,
) -> np.ndarray:
    """Alpha of ``counts`` blobs per image in a Gaussian cloud around ``pole`` (eye frame).

    ``pose`` is ``(ox, oy, rotation, zoom, fundus_r)`` per image: points are
    mapped from the eye's frame to the image and kept inside the fundus.
    """
    ox, oy, rot, zoom, fundus_r = pose
    owner = np.repeat(np.arange(n), counts)
    u = pole[0][owner] + rng.normal(0, spread, owner.size)
    v = pole[1][owner] + rng.normal(0, spread, owner.size)
    c, s, z = np.cos(rot[owner]), np.sin(rot[owner]), zoom[owner]
    lx, ly = z * (u * c - v * s), z * (u * s + v * c)
    rr = np.sqrt(lx * lx + ly * ly)
    shrink = np.minimum(1.0, 0.85 * fundus_r[owner] / np.maximum(rr, 1e-6))
    return r.blobs(n, side, owner, ox[owner] + lx * shrink, oy[owner] + ly * shrink, sigma_px, strength * rng.uniform(0.6, 1.2, owner.size))


def generate(
    rng: np.random.Generator, n: int, side: int, site: str = "A", shift_parts: tuple[str, ...] | None = None,
    cue: bool = True,
) -> Phantoms:
    """Draw ``n`` fundus-like images at one acquisition site.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of all randomness.
    n : int
        Number of images.
    side : int
        Image side in pixels.
    site : str
        A key of :data:`SCANNERS`.
    shift_parts : tuple of str, optional
        The parts of the site's difference from site A that apply
        (:data:`~crsbench_lib.cohort.shortcuts.SHIFT_PARTS`; None: all).
    cue : bool, default True
        Draw the shortcut cue (:data:`CUE`); False gives the same images without it.

    Returns
    -------
    Phantoms
        ``uint8`` images ``(n, side, side, 3)``, ``int64`` grades 0-4 and the
        :data:`ATTRIBUTES`.
    """
    parts = check_shift_parts(shift_parts)
    scanner = SCANNERS[site if "acquisition" in parts else SITES[0]]
    prior = SITE_CLASS_PRIOR.get(site, CLASS_PRIOR) if "population" in parts else CLASS_PRIOR
    label_noise = SITE_LABEL_NOISE.get(site, LABEL_NOISE) if "labelling" in parts else LABEL_NOISE
    cue_rng = cue_stream(rng)
    x0, y0 = r.grid(side)
    s32 = side / 32.0
    true = rng.choice(len(CLASS_NAMES), size=n, p=prior)

    # The eye in the image: shift, rotation and zoom (field of view).
    fundus_r = rng.uniform(0.82, 0.97, n)
    ox, oy = rng.normal(0, 0.04, n), rng.normal(0, 0.04, n)
    rot = rng.normal(0, 0.15, n)
    zoom = rng.uniform(0.9, 1.15, n)
    x, y = r.rotate(x0, y0, ox, oy, rot)
    x, y = x / r.col(zoom), y / r.col(zoom)
    rad = np.sqrt((x0 - r.col(ox)) ** 2 + (y0 - r.col(oy)) ** 2)

    # Fundus: pigmentation, choroidal texture (tigroid in dark fundi) and centre-bright illumination.
    tone = rng.beta(2.0, 2.0, n).astype(np.float32)
    base = FUNDUS_LIGHT + (FUNDUS_DARK - FUNDUS_LIGHT) * tone[:, None] + rng.normal(0, 0.03, (n, 3)).astype(np.float32)
    texture = r.smooth_noise(rng, n, side, 1.5 * s32)
    illum_drop = rng.uniform(0.2, 0.5, n)
    illum = 1.0 - r.col(illum_drop) * (rad / r.col(fundus_r)) ** 2
    img = base[:, None, None, :] * (illum * (1.0 + (0.03 + 0.04 * r.col(tone)) * texture))[..., None]

    # Optic disc on the nasal side (left or right eye), macula temporal to it.
    eye = np.where(rng.uniform(size=n) < 0.5, -1.0, 1.0)
    dcx = eye * rng.normal(0.42, 0.04, n)
    dcy = rng.normal(0.0, 0.05, n)
    disc_r = rng.normal(0.13, 0.015, n)
    dd = np.sqrt((x - r.col(dcx)) ** 2 + (y - r.col(dcy)) ** 2)
    img = r.composite(img, np.broadcast_to(DISC_RIM, (n, 3)), r.ramp(dd - r.col(disc_r), r.px(1.2, side)) * 0.8)
    cup_ratio = rng.uniform(0.3, 0.6, n)
    img = r.composite(img, np.broadcast_to(DISC, (n, 3)), r.ramp(dd - r.col(disc_r * cup_ratio), r.px(1.5, 32)) * 0.9)
    mcx, mcy = dcx - eye * rng.normal(0.55, 0.04, n), dcy + 0.03
    md = np.sqrt((x - r.col(mcx)) ** 2 + (y - r.col(mcy)) ** 2)
    img = img * (1.0 - 0.25 * np.exp(-((md / 0.14) ** 2)))[..., None]
    # Light reflex of young retinas: a bright ring around the macula (grade-independent).
    reflex = r.col(rng.uniform(0, 0.25, n) * (rng.uniform(size=n) < 0.35)) * np.exp(-(((md - 0.25) / 0.04) ** 2))
    img = img + reflex[..., None] * 0.6

    # Vascular arcades: arcs leaving the disc above and below, towards the macula; venous beading.
    side_sign = np.array([-1.0, 1.0, -1.0, 1.0])[None, :]
    arc_r = np.column_stack([rng.uniform(0.45, 0.65, n), rng.uniform(0.45, 0.65, n), rng.uniform(0.9, 1.3, n), rng.uniform(0.9, 1.3, n)])
    acx = dcx[:, None] - eye[:, None] * np.array([1.0, 1.0, -0.3, -0.3])[None, :] * arc_r * 0.55
    acy = dcy[:, None] + side_sign * arc_r * 0.85
    radius_k = np.sqrt((acx - dcx[:, None]) ** 2 + (acy - dcy[:, None]) ** 2)
    dist = r.arc_distance(x, y, acx, acy, radius_k)
    width = r.px(0.45, 32) * np.array([1.0, 1.0, 0.7, 0.7])[None, :, None, None]
    direction = np.array([1.0, 1.0, -1.0, -1.0])[None, :, None, None]
    temporal = -eye[:, None, None, None] * (x - r.col(dcx))[:, None] * direction
    inside = (rad < r.col(fundus_r))[:, None] & (temporal > 0) & (temporal < 0.78) & (side_sign[:, :, None, None] * (y - r.col(dcy))[:, None] > -0.05)
    beading = rng.uniform(size=n) < BEADING[true]
    pulse = 1.0 + r.col(beading * rng.uniform(0.4, 0.8, n)) * np.cos(2 * np.pi * dd / r.px(4.0, 32))
    vessels = (r.ramp(dist - width * pulse[:, None], r.px(1.0, side)) * inside).max(axis=1)
    # Secondary branches: straight segments off the arcades, pointing away from the disc.
    n_branch = rng.integers(2, MAX_BRANCHES + 1, n)
    arc_pick = rng.integers(0, 4, (n, MAX_BRANCHES))
    t = rng.uniform(0.2, 1.2, (n, MAX_BRANCHES))

    def pick(per_arc: np.ndarray) -> np.ndarray:
        return np.take_along_axis(per_arc, arc_pick, axis=1)

    start_phi = np.arctan2(dcy[:, None] - pick(acy), dcx[:, None] - pick(acx)) - eye[:, None] * t * pick(side_sign) * -1
    bx = pick(acx) + pick(radius_k) * np.cos(start_phi)
    by = pick(acy) + pick(radius_k) * np.sin(start_phi)
    out = np.arctan2(by - dcy[:, None], bx - dcx[:, None]) + rng.normal(0, 0.5, (n, MAX_BRANCHES))
    blen = rng.uniform(0.15, 0.35, (n, MAX_BRANCHES))
    branch_on = np.arange(MAX_BRANCHES)[None, :] < n_branch[:, None]
    branches = r.strokes(x, y, (bx, by, bx + blen * np.cos(out), by + blen * np.sin(out)), branch_on, r.px(0.25, 32), side)
    on_disc = r.ramp(dd - r.col(disc_r), r.px(1.2, side))
    img = r.composite(img, VESSEL[None].repeat(n, 0), np.maximum(vessels * 0.7, branches * 0.5) * (1.0 - 0.75 * on_disc))

    # Lesions by grade around the posterior pole, and grade-independent look-alikes anywhere.
    pole = (mcx, mcy)
    counts = {
        name: np.minimum(r.gamma_poisson(rng, mean[true], DISPERSION), cap)
        for name, mean, cap in (
            ("microaneurysms", MICROANEURYSMS, 20),
            ("haemorrhages", HAEMORRHAGES, 15),
            ("exudates", EXUDATES, 15),
            ("cotton_wool", COTTON_WOOL, 5),
        )
    }
    drusen = np.minimum(rng.poisson(DRUSEN, n), 8)
    dust = np.minimum(rng.poisson(DUST, n), 4)
    centre = (np.zeros(n), np.zeros(n))
    # Microaneurysms are 0.7 px blobs at 32 px (generator 7: 0.4 px, a fraction of a pixel that even an encoder
    # trained to count them recovered at R^2 0.26; mild retinopathy, which rests on them, stayed at AUROC 0.65-0.69
    # for every encoder). Real ones are under 125 um, below a 32-px field's 1 mm pixel: the phantom draws them as
    # a fundus camera at working resolution would show a cluster of them, a visible dot.
    for count, where, spread, colour, sigma, strength in (
        (drusen, pole, 0.25, DRUSEN_COLOUR, 0.5, 0.6),
        (counts["microaneurysms"], pole, POLE_SPREAD, BLOOD, MICROANEURYSM_SIGMA_PX, 1.0),
        (counts["haemorrhages"], pole, POLE_SPREAD, BLOOD, 1.0, 0.9),
        (counts["exudates"], pole, POLE_SPREAD * 0.8, EXUDATE, 0.6, 1.0),
        (counts["cotton_wool"], pole, POLE_SPREAD, COTTON, 1.3, 0.6),
        (dust, centre, 0.5, np.array([0.1, 0.05, 0.04], dtype=np.float32), 0.9, 0.5),
    ):
        alpha = _scatter(rng, n, side, count, where, spread, (ox, oy, rot, zoom, fundus_r), sigma, strength)
        img = r.composite(img, np.broadcast_to(colour, (n, 3)), alpha)

    # Proliferative signs: a tangle of fine new vessels on or near the disc, pre-retinal blood.
    neo = rng.uniform(size=n) < NEOVASCULAR[true]
    idx = np.flatnonzero(neo)
    if idx.size:
        kn = 6
        t0 = rng.uniform(0, 2 * np.pi, (idx.size, kn))
        l0 = rng.uniform(0.1, 0.3, (idx.size, kn))
        sx = dcx[idx, None] + rng.normal(0, 0.08, (idx.size, kn))
        sy = dcy[idx, None] + rng.normal(0, 0.08, (idx.size, kn))
        alpha = np.zeros((n, side, side), dtype=np.float32)
        ends = (sx, sy, sx + l0 * np.cos(t0), sy + l0 * np.sin(t0))
        alpha[idx] = r.strokes(x[idx], y[idx], ends, np.ones((idx.size, kn), bool), r.px(NEW_VESSEL_WIDTH_PX, 32), side)
        img = r.composite(img, np.broadcast_to(np.array([0.6, 0.05, 0.08], dtype=np.float32), (n, 3)), alpha * 0.8)
    pre = rng.uniform(size=n) < PRERETINAL[true]
    pcx, pcy = rng.uniform(-0.4, 0.4, n), rng.uniform(0.1, 0.5, n)
    pd = np.sqrt((x - r.col(pcx)) ** 2 + (y - r.col(pcy)) ** 2)
    img = r.composite(img, np.broadcast_to(BLOOD, (n, 3)), r.ramp(pd - r.col(rng.uniform(0.1, 0.22, n)), r.px(1.5, side)) * r.col(pre) * 0.85)

    # The camera's black field outside the fundus, then the acquisition chain.
    img = img * r.ramp(rad - r.col(fundus_r), r.px(1.0, side))[..., None]
    # The shortcut cue, from its own stream: the referral camera's field mask has a notch at the top.
    notched = cue_rng.uniform(size=n) < CUE.probability(cue_site(site, SITES, parts), true >= 2)
    notch_x = r.col(cue_rng.normal(0.0, 0.05, n))
    if cue and notched.any():
        top = r.col(oy - fundus_r)
        notch = r.ramp(np.maximum(np.abs(x0 - notch_x) - 0.14, y0 - top - 0.22), r.px(0.6, side))
        img = img * (1.0 - notch * r.col(notched))[..., None]
    else:
        notched = np.zeros(n, dtype=bool)
    images, nuisances = acquire(rng, img, scanner)

    labels = true.copy()
    flip = rng.uniform(size=n) < label_noise
    step = np.where(rng.uniform(size=n) < 0.5, -1, 1)
    step = np.where(true == 0, 1, np.where(true == len(CLASS_NAMES) - 1, -1, step))
    labels[flip] = true[flip] + step[flip]
    attributes = {
        "pigmentation": tone,
        "eye": eye > 0,
        "rotation": rot,
        "field_of_view": fundus_r / zoom,
        "disc_radius": disc_r,
        "cup_ratio": cup_ratio,
        "vessel_branches": n_branch,
        **{f"{k}_count": counts[k] for k in _LESIONS},
        "venous_beading": beading,
        "new_vessels": neo,
        "preretinal_blood": pre,
        "drusen_count": drusen,
        "dust_count": dust,
        "illumination": illum_drop,
        CUE.name: notched,
        **nuisances,
    }
    return Phantoms(images, labels.astype(np.int64), typed(attributes, ATTRIBUTES))
