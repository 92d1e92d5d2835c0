"""The run manifest: what produced a results table, in one JSON file.

It records the validated config and its hash, the package and library
versions, the dataset versions, the encoders' weights hashes, the code
fingerprints, per-cell timings (and whether each cell was reused from an
earlier run), the executor and the host. Written atomically next to the table.
"""

from __future__ import annotations

import os
import platform
import sys
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from crsbench_lib import __version__
from crsbench_lib.atomic import atomic_write_text
from crsbench_lib.results.manifest import manifest_text

# Libraries whose versions can change a number in the table.
LIBRARIES: tuple[str, ...] = (
    "numpy",
    "scipy",
    "pandas",
    "pyarrow",
    "scikit-learn",
    "scikit-image",
    "pillow",
    "torch",
    "transformers",
    "joblib",
    "dask",
    "distributed",
    "timm",
    "open-clip-torch",
)


def library_versions(names: Sequence[str] = LIBRARIES) -> dict[str, str]:
    """Installed version of each library (absent ones are left out)."""
    found: dict[str, str] = {}
    for name in names:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return found


def host_info() -> dict[str, Any]:
    """Where the run happened (no user names or paths beyond the host name)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover
        cores = os.cpu_count() or 1
    return {
        "hostname": platform.node(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "python": sys.version.split()[0],
        "cpu_count": cores,
    }


def write_manifest(path: Path, content: Mapping[str, Any]) -> Path:
    """Write the manifest as indented, key-sorted JSON (atomically; format: :func:`~crsbench_lib.results.manifest.manifest_text`)."""
    atomic_write_text(path, manifest_text(content, __version__))
    return path
