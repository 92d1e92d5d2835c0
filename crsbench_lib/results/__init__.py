"""The tidy results table: one row per evaluation (method section 7)."""

from crsbench_lib.results.io import read_results, to_csv, write_results
from crsbench_lib.results.schema import (
    ARMS,
    CALIBRATIONS,
    COLUMNS,
    CONDITIONS,
    KEY_COLUMNS,
    METRIC_COLUMNS,
    Column,
    empty_results,
    validate_results,
)

__all__ = [
    "ARMS",
    "CALIBRATIONS",
    "COLUMNS",
    "CONDITIONS",
    "KEY_COLUMNS",
    "METRIC_COLUMNS",
    "Column",
    "empty_results",
    "read_results",
    "to_csv",
    "validate_results",
    "write_results",
]
