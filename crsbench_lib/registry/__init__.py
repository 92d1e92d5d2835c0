"""The score registry: fixed-reference encoder scores that new candidates never rewrite.

An SQLite file (WAL mode) of reference standards, scored entries and an
append-only, hash-chained log. See :class:`Registry` and :func:`verify_registry`.
"""

from crsbench_lib.registry.db import (
    APPLICATION_ID,
    ENV_REGISTRY,
    SCHEMA_VERSION,
    connect,
    default_registry_path,
)
from crsbench_lib.registry.store import AddOutcome, AddReport, Registry, StandardRecord
from crsbench_lib.registry.verify import VerifyReport, verify_registry

__all__ = [
    "APPLICATION_ID",
    "ENV_REGISTRY",
    "SCHEMA_VERSION",
    "AddOutcome",
    "AddReport",
    "Registry",
    "StandardRecord",
    "VerifyReport",
    "connect",
    "default_registry_path",
    "verify_registry",
]
