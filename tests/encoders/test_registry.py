"""Registry: the default zoo, unknown names, entry points, weight hash checks."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from crsbench_lib.encoders.base import Encoder
from crsbench_lib.encoders.registry import available_encoders, build_encoder
from crsbench_lib.encoders.zoo import DEFAULT_ZOO, ENTRY_POINT_GROUP, describe_encoders
from crsbench_lib.encoders.weights import SHIPPED_WEIGHTS_DIR
from crsbench_lib.errors import EncoderError


def test_default_zoo_composition() -> None:
    assert len(set(DEFAULT_ZOO)) == len(DEFAULT_ZOO) >= 18
    families = {row["name"]: row["family"] for row in describe_encoders()}
    assert sum(families[n] == "handcrafted" for n in DEFAULT_ZOO) >= 6
    assert sum(families[n] == "neural" for n in DEFAULT_ZOO) >= 10
    assert set(DEFAULT_ZOO) <= set(available_encoders())


def test_unknown_name_lists_valid_names() -> None:
    with pytest.raises(EncoderError, match=r"unknown encoder 'resnet9000'.*pixels.*simclr_broad_aug_s"):
        build_encoder("resnet9000")
    with pytest.raises(EncoderError, match="bad options"):
        build_encoder("hog", colour="blue")
    with pytest.raises(EncoderError, match="needs a model"):
        build_encoder("hf:")


def test_hash_mismatch_and_missing_weights(tmp_path: Path) -> None:
    folder = tmp_path / "w"
    shutil.copytree(SHIPPED_WEIGHTS_DIR, folder)
    data = bytearray((folder / "cnn_random.pt").read_bytes())
    data[-20] ^= 0xFF
    (folder / "cnn_random.pt").write_bytes(bytes(data))
    with pytest.raises(EncoderError, match=r"cnn_random\.pt: sha256 .* does not match"):
        build_encoder("cnn_random", weights_dir=folder)
    (folder / "pca.pt").unlink()
    with pytest.raises(EncoderError, match=r"pca\.pt: weights file missing"):
        build_encoder("pca", weights_dir=folder)
    with pytest.raises(EncoderError, match="no entry for kmeans.pt"):
        build_encoder("kmeans", weights_dir=tmp_path / "empty")


class ConstantEncoder(Encoder):
    name = "plugin_constant"
    family = "plugin"
    embedding_dim = 2

    def __init__(self, image_side: int = 32, value: float = 1.0) -> None:
        self.value = value

    @property
    def weights_hash(self) -> str:
        return f"const-{self.value}"

    def preprocess(self, images: np.ndarray) -> np.ndarray:
        return images

    def embed(self, images: np.ndarray) -> np.ndarray:
        return np.full((len(images), 2), self.value, dtype=np.float32)


def test_entry_point_encoder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module = tmp_path / "crsbench_test_plugin.py"
    module.write_text(
        "from importlib import import_module\n"
        f"sys_path = {str(Path(__file__).parent)!r}\n"
        "def make(image_side=32, **options):\n"
        "    import importlib.util, sys\n"
        "    spec = importlib.util.spec_from_file_location('plug_reg', sys_path + '/test_registry.py')\n"
        "    mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)\n"
        "    return mod.ConstantEncoder(image_side, **options)\n"
    )
    dist = tmp_path / "crsbench_test_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: crsbench-test-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\nplugin_constant = crsbench_test_plugin:make\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert "plugin_constant" in available_encoders()
    enc = build_encoder("plugin_constant", value=3.0)
    assert enc.embed(np.zeros((2, 8, 8), np.uint8)).tolist() == [[3.0, 3.0], [3.0, 3.0]]
    sys.modules.pop("crsbench_test_plugin", None)


def test_default_profile_runs_the_whole_zoo_and_adapts_every_candidate():
    from crsbench_lib.encoders.neural import NEURAL_ZOO
    from crsbench_lib.runner.config import load_profile

    profile = load_profile("default", check_files=False)
    assert list(profile.encoders) == list(DEFAULT_ZOO)
    # Every pretrained encoder but the in-task reference (pretrained on the evaluation labels already).
    candidates = [e for e in profile.encoders if e in NEURAL_ZOO and NEURAL_ZOO[e].method != "random"
                  and NEURAL_ZOO[e].family != "intask"]
    assert sorted(profile.lora.encoders) == sorted(candidates) and len(candidates) >= 12
    assert len(profile.lora.encoders) * len(profile.datasets) * len(profile.seeds) >= 90  # LoRA runs
