"""The one small interface every encoder implements.

Build the model, its preprocessing, extract features: an encoder turns a batch
of ``uint8`` images (``(N, H, W)`` grey or ``(N, H, W, 3)`` RGB, any domain) into
a ``float32`` array ``(N, embedding_dim)``. It is deterministic: the same images
give the same embedding, bit for bit.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np


class Encoder(ABC):
    """Base class of every encoder.

    Attributes
    ----------
    name : str
        Registry name (``pixels``, ``hog``, ``multitask_broad_aug_s``, ``timm:<id>``...).
    family : str
        ``handcrafted``, ``neural`` or ``hub``.
    embedding_dim : int
        Width of the embedding.
    weights_hash : str
        Content hash of everything that determines the embedding (weights,
        fitted PCA/k-means state, hyper-parameters). Part of the cache key.
    """

    name: str
    family: str
    embedding_dim: int

    @property
    @abstractmethod
    def weights_hash(self) -> str:
        """Content hash of the state that determines the embedding."""

    @abstractmethod
    def preprocess(self, images: np.ndarray) -> Any:
        """Turn a ``uint8`` image batch into the model's input."""

    @abstractmethod
    def embed(self, images: np.ndarray) -> np.ndarray:
        """Embed a batch of ``uint8`` images; returns ``float32`` ``(N, embedding_dim)``."""

    @property
    def module(self) -> Any | None:
        """The ``torch.nn.Module`` of a neural encoder (for the LoRA arm), else ``None``."""
        return None
