"""Where the project's files live: shipped configs and standards, and the cache.

The cache root is ``$CRSBENCH_CACHE`` if set, else ``.crsbench-cache`` at the
project root. Shipped resources are found next to the package (the project is
installed in editable mode from its repository), or under ``$CRSBENCH_HOME``.
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent


def project_root() -> Path:
    """The repository root (holds ``configs/``, ``standards/``, ``notebooks/``)."""
    home = os.environ.get("CRSBENCH_HOME")
    return Path(home).resolve() if home else PACKAGE_DIR.parent


def configs_dir() -> Path:
    """Folder of the shipped profiles (``quick.yaml``, ``default.yaml``, ``paper.yaml``)."""
    return project_root() / "configs"


def shipped_profiles() -> tuple[str, ...]:
    """Names of the shipped profiles (the ``.yaml`` files of :func:`configs_dir`), sorted."""
    return tuple(sorted(p.stem for p in configs_dir().glob("*.yaml")))


def standards_dir() -> Path:
    """Folder of the shipped, versioned reference standards."""
    return project_root() / "standards"


def notebooks_dir() -> Path:
    """Folder of the book's source notebooks (stored without outputs)."""
    return project_root() / "notebooks"


def cache_dir() -> Path:
    """Root of every on-disk cache (embeddings, weights, finished cells)."""
    env = os.environ.get("CRSBENCH_CACHE")
    root = Path(env) if env else project_root() / ".crsbench-cache"
    root.mkdir(parents=True, exist_ok=True)
    return root


def resolve_against(path_text: str, base: Path) -> Path:
    """A path as a profile writes it: ``~`` expanded, a relative one taken from ``base`` (the profile's folder).

    Examples
    --------
    >>> resolve_against("/data/x.npz", Path("/profiles")).as_posix()
    '/data/x.npz'
    """
    path = Path(os.path.expanduser(path_text))
    return path if path.is_absolute() else (base / path).resolve()
