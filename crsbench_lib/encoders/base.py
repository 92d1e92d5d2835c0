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
    not_adaptable : str or None
        Why the LoRA arm cannot adapt it although it has a module (None: it can).
    """

    name: str
    family: str
    embedding_dim: int
    #: Why the LoRA arm cannot adapt this encoder even though it has a :attr:`module`
    #: (an exported graph), or None; see :func:`why_not_adaptable`.
    not_adaptable: str | None = None

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


#: Why an encoder without a torch module is not adapted by the LoRA arm.
NO_MODULE = "no network to adapt (a hand-crafted descriptor)"


def why_not_adaptable(encoder: Encoder) -> str | None:
    """Why the LoRA arm cannot adapt ``encoder`` (None: it can).

    An encoder can be adapted when it has a torch :attr:`~Encoder.module` and
    does not say otherwise (:attr:`~Encoder.not_adaptable`, set by the encoders
    of exported model files, whose graphs have no layers to attach adapters to).

    Examples
    --------
    >>> from crsbench_lib.encoders.registry import build_encoder
    >>> why_not_adaptable(build_encoder("pixels"))
    'no network to adapt (a hand-crafted descriptor)'
    >>> why_not_adaptable(build_encoder("cnn_random")) is None
    True
    """
    if encoder.not_adaptable:
        return encoder.not_adaptable
    return NO_MODULE if encoder.module is None else None
