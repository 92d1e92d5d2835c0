"""Encoders: the interface, the default zoo, hub adapters and the registry of names."""

from crsbench_lib.encoders.base import Encoder

__all__ = ["Encoder"]
