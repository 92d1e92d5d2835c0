"""The LoRA-adapted arm (method section 6, item 9).

For one neural encoder, dataset and seed: low-rank adapters (Hu et al., 2022,
"LoRA: Low-Rank Adaptation of Large Language Models", ICLR) are put on the
weight of every ``nn.Linear`` and ``nn.Conv2d`` layer of the encoder's torch
module (:func:`target_modules`), and trained together with a linear head on
the seed's train split, with early stopping on its validation loss. The
adapted encoder then goes through exactly the same measurement as the frozen
arm (clean, corruptions on the same image sets, shift); its rows carry
``arm = "lora"``.

Label fractions (method section 9, amendment 8): an adapter trained on
every label and then probed with 1 % of them would measure a team that had 100 %
of its labels. So the label-fraction rows of this arm come from one more
adapter per fraction ``f``, trained on that fraction's train subset only (and
stopped early on that fraction's validation subset), the very subsets the probe
at ``f`` uses (:func:`fraction_subsets`). These adapters are measured on the
clean conditions of their fraction only (train and validation subsets, test),
which keeps the arm's extra cost to one small training and one test embedding
per fraction.

The adapted weight of a layer is ``W + (alpha / r) * B A``, with ``A`` of
shape ``(r, fan_in)`` (``fan_in`` is ``in_features``, or ``in_channels /
groups * kh * kw`` for a convolution, whose update is reshaped to the kernel's
shape), initialised as in the reference implementation (Kaiming-uniform with
``a = sqrt(5)``), and ``B`` of shape ``(out, r)`` zero-initialised, so training
starts from the frozen encoder exactly. Only ``A``, ``B`` and the head are
trained; the base weights and the normalisation statistics stay frozen: the
module is in eval mode throughout (batch norm uses its running statistics,
nothing else is updated). Adapter dropout is not supported (``lora.dropout``
must be 0; in eval mode an input dropout would be inactive anyway). After
training the update is merged into ``W`` and nothing of the adapters is left,
so the adapted encoder embeds at the frozen model's cost and through the same
batch-norm-folded inference copy.

How it is computed: each adapter is a weight parametrization
(:func:`torch.nn.utils.parametrize.register_parametrization`), so a layer runs
one convolution or matrix product with the adapted weight rather than the base
layer plus two adapter layers; and training runs through the batch-norm-folded
copy of the module (:func:`~crsbench_lib.encoders.torch_encoder.fold_batch_norm`).
For a convolution followed by a batch norm with gain ``g = gamma /
sqrt(running_var + eps)`` per output channel, the folded weight is
``diag(g) W``, so the update carried on the folded convolution is
``diag(g) (alpha / r) B A``: the trained function (and so the gradients of
``A``, ``B`` and the head) is that of LoRA on the original convolution followed
by its batch norm, up to float rounding. This holds because a folded pair is
a convolution and the batch norm right after it in an ``nn.Sequential``
(:func:`~crsbench_lib.encoders.torch_encoder.batch_norm_pairs`), so the
convolution's output reaches nothing but that batch norm. The merge goes into the original,
unfolded weights (``W + (alpha / r) B A``, without ``g``, as the original
keeps its batch norm). Measured on one torch thread, one epoch of 2,000 32-px
images, batch 64, against adapters as separate layers on the unfolded module
(peft 0.21): large zoo CNN 1.68 s instead of 2.65 s, small CNN 1.30 s instead
of 1.80 s, ViT (no batch norm; the gain is the parametrization's) 2.24 s
instead of 3.61 s.

Layers inside an ``nn.MultiheadAttention`` (as in some hub models) are left
out, because that module reads its projection weights directly. The zoo's ViT
uses separate ``Linear`` layers for its attention, which are adapted.

Determinism: the adapters' initialisation and the batch order come from a seed
derived from (encoder, dataset, seed) only; training runs in a forked RNG
state, so the caller's random streams are untouched. Training runs on
:data:`TRAIN_THREADS` torch threads whatever the executor, because the gradients'
parallel reductions change their last bits with the thread count (measured: one
vs two threads give different adapters), and the table must not depend on
``--jobs``. On a GPU, bit-identity also needs deterministic kernels
(``torch.use_deterministic_algorithms``), which this module does not force.
"""

from __future__ import annotations

import copy
import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch.nn.utils import parametrize

from crsbench_lib.data.base import ImageDataset
from crsbench_lib.encoders.base import Encoder
from crsbench_lib.encoders.torch_encoder import batch_norm_pairs, fold_batch_norm
from crsbench_lib.errors import EncoderError
from crsbench_lib.runner.profile import LoraSpec

# Torch threads during LoRA training, fixed so the result does not depend on the executor.
TRAIN_THREADS = 1


def derived_seed(*parts: object) -> int:
    """A 31-bit seed from the given parts (stable across processes and platforms)."""
    text = "|".join(str(p) for p in parts)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big") & 0x7FFFFFFF


def target_modules(module: Any) -> list[str]:
    """Qualified names of the ``Linear``/``Conv2d`` layers LoRA adapts."""
    nn = torch.nn

    skip: list[str] = [name for name, m in module.named_modules() if isinstance(m, nn.MultiheadAttention)]
    names = []
    for name, m in module.named_modules():
        if not name or any(name == s or name.startswith(f"{s}.") for s in skip):
            continue
        if type(m) in (nn.Linear, nn.Conv2d):
            names.append(name)
    return names


@dataclass(frozen=True)
class LoraReport:
    """How an adaptation went (stored in the run manifest, see :func:`adaptation_facts`).

    ``best_epoch == epochs_run`` means the validation loss still fell at the
    last epoch: training stopped at the epoch limit, not by early stopping,
    while the adapter was still improving. ``best_epoch == 0`` means no epoch
    beat the frozen start (the adapter is the identity update).
    """

    epochs_run: int
    best_epoch: int
    best_val_loss: float
    n_trainable: int
    n_adapted_layers: int
    n_train_labels: int


def adaptation_facts(full: LoraReport, fractions: Mapping[float, LoraReport], max_epochs: int) -> dict[str, Any]:
    """The JSON facts of one LoRA run's adapters, for the run manifest.

    Parameters
    ----------
    full : LoraReport
        The adapter trained on the whole train split.
    fractions : mapping of float to LoraReport
        The adapters trained on each label fraction's subset.
    max_epochs : int
        The epoch limit (``LoraSpec.epochs``).

    Returns
    -------
    dict
        ``{"max_epochs": int, "adapters": [{"label_fraction", "epochs_run",
        "best_epoch", "best_val_loss", "n_train_labels"}, ...]}``, the full
        split's adapter first, then the fractions in descending order.

    Examples
    --------
    >>> r = LoraReport(3, 3, 0.51234567, 1000, 8, 2000)
    >>> adaptation_facts(r, {0.1: LoraReport(3, 1, 0.6, 1000, 8, 200)}, 3)["adapters"][1]["best_epoch"]
    1
    """
    def one(fraction: float, report: LoraReport) -> dict[str, Any]:
        return {"label_fraction": float(fraction), "epochs_run": int(report.epochs_run),
                "best_epoch": int(report.best_epoch), "best_val_loss": round(float(report.best_val_loss), 6),
                "n_train_labels": int(report.n_train_labels)}

    ordered = sorted(fractions.items(), key=lambda item: -item[0])
    return {"max_epochs": int(max_epochs), "adapters": [one(1.0, full)] + [one(f, r) for f, r in ordered]}


class AdaptedEncoder(Encoder):
    """An encoder whose module carries trained LoRA adapters.

    It embeds through the adapted copy of the base encoder; its weights hash
    covers the base encoder's hash and the adapted module's state.
    """

    family = "lora"

    def __init__(self, adapted: Encoder, base_hash: str, state_hash: str, report: LoraReport) -> None:
        self._adapted = adapted
        self.name = adapted.name
        self.embedding_dim = adapted.embedding_dim
        self._hash = hashlib.sha256(f"lora|{base_hash}|{state_hash}".encode()).hexdigest()
        self.report = report

    @property
    def weights_hash(self) -> str:
        return self._hash

    @property
    def module(self) -> Any:
        return self._adapted.module

    def preprocess(self, images: np.ndarray) -> Any:
        return self._adapted.preprocess(images)

    def embed(self, images: np.ndarray) -> np.ndarray:
        return self._adapted.embed(images)


def _state_hash(module: Any) -> str:
    """SHA-256 over a module's state dict (names, dtypes, shapes, bytes; 0-d tensors included)."""
    h = hashlib.sha256()
    for key, value in module.state_dict().items():
        t = value.detach().to("cpu").contiguous().reshape(-1)
        h.update(f"{key}|{t.dtype}|{tuple(value.shape)}|".encode())
        h.update(t.view(-1).numpy().tobytes() if t.numel() else b"")
    return h.hexdigest()


def _loss_fn(task: str) -> Any:
    if task == "multilabel":
        return torch.nn.BCEWithLogitsLoss()
    return torch.nn.CrossEntropyLoss()


def _targets(labels: np.ndarray, task: str) -> Any:
    if task == "multilabel":
        return torch.as_tensor(np.asarray(labels), dtype=torch.float32)
    return torch.as_tensor(np.asarray(labels), dtype=torch.long)


def adapt_encoder(
    encoder: Encoder,
    dataset: ImageDataset,
    spec: LoraSpec,
    seed: int,
    train_index: np.ndarray | None = None,
    val_index: np.ndarray | None = None,
) -> AdaptedEncoder:
    """Train LoRA adapters plus a linear head on ``dataset``'s train split of seed ``seed``.

    Parameters
    ----------
    encoder : Encoder
        A neural encoder (``encoder.module`` is a torch module and the encoder
        has ``features_through`` and ``preprocess``, as every
        :class:`~crsbench_lib.encoders.torch_encoder.TorchEncoder`). It is not
        modified.
    dataset : ImageDataset
        Train split for fitting, validation split for early stopping (both of
        evaluation seed ``seed``).
    spec : LoraSpec
        Rank, alpha, dropout (must be 0), epochs, patience, learning rate,
        weight decay, batch size, optional cap on train images.
    seed : int
        The cell's seed.
    train_index, val_index : numpy.ndarray, optional
        Train only on these train examples and stop early on these validation
        examples (a label fraction's subsets); no other label is read.

    Returns
    -------
    AdaptedEncoder
        The adapted encoder, at the epoch with the lowest validation loss.

    Raises
    ------
    EncoderError
        If the encoder has no torch module or no layer LoRA can adapt, or
        ``spec.dropout`` is not 0.
    """
    if encoder.module is None or not hasattr(encoder, "features_through"):
        raise EncoderError(f"encoder {encoder.name}: the LoRA arm needs a neural encoder (torch module)")
    if spec.dropout != 0:
        raise EncoderError(f"encoder {encoder.name}: LoRA dropout is not supported (got {spec.dropout}, expected 0)")
    base_hash = encoder.weights_hash
    adapted = copy.deepcopy(encoder)
    module = adapted.module
    names = target_modules(module)
    if not names:
        raise EncoderError(f"encoder {encoder.name}: no Linear or Conv2d layer for LoRA to adapt")
    device = next(module.parameters()).device
    threads = torch.get_num_threads()
    torch.set_num_threads(TRAIN_THREADS)
    try:
        report, state_hash = _train(adapted, module, names, dataset, spec, seed, device, train_index, val_index)
    finally:
        torch.set_num_threads(threads)
    return AdaptedEncoder(adapted, base_hash, state_hash, report)


def _subset(split: Any, index: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    if index is None:
        return split.images, split.labels
    index = np.asarray(index, dtype=np.int64)
    return split.images[index], split.labels[index]


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
    generator, layer after layer in ``names`` order.

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


def _train(adapted: Encoder, module: Any, names: list[str], dataset: ImageDataset, spec: LoraSpec, seed: int,
           device: torch.device, train_index: np.ndarray | None,
           val_index: np.ndarray | None) -> tuple[LoraReport, str]:
    """Train adapters and a head on a folded copy, merge them into ``module``; returns the report and state hash."""
    subset = "" if train_index is None else hashlib.sha256(np.asarray(train_index, np.int64).tobytes()).hexdigest()
    train_seed = derived_seed("lora", adapted.name, dataset.name, dataset.version, seed, subset)
    train_x, train_labels = _subset(dataset.split("train", seed=seed), train_index)
    val_x, val_labels = _subset(dataset.split("val", seed=seed), val_index)
    n_train = len(train_x) if spec.max_train is None else min(spec.max_train, len(train_x))
    train_images, train_y = train_x[:n_train], _targets(train_labels[:n_train], dataset.task)
    val_y = _targets(val_labels, dataset.task)
    loss_fn = _loss_fn(dataset.task)

    for param in module.parameters():
        param.requires_grad = False
    # Base weights and batch-norm statistics stay frozen: eval mode throughout.
    module.eval()
    features = adapted.features_through  # type: ignore[attr-defined]

    with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
        torch.manual_seed(train_seed)
        train_module, adapters = adapted_training_copy(module, names, spec.rank, spec.alpha)
        head = torch.nn.Linear(adapted.embedding_dim, dataset.n_classes).to(device)
        adapter_params = {f"{name}.{k}": p for name, a in adapters.items() for k, p in (("A", a.A), ("B", a.B))}
        params = list(adapter_params.values()) + list(head.parameters())
        optimiser = torch.optim.AdamW(params, lr=spec.lr, weight_decay=spec.weight_decay)
        order_rng = torch.Generator().manual_seed(train_seed)

        def val_loss() -> float:
            total, count = 0.0, 0
            # cached(): each adapted weight is computed once for the whole pass.
            with torch.no_grad(), parametrize.cached():
                for start in range(0, len(val_x), spec.batch_size):
                    x = adapted.preprocess(val_x[start : start + spec.batch_size]).to(device)
                    y = val_y[start : start + spec.batch_size].to(device)
                    total += float(loss_fn(head(features(train_module, x)), y)) * len(y)
                    count += len(y)
            return total / count

        def snapshot() -> dict[str, Any]:
            state = {f"m.{k}": v.detach().clone() for k, v in adapter_params.items()}
            state.update({f"h.{k}": v.detach().clone() for k, v in head.state_dict().items()})
            return state

        best_loss, best_epoch, best_state = val_loss(), 0, snapshot()
        epochs_run, stale = 0, 0
        for epoch in range(1, spec.epochs + 1):
            order = torch.randperm(n_train, generator=order_rng).numpy()
            for start in range(0, n_train, spec.batch_size):
                idx = np.sort(order[start : start + spec.batch_size])
                x = adapted.preprocess(train_images[idx]).to(device)
                y = train_y[idx].to(device)
                optimiser.zero_grad(set_to_none=True)
                loss = loss_fn(head(features(train_module, x)), y)
                loss.backward()
                optimiser.step()
            epochs_run = epoch
            current = val_loss()
            if current < best_loss:
                best_loss, best_epoch, best_state, stale = current, epoch, snapshot(), 0
            else:
                stale += 1
                if stale >= spec.patience:
                    break

    # Merge the best epoch's update into the original, unfolded weights
    # (W + (alpha / r) B A: the original keeps its batch norms, so no gain).
    # The training copy, with its parametrizations, is dropped: the adapted
    # module is plain layers, embeds at the frozen model's cost and through
    # the same batch-norm-folded inference copy (refresh_inference).
    with torch.no_grad():
        for name, adapter in adapters.items():
            adapter.A.copy_(best_state[f"m.{name}.A"])
            adapter.B.copy_(best_state[f"m.{name}.B"])
    merge_adapters(module, adapters, spec.rank, spec.alpha)
    module.eval()
    refresh = getattr(adapted, "refresh_inference", None)
    if refresh is not None:
        refresh()

    report = LoraReport(
        epochs_run=epochs_run,
        best_epoch=best_epoch,
        best_val_loss=float(best_loss),
        n_trainable=sum(v.numel() for k, v in best_state.items()),
        n_adapted_layers=len(names),
        n_train_labels=int(n_train),
    )
    return report, _state_hash(module)


def fraction_subsets(
    dataset: ImageDataset, seed: int, label_fractions: Sequence[float], val_fraction_policy: str
) -> dict[float, tuple[np.ndarray, np.ndarray]]:
    """Train and validation indices of every label fraction below 1, as the probe draws them.

    The same subsets as :func:`crsbench_lib.evaluation.evaluate_cell_predictions`
    (:func:`~crsbench_lib.evaluation.fractions.label_fraction_subsets` and
    :func:`~crsbench_lib.evaluation.fractions.validation_subsets` of seed
    ``seed``'s splits), so a fraction's adapter and its probe see the same labels.
    """
    from crsbench_lib.evaluation.fractions import label_fraction_subsets, validation_subsets

    fractions = sorted({float(f) for f in label_fractions if f < 1.0}, reverse=True)
    if not fractions:
        return {}
    train = label_fraction_subsets(dataset.split("train", seed=seed).labels, fractions, seed, dataset.task)
    val = validation_subsets(dataset.split("val", seed=seed).labels, fractions, seed, dataset.task,
                             val_fraction_policy)
    return {f: (train[f], val[f]) for f in fractions}


def fraction_embeddings(
    encoder: Encoder,
    dataset: ImageDataset,
    spec: LoraSpec,
    seed: int,
    label_fractions: Sequence[float],
    val_fraction_policy: str,
    batch_size: int,
) -> tuple[dict[float, tuple[np.ndarray, np.ndarray, np.ndarray]], dict[float, LoraReport]]:
    """Per label fraction, the embeddings of an encoder adapted on that fraction's subset only.

    Returns
    -------
    embeddings : dict
        Fraction -> ``(train subset, validation subset, test)`` float32
        embeddings, the input of ``CellEmbeddings.fraction_features``.
    reports : dict
        Fraction -> the :class:`LoraReport` of its adapter.
    """
    from crsbench_lib.embeddings.batch import embed_images

    out, reports = {}, {}
    test = dataset.split("test").images
    train_images = dataset.split("train", seed=seed).images
    val_images = dataset.split("val", seed=seed).images
    for f, (train_index, val_index) in fraction_subsets(dataset, seed, label_fractions, val_fraction_policy).items():
        adapted = adapt_encoder(encoder, dataset, spec, seed, train_index=train_index, val_index=val_index)
        out[f] = (
            embed_images(adapted, train_images[train_index], batch_size),
            embed_images(adapted, val_images[val_index], batch_size),
            embed_images(adapted, test, batch_size),
        )
        reports[f] = adapted.report
    return out, reports
