"""The LoRA arm: probe-initialised heads, adapters trained to convergence on cached activations, base untouched."""

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
from crsbench_lib.evaluation.probe import fit_probe
from crsbench_lib.runner.lora import (
    AdaptationSession,
    AdaptedEncoder,
    LoraReport,
    LowRankConv,
    adaptation_facts,
    adapted_training_copy,
    derived_seed,
    head_from_probe,
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


def spec(**changes: object) -> LoraSpec:
    base = dict(encoders="neural", rank=2, alpha=4.0, dropout=0.0, blocks="all", max_steps=60, patience=3,
                min_improvement_se=0.0, lr=3e-2, lr_schedule="cosine", warmup_steps=0, weight_decay=0.0, batch_size=32,
                max_train=None, min_val_labels=10)
    return LoraSpec(**{**base, **changes})


SPEC = spec()


@pytest.fixture(scope="module")
def dataset():
    return build_dataset("derm", seed=0, sizes={"train": 240, "val": 80, "test": 40}, image_side=32)


def frozen_probe(encoder, dataset, seed: int = 0):
    train, val = dataset.split("train", seed=seed), dataset.split("val", seed=seed)
    return fit_probe(encoder.embed(train.images), train.labels, encoder.embed(val.images), val.labels,
                     dataset.task, dataset.n_classes, c_grid=(0.1, 1.0), seed=seed)


def adapt(encoder, dataset, lora: LoraSpec = SPEC, seed: int = 0, index: np.ndarray | None = None) -> AdaptedEncoder:
    """Train one adapter on the seed's train split (or its rows ``index``), stopped on the validation split."""
    session = AdaptationSession(encoder, lora, batch_size=64)
    train, val = dataset.split("train", seed=seed), dataset.split("val", seed=seed)
    rows = slice(None) if index is None else index
    h_train = session.activations("train", train.images)[rows]
    return session.adapt(h_train, train.labels[rows], session.activations("val", val.images), val.labels,
                         frozen_probe(encoder, dataset, seed), dataset.task, ("test", seed))


def test_target_modules_are_linear_and_conv_layers() -> None:
    assert target_modules(TinyTorchEncoder().module) == ["0", "4"]
    assert target_modules(TinyTorchEncoder().module, prefixes=("4",)) == ["4"]
    mha = nn.Sequential(nn.Linear(4, 4), nn.MultiheadAttention(4, 1))
    assert target_modules(mha) == ["0"]


def test_adaptation_is_deterministic_and_leaves_the_base_alone(dataset) -> None:
    base = TinyTorchEncoder()
    before = base.weights_hash
    images = dataset.split("test").images
    frozen = base.embed(images)
    a = adapt(base, dataset)
    b = adapt(TinyTorchEncoder(), dataset)
    c = adapt(TinyTorchEncoder(), dataset, seed=1)
    assert isinstance(a, AdaptedEncoder)
    assert base.weights_hash == before and np.array_equal(base.embed(images), frozen)
    assert a.weights_hash == b.weights_hash != before
    assert np.array_equal(a.embed(images), b.embed(images))
    assert c.weights_hash != a.weights_hash
    assert a.report.n_adapted_layers == 2 and a.report.steps_run >= 1
    assert a.report.best_step >= 1  # training improved the validation loss over the frozen start
    assert a.report.best_val_loss < a.report.start_val_loss
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


@pytest.mark.parametrize("name", ["multitask_broad_aug_s", "mae_broad_vit"])
def test_at_step_zero_the_model_predicts_the_frozen_probe(dataset, name: str) -> None:
    """LP-FT: identity adapters and the probe folded into the head give the frozen probe's probabilities."""
    from crsbench_lib.encoders.neural import NeuralEncoder

    encoder = NeuralEncoder(name)
    session = AdaptationSession(encoder, spec(blocks=2), batch_size=64)
    probe = frozen_probe(encoder, dataset)
    images = dataset.split("test").images
    torch.manual_seed(0)
    start, _ = adapted_training_copy(encoder.module, session.names, 2, 4.0)
    with torch.no_grad():
        logits = head_from_probe(probe)(session.cut.upper(start, session.activations("test", images)))
    np.testing.assert_allclose(torch.softmax(logits, 1).numpy(), probe.predict_proba(encoder.embed(images)),
                               atol=2e-5)


@pytest.mark.parametrize("task", ["binary", "multiclass", "multilabel"])
def test_head_from_probe_folds_the_standardisation(task: str) -> None:
    rng = np.random.default_rng(1)
    x = rng.normal(size=(120, 5)) * rng.uniform(0.5, 6, 5) + rng.normal(size=5) * 3
    if task == "binary":
        y, n = (x[:, 0] + rng.normal(size=120) > 0).astype(np.int64), 2
    elif task == "multiclass":
        y, n = np.digitize(x[:, 0] + x[:, 1], [-2, 2]), 4  # class 3 never occurs: an absent class
    else:
        y, n = (x[:, :3] + rng.normal(size=(120, 3)) > 0).astype(np.int64), 3
    probe = fit_probe(x[:80], y[:80], x[80:], y[80:], task, n, c_grid=(1.0,))
    logits = head_from_probe(probe)(torch.as_tensor(x, dtype=torch.float32)).detach()
    proba = torch.sigmoid(logits) if task == "multilabel" else torch.softmax(logits, 1)
    np.testing.assert_allclose(proba.numpy(), probe.predict_proba(x), atol=1e-5)


@pytest.mark.parametrize("name", ["multitask_broad_aug_s", "simclr_broad_aug_l", "mae_broad_vit"])
def test_cached_activations_embed_as_the_merged_model(dataset, name: str) -> None:
    """The adapted encoder from cached lower layers == the full forward pass of its merged module."""
    from crsbench_lib.encoders.neural import NeuralEncoder

    base = NeuralEncoder(name)
    lora = spec(blocks=2, max_steps=200, lr={"vit_s": 1e-2, "default": 1e-3}, patience=100, lr_schedule="constant")
    session = AdaptationSession(base, lora, batch_size=64)
    assert session.cut.top == 2 and all(n.startswith(base.block_prefixes(2)) for n in session.names)
    train = dataset.split("train")
    # Stopped on the train split itself, so the training loss decides and the adapters surely move.
    h_train = session.activations("train", train.images)
    adapted = session.adapt(h_train, train.labels, h_train, train.labels, frozen_probe(base, dataset),
                            dataset.task, ("cache",))
    assert adapted.report.best_step >= 1  # the adapters moved, so a stale copy would show
    images = dataset.split("test").images
    cached = session.embed(adapted, session.activations("test", images))
    full = adapted.embed(images)
    np.testing.assert_allclose(cached, full, atol=1e-4)
    assert np.abs(full - base.embed(images)).max() > 1e-3
    # ... and equal the differentiable path through the merged (unfolded) module.
    with torch.no_grad():
        through = base.features_through(adapted.module, base.preprocess(images)).numpy()
    np.testing.assert_allclose(full, through, atol=1e-4)
    # Only the last two blocks moved.
    moved = {n for n, p in adapted.module.named_parameters()
             if not torch.equal(p, dict(base.module.named_parameters())[n])}
    assert moved and all(n.startswith(base.block_prefixes(2)) for n in moved)


def test_cap_flag_is_set_exactly_when_the_budget_ran_out(dataset) -> None:
    capped = adapt(TinyTorchEncoder(), dataset, spec(max_steps=7, patience=50))
    assert capped.report.hit_cap and capped.report.steps_run == 7 == capped.report.max_steps
    # A budget far above what early stopping needs: it stops first, with the flag down.
    early = adapt(TinyTorchEncoder(), dataset, spec(max_steps=100_000, patience=1, lr=5e-2))
    assert not early.report.hit_cap and early.report.steps_run < early.report.max_steps
    # Early stopping that fires at the very last step is not the cap either.
    steps = early.report.steps_run
    at_budget = adapt(TinyTorchEncoder(), dataset, spec(max_steps=steps, patience=1, lr=5e-2))
    assert at_budget.report.steps_run == steps and not at_budget.report.hit_cap


def test_manifest_facts_of_the_adapters() -> None:
    full = LoraReport(True, 300, 200, 2000, False, 0.7, 0.6, 1e-3, 100, 2, 2000, 1000)
    facts = adaptation_facts(full, {0.01: LoraReport.untrained(2000, 1e-3, 20, 10),
                                    0.25: LoraReport(True, 2000, 2000, 2000, True, 0.8, 0.7, 1e-3, 100, 2, 500, 250)})
    assert facts["max_steps"] == 2000
    assert [(a["label_fraction"], a["trained"], a["hit_cap"]) for a in facts["adapters"]] == [
        (1.0, True, False), (0.25, True, True), (0.01, False, False)]
    assert facts["adapters"][2]["best_val_loss"] is None  # JSON has no NaN


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
    # Under autograd the convolutions run the low-rank path instead of the adapted weight: the same function.
    torch.testing.assert_close(folded(x).detach(), expected, rtol=1e-9, atol=1e-9)
    assert sum(isinstance(m, LowRankConv) for m in folded.modules()) == 2  # the two convolutions; "7" is linear
    assert module_hash(net) == before  # the copy shares no storage with the original
    merged = copy.deepcopy(net)
    merge_adapters(merged, adapters, rank, alpha)
    assert not any(parametrize.is_parametrized(m) for m in merged.modules())
    with torch.no_grad():
        torch.testing.assert_close(merged(x), expected, rtol=1e-9, atol=1e-9)


def test_dropout_is_refused(dataset) -> None:
    with pytest.raises(EncoderError, match=r"LoRA dropout is not supported \(got 0.1, expected 0\)"):
        AdaptationSession(TinyTorchEncoder(), spec(dropout=0.1), batch_size=8)


def test_same_result_with_one_or_two_torch_threads(dataset) -> None:
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = adapt(TinyTorchEncoder(), dataset)
        torch.set_num_threads(2)
        two = adapt(TinyTorchEncoder(), dataset)
    finally:
        torch.set_num_threads(threads)
    assert one.weights_hash == two.weights_hash


def test_multilabel_dataset_trains(dataset) -> None:
    cxr = build_dataset("cxr", seed=0, sizes={"train": 64, "val": 32, "test": 32}, image_side=32)
    adapted = adapt(TinyTorchEncoder(), cxr)
    assert np.isfinite(adapted.report.best_val_loss)


def test_handcrafted_encoder_is_refused(dataset) -> None:
    from crsbench_lib.encoders.registry import build_encoder

    with pytest.raises(EncoderError, match="needs a neural encoder"):
        AdaptationSession(build_encoder("pixels"), SPEC, batch_size=8)


def test_derived_seed_is_stable() -> None:
    assert derived_seed("lora", "a", 1) == derived_seed("lora", "a", 1) != derived_seed("lora", "a", 2)
    assert 0 <= derived_seed("x") < 2**31


def test_fraction_adapter_sees_only_its_subset_labels(monkeypatch) -> None:
    """Each fraction's adapter and its head's probe read that fraction's subsets only; scarce ones stay frozen."""
    from crsbench_lib.evaluation.fractions import label_fraction_subsets, validation_subsets
    from crsbench_lib.runner import cell as cell_module
    from crsbench_lib.runner.config import load_profile
    from crsbench_lib.runner.lora import fraction_subsets

    ds = build_dataset("derm", seed=0, sizes={"train": 200, "val": 100, "test": 40}, image_side=32)
    subsets = fraction_subsets(ds, 0, (1.0, 0.25, 0.1), "matched")
    assert set(subsets) == {0.25, 0.1}
    train_index, val_index = subsets[0.25]
    # the very subsets the probe at that fraction uses
    assert np.array_equal(train_index, label_fraction_subsets(ds.split("train").labels, (0.25, 0.1), 0, "multiclass")[0.25])
    assert np.array_equal(val_index, validation_subsets(ds.split("val").labels, (0.25, 0.1), 0, "multiclass")[0.25])

    from dataclasses import replace

    profile = load_profile("quick")
    profile = replace(profile, lora=spec(min_val_labels=20, max_steps=8), label_fractions=(1.0, 0.25, 0.1))
    encoder = TinyTorchEncoder()
    session = AdaptationSession(encoder, profile.lora, batch_size=64)
    calls = []
    original = session.adapt

    def recording(train, train_labels, val, val_labels, probe, task, seed_parts):
        calls.append((len(train), np.asarray(train_labels).copy(), len(val), np.asarray(val_labels).copy(), probe))
        return original(train, train_labels, val, val_labels, probe, task, seed_parts)

    monkeypatch.setattr(session, "adapt", recording)
    images = cell_module.ConditionImages(ds, profile, ())

    def frozen(split: str) -> np.ndarray:
        return encoder.embed(ds.split(split, seed=0).images)

    embeddings, facts = cell_module.adapted_embeddings(session, images, frozen, profile, seed=0)
    train, val = ds.split("train", seed=0), ds.split("val", seed=0)
    assert len(calls) == 2  # the full split and 25 %; 10 % has 10 validation images, under the minimum of 20
    full, quarter = calls
    assert full[0] == len(train) and np.array_equal(full[1], train.labels)
    assert quarter[0] == train_index.size and np.array_equal(quarter[1], train.labels[train_index])
    assert quarter[2] == val_index.size and np.array_equal(quarter[3], val.labels[val_index])
    # The quarter's head starts from the frozen probe fitted on the quarter's subsets only.
    assert quarter[4].standardiser.mean == pytest.approx(frozen("train")[train_index].mean(axis=0))
    adapters = {a["label_fraction"]: a for a in facts["lora"]["adapters"]}
    assert adapters[0.25]["trained"] and not adapters[0.1]["trained"]
    # The scarce fraction keeps the frozen encoder's embeddings of its subsets.
    ten_train, ten_val = subsets[0.1]
    f_train, f_val, f_test = embeddings.fraction_features[0.1]
    assert np.array_equal(f_train, frozen("train")[ten_train]) and np.array_equal(f_val, frozen("val")[ten_val])
    assert np.array_equal(f_test, frozen("test"))
    # ... and its rows will say so (the protocol column `features`).
    assert embeddings.features == "adapted" and embeddings.fraction_feature_kinds == {0.1: "frozen"}


def test_learning_rate_looked_up_by_name_then_family_then_architecture() -> None:
    from crsbench_lib.encoders.neural import NeuralEncoder
    from crsbench_lib.runner.lora import learning_rate, rate_keys

    vit, cnn = NeuralEncoder("mae_broad_vit"), NeuralEncoder("simclr_broad_aug_s")
    assert rate_keys(cnn) == ("simclr_broad_aug_s", "broad_ssl", "cnn_s", "default")
    rates = spec(lr={"vit_s": 1e-4, "default": 1e-3})
    assert learning_rate(rates, vit) == 1e-4 and learning_rate(rates, cnn) == 1e-3
    assert learning_rate(spec(lr=2e-3), vit) == 2e-3
    layered = spec(lr={"cnn_s": 1e-2, "broad_ssl": 3e-4, "simclr_broad_aug_s": 5e-4})
    assert learning_rate(layered, cnn) == 5e-4
    assert learning_rate(spec(lr={"cnn_s": 1e-2, "broad_ssl": 3e-4}), cnn) == 3e-4
    assert learning_rate(spec(lr={"cnn_s": 1e-2, "mim": 3e-4}), cnn) == 1e-2
    with pytest.raises(EncoderError, match="lora.lr names none of 'simclr_broad_aug_s', 'broad_ssl', 'cnn_s', 'default'"):
        learning_rate(spec(lr={"vit_s": 1e-4}), cnn)


def test_schedule_warms_up_linearly_then_decays_to_zero() -> None:
    from crsbench_lib.runner.lora import _lr_factor

    s = spec(max_steps=100, warmup_steps=10)
    factors = [_lr_factor(s, step) for step in range(101)]
    assert factors[:10] == pytest.approx([(i + 1) / 10 for i in range(10)])
    assert factors[10] == pytest.approx(1.0) and factors[100] == pytest.approx(0.0, abs=1e-12)
    assert factors[55] == pytest.approx(0.5)  # half way through the decay
    assert all(a >= b for a, b in zip(factors[10:], factors[11:]))
    assert [_lr_factor(spec(max_steps=100), k) for k in (0, 50)] == pytest.approx([1.0, 0.5])
    assert _lr_factor(spec(max_steps=100, warmup_steps=4, lr_schedule="constant"), 60) == 1.0


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0.01, 5.0), min_size=2, max_size=40), st.floats(-0.5, 0.5), st.floats(0.0, 3.0))
def test_progress_is_a_paired_gain_beyond_its_standard_error(losses, shift, min_se) -> None:
    from crsbench_lib.runner.lora import is_progress

    a = np.asarray(losses)
    rng = np.random.default_rng(len(losses))
    b = a - shift + rng.normal(0, 0.05, a.size)
    d = a - b
    se = d.std(ddof=1) / np.sqrt(d.size)
    assert is_progress(a, b, min_se) == bool(d.mean() > 0 and d.mean() > min_se * se)
    assert not is_progress(a, a, min_se)  # no change is never progress
    assert is_progress(a, a - 0.1, min_se)  # a sure gain (zero spread) always is


def test_sub_noise_gains_do_not_reset_the_patience(dataset) -> None:
    """A large min_improvement_se counts no epoch as progress: training stops after ``patience`` epochs."""
    strict = adapt(TinyTorchEncoder(), dataset, spec(max_steps=100_000, patience=2, min_improvement_se=1e9))
    epoch = -(-240 // 32)  # steps per pass over the train split
    assert strict.report.steps_run == 2 * epoch and not strict.report.hit_cap
    # The lowest-loss state is still kept, progress or not.
    assert strict.report.best_val_loss <= strict.report.start_val_loss


def test_rate_trials_choose_the_lowest_validation_loss_per_family(capsys) -> None:
    from crsbench_lib.cli import main
    from crsbench_lib.runner.config import load_profile
    from crsbench_lib.runner.lora_rates import TRIAL_COLUMNS, learning_rate_trials, representative_encoders

    profile = load_profile("quick")
    assert representative_encoders(profile) == {"broad_ssl": "simclr_broad_aug_s", "mim": "mae_broad_vit"}
    table = learning_rate_trials(profile, "derm", 0, grid=(1e-2, 1e-3), encoders=["simclr_broad_aug_s"])
    assert list(table.columns) == list(TRIAL_COLUMNS) and table["lr"].tolist() == [1e-3, 1e-2]
    assert table["chosen"].sum() == 1
    assert table.loc[table["chosen"], "best_val_loss"].item() == table["best_val_loss"].min()
    assert (table["best_val_loss"] <= table["start_val_loss"]).all()
    assert main(["lora", "rates", "--profile", "quick", "--dataset", "derm", "--grid", "0.001",
                 "--encoders", "simclr_broad_aug_s"]) == 0
    assert "chosen (write under lora.lr): broad_ssl: 0.001" in capsys.readouterr().out
    assert main(["lora", "rates", "--profile", "quick", "--dataset", "nope"]) == 2


def test_an_adapter_that_never_moved_reports_the_frozen_embeddings(monkeypatch) -> None:
    """Best step 0 keeps the identity update: the cell's embeddings are the frozen arm's, not recomputed."""
    from dataclasses import replace

    from crsbench_lib.evaluation.cell import CellEmbeddings
    from crsbench_lib.runner import cell as cell_module
    from crsbench_lib.runner.config import load_profile
    from crsbench_lib.runner.lora import fraction_subsets

    ds = build_dataset("derm", seed=0, sizes={"train": 200, "val": 100, "test": 40}, image_side=32)
    profile = load_profile("quick")
    profile = replace(profile, lora=spec(min_val_labels=20, max_steps=8), label_fractions=(1.0, 0.25))
    encoder = TinyTorchEncoder()
    session = AdaptationSession(encoder, profile.lora, batch_size=64)
    original = session.adapt
    # A zero rate changes nothing, so no epoch beats the start: best step 0 for every adapter.
    monkeypatch.setattr(session, "adapt", lambda *args: original(*args, lr=0.0))
    images = cell_module.ConditionImages(ds, profile, ())

    def frozen(split: str) -> np.ndarray:
        return encoder.embed(ds.split(split, seed=0).images)

    sentinel = CellEmbeddings(frozen("train"), ds.split("train").labels, frozen("val"), ds.split("val").labels,
                              frozen("test"), ds.split("test").labels)
    embeddings, facts = cell_module.adapted_embeddings(session, images, frozen, profile, 0, lambda: sentinel)
    assert [a["best_step"] for a in facts["lora"]["adapters"]] == [0, 0]
    assert embeddings is sentinel and embeddings.features == "adapted"
    train_index, val_index = fraction_subsets(ds, 0, (1.0, 0.25), "matched")[0.25]
    f_train, f_val, f_test = embeddings.fraction_features[0.25]
    assert np.array_equal(f_train, frozen("train")[train_index]) and np.array_equal(f_val, frozen("val")[val_index])
    assert np.array_equal(f_test, frozen("test")) and embeddings.fraction_feature_kinds == {}
    # Without the frozen cell, the identity adapter's embeddings are computed, equal to float rounding.
    computed, _ = cell_module.adapted_embeddings(session, images, frozen, profile, 0)
    assert np.allclose(computed.test, frozen("test"), atol=1e-4)

