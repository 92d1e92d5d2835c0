"""The offline phantom cohort: three procedural datasets, a site shift and corruptions.

See ``docs/default-cohort.md``. Public entry points:

- :func:`build_dataset` / :data:`PHANTOM_DATASETS` (``derm``, ``fundus``, ``cxr``),
- :func:`pretraining_pool` (images disjoint from every evaluation split),
- :func:`corruption_families` / :func:`corrupt`,
- figures for the book in :mod:`crsbench_lib.cohort.figures`.
"""

from crsbench_lib.cohort.corruptions import CORRUPTION_DOMAINS, CORRUPTION_VERSION, corrupt, corruption_families
from crsbench_lib.cohort.datasets import (
    DEFAULT_SIZES,
    GENERATOR_VERSION,
    MIN_IMAGE_SIDE,
    PHANTOM_DATASETS,
    build_dataset,
    pretraining_pool,
)

__all__ = [
    "CORRUPTION_DOMAINS",
    "CORRUPTION_VERSION",
    "DEFAULT_SIZES",
    "GENERATOR_VERSION",
    "MIN_IMAGE_SIDE",
    "PHANTOM_DATASETS",
    "build_dataset",
    "corrupt",
    "corruption_families",
    "pretraining_pool",
]
