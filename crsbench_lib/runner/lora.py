"""The LoRA-adapted arm (crs-method section 6, item 9).

For one neural encoder, dataset and seed: low-rank adapters (Hu et al., 2022,
"LoRA: Low-Rank Adaptation of Large Language Models", ICLR) are injected into
every ``nn.Linear`` and ``nn.Conv2d`` layer of the encoder's torch module with
:func:`peft.inject_adapter_in_model`, and trained together with a linear head on
the seed's train split, with early stopping on its validation loss. The
adapted encoder then goes through exactly the same measurement as the frozen
arm (clean, corruptions on the same image sets, shift); its rows carry
``arm = "lora"``.

Label fractions (crs-method section 9, amendment 8): an adapter trained on
every label and then probed with 1 % of them would measure a team that had 100 %
of its labels. So the label-fraction rows of this arm come from one more
adapter per fraction ``f``, trained on that fraction's train subset only (and
stopped early on that fraction's validation subset), the very subsets the probe
at ``f`` uses (:func:`fraction_subsets`). These adapters are measured on the
clean conditions of their fraction only (train and validation subsets, test),
which keeps the arm's extra cost to one small training and one test embedding
per fraction.

Each adapted layer computes ``W x + (alpha / r) * B A x`` with ``A`` (r x in)
randomly initialised and ``B`` (out x r) zero-initialised, so training starts
from the frozen encoder exactly. After training the update is merged into
``W`` (``W + (alpha / r) B A``), so embedding costs what the frozen model costs. The base weights and the normalisation
statistics stay frozen: the module is kept in eval mode during training (batch
norm uses its running statistics, nothing else is updated).

peft fits the zoo's modules as they are (plain ``Linear``/``Conv2d`` layers; the
ViT's attention uses separate ``Linear`` layers, not ``nn.MultiheadAttention``),
so no own LoRA module is needed. Layers inside an ``nn.MultiheadAttention`` (as
in some hub models) are left out, because that module reads its projection
weights directly and would bypass an adapter.

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
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from crsbench_lib.data.base import ImageDataset
from crsbench_lib.encoders.base import Encoder
from crsbench_lib.errors import EncoderError
from crsbench_lib.runner.config import LoraSpec

# Torch threads during LoRA training, fixed so the result does not depend on the executor.
TRAIN_THREADS = 1


def derived_seed(*parts: object) -> int:
    """A 31-bit seed from the given parts (stable across processes and platforms)."""
    text = "|".join(str(p) for p in parts)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big") & 0x7FFFFFFF


def target_modules(module: Any) -> list[str]:
    """Qualified names of the ``Linear``/``Conv2d`` layers LoRA adapts."""
    from torch import nn

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
    """How an adaptation went (for logs and tests)."""

    epochs_run: int
    best_epoch: int
    best_val_loss: float
    n_trainable: int
    n_adapted_layers: int
    n_train_labels: int


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
    import torch

    if task == "multilabel":
        return torch.nn.BCEWithLogitsLoss()
    return torch.nn.CrossEntropyLoss()


def _targets(labels: np.ndarray, task: str) -> Any:
    import torch

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
        has ``forward_features`` and ``preprocess``). It is not modified.
    dataset : ImageDataset
        Train split for fitting, validation split for early stopping (both of
        evaluation seed ``seed``).
    spec : LoraSpec
        Rank, alpha, dropout, epochs, patience, learning rate, weight decay,
        batch size, optional cap on train images.
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
        If the encoder has no torch module or no layer LoRA can adapt.
    """
    import torch

    if encoder.module is None or not hasattr(encoder, "forward_features"):
        raise EncoderError(f"encoder {encoder.name}: the LoRA arm needs a neural encoder (torch module)")
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
        report, state_hash = _train(adapted, module, names, dataset, spec, seed, device, torch, train_index, val_index)
    finally:
        torch.set_num_threads(threads)
    return AdaptedEncoder(adapted, base_hash, state_hash, report)


def _subset(split: Any, index: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    if index is None:
        return split.images, split.labels
    index = np.asarray(index, dtype=np.int64)
    return split.images[index], split.labels[index]


def _train(adapted: Encoder, module: Any, names: list[str], dataset: ImageDataset, spec: LoraSpec, seed: int,
           device: Any, torch: Any, train_index: np.ndarray | None,
           val_index: np.ndarray | None) -> tuple[LoraReport, str]:
    """Inject adapters into ``module`` and train them with a head; returns the report and state hash."""
    from peft import LoraConfig, inject_adapter_in_model

    subset = "" if train_index is None else hashlib.sha256(np.asarray(train_index, np.int64).tobytes()).hexdigest()
    train_seed = derived_seed("lora", adapted.name, dataset.name, dataset.version, seed, subset)
    train_x, train_labels = _subset(dataset.split("train", seed=seed), train_index)
    val_x, val_labels = _subset(dataset.split("val", seed=seed), val_index)
    n_train = len(train_x) if spec.max_train is None else min(spec.max_train, len(train_x))
    train_images, train_y = train_x[:n_train], _targets(train_labels[:n_train], dataset.task)
    val_y = _targets(val_labels, dataset.task)
    loss_fn = _loss_fn(dataset.task)

    with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
        torch.manual_seed(train_seed)
        config = LoraConfig(
            r=spec.rank,
            lora_alpha=spec.alpha,
            lora_dropout=spec.dropout,
            target_modules="^(" + "|".join(re.escape(n) for n in names) + ")$",
            bias="none",
        )
        inject_adapter_in_model(config, module)
        for name, param in module.named_parameters():
            param.requires_grad = "lora_" in name
        head = torch.nn.Linear(adapted.embedding_dim, dataset.n_classes).to(device)
        params = [p for p in module.parameters() if p.requires_grad] + list(head.parameters())
        optimiser = torch.optim.AdamW(params, lr=spec.lr, weight_decay=spec.weight_decay)
        order_rng = torch.Generator().manual_seed(train_seed)
        # Base weights and batch-norm statistics stay frozen: eval mode throughout.
        module.eval()

        def val_loss() -> float:
            total, count = 0.0, 0
            with torch.no_grad():
                for start in range(0, len(val_x), spec.batch_size):
                    x = adapted.preprocess(val_x[start : start + spec.batch_size]).to(device)
                    y = val_y[start : start + spec.batch_size].to(device)
                    total += float(loss_fn(head(adapted.forward_features(x)), y)) * len(y)
                    count += len(y)
            return total / count

        def snapshot() -> dict[str, Any]:
            state = {f"m.{k}": v.detach().clone() for k, v in module.named_parameters() if v.requires_grad}
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
                loss = loss_fn(head(adapted.forward_features(x)), y)
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
        with torch.no_grad():
            params_by_name = dict(module.named_parameters())
            for key, value in best_state.items():
                if key.startswith("m."):
                    params_by_name[key[2:]].copy_(value)
        for param in module.parameters():
            param.requires_grad = False
        # Fold B A into the base weights and put the plain layers back: the
        # adapted model then embeds at the frozen model's cost (an unmerged
        # LoRA conv runs two extra convolutions) and through the same
        # batch-norm-folded inference copy (refresh_inference).
        _merge_adapters(module, torch)
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


def _merge_adapters(module: Any, torch: Any) -> None:
    """Merge every LoRA layer of ``module`` into its base layer and put the base layer in its place."""
    from peft.tuners.lora import LoraLayer

    with torch.no_grad():
        merged = [(name, layer) for name, layer in module.named_modules() if isinstance(layer, LoraLayer)]
        for name, layer in merged:
            layer.merge()
            parent_name, _, child = name.rpartition(".")
            parent = module.get_submodule(parent_name) if parent_name else module
            setattr(parent, child, layer.get_base_layer())


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
) -> dict[float, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per label fraction, the embeddings of an encoder adapted on that fraction's subset only.

    Returns
    -------
    dict
        Fraction -> ``(train subset, validation subset, test)`` float32
        embeddings, the input of ``CellEmbeddings.fraction_features``.
    """
    from crsbench_lib.embeddings.batch import embed_images

    out = {}
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
    return out
