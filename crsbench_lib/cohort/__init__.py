"""The offline phantom cohort (world v3, generator 9): three procedural datasets, sites, pools and corruptions.

Public entry points:

- :func:`build_dataset` / :data:`PHANTOM_DATASETS` (``derm``, ``fundus``, ``cxr``):
  evaluation splits as :class:`~crsbench_lib.data.base.ImageDataset` objects;
- :func:`pretraining_pool` -> :class:`~crsbench_lib.cohort.datasets.Pool`, which
  unpacks as ``images, attributes, site_ids`` (the evaluation ``labels`` by
  name only): images for pretraining encoders,
  disjoint from every evaluation split; :func:`pool_sites` and
  :func:`pool_attributes` say which sites and attributes there are;
- :func:`corruption_families` / :func:`corrupt` and the per-domain
  :data:`~crsbench_lib.cohort.corruptions.SEVERITY_TABLE`
  (:data:`CORRUPTION_DOMAINS`: the phantom cohort's three domains, plus
  ultrasound, pathology, microscopy, ct and oct for real data, from
  :mod:`crsbench_lib.cohort.corruption_modalities`);
- figures for the book in :mod:`crsbench_lib.cohort.figures`.

The world
---------
Each class is carried by shape, texture and configuration at random
positions, scales and orientations (derm: border, colour count and dermoscopic
structures; fundus: counts of small lesions around the posterior pole, with
grade-independent look-alikes; cxr: the heart's width *relative* to the
thorax, fluid in the angles, a small round or a patchy opacity anywhere in a
lung, with nodule look-alikes). Class signal is imperfect on purpose:
overlapping parameter distributions plus 2-6 % label noise. Acquisition is a
chain per site (:mod:`crsbench_lib.cohort.acquisition`): exposure, gamma,
noise, blur, vignetting and white balance drawn per image around the site's
scanner vector, in every split.

Pretraining pools (for the zoo)
-------------------------------
``pretraining_pool(dataset, n, seed, image_side=32, sites=None)`` draws a
*broad* pool over every pool site of the domain (``A`` and three scanners
``P1``-``P3``, images interleaved site by site) or, with ``sites=("A",)``, a
*narrow* single-site pool. A broad multi-domain pool is the three datasets'
broad pools together (e.g. 7,000 images each: 21,000 images, 12 sites).
``attributes`` maps every key of :func:`pool_attributes` to an ``(N,)`` array:
scene parameters (lesion size, colour count, dermoscopic structures, lesion
counts, heart size, rib visibility, support devices, ...), the acquisition
nuisances each image received (exposure, gamma, noise, blur, vignette and,
for colour images, warmth) and ``site``; each entry says whether it is
continuous, binary, a count or categorical. The evaluation labels are
``labels``, kept apart: only an encoder named as in-task supervised may use
them. cxr's site ``B`` is never in a pool (the second hospital is unseen).
Pools live in their own random key space, so no pool image is an evaluation
image, whatever the seeds.

Size, resolution and cost (measured; see ``benchmarks/bench_cohort.py``)
------------------------------------------------------------------------
Image side 32 px. On the 2-core machine at load average 18-21 (shared with
other jobs; a quiet machine is several times faster), 32-px generation ran at
about 250 (derm), 150-210 (fundus) and 700-850 (cxr) images/s and 48-px
generation at about 100, 120 and 700; every learned encoder costs about 2.5
times as much at 48 px (the v2 prototype). With 16 encoders x 3 datasets x 3
seeds the default profile cannot absorb that within its 15 minutes, so the
default stays at 32 px (``image_side`` remains configurable).

Default sizes: train 2000, validation 1000, test 2000 (cxr site B test 2000),
each corruption condition (family, severity) on its own block of 125 test images. The ECE floor, the mean 15-bin ECE of a
perfectly calibrated predictor with the probabilities of the pixel probe or of
the attribute probe, is about 0.010-0.025 at 2000 test images (sd 0.001-0.007;
generator 9, ``benchmarks/bench_cohort.py --difficulty``) where 1000 images
gave about 0.036 in v1: clean ECE differences of a few hundredths are above the
floor.

Difficulty at 32 px (generator 9; train 2000, test 2000, seed 0): clean
macro-AUROC of a linear probe on pixels 0.733 (derm), 0.621 (fundus), 0.672
(cxr; 0.637 at site B); of the same probe on the generator's scene attributes
0.969 (derm), 0.920 (fundus) and 0.941 (cxr, whose attributes now include the
findings' amounts): the room a learned encoder has. Generator 7 drew several
findings below a pixel (pixel probe 0.662 / 0.595 / 0.640 with the same
protocol, the v3 prototype's measurement); generator 8 draws
them visibly (:mod:`crsbench_lib.cohort.design`), which lifts the pixel probe a
little and the learned encoders a lot (``docs/default-cohort.md``); generator 9
frames the derm lesion 1.5 times closer (derm pixel probe 0.704 -> 0.733). On
generator 7 a small CNN (three conv layers, global max pooling) trained end to
end on the 2000 training labels (``benchmarks/bench_world.py``) reached 0.791
(derm), 0.822 (fundus) and 0.693 (cxr; 0.691 at site B).
"""

from crsbench_lib.cohort.corruptions import CORRUPTION_DOMAINS, CORRUPTION_VERSION, corrupt, corruption_families
from crsbench_lib.cohort.datasets import (
    DEFAULT_SIZES,
    GENERATOR_VERSION,
    MIN_IMAGE_SIDE,
    PHANTOM_DATASETS,
    Pool,
    build_dataset,
    pool_attributes,
    pool_sites,
    pretraining_pool,
    shortcut_cue,
)
from crsbench_lib.cohort.shortcuts import SHIFT_PARTS

__all__ = [
    "CORRUPTION_DOMAINS",
    "CORRUPTION_VERSION",
    "DEFAULT_SIZES",
    "GENERATOR_VERSION",
    "MIN_IMAGE_SIDE",
    "PHANTOM_DATASETS",
    "Pool",
    "build_dataset",
    "corrupt",
    "corruption_families",
    "pool_attributes",
    "pool_sites",
    "pretraining_pool",
    "SHIFT_PARTS",
    "shortcut_cue",
]
