"""The recipes of the neural zoo: pools, augmentations and optimisation, as plain data.

One home for every fact that distinguishes the zoo's encoders. The training
code (:mod:`crsbench_lib.runner.pretrain`) reads these specs to build the
weights; the cards (:mod:`crsbench_lib.encoders.cards`) read them to describe
the encoders. Nothing here imports torch or the cohort.

The zoo mirrors the encoder families of the CRS-Bench study (15 medical and
general-purpose foundation models):

- *broad* encoders are pretrained on a multi-domain pool drawn from all three
  phantom domains and several simulated acquisition sites (the analogue of a
  foundation model pretrained on many archives), either self-supervised
  (SimCLR, Chen et al., 2020) or supervised on auxiliary attributes of the
  generator (multi-task), each at two capacities and each with and without
  acquisition augmentation;
- *narrow* encoders are pretrained on one domain's pool at one site, as real
  specialists were pretrained on particular institutions' archives (a
  domain-specific foundation model): one per domain with SimCLR, plus a
  report-supervised chest-film specialist (CXR-foundation-like) and a masked
  autoencoder on fundus photographs (RETFound-like). Since world v4 the
  training site carries a shortcut cue (:mod:`crsbench_lib.cohort.shortcuts`)
  that a specialist sees in every batch and a generalist at some sites only;
- a masked autoencoder (He et al., 2022) on a ViT;
- random-initialisation controls;
- one *in-task supervised* encoder trained on the evaluation task's labels of
  pool images, which no honest foundation model has seen: a reference for
  what task supervision buys, not a peer.

Augmentations: every self-supervised encoder sees the *base* views (random
resized crop, horizontal flip, exposure and colour jitter, random grey); the
supervised recipes (multi-task, in-task) see exposure changes only, because a
crop, a flip or a colour jitter would change their targets (a lesion's size,
position and colours, the side of an opacity). The acquisition augmentations
(gamma, sensor noise, blur) are what the ``aug`` and ``noaug`` variants differ
in. In the self-supervised recipes colour jitter stays in both arms: without it
SimCLR learns colour shortcuts and the comparison would mix quality with
robustness (docs/default-cohort.md, v2 prototype).
"""

from __future__ import annotations

from dataclasses import dataclass

#: Views of the self-supervised recipes (SimCLR, MAE): cheap geometric and colour changes.
BASE_AUGMENTATIONS: tuple[str, ...] = ("random resized crop", "horizontal flip", "exposure", "colour jitter", "random grey")
#: Views of the supervised recipes: only what leaves every target unchanged.
SUPERVISED_AUGMENTATIONS: tuple[str, ...] = ("exposure",)
#: Acquisition nuisances that only the ``aug`` variants see.
ACQUISITION_AUGMENTATIONS: tuple[str, ...] = ("gamma", "noise", "blur")

#: Pretraining objectives that regress targets (their views must keep the targets).
SUPERVISED_METHODS: tuple[str, ...] = ("multitask", "intask")

#: Seed of every fitted and pretrained piece (vit_random adds 1; see runner/pretrain.py).
PRETRAIN_SEED = 20261130
#: Seed of the pretraining pools (a pool key space disjoint from evaluation).
POOL_SEED = 0
#: Side at which pools are drawn and networks pretrained.
PRETRAIN_SIDE = 32

#: Torch threads per pretraining process: gradient reductions change their last
#: bits with the thread count, so the shipped weights are defined at this count.
#: Two cores are used by two single-threaded worker processes (``--jobs 2``),
#: which also degrades gracefully on a shared machine where a multi-threaded
#: process would wait at every parallel barrier for a descheduled thread.
PRETRAIN_THREADS = 1

#: Stage widths of the CNN at each capacity (:class:`crsbench_lib.encoders.neural.SmallCNN`);
#: its embedding is the last stage's global average, as wide as the last width.
CNN_WIDTHS: dict[str, tuple[int, ...]] = {"cnn_s": (16, 32, 64, 128), "cnn_l": (24, 48, 96, 192)}


@dataclass(frozen=True)
class ViTSize:
    """Sizes of :class:`crsbench_lib.encoders.neural.SmallViT`: patch side, width, depth, heads, MLP width."""

    patch: int
    dim: int
    depth: int
    heads: int
    mlp: int


#: The zoo's ViT (``vit_s``); its embedding is the class token beside the mean patch token (``2 * dim``).
VIT_S = ViTSize(patch=4, dim=64, depth=3, heads=4, mlp=128)
#: The zoo's backbones.
ARCHITECTURES: tuple[str, ...] = (*CNN_WIDTHS, "vit_s")


def architecture_label(architecture: str) -> str:
    """Human-readable backbone.

    Examples
    --------
    >>> architecture_label("cnn_l")
    'CNN 24-48-96-192'
    >>> architecture_label("vit_s")
    'ViT 4px patches, width 64, depth 3'
    """
    if architecture in CNN_WIDTHS:
        return "CNN " + "-".join(str(w) for w in CNN_WIDTHS[architecture])
    if architecture == "vit_s":
        return f"ViT {VIT_S.patch}px patches, width {VIT_S.dim}, depth {VIT_S.depth}"
    raise ValueError(f"unknown architecture {architecture!r} (expected one of {', '.join(ARCHITECTURES)})")


@dataclass(frozen=True)
class PoolSpec:
    """A pretraining pool: which phantom datasets, how many images of each, which sites.

    Attributes
    ----------
    name : str
        ``"broad"`` or the one dataset's name.
    datasets : tuple of str or None
        Phantom datasets drawn; None: every phantom dataset of the cohort.
    n_per_dataset : int
        Images per dataset.
    all_sites : bool
        True: every pool site of each dataset; False: the evaluation site only.
    """

    name: str
    datasets: tuple[str, ...] | None
    n_per_dataset: int
    all_sites: bool

    def describe(self) -> str:
        """One line: size, domains, sites."""
        domains = "every phantom domain" if self.datasets is None else ", ".join(self.datasets)
        sites = "every simulated site" if self.all_sites else "the evaluation site only"
        return f"{self.n_per_dataset:,} images per domain; {domains}; {sites}"


#: The multi-domain pool of every broad encoder (3 domains x 7,000 = 21,000 images).
BROAD_POOL = PoolSpec("broad", None, 7000, True)
#: Narrow pools: one domain at one site (a subset of that domain's broad-pool draw).
NARROW_POOL_SIZE = 4000
NARROW_DERM = PoolSpec("derm", ("derm",), NARROW_POOL_SIZE, False)
NARROW_CXR = PoolSpec("cxr", ("cxr",), NARROW_POOL_SIZE, False)
NARROW_FUNDUS = PoolSpec("fundus", ("fundus",), NARROW_POOL_SIZE, False)

#: Study families the zoo stands for (the ``study_family`` column of the cards).
FAMILIES: dict[str, str] = {
    "classical": "classical baseline (no learning, or a pool-fitted linear/cluster model)",
    "broad_ssl": "broad self-supervised foundation model (DINOv2-like)",
    "broad_multitask": "broad supervised generalist (MedSigLIP/MedGemma-like)",
    "broad_noaug": "broad recipe without acquisition augmentation (ablation of the above)",
    "narrow": "domain-specific foundation model (PanDerm / CXR-foundation-like)",
    "mim": "masked-image-modelling foundation model (RETFound/MAE-like)",
    "random": "random-initialisation control",
    "intask": "in-task supervised reference (pretrained on the evaluation task's labels)",
}


@dataclass(frozen=True)
class NeuralSpec:
    """How one neural encoder of the zoo comes about.

    Attributes
    ----------
    name : str
        Registry name.
    architecture : {"cnn_s", "cnn_l", "vit_s"}
        Backbone (:func:`crsbench_lib.encoders.neural.make_backbone`).
    method : {"random", "simclr", "multitask", "mae", "intask"}
        Pretraining objective.
    family : str
        Key of :data:`FAMILIES`.
    pool : PoolSpec or None
        Pretraining pool (None for random initialisation).
    acquisition_augmentation : bool
        Whether the views include :data:`ACQUISITION_AUGMENTATIONS`.
    steps, batch_size : int
        Optimiser steps and images per step (SimCLR: pairs per step).
    lr, weight_decay : float
        AdamW peak learning rate (linear warm-up, cosine decay) and weight decay.
    description : str
        One line for listings.
    """

    name: str
    architecture: str
    method: str
    family: str
    pool: PoolSpec | None = None
    acquisition_augmentation: bool = False
    steps: int = 0
    batch_size: int = 0
    lr: float = 0.0
    weight_decay: float = 0.0
    description: str = ""

    @property
    def state_file(self) -> str:
        return f"{self.name}.pt"

    @property
    def augmentations(self) -> tuple[str, ...]:
        """Augmentations of the pretraining views (empty for random initialisation)."""
        if self.method == "random":
            return ()
        base = SUPERVISED_AUGMENTATIONS if self.method in SUPERVISED_METHODS else BASE_AUGMENTATIONS
        return base + (ACQUISITION_AUGMENTATIONS if self.acquisition_augmentation else ())


# Step budgets. World v3 (generator 8) doubled every pretrained encoder's steps
# from those of world v2, which had measured (single-threaded CPU on a quiet
# 2-core machine, generator 7) SimCLR 130-160 s for a small CNN and 244 s for
# the large one, multi-task 148-164 s (243 s large), the in-task encoder 151 s,
# MAE 94 s: `crsbench zoo pretrain --jobs 2` 14.3 minutes of wall time in all.
# Why twice: on the v3 generators the large multi-task encoder gained 0.012 /
# 0.005 / 0.001 clean macro-AUROC (cxr / derm / fundus) from 2x steps, for
# about 300 s more CPU; four times the steps of a small encoder moved it by
# -0.013 to +0.039 (docs/default-cohort.md, "What a v3 prototype measured"),
# so more steps than this buy little. Measured again on generator 8 (derm,
# 3 seeds, frozen arm): the multi-task encoders at 7,200 steps reached 0.844
# (large, from 0.847) and 0.841 (small, from 0.836) for twice their CPU, so
# the steps stayed. The whole zoo at 2x stays far inside the 2-hour
# pretraining budget of the world issue (benchmarks/bench_pretrain.py).
# The supervised recipes (multi-task, in-task) had got 1.5 times the steps of
# the first v2 build when their views stopped cropping and recolouring.
SIMCLR_STEPS, SIMCLR_PAIRS = 2000, 128
MULTITASK_STEPS, MULTITASK_BATCH = 3600, 144
MAE_STEPS, MAE_BATCH = 2000, 128


def _simclr(name: str, arch: str, family: str, pool: PoolSpec, aug: bool, what: str) -> NeuralSpec:
    return NeuralSpec(name, arch, "simclr", family, pool, aug, SIMCLR_STEPS, SIMCLR_PAIRS, 2e-3, 1e-4, what)


def _multitask(name: str, arch: str, method: str, family: str, aug: bool, what: str, pool: PoolSpec = BROAD_POOL) -> NeuralSpec:
    return NeuralSpec(name, arch, method, family, pool, aug, MULTITASK_STEPS, MULTITASK_BATCH, 2e-3, 1e-4, what)


#: The neural zoo, in listing order.
NEURAL_SPECS: tuple[NeuralSpec, ...] = (
    NeuralSpec("cnn_random", "cnn_s", "random", "random", description="small CNN, random initialisation (fixed seed)"),
    NeuralSpec("vit_random", "vit_s", "random", "random", description="small ViT, random initialisation (fixed seed)"),
    _simclr("simclr_broad_aug_s", "cnn_s", "broad_ssl", BROAD_POOL, True, "SimCLR, broad pool, acquisition augmentation, small CNN"),
    _simclr("simclr_broad_aug_l", "cnn_l", "broad_ssl", BROAD_POOL, True, "SimCLR, broad pool, acquisition augmentation, large CNN"),
    _simclr("simclr_broad_noaug_s", "cnn_s", "broad_noaug", BROAD_POOL, False, "SimCLR, broad pool, no acquisition augmentation, small CNN"),
    _multitask("multitask_broad_aug_s", "cnn_s", "multitask", "broad_multitask", True, "auxiliary multi-task, broad pool, acquisition augmentation, small CNN"),
    _multitask("multitask_broad_aug_l", "cnn_l", "multitask", "broad_multitask", True, "auxiliary multi-task, broad pool, acquisition augmentation, large CNN"),
    _multitask("multitask_broad_noaug_s", "cnn_s", "multitask", "broad_noaug", False, "auxiliary multi-task, broad pool, no acquisition augmentation, small CNN"),
    _simclr("simclr_derm_aug_s", "cnn_s", "narrow", NARROW_DERM, True, "SimCLR, dermatology pool only, acquisition augmentation, small CNN"),
    _simclr("simclr_cxr_aug_s", "cnn_s", "narrow", NARROW_CXR, True, "SimCLR, chest-film pool only, acquisition augmentation, small CNN"),
    _simclr("simclr_fundus_aug_s", "cnn_s", "narrow", NARROW_FUNDUS, True, "SimCLR, fundus pool only, acquisition augmentation, small CNN"),
    _multitask("multitask_cxr_s", "cnn_s", "multitask", "narrow", True,
               "auxiliary multi-task, chest-film pool only, acquisition augmentation, small CNN", NARROW_CXR),
    NeuralSpec("mae_broad_vit", "vit_s", "mae", "mim", BROAD_POOL, False, MAE_STEPS, MAE_BATCH, 1e-3, 5e-2, "masked autoencoder, broad pool, small ViT"),
    NeuralSpec("mae_fundus_vit", "vit_s", "mae", "narrow", NARROW_FUNDUS, False, MAE_STEPS, MAE_BATCH, 1e-3, 5e-2,
               "masked autoencoder, fundus pool only, small ViT (RETFound-like)"),
    _multitask("intask_supervised_s", "cnn_s", "intask", "intask", True, "in-task supervised: the evaluation tasks' labels of pool images, small CNN"),
)
NEURAL_ZOO: dict[str, NeuralSpec] = {spec.name: spec for spec in NEURAL_SPECS}
