"""The real pipeline of one cell: dataset -> encoder -> embeddings -> evaluation rows.

:class:`RealBackend` is the runner's default backend. In the parent it prepares
what keys the cells (dataset versions, encoder weights hashes, the corruption
families of each domain, code fingerprints); in a worker it computes a task's
cells. For the frozen arm the embeddings of every split and condition are taken
from the :class:`~crsbench_lib.embeddings.store.EmbeddingStore`: the test sets
(clean, corrupted, site B) once per (encoder, dataset), shared by every seed,
and the train, validation and calibration splits of each seed (redrawn per
seed, method section 9, amendment 1). For the LoRA arm the encoder is
adapted per seed, and once more per label fraction on that fraction's subset
(:mod:`crsbench_lib.runner.lora`), and embeds the same image sets
(:class:`ConditionImages`), not cached. Both arms go through the same
``evaluate_cell_predictions``; a cell yields its predictions and the rows
computed from them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from crsbench_lib import __version__
from crsbench_lib.data.base import ImageDataset
from crsbench_lib.data.checks import check_dataset
from crsbench_lib.results.manifest import PHANTOM_KIND
from crsbench_lib.encoders.base import Encoder, why_not_adaptable
from crsbench_lib.errors import ConfigError, CRSBenchError
from crsbench_lib.hashing import canonical_json
from crsbench_lib.imports import Import, import_closure, import_graph, package_modules, source_fingerprint
from crsbench_lib.runner.profile import ALL, DatasetSpec, Profile
from crsbench_lib.runner.grid import Cell, Preparation
from crsbench_lib.runner.manifest import library_versions

# The modules this module imports lazily, by the kind of work that needs them: a
# cell runs only those of its dataset kind, encoder kind and arm. Everything else
# a cell runs is found by walking the imports (crsbench_lib.imports).
# (Every kind is opened by crsbench_lib.cohort.run_sources.open_dataset, which
# imports these lazily in turn.)
DATASET_LOADERS: dict[str, str] = {
    "phantom": "crsbench_lib.cohort.datasets",
    "medmnist": "crsbench_lib.data.medmnist",
    "manifest": "crsbench_lib.data.manifest",
}
ENCODER_LOADERS: dict[str, str | None] = {
    "handcrafted": "crsbench_lib.encoders.handcrafted",
    "neural": "crsbench_lib.encoders.neural",
    "hub": "crsbench_lib.encoders.hub",
    "file": "crsbench_lib.encoders.file_encoder",
    "plugin": None,  # an entry point's code lives outside the package
}
LORA_MODULE = "crsbench_lib.runner.lora"
# Options that only torch-backed encoders (the neural zoo, hub adapters) accept.
TORCH_OPTIONS: tuple[str, ...] = ("device", "amp")


def encoder_kind(name: str, profile: Profile | None = None) -> str:
    """``handcrafted``, ``neural`` (the zoo), ``hub``, ``file`` (a model file) or ``plugin`` (an entry point).

    A model file named in a profile's mapping form is known by ``profile`` only.
    """
    from crsbench_lib.encoders.handcrafted import HANDCRAFTED
    from crsbench_lib.encoders.neural import NEURAL_ZOO
    from crsbench_lib.encoders.registry import hub_prefix
    from crsbench_lib.encoders.zoo import file_spec

    if (profile is not None and name in profile.encoder_files) or file_spec(name) is not None:
        return "file"
    if name in HANDCRAFTED:
        return "handcrafted"
    if name in NEURAL_ZOO:
        return "neural"
    if hub_prefix(name) is not None:
        return "hub"
    return "plugin"


def cell_modules(dataset_kind: str, encoder_name: str, arm: str, kind: str | None = None) -> frozenset[str]:
    """The package modules a cell of this kind runs, read from the package's imports.

    The walk starts at this module and the loaders of the cell's dataset kind,
    encoder kind and arm, follows every import (module level and inside
    functions, parent packages included), and leaves out only the lazy imports
    of the *other* kinds' loaders. So editing the hub adapters leaves the
    phantom zoo's cells alone, while editing anything a cell can run recomputes it.

    Parameters
    ----------
    dataset_kind : {"phantom", "medmnist", "manifest"}
    encoder_name : str
    arm : {"frozen", "lora"}
    kind : str, optional
        The encoder's kind (:func:`encoder_kind`), where the name alone does not tell it.

    Returns
    -------
    frozenset of str
        Dotted module names.

    Raises
    ------
    KeyError
        If a loader named here is not a module of the package (it moved).
    """
    loaders = {*DATASET_LOADERS.values(), *ENCODER_LOADERS.values(), LORA_MODULE} - {None}
    used = {DATASET_LOADERS[dataset_kind], ENCODER_LOADERS[kind or encoder_kind(encoder_name)]}
    if arm == "lora":
        used.add(LORA_MODULE)
    used.discard(None)
    return import_closure([__name__, *used], _package_graph(), skip_lazy=loaders - used)


@lru_cache(maxsize=1)
def _package_graph() -> dict[str, tuple[Import, ...]]:
    return import_graph()


@lru_cache(maxsize=None)
def code_fingerprint(modules: frozenset[str]) -> str:
    """SHA-256 over the source files of ``modules`` (:func:`cell_modules`).

    Any edit to that code changes the fingerprint, so the cells it computes are
    recomputed rather than silently reused. Memoised per process.
    """
    return source_fingerprint(modules, package_modules())


# ---------------------------------------------------------------------------
# Datasets and encoders, memoised per process
# ---------------------------------------------------------------------------

_DATASETS: dict[str, ImageDataset] = {}
_ENCODERS: dict[tuple[Any, ...], Encoder] = {}
# Encoders kept alive per process; a task needs one at a time, the rest is for reuse.
_MAX_ENCODERS = 4


def load_dataset(spec: DatasetSpec) -> ImageDataset:
    """Build (or reuse, within this process) the dataset a spec names.

    Raises
    ------
    DataError
        If the data cannot be read (missing files, malformed arrays).
    """
    memo = canonical_json(spec.written) + str(spec.options.get("root", spec.options.get("csv", "")))
    if memo in _DATASETS:
        return _DATASETS[memo]
    from crsbench_lib.cohort.run_sources import open_dataset

    dataset = open_dataset(spec.kind, spec.name, spec.options)
    _DATASETS[memo] = dataset
    return dataset


def image_side(spec: DatasetSpec, dataset: ImageDataset) -> int:
    """Working image side of a dataset (encoders are built at this side)."""
    return int(spec.options["image_side"])


def get_encoder(name: str, side: int, profile: Profile) -> Encoder:
    """Build (or reuse, within this process) encoder ``name`` at ``side`` pixels."""
    options = {k: getattr(profile.embedding, k) for k in TORCH_OPTIONS}
    file = profile.encoder_files.get(name)
    # A model file rewritten in place is another encoder: its memo follows the file's size and time.
    stamp = () if file is None or not file.path.is_file() else (str(file.path), file.path.stat().st_size,
                                                                 file.path.stat().st_mtime_ns)
    memo = (name, side, canonical_json(options), *stamp)
    if memo in _ENCODERS:
        return _ENCODERS[memo]
    from crsbench_lib.encoders.neural import NEURAL_ZOO
    from crsbench_lib.encoders.registry import build_encoder, hub_prefix

    hub = hub_prefix(name) is not None
    kwargs: dict[str, Any] = dict(options) if name in NEURAL_ZOO or hub or file is not None else {}
    if hub:
        kwargs["allow_download"] = profile.allow_download
    if file is not None:
        from crsbench_lib.encoders.file_encoder import build_file_encoder

        # A model file is built from its resolved path, under the profile's name, at its own side if it has one.
        encoder: Encoder = build_file_encoder(str(file.path), image_side=file.image_side or side, name=name, **kwargs)
    else:
        encoder = build_encoder(name, image_side=side, **kwargs)
    while len(_ENCODERS) >= _MAX_ENCODERS:
        _ENCODERS.pop(next(iter(_ENCODERS)))
    _ENCODERS[memo] = encoder
    return encoder


def resolve_families(profile: Profile, spec: DatasetSpec, domain: str) -> tuple[str, ...]:
    """The corruption families measured on a dataset of ``domain``.

    Raises
    ------
    ConfigError
        If the profile names a family the domain does not have, or asks for
        ``all`` on a domain without a corruption catalogue.
    """
    from crsbench_lib.cohort import corruption_families

    requested = profile.corruptions.families_for(domain)
    if requested != ALL and len(requested) == 0:
        return ()
    try:
        known = corruption_families(domain)
    except CRSBenchError as exc:
        raise ConfigError(f"corruptions.families: dataset {spec.name}: {exc}") from exc
    if requested == ALL:
        return tuple(known)
    unknown = [f for f in requested if f not in known]
    if unknown:
        raise ConfigError(
            f"corruptions.families: {unknown[0]!r} is not a corruption family of domain {domain!r} "
            f"(dataset {spec.name}; known: {', '.join(known)})"
        )
    return tuple(requested)


# ---------------------------------------------------------------------------
# Embeddings of one cell
# ---------------------------------------------------------------------------


def cell_embeddings(
    store: Any, encoder: Encoder, dataset: ImageDataset, profile: Profile, families: Sequence[str], seed: int = 0
) -> Any:
    """Embeddings of every split and condition of one (encoder, dataset, seed).

    Train/val/calibration of evaluation seed ``seed`` and the test split at the
    training site; each (family, severity) on its block of test images
    (:func:`corruption_blocks`); the second site's test split where the dataset
    has one, and its cue-removed test split where it has a shortcut cue. The test sets are the same for every seed (and so shared in the store).
    """
    batch = profile.embedding.batch_size

    def embed(split: str, **kwargs: Any) -> np.ndarray:
        return np.asarray(store.embed(encoder, dataset, split, batch_size=batch, **kwargs))

    blocks = corruption_blocks(profile, dataset, families)
    corrupted = {
        (family, severity): embed("test", corruption=family, severity=severity,
                                  corruption_seed=profile.corruptions.seed, n_images=block.size,
                                  first_image=int(block[0]))
        for (family, severity), block in blocks.items()
    }
    return _cell_embeddings(dataset, seed, lambda split, site: embed(split, site=site, seed=seed), corrupted, blocks)


def _cell_embeddings(
    dataset: ImageDataset, seed: int, embed: Any, corrupted: dict[tuple[str, int], np.ndarray],
    blocks: dict[tuple[str, int], np.ndarray],
) -> Any:
    """The twelve-field ``CellEmbeddings`` of one seed, from ``embed(split, site)`` (site None: the own site).

    One builder for both arms: the store's cached embeddings (:func:`cell_embeddings`)
    and an adapted encoder's (:meth:`ConditionImages.embeddings`).
    """
    from crsbench_lib.evaluation import CellEmbeddings

    shift_site = dataset.shift_site
    # The training site's test images without the shortcut cue (phantom cohort only: the cue ablation).
    cue_removed = dataset.ablation_sites[0] if dataset.ablation_sites else None
    return CellEmbeddings(
        train=embed("train", None),
        train_labels=dataset.split("train", seed=seed).labels,
        val=embed("val", None),
        val_labels=dataset.split("val", seed=seed).labels,
        test=embed("test", None),
        test_labels=dataset.split("test").labels,
        corrupted=corrupted,
        corrupted_images=dict(blocks),
        shift_test=None if shift_site is None else embed("test", shift_site),
        shift_labels=None if shift_site is None else dataset.split("test", shift_site).labels,
        cue_removed_test=embed("test", cue_removed) if cue_removed is not None else None,
        calibration=embed("calibration", None),
        calibration_labels=dataset.split("calibration", seed=seed).labels,
    )


def corruption_blocks(
    profile: Profile, dataset: ImageDataset, families: Sequence[str]
) -> dict[tuple[str, int], np.ndarray]:
    """The test images each (family, severity) of a dataset corrupts.

    Each condition's block starts where
    :func:`~crsbench_lib.cohort.corruptions.first_image` puts it, from the block
    index the family declares in its domain's catalogue, and holds
    ``corruptions.n_images`` consecutive test images
    (:func:`~crsbench_lib.embeddings.store.image_block`). ``families`` come from
    :func:`resolve_families`, so each is in the catalogue.

    Returns
    -------
    dict
        (family, severity) -> int64 test-split positions, in the order its
        corrupted rows come.
    """
    from crsbench_lib.cohort.corruptions import first_image, image_block_index, images_per_condition
    from crsbench_lib.embeddings.store import image_block

    if not families:
        return {}
    n_test = len(dataset.split("test"))
    spec = profile.corruptions
    n = images_per_condition(spec.n_images, n_test)
    blocks = {}
    for family in families:
        block = image_block_index(dataset.domain, family)
        for severity in spec.severities:
            start = first_image(spec.layout, block, severity, spec.n_images, n_test)
            blocks[(family, severity)] = image_block(n_test, n, start)
    return blocks


class ConditionImages:
    """The image sets of every condition of a dataset, for embedding by adapted encoders.

    Adapted encoders are used once, so their embeddings are not cached; the
    corrupted image sets they see are the embedding store's
    (:func:`crsbench_lib.embeddings.store.corrupted_images` on the blocks of
    :func:`corruption_blocks`, with the profile's corruption seed, made once per
    process), so both arms measure the same corruption sets (method
    section 9, amendment 8).
    """

    def __init__(self, dataset: ImageDataset, profile: Profile, families: Sequence[str]) -> None:
        self.dataset = dataset
        self.profile = profile
        self.blocks = corruption_blocks(profile, dataset, families)
        self.conditions = list(self.blocks)

    def corrupted(self, family: str, severity: int) -> np.ndarray:
        """Corrupted test images of one (family, severity)."""
        from crsbench_lib.embeddings.store import corrupted_images

        block = self.blocks[(family, severity)]
        return corrupted_images(self.dataset, "test", None, family, severity, self.profile.corruptions.seed,
                                block.size, int(block[0]))

    def embeddings(self, embed: Any, seed: int = 0) -> Any:
        """``CellEmbeddings`` of evaluation seed ``seed``, from ``embed(key, images)``.

        ``key`` names the image set: ``(split, site, seed)`` for the seed's own
        splits, ``("test", site)`` for a test split (the same for every seed)
        and ``("corruption", family, severity)``, so an embedder may keep
        what it computed per key (as the LoRA arm keeps lower-layer activations).
        """
        ds = self.dataset

        def split_embed(split: str, site: str | None) -> np.ndarray:
            key = ("test", site) if split == "test" else (split, site, seed)
            return embed(key, ds.split(split, site, seed=seed).images)

        corrupted = {(f, s): embed(("corruption", f, s), self.corrupted(f, s)) for f, s in self.conditions}
        return _cell_embeddings(ds, seed, split_embed, corrupted, self.blocks)


def adapted_embeddings(session: Any, images: ConditionImages, frozen: Any, profile: Profile, seed: int,
                       frozen_cell: Any = None) -> Any:
    """The LoRA arm's ``CellEmbeddings`` of one seed and the manifest facts of its adapters.

    The full-label adapter starts from the frozen probe of the seed's train
    and validation splits; each label fraction's adapter from the frozen probe
    of that fraction's subsets (or, below ``lora.min_val_labels`` validation
    images, the fraction keeps the frozen embeddings). ``frozen(split)`` gives
    the frozen arm's embeddings of the seed's ``train`` and ``val`` splits and
    of ``test`` (the embedding store's, so the probes are the frozen arm's).

    An adapter that never beat its starting probe (best step 0) keeps the
    identity update: the adapted encoder *is* the frozen one, so its
    embeddings are taken as the frozen arm's rather than recomputed through
    the adapted blocks (the same function up to float rounding): the whole
    cell's from ``frozen_cell()`` (the frozen arm's ``CellEmbeddings`` of the
    seed) where given, a fraction's subsets from ``frozen``.
    """
    from crsbench_lib.evaluation.probe import fit_probe
    from crsbench_lib.runner.lora import LoraReport, adaptation_facts, fraction_subsets

    ds, spec, probe_config = images.dataset, profile.lora, profile.probe
    train, val = ds.split("train", seed=seed), ds.split("val", seed=seed)
    frozen_train, frozen_val = frozen("train"), frozen("val")

    def probe(train_index: Any = slice(None), val_index: Any = slice(None)) -> Any:
        return fit_probe(frozen_train[train_index], train.labels[train_index], frozen_val[val_index],
                         val.labels[val_index], ds.task, ds.n_classes, c_grid=probe_config.c_grid,
                         max_iter=probe_config.max_iter, tol=probe_config.tol, seed=seed, c_rule=probe_config.c_rule)

    h_train = session.activations(("train", None, seed), train.images)
    h_val = session.activations(("val", None, seed), val.images)
    parts = (session.encoder.name, ds.name, ds.version, seed)
    full = session.adapt(h_train, train.labels, h_val, val.labels, probe(), ds.task, (*parts, "all"))
    if full.report.best_step == 0 and frozen_cell is not None:
        embeddings = frozen_cell()
    else:
        embeddings = images.embeddings(lambda key, imgs: session.embed(full, session.activations(key, imgs)), seed)
    embeddings.features = "adapted"
    reports = {}
    for f, (train_index, val_index) in fraction_subsets(ds, seed, profile.label_fractions,
                                                        probe_config.val_fraction_policy).items():
        if val_index.size < spec.min_val_labels:
            reports[f] = LoraReport.untrained(spec.max_steps, session.lr, train_index.size, val_index.size)
            embeddings.fraction_features[f] = (frozen_train[train_index], frozen_val[val_index], frozen("test"))
            embeddings.fraction_feature_kinds[f] = "frozen"
            continue
        adapted = session.adapt(h_train[train_index], train.labels[train_index], h_val[val_index],
                                val.labels[val_index], probe(train_index, val_index), ds.task, (*parts, f))
        reports[f] = adapted.report
        if adapted.report.best_step == 0:  # the identity update: the frozen encoder's embeddings
            embeddings.fraction_features[f] = (frozen_train[train_index], frozen_val[val_index], frozen("test"))
            continue
        embeddings.fraction_features[f] = (
            session.embed(adapted, h_train[train_index]), session.embed(adapted, h_val[val_index]),
            session.embed(adapted, session.activations(("test", None), ds.split("test").images)),
        )
    session.forget(lambda key: len(key) != 3 or key[2] != seed)  # this seed's splits are done
    return embeddings, {"lora": adaptation_facts(full.report, reports)}


def evaluate(profile: Profile, dataset: ImageDataset, embeddings: Any, cell: Cell) -> tuple[pd.DataFrame, list[Any]]:
    """The result rows of one cell and the predictions they were computed from.

    Probe fits are pinned to one BLAS thread (see executors).
    """
    from threadpoolctl import threadpool_limits

    from crsbench_lib.evaluation import evaluate_cell_predictions, rows_from_predictions

    meta = {
        "encoder": cell.encoder,
        "dataset": cell.dataset,
        "domain": dataset.domain,
        "arm": cell.arm,
        "config_hash": profile.config_hash,
        "package_version": __version__,
    }
    with threadpool_limits(limits=1, user_api="blas"):
        predictions = evaluate_cell_predictions(
            embeddings,
            dataset.task,
            dataset.n_classes,
            seed=cell.seed,
            label_fractions=profile.label_fractions,
            ece_bins=profile.ece_bins,
            probe=profile.probe,
            meta=meta,
        )
    return rows_from_predictions(predictions, source=f"cell {cell.label}"), predictions


class RealBackend:
    """The default cell backend: the real cohort, encoders, store and evaluation engine.

    Parameters
    ----------
    store_root : pathlib.Path, optional
        Embedding cache folder (default: the store's default under ``cache_dir()``).
    """

    #: Cells yield their per-image predictions (stored beside the rows by the runner).
    produces_predictions = True

    def __init__(self, store_root: Path | None = None) -> None:
        self.store_root = store_root

    def _store(self) -> Any:
        from crsbench_lib.embeddings.store import EmbeddingStore

        return EmbeddingStore(self.store_root)

    def _probes(self) -> Any:
        """The disk memo of fitted probes, beside the embedding store (shared by both arms' cells)."""
        from crsbench_lib.runner.probe_store import PROBES_DIR, ProbeStore

        return ProbeStore(None if self.store_root is None else Path(self.store_root).parent / PROBES_DIR)

    def prepare(self, profile: Profile) -> Preparation:
        """Dataset versions, weights hashes and corruption families, before any cell runs.

        Raises
        ------
        ConfigError, DataError, EncoderError
            On missing data, unknown encoders or families.
        """
        versions: dict[str, str] = {}
        domains: dict[str, str] = {}
        families: dict[str, tuple[str, ...]] = {}
        hashes: dict[tuple[str, str], str] = {}
        neural: list[str] = []
        sides: dict[str, int] = {}
        splits: dict[str, dict[str, Any]] = {}
        checks: dict[str, dict[str, Any]] = {}
        for spec in profile.datasets:
            dataset = load_dataset(spec)
            versions[spec.name] = dataset.version
            domains[spec.name] = dataset.domain
            families[spec.name] = resolve_families(profile, spec, dataset.domain)
            sides[spec.name] = image_side(spec, dataset)
            splits[spec.name] = {str(seed): dataset.development_record(seed) for seed in profile.seeds}
            if spec.kind != PHANTOM_KIND:
                # Checked from the files before any cell: a prevalence shift moves every encoder's C alike.
                checks[spec.name] = check_dataset(dataset).to_json()
        not_adapted: dict[str, str] = {}
        files: dict[str, dict[str, Any]] = {}
        for name in profile.encoders:
            for spec in profile.datasets:
                encoder = get_encoder(name, sides[spec.name], profile)
                hashes[(name, spec.name)] = encoder.weights_hash
                reason = why_not_adaptable(encoder)
                if reason is None and name not in neural:
                    neural.append(name)
                elif reason is not None:
                    not_adapted[name] = reason
                card = getattr(encoder, "card", None)
                if name in profile.encoder_files and callable(card):
                    files[name] = card()  # the file's sha256, width and parameters: the manifest and the zoo page
        return Preparation(
            dataset_versions=versions,
            dataset_domains=domains,
            corruption_families=families,
            weights_hashes=hashes,
            neural_encoders=tuple(neural),
            not_adaptable=not_adapted,
            code_versions={
                f"{name}|{spec.name}|{arm}": code_fingerprint(cell_modules(spec.kind, name, arm,
                                                                            encoder_kind(name, profile)))
                for name in profile.encoders
                for spec in profile.datasets
                for arm in profile.arms
            },
            library_versions=library_versions(),
            extra={"image_sides": sides, "development_splits": splits, **({"data_checks": checks} if checks else {})},
            encoder_files=files,
        )

    def compute(self, profile: Profile, prep: Preparation, cells: Sequence[Cell]) -> Iterator[tuple[Cell, pd.DataFrame]]:
        """Compute cells that share (encoder, dataset, arm), yielding each one's rows."""
        if not cells:
            return
        first = cells[0]
        spec = profile.dataset(first.dataset)
        dataset = load_dataset(spec)
        side = int(prep.extra["image_sides"][spec.name])
        families = prep.corruption_families[spec.name]
        encoder = get_encoder(first.encoder, side, profile)
        from crsbench_lib.evaluation.probe import memoised_probes

        probes = self._probes()
        if first.arm == "frozen":
            store = self._store()
            for cell in cells:
                embeddings = cell_embeddings(store, encoder, dataset, profile, families, seed=cell.seed)
                with memoised_probes(probes):
                    rows = evaluate(profile, dataset, embeddings, cell)
                yield (cell, *rows)
            return
        from crsbench_lib.runner.lora import AdaptationSession

        batch = profile.embedding.batch_size
        session = AdaptationSession(encoder, profile.lora, batch)
        images = ConditionImages(dataset, profile, families)
        store = self._store()
        for cell in cells:
            def frozen(split: str, seed: int = cell.seed) -> np.ndarray:
                # As cell_embeddings asks the store, so these are the frozen arm's very embeddings.
                return np.asarray(store.embed(encoder, dataset, split, batch_size=batch, site=None, seed=seed))

            def frozen_cell(seed: int = cell.seed) -> Any:
                return cell_embeddings(store, encoder, dataset, profile, families, seed=seed)

            with memoised_probes(probes):
                embeddings, facts = adapted_embeddings(session, images, frozen, profile, cell.seed, frozen_cell)
                rows = evaluate(profile, dataset, embeddings, cell)
            # How each adapter trained goes to the manifest (not the results table).
            yield (cell, *rows, facts)
