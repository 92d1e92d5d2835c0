"""Encoders never import the cohort (architecture.md): checked in a fresh interpreter."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import sys
import crsbench_lib.encoders.cards, crsbench_lib.encoders.registry, crsbench_lib.encoders.recipes
from crsbench_lib.encoders.cards import zoo_cards
from crsbench_lib.encoders.registry import DEFAULT_ZOO, build_encoder
zoo_cards()
for name in DEFAULT_ZOO:
    build_encoder(name, device="cpu")
print(sorted(m for m in sys.modules if m.startswith(("crsbench_lib.cohort", "crsbench_lib.runner"))))
"""


def test_building_and_describing_the_zoo_never_imports_the_cohort() -> None:
    out = subprocess.run([sys.executable, "-c", SCRIPT], check=True, capture_output=True, text=True, timeout=300)
    assert out.stdout.strip() == "[]"
