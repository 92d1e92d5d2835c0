"""Benchmark of the score registry: add, list, verify, and concurrent adders.

Prints wall times for a synthetic 15-encoder table (3 datasets x 3 seeds, the
full corruption grid): one ``add`` of every encoder, an idempotent re-add,
``list``, ``export``, ``verify``; then a registry grown to ``--entries`` entries
(encoders renamed), and ``--processes`` command-line adders writing at once.

    python benchmarks/bench_registry.py [--entries 120] [--processes 4]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from crsbench_lib.registry import Registry, verify_registry
from crsbench_lib.registry.export import export_text
from crsbench_lib.results.io import write_results
from crsbench_lib.results.synthetic import synthetic_results
from crsbench_lib.scoring.freeze import freeze_standard
from crsbench_lib.standard import save_standard


def _timed(label: str, func, *args, **kwargs):  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    value = func(*args, **kwargs)
    print(f"{label:<58} {time.perf_counter() - start:8.3f} s", flush=True)
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=120, help="grow the registry to this many entries")
    parser.add_argument("--processes", type=int, default=4, help="concurrent command-line adders")
    args = parser.parse_args(argv)

    results = synthetic_results(n_encoders=15, random_state=0)
    standard = freeze_standard(results, "bench-v1", panel=[f"enc{i:02d}" for i in range(15)])
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        std_path = save_standard(standard, root / "bench-v1.yaml")
        with Registry(root / "registry.sqlite", create=True) as reg:
            _timed("add 15 encoders (one transaction)", reg.add, results, std_path)
            _timed("add the same 15 again (idempotent, nothing written)", reg.add, results, std_path)
            _timed("list (ranked entries)", reg.entries)
            _timed("export json", export_text, reg, "json")
            report = _timed("verify 15 entries (recompute + chain)", verify_registry, reg)
            assert report.ok, report.problems

            rounds = max(0, (args.entries - 15) // 15)
            start = time.perf_counter()
            for r in range(rounds):
                renamed = results.assign(encoder=results["encoder"].astype(str) + f"-r{r:03d}")
                reg.add(renamed, "bench-v1")
            n = len(reg.entries())
            if rounds:
                elapsed = time.perf_counter() - start
                print(f"{f'grow to {n} entries ({rounds} adds of 15)':<58} {elapsed:8.3f} s "
                      f"({elapsed / (rounds * 15) * 1000:.0f} ms per entry)")
            _timed(f"list with {n} entries", reg.entries)
            report = _timed(f"verify {n} entries", verify_registry, reg)
            assert report.ok, report.problems
            size = (root / "registry.sqlite").stat().st_size + sum(
                p.stat().st_size for p in root.glob("registry.sqlite-*"))
            print(f"{'registry size on disk':<58} {size / 1e6:8.2f} MB ({size / n / 1e3:.1f} kB per entry)")

        # Concurrent command-line adders, each with its own encoders.
        results_path = write_results(results, root / "results.parquet")
        db = root / "concurrent.sqlite"
        groups = [list(range(i, 15, args.processes)) for i in range(args.processes)]
        commands = []
        for group in groups:
            command = [sys.executable, "-m", "crsbench_lib", "registry", "--db", str(db), "add", str(results_path),
                       "--standard", str(std_path)]
            for i in group:
                command += ["--encoder", f"enc{i:02d}"]
            commands.append(command)
        start = time.perf_counter()
        processes = [subprocess.Popen(c, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for c in commands]
        codes = [p.wait() for p in processes]
        elapsed = time.perf_counter() - start
        with Registry(db) as reg:
            entries = reg.entries()
            ok = verify_registry(reg).ok
        print(f"{f'{args.processes} concurrent CLI adders (incl. interpreter start)':<58} {elapsed:8.3f} s "
              f"(exit codes {codes}, {len(entries)} entries, verify {'OK' if ok else 'FAILED'})")
        assert len(entries) == 15 and ok and not any(codes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
