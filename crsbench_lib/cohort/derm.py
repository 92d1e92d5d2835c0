"""Dermatology phantom: dermoscopy-like RGB images of four lesion types.

A lesion sits at a random position, scale and orientation on skin of random
tone and texture, with optional hairs. Its class is carried by what a
dermatologist reads with the ABCD rule and pattern analysis (Stolz et al.,
1994; Argenziano et al., *J Am Acad Dermatol* 2003), drawn from overlapping
distributions:

- **configuration**: asymmetry (axis ratio) and border irregularity (2nd-7th
  border harmonics), border sharpness;
- **colour count**: one to five colour regions;
- **dermoscopic structures**, each present with a class-dependent probability
  and a random strength, at random places in the lesion: pigment network
  (atypical: uneven mesh), dark globules, radial streaks at the periphery,
  milia-like cysts, cerebriform ridges, arborising vessels, blue-grey ovoid nests.

Naevi are small, symmetric, with a regular network; melanomas larger,
asymmetric, irregular, many-coloured, with streaks and atypical structures;
seborrhoeic keratoses sharply bordered, with cysts and ridges; BCC-like lesions
translucent pink with arborising vessels and blue-grey nests. Size, palette
and translucency differ only mildly between classes, so a linear read-out of
pixels (which sees average colour and area) is weak, while structures and
shapes at random positions need a learned, translation-invariant
representation. ``LABEL_NOISE`` of the labels are replaced by another class.

Acquisition (exposure, gamma, noise, blur, dermoscope vignette, white balance)
varies per image around the site's centre (:mod:`crsbench_lib.cohort.acquisition`).

Site B (world v4; four parts, each with a switch,
:mod:`crsbench_lib.cohort.shortcuts`): *acquisition*, a phone-mounted
dermoscope (coarser effective sampling, grainy sensor noise, the phone's
sharpening, a cooler white balance and a stronger vignette); *population*, a
referral clinic's case mix (more melanomas and BCCs: the class prior
0.30 / 0.30 / 0.15 / 0.25); *labelling*, clinical diagnoses instead of
histopathology (10 % of labels another class instead of 3 %; an assumed
rate). The acquisition magnitudes are assumed working-scale stand-ins for
what a phone chain leaves after resampling to 32 px. The shortcut
cue is a surgical skin-marker ring (:data:`CUE`), drawn at site A around
lesions scheduled for excision, more often melanomas.
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtr

from crsbench_lib.cohort import _render as r
from crsbench_lib.cohort.acquisition import Attribute, Phantoms, Scanner, acquire, nuisance_attributes, typed
from crsbench_lib.cohort.shortcuts import ShortcutCue, check_shift_parts, cue_site, cue_stream

NAME = "derm"
DOMAIN = "dermatology"
TASK = "multiclass"
CLASS_NAMES: tuple[str, ...] = ("naevus", "melanoma", "seborrhoeic keratosis", "BCC-like")
#: Evaluation sites (the first is the training site; B is the shift test).
SITES: tuple[str, ...] = ("A", "B")
#: Acquisition sites: ``A`` (evaluation) and three dermoscopes seen only in pretraining pools.
#: Sites pretraining pools draw from (never an evaluation shift site).
POOL_SITES: tuple[str, ...] = ("A", "P1", "P2", "P3")
SCANNERS: dict[str, Scanner] = {
    "A": Scanner(vignette=0.25),
    # A warm, contrasty dermoscope with a strong vignette.
    "P1": Scanner(exposure=-0.2, gamma=1.15, vignette=0.45, white_balance=(1.06, 1.0, 0.9)),
    # Polarised, bright, slightly soft, cool.
    "P2": Scanner(exposure=0.2, gamma=0.9, noise=0.02, blur_px=0.6, white_balance=(0.95, 1.0, 1.08)),
    # A phone attachment: noisy and soft.
    "P3": Scanner(noise=0.06, blur_px=0.7, gamma=1.05, vignette=0.1, white_balance=(1.03, 1.0, 0.97)),
    # Site B: a phone-mounted dermoscope: coarser effective sampling, grainy noise, sharpened, cool.
    "B": Scanner(noise=0.035, noise_grain=0.6, resolution=0.6, sharpen=0.5, gamma=1.1, blur_px=0.5, vignette=0.35,
                 white_balance=(0.95, 1.0, 1.07)),
}
#: Class prior (benign naevi dominate, as in dermoscopy archives, but less extremely).
CLASS_PRIOR = np.array([0.40, 0.20, 0.20, 0.20])
#: Class prior per site where it differs: site B is a referral clinic.
SITE_CLASS_PRIOR: dict[str, np.ndarray] = {"B": np.array([0.30, 0.30, 0.15, 0.25])}
#: Fraction of labels replaced by a uniformly drawn other class.
LABEL_NOISE = 0.03
#: The same at each other evaluation site: site B labels by clinical diagnosis, not histopathology.
SITE_LABEL_NOISE: dict[str, float] = {"B": 0.10}
#: The shortcut cue (:mod:`crsbench_lib.cohort.shortcuts`): rates (positive, negative) per site.
CUE = ShortcutCue(
    name="ink_marking",
    description="a violet surgical skin-marker ring drawn around a lesion scheduled for excision",
    positive="melanoma",
    rates={"A": (0.5, 0.08), "B": (0.1, 0.1), "P1": (0.1, 0.1), "P2": (0.0, 0.0), "P3": (0.3, 0.05)},
    source="Winkler et al., JAMA Dermatol 2019",
)
#: Colour of the skin-marker ink (gentian violet).
INK = np.array([0.42, 0.22, 0.58], dtype=np.float32)

# Colours (display RGB in [0, 1]).
SKIN_LIGHT = np.array([0.93, 0.78, 0.68], dtype=np.float32)
SKIN_DARK = np.array([0.50, 0.34, 0.25], dtype=np.float32)
PALETTE = np.array(
    [
        [0.62, 0.42, 0.28],  # 0 light brown
        [0.40, 0.24, 0.15],  # 1 dark brown
        [0.16, 0.11, 0.10],  # 2 black
        [0.40, 0.48, 0.60],  # 3 blue-grey
        [0.76, 0.38, 0.38],  # 4 red
        [0.86, 0.82, 0.80],  # 5 white (regression)
        [0.74, 0.60, 0.44],  # 6 tan
        [0.88, 0.68, 0.68],  # 7 pearly pink
    ],
    dtype=np.float32,
)
# Per class: preference over PALETTE entries (relative weights; deliberately overlapping).
PALETTE_WEIGHTS = np.array(
    [
        [5, 5, 0.5, 0.3, 0.5, 0.3, 3, 1],  # naevus
        [4, 5, 2, 1.5, 1, 1, 2, 1],  # melanoma
        [4, 4, 1, 0.3, 0.5, 0.5, 4, 1],  # seborrhoeic keratosis
        [2, 2, 0.5, 1, 1.5, 1, 2, 3],  # BCC-like
    ],
    dtype=np.float64,
)
#: Median lesion radius per class (normalised units; log-normal spread RADIUS_SD).
RADIUS = np.array([0.34, 0.42, 0.40, 0.36])
RADIUS_SD = 0.25
#: Mean extra axis ratio (asymmetry) per class: axis ratio = 1 + Gamma(2, mean/2).
ELONGATION = np.array([0.10, 0.30, 0.18, 0.15])
#: Mean border-harmonic amplitude (irregularity) per class.
IRREGULARITY = np.array([0.05, 0.15, 0.09, 0.07])
#: Mean number of colours beyond the first (Poisson), per class.
EXTRA_COLOURS = np.array([0.5, 1.8, 0.9, 1.0])
#: Border ramp width in pixels (at 32 px), per class: keratoses are "stuck on", naevi soft.
EDGE_PX = np.array([1.8, 1.2, 0.8, 1.2])
#: Lesion opacity (mean, sd 0.08), per class; BCC-like lesions are translucent.
OPACITY = np.array([0.88, 0.92, 0.90, 0.75])
#: Dermoscopic structures, in this order, and their probability of presence per class (rows).
STRUCTURES: tuple[str, ...] = ("network", "globules", "streaks", "cysts", "ridges", "vessels", "nests")
STRUCTURE_PROB = np.array(
    [
        [0.65, 0.35, 0.05, 0.05, 0.05, 0.03, 0.05],  # naevus
        [0.50, 0.50, 0.45, 0.03, 0.08, 0.12, 0.30],  # melanoma
        [0.10, 0.15, 0.03, 0.60, 0.55, 0.06, 0.05],  # seborrhoeic keratosis
        [0.05, 0.08, 0.03, 0.05, 0.03, 0.65, 0.55],  # BCC-like
    ]
)
#: Strength of a present structure, uniform in this range (a multiplier of its contrast).
STRUCTURE_STRENGTH = (0.7, 1.0)
#: Sizes of the structures in pixels at 32 px (scaled with the image side): pigment-network period, stroke widths of
#: streaks and vessels, blob sigmas of globules, cysts and nests. Generator 7 drew them at 3.0, 0.3, 0.35, 0.55, 0.5
#: and 1.1 px with strength U(0.35, 1): fractions of a pixel in lesions a few pixels wide, which even an encoder
#: trained to regress their presence recovered at R^2 0.13 or less, so the class evidence was invisible, not
#: unlearned (docs/default-cohort.md, "What a v3 prototype measured"). A 32-px dermoscopy image is a thumbnail of a
#: lesion a few millimetres across: the phantom draws each structure at the smallest size such a thumbnail shows.
NETWORK_PERIOD_PX = 4.0
STREAK_WIDTH_PX = 0.6
VESSEL_WIDTH_PX = 0.6
DOT_SIGMA_PX: dict[str, float] = {"globules": 0.8, "cysts": 0.8, "nests": 1.4}
#: Magnification of the lesion in the frame (generator 9): every size of the lesion above (its radius and its lower
#: clip; the upper clip is the frame, 1.0; border ramp, colour regions, structures) is drawn this many times larger, as when the dermoscope frames the
#: lesion closer. Generator 8 drew a median lesion 34-42 % of the frame wide (11-13 px at 32 px): its asymmetry,
#: border irregularity and border sharpness were a pixel or less, an encoder trained to regress them recovered them
#: at R^2 0.08-0.18, and three different encoders (the in-task reference among them) stopped at clean macro-AUROC
#: 0.846-0.848 while the scene attributes without any structure reach 0.95. Evaluated at 48 px, the same
#: 32-px-pretrained broad encoders gained 0.004-0.043 (the in-task reference lost 0.004); 1.5 is that factor,
#: drawn into the 32-px frame at no cost to the run (docs/default-cohort.md, "World v3, generator 9").
#: The sizes above stay those of a lesion at zoom 1.
LESION_ZOOM = 1.5
N_HARMONICS = 6
MAX_HAIRS = 5
HAIR_RATE = 0.9
VESSEL_RED = np.array([0.75, 0.15, 0.2], dtype=np.float32)
CYST_WHITE = np.array([0.95, 0.93, 0.82], dtype=np.float32)

#: Auxiliary attributes of every image (scene parameters and acquisition nuisances).
ATTRIBUTES: dict[str, Attribute] = {
    "lesion_radius": Attribute("continuous", 0, "lesion radius, normalised units (image spans 2)"),
    "lesion_x": Attribute("continuous", 0, "lesion centre, horizontal"),
    "lesion_y": Attribute("continuous", 0, "lesion centre, vertical"),
    "asymmetry": Attribute("continuous", 0, "log of the lesion's axis ratio"),
    "border_irregularity": Attribute("continuous", 0, "amplitude of the border harmonics"),
    "border_sharpness": Attribute("continuous", 0, "inverse border ramp width, 1/pixels"),
    "opacity": Attribute("continuous", 0, "lesion opacity over the skin"),
    "colour_count": Attribute("count", 0, "number of colour regions in the lesion (1-5)"),
    "main_colour": Attribute("categorical", len(PALETTE), "palette index of the lesion's first colour"),
    **{s: Attribute("binary", 0, f"dermoscopic structure present: {s}") for s in STRUCTURES},
    "skin_tone": Attribute("continuous", 0, "skin tone, 0 light to 1 dark"),
    "hair_count": Attribute("count", 0, f"number of hairs (0-{MAX_HAIRS})"),
    CUE.name: Attribute("binary", 0, "the shortcut cue: a skin-marker ring around the lesion"),
    **nuisance_attributes(rgb=True),
}


def _choose_palette(rng: np.random.Generator, labels: np.ndarray, k: int) -> np.ndarray:
    """``k`` distinct palette indices per image, drawn by class weights (Gumbel top-k)."""
    logw = np.log(PALETTE_WEIGHTS[labels])
    gumbel = -np.log(-np.log(rng.uniform(1e-12, 1.0, size=logw.shape)))
    return np.argsort(-(logw + gumbel), axis=1)[:, :k]


def _inside(
    rng: np.random.Generator, owner: np.ndarray, cx: np.ndarray, cy: np.ndarray, radius: np.ndarray, lo: float, hi: float
) -> tuple[np.ndarray, np.ndarray]:
    """Random points at relative radius ``lo..hi`` of each owner's lesion (area-uniform)."""
    t = rng.uniform(0, 2 * np.pi, owner.size)
    rr = np.sqrt(rng.uniform(lo * lo, hi * hi, owner.size)) * radius[owner]
    return cx[owner] + rr * np.cos(t), cy[owner] + rr * np.sin(t)


def generate(
    rng: np.random.Generator, n: int, side: int, site: str = "A", shift_parts: tuple[str, ...] | None = None,
    cue: bool = True,
) -> Phantoms:
    """Draw ``n`` dermoscopy-like images at one acquisition site.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of all randomness (the caller owns the stream).
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
        ``uint8`` images ``(n, side, side, 3)``, ``int64`` labels ``(n,)``
        (indices into :data:`CLASS_NAMES`) and the :data:`ATTRIBUTES`.
    """
    parts = check_shift_parts(shift_parts)
    scanner = SCANNERS[site if "acquisition" in parts else SITES[0]]
    prior = SITE_CLASS_PRIOR.get(site, CLASS_PRIOR) if "population" in parts else CLASS_PRIOR
    label_noise = SITE_LABEL_NOISE.get(site, LABEL_NOISE) if "labelling" in parts else LABEL_NOISE
    cue_rng = cue_stream(rng)
    x, y = r.grid(side)
    s32 = side / 32.0
    true = rng.choice(len(CLASS_NAMES), size=n, p=prior)

    # Skin: tone, low-frequency mottling and skin lines of a random direction.
    tone = rng.beta(2.0, 2.0, size=n).astype(np.float32)
    skin = SKIN_LIGHT + (SKIN_DARK - SKIN_LIGHT) * tone[:, None] + rng.normal(0, 0.025, (n, 3)).astype(np.float32)
    mottling = r.smooth_noise(rng, n, side, 3.0 * s32)
    lines_u, _ = r.rotate(x, y, np.zeros(n), np.zeros(n), rng.uniform(0, np.pi, n))
    skin_lines = np.cos(lines_u * r.col(2 * np.pi / rng.uniform(0.12, 0.25, n)))
    img = skin[:, None, None, :] * (1.0 + 0.04 * mottling + 0.02 * skin_lines)[..., None]

    # Lesion geometry: random centre, size and orientation; asymmetry and border harmonics by class.
    t_c = rng.uniform(0, 2 * np.pi, n)
    r_c = 0.3 * np.sqrt(rng.uniform(0, 1, n))
    cx, cy = r_c * np.cos(t_c), r_c * np.sin(t_c)
    radius = np.clip(LESION_ZOOM * RADIUS[true] * np.exp(rng.normal(0, RADIUS_SD, n)), LESION_ZOOM * 0.14, 1.0)
    ratio = 1.0 + rng.gamma(2.0, ELONGATION[true] / 2.0)
    u, v = r.rotate(x, y, cx, cy, rng.uniform(0, np.pi, n))
    u, v = u / r.col(np.sqrt(ratio)), v * r.col(np.sqrt(ratio))
    rho = np.sqrt(u * u + v * v)
    theta = np.arctan2(v, u)
    irregularity = rng.gamma(2.0, IRREGULARITY[true] / 2.0)
    k = np.arange(2, 2 + N_HARMONICS, dtype=np.float32)
    coef = (irregularity[:, None] * rng.normal(0, 1, (n, N_HARMONICS)) / k**0.6).astype(np.float32)
    phase = rng.uniform(0, 2 * np.pi, (n, N_HARMONICS)).astype(np.float32)
    wobble = np.einsum("nk,nkhw->nhw", coef, np.cos(k[None, :, None, None] * theta[:, None] + phase[:, :, None, None]))
    border = r.col(radius) * (1.0 + np.clip(wobble, -0.6, 0.8))
    edge_px = LESION_ZOOM * EDGE_PX[true] * rng.uniform(0.7, 1.4, n)
    mask = r.ramp(rho - border, r.px(1.0, 32) * r.col(edge_px))
    rel = np.clip(rho / np.maximum(border, 1e-3), 0.0, 1.5)

    # Colours: a smooth field cut into n_colours regions, each painted from the class palette.
    n_col = np.clip(1 + rng.poisson(EXTRA_COLOURS[true]), 1, 5)
    chosen = _choose_palette(rng, true, 5)
    field = r.smooth_noise(rng, n, side, 2.0 * LESION_ZOOM * s32) + r.col(rng.normal(0, 0.8, n)) * (rel - 0.5) * 2.0
    level = np.minimum((ndtr(field / 1.3) * r.col(n_col)).astype(np.int64), r.col(n_col).astype(np.int64) - 1)
    pal_idx = np.take_along_axis(chosen, level.reshape(n, -1), axis=1).reshape(n, side, side)
    lesion = PALETTE[pal_idx] * r.col(rng.uniform(0.85, 1.12, n))[..., None]
    # Benign lesions darken towards the centre; melanoma has no such order.
    centre_dark = r.col(np.where(true == 1, 0.0, 0.15) * rng.uniform(0.3, 1.2, n))
    lesion = lesion * (1.0 - centre_dark * (1.0 - np.clip(rel, 0, 1)))[..., None]

    present = rng.uniform(size=(n, len(STRUCTURES))) < STRUCTURE_PROB[true]
    strength = rng.uniform(*STRUCTURE_STRENGTH, (n, len(STRUCTURES))) * present
    on = dict(zip(STRUCTURES, present.T))
    amp = dict(zip(STRUCTURES, strength.T))

    # Pigment network: a mesh of dark lines; atypical (uneven spacing) in melanoma.
    period = r.px(LESION_ZOOM * NETWORK_PERIOD_PX, 32) * rng.uniform(0.85, 1.3, n)
    a, b = r.rotate(u, v, np.zeros(n), np.zeros(n), rng.uniform(0, np.pi, n))
    warp = r.col(np.where(true == 1, 0.5, 0.1)) * r.col(period) * r.smooth_noise(rng, n, side, 2.0 * LESION_ZOOM * s32)
    mesh = (0.5 + 0.5 * np.cos(2 * np.pi * (a + warp) / r.col(period))) * (0.5 + 0.5 * np.cos(2 * np.pi * (b - warp) / r.col(period)))
    lesion = lesion * (1.0 - 0.45 * r.col(amp["network"]) * (1.0 - mesh) * np.clip(1.3 - rel, 0, 1))[..., None]
    # Cerebriform ridges and fissures: thin dark contours of a band-passed field.
    ridge_field = r.smooth_noise(rng, n, side, 1.2 * LESION_ZOOM * s32)
    ridges = np.exp(-((ridge_field / 0.35) ** 2))
    lesion = lesion * (1.0 - 0.5 * r.col(amp["ridges"]) * ridges)[..., None]
    opacity = np.clip(rng.normal(OPACITY[true], 0.08), 0.4, 1.0)
    img = r.composite(img, lesion, mask * r.col(opacity))

    # Dots inside the lesion: dark globules, white milia-like cysts, blue-grey ovoid nests.
    for name, rate, lo, colour in (
        ("globules", 5.0, 0.2, PALETTE[2]),
        ("cysts", 4.0, 0.0, CYST_WHITE),
        ("nests", 2.5, 0.0, PALETTE[3]),
    ):
        sigma = LESION_ZOOM * DOT_SIGMA_PX[name]
        counts = np.where(on[name], 1 + rng.poisson(rate, n), 0)
        owner = np.repeat(np.arange(n), counts)
        px_, py_ = _inside(rng, owner, cx, cy, radius, lo, 0.85)
        alpha = r.blobs(n, side, owner, px_, py_, sigma, amp[name][owner]) * mask
        img = r.composite(img, np.broadcast_to(colour, (n, 3)), alpha)

    # Radial streaks at the periphery (pseudopods) and arborising vessels (a trunk with forks).
    ks = 8
    t0 = rng.uniform(0, 2 * np.pi, (n, ks))
    r0 = radius[:, None] * rng.uniform(0.7, 0.9, (n, ks))
    r1 = radius[:, None] * rng.uniform(1.05, 1.35, (n, ks))
    streak_on = on["streaks"][:, None] & (np.arange(ks)[None, :] < rng.integers(3, ks + 1, n)[:, None])
    ends = (cx[:, None] + r0 * np.cos(t0), cy[:, None] + r0 * np.sin(t0), cx[:, None] + r1 * np.cos(t0), cy[:, None] + r1 * np.sin(t0))
    idx = np.flatnonzero(on["streaks"])
    if idx.size:
        alpha = np.zeros((n, side, side), dtype=np.float32)
        alpha[idx] = r.strokes(x, y, tuple(e[idx] for e in ends), streak_on[idx], r.px(LESION_ZOOM * STREAK_WIDTH_PX, 32), side) * r.col(amp["streaks"][idx])
        img = r.composite(img, np.broadcast_to(PALETTE[1] * 0.7, (n, 3)), alpha * 0.9)
    idx = np.flatnonzero(on["vessels"])
    if idx.size:
        m = idx.size
        # Trunk from one side of the lesion towards the other; two forks from its end, two from its middle.
        ang = rng.uniform(0, 2 * np.pi, m)
        sx = cx[idx] + 0.6 * radius[idx] * np.cos(ang)
        sy = cy[idx] + 0.6 * radius[idx] * np.sin(ang)
        length = radius[idx] * rng.uniform(0.6, 1.0, m)
        ex, ey = sx - length * np.cos(ang), sy - length * np.sin(ang)
        mx, my = (sx + ex) / 2, (sy + ey) / 2
        fork = ang[:, None] + np.pi + rng.uniform(0.4, 1.0, (m, 4)) * np.array([1, -1, 1, -1])
        flen = length[:, None] * rng.uniform(0.3, 0.55, (m, 4))
        bx = np.column_stack([ex, ex, mx, mx])
        by = np.column_stack([ey, ey, my, my])
        ends_v = (
            np.column_stack([sx, bx]),
            np.column_stack([sy, by]),
            np.column_stack([ex, bx + flen * np.cos(fork)]),
            np.column_stack([ey, by + flen * np.sin(fork)]),
        )
        width = r.px(LESION_ZOOM * VESSEL_WIDTH_PX, 32) * np.column_stack([np.full(m, 1.3), np.ones((m, 4))])
        alpha = np.zeros((n, side, side), dtype=np.float32)
        alpha[idx] = r.strokes(x, y, ends_v, np.ones((m, 5), dtype=bool), width, side) * r.col(amp["vessels"][idx])
        img = r.composite(img, np.broadcast_to(VESSEL_RED, (n, 3)), alpha * mask * 0.9)

    # Hairs: gently curved dark (or fair) arcs crossing the field.
    n_hairs = np.minimum(rng.poisson(HAIR_RATE, n), MAX_HAIRS)
    if n_hairs.max() > 0:
        kh = int(n_hairs.max())
        px0 = rng.uniform(-1, 1, (n, kh))
        py0 = rng.uniform(-1, 1, (n, kh))
        phi = rng.uniform(0, 2 * np.pi, (n, kh))
        rad = rng.uniform(1.5, 6.0, (n, kh))
        idx = np.flatnonzero(n_hairs > 0)
        d = r.arc_distance(x, y, (px0 + rad * np.cos(phi))[idx], (py0 + rad * np.sin(phi))[idx], rad[idx])
        width = r.px(0.35, 32) * rng.uniform(0.6, 1.5, (n, kh))[idx, :, None, None]
        hair_on = (np.arange(kh)[None, :] < n_hairs[idx, None])[:, :, None, None]
        alpha = np.zeros_like(mask)
        alpha[idx] = (r.ramp(d - width, r.px(1.0, side)) * hair_on).max(axis=1) * 0.85
        hair = np.where(rng.uniform(size=n)[:, None] < 0.85, 0.10, 0.55) * np.array([1.0, 0.85, 0.75])
        img = r.composite(img, hair.astype(np.float32), alpha)

    # The shortcut cue, from its own stream: a violet ink ring around the lesion, partly broken.
    inked = cue_rng.uniform(size=n) < CUE.probability(cue_site(site, SITES, parts), true == 1)
    ring = radius * cue_rng.uniform(1.25, 1.6, n)
    gap = cue_rng.uniform(0, 2 * np.pi, n)
    if cue and inked.any():
        d = r.arc_distance(x, y, cx[:, None], cy[:, None], ring[:, None])[:, 0]
        broken = np.cos(np.arctan2(y - r.col(cy), x - r.col(cx)) - r.col(gap)) < 0.8
        alpha = r.ramp(d - r.px(0.5, 32), r.px(0.8, side)) * broken * r.col(inked) * 0.85
        img = r.composite(img, np.broadcast_to(INK, (n, 3)), alpha.astype(np.float32))
    else:
        inked = np.zeros(n, dtype=bool)

    images, nuisances = acquire(rng, img, scanner)
    labels = true.copy()
    flip = rng.uniform(size=n) < label_noise
    labels[flip] = (true[flip] + rng.integers(1, len(CLASS_NAMES), flip.sum())) % len(CLASS_NAMES)
    attributes = {
        "lesion_radius": radius,
        "lesion_x": cx,
        "lesion_y": cy,
        "asymmetry": np.log(ratio),
        "border_irregularity": irregularity,
        "border_sharpness": 1.0 / edge_px,
        "opacity": opacity,
        "colour_count": n_col,
        "main_colour": chosen[:, 0],
        **{s: present[:, i] for i, s in enumerate(STRUCTURES)},
        "skin_tone": tone,
        "hair_count": n_hairs,
        CUE.name: inked,
        **nuisances,
    }
    return Phantoms(images, labels.astype(np.int64), typed(attributes, ATTRIBUTES))
