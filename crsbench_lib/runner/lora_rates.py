"""Choosing the LoRA arm's learning rate on validation (method section 9, amendment 12).

For each zoo family among the profile's LoRA encoders (broad self-supervised,
broad multi-task, masked autoencoder, ...: how the features were learned
decides how far an adapter may move them), one representative encoder is
adapted on one dataset and seed at every rate of a small grid, with the
profile's other LoRA settings; the rate with the lowest best validation loss
(the early-stopping criterion itself) wins, ties going to the smaller rate.
The chosen rates are then written in the profile (``lora.lr``, one per
family, :func:`~crsbench_lib.runner.lora.learning_rate`) with the trial that
chose them, so every run uses fixed, recorded rates and no test image is read
to choose them.
"""

from __future__ import annotations

from collections.abc import Sequence
import numpy as np
import pandas as pd

from crsbench_lib.errors import ConfigError
from crsbench_lib.runner.profile import Profile

#: The default grid: half-decades around AdamW's usual LoRA rates.
DEFAULT_RATE_GRID: tuple[float, ...] = (1e-4, 3e-4, 1e-3, 3e-3, 1e-2)

#: Columns of :func:`learning_rate_trials`.
TRIAL_COLUMNS: tuple[str, ...] = (
    "family", "architecture", "encoder", "dataset", "seed", "lr", "start_val_loss", "best_val_loss", "best_step", "steps_run",
    "hit_cap", "chosen",
)


def representative_encoders(profile: Profile) -> dict[str, str]:
    """The first LoRA encoder of the profile of each neural-zoo family, in profile order."""
    from crsbench_lib.encoders.neural import NEURAL_ZOO

    names = profile.encoders if profile.lora.encoders == "neural" else profile.lora.encoders
    out: dict[str, str] = {}
    for name in names:
        if name in NEURAL_ZOO:
            out.setdefault(NEURAL_ZOO[name].family, name)
    return out


def learning_rate_trials(profile: Profile, dataset: str, seed: int, grid: Sequence[float] = DEFAULT_RATE_GRID,
                         encoders: Sequence[str] | None = None, log=None) -> pd.DataFrame:
    """Adapt each family's representative encoder at every rate of ``grid``.

    Parameters
    ----------
    profile : Profile
        Its LoRA settings (except ``lr``) and probe are used.
    dataset : str
        A dataset of the profile.
    seed : int
        The evaluation seed whose train and validation splits are used.
    grid : sequence of float
        Candidate peak learning rates.
    encoders : sequence of str, optional
        Encoders to try (default: :func:`representative_encoders`).
    log : callable, optional
        Called with one line per trial.

    Returns
    -------
    pandas.DataFrame
        One row per (encoder, rate), columns :data:`TRIAL_COLUMNS`; ``chosen``
        marks each encoder's rate with the lowest best validation loss.
    """
    from crsbench_lib.evaluation.probe import fit_probe
    from crsbench_lib.runner.cell import get_encoder, image_side, load_dataset
    from crsbench_lib.runner.lora import AdaptationSession

    if dataset not in [d.name for d in profile.datasets]:
        raise ConfigError(f"lora rates: dataset {dataset!r} is not in profile {profile.name!r}")
    rates = sorted({float(r) for r in grid})
    if not rates or any(not np.isfinite(r) or r <= 0 for r in rates):
        raise ConfigError(f"lora rates: the grid must hold positive numbers, got {list(grid)}")
    spec = profile.dataset(dataset)
    ds = load_dataset(spec)
    side = image_side(spec, ds)
    chosen_encoders = dict(representative_encoders(profile)) if encoders is None else None
    names = list(chosen_encoders.values()) if chosen_encoders is not None else list(encoders or ())
    train, val = ds.split("train", seed=seed), ds.split("val", seed=seed)
    pc = profile.probe
    rows = []
    for name in names:
        encoder = get_encoder(name, side, profile)
        probe = fit_probe(encoder.embed(train.images), train.labels, encoder.embed(val.images), val.labels, ds.task,
                          ds.n_classes, c_grid=pc.c_grid, max_iter=pc.max_iter, tol=pc.tol, seed=seed, c_rule=pc.c_rule)
        encoder_spec = getattr(encoder, "spec", None)
        family = getattr(encoder_spec, "family", "default")
        architecture = getattr(encoder_spec, "architecture", "default")
        session = AdaptationSession(encoder, profile.lora, profile.embedding.batch_size)
        h_train = session.activations(("train", seed), train.images)  # the same activations for every rate
        h_val = session.activations(("val", seed), val.images)
        for rate in rates:
            report = session.adapt(h_train, train.labels, h_val, val.labels, probe, ds.task,
                                   (name, ds.name, ds.version, seed, "all"), lr=rate).report
            rows.append((family, architecture, name, dataset, int(seed), rate, report.start_val_loss, report.best_val_loss,
                         report.best_step, report.steps_run, report.hit_cap, False))
            if log is not None:
                log(f"{name} ({family}, {architecture}) lr {rate:g}: validation loss {report.start_val_loss:.4f} -> "
                    f"{report.best_val_loss:.4f} at step {report.best_step} of {report.steps_run}"
                    + (" (hit the cap)" if report.hit_cap else ""))
    table = pd.DataFrame(rows, columns=list(TRIAL_COLUMNS))
    for _, group in table.groupby("encoder", sort=False):
        best = group["best_val_loss"].to_numpy()
        table.loc[group.index[int(np.argmin(best))], "chosen"] = True  # first minimum: the smaller rate
    return table
