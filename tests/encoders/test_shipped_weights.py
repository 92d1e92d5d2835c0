"""The shipped weights: every zoo piece present, hashes match the manifest, small enough to ship."""

from __future__ import annotations

from crsbench_lib.encoders.neural import NEURAL_ZOO
from crsbench_lib.encoders.weights import SHIPPED_WEIGHTS_DIR, load_state, read_manifest
from crsbench_lib.hashing import file_sha256

#: The issue's limit on the shipped weights folder.
MAX_SHIPPED_BYTES = 25 * 1024 * 1024


def test_every_file_matches_its_manifest_hash() -> None:
    files = read_manifest(SHIPPED_WEIGHTS_DIR)["files"]
    on_disk = {p.name for p in SHIPPED_WEIGHTS_DIR.glob("*.pt")}
    assert on_disk == set(files), "files and manifest entries differ"
    for name, entry in files.items():
        assert file_sha256(SHIPPED_WEIGHTS_DIR / name) == entry["sha256"], name
        assert (SHIPPED_WEIGHTS_DIR / name).stat().st_size == entry["bytes"], name


def test_every_zoo_piece_is_shipped_and_loads() -> None:
    files = read_manifest(SHIPPED_WEIGHTS_DIR)["files"]
    for name in ("pca", "kmeans", *NEURAL_ZOO):
        assert f"{name}.pt" in files, name
        state, digest = load_state(f"{name}.pt")
        assert digest == files[f"{name}.pt"]["sha256"] and state


def test_shipped_folder_fits_the_limit() -> None:
    total = sum(p.stat().st_size for p in SHIPPED_WEIGHTS_DIR.iterdir())
    assert total <= MAX_SHIPPED_BYTES, f"{total / 2**20:.1f} MiB"
