"""Leave one dataset out, asked of encoders to which the held-out domain is new (method section 9, amendment 17).

:mod:`crsbench_lib.scoring.lodo` holds out a dataset ``d`` and predicts the
encoders' ranking on it from their profiles on the other datasets. When every
encoder asked about was pretrained on ``d``'s domain, ``d`` is not a new task
for them. Here the question is asked only of the encoders whose pretraining
(or fitting) never saw ``d``'s domain: for each held-out dataset, the encoders
``e`` with ``domain(d) not in seen_domains[e]``. Which domains an encoder saw
is an argument (:func:`seen_domains_from_pools` builds it from pretraining
pools), so the scoring stays pure.

Two targets are predicted, each by two predictors from the other datasets:

- the held-out AUROC (mean over seeds), as in :mod:`~crsbench_lib.scoring.lodo`;
- the **held-out CRS**: the encoder's single-dataset profile on ``d``
  (:func:`~crsbench_lib.scoring.axes.encoder_profiles` of its ``d`` rows),
  scored against the **LoDO standard** of ``d``
  (:func:`~crsbench_lib.scoring.lodo.lodo_standard`: the standard's anchors
  and weights, its panel refrozen from profiles without ``d``). Not the shipped
  standard: its panel was frozen from profiles that average in ``d``, so the
  target would contain ``d``'s measurements of the panel's encoders, the
  encoder itself among them (method section 9, amendment 7). Against the LoDO
  standard, predictor and target are scored by the same function against the
  same reference, which holds no measurement on ``d``; they differ only in the
  data the profile is measured on, and the target's only ``d`` information is
  the encoder's own measurements on ``d``.

The predictors are the CRS of the profile without ``d`` (against the same LoDO
standard) and, as the baseline, the AUROC without ``d``. Each pair is scored
by Kendall's tau-b (Kendall 1945; :mod:`~crsbench_lib.scoring.rank_statistics`), whose resolution
among ``n`` encoders is one swapped pair, ``2 / C(n, 2)`` (:func:`tau_resolution`).

A LoDO tau is read against the reproducibility of its target (a reference
level, not a bound: a predictor nearer the truth than one noisy replicate
can exceed it).
:func:`new_domain_retest` measures it as in
:mod:`crsbench_lib.scoring.retest`: the target ranking scored one seed at a
time (:func:`~crsbench_lib.scoring.retest.seedwise_scores`) against the same
LoDO standard, two seeds compared (test-retest), and, as the like-for-like
partner, the predictor on seed ``s`` against the target on seed ``t != s``
(each carries one seed's noise, as a test-retest pair does).
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Mapping, Sequence

import numpy as np
import pandas as pd

from crsbench_lib.errors import SchemaError
from crsbench_lib.results.validated import ValidatedResults, as_validated
from crsbench_lib.scoring.axes import encoder_profiles, standard_axes
from crsbench_lib.scoring.crs import score_profiles
from crsbench_lib.scoring.lodo import BASELINE, lodo_standard
from crsbench_lib.scoring.rank_statistics import kendall_tau_b, kendall_tau_b_test
from crsbench_lib.scoring.retest import (
    ACROSS_MEASURES_OTHER_SEED,
    ACROSS_MEASURES_SAME_SEED,
    NOISE_BASELINE_COLUMNS,
    WITHIN_MEASURE,
    noise_baseline_table,
    retest_summary,
    seedwise_scores,
)
from crsbench_lib.standard import AXES, ReferenceStandard, check_ece_bins

#: What is predicted and what predicts it: the CRS and the AUROC.
NEW_DOMAIN_MEASURES: tuple[str, ...] = ("crs", BASELINE)
#: The column of :func:`~crsbench_lib.scoring.crs.score_profiles` behind each measure, one seed at a time.
_SEEDWISE_COLUMN: dict[str, str] = {"crs": "crs", BASELINE: "D"}
#: Columns of :func:`new_domain_membership`.
MEMBERSHIP_COLUMNS: tuple[str, ...] = ("held_out", "domain", "encoder", "seen", "new")
#: Columns of :func:`new_domain_retest`.
RETEST_PAIR_COLUMNS: tuple[str, ...] = ("held_out", "comparison", "predictor", "target", "seed_a", "seed_b",
                                        "kendall_tau", "n_encoders")


def tau_resolution(n_encoders: int) -> float:
    """How far one swapped pair moves Kendall's tau-b among ``n`` untied encoders: ``2 / C(n, 2)``.

    Parameters
    ----------
    n_encoders : int
        Encoders ranked.

    Returns
    -------
    float
        ``2 / (n (n - 1) / 2)``; NaN below two encoders (no pair).

    Examples
    --------
    >>> tau_resolution(4)
    0.3333333333333333
    >>> tau_resolution(1)
    nan
    """
    pairs = int(n_encoders) * (int(n_encoders) - 1) // 2
    return 2.0 / pairs if pairs >= 1 else float("nan")


def seen_domains_from_pools(
    pools: Mapping[str, str | None],
    pool_domains: Mapping[str, Collection[str] | None],
    every_domain: Collection[str],
) -> dict[str, frozenset[str]]:
    """The domains each encoder's pretraining or fitting saw, from the pool it was built on.

    Parameters
    ----------
    pools : mapping of str to str or None
        Encoder -> the name of the pool its weights were pretrained or fitted
        on; None when nothing was fitted on images (a fixed descriptor, a
        random initialisation).
    pool_domains : mapping of str to collection of str or None
        Pool name -> the domains it draws from; None: every domain.
    every_domain : collection of str
        The domains a pool with ``None`` stands for.

    Returns
    -------
    dict of str to frozenset of str
        Encoder -> the domains it saw (empty: none).

    Raises
    ------
    SchemaError
        If an encoder's pool is not in ``pool_domains``.

    Examples
    --------
    >>> seen = seen_domains_from_pools({"a": "broad", "b": "derm", "c": None},
    ...                                {"broad": None, "derm": ("derm",)}, ("derm", "cxr"))
    >>> {k: sorted(v) for k, v in seen.items()}
    {'a': ['cxr', 'derm'], 'b': ['derm'], 'c': []}
    """
    out: dict[str, frozenset[str]] = {}
    for encoder, pool in pools.items():
        if pool is None:
            out[str(encoder)] = frozenset()
            continue
        if pool not in pool_domains:
            raise SchemaError(f"encoder {encoder!r}: pool {pool!r} is not among the known pools "
                              f"({', '.join(sorted(map(str, pool_domains)))})")
        domains = pool_domains[pool]
        out[str(encoder)] = frozenset(map(str, every_domain if domains is None else domains))
    return out


def _check_seen(seen_domains: Mapping[str, Collection[str]], encoders: Sequence[str]) -> None:
    missing = sorted(set(map(str, encoders)) - set(map(str, seen_domains)))
    if missing:
        raise SchemaError(f"seen domains: encoder {missing[0]!r} is missing from the mapping"
                          + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""))


def new_domain_encoders(seen_domains: Mapping[str, Collection[str]], encoders: Sequence[str], domain: str) -> list[str]:
    """The encoders whose pretraining never saw ``domain``, sorted by name.

    Parameters
    ----------
    seen_domains : mapping of str to collection of str
        Encoder -> the domains it saw (:func:`seen_domains_from_pools`).
    encoders : sequence of str
        The encoders to choose from; each must be in ``seen_domains``.
    domain : str
        The held-out dataset's domain.

    Returns
    -------
    list of str

    Raises
    ------
    SchemaError
        If an encoder is missing from ``seen_domains`` (the message names it).

    Examples
    --------
    >>> new_domain_encoders({"a": {"derm", "cxr"}, "b": {"cxr"}, "c": set()}, ["a", "b", "c"], "derm")
    ['b', 'c']
    """
    _check_seen(seen_domains, encoders)
    return sorted(str(e) for e in encoders if domain not in seen_domains[str(e)])


def _domains(datasets: Sequence[str], domain_of: Mapping[str, str] | None) -> dict[str, str]:
    if domain_of is None:
        return {d: d for d in datasets}
    missing = [d for d in datasets if d not in domain_of]
    if missing:
        raise SchemaError(f"domain_of: dataset {missing[0]!r} has no domain")
    return {d: str(domain_of[d]) for d in datasets}


def _check_raw(raw: pd.DataFrame, what: str = "raw axes table") -> pd.DataFrame:
    missing = [c for c in ("encoder", "dataset", "seed", *AXES) if c not in raw.columns]
    if missing:
        raise SchemaError(f"{what}: missing column(s) {', '.join(repr(m) for m in missing)}")
    return raw.astype({"encoder": object, "dataset": object})


def new_domain_membership(
    encoders: Sequence[str],
    datasets: Sequence[str],
    seen_domains: Mapping[str, Collection[str]],
    domain_of: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Which encoders each held-out dataset's domain is new to, and what each encoder saw.

    Parameters
    ----------
    encoders, datasets : sequence of str
    seen_domains : mapping of str to collection of str
        Encoder -> the domains it saw.
    domain_of : mapping of str to str, optional
        Dataset -> its domain (default: each dataset is its own domain).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`MEMBERSHIP_COLUMNS`: one row per (held-out dataset,
        encoder), ``seen`` the encoder's domains joined by ", " (``"none"``),
        ``new`` whether the held-out domain is absent from them.

    Raises
    ------
    SchemaError
        If an encoder is missing from ``seen_domains`` or a dataset from ``domain_of``.

    Examples
    --------
    >>> table = new_domain_membership(["a", "b"], ["derm"], {"a": {"derm"}, "b": set()})
    >>> table[["encoder", "seen", "new"]].to_dict("records")
    [{'encoder': 'a', 'seen': 'derm', 'new': False}, {'encoder': 'b', 'seen': 'none', 'new': True}]
    """
    names = sorted(map(str, encoders))
    _check_seen(seen_domains, names)
    domains = _domains(sorted(map(str, datasets)), domain_of)
    rows = [(d, domain, e, ", ".join(sorted(seen_domains[e])) or "none", domain not in seen_domains[e])
            for d, domain in domains.items() for e in names]
    return pd.DataFrame(rows, columns=list(MEMBERSHIP_COLUMNS))


def _crs(profiles: pd.DataFrame, standard: ReferenceStandard) -> pd.Series:
    scored = score_profiles(profiles, standard)
    return pd.Series(scored["crs"].to_numpy(dtype=float), index=scored["encoder"].astype(str).to_numpy())


def _defined(raw: pd.DataFrame) -> list[str]:
    """Encoders with every axis measured on at least one row (their profile is defined)."""
    finite = raw.groupby("encoder")[list(AXES)].agg(lambda v: bool(np.isfinite(v.to_numpy(dtype=float)).any()))
    return sorted(str(e) for e in finite.index[finite.all(axis=1)])


def new_domain_predictions(
    raw: pd.DataFrame,
    standard: ReferenceStandard,
    seen_domains: Mapping[str, Collection[str]],
    domain_of: Mapping[str, str] | None = None,
    panel_raw: pd.DataFrame | None = None,
    references: Sequence[str] = (),
) -> pd.DataFrame:
    """Predictors from the other datasets and targets on the held-out one, for encoders new to its domain.

    Parameters
    ----------
    raw : pandas.DataFrame
        Raw axes per (encoder, dataset, seed) (``axes.standard_axes``).
    standard : ReferenceStandard
        Its panel is refrozen without each held-out dataset
        (:func:`~crsbench_lib.scoring.lodo.lodo_standard`); anchors and weights kept.
    seen_domains : mapping of str to collection of str
        Encoder -> the domains its pretraining saw; every encoder of ``raw`` must be in it.
    domain_of : mapping of str to str, optional
        Dataset -> domain (default: each dataset is its own domain).
    panel_raw : pandas.DataFrame, optional
        Raw axes of the standard's own arm (default ``raw``).
    references : sequence of str
        Reference encoders: in the refrozen panel where they are members, never
        ranked (and not needed in ``seen_domains``).

    Returns
    -------
    pandas.DataFrame
        One row per (held-out dataset, new-domain encoder whose profile on it
        is defined): ``held_out, domain, encoder``, the predictors ``crs``
        (CRS without ``d`` against the LoDO standard) and ``auroc`` (AUROC
        without ``d``), the targets ``target_crs`` (the single-dataset profile
        on ``d`` against the same LoDO standard) and ``target_auroc`` (AUROC on
        ``d``, mean over seeds), and ``panel_size``.

    Raises
    ------
    SchemaError
        If a column is missing, an encoder is missing from ``seen_domains``,
        fewer than two datasets exist, or no panel member is an encoder of the table.
    """
    table = _check_raw(raw)
    panel_table = table if panel_raw is None else _check_raw(panel_raw, "panel raw axes table")
    excluded = {str(name) for name in references}
    encoders = sorted(set(table["encoder"].astype(str).unique()) - excluded)
    _check_seen(seen_domains, encoders)
    datasets = sorted(table["dataset"].astype(str).unique())
    if len(datasets) < 2:
        raise SchemaError(f"leave-one-dataset-out needs at least 2 datasets, found {len(datasets)}")
    domains = _domains(datasets, domain_of)
    blocks: list[pd.DataFrame] = []
    for held_out, domain in domains.items():
        here = table[table["dataset"] == held_out]
        new = [e for e in new_domain_encoders(seen_domains, encoders, domain) if e in set(_defined(here))]
        refrozen = lodo_standard(standard, encoder_profiles(panel_table[panel_table["dataset"] != held_out]), held_out)
        if not new:
            continue
        reduced = encoder_profiles(table[(table["dataset"] != held_out) & table["encoder"].isin(new)])
        single = encoder_profiles(here[here["encoder"].isin(new)])
        shared = sorted(set(reduced.index) & set(single.index))
        blocks.append(pd.DataFrame({
            "held_out": held_out,
            "domain": domain,
            "encoder": shared,
            "crs": _crs(reduced.loc[shared], refrozen).reindex(shared).to_numpy(dtype=float),
            BASELINE: reduced.loc[shared, "D"].to_numpy(dtype=float),
            "target_crs": _crs(single.loc[shared], refrozen).reindex(shared).to_numpy(dtype=float),
            "target_auroc": single.loc[shared, "D"].to_numpy(dtype=float),
            "panel_size": len(refrozen.panel_names),
        }))
    columns = ["held_out", "domain", "encoder", "crs", BASELINE, "target_crs", "target_auroc", "panel_size"]
    return pd.concat(blocks, ignore_index=True)[columns] if blocks else pd.DataFrame(columns=columns)


def new_domain_taus(predictions: pd.DataFrame) -> pd.DataFrame:
    """Kendall tau-b of each predictor with each target, per held-out dataset.

    Parameters
    ----------
    predictions : pandas.DataFrame
        Output of :func:`new_domain_predictions`.

    Returns
    -------
    pandas.DataFrame
        One row per (held-out dataset, target, predictor): ``held_out,
        domain, target, predictor, kendall_tau, p_value, n_encoders,
        tau_resolution`` (:func:`tau_resolution`). ``kendall_tau`` is NaN
        where a predictor or target is constant or fewer than two encoders
        are new to the domain.

    Examples
    --------
    >>> frame = pd.DataFrame({"held_out": "d", "domain": "d", "encoder": list("abc"), "crs": [1.0, 2, 3],
    ...                       "auroc": [3.0, 2, 1], "target_crs": [1.0, 2, 3], "target_auroc": [1.0, 3, 2]})
    >>> taus = new_domain_taus(frame)
    >>> taus["kendall_tau"].round(3).tolist(), taus["tau_resolution"].round(3).tolist()[0]
    ([1.0, -1.0, 0.333, -0.333], 0.667)
    """
    missing = [c for c in ("held_out", "domain", "encoder", *NEW_DOMAIN_MEASURES,
                           *(f"target_{m}" for m in NEW_DOMAIN_MEASURES)) if c not in predictions.columns]
    if missing:
        raise SchemaError(f"new-domain predictions: missing column(s) {', '.join(repr(m) for m in missing)}")
    rows = []
    for (held_out, domain), block in predictions.groupby(["held_out", "domain"], sort=True):
        for target in NEW_DOMAIN_MEASURES:
            y = block[f"target_{target}"].to_numpy(dtype=float)
            for predictor in NEW_DOMAIN_MEASURES:
                tau, p_value = kendall_tau_b_test(block[predictor].to_numpy(dtype=float), y)
                rows.append((held_out, domain, target, predictor, tau, p_value, len(block), tau_resolution(len(block))))
    return pd.DataFrame(rows, columns=["held_out", "domain", "target", "predictor", "kendall_tau", "p_value",
                                       "n_encoders", "tau_resolution"])


def _seed_tau(a: pd.Series, b: pd.Series) -> tuple[float, int]:
    shared = sorted(set(a.index) & set(b.index))
    tau = kendall_tau_b(a[shared].to_numpy(dtype=float), b[shared].to_numpy(dtype=float))
    return tau, len(shared)


def new_domain_retest(
    results: pd.DataFrame | ValidatedResults,
    standard: ReferenceStandard,
    seen_domains: Mapping[str, Collection[str]],
    arm: str = "frozen",
    domain_of: Mapping[str, str] | None = None,
    references: Sequence[str] = (),
) -> pd.DataFrame:
    """Test-retest of each held-out target ranking, and the one-seed LoDO taus beside it.

    For every held-out dataset ``d`` and the encoders new to its domain (with
    a defined profile on ``d``), each measure (:data:`NEW_DOMAIN_MEASURES`) is
    scored one seed at a time
    (:func:`~crsbench_lib.scoring.retest.seedwise_scores`) against the LoDO
    standard of ``d``: on ``d`` alone (the target) and on the other datasets
    (the predictor). AUROC is read as ``D`` of the scoring, AUROC on the
    standard's anchors, which orders encoders as AUROC does unless an AUROC
    falls outside the anchors.

    Rows: the target on two seeds (:data:`~crsbench_lib.scoring.retest.WITHIN_MEASURE`,
    ``predictor`` empty): the ranking's own reproducibility, which bounds
    what any predictor can reach; each predictor on seed ``s`` against each
    target on seed ``t`` (:data:`~crsbench_lib.scoring.retest.ACROSS_MEASURES_OTHER_SEED`
    when ``s != t``, the like-for-like partner of the test-retest pairs, and
    :data:`~crsbench_lib.scoring.retest.ACROSS_MEASURES_SAME_SEED` when
    ``s == t``, which shares the split and so sits higher).

    Parameters
    ----------
    results : pandas.DataFrame or ValidatedResults
    standard : ReferenceStandard
    seen_domains : mapping of str to collection of str
        Encoder -> the domains it saw; every encoder of the arm must be in it.
    arm : {"frozen", "lora"}
    domain_of : mapping of str to str, optional
        Dataset -> domain (default: each dataset is its own domain).
    references : sequence of str
        Reference encoders: in the refrozen panel where they are members, never
        ranked (and not needed in ``seen_domains``).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`RETEST_PAIR_COLUMNS`; no rows for a held-out dataset
        with fewer than two encoders new to its domain.

    Raises
    ------
    SchemaError
        If an encoder is missing from ``seen_domains``, or as
        :func:`~crsbench_lib.scoring.retest.seedwise_scores`.
    """
    table = as_validated(results)
    check_ece_bins(table.frame, standard, arm)
    raw = _check_raw(standard_axes(table, standard, arm=arm))
    panel_raw = raw if standard.arm == arm else _check_raw(standard_axes(table, standard, arm=standard.arm))
    excluded = {str(name) for name in references}
    encoders = sorted(set(raw["encoder"].astype(str).unique()) - excluded)
    _check_seen(seen_domains, encoders)
    domains = _domains(sorted(raw["dataset"].astype(str).unique()), domain_of)
    frame = table.frame
    rows: list[tuple] = []
    for held_out, domain in domains.items():
        here = raw[raw["dataset"] == held_out]
        new = [e for e in new_domain_encoders(seen_domains, encoders, domain) if e in set(_defined(here))]
        if len(new) < 2:
            continue
        refrozen = lodo_standard(standard, encoder_profiles(panel_raw[panel_raw["dataset"] != held_out]), held_out)
        inside = as_validated(frame[frame["dataset"].astype(str) == held_out])
        outside = as_validated(frame[frame["dataset"].astype(str) != held_out])
        target = {m: seedwise_scores(inside, refrozen, arm, new, score=_SEEDWISE_COLUMN[m])
                  for m in NEW_DOMAIN_MEASURES}
        predictor = {m: seedwise_scores(outside, refrozen, arm, new, score=_SEEDWISE_COLUMN[m])
                     for m in NEW_DOMAIN_MEASURES}
        for t in NEW_DOMAIN_MEASURES:
            for s_a, s_b in itertools.combinations(sorted(target[t]), 2):
                rows.append((held_out, WITHIN_MEASURE, "", t, s_a, s_b, *_seed_tau(target[t][s_a], target[t][s_b])))
            for p in NEW_DOMAIN_MEASURES:
                for s_a in sorted(predictor[p]):
                    for s_b in sorted(target[t]):
                        kind = ACROSS_MEASURES_SAME_SEED if s_a == s_b else ACROSS_MEASURES_OTHER_SEED
                        rows.append((held_out, kind, p, t, s_a, s_b, *_seed_tau(predictor[p][s_a], target[t][s_b])))
    return pd.DataFrame(rows, columns=list(RETEST_PAIR_COLUMNS))


def new_domain_summary(taus: pd.DataFrame, retest: pd.DataFrame) -> pd.DataFrame:
    """Each LoDO tau beside the test-retest tau of its target and the one-seed LoDO tau.

    Parameters
    ----------
    taus : pandas.DataFrame
        Output of :func:`new_domain_taus`.
    retest : pandas.DataFrame
        Output of :func:`new_domain_retest`.

    Returns
    -------
    pandas.DataFrame
        The rows of ``taus`` with, from
        :func:`~crsbench_lib.scoring.retest.retest_summary`: ``retest_tau``,
        ``retest_min``, ``retest_max``, ``retest_pairs`` (the target on two
        seeds) and ``one_seed_tau``, ``one_seed_min``, ``one_seed_max``,
        ``one_seed_pairs`` (predictor and target on different seeds). NaN and
        0 pairs where the run has a single seed.

    Examples
    --------
    >>> taus = pd.DataFrame({"held_out": ["d"], "domain": ["d"], "target": ["crs"], "predictor": ["auroc"],
    ...                      "kendall_tau": [0.5], "n_encoders": [4], "tau_resolution": [1 / 3]})
    >>> retest = pd.DataFrame({"held_out": "d", "comparison": [WITHIN_MEASURE, ACROSS_MEASURES_OTHER_SEED],
    ...                        "predictor": ["", "auroc"], "target": "crs", "seed_a": [0, 0], "seed_b": [1, 1],
    ...                        "kendall_tau": [0.6, 0.4], "n_encoders": 4})
    >>> new_domain_summary(taus, retest)[["retest_tau", "one_seed_tau", "retest_pairs"]].to_dict("records")
    [{'retest_tau': 0.6, 'one_seed_tau': 0.4, 'retest_pairs': 1}]
    """
    extra = {"retest": (WITHIN_MEASURE, False), "one_seed": (ACROSS_MEASURES_OTHER_SEED, True)}
    out = taus.copy()
    for prefix in extra:
        out[[f"{prefix}_tau", f"{prefix}_min", f"{prefix}_max"]] = np.nan
        out[f"{prefix}_pairs"] = 0
    for i, row in out.iterrows():
        for prefix, (kind, by_predictor) in extra.items():
            pairs = retest[(retest["held_out"] == row["held_out"]) & (retest["target"] == row["target"])
                           & (retest["comparison"] == kind)]
            if by_predictor:
                pairs = pairs[pairs["predictor"] == row["predictor"]]
            summary = retest_summary(pairs.assign(arm_a=row["target"], arm_b=row["target"]))
            if summary.empty:
                continue
            first = summary.iloc[0]
            out.loc[i, [f"{prefix}_tau", f"{prefix}_min", f"{prefix}_max"]] = (
                float(first["mean_tau"]), float(first["min_tau"]), float(first["max_tau"]))
            out.loc[i, f"{prefix}_pairs"] = int(first["n_pairs"])
    return out


_MEASURE_NAME: dict[str, str] = {"crs": "CRS", BASELINE: "AUROC"}


def held_out_noise_table(
    taus: pd.DataFrame, retest: pd.DataFrame, bootstrap: pd.DataFrame, target: str = BASELINE,
    interval: float = 0.95,
) -> pd.DataFrame:
    """Each held-out tau beside both noise baselines of its target ranking, one block per held-out dataset.

    Per held-out dataset ``d``, :func:`~crsbench_lib.scoring.retest.noise_baseline_table`
    of: each predictor's tau with the target on ``d`` (rankings averaged over
    seeds, :func:`new_domain_taus`); the same on one-seed rankings of
    different seeds; the target ranking's seed-redraw taus (two seeds of it,
    :func:`new_domain_retest`); and its bootstrap-draw taus (two independent
    draws of it, :func:`~crsbench_lib.scoring.lodo.held_out_bootstrap_taus`).
    Only the AUROC target has a bootstrap baseline (the bootstrap gives the
    held-out AUROC; the held-out CRS against the refrozen standard is not
    resampled), so the default and the book ask it of AUROC.

    Parameters
    ----------
    taus : pandas.DataFrame
        :func:`new_domain_taus` output.
    retest : pandas.DataFrame
        :func:`new_domain_retest` output.
    bootstrap : pandas.DataFrame
        :func:`~crsbench_lib.scoring.lodo.held_out_bootstrap_taus` output (``held_out``, ``kendall_tau``).
    target : str
        The target measure (:data:`NEW_DOMAIN_MEASURES`).
    interval : float
        Coverage of the bootstrap rows' range.

    Returns
    -------
    pandas.DataFrame
        ``held_out`` then the columns of
        :data:`~crsbench_lib.scoring.retest.NOISE_BASELINE_COLUMNS`, datasets in sorted order.

    Examples
    --------
    >>> taus = pd.DataFrame({"held_out": "d", "target": "auroc", "predictor": ["crs", "auroc"], "kendall_tau": [0.5, 0.7]})
    >>> retest = pd.DataFrame({"held_out": "d", "comparison": [WITHIN_MEASURE, ACROSS_MEASURES_OTHER_SEED],
    ...                        "predictor": ["", "crs"], "target": "auroc", "kendall_tau": [0.8, 0.4]})
    >>> boot = pd.DataFrame({"held_out": "d", "kendall_tau": [0.8, 0.9, 0.85]})
    >>> held_out_noise_table(taus, retest, boot)[["source", "tau"]].values.tolist()[-2:]
    [['seed redraw', 0.8], ['bootstrap draw', 0.85]]
    """
    if target not in NEW_DOMAIN_MEASURES:
        raise SchemaError(f"held-out noise table: target {target!r} is not one of {list(NEW_DOMAIN_MEASURES)}")
    name = _MEASURE_NAME[target]
    frames = []
    for held_out in sorted(taus["held_out"].astype(str).unique()):
        rows = taus[(taus["held_out"].astype(str) == held_out) & (taus["target"] == target)]
        pairs = retest[(retest["held_out"].astype(str) == held_out) & (retest["target"] == target)]
        label = {p: f"{_MEASURE_NAME[p]} without {held_out} against {name} on {held_out}" for p in NEW_DOMAIN_MEASURES}
        ranking = f"the {name} ranking on {held_out}"
        table = noise_baseline_table(
            {label[p]: float(t) for p, t in zip(rows["predictor"], rows["kendall_tau"]) if np.isfinite(t)},
            {ranking: pairs.loc[pairs["comparison"] == WITHIN_MEASURE, "kendall_tau"]},
            {ranking: bootstrap.loc[bootstrap["held_out"].astype(str) == held_out, "kendall_tau"]},
            one_seed={label[p]: pairs.loc[(pairs["comparison"] == ACROSS_MEASURES_OTHER_SEED)
                                          & (pairs["predictor"] == p), "kendall_tau"] for p in NEW_DOMAIN_MEASURES},
            interval=interval)
        frames.append(table.assign(held_out=held_out)[["held_out", *NOISE_BASELINE_COLUMNS]])
    if not frames:
        return pd.DataFrame(columns=["held_out", *NOISE_BASELINE_COLUMNS])
    return pd.concat(frames, ignore_index=True)
