"""The LoRA-adapted arm (method section 6, item 9; section 9, amendment 12).

For one neural encoder, dataset and seed: low-rank adapters (Hu et al., 2022,
"LoRA: Low-Rank Adaptation of Large Language Models", ICLR) are put on the
weights of the ``nn.Linear`` and ``nn.Conv2d`` layers of the encoder's last
``lora.blocks`` blocks (:class:`NetworkCut`; ``"all"``, or an encoder that
cannot be cut: every such layer, :func:`target_modules`), and trained with a
linear head on the seed's train split. The adapted encoder then goes through
exactly the same measurement as the frozen arm (clean, corruptions on the
same image sets, shift); its rows carry ``arm = "lora"``.

The protocol (amendment 12):

- **The head starts where the frozen arm ends** (LP-FT: Kumar et al., 2022,
  "Fine-Tuning can Distort Pretrained Features and Underperform
  Out-of-Distribution", ICLR). It is the same cell's fitted linear probe, its
  standardisation kept as its fixed first layer (:func:`head_from_probe`), and the
  adapters start at the identity (``B = 0``), so at step 0 the model's
  predicted probabilities are the frozen probe's.
- **Trained to convergence**: AdamW with a cosine decay of the learning rate
  over a budget of ``lora.max_steps`` optimisation steps; after every pass
  over the train subset (an epoch) the validation loss is measured, the best
  state is kept, and training stops once ``lora.patience`` epochs in a row
  made no progress: lowered it, against the last progress, by no more than
  ``lora.min_improvement_se`` standard errors of the paired per-image
  difference (:func:`is_progress`). The rate warms up linearly over
  ``lora.warmup_steps`` before the cosine decay. The validation *loss*, not AUROC, decides: it is smooth in
  the weights, sees calibration as well as ranking (both are axes of the
  score), and on a few hundred validation images the AUROC moves in steps. An
  adapter that was still improving when the budget ran out is flagged
  (:attr:`LoraReport.hit_cap`). The learning rate is chosen per zoo family on
  validation (:mod:`crsbench_lib.runner.lora_rates`) and written in the profile
  (:func:`learning_rate`).
- **Scarce labels**: an adapter of label fraction ``f`` is trained on that
  fraction's train subset only, and stopped early on its validation subset,
  the very subsets the probe at ``f`` uses (:func:`fraction_subsets`, amendment
  8). Early stopping on a handful of validation images is noise, so a
  fraction whose validation subset holds fewer than ``lora.min_val_labels``
  images is not adapted: its rows are the frozen encoder's (``trained`` false
  in the manifest).
- **Affordable**: the frozen lower layers are computed once per image
  (:meth:`AdaptationSession.activations`): the train and validation
  activations serve every training step of every adapter of a seed, and the
  test sets' (clean, each corruption, site B) serve every seed's adapted
  embeddings. Only the adapted blocks run forward and backward.

Adapters: the adapted weight of a layer is ``W + (alpha / r) * B A``, with
``A`` of shape ``(r, fan_in)`` (``fan_in`` is ``in_features``, or
``in_channels / groups * kh * kw`` for a convolution, whose update is reshaped
to the kernel's shape), initialised as in the reference implementation
(Kaiming-uniform with ``a = sqrt(5)``), and ``B`` of shape ``(out, r)``
zero-initialised. Only ``A``, ``B`` and the head are trained; the base weights
and the normalisation statistics stay frozen: the module is in eval mode
throughout (batch norm uses its running statistics). Adapter dropout is not
supported (``lora.dropout`` must be 0). After training the update is merged
into ``W`` and nothing of the adapters is left, so the adapted encoder embeds
at the frozen model's cost.

How it is computed: training runs through the batch-norm-folded copy of the
module (:func:`~crsbench_lib.encoders.torch_encoder.fold_batch_norm`). An
adapted convolution (:class:`LowRankConv`) computes its frozen convolution
plus the low-rank path ``(c B)(A x)`` (``A`` as a convolution with ``r``
output channels, ``c B`` as a 1 x 1 convolution) while gradients are
recorded, so the backward pass never forms the gradient of the full weight,
and one convolution with the adapted weight when they are not (validation,
embedding); an adapted linear layer is a weight parametrization
(:func:`torch.nn.utils.parametrize.register_parametrization`), one matrix
product with the adapted weight, which on the zoo's ViT is the cheaper of
the two forms. Both compute the same function up to float rounding.
For a convolution followed by a batch norm with gain ``g = gamma /
sqrt(running_var + eps)`` per output channel, the folded weight is
``diag(g) W``, so the update carried on the folded convolution is
``diag(g) (alpha / r) B A``: the trained function is that of LoRA on the
original convolution followed by its batch norm, up to float rounding. The
merge goes into the original, unfolded weights (``W + (alpha / r) B A``,
without ``g``, as the original keeps its batch norm).

Layers inside an ``nn.MultiheadAttention`` (as in some hub models) are left
out, because that module reads its projection weights directly. The zoo's ViT
uses separate ``Linear`` layers for its attention, which are adapted.

Determinism: the adapters' initialisation and the batch order come from a seed
derived from (encoder, dataset, seed, subset) only; training runs in a forked
RNG state, so the caller's random streams are untouched. All torch work of the
arm runs on :data:`TRAIN_THREADS` torch threads whatever the executor, because
parallel reductions change their last bits with the thread count, and the
table must not depend on ``--jobs``. On a GPU, bit-identity also needs
deterministic kernels (``torch.use_deterministic_algorithms``), which this
module does not force.
"""

from __future__ import annotations

import copy
import hashlib
import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch.nn.utils import parametrize

from crsbench_lib.data.base import ImageDataset
from crsbench_lib.encoders.base import Encoder
from crsbench_lib.encoders.torch_encoder import fold_batch_norm
from crsbench_lib.errors import EncoderError
from crsbench_lib.evaluation.probe import FittedProbe
from crsbench_lib.runner.lora_layers import (  # noqa: F401 - re-exported: the arm's adapters
    LowRankConv,
    LowRankUpdate,
    adapted_training_copy,
    low_rank_path_applies,
    merge_adapters,
    target_modules,
)
from crsbench_lib.runner.profile import LoraSpec

# Torch threads of the arm's work, fixed so the result does not depend on the executor.
TRAIN_THREADS = 1


def derived_seed(*parts: object) -> int:
    """A 31-bit seed from the given parts (stable across processes and platforms)."""
    text = "|".join(str(p) for p in parts)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big") & 0x7FFFFFFF


class NetworkCut:
    """Where an encoder's frozen lower layers end and its adapted blocks begin.

    ``blocks`` is the number of last blocks to adapt, or ``"all"``. An
    encoder that cannot be cut (``n_blocks`` is None, as the hub adapters),
    or a ``blocks`` that covers the whole network, adapts every layer; its
    "lower activations" are then the preprocessed images.

    Examples
    --------
    >>> from crsbench_lib.encoders.neural import NeuralEncoder
    >>> cut = NetworkCut(NeuralEncoder("simclr_broad_aug_s"), 1)
    >>> cut.top, cut.layers(cut.encoder.module)
    (1, ['features.12'])
    """

    def __init__(self, encoder: Encoder, blocks: int | str) -> None:
        self.encoder = encoder
        n = getattr(encoder, "n_blocks", None)
        self.top: int | None = None if blocks == "all" or n is None or int(blocks) >= n else int(blocks)

    def layers(self, module: torch.nn.Module) -> list[str]:
        """The layers of ``module`` that get adapters."""
        prefixes = None if self.top is None else self.encoder.block_prefixes(self.top)  # type: ignore[attr-defined]
        return target_modules(module, prefixes)

    def lower(self, module: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
        """What ``module``'s adapted blocks receive from a preprocessed batch."""
        if self.top is None:
            return x
        return self.encoder.lower_features(module, x, self.top)  # type: ignore[attr-defined]

    def upper(self, module: torch.nn.Module, h: torch.Tensor) -> torch.Tensor:
        """Embeddings from :meth:`lower`'s output, through ``module``'s adapted blocks."""
        if self.top is None:
            return self.encoder.features_through(module, h)  # type: ignore[attr-defined]
        return self.encoder.upper_features(module, h, self.top)  # type: ignore[attr-defined]


#: Logit of a class the probe never saw in training (its probability is 0 to float precision).
ABSENT_CLASS_LOGIT = -1.0e4


class ProbeHead(torch.nn.Module):
    """``Linear((z - mean) / scale)``: a probe's standardisation (fixed buffers) and its linear layer (trained)."""

    def __init__(self, mean: np.ndarray, scale: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> None:
        super().__init__()
        self.register_buffer("mean", torch.as_tensor(mean, dtype=torch.float32))
        self.register_buffer("scale", torch.as_tensor(scale, dtype=torch.float32))
        self.linear = torch.nn.Linear(weight.shape[1], weight.shape[0])
        with torch.no_grad():
            self.linear.weight.copy_(torch.as_tensor(weight, dtype=torch.float32))
            self.linear.bias.copy_(torch.as_tensor(bias, dtype=torch.float32))

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return self.linear((z - self.mean) / self.scale)


def head_from_probe(probe: FittedProbe) -> ProbeHead:
    """A head that computes the fitted probe's logits from raw embeddings.

    The probe's logits are ``((z - mu) / s) @ W.T + b``. The head keeps the
    standardisation ``(mu, s)`` fixed, as its first layer, and trains ``W``
    and ``b`` from the probe's values: the same function as folding it into
    the weights (``W / s``, ``b - W @ (mu / s)``), but Adam's per-weight steps
    then act on standardised features, as the probe's own weights do, rather
    than on embeddings whose scales differ by orders of magnitude. A binary
    probe (one logit ``z``) becomes a two-output head ``(0, z)``, whose softmax
    is ``(1 - sigmoid(z), sigmoid(z))``, the probe's probabilities; a
    multiclass class absent from the probe's training data gets the logit
    :data:`ABSENT_CLASS_LOGIT`.

    Parameters
    ----------
    probe : FittedProbe

    Returns
    -------
    ProbeHead
        ``(embedding_dim -> n_classes)``, float32; its linear layer is trainable.

    Examples
    --------
    >>> import numpy as np
    >>> from crsbench_lib.evaluation.probe import fit_probe
    >>> rng = np.random.default_rng(0)
    >>> x, y = rng.normal(size=(60, 3)) * 4 + 1, rng.integers(0, 2, 60)
    >>> probe = fit_probe(x[:40], y[:40], x[40:], y[40:], "binary", 2)
    >>> head = head_from_probe(probe)
    >>> p = torch.softmax(head(torch.as_tensor(x, dtype=torch.float32)), 1).detach().numpy()
    >>> bool(np.allclose(p, probe.predict_proba(x), atol=1e-5))
    True
    """
    model = probe.model
    coef = np.atleast_2d(np.asarray(model.coef, dtype=np.float64)).copy()
    intercept = np.atleast_1d(np.asarray(model.intercept, dtype=np.float64)).copy()
    if probe.task == "binary":
        coef = np.vstack([np.zeros_like(coef), coef])
        intercept = np.concatenate([[0.0], intercept])
    elif probe.task == "multiclass" and model.present.size < probe.n_classes:
        absent = np.setdiff1d(np.arange(probe.n_classes), model.present)
        coef[absent] = 0.0
        intercept[absent] = ABSENT_CLASS_LOGIT
    return ProbeHead(probe.standardiser.mean, probe.standardiser.scale, coef, intercept)


@dataclass(frozen=True)
class LoraReport:
    """How one adapter trained (stored in the run manifest, see :func:`adaptation_facts`).

    Attributes
    ----------
    trained : bool
        False when the label fraction's validation subset was below
        ``lora.min_val_labels``: no adapter, the frozen encoder's rows.
    steps_run, best_step, max_steps : int
        Optimisation steps run, the step of the kept (best) state (0: no
        epoch beat the frozen start, the update is the identity) and the budget.
    hit_cap : bool
        True exactly when training ran the whole budget without early
        stopping: the adapter may still have been improving.
    start_val_loss, best_val_loss : float
        Validation loss at step 0 (the frozen probe's) and at ``best_step``.
    lr : float
        Peak learning rate.
    n_trainable, n_adapted_layers, n_train_labels, n_val_labels : int
    """

    trained: bool
    steps_run: int
    best_step: int
    max_steps: int
    hit_cap: bool
    start_val_loss: float
    best_val_loss: float
    lr: float
    n_trainable: int
    n_adapted_layers: int
    n_train_labels: int
    n_val_labels: int

    @classmethod
    def untrained(cls, max_steps: int, lr: float, n_train_labels: int, n_val_labels: int) -> LoraReport:
        """The report of a fraction left frozen by the scarce-label rule."""
        nan = float("nan")
        return cls(False, 0, 0, int(max_steps), False, nan, nan, float(lr), 0, 0, int(n_train_labels),
                   int(n_val_labels))

    def facts(self, label_fraction: float) -> dict[str, Any]:
        """The JSON record of this adapter (NaN losses as None)."""
        def loss(value: float) -> float | None:
            return None if not math.isfinite(value) else round(float(value), 6)

        return {"label_fraction": float(label_fraction), "trained": bool(self.trained),
                "steps_run": int(self.steps_run), "best_step": int(self.best_step), "hit_cap": bool(self.hit_cap),
                "start_val_loss": loss(self.start_val_loss), "best_val_loss": loss(self.best_val_loss),
                "lr": float(self.lr), "n_train_labels": int(self.n_train_labels),
                "n_val_labels": int(self.n_val_labels)}


def adaptation_facts(full: LoraReport, fractions: Mapping[float, LoraReport]) -> dict[str, Any]:
    """The JSON facts of one LoRA run's adapters, for the run manifest.

    Parameters
    ----------
    full : LoraReport
        The adapter trained on the whole train split.
    fractions : mapping of float to LoraReport
        The adapters of each label fraction's subset.

    Returns
    -------
    dict
        ``{"max_steps": int, "adapters": [LoraReport.facts(...), ...]}``, the
        full split's adapter first, then the fractions in descending order.

    Examples
    --------
    >>> r = LoraReport(True, 320, 256, 2000, False, 0.61, 0.52, 1e-3, 3000, 1, 2000, 1000)
    >>> f = LoraReport.untrained(2000, 1e-3, 20, 10)
    >>> [a["trained"] for a in adaptation_facts(r, {0.01: f})["adapters"]]
    [True, False]
    """
    ordered = sorted(fractions.items(), key=lambda item: -item[0])
    return {"max_steps": int(full.max_steps),
            "adapters": [full.facts(1.0)] + [report.facts(f) for f, report in ordered]}


def rate_keys(encoder: Encoder) -> tuple[str, ...]:
    """The keys under which ``lora.lr`` may give ``encoder``'s rate, most specific first.

    Its name, its zoo family and its architecture (those it has), then ``default``.
    """
    spec = getattr(encoder, "spec", None)
    keys = [encoder.name, getattr(spec, "family", None), getattr(spec, "architecture", None), "default"]
    return tuple(dict.fromkeys(k for k in keys if k))


def learning_rate(spec: LoraSpec, encoder: Encoder) -> float:
    """The peak learning rate of ``encoder``: ``lora.lr``, or its entry for the first of :func:`rate_keys`.

    Examples
    --------
    >>> from dataclasses import replace
    >>> from crsbench_lib.runner.config import load_profile
    >>> from crsbench_lib.encoders.neural import NeuralEncoder
    >>> lora = replace(load_profile("quick").lora, lr={"broad_ssl": 3e-4, "cnn_s": 1e-3})
    >>> learning_rate(lora, NeuralEncoder("simclr_broad_aug_s")), learning_rate(lora, NeuralEncoder("cnn_random"))
    (0.0003, 0.001)
    """
    if not isinstance(spec.lr, Mapping):
        return float(spec.lr)
    keys = rate_keys(encoder)
    for key in keys:
        if key in spec.lr:
            return float(spec.lr[key])
    raise EncoderError(f"encoder {encoder.name}: lora.lr names none of {', '.join(map(repr, keys))} "
                       f"(it has {', '.join(spec.lr)})")


class AdaptedEncoder(Encoder):
    """An encoder whose module carries merged LoRA adapters.

    It embeds through the adapted copy of the base encoder; its weights hash
    covers the base encoder's hash and the adapted module's state.
    :meth:`embed_activations` embeds from the frozen lower layers' cached
    output, the same function as :meth:`embed` (up to float rounding).
    """

    family = "lora"

    def __init__(self, adapted: Encoder, cut: NetworkCut, base_hash: str, report: LoraReport) -> None:
        self._adapted = adapted
        self._cut = cut
        self.name = adapted.name
        self.embedding_dim = adapted.embedding_dim
        self._hash = hashlib.sha256(f"lora|{base_hash}|{_state_hash(adapted.module)}".encode()).hexdigest()
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

    def embed_activations(self, activations: torch.Tensor, batch_size: int) -> np.ndarray:
        """Embeddings from the frozen lower layers' output (:meth:`AdaptationSession.activations`)."""
        module = self._adapted.inference_module  # type: ignore[attr-defined]
        out = np.empty((len(activations), self.embedding_dim), dtype=np.float32)
        with torch.no_grad():
            for start in range(0, len(activations), batch_size):
                z = self._cut.upper(module, activations[start : start + batch_size])
                out[start : start + len(z)] = z.float().cpu().numpy()
        return out


class AdaptationSession:
    """One encoder's LoRA adapters on one dataset: the cut, the frozen lower layers and their activations.

    Parameters
    ----------
    encoder : Encoder
        A neural encoder (a torch module and ``features_through``, as every
        :class:`~crsbench_lib.encoders.torch_encoder.TorchEncoder`). It is not
        modified.
    spec : LoraSpec
    batch_size : int
        Images per forward pass when computing activations and embeddings.

    Raises
    ------
    EncoderError
        If the encoder has no torch module or no layer to adapt, is an
        exported graph (a model file), or ``spec.dropout`` is not 0.
    """

    def __init__(self, encoder: Encoder, spec: LoraSpec, batch_size: int) -> None:
        if encoder.not_adaptable:
            raise EncoderError(f"encoder {encoder.name}: {encoder.not_adaptable}")
        if encoder.module is None or not hasattr(encoder, "features_through"):
            raise EncoderError(f"encoder {encoder.name}: the LoRA arm needs a neural encoder (torch module)")
        if spec.dropout != 0:
            raise EncoderError(f"encoder {encoder.name}: LoRA dropout is not supported (got {spec.dropout}, expected 0)")
        self.encoder = encoder
        self.spec = spec
        self.batch_size = int(batch_size)
        self.cut = NetworkCut(encoder, spec.blocks)
        self.names = self.cut.layers(encoder.module)
        if not self.names:
            raise EncoderError(f"encoder {encoder.name}: no Linear or Conv2d layer for LoRA to adapt")
        self.lr = learning_rate(spec, encoder)
        # The frozen layers as the frozen arm's inference copy computes them (batch norm folded).
        self._lower_module = fold_batch_norm(encoder.module)
        self._cache: dict[Hashable, torch.Tensor] = {}

    def activations(self, key: Hashable, images: np.ndarray) -> torch.Tensor:
        """The frozen lower layers' output on ``images``, computed once per ``key`` and kept."""
        if key not in self._cache:
            parts = []
            with _threads(TRAIN_THREADS), torch.no_grad():
                for start in range(0, len(images), self.batch_size):
                    x = self.encoder.preprocess(images[start : start + self.batch_size])
                    parts.append(self.cut.lower(self._lower_module, x.to(self._device)))
            self._cache[key] = torch.cat(parts) if parts else torch.empty(0)
        return self._cache[key]

    def forget(self, keep: Any) -> None:
        """Drop the cached activations whose key fails ``keep(key)`` (a finished seed's splits)."""
        self._cache = {k: v for k, v in self._cache.items() if keep(k)}

    @property
    def _device(self) -> torch.device:
        return next(self.encoder.module.parameters()).device

    def embed(self, adapted: AdaptedEncoder, activations: torch.Tensor) -> np.ndarray:
        """``adapted``'s embeddings of the images behind ``activations``."""
        with _threads(TRAIN_THREADS):
            return adapted.embed_activations(activations, self.batch_size)

    def adapt(self, train: torch.Tensor, train_labels: np.ndarray, val: torch.Tensor, val_labels: np.ndarray,
              probe: FittedProbe, task: str, seed_parts: Sequence[object], lr: float | None = None) -> AdaptedEncoder:
        """Train adapters and the probe-initialised head on cached activations; merge the best state.

        Parameters
        ----------
        train, val : torch.Tensor
            :meth:`activations` of the train and validation images (or of a
            label fraction's subsets); ``train_labels`` and ``val_labels`` are
            theirs, and no other label is read.
        probe : FittedProbe
            The frozen arm's probe on the same images' frozen embeddings: the
            head's start (:func:`head_from_probe`).
        task : {"binary", "multiclass", "multilabel"}
        seed_parts : sequence
            What the training seed is derived from (encoder, dataset, seed, subset).
        lr : float, optional
            A peak learning rate other than the profile's (the rate trials of
            :mod:`crsbench_lib.runner.lora_rates`).

        Returns
        -------
        AdaptedEncoder
            The encoder at the best validation loss, with its :class:`LoraReport`.
        """
        spec = self.spec
        n_train = len(train) if spec.max_train is None else min(spec.max_train, len(train))
        train, train_y = train[:n_train], _targets(np.asarray(train_labels)[:n_train], task)
        val_y = _targets(val_labels, task)
        adapted = copy.deepcopy(self.encoder)
        module = adapted.module
        for param in module.parameters():
            param.requires_grad = False
        module.eval()  # base weights and batch-norm statistics stay frozen
        with _threads(TRAIN_THREADS), torch.random.fork_rng(devices=[]):
            torch.manual_seed(derived_seed("lora", *seed_parts))
            train_module, adapters = adapted_training_copy(module, self.names, spec.rank, spec.alpha)
            head = head_from_probe(probe).to(self._device)
            report, best = self._train(train_module, adapters, head, train, train_y, val, val_y, task,
                                       derived_seed("lora-order", *seed_parts), self.lr if lr is None else float(lr))
            # Merge the best state's update into the original, unfolded weights
            # (W + (alpha / r) B A: the original keeps its batch norms, so no gain).
            with torch.no_grad():
                for name, adapter in adapters.items():
                    adapter.A.copy_(best[f"{name}.A"])
                    adapter.B.copy_(best[f"{name}.B"])
            merge_adapters(module, adapters, spec.rank, spec.alpha)
        module.eval()
        refresh = getattr(adapted, "refresh_inference", None)
        if refresh is not None:
            refresh()
        return AdaptedEncoder(adapted, self.cut, self.encoder.weights_hash, report)

    def _train(self, train_module: torch.nn.Module, adapters: dict[str, LowRankUpdate], head: ProbeHead,
               train: torch.Tensor, train_y: torch.Tensor, val: torch.Tensor, val_y: torch.Tensor, task: str,
               order_seed: int, lr: float) -> tuple[LoraReport, dict[str, torch.Tensor]]:
        spec, cut, batch = self.spec, self.cut, _train_batch(self.spec, len(train))
        loss_fn = _loss_fn(task)
        adapter_params = {f"{name}.{k}": p for name, a in adapters.items() for k, p in (("A", a.A), ("B", a.B))}
        params = list(adapter_params.values()) + list(head.linear.parameters())
        optimiser = torch.optim.AdamW(params, lr=lr, weight_decay=spec.weight_decay)
        schedule = torch.optim.lr_scheduler.LambdaLR(optimiser, lambda step: _lr_factor(spec, step))
        order_rng = torch.Generator().manual_seed(order_seed)

        def val_losses() -> np.ndarray:
            parts = []
            # cached(): each adapted weight is computed once for the whole pass.
            with torch.no_grad(), parametrize.cached():
                for start in range(0, len(val), self.batch_size):
                    y = val_y[start : start + self.batch_size]
                    parts.append(image_losses(head(cut.upper(train_module, val[start : start + self.batch_size])), y,
                                              task))
            return torch.cat(parts).double().numpy()

        def snapshot() -> dict[str, torch.Tensor]:
            state = {k: v.detach().clone() for k, v in adapter_params.items()}
            state.update({f"head.{k}": v.detach().clone() for k, v in head.state_dict().items()})
            return state

        reference = val_losses()  # the per-image losses of the last progress (step 0: the frozen probe's)
        start_loss = float(reference.mean())
        best_loss, best_step, best, stale, step, stopped = start_loss, 0, snapshot(), 0, 0, False
        while step < spec.max_steps and not stopped:
            order = torch.randperm(len(train), generator=order_rng)
            for first in range(0, len(train), batch):
                idx = order[first : first + batch].sort().values
                optimiser.zero_grad(set_to_none=True)
                loss = loss_fn(head(cut.upper(train_module, train[idx])), train_y[idx])
                loss.backward()
                optimiser.step()
                schedule.step()
                step += 1
                if step == spec.max_steps:
                    break
            losses = val_losses()  # after every epoch, and at the budget
            current = float(losses.mean())
            if current < best_loss:  # the lowest loss is kept, progress or not
                best_loss, best_step, best = current, step, snapshot()
            if is_progress(reference, losses, spec.min_improvement_se):
                reference, stale = losses, 0
            else:
                stale += 1
                stopped = stale >= spec.patience
        report = LoraReport(
            trained=True, steps_run=step, best_step=best_step, max_steps=spec.max_steps,
            hit_cap=step == spec.max_steps and not stopped, start_val_loss=start_loss, best_val_loss=best_loss,
            lr=lr, n_trainable=sum(p.numel() for p in params), n_adapted_layers=len(adapters),
            n_train_labels=len(train), n_val_labels=len(val),
        )
        return report, best


def _train_batch(spec: LoraSpec, n_train: int) -> int:
    """The training batch: ``lora.batch_size``, or the whole subset when it is smaller."""
    return max(1, min(spec.batch_size, n_train))


def _lr_factor(spec: LoraSpec, step: int) -> float:
    """The learning rate's multiplier after ``step`` steps.

    A linear warm-up over ``lora.warmup_steps`` (from ``1 / warmup`` to 1),
    then a cosine decay to 0 at ``lora.max_steps`` (or, with a constant
    schedule, 1).
    """
    warmup = spec.warmup_steps
    if step < warmup:
        return (step + 1) / warmup
    if spec.lr_schedule == "constant":
        return 1.0
    progress = (min(step, spec.max_steps) - warmup) / (spec.max_steps - warmup)
    return 0.5 * (1.0 + math.cos(math.pi * progress))


def image_losses(logits: torch.Tensor, targets: torch.Tensor, task: str) -> torch.Tensor:
    """One loss per image: cross-entropy, or (multilabel) the mean binary cross-entropy over labels.

    Their mean is the training loss (:func:`_loss_fn`) of the same batch.
    """
    if task == "multilabel":
        return torch.nn.functional.binary_cross_entropy_with_logits(logits, targets, reduction="none").mean(1)
    return torch.nn.functional.cross_entropy(logits, targets, reduction="none")


def is_progress(reference: np.ndarray, current: np.ndarray, min_se: float) -> bool:
    """Whether ``current``'s mean loss lies below ``reference``'s by more than ``min_se`` paired standard errors.

    With per-image losses ``a`` (reference) and ``b`` (current) on the same
    ``n`` validation images, the difference ``d = a - b`` has mean
    ``mean(a) - mean(b)`` and standard error ``sd(d) / sqrt(n)``; progress is
    ``mean(d) > min_se * sd(d) / sqrt(n)`` (and ``mean(d) > 0``). With
    ``min_se = 1`` this is the one-standard-error rule (Hastie, Tibshirani and
    Friedman, 2009, *The Elements of Statistical Learning*, section 7.10)
    applied to successive checkpoints: a change smaller than its own
    sampling noise does not reset the patience.

    Examples
    --------
    >>> a = np.array([1.0, 1.2, 0.8, 1.0])
    >>> is_progress(a, a - 0.01, 1.0), is_progress(a, a - np.array([0.1, -0.1, 0.1, -0.08]), 1.0)
    (True, False)
    """
    d = np.asarray(reference, dtype=np.float64) - np.asarray(current, dtype=np.float64)
    gain = float(d.mean())
    if gain <= 0:
        return False
    se = float(d.std(ddof=1) / math.sqrt(d.size)) if d.size > 1 else 0.0
    return gain > min_se * se


class _threads:
    """Run a block on ``n`` torch threads, then restore the previous count."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __enter__(self) -> None:
        self.before = torch.get_num_threads()
        torch.set_num_threads(self.n)

    def __exit__(self, *exc: object) -> None:
        torch.set_num_threads(self.before)


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
