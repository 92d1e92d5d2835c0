"""Batch conversion of ``uint8`` images into the float tensors encoders read.

Every encoder accepts ``(N, H, W)`` grey or ``(N, H, W, 3)`` RGB ``uint8``
batches from any domain. The conversions are fixed here, in one place:

- values are scaled to ``[0, 1]`` (``x / 255``);
- grey -> RGB replicates the grey channel three times (neural encoders and the
  colour descriptors see a grey image as a neutral colour image);
- RGB -> grey uses the ITU-R BT.601 luma weights ``0.299 R + 0.587 G + 0.114 B``
  (the grey-only texture descriptors: HOG, LBP, Gabor, GLCM);
- a batch whose side differs from the encoder's working side is resized with
  bilinear interpolation and anti-aliasing (``torch.nn.functional.interpolate``,
  deterministic on CPU); non-square images are resized to a square.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from crsbench_lib.errors import EncoderError

LUMA_WEIGHTS: tuple[float, float, float] = (0.299, 0.587, 0.114)


def check_images(images: np.ndarray) -> np.ndarray:
    """Validate an image batch and return it as a C-contiguous ``uint8`` array.

    Parameters
    ----------
    images : numpy.ndarray
        ``uint8`` ``(N, H, W)`` or ``(N, H, W, 3)``.

    Returns
    -------
    numpy.ndarray
        The same images, C-contiguous.

    Raises
    ------
    EncoderError
        On another dtype or shape.
    """
    arr = np.asarray(images)
    if arr.dtype != np.uint8:
        raise EncoderError(f"images must be uint8, got {arr.dtype}")
    if arr.ndim not in (3, 4) or (arr.ndim == 4 and arr.shape[-1] != 3):
        raise EncoderError(f"images must be (N, H, W) grey or (N, H, W, 3) RGB, got shape {arr.shape}")
    return np.ascontiguousarray(arr)


def to_tensor(images: np.ndarray, side: int, channels: int) -> torch.Tensor:
    """Convert a ``uint8`` batch into a float32 tensor ``(N, channels, side, side)`` in ``[0, 1]``.

    Parameters
    ----------
    images : numpy.ndarray
        ``uint8`` ``(N, H, W)`` or ``(N, H, W, 3)``.
    side : int
        Output side in pixels.
    channels : {1, 3}
        1 for grey (RGB converted with :data:`LUMA_WEIGHTS`), 3 for RGB (grey replicated).

    Returns
    -------
    torch.Tensor
        float32, ``(N, channels, side, side)``.
    """
    arr = check_images(images)
    x = torch.from_numpy(arr).to(torch.float32).div_(255.0)
    x = x.unsqueeze(1) if x.ndim == 3 else x.permute(0, 3, 1, 2)
    if channels == 1 and x.shape[1] == 3:
        w = torch.tensor(LUMA_WEIGHTS, dtype=torch.float32).view(1, 3, 1, 1)
        x = (x * w).sum(dim=1, keepdim=True)
    elif channels == 3 and x.shape[1] == 1:
        x = x.expand(-1, 3, -1, -1)
    elif channels not in (1, 3):
        raise EncoderError(f"channels must be 1 or 3, got {channels}")
    if x.shape[-2:] != (side, side):
        x = F.interpolate(x, size=(side, side), mode="bilinear", align_corners=False, antialias=True)
    return x.contiguous()


def to_array(images: np.ndarray, side: int, channels: int) -> np.ndarray:
    """:func:`to_tensor` as a numpy array ``(N, channels, side, side)`` float32."""
    return to_tensor(images, side, channels).numpy()
