"""The LoRA arm: adapters on a small torch encoder, trained deterministically, base untouched."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn.utils import parametrize

from crsbench_lib.cohort import build_dataset
from crsbench_lib.encoders.torch_encoder import TorchEncoder, module_hash
from crsbench_lib.errors import EncoderError
from crsbench_lib.runner.profile import LoraSpec
from crsbench_lib.runner.lora import (
    AdaptedEncoder,
    adapt_encoder,
    adapted_training_copy,
    derived_seed,
    merge_adapters,
    target_modules,
)


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
    # Only adapters were trained, then merged: no parametrization is left,
    # each adapted weight differs from the base weight by an update of rank at
    # most r, and biases are untouched.
    assert not any(parametrize.is_parametrized(m) for m in a.module.modules())
    assert not any(p.requires_grad for p in a.module.parameters())
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
    # ... and equal the differentiable path through the merged (unfolded) module.
    with torch.no_grad():
        through = base.features_through(adapted.module, base.preprocess(images)).numpy()
    np.testing.assert_allclose(embedded, through, atol=1e-4)
    assert not any(parametrize.is_parametrized(m) for m in adapted.module.modules())
    assert any(isinstance(m, nn.BatchNorm2d) for m in adapted.module.modules())  # the original keeps its batch norms


def _conv_bn_net(seed: int, widths: tuple[int, int], kernel: int, bias: bool, affine: bool) -> nn.Module:
    """conv-BN-ReLU twice, then a linear layer; random weights and batch-norm statistics far from the identity."""
    gen = torch.Generator().manual_seed(seed)
    c1, c2 = widths
    net = nn.Sequential(
        nn.Conv2d(3, c1, kernel, padding=kernel // 2, bias=bias), nn.BatchNorm2d(c1, affine=affine), nn.ReLU(),
        nn.Sequential(nn.Conv2d(c1, c2, 1, bias=bias), nn.BatchNorm2d(c2, affine=affine)), nn.ReLU(),
        nn.AdaptiveAvgPool2d(2), nn.Flatten(), nn.Linear(4 * c2, 5),
    )
    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.copy_(torch.randn(m.num_features, generator=gen))
                m.running_var.copy_(torch.rand(m.num_features, generator=gen) * 3 + 0.05)
                if affine:
                    m.weight.copy_(torch.randn(m.num_features, generator=gen))
                    m.bias.copy_(torch.randn(m.num_features, generator=gen))
            elif isinstance(m, (nn.Conv2d, nn.Linear)):
                for p in m.parameters():
                    p.copy_(torch.randn(p.shape, generator=gen) * 0.3)
    return net.eval()


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**16), widths=st.tuples(st.integers(1, 6), st.integers(1, 6)),
       kernel=st.sampled_from([1, 3]), bias=st.booleans(), affine=st.booleans(), rank=st.integers(1, 3),
       alpha=st.floats(0.5, 16.0), channels_last=st.booleans())
def test_adapters_on_the_folded_copy_compute_lora_on_the_original(seed: int, widths: tuple[int, int], kernel: int,
                                                                  bias: bool, affine: bool, rank: int, alpha: float,
                                                                  channels_last: bool) -> None:
    """Folded copy with gain-scaled adapters == original with W + (alpha / r) B A, then merged == the same.

    In float64, so that the tolerances test the algebra, not float32 rounding (which, through three layers
    and alpha / r up to 16, reaches 1e-4 relative on some draws).
    """
    net = _conv_bn_net(seed, widths, kernel, bias, affine).double()
    if channels_last:
        net = net.to(memory_format=torch.channels_last)
    before = module_hash(net)
    names = target_modules(net)
    assert names == ["0", "3.0", "7"]
    torch.manual_seed(seed)
    folded, adapters = adapted_training_copy(net, names, rank, alpha)
    assert not any(isinstance(m, nn.BatchNorm2d) for m in folded.modules())
    assert [p for p in folded.parameters() if p.requires_grad] == [p for a in adapters.values() for p in (a.A, a.B)]
    gen = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for adapter in adapters.values():
            assert not adapter.B.any()  # training starts at the frozen model
            adapter.A.copy_(torch.randn(adapter.A.shape, generator=gen))
            adapter.B.copy_(torch.randn(adapter.B.shape, generator=gen) * 0.3)
    # The reference: LoRA applied to the original weights, by the formula.
    reference = copy.deepcopy(net)
    with torch.no_grad():
        for name, adapter in adapters.items():
            weight = reference.get_submodule(name).weight
            weight += (alpha / rank) * (adapter.B @ adapter.A).reshape(weight.shape)
    x = torch.randn(4, 3, 8, 8, generator=gen).double()
    if channels_last:
        x = x.contiguous(memory_format=torch.channels_last)
    with torch.no_grad():
        expected, got = reference(x), folded(x)
    torch.testing.assert_close(got, expected, rtol=1e-9, atol=1e-9)
    assert module_hash(net) == before  # the copy shares no storage with the original
    merged = copy.deepcopy(net)
    merge_adapters(merged, adapters, rank, alpha)
    assert not any(parametrize.is_parametrized(m) for m in merged.modules())
    with torch.no_grad():
        torch.testing.assert_close(merged(x), expected, rtol=1e-9, atol=1e-9)


def test_dropout_is_refused(dataset) -> None:
    from dataclasses import replace

    with pytest.raises(EncoderError, match=r"LoRA dropout is not supported \(got 0.1, expected 0\)"):
        adapt_encoder(TinyTorchEncoder(), dataset, replace(SPEC, dropout=0.1), seed=0)


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
