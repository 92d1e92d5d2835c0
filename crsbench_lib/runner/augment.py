"""Random views for pretraining: base views and acquisition nuisances, batched in torch.

Every draw comes from an explicit ``torch.Generator``, so a view is a pure
function of the images and the generator state. What each recipe uses is
declared in :mod:`crsbench_lib.encoders.recipes`
(:data:`~crsbench_lib.encoders.recipes.BASE_AUGMENTATIONS` and
:data:`~crsbench_lib.encoders.recipes.ACQUISITION_AUGMENTATIONS`).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

#: Luma weights (ITU-R BT.601) for grey conversion and saturation jitter.
LUMA = (0.299, 0.587, 0.114)
#: Range of the area kept by the random resized crop.
CROP_SCALE = (0.35, 1.0)
#: Multiplicative exposure gain and additive brightness offset.
EXPOSURE_GAIN = (0.6, 1.5)
BRIGHTNESS = 0.1
CONTRAST = (0.7, 1.3)
SATURATION = (0.6, 1.4)
GREY_PROBABILITY = 0.2
#: Gamma drawn log-uniformly in [1/GAMMA_MAX, GAMMA_MAX], applied with probability 0.8.
GAMMA_MAX = 1.8
#: Gaussian blur sigma in pixels (probability 0.5) and noise sd in [0, 1] units (probability 0.8).
BLUR_SIGMA = (0.3, 1.5)
NOISE_SD = (0.0, 0.08)
BLUR_RADIUS = 3


def _uniform(lo: float, hi: float, n: int, gen: torch.Generator) -> torch.Tensor:
    return lo + (hi - lo) * torch.rand(n, generator=gen)


def _coin(p: float, n: int, gen: torch.Generator) -> torch.Tensor:
    return torch.rand(n, generator=gen) < p


def resized_crop(x: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """Random resized crop (area ``CROP_SCALE``, aspect 3/4-4/3) with horizontal flip, via one affine grid."""
    n = len(x)
    area = _uniform(*CROP_SCALE, n, gen)
    log_ratio = _uniform(math.log(3 / 4), math.log(4 / 3), n, gen)
    sx = torch.sqrt(area * torch.exp(log_ratio)).clamp(max=1.0)
    sy = torch.sqrt(area / torch.exp(log_ratio)).clamp(max=1.0)
    flip = torch.where(_coin(0.5, n, gen), -1.0, 1.0)
    theta = torch.zeros(n, 2, 3)
    theta[:, 0, 0] = sx * flip
    theta[:, 0, 2] = (1 - sx) * _uniform(-1.0, 1.0, n, gen)
    theta[:, 1, 1] = sy
    theta[:, 1, 2] = (1 - sy) * _uniform(-1.0, 1.0, n, gen)
    grid = F.affine_grid(theta, list(x.shape), align_corners=False)
    return F.grid_sample(x, grid, mode="bilinear", padding_mode="reflection", align_corners=False)


def colour_jitter(x: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """Exposure gain, brightness offset, contrast, saturation, then grey with probability ``GREY_PROBABILITY``."""
    n = len(x)
    luma = torch.tensor(LUMA).view(1, 3, 1, 1)
    x = x * _uniform(*EXPOSURE_GAIN, n, gen).view(n, 1, 1, 1) + _uniform(-BRIGHTNESS, BRIGHTNESS, n, gen).view(n, 1, 1, 1)
    mean = x.mean(dim=(1, 2, 3), keepdim=True)
    x = (x - mean) * _uniform(*CONTRAST, n, gen).view(n, 1, 1, 1) + mean
    grey = (x * luma).sum(1, keepdim=True)
    x = grey + (x - grey) * _uniform(*SATURATION, n, gen).view(n, 1, 1, 1)
    grey = (x * luma).sum(1, keepdim=True).expand_as(x)
    return torch.where(_coin(GREY_PROBABILITY, n, gen).view(n, 1, 1, 1), grey, x).clamp(0.0, 1.0)


def gaussian_blur(x: torch.Tensor, sigma: torch.Tensor) -> torch.Tensor:
    """Separable Gaussian blur with one sigma per image (``sigma`` ``(N,)``, pixels; 0 leaves the image)."""
    n, c, h, w = x.shape
    offs = torch.arange(-BLUR_RADIUS, BLUR_RADIUS + 1, dtype=x.dtype)
    k = torch.exp(-0.5 * (offs[None, :] / sigma.clamp(min=1e-3)[:, None]) ** 2)
    k = k / k.sum(1, keepdim=True)
    k = k.repeat_interleave(c, dim=0)  # (n*c, taps)
    y = F.pad(x.reshape(1, n * c, h, w), (BLUR_RADIUS,) * 4, mode="reflect")
    y = F.conv2d(y, k.view(n * c, 1, 1, -1), groups=n * c)
    y = F.conv2d(y, k.view(n * c, 1, -1, 1), groups=n * c)
    return y.reshape(n, c, h, w)


def acquisition(x: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """Acquisition nuisances: gamma (p 0.8), Gaussian blur (p 0.5), then sensor noise (p 0.8)."""
    n = len(x)
    log_gamma = _uniform(-math.log(GAMMA_MAX), math.log(GAMMA_MAX), n, gen) * _coin(0.8, n, gen)
    x = x.clamp(min=1e-4) ** torch.exp(log_gamma).view(n, 1, 1, 1)
    sigma = _uniform(*BLUR_SIGMA, n, gen)
    x = torch.where(_coin(0.5, n, gen).view(n, 1, 1, 1), gaussian_blur(x, sigma), x)
    sd = _uniform(*NOISE_SD, n, gen) * _coin(0.8, n, gen)
    x = x + torch.randn(x.shape, generator=gen) * sd.view(n, 1, 1, 1)
    return x.clamp(0.0, 1.0)


def exposure(x: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """Exposure gain only (``EXPOSURE_GAIN``): the one base change that no scene attribute depends on."""
    n = len(x)
    return (x * _uniform(*EXPOSURE_GAIN, n, gen).view(n, 1, 1, 1)).clamp(0.0, 1.0)


def target_view(x: torch.Tensor, gen: torch.Generator, acquisition_nuisances: bool) -> torch.Tensor:
    """A view for supervised pretraining: it changes acquisition only, never a target.

    A supervised recipe regresses scene attributes (lesion size and position,
    colours, which lung holds an opacity, ...) or labels; a crop, a flip or a
    colour jitter changes those (a crop moves and enlarges the lesion, a flip
    swaps the sides, a jitter repaints the colours), so it would train the
    network on wrong targets. Its views therefore keep the scene and vary what
    a scanner varies: exposure, and, for the ``aug`` recipes, gamma, blur and
    noise.

    Examples
    --------
    >>> g = torch.Generator().manual_seed(0)
    >>> target_view(torch.rand(4, 3, 32, 32), g, True).shape
    torch.Size([4, 3, 32, 32])
    """
    v = exposure(x, gen)
    return acquisition(v, gen) if acquisition_nuisances else v


def view(x: torch.Tensor, gen: torch.Generator, acquisition_nuisances: bool) -> torch.Tensor:
    """One random view of a ``[0, 1]`` RGB batch ``(N, 3, H, W)``.

    Parameters
    ----------
    x : torch.Tensor
        float32 images in ``[0, 1]``.
    gen : torch.Generator
        Source of every random draw.
    acquisition_nuisances : bool
        Add gamma, blur and noise after the base view.

    Returns
    -------
    torch.Tensor
        Same shape, values in ``[0, 1]``.

    Examples
    --------
    >>> g = torch.Generator().manual_seed(0)
    >>> view(torch.rand(4, 3, 32, 32), g, True).shape
    torch.Size([4, 3, 32, 32])
    """
    v = colour_jitter(resized_crop(x, gen), gen)
    return acquisition(v, gen) if acquisition_nuisances else v
