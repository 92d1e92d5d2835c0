"""Embedding an image array batch by batch, without the cache (for encoders used once)."""

from __future__ import annotations

import numpy as np

from crsbench_lib.encoders.base import Encoder


def embed_images(encoder: Encoder, images: np.ndarray, batch_size: int) -> np.ndarray:
    """float32 ``(n, encoder.embedding_dim)`` embeddings of ``images``, ``batch_size`` images per encoder call.

    Examples
    --------
    >>> from crsbench_lib.encoders.registry import build_encoder
    >>> embed_images(build_encoder("pixels"), np.zeros((3, 32, 32, 3), np.uint8), 2).shape[0]
    3
    """
    parts = [np.asarray(encoder.embed(images[i : i + batch_size]), dtype=np.float32)
             for i in range(0, len(images), batch_size)]
    return np.concatenate(parts) if parts else np.empty((0, encoder.embedding_dim), np.float32)
