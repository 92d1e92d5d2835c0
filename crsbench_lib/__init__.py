"""CRS-Bench: reliability-aware selection of pretrained medical image encoders.

Sub-packages follow the pipeline's stages (``docs/architecture.md``):
``cohort``/``data`` -> ``encoders`` -> ``embeddings`` -> ``evaluation`` ->
``results`` -> ``scoring`` -> ``report``; ``runner`` ties the first stages
together and ``registry`` keeps a fixed-reference score history.

Citations of the form "method section N" (with ", step K", ", item K" or
", amendment K") are to the numbered sections of the book's method page,
``book/method.md``, the project's method document.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("crsbench")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
