"""A results table validated once and carried to every analysis.

:func:`~crsbench_lib.results.schema.validate_results` copies and checks a
whole table; the book used to run it about five times on one table, and to
hash the table and recompute its raw axes several times. A
:class:`ValidatedResults` is the table after one validation: the functions
along the book's path take it and skip the checks, its content hash is
computed once (:attr:`ValidatedResults.hash`), and a scoring caller keeps what
it derives from the table (the raw axes) in :meth:`ValidatedResults.memo`.
A plain DataFrame still works wherever one does: :func:`as_validated`
validates it then, once.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, TypeVar

import pandas as pd

from crsbench_lib.results.io import read_results
from crsbench_lib.results.schema import COLUMNS, KEY_COLUMNS, validate_results

T = TypeVar("T")


def table_hash(table: pd.DataFrame) -> str:
    """``sha256:<hex>`` of a *validated* table's schema columns, independent of row order."""
    ordered = table[[c.name for c in COLUMNS]].sort_values(list(KEY_COLUMNS), kind="mergesort").reset_index(drop=True)
    hashed = pd.util.hash_pandas_object(ordered, index=False).to_numpy()
    return "sha256:" + hashlib.sha256(hashed.tobytes()).hexdigest()


@dataclass(frozen=True, eq=False)
class ValidatedResults:
    """A results table that passed :func:`~crsbench_lib.results.schema.validate_results`.

    Build one with :func:`as_validated` or :func:`read_validated`, not from an
    unchecked frame. Treat :attr:`frame` and what :meth:`memo` returns as
    read-only: they are shared by every analysis of the table.

    Attributes
    ----------
    frame : pandas.DataFrame
        The validated table (schema dtypes, schema columns first).
    source : str
        Where it came from (a file path, say), for messages.
    """

    frame: pd.DataFrame
    source: str = "results table"
    _memo: dict[Hashable, Any] = field(default_factory=dict, repr=False)

    @cached_property
    def hash(self) -> str:
        """The table's content hash (:func:`table_hash`), computed once."""
        return table_hash(self.frame)

    def memo(self, key: Hashable, compute: Callable[[], T]) -> T:
        """``compute()`` the first time ``key`` is asked for, the kept value afterwards."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]


def as_validated(results: pd.DataFrame | ValidatedResults, source: str = "results table") -> ValidatedResults:
    """``results`` as a :class:`ValidatedResults`, validating a plain DataFrame (once).

    Raises
    ------
    SchemaError
        If a DataFrame breaks the schema (:func:`~crsbench_lib.results.schema.validate_results`).
    """
    if isinstance(results, ValidatedResults):
        return results
    return ValidatedResults(validate_results(results, source=source), source)


def read_validated(path: str | os.PathLike[str]) -> ValidatedResults:
    """Read a results table (:func:`~crsbench_lib.results.io.read_results`, which validates it) as a :class:`ValidatedResults`."""
    return ValidatedResults(read_results(path), str(path))


__all__ = ["ValidatedResults", "as_validated", "read_validated", "table_hash"]
