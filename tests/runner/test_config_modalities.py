"""Profiles naming the new corruption catalogues validate (config reads CORRUPTION_DOMAINS, unchanged)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from crsbench_lib.data.medmnist import FLAGS
from crsbench_lib.errors import ConfigError
from crsbench_lib.runner.config import load_profile

BASE = {
    "name": "t",
    "standard": "crs-template",
    "encoders": ["pixels", "hog"],
}


def load(tmp_path: Path, dataset: dict) -> object:
    path = tmp_path / "x.yaml"
    path.write_text(yaml.safe_dump({**BASE, "datasets": [dataset]}), encoding="utf-8")
    return load_profile(path)


@pytest.mark.parametrize("domain", ["ultrasound", "pathology", "microscopy", "ct", "oct"])
def test_a_profile_naming_a_new_domain_validates(tmp_path: Path, domain: str) -> None:
    (tmp_path / "mymnist.npz").write_bytes(b"")
    spec = load(tmp_path, {"kind": "medmnist", "flag": "mymnist", "root": ".", "domain": domain}).datasets[0]
    assert spec.options["domain"] == domain and spec.written["domain"] == domain


@pytest.mark.parametrize("flag", list(FLAGS))
def test_every_standard_flag_validates_without_a_domain_key(tmp_path: Path, flag: str) -> None:
    (tmp_path / f"{flag}.npz").write_bytes(b"")
    spec = load(tmp_path, {"kind": "medmnist", "flag": flag, "root": "."}).datasets[0]
    # The flag's own catalogue applies; the written profile (and its hash) carries no domain key.
    assert spec.options["domain"] is None and "domain" not in spec.written


def test_an_unknown_domain_is_still_refused_with_the_new_ones_listed(tmp_path: Path) -> None:
    (tmp_path / "mymnist.npz").write_bytes(b"")
    with pytest.raises(ConfigError, match=r"datasets\[0\]\.domain must be one of .*ultrasound.*oct"):
        load(tmp_path, {"kind": "medmnist", "flag": "mymnist", "root": ".", "domain": "cardiology"})


def test_a_manifest_may_name_a_new_domain(tmp_path: Path) -> None:
    (tmp_path / "m.csv").write_text("path,label\n", encoding="utf-8")
    spec = load(tmp_path, {"kind": "manifest", "name": "m", "csv": "m.csv", "domain": "ct"}).datasets[0]
    assert spec.options["domain"] == "ct"
