"""The default world's realism rules and measurements, printed from a finished run (world v4).

Reads ``RUN_DIR/results.parquet`` (a ``crsbench run --profile default``) and
prints

1. per dataset, the clean macro-AUROC of every encoder (mean over seeds,
   frozen arm), its site-B AUROC and the drop, with its family and role;
2. each rule of :func:`crsbench_lib.report.world.world_checks` with its figure
   (the best broad encoder and its margins over pixels and PCA, the highest
   clean AUROC, the site-B rules over the strong candidates, the population of
   candidates and the adapted runs), plus the zoo's shape (a specialist
   pretrained on one site of each domain);
3. the shortcut cue of each domain as stated (odds ratio at each site, the
   share of site-A test images that carry it) and the per-encoder cue ablation
   (site-A test AUROC with the cue, without it, the difference), whatever it
   shows;
4. what post-hoc calibrators fitted at site A keep at site B.

Exit status 1 when any rule fails. Rules are requirements on the world's
design; the measurements are reported, never targets.

Usage: ``python benchmarks/bench_world_checks.py RUN_DIR``
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from crsbench_lib.cohort import PHANTOM_DATASETS, shortcut_cue
from crsbench_lib.cohort.datasets import test_split_attributes
from crsbench_lib.encoders.recipes import NEURAL_ZOO
from crsbench_lib.encoders.zoo import zoo_families
from crsbench_lib.report.roles import is_reference_family
from crsbench_lib.report.world import calibration_under_shift, clean_frozen_auroc, cue_ablation, world_checks
from crsbench_lib.results.io import RESULTS_FILE


def cue_facts(test_images: int = 2000) -> pd.DataFrame:
    """Each domain's cue as stated: odds ratio per site and the share of site-A test images carrying it."""
    rows = []
    for name in PHANTOM_DATASETS:
        cue = shortcut_cue(name)
        attributes = test_split_attributes(name, test_images)
        rows.append({
            "dataset": name, "cue": cue.name, "travels with": cue.positive,
            "odds ratio A": round(cue.odds_ratio("A"), 2), "odds ratio B": cue.odds_ratio("B"),
            "rates A (pos, neg)": cue.rates["A"], "rates B (pos, neg)": cue.rates["B"],
            "share of site-A test images": round(float(attributes[cue.name].mean()), 3),
            "source": cue.source,
        })
    return pd.DataFrame(rows)


def specialists() -> pd.DataFrame:
    """The zoo's single-site pretrained encoders per domain (a specialist per domain is a rule of world v4)."""
    rows = [{"encoder": spec.name, "domain": ",".join(spec.pool.datasets or ()), "method": spec.method}
            for spec in NEURAL_ZOO.values()
            if spec.pool is not None and not spec.pool.all_sites and spec.family != "intask"]
    return pd.DataFrame(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    args = parser.parse_args()
    table = pd.read_parquet(args.run_dir / RESULTS_FILE)
    families = zoo_families()
    clean = clean_frozen_auroc(table)
    with pd.option_context("display.width", 160, "display.max_rows", 200, "display.max_columns", 20):
        shift = table[(table["condition"] == "shift") & (table["arm"] == "frozen") & (table["calibration"] == "none")]
        site_b = shift.groupby(["encoder", "dataset"])["auroc"].mean().unstack("dataset")
        wide = pd.concat({"clean": clean, "site B": site_b, "drop": clean - site_b}, axis=1)
        wide.insert(0, ("family", ""), [families.get(e, "?") for e in wide.index])
        wide.insert(1, ("role", ""), ["reference" if is_reference_family(families.get(e)) else "candidate" for e in wide.index])
        print(wide.sort_values(["role", "family"]).round(3).to_string())
        checks = world_checks(table, families)
        print()
        print(checks.assign(value=checks["value"].map(lambda v: round(v, 3) if isinstance(v, float) else v)).to_string(
            index=False))
        found = specialists()
        covered = sorted({d for ds in found["domain"] for d in ds.split(",")})
        holds = set(PHANTOM_DATASETS) <= set(covered)
        print(f"\nspecialists (pretrained on one site of one domain): {', '.join(found['encoder'])}; "
              f"domains covered {', '.join(covered)}; a specialist per domain: {'holds' if holds else 'FAILS'}")
        print("\nshortcut cues (stated; the share is measured on the site-A test split):")
        print(cue_facts().to_string(index=False))
        ablation = cue_ablation(table)
        if not ablation.empty:
            ablation["role"] = ["reference" if is_reference_family(families.get(e)) else "candidate"
                                for e in ablation["encoder"]]
            print("\ncue ablation (site-A test AUROC with the cue minus without it; frozen, mean over seeds):")
            print(ablation.pivot(index="encoder", columns="dataset", values="cue_gain").round(4).to_string())
            for dataset, rows in ablation[ablation["role"] == "candidate"].groupby("dataset"):
                print(f"  {dataset}: candidates' cue gain {rows['cue_gain'].min():+.4f} to {rows['cue_gain'].max():+.4f}"
                      f" (median {rows['cue_gain'].median():+.4f})")
        kept = calibration_under_shift(table, families)
        if not kept.empty:
            print("\ncalibration under the shift (candidates' mean ECE; calibrators fitted at site A):")
            print(kept.round(4).to_string(index=False))
        drops = (clean - site_b).reindex(columns=site_b.columns)
        strong = [e for e in clean.index if not is_reference_family(families.get(e))]
        for dataset in site_b.columns:
            d = drops.loc[[e for e in strong if clean.at[e, dataset] > 0.75], dataset].dropna()
            if len(d):
                print(f"site-B drop over strong candidates, {dataset}: {d.min():.3f} to {d.max():.3f} "
                      f"(ratio {d.max() / max(d.min(), 1e-9):.1f}x; median {np.median(d):.3f})")
    return 0 if checks["holds"].all() and holds else 1


if __name__ == "__main__":
    sys.exit(main())
