"""LoRA adapters as layers: which layers are adapted, the adapted training copy, and the merge.

The arithmetic of :mod:`crsbench_lib.runner.lora`, kept apart from its training
loop: an adapter ``W -> W + (c B) A`` of rank ``r`` (:class:`LowRankUpdate`),
carried by a batch-norm-folded copy of the network
(:func:`adapted_training_copy`) as a low-rank path beside each frozen
convolution (:class:`LowRankConv`) or as a weight parametrization of any other
layer, and merged into the original weights after training
(:func:`merge_adapters`).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from typing import Any

import torch
from torch.nn.utils import parametrize

from crsbench_lib.encoders.torch_encoder import batch_norm_pairs, fold_batch_norm


def target_modules(module: Any, prefixes: Sequence[str] | None = None) -> list[str]:
    """Qualified names of the ``Linear``/``Conv2d`` layers LoRA adapts.

    Parameters
    ----------
    module : torch.nn.Module
    prefixes : sequence of str, optional
        Keep only layers at or below these qualified names (the adapted
        blocks of a :class:`NetworkCut`); None keeps every layer.
    """
    nn = torch.nn

    skip: list[str] = [name for name, m in module.named_modules() if isinstance(m, nn.MultiheadAttention)]
    names = []
    for name, m in module.named_modules():
        if not name or any(name == s or name.startswith(f"{s}.") for s in skip):
            continue
        if prefixes is not None and not any(name == p or name.startswith(f"{p}.") for p in prefixes):
            continue
        if type(m) in (nn.Linear, nn.Conv2d):
            names.append(name)
    return names


class LowRankConv(torch.nn.Module):
    """A frozen ``Conv2d`` with a LoRA adapter: ``conv(x, W) + conv(conv(x, A), c B)``.

    Under autograd the update runs as its own low-rank path, so training never
    computes the gradient of the full weight ``W`` (a convolution's weight
    gradient costs as much as its forward pass; the path's gradients are those
    of ``r``-channel convolutions); without autograd it is one convolution with
    ``W + (c B) A``, cheaper than the path's extra convolutions. The two are
    the same function up to float rounding.

    Parameters
    ----------
    layer : torch.nn.Conv2d
        Frozen; ``groups == 1`` and ``padding_mode == "zeros"``
        (:func:`low_rank_path_applies`).
    adapter : LowRankUpdate
        Its ``A`` is read as ``r`` kernels of ``layer``'s kernel shape.
    """

    def __init__(self, layer: torch.nn.Conv2d, adapter: LowRankUpdate) -> None:
        super().__init__()
        self.layer = layer
        self.adapter = adapter

    @property
    def weight(self) -> torch.Tensor:
        """The adapted weight ``W + (c B) A``, in ``W``'s shape."""
        return self.adapter(self.layer.weight)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        layer, adapter = self.layer, self.adapter
        functional = torch.nn.functional
        if not torch.is_grad_enabled():
            return layer._conv_forward(x, self.weight, layer.bias)
        kernels = adapter.A.reshape(adapter.A.shape[0], *layer.weight.shape[1:])
        low = functional.conv2d(x, kernels, None, layer.stride, layer.padding, layer.dilation)
        return layer(x) + functional.conv2d(low, (adapter.scale * adapter.B)[:, :, None, None])


def low_rank_path_applies(layer: torch.nn.Module) -> bool:
    """Whether ``layer`` is a convolution :class:`LowRankConv` can adapt (ungrouped, zero padding)."""
    return type(layer) is torch.nn.Conv2d and layer.groups == 1 and layer.padding_mode == "zeros"


class LowRankUpdate(torch.nn.Module):
    """A LoRA adapter as a weight parametrization: ``W -> W + (c * B) A``, reshaped to ``W``'s shape.

    ``A`` is ``(r, fan_in)``, Kaiming-uniform with ``a = sqrt(5)`` (as peft and
    the reference implementation initialise ``lora_A``, from the same random
    stream as peft), ``B`` is ``(out, r)``, zero. ``c`` is ``alpha / r``, times the folded batch norm's gain per output
    channel on a folded convolution (a buffer of shape ``(out, 1)``).

    Parameters
    ----------
    weight : torch.Tensor
        The weight it will parametrize (shape, device and dtype are taken from it).
    rank : int
        ``r``.
    scale : float or torch.Tensor
        ``c``: a number or one value per output channel.
    """

    def __init__(self, weight: torch.Tensor, rank: int, scale: float | torch.Tensor) -> None:
        super().__init__()
        out, fan_in = weight.shape[0], weight[0].numel()
        kw: dict[str, Any] = {"device": weight.device, "dtype": weight.dtype}
        # A is drawn on the CPU generator, as peft (0.13 to 0.21) drew it: its
        # lora_A and lora_B layers' constructors, then lora_A's re-initialisation.
        # So the adapters start where the peft implementation's started, and
        # replacing peft changed the arm's results by float rounding only.
        a = torch.empty(rank, fan_in)
        torch.nn.init.kaiming_uniform_(a, a=math.sqrt(5))  # lora_A's constructor
        torch.empty(out, rank).uniform_()  # lora_B's constructor (its values are discarded: B starts at zero)
        torch.nn.init.kaiming_uniform_(a, a=math.sqrt(5))
        self.A = torch.nn.Parameter(a.to(**kw))
        self.B = torch.nn.Parameter(torch.zeros(out, rank, **kw))
        self.register_buffer("scale", torch.as_tensor(scale, **kw).reshape(-1, 1).expand(out, 1).clone())

    def delta(self, scale: float | torch.Tensor) -> torch.Tensor:
        """``(scale * B) A``, a ``(out, fan_in)`` matrix."""
        return (scale * self.B) @ self.A

    def forward(self, weight: torch.Tensor) -> torch.Tensor:
        return weight + self.delta(self.scale).reshape(weight.shape)


def adapted_training_copy(module: torch.nn.Module, names: Sequence[str], rank: int,
                          alpha: float) -> tuple[torch.nn.Module, dict[str, LowRankUpdate]]:
    """A batch-norm-folded copy of ``module`` whose layers ``names`` carry LoRA adapters.

    The copy (:func:`~crsbench_lib.encoders.torch_encoder.fold_batch_norm`, or
    a plain deep copy where nothing folds) shares no storage with ``module``;
    its own parameters are frozen and it is in eval mode. On a convolution
    folded with the batch norm after it, the adapter's scale is ``alpha / r``
    times that batch norm's gain ``gamma / sqrt(running_var + eps)`` per output
    channel, so for any ``A`` and ``B`` the copy computes what ``module``
    computes with ``W + (alpha / r) B A`` in place of each adapted weight
    ``W`` (up to float rounding). ``A`` is drawn from torch's global
    generator, layer after layer in ``names`` order. A convolution is
    replaced in the copy by a :class:`LowRankConv` holding it (its qualified
    name then leads to the wrapper); any other layer's weight is
    parametrized by its adapter.

    Parameters
    ----------
    module : torch.nn.Module
        The network, in eval mode (batch norms on their running statistics);
        not modified.
    names : sequence of str
        Qualified names of ``Linear``/``Conv2d`` layers (:func:`target_modules`).
    rank, alpha : int, float
        ``r`` and ``alpha``.

    Returns
    -------
    tuple
        The copy and, per name in ``names`` order, its adapter (whose ``A``
        and ``B`` are the trainable parameters).
    """
    folded = fold_batch_norm(module)  # a deep copy whenever something is folded
    train_module = copy.deepcopy(module) if folded is module else folded
    for param in train_module.parameters():  # the folded layers' new parameters included
        param.requires_grad = False
    gains = {}
    for conv_name, norm_name in batch_norm_pairs(module):
        norm = module.get_submodule(norm_name)
        gamma = norm.weight if norm.weight is not None else torch.ones_like(norm.running_var)
        # As fuse_conv_bn_eval scales the folded weight.
        gains[conv_name] = (gamma * torch.rsqrt(norm.running_var + norm.eps)).detach().clone()
    scaling = alpha / rank
    adapters = {}
    for name in names:
        layer = train_module.get_submodule(name)
        scale = scaling * gains[name] if name in gains else scaling
        adapter = LowRankUpdate(layer.weight.detach(), rank, scale)
        if low_rank_path_applies(layer):
            parent, _, child = name.rpartition(".")
            setattr(train_module.get_submodule(parent) if parent else train_module, child, LowRankConv(layer, adapter))
        else:
            parametrize.register_parametrization(layer, "weight", adapter)
        adapters[name] = adapter
    return train_module.eval(), adapters


def merge_adapters(module: torch.nn.Module, adapters: dict[str, LowRankUpdate], rank: int, alpha: float) -> None:
    """Add each adapter's ``(alpha / r) B A`` to the weight of ``module``'s layer of the same name, in place.

    ``module`` is the original, unfolded network (it keeps its batch norms, so
    no gain enters); it stays plain layers, with no parametrization.
    """
    scaling = alpha / rank
    with torch.no_grad():
        for name, adapter in adapters.items():
            weight = module.get_submodule(name).weight
            weight.add_(adapter.delta(scaling).reshape(weight.shape))


__all__ = ["LowRankConv", "LowRankUpdate", "adapted_training_copy", "low_rank_path_applies", "merge_adapters",
           "target_modules"]
