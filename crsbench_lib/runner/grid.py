"""The grid of a run: cells, work units and the key that identifies a cell's result.

A *cell* is one (encoder, dataset, seed, arm): the evaluation engine turns it into
a block of result rows. Cells that share (encoder, dataset, arm) are grouped
into one *task* run by one worker: on the frozen arm their embeddings are
computed once (they do not depend on the probe seed); on the LoRA arm the
encoder is adapted per seed, but the corrupted image sets are made once.

A cell's *key* is the SHA-256 of everything that can change its rows: the
config parts that apply to it (its dataset entry, the corruptions resolved for
its domain, the probe grid, the standard's label fractions and ECE bins, the
embedding batch size, and the LoRA settings on the LoRA arm), the package
version, a fingerprint of the code that computes it, the dataset version and
the encoder's weights hash. Changing any of them changes exactly the keys of the
cells it affects; a finished cell whose key is unchanged is reused.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from crsbench_lib import __version__
from crsbench_lib.hashing import sha256_of
from crsbench_lib.runner.profile import LORA_NEURAL, Profile

# Bumped when the layout of a cell file changes, so that old files are not reused.
CELL_FORMAT = "crsbench-cell/1"


@dataclass(frozen=True, order=True)
class Cell:
    """One (encoder, dataset, seed, arm) of the grid."""

    encoder: str
    dataset: str
    seed: int
    arm: str

    @property
    def label(self) -> str:
        """Short human-readable name, e.g. ``hog/derm/seed1/frozen``."""
        return f"{self.encoder}/{self.dataset}/seed{self.seed}/{self.arm}"


@dataclass(frozen=True)
class Preparation:
    """Facts found before any cell runs, needed for keys and by the workers.

    Attributes
    ----------
    dataset_versions : dict
        Dataset name -> version string (changes whenever its images would change).
    dataset_domains : dict
        Dataset name -> imaging domain.
    corruption_families : dict
        Dataset name -> the corruption families measured on it (resolved from the
        profile for the dataset's domain).
    weights_hashes : dict
        (encoder, dataset) -> the encoder's weights hash as built for that dataset
        (encoders are built at the dataset's image side).
    neural_encoders : tuple of str
        Encoders that the LoRA arm can adapt (a torch module, not an exported graph).
    code_versions : dict
        Fingerprint of the code that computes a cell's rows, keyed by
        ``"encoder|dataset|arm"`` or, coarser, by arm (see :meth:`code_version`).
    library_versions : dict
        Library -> version, for the manifest.
    extra : dict
        Anything else a backend wants to record in the manifest.
    not_adaptable : dict
        Encoder -> why the LoRA arm cannot adapt it (no network, an exported graph).
    encoder_files : dict
        Model-file encoder -> its card (file, format, sha256, width, parameters), for the manifest.
    """

    dataset_versions: Mapping[str, str]
    dataset_domains: Mapping[str, str]
    corruption_families: Mapping[str, tuple[str, ...]]
    weights_hashes: Mapping[tuple[str, str], str]
    neural_encoders: tuple[str, ...]
    code_versions: Mapping[str, str]
    library_versions: Mapping[str, str] = field(default_factory=dict)
    extra: Mapping[str, Any] = field(default_factory=dict)
    not_adaptable: Mapping[str, str] = field(default_factory=dict)
    encoder_files: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def code_version(self, cell: Cell) -> str:
        """The code fingerprint of a cell (most specific key first)."""
        specific = f"{cell.encoder}|{cell.dataset}|{cell.arm}"
        if specific in self.code_versions:
            return self.code_versions[specific]
        return self.code_versions[cell.arm]


@dataclass(frozen=True)
class Task:
    """A unit of work handed to an executor: cells that share encoder, dataset and arm."""

    cells: tuple[Cell, ...]
    keys: tuple[str, ...]

    @property
    def label(self) -> str:
        first = self.cells[0]
        return f"{first.encoder}/{first.dataset}/{first.arm}"


def lora_encoders(profile: Profile, prep: Preparation) -> tuple[str, ...]:
    """Encoders of the LoRA arm: neural encoders only (hand-crafted ones have nothing to adapt).

    An explicit ``lora.encoders`` list that names a hand-crafted encoder is not
    an error: that encoder is skipped, as the method excludes it.
    """
    if "lora" not in profile.arms:
        return ()
    wanted = profile.encoders if profile.lora.encoders == LORA_NEURAL else profile.lora.encoders
    return tuple(e for e in wanted if e in prep.neural_encoders)


def not_adapted(profile: Profile, prep: Preparation) -> dict[str, str]:
    """Encoders of a profile with a LoRA arm that the arm leaves out, and why (empty without the arm).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> profile = SimpleNamespace(arms=("frozen", "lora"), encoders=("hog", "a", "b"),
    ...                           lora=SimpleNamespace(encoders=("a",)))
    >>> prep = SimpleNamespace(neural_encoders=("a", "b"), not_adaptable={"hog": "no network to adapt"})
    >>> not_adapted(profile, prep)
    {'hog': 'no network to adapt', 'b': 'not listed under lora.encoders'}
    """
    if "lora" not in profile.arms:
        return {}
    adapted = set(lora_encoders(profile, prep))
    return {e: prep.not_adaptable.get(e, "not listed under lora.encoders")
            for e in profile.encoders if e not in adapted}


def build_cells(profile: Profile, prep: Preparation) -> list[Cell]:
    """Every cell of the profile, in a fixed order (arm, encoder, dataset, seed as listed)."""
    cells: list[Cell] = []
    for arm in profile.arms:
        encoders = profile.encoders if arm == "frozen" else lora_encoders(profile, prep)
        for encoder in encoders:
            for dataset in profile.datasets:
                for seed in profile.seeds:
                    cells.append(Cell(encoder, dataset.name, seed, arm))
    return cells


def cell_key_material(profile: Profile, prep: Preparation, cell: Cell) -> dict[str, Any]:
    """Everything that can change a cell's rows (the input of :func:`cell_key`)."""
    lora = None
    if cell.arm == "lora":
        lora = {k: v for k, v in profile.lora.written().items() if k != "encoders"}
    return {
        "format": CELL_FORMAT,
        "cell": [cell.encoder, cell.dataset, cell.seed, cell.arm],
        "dataset": dict(profile.dataset(cell.dataset).written),
        "dataset_version": prep.dataset_versions[cell.dataset],
        "encoder_weights": prep.weights_hashes[(cell.encoder, cell.dataset)],
        "corruptions": {
            **profile.corruptions.written(),
            "families": list(prep.corruption_families[cell.dataset]),
        },
        "probe": profile.probe.written(),
        "standard": profile.standard_facts(),
        "embedding": profile.embedding.written(),
        "lora": lora,
        "package_version": __version__,
        "code_version": prep.code_version(cell),
    }


def cell_key(profile: Profile, prep: Preparation, cell: Cell) -> str:
    """The cell's cache key: SHA-256 of :func:`cell_key_material`."""
    return sha256_of(cell_key_material(profile, prep, cell))


def build_tasks(cells: Sequence[Cell], keys: Mapping[Cell, str]) -> list[Task]:
    """Group cells into tasks by (arm, encoder, dataset).

    Order follows the first appearance of each group in ``cells``, so the same
    grid always gives the same tasks.
    """
    groups: dict[tuple[str, str, str], list[Cell]] = {}
    for cell in cells:
        groups.setdefault((cell.arm, cell.encoder, cell.dataset), []).append(cell)
    return [Task(tuple(group), tuple(keys[c] for c in group)) for group in groups.values()]


def ordered_tasks(tasks: Sequence[Task], datasets: Sequence[str]) -> list[Task]:
    """Tasks in the order a run computes them: LoRA first, then dataset by dataset.

    LoRA tasks are the longest (they train per seed), so starting them first lets
    parallel workers finish together. Within an arm, a dataset's tasks follow
    each other, so a worker process makes that dataset's corrupted image sets
    once and reuses them (:func:`crsbench_lib.embeddings.store.corrupted_images`
    keeps them per process) instead of once per encoder. The order does not
    change any result: every task's numbers depend on its cells only.

    Examples
    --------
    >>> a = Task((Cell("e1", "d2", 0, "frozen"),), ("k1",))
    >>> b = Task((Cell("e2", "d1", 0, "frozen"),), ("k2",))
    >>> c = Task((Cell("e1", "d2", 0, "lora"),), ("k3",))
    >>> [t.keys[0] for t in ordered_tasks([a, b, c], ["d1", "d2"])]
    ['k3', 'k2', 'k1']
    """
    position = {name: i for i, name in enumerate(datasets)}
    return sorted(tasks, key=lambda task: (task.cells[0].arm != "lora", position[task.cells[0].dataset]))
