"""End to end: a team's own encoders beside ``pixels`` through a reduced quick profile.

One run of the quick profile's grid cut down to one dataset, one seed, one
corruption at one severity and the frozen arm, with every way in for an
encoder of one's own: TinyNet (built here) exported as a ``torch.export``
archive, as TorchScript and, where onnxruntime is installed, as ONNX (the
mapping form, named and fed its own side), and the example plug-in package of
``examples/``, pip-installed by the test into a folder of its own (offline, no
dependencies, removed with the test's temporary folder; the virtual environment
is left as it was). The zoo page is then executed on the run.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from crsbench_lib.encoders.imaging import to_tensor
from crsbench_lib.paths import configs_dir, project_root
from crsbench_lib.results.io import read_results
from crsbench_lib.runner.config import load_profile
from crsbench_lib.runner.run import run_profile
from tests.encoders.model_files import TinyNet, export_onnx, export_pt2, export_torchscript, onnx_available

pytestmark = pytest.mark.slow

PLUGIN = "example_colour_grid"
EXAMPLE = project_root() / "examples" / "crsbench-example-encoder"


@pytest.fixture(scope="module")
def plugin(tmp_path_factory: pytest.TempPathFactory):
    """The example plug-in, pip-installed (no index, no dependencies) into a temporary folder put on sys.path."""
    work = tmp_path_factory.mktemp("plugin")
    source = shutil.copytree(EXAMPLE, work / "source")  # the build writes egg-info beside the sources: not in the repo
    target = work / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                    "--no-index", "--target", str(target), str(source)], check=True)
    assert list(target.glob("crsbench_example_encoder-*.dist-info/entry_points.txt"))
    patch = pytest.MonkeyPatch()
    patch.syspath_prepend(str(target))
    try:
        yield target
    finally:
        patch.undo()
        for name in [m for m in sys.modules if m.startswith("crsbench_example_encoder")]:
            del sys.modules[name]


@pytest.fixture(scope="module")
def own_run(plugin, tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("own")
    models = folder / "models"
    models.mkdir()
    net = TinyNet()
    export_pt2(net, models / "net.pt2")
    export_torchscript(net, models / "net.pt")
    encoders: list = ["pixels", "file:models/net.pt2", "file:models/net.pt", PLUGIN]
    if onnx_available():
        export_onnx(net, models / "net.onnx", side=48)  # exported at the side the profile feeds it
        encoders.append({"name": "vendor_onnx", "file": "models/net.onnx", "image_side": 48})
    config = yaml.safe_load((configs_dir() / "quick.yaml").read_text())
    config.update(name="own", datasets=config["datasets"][:1], encoders=encoders, seeds=[0], arms=["frozen"],
                  corruptions={**config["corruptions"], "families": ["gaussian_noise"], "severities": [3]})
    config.pop("lora")
    path = folder / "own.yaml"
    path.write_text(yaml.safe_dump(config))
    patch = pytest.MonkeyPatch()
    patch.setenv("CRSBENCH_CACHE", str(folder / "cache"))
    try:
        profile = load_profile(path)
        yield profile, run_profile(profile, out_dir=folder / "run", progress=False), models
    finally:
        patch.undo()


def test_rows_for_every_encoder(own_run) -> None:
    profile, outcome, _ = own_run
    table = read_results(outcome.results_path)
    assert set(table["encoder"]) == set(profile.encoders)
    clean = table[(table["condition"] == "clean") & (table["calibration"] == "none")]
    assert clean.groupby("encoder")["auroc"].mean().between(0.0, 1.0).all()
    # One network, two formats: the same features, so the same rows.
    by = {e: clean[clean["encoder"] == e]["auroc"].to_numpy() for e in ("file:models/net.pt2", "file:models/net.pt")}
    np.testing.assert_allclose(by["file:models/net.pt2"], by["file:models/net.pt"], atol=1e-6)


def test_stored_embeddings_are_the_file_called_directly(own_run) -> None:
    from crsbench_lib.embeddings.store import EmbeddingStore
    from crsbench_lib.runner.cell import get_encoder, load_dataset

    profile, _, models = own_run
    dataset = load_dataset(profile.datasets[0])
    images = dataset.split("test").images
    store = EmbeddingStore()  # the run's, under CRSBENCH_CACHE
    files_before = sorted(store.root.rglob("*.npy"))
    assert files_before
    for name, call in (("file:models/net.pt2", torch.export.load(str(models / "net.pt2")).module()),
                       ("file:models/net.pt", torch.jit.load(str(models / "net.pt")))):
        encoder = get_encoder(name, 32, profile)
        stored = store.embed(encoder, dataset, "test", batch_size=profile.embedding.batch_size, site=None)
        x = to_tensor(images, 32, 3)
        with torch.inference_mode():
            expected = torch.cat([call(x[i:i + encoder.batch_size]) for i in range(0, len(x), encoder.batch_size)])
        np.testing.assert_array_equal(np.asarray(stored), expected.numpy())
    assert sorted(store.root.rglob("*.npy")) == files_before  # read from the store, not recomputed


def test_manifest_records_each_file_and_its_sha256(own_run) -> None:
    profile, outcome, models = own_run
    manifest = json.loads(outcome.manifest_path.read_text())
    files = manifest["encoder_files"]
    assert set(files) == set(profile.encoder_files)
    card = files["file:models/net.pt2"]
    assert card["sha256"] == hashlib.sha256((models / "net.pt2").read_bytes()).hexdigest()
    assert card["format"] == "torch.export" and card["embedding_dim"] == 6 and card["parameters"] == 278
    if "vendor_onnx" in files:
        assert files["vendor_onnx"]["image_side"] == 48 and files["vendor_onnx"]["format"] == "ONNX"
    assert manifest["lora_not_adapted"] == {}  # no LoRA arm


def test_the_cell_key_follows_the_file_bytes(own_run) -> None:
    from crsbench_lib.runner.cell import RealBackend
    from crsbench_lib.runner.grid import build_cells, cell_key

    profile, outcome, models = own_run
    manifest = json.loads(outcome.manifest_path.read_text())
    keys = {(c["encoder"], c["seed"]): c["key"] for c in manifest["cells"]}
    prep = RealBackend().prepare(profile)
    assert {(c.encoder, c.seed): cell_key(profile, prep, c) for c in build_cells(profile, prep)} == keys
    saved = (models / "net.pt").read_bytes()
    try:
        export_torchscript(TinyNet(seed=1), models / "net.pt")  # retrained: other bytes at the same path
        prep = RealBackend().prepare(profile)
        changed = {(c.encoder, c.seed): cell_key(profile, prep, c) for c in build_cells(profile, prep)}
    finally:
        (models / "net.pt").write_bytes(saved)
    assert [k for k in keys if keys[k] != changed[k]] == [("file:models/net.pt", 0)]


def test_the_plugin_runs_as_any_encoder(own_run) -> None:
    from crsbench_lib.encoders.zoo import describe_encoders

    profile, outcome, _ = own_run
    table = read_results(outcome.results_path)
    assert PLUGIN in set(table["encoder"])
    assert any(row["name"] == PLUGIN and row["family"] == "entry point" for row in describe_encoders())


def test_the_zoo_page_shows_the_file_encoders(own_run, tmp_path: Path) -> None:
    from crsbench_lib.report.notebooks import error_outputs, execute_notebook

    profile, outcome, models = own_run
    result = execute_notebook("zoo", {"results_path": str(outcome.results_path), "profile": "own"},
                              tmp_path / "zoo.ipynb", use_cache=False, cache=tmp_path / "cache")
    assert error_outputs(result.output) == []
    page = result.output.read_text()
    sha = hashlib.sha256((models / "net.pt2").read_bytes()).hexdigest()
    assert "Encoders of this run read from exported model files" in page and "file:models/net.pt2" in page
    assert sha in page and "torch.export" in page
