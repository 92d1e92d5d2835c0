"""CRS-Bench: reliability-aware selection of pretrained medical image encoders.

Sub-packages follow the pipeline's stages (see ``docs`` in the book):
``cohort``/``data`` -> ``encoders`` -> ``embeddings`` -> ``evaluation`` ->
``results`` -> ``scoring`` -> ``report``; ``runner`` ties the first stages
together and ``registry`` keeps a fixed-reference score history.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("crsbench")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
