"""Check an encoder before a run: ``crsbench encoder check SPEC``.

:func:`check_encoder` embeds two batches of deterministic RGB images at the
working side (the second of another size, so a width that depends on the batch
shows), embeds the first again, and reports what a run relies on: the output
width and dtype, whether the second pass is bit-identical to the first, NaN and
inf, milliseconds per image and peak memory. A broken contract is one
:class:`~crsbench_lib.errors.EncoderError` line: a wrong output rank, a width
that changes between batches, NaN or inf.
"""

from __future__ import annotations

import resource
import sys
import time
from dataclasses import dataclass

import numpy as np

from crsbench_lib.encoders.base import Encoder, why_not_adaptable
from crsbench_lib.errors import EncoderError


@dataclass(frozen=True)
class EncoderCheck:
    """What :func:`check_encoder` measured.

    Attributes
    ----------
    name : str
        The encoder's registry name.
    family : str
        ``handcrafted``, ``neural``, ``hub``, ``file`` or a plug-in's own.
    image_side : int
        Side of the images it was given.
    batches : tuple of int
        Images in each of the two batches.
    width : int
        Output width ``D``.
    dtype : str
        Output dtype (``float32`` for every encoder that keeps the contract).
    identical : bool
        Whether embedding the first batch again gave the same bytes.
    n_nan, n_inf : int
        NaN and infinite output values (0 for an encoder that passes).
    ms_per_image : float
        Wall time per image over the three passes.
    peak_memory_mib : float
        Peak resident memory of this process (CUDA: peak allocated on the device, added).
    adaptable : str
        ``yes``, or why the LoRA arm leaves the encoder out.
    """

    name: str
    family: str
    image_side: int
    batches: tuple[int, int]
    width: int
    dtype: str
    identical: bool
    n_nan: int
    n_inf: int
    ms_per_image: float
    peak_memory_mib: float
    adaptable: str

    def lines(self) -> list[str]:
        """The report, one fact a line (what ``crsbench encoder check`` prints).

        Examples
        --------
        >>> EncoderCheck("hog", "handcrafted", 32, (8, 5), 324, "float32", True, 0, 0, 0.5, 300.0, "yes").lines()[2]
        'output width: 324'
        """
        return [
            f"encoder: {self.name} ({self.family})",
            f"input: two batches of {self.batches[0]} and {self.batches[1]} RGB images at {self.image_side} px",
            f"output width: {self.width}",
            f"dtype: {self.dtype}",
            f"bit-identical on a second run: {'yes' if self.identical else 'no'}",
            f"NaN/inf: {self.n_nan} NaN, {self.n_inf} inf" if self.n_nan or self.n_inf else "NaN/inf: none",
            f"ms per image: {self.ms_per_image:.3f}",
            f"peak memory: {self.peak_memory_mib:.0f} MiB",
            f"LoRA arm: {self.adaptable}",
        ]


def check_images(n: int, side: int, seed: int = 0) -> np.ndarray:
    """``n`` deterministic ``uint8`` RGB images of ``side`` pixels: smooth blobs on a grey ground, with noise.

    Examples
    --------
    >>> images = check_images(3, 16)
    >>> images.shape, images.dtype.name, bool((images == check_images(3, 16)).all())
    ((3, 16, 16, 3), 'uint8', True)
    """
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:side, 0:side] / max(side - 1, 1)
    images = []
    for _ in range(n):
        cy, cx, r = rng.uniform(0.25, 0.75), rng.uniform(0.25, 0.75), rng.uniform(0.1, 0.3)
        blob = np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * r * r))
        image = 0.3 + 0.6 * blob[..., None] * rng.uniform(0.2, 1.0, 3) + rng.normal(0, 0.03, (side, side, 3))
        images.append(np.clip(np.round(image * 255), 0, 255).astype(np.uint8))
    return np.stack(images)


def _peak_memory_mib(encoder: Encoder) -> float:
    """Peak resident memory of this process in MiB (ru_maxrss: KiB on Linux, bytes on macOS), plus CUDA's peak."""
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    mib = rss / 2**20 if sys.platform == "darwin" else rss / 2**10
    device = getattr(encoder, "device", None)
    if getattr(device, "type", None) == "cuda":
        import torch

        mib += torch.cuda.max_memory_allocated(device) / 2**20
    return float(mib)


def check_encoder(encoder: Encoder, image_side: int = 32, batch: int = 8, seed: int = 0) -> EncoderCheck:
    """Embed two batches at ``image_side`` (the first twice) and check the output contract.

    Parameters
    ----------
    encoder : Encoder
        A built encoder.
    image_side : int
        Side of the images (the run's working side).
    batch : int
        Images in the first batch (>= 2); the second holds ``batch - 1``, so a
        width that follows the batch size shows.
    seed : int
        Seed of the images.

    Returns
    -------
    EncoderCheck

    Raises
    ------
    EncoderError
        One line: an output that is not ``N x D``, a width that changes between
        batches, NaN or inf.

    Examples
    --------
    >>> from crsbench_lib.encoders.registry import build_encoder
    >>> report = check_encoder(build_encoder("pixels"), batch=4)
    >>> report.width, report.dtype, report.identical, report.batches
    (432, 'float32', True, (4, 3))
    """
    if batch < 2:
        raise EncoderError(f"encoder check: batch must be >= 2, got {batch}")
    sizes = (int(batch), int(batch) - 1)
    first, second = check_images(sizes[0], image_side, seed), check_images(sizes[1], image_side, seed + 1)
    outputs = []
    started = time.perf_counter()
    for images in (first, second, first):
        z = np.asarray(encoder.embed(images))
        if z.ndim != 2 or z.shape[0] != len(images):
            raise EncoderError(f"{encoder.name}: output has shape {z.shape} on {len(images)} images, "
                               f"expected ({len(images)}, D)")
        outputs.append(z)
    seconds = time.perf_counter() - started
    if outputs[1].shape[1] != outputs[0].shape[1]:
        raise EncoderError(f"{encoder.name}: the output width changes between batches "
                           f"({outputs[0].shape[1]} on {sizes[0]} images, {outputs[1].shape[1]} on {sizes[1]})")
    values = np.concatenate([outputs[0].ravel(), outputs[1].ravel()]).astype(np.float64, copy=False)
    n_nan, n_inf = int(np.isnan(values).sum()), int(np.isinf(values).sum())
    if n_nan or n_inf:
        raise EncoderError(f"{encoder.name}: the output holds {n_nan} NaN and {n_inf} inf of {values.size} values")
    reason = why_not_adaptable(encoder)
    return EncoderCheck(
        name=encoder.name,
        family=str(getattr(encoder, "family", "plugin")),
        image_side=int(image_side),
        batches=sizes,
        width=int(outputs[0].shape[1]),
        dtype=str(outputs[0].dtype),
        identical=outputs[0].tobytes() == outputs[2].tobytes() and outputs[0].dtype == outputs[2].dtype,
        n_nan=n_nan,
        n_inf=n_inf,
        ms_per_image=1000.0 * seconds / (2 * sizes[0] + sizes[1]),
        peak_memory_mib=_peak_memory_mib(encoder),
        adaptable="yes" if reason is None else f"not adapted: {reason}",
    )
