"""The disk memo of fitted linear probes, shared by the cells of every run on this machine.

The frozen arm and the LoRA arm fit some probes on identical inputs: the LoRA
adapter's starting head is the frozen probe of its cell (full labels and each
adapted label fraction), and a label fraction the arm keeps frozen
(``lora.min_val_labels``), like a whole cell whose adapter never beat its
probe, is evaluated on the frozen embeddings. The two arms run as different
tasks, often in different worker processes, so the memo lives on disk
(:func:`crsbench_lib.evaluation.probe.memoised_probes`; the key is the sha256
of every input of the fit and of the fitting code).

Layout under the cache root (``$CRSBENCH_CACHE`` or ``.crsbench-cache``)::

    probes/<k[:2]>/<key>.pkl   sha256 of the payload (64 hex characters), newline, the pickled probe

A file whose checksum does not match, or that does not unpickle to a probe, is
ignored and overwritten by the next fit: a damaged memo costs a refit, never a
wrong probe. Writes are atomic; two workers writing the same key write the
same bytes.
"""

from __future__ import annotations

import hashlib
import pickle
from pathlib import Path

from crsbench_lib.atomic import atomic_write_bytes
from crsbench_lib.errors import CRSBenchError
from crsbench_lib.evaluation.probe import FittedProbe
from crsbench_lib.paths import cache_dir

#: Folder of the memo under the cache root.
PROBES_DIR = "probes"


class ProbeStore:
    """Fitted probes on disk, by the key :func:`~crsbench_lib.evaluation.probe.probe_key` gives.

    Parameters
    ----------
    root : path-like, optional
        The memo's folder (default: ``probes/`` under the cache root).

    Examples
    --------
    >>> import tempfile
    >>> import numpy as np
    >>> from crsbench_lib.evaluation.probe import fit_probe, memoised_probes
    >>> rng = np.random.default_rng(0)
    >>> x, y = rng.normal(size=(60, 3)), np.arange(60) % 2
    >>> store = ProbeStore(tempfile.mkdtemp())
    >>> with memoised_probes(store):
    ...     first = fit_probe(x[:40], y[:40], x[40:], y[40:], "binary", 2)
    ...     again = fit_probe(x[:40], y[:40], x[40:], y[40:], "binary", 2)
    >>> store.n_written, store.n_read, bool((again.model.coef == first.model.coef).all())
    (1, 1, True)
    """

    def __init__(self, root: str | Path | None = None) -> None:
        self.root = Path(root) if root is not None else cache_dir() / PROBES_DIR
        #: Probes this object wrote and read back: for tests and benchmarks.
        self.n_written = 0
        self.n_read = 0

    def path(self, key: str) -> Path:
        """Where a key's probe is kept."""
        return self.root / key[:2] / f"{key}.pkl"

    def get(self, key: str) -> FittedProbe | None:
        """The probe kept under ``key``, or None (absent or damaged)."""
        try:
            data = self.path(key).read_bytes()
        except OSError:
            return None
        checksum, _, payload = data.partition(b"\n")
        if hashlib.sha256(payload).hexdigest().encode() != checksum:
            return None
        try:
            probe = pickle.loads(payload)
        except Exception:  # a payload written by other code: refit  # noqa: BLE001
            return None
        if not isinstance(probe, FittedProbe):
            return None
        self.n_read += 1
        return probe

    def put(self, key: str, probe: FittedProbe) -> None:
        """Keep ``probe`` under ``key``; a place that cannot be written only costs later refits."""
        payload = pickle.dumps(probe, protocol=pickle.HIGHEST_PROTOCOL)
        target = self.path(key)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(target, hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload)
        except (OSError, CRSBenchError):
            return
        self.n_written += 1
