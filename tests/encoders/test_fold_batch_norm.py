"""Batch-norm folding: the inference copy computes the module's function, faster, and leaves it alone."""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from crsbench_lib.encoders.neural import SmallCNN, NeuralEncoder
from crsbench_lib.encoders.torch_encoder import batch_norm_pairs, fold_batch_norm, module_hash


def _randomised_cnn(seed: int) -> nn.Module:
    """A zoo CNN with random weights and batch-norm statistics far from the identity."""
    gen = torch.Generator().manual_seed(seed)
    net = SmallCNN((4, 6, 8, 10))
    with torch.no_grad():
        for module in net.modules():
            if isinstance(module, nn.BatchNorm2d):
                module.running_mean.copy_(torch.randn(module.num_features, generator=gen))
                module.running_var.copy_(torch.rand(module.num_features, generator=gen) * 3 + 0.05)
                module.weight.copy_(torch.randn(module.num_features, generator=gen))
                module.bias.copy_(torch.randn(module.num_features, generator=gen))
            elif isinstance(module, nn.Conv2d):
                module.weight.copy_(torch.randn(module.weight.shape, generator=gen) * 0.3)
    return net.eval()


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**16), channels_last=st.booleans())
def test_folded_copy_computes_the_same_function(seed: int, channels_last: bool) -> None:
    net = _randomised_cnn(seed)
    if channels_last:
        net = net.to(memory_format=torch.channels_last)
    before = module_hash(net)
    folded = fold_batch_norm(net)
    x = torch.randn(5, 3, 16, 16, generator=torch.Generator().manual_seed(seed))
    with torch.no_grad():
        expected, got = net(x), folded(x)
    torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-4)
    assert module_hash(net) == before  # the original keeps its batch norms and weights
    assert not any(isinstance(m, nn.BatchNorm2d) for m in folded.modules())
    assert sum(isinstance(m, nn.BatchNorm2d) for m in net.modules()) == 4


def test_batch_norm_pairs_are_what_folding_replaces() -> None:
    net = _randomised_cnn(0)
    pairs = batch_norm_pairs(net)
    assert pairs == [("features.0", "features.1"), ("features.4", "features.5"), ("features.8", "features.9"),
                     ("features.12", "features.13")]
    folded = fold_batch_norm(net)
    for conv, norm in pairs:
        assert type(net.get_submodule(norm)) is nn.BatchNorm2d
        assert type(folded.get_submodule(norm)) is nn.Identity
        assert folded.get_submodule(conv).bias is not None  # the batch norm's shift moved into the conv
    assert batch_norm_pairs(folded) == []
    assert batch_norm_pairs(nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.BatchNorm2d(4))) == []


def test_module_without_a_conv_bn_pair_is_returned_as_it_is() -> None:
    net = nn.Sequential(nn.Linear(3, 4), nn.LayerNorm(4))
    assert fold_batch_norm(net) is net
    # A batch norm not directly after a convolution is not folded.
    net = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.BatchNorm2d(4)).eval()
    assert fold_batch_norm(net) is net


def test_zoo_encoder_embeds_its_forward_features() -> None:
    encoder = NeuralEncoder("multitask_broad_aug_s")
    images = np.random.default_rng(0).integers(0, 256, (16, 32, 32, 3), dtype=np.uint8)
    with torch.no_grad():
        direct = encoder.forward_features(encoder.preprocess(images)).numpy()
    np.testing.assert_allclose(encoder.embed(images), direct, rtol=1e-4, atol=1e-5)
