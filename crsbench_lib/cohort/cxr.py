"""Radiology phantom: frontal chest films with four co-occurring findings.

Each image shows a thorax (soft tissue, spine and mediastinum, clavicles), two
lungs with vascular markings and ribs, a heart and the diaphragm domes, of a
patient of random build, positioned with random shift (sd about 2.4 cm),
rotation (sd about 4.5 degrees) and magnification (0.80-1.10: patient size and
source distance), at random depth of inspiration: films are centred by hand,
on patients of every size, so the anatomy is never at the same pixels twice,
and a probe that reads fixed pixels (where the heart border or a costophrenic
angle usually lies) reads them blurred by that spread, as it would on real
films. Findings (multi-label):

- cardiomegaly: cardiothoracic ratio drawn around 0.55 instead of 0.45
  (the conventional threshold is 0.5, so the two distributions overlap); the
  heart's absolute width also follows the patient's build, so it is the
  *ratio* to the thorax, a configuration, that carries the finding;
- effusion: fluid filling a costophrenic angle with a meniscus, one or both
  sides, from a blunted angle to a large collection;
- nodule: a round opacity of 4.4-7.2 cm, by size a mass (at 32 px one pixel
  is about 1.25 cm, so a nodule under 3 cm would be one or two pixels and
  cannot be told from an ECG electrode; generator 8 made it larger and denser
  than generator 7's 3-6 cm so that it is visible at this resolution, a
  realism cost the cohort page states) at a random place in a lung
  (look-alikes: nipple shadows, in about a third of films, and ECG
  electrodes);
- consolidation: a fuzzy, patchy air-space opacity with air bronchograms at a
  random place in a lung.

Labels are drawn through a Gaussian copula: correlated normal scores cut at
each finding's prevalence, which gives realistic co-occurrence (effusion with
cardiomegaly, as in heart failure; effusion with consolidation, as in
pneumonia) without tying any two findings deterministically.

Site B is the institutional shift (world v4: by mechanism, in four parts,
each with a switch, :mod:`crsbench_lib.cohort.shortcuts`):

- *acquisition*: a computed-radiography unit of another vendor: 200 um plate
  pixels where site A's flat panel reads 139 um (``resolution`` 0.7), the
  plate's correlated noise grain, the console's edge enhancement (unsharp
  mask), another tone curve (gamma) and more noise;
- *population*: an in-patient population, imaged antero-posterior (heart
  magnified a little, shallower inspiration, more rotation), with the higher
  prevalences of in-patients, more support devices and burned-in markers on
  most films;
- *labelling*: labels read from reports by an automatic labeller rather than
  by a radiologist's review: a labeller misses mentions more often than it
  invents them, so site B's labels are asymmetric (a present finding kept
  with probability 0.92, an absent one marked present with probability
  0.015; at site B's nodule prevalence that is an F1 of about 0.90, the low
  end of CheXpert's labeller on mentions, 0.90-0.95, Irvin et al., AAAI
  2019), where site A's are 2 % flipped either way;

The shortcut cue is the ``PORTABLE`` stamp (:data:`CUE`): at site A the
bedside films of in-patients, who more often have effusion or consolidation;
at site B every unit is portable and most films carry it whatever they show.
Sites ``P1``-``P3`` are further scanners seen only in pretraining pools.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import ndtri

from crsbench_lib.cohort import _render as r
from crsbench_lib.cohort.acquisition import Attribute, Phantoms, Scanner, acquire, nuisance_attributes, typed
from crsbench_lib.cohort.shortcuts import ShortcutCue, check_shift_parts, cue_site, cue_stream

NAME = "cxr"
DOMAIN = "radiology"
TASK = "multilabel"
CLASS_NAMES: tuple[str, ...] = ("cardiomegaly", "effusion", "nodule", "consolidation")
#: Evaluation sites: train, validate and test at A; test again at B (the shift).
SITES: tuple[str, ...] = ("A", "B")


@dataclass(frozen=True)
class Positioning:
    """How a site positions its patients and which population it images.

    Attributes
    ----------
    prevalence : tuple of float
        Prevalence of each finding (order of :data:`CLASS_NAMES`).
    magnify : float
        Heart magnification (antero-posterior films magnify the heart).
    inspiration : float
        Mean depth of inspiration (lung height factor).
    rotation, shift : float
        Sd of the patient's rotation (radians) and shift (normalised units).
    markers : float
        Probability of burned-in markers (laterality block and text).
    devices : float
        Probability of ECG leads and, separately, half of it of a central line
        (support devices, more common in inpatients).
    """

    prevalence: tuple[float, float, float, float] = (0.20, 0.22, 0.15, 0.18)
    magnify: float = 1.0
    inspiration: float = 1.0
    rotation: float = 0.08
    shift: float = 0.12
    markers: float = 0.15
    devices: float = 0.25


#: Sites pretraining pools draw from (never an evaluation shift site).
POOL_SITES: tuple[str, ...] = ("A", "P1", "P2", "P3")
# Automatic exposure control keeps a radiograph's exposure tighter than a camera's.
_DETECTOR = {"exposure_sd": 0.15, "noise": 0.025, "noise_sd": 0.3, "vignette": 0.1}
#: Detector chain per site (grey images: white balance unused).
SCANNERS: dict[str, Scanner] = {
    "A": Scanner(**_DETECTOR),
    # A computed-radiography unit: coarser plate sampling (200 um against site A's 139 um flat
    # panel), the plate's phosphor grain, the console's edge enhancement. At 32 px a native pixel
    # is far below the working pixel, so these are working-scale stand-ins with assumed magnitudes
    # for what another chain leaves after resampling (softer, grainier, processed), not detector physics.
    "B": Scanner(**{**_DETECTOR, "exposure": 0.1, "gamma": 0.85, "noise": 0.038, "vignette": 0.15}, blur_px=0.65,
                 resolution=139 / 200, noise_grain=0.8, sharpen=0.8),
    "P1": Scanner(**{**_DETECTOR, "exposure": -0.2, "gamma": 1.15, "noise": 0.02}, blur_px=0.4),
    "P2": Scanner(**{**_DETECTOR, "gamma": 0.9, "noise": 0.04, "vignette": 0.2}, blur_px=0.55),
    "P3": Scanner(**{**_DETECTOR, "exposure": 0.2, "gamma": 1.05, "noise": 0.03}, blur_px=0.8),
}
#: Patients and positioning per site.
POSITIONING: dict[str, Positioning] = {
    "A": Positioning(),
    "B": Positioning(prevalence=(0.28, 0.30, 0.12, 0.25), magnify=1.06, inspiration=0.95, rotation=0.10, shift=0.15, markers=0.7, devices=0.4),
    "P1": Positioning(prevalence=(0.15, 0.15, 0.12, 0.12), markers=0.3),
    "P2": Positioning(prevalence=(0.30, 0.32, 0.10, 0.30), magnify=1.04, inspiration=0.96, rotation=0.09, markers=0.5),
    "P3": Positioning(shift=0.15, markers=0.05),
}
#: Prevalence of each finding at each site.
PREVALENCE = {site: np.array(p.prevalence) for site, p in POSITIONING.items()}
#: Correlation of the copula's normal scores (cardiomegaly, effusion, nodule, consolidation).
CORRELATION = np.array(
    [
        [1.0, 0.5, 0.0, 0.1],
        [0.5, 1.0, 0.0, 0.35],
        [0.0, 0.0, 1.0, 0.05],
        [0.1, 0.35, 0.05, 1.0],
    ]
)
#: Range of the patient's magnification in the field (patient size and source-detector distance).
MAGNIFICATION = (0.80, 1.10)
#: Probability that each label is flipped (reader error) at the training site.
LABEL_NOISE = 0.02
#: Other evaluation sites' labellers, as (P(label present | finding absent), P(label absent | finding present)):
#: site B's labels come from an automatic report labeller, which misses more than it invents.
SITE_LABEL_ERRORS: dict[str, tuple[float, float]] = {"B": (0.015, 0.08)}
#: The shortcut cue (:mod:`crsbench_lib.cohort.shortcuts`): rates (positive, negative) per site.
CUE = ShortcutCue(
    name="portable_token",
    description="the PORTABLE stamp of bedside films, burned in at the top of the film",
    positive="effusion or consolidation",
    rates={"A": (0.55, 0.15), "B": (0.7, 0.7), "P1": (0.3, 0.3), "P2": (0.6, 0.25), "P3": (0.0, 0.0)},
    source="Zech et al., PLoS Med 2018; DeGrave et al., Nat Mach Intell 2021",
)
#: Cardiothoracic ratio (mean, sd) without and with cardiomegaly.
CTR = ((0.45, 0.045), (0.55, 0.05))
# Lesion radius (half-widths of the field, which spans about 40 cm) and contrast
# ranges. The field is 32 px, so one pixel is about 1.25 cm: a nodule under
# 3 cm is one or two pixels and cannot be told from an ECG electrode or a
# vessel end-on, so the radiology phantom's focal finding is a mass of
# 4.4-7.2 cm (radius 0.11-0.18), and consolidation a segmental to lobar
# opacity. Generator 7 drew the nodule at 3-6 cm and contrast 0.12-0.30 and
# consolidation at contrast 0.10-0.22: a linear probe on the pixels then read
# the nodule at AUROC 0.55 and even an encoder pretrained on the labels at
# 0.65, so the finding was all but invisible at 32 px (docs/default-cohort.md,
# "What a v3 prototype measured").
#: Width of the film's field in centimetres (it spans 2 normalised units).
FIELD_CM = 40.0
NODULE_RADIUS = (0.11, 0.18)
NODULE_CONTRAST = (0.22, 0.40)
CONSOLIDATION_RADIUS = (0.18, 0.32)
CONSOLIDATION_CONTRAST = (0.16, 0.30)

#: Auxiliary attributes of every image (scene parameters and acquisition nuisances).
ATTRIBUTES: dict[str, Attribute] = {
    "heart_size": Attribute("continuous", 0, "cardiothoracic ratio as drawn (before magnification)"),
    "body_width": Attribute("continuous", 0, "half-width of the thorax (build)"),
    "soft_tissue": Attribute("continuous", 0, "soft-tissue density (habitus)"),
    "inspiration": Attribute("continuous", 0, "depth of inspiration (lung height factor)"),
    "rotation": Attribute("continuous", 0, "patient rotation, radians"),
    "shift_x": Attribute("continuous", 0, "patient shift, horizontal"),
    "scale": Attribute("continuous", 0, "patient magnification in the field"),
    "rib_visibility": Attribute("continuous", 0, "contrast of the ribs"),
    "vascular_markings": Attribute("continuous", 0, "contrast of the lung markings"),
    "breast_shadows": Attribute("binary", 0, "breast soft-tissue shadows over the lower lungs"),
    "nipple_shadows": Attribute("binary", 0, "nipple shadows (nodule look-alikes)"),
    "opacity_side": Attribute("binary", 0, "lung holding the nodule / consolidation (1 = image right)"),
    "ecg_leads": Attribute("count", 0, "number of ECG lead electrodes (small round, nodule look-alikes)"),
    "central_line": Attribute("binary", 0, "a central venous line"),
    "markers": Attribute("binary", 0, "burned-in markers present"),
    CUE.name: Attribute("binary", 0, "the shortcut cue: a PORTABLE stamp at the top of the film"),
    # What a radiology report says about each finding besides its presence: how
    # much fluid, how large and dense the opacity (0 where the finding is absent).
    # Without them the multi-task recipe, which regresses the scene attributes,
    # was asked about cardiomegaly (heart_size) and about none of the other
    # three findings; with them it is report-supervised, as broad medical
    # generalists trained on image-report pairs are.
    "effusion_amount": Attribute("continuous", 0, "effusion: fluid level x fluid contrast (0 without effusion)"),
    "nodule_conspicuity": Attribute("continuous", 0, "nodule: radius squared x contrast (0 without a nodule)"),
    "consolidation_conspicuity": Attribute(
        "continuous", 0, "consolidation: radius squared x contrast (0 without consolidation)"),
    **nuisance_attributes(rgb=False),
}


def draw_labels(rng: np.random.Generator, n: int, site: str) -> np.ndarray:
    """Multi-label findings through a Gaussian copula (see module docstring)."""
    chol = np.linalg.cholesky(CORRELATION)
    z = rng.standard_normal((n, len(CLASS_NAMES))) @ chol.T
    return (z > ndtri(1.0 - PREVALENCE[site])).astype(np.uint8)


def generate(
    rng: np.random.Generator, n: int, side: int, site: str = "A", shift_parts: tuple[str, ...] | None = None,
    cue: bool = True,
) -> Phantoms:
    """Draw ``n`` chest films at ``site``.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of all randomness.
    n : int
        Number of images.
    side : int
        Image side in pixels.
    site : str
        A key of :data:`SCANNERS` (and :data:`POSITIONING`).
    shift_parts : tuple of str, optional
        The parts of the site's difference from site A that apply
        (:data:`~crsbench_lib.cohort.shortcuts.SHIFT_PARTS`; None: all); a
        part left out takes site A's value.
    cue : bool, default True
        Draw the shortcut cue (:data:`CUE`); False gives the same films
        without it.

    Returns
    -------
    Phantoms
        ``uint8`` images ``(n, side, side)``, ``uint8`` 0/1 findings ``(n, 4)``
        in the order of :data:`CLASS_NAMES`, and the :data:`ATTRIBUTES`.
    """
    parts = check_shift_parts(shift_parts)
    home = SITES[0]
    pos = POSITIONING[site if "population" in parts else home]
    scanner = SCANNERS[site if "acquisition" in parts else home]
    false_pos, false_neg = (SITE_LABEL_ERRORS.get(site, (LABEL_NOISE, LABEL_NOISE)) if "labelling" in parts
                            else (LABEL_NOISE, LABEL_NOISE))
    cue_rng = cue_stream(rng)
    s32 = side / 32.0
    true = draw_labels(rng, n, site if "population" in parts else home)
    cardio, effusion, nodule, consol = (true[:, i].astype(bool) for i in range(4))

    # Positioning: rotation, shift and scale of the patient in the field.
    x0, y0 = r.grid(side)
    rot = rng.normal(0, pos.rotation, n)
    scale = rng.uniform(*MAGNIFICATION, n)
    sx, sy = rng.normal(0, pos.shift, n), rng.normal(0, pos.shift, n)
    x, y = r.rotate(x0, y0, sx, sy, rot)
    x, y = x / r.col(scale), y / r.col(scale)

    # Thorax and soft tissue (build and habitus vary).
    body_w = rng.uniform(0.8, 0.98, n)
    soft = rng.uniform(0.32, 0.5, n)
    body = r.ramp(np.abs(x) - r.col(body_w) * (1.0 - 0.15 * np.clip(-y, 0, 1) ** 2), r.px(2.0, side))
    img = 0.06 + r.col(soft) * body

    # Lungs: two rounded regions, height set by inspiration; the diaphragm dome cuts them.
    insp = pos.inspiration * rng.uniform(0.9, 1.08, n)
    lung_top = -0.72
    lung_w = rng.uniform(0.27, 0.35, n)
    lung_cx = r.col(0.38 * body_w / 0.92)
    dome_y = r.col(lung_top + 1.35 * insp)
    lungs = np.zeros((n, side, side), dtype=np.float32)
    for sign in (-1.0, 1.0):
        depth = np.clip((y - lung_top) / (dome_y - lung_top), 0.0, 1.0)
        lateral = lung_cx + r.col(lung_w) * (0.45 + 0.55 * np.sqrt(depth))
        ax_ = sign * x
        dome = dome_y + (0.05 if sign > 0 else 0.0) + 0.3 * (ax_ - lung_cx) ** 2 - 0.1 * np.abs(ax_ - lung_cx)
        top = lung_top + 0.6 * ((ax_ - lung_cx) / r.col(lung_w)) ** 2
        inside = np.maximum(np.maximum(0.1 - ax_, ax_ - lateral), np.maximum(top - y, y - dome))
        lungs = np.maximum(lungs, r.ramp(inside, r.px(1.5, side)))
    # Markings, ribs (curving down laterally) and hila; their contrast varies with build and technique.
    markings = rng.uniform(0.02, 0.05, n)
    vessels = r.smooth_noise(rng, n, side, 0.8 * s32)
    rib_vis = rng.uniform(0.02, 0.08, n)
    rib_phase = r.col(rng.uniform(0, 2 * np.pi, n))
    rib_f = r.col(2 * np.pi / rng.uniform(0.22, 0.3, n))
    ribs = 0.5 + 0.5 * np.cos(rib_f * (y - 0.3 * np.abs(x) + 0.25 * x * x) + rib_phase)
    hilum = np.exp(-((np.abs(x) - 0.2) ** 2 + (y + 0.05) ** 2) / 0.08)
    lung_density = -0.30 + (r.col(markings) + 0.04 * hilum) * vessels + r.col(rib_vis) * ribs + 0.06 * hilum
    img = img + lungs * lung_density
    # Clavicles: bright oblique bands across the apices.
    clav_y = r.col(rng.uniform(-0.72, -0.6, n))
    clav = r.ramp(np.abs(y - clav_y + 0.25 * np.abs(x)) - r.px(0.8, 32), r.px(1.0, side)) * (np.abs(x) > 0.1) * body
    img = img + 0.12 * clav

    # Spine and mediastinum, then the heart (its width sets the cardiothoracic ratio).
    med_w = r.col(rng.uniform(0.1, 0.14, n))
    img = img + 0.22 * r.ramp(np.abs(x) - med_w, r.px(1.5, side)) * body
    ctr = np.where(cardio, rng.normal(*CTR[1], n), rng.normal(*CTR[0], n))
    thorax_w = 2 * (0.38 * body_w / 0.92 + lung_w)
    heart_hw = ctr * pos.magnify * thorax_w / 2.0
    hcx = r.col(0.3 * heart_hw)  # the heart lies mostly left of the midline (image right)
    hcy = dome_y - r.col(rng.uniform(0.26, 0.32, n))
    hh = r.col(rng.uniform(0.26, 0.34, n))
    hd = np.sqrt(((x - hcx) / r.col(heart_hw)) ** 2 + ((y - hcy) / hh) ** 2) - 1.0
    heart = r.ramp(hd * r.col(heart_hw), r.px(1.5, side))
    img = img + 0.3 * heart * lungs + 0.08 * heart * (1.0 - lungs)

    # Breast shadows (lower lungs) and nipple shadows (round, nodule-like) in some films.
    breasts = rng.uniform(size=n) < 0.4
    bd = np.sqrt((np.abs(x) - lung_cx) ** 2 / 0.12 + (y - dome_y + 0.12) ** 2 / 0.05)
    img = img + 0.07 * r.ramp(bd - 1.0, r.px(3.0, side)) * r.col(breasts) * lungs
    nipples = rng.uniform(size=n) < 0.3
    nd = np.sqrt((np.abs(x) - lung_cx - 0.05) ** 2 + (y - dome_y + 0.22) ** 2)
    img = img + 0.12 * r.ramp(nd - r.px(1.0, 32), r.px(1.0, side)) * r.col(nipples)

    # Effusion: fluid in one or both costophrenic angles with a concave meniscus.
    side_choice = rng.integers(0, 3, n)  # 0 right, 1 left, 2 both
    level = rng.uniform(0.03, 0.26, n)
    fluid = np.zeros_like(img)
    for k, sign in enumerate((-1.0, 1.0)):
        on = r.col(effusion & ((side_choice == k) | (side_choice == 2)))
        meniscus = dome_y - r.col(level) + 0.4 * (np.abs(x) - lung_cx) ** 2 * np.sign(np.abs(x) - lung_cx) * -1.0
        region = r.ramp(meniscus - y, r.px(1.5, side)) * r.ramp(-sign * x, r.px(1.0, side)) * lungs
        fluid = np.maximum(fluid, region * on)
    fluid_contrast = rng.uniform(0.08, 0.22, n)
    img = img + r.col(fluid_contrast) * fluid

    # Nodule and consolidation, placed inside a lung.
    lung_sign = np.where(rng.uniform(size=n) < 0.5, -1.0, 1.0)
    opacities = (
        (nodule, rng.uniform(*NODULE_RADIUS, n), rng.uniform(*NODULE_CONTRAST, n), 1.0),
        (consol, rng.uniform(*CONSOLIDATION_RADIUS, n), rng.uniform(*CONSOLIDATION_CONTRAST, n), 4.0),
    )
    for present, radius, contrast, edge in opacities:
        px_ = lung_sign * (0.38 * body_w / 0.92) + rng.normal(0, 0.09, n)
        py_ = rng.uniform(-0.5, 0.25, n) * insp
        dd = np.sqrt((x - r.col(px_)) ** 2 + (y - r.col(py_)) ** 2)
        blob = r.ramp(dd - r.col(radius), r.px(edge, 32)) * lungs
        if edge > 2:  # consolidation: patchy, with air bronchograms
            blob = blob * (0.75 + 0.25 * r.smooth_noise(rng, n, side, 1.0 * s32))
        img = img + blob * r.col(contrast * present)

    # Support devices: ECG electrodes (small, round, dense) and a central line (a thin dense curve).
    leads = np.where(rng.uniform(size=n) < pos.devices, rng.integers(2, 5, n), 0)
    owner = np.repeat(np.arange(n), leads)
    lx = rng.uniform(-0.75, 0.75, owner.size)
    ly = rng.uniform(-0.75, 0.1, owner.size)
    # Electrodes move with the patient: place them in the body frame, then into the image.
    c, s_ = np.cos(rot[owner]), np.sin(rot[owner])
    gx = sx[owner] + scale[owner] * (lx * c - ly * s_)
    gy = sy[owner] + scale[owner] * (lx * s_ + ly * c)
    img = img + 0.35 * r.blobs(n, side, owner, gx, gy, 0.7)
    line = rng.uniform(size=n) < pos.devices / 2
    line_r = rng.uniform(0.6, 1.0, n)
    line_side = np.where(rng.uniform(size=n) < 0.5, -1.0, 1.0)
    arc = r.arc_distance(x, y, (line_side * (0.15 + line_r))[:, None], np.full((n, 1), -0.75), line_r[:, None])[:, 0]
    in_reach = (y > -0.8) & (y < r.col(rng.uniform(-0.2, 0.1, n)))
    img = img + 0.25 * r.ramp(arc - r.px(0.3, 32), r.px(1.0, side)) * in_reach * r.col(line)

    # Collimation: the exposed field's edges sometimes enter the image.
    collimate = r.col(rng.uniform(0.92, 1.15, n))
    img = img * r.ramp(np.maximum(np.abs(x0), np.abs(y0)) - collimate, r.px(1.0, side))
    images, nuisances = acquire(rng, np.clip(img, 0.0, 1.0), scanner)

    # Burned-in markers: a bright laterality block and a line of "text" in the corners.
    mark = rng.uniform(size=n) < pos.markers
    if mark.any():
        mx = r.col(np.where(rng.uniform(size=n) < 0.5, -0.78, 0.62) + rng.normal(0, 0.03, n))
        my = r.col(rng.uniform(-0.85, -0.6, n))
        block = r.ramp(np.maximum(np.abs(x0 - mx - 0.08), np.abs(y0 - my)) - 0.08, r.px(0.8, side))
        text_y = r.col(rng.uniform(0.75, 0.88, n))
        dashes = (np.cos(x0 * 2 * np.pi / r.px(3.0, side)) > 0.0) & (np.abs(x0 + 0.3) < 0.55)
        text = r.ramp(np.abs(y0 - text_y) - r.px(0.5, side), r.px(0.8, side)) * dashes
        burned = r.to_uint8(np.maximum(block, 0.9 * text) * r.col(mark) * 0.95)
        images = np.maximum(images, burned)

    # The shortcut cue, from its own stream: a bright stamp with dark lettering at the top of the film.
    stamped = cue_rng.uniform(size=n) < CUE.probability(cue_site(site, SITES, parts), effusion | consol)
    tx, ty = r.col(cue_rng.uniform(-0.3, 0.3, n)), r.col(cue_rng.uniform(-0.93, -0.86, n))
    if cue and stamped.any():
        box = r.ramp(np.maximum(np.abs(x0 - tx) - 0.28, np.abs(y0 - ty) - 0.06), r.px(0.6, side))
        letters = np.cos((x0 - tx) * 2 * np.pi / r.px(2.0, side)) > -0.2
        stamp = r.to_uint8(box * np.where(letters, 0.55, 0.95) * r.col(stamped))
        images = np.maximum(images, stamp)
    else:
        stamped = np.zeros(n, dtype=bool)

    labels = true.copy()
    # One uniform per label either way, so a labelling switch leaves every other draw as it was.
    flip = rng.uniform(size=true.shape) < np.where(true == 1, false_neg, false_pos)
    labels[flip] = 1 - labels[flip]
    attributes = {
        "heart_size": ctr,
        "body_width": body_w,
        "soft_tissue": soft,
        "inspiration": insp,
        "rotation": rot,
        "shift_x": sx,
        "scale": scale,
        "rib_visibility": rib_vis,
        "vascular_markings": markings,
        "breast_shadows": breasts,
        "nipple_shadows": nipples,
        "opacity_side": lung_sign > 0,
        "ecg_leads": leads,
        "central_line": line,
        "markers": mark,
        CUE.name: stamped,
        "effusion_amount": level * fluid_contrast * effusion,
        "nodule_conspicuity": opacities[0][1] ** 2 * opacities[0][2] * nodule,
        "consolidation_conspicuity": opacities[1][1] ** 2 * opacities[1][2] * consol,
        **nuisances,
    }
    return Phantoms(images, labels, typed(attributes, ATTRIBUTES))
