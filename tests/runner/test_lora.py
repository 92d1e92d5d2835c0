"""The LoRA arm: adapters on a small torch encoder, trained deterministically, base untouched."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from crsbench_lib.cohort import build_dataset
from crsbench_lib.encoders.torch_encoder import TorchEncoder, module_hash
from crsbench_lib.errors import EncoderError
from crsbench_lib.runner.config import LoraSpec
from crsbench_lib.runner.lora import AdaptedEncoder, adapt_encoder, derived_seed, target_modules


class TinyTorchEncoder(TorchEncoder):
    """Conv + linear, seeded: the shape of the zoo's CNNs at a fraction of the cost."""

    family = "neural"

    def __init__(self, image_side: int = 32) -> None:
        super().__init__(image_side, (0.5, 0.5, 0.5), (0.25, 0.25, 0.25), device="cpu", batch_size=64)
        gen = torch.Generator().manual_seed(0)
        self.name = "tiny"
        self._net = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU(),
                                  nn.AdaptiveAvgPool2d(2), nn.Flatten(), nn.Linear(32, 16))
        with torch.no_grad():
            for p in self._net.parameters():
                p.copy_(torch.randn(p.shape, generator=gen) * 0.3)
        self._net.eval()
        self.embedding_dim = 16

    @property
    def module(self) -> nn.Module:
        return self._net

    @property
    def weights_hash(self) -> str:
        return module_hash(self._net)

    def forward_features(self, x: torch.Tensor) -> torch.Tensor:
        return self._net(x)


SPEC = LoraSpec(encoders="neural", rank=2, alpha=4.0, dropout=0.0, epochs=3, patience=1, lr=5e-3,
                weight_decay=0.0, batch_size=32, max_train=None)


@pytest.fixture(scope="module")
def dataset():
    return build_dataset("derm", seed=0, sizes={"train": 96, "val": 48, "test": 40}, image_side=32)


def test_target_modules_are_linear_and_conv_layers() -> None:
    assert target_modules(TinyTorchEncoder().module) == ["0", "4"]
    mha = nn.Sequential(nn.Linear(4, 4), nn.MultiheadAttention(4, 1))
    assert target_modules(mha) == ["0"]


def test_adaptation_is_deterministic_and_leaves_the_base_alone(dataset) -> None:
    base = TinyTorchEncoder()
    before = base.weights_hash
    images = dataset.split("test").images
    frozen = base.embed(images)
    a = adapt_encoder(base, dataset, SPEC, seed=0)
    b = adapt_encoder(TinyTorchEncoder(), dataset, SPEC, seed=0)
    c = adapt_encoder(TinyTorchEncoder(), dataset, SPEC, seed=1)
    assert isinstance(a, AdaptedEncoder)
    assert base.weights_hash == before and np.array_equal(base.embed(images), frozen)
    assert a.weights_hash == b.weights_hash != before
    assert np.array_equal(a.embed(images), b.embed(images))
    assert c.weights_hash != a.weights_hash
    assert a.report.n_adapted_layers == 2 and a.report.epochs_run >= 1
    assert a.report.best_epoch >= 1  # training improved the validation loss over the frozen start
    adapted = a.embed(images)
    assert adapted.dtype == np.float32 and adapted.shape == frozen.shape
    assert not np.array_equal(adapted, frozen)
    # Only adapters were trained, then merged and unwrapped: no LoRA layer is
    # left, each adapted weight differs from the base weight by an update of
    # rank at most r, and biases are untouched.
    from peft.tuners.lora import LoraLayer

    assert not any(isinstance(m, LoraLayer) for m in a.module.modules())
    base_layers = dict(base.module.named_modules())
    adapted_layers = dict(a.module.named_modules())
    for name in target_modules(base.module):
        original, layer = base_layers[name], adapted_layers[name]
        assert type(layer) is type(original), name
        delta = (layer.weight - original.weight).detach().reshape(layer.weight.shape[0], -1)
        assert 1 <= int(torch.linalg.matrix_rank(delta, atol=1e-6)) <= SPEC.rank, name
        assert torch.equal(layer.bias, original.bias), name


def test_zoo_cnn_adapts_and_embeds_through_its_merged_weights(dataset) -> None:
    """The adapted encoder's embeddings are its merged module's, not a stale copy of the base's."""
    from crsbench_lib.encoders.neural import NeuralEncoder

    base = NeuralEncoder("multitask_broad_aug_s")
    spec = LoraSpec(encoders="neural", rank=2, alpha=4.0, dropout=0.0, epochs=2, patience=1, lr=1e-2,
                    weight_decay=0.0, batch_size=32, max_train=None)
    adapted = adapt_encoder(base, dataset, spec, seed=0)
    assert adapted.report.best_epoch >= 1  # the adapters moved, so a stale copy would show
    images = dataset.split("test").images
    with torch.no_grad():
        direct = adapted.module(base.preprocess(images).contiguous(memory_format=torch.channels_last)).numpy()
    embedded = adapted.embed(images)
    np.testing.assert_allclose(embedded, direct, atol=1e-4)
    assert np.abs(embedded - base.embed(images)).max() > 1e-3


def test_same_result_with_one_or_two_torch_threads(dataset) -> None:
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = adapt_encoder(TinyTorchEncoder(), dataset, SPEC, seed=0)
        torch.set_num_threads(2)
        two = adapt_encoder(TinyTorchEncoder(), dataset, SPEC, seed=0)
    finally:
        torch.set_num_threads(threads)
    assert one.weights_hash == two.weights_hash


def test_multilabel_dataset_trains(dataset) -> None:
    cxr = build_dataset("cxr", seed=0, sizes={"train": 64, "val": 32, "test": 32}, image_side=32)
    adapted = adapt_encoder(TinyTorchEncoder(), cxr, SPEC, seed=0)
    assert np.isfinite(adapted.report.best_val_loss)


def test_handcrafted_encoder_is_refused(dataset) -> None:
    from crsbench_lib.encoders.registry import build_encoder

    with pytest.raises(EncoderError, match="needs a neural encoder"):
        adapt_encoder(build_encoder("pixels"), dataset, SPEC, seed=0)


def test_derived_seed_is_stable() -> None:
    assert derived_seed("lora", "a", 1) == derived_seed("lora", "a", 1) != derived_seed("lora", "a", 2)
    assert 0 <= derived_seed("x") < 2**31


def test_fraction_adapter_sees_only_its_subset_labels() -> None:
    from crsbench_lib.data.base import ImageSplit
    from crsbench_lib.evaluation.fractions import label_fraction_subsets, validation_subsets
    from crsbench_lib.runner.lora import fraction_subsets

    ds = build_dataset("derm", seed=0, sizes={"train": 96, "val": 48, "test": 40}, image_side=32)
    subsets = fraction_subsets(ds, 0, (1.0, 0.25, 0.1), "matched")
    assert set(subsets) == {0.25, 0.1}
    train_index, val_index = subsets[0.25]
    # the very subsets the probe at that fraction uses
    assert np.array_equal(train_index, label_fraction_subsets(ds.split("train").labels, (0.25, 0.1), 0, "multiclass")[0.25])
    assert np.array_equal(val_index, validation_subsets(ds.split("val").labels, (0.25, 0.1), 0, "multiclass")[0.25])
    # Every label outside the subsets is made invalid: reading any of them would fail the loss.
    parts = ds.development(0)
    for name, index in (("train", train_index), ("val", val_index)):
        labels = np.full(len(parts[name]), ds.n_classes + 7, dtype=np.int64)
        labels[index] = parts[name].labels[index]
        parts[name] = ImageSplit(parts[name].images, labels, name)
    adapted = adapt_encoder(TinyTorchEncoder(), ds, SPEC, seed=0, train_index=train_index, val_index=val_index)
    assert adapted.report.n_train_labels == train_index.size < len(parts["train"])
    with pytest.raises((IndexError, RuntimeError)):
        adapt_encoder(TinyTorchEncoder(), ds, SPEC, seed=0)  # the full split holds the invalid labels
