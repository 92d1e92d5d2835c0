"""Small summaries of the results table that only the book draws.

The CRS itself reduces label efficiency and calibration to one number per
encoder; the four-axes chapter shows the curves behind those numbers, and the
leading-tier chapter the full distribution of bootstrap ranks. These helpers
compute them (pure pandas/numpy; the scoring layer computes every reported
statistic).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from crsbench_lib.scoring.rank_statistics import descending_ranks

from crsbench_lib.errors import SchemaError
# Who is ranked has one home, the roles module; the chapters read it through here as before.
from crsbench_lib.report.roles import REFERENCE_FAMILIES, is_reference_family, reference_encoders  # noqa: F401
from crsbench_lib.results.validated import as_validated
from crsbench_lib.results.select import clean_rows
from crsbench_lib.scoring.axes import CELL, label_retention


def _arm_rows(results: pd.DataFrame, arm: str) -> pd.DataFrame:
    table = as_validated(results).frame
    rows = table[(table["arm"] == arm) & (table["calibration"] == "none")]
    if rows.empty:
        raise SchemaError(f"results table has no uncalibrated rows for arm {arm!r}")
    return rows.astype({"encoder": object, "dataset": object, "condition": object, "corruption": object})


def label_efficiency_curves(results: pd.DataFrame, arm: str = "frozen") -> pd.DataFrame:
    """AUROC retention per encoder and label fraction.

    ``retention_f = AUROC_f / AUROC_1.0`` per (encoder, dataset, seed), averaged
    over seeds and then datasets, like the label-efficiency axis ``L`` (whose
    value is the mean of these retentions over the fractions below 1).

    Returns
    -------
    pandas.DataFrame
        ``encoder, label_fraction, retention, auroc`` including fraction 1.0
        (retention 1), sorted by encoder and fraction.
    """
    rows = _arm_rows(results, arm)
    clean = clean_rows(rows).set_index(CELL)["auroc"]
    fractions = rows[rows["condition"] == "label_fraction"]
    if fractions.empty:
        raise SchemaError(f"results table has no label-fraction rows for arm {arm!r}")
    frame = fractions[CELL + ["label_fraction", "auroc"]].copy()
    frame["retention"] = label_retention(frame, clean)
    full = clean.reset_index().assign(label_fraction=1.0, retention=1.0)
    frame = pd.concat([frame, full[frame.columns]], ignore_index=True)
    per_dataset = frame.groupby(["encoder", "dataset", "label_fraction"])[["retention", "auroc"]].mean()
    curves = per_dataset.groupby(level=["encoder", "label_fraction"]).mean().reset_index()
    return curves.sort_values(["encoder", "label_fraction"], kind="mergesort").reset_index(drop=True)


def condition_labels(rows: pd.DataFrame) -> pd.Series:
    """A readable label per row: "clean", "labels 25%", "corruption s3", "shift (site B)"."""
    labels = pd.Series("clean", index=rows.index, dtype=object)
    lf = rows["condition"] == "label_fraction"
    labels[lf] = [f"labels {100 * f:g}%" for f in rows.loc[lf, "label_fraction"]]
    corr = rows["condition"] == "corruption"
    labels[corr] = [f"corruption s{int(s)}" for s in rows.loc[corr, "severity"]]
    labels[rows["condition"] == "shift"] = "shift (site B)"
    labels[rows["condition"] == "cue_removed"] = "cue removed"
    return labels


def ece_by_condition(results: pd.DataFrame, arm: str = "frozen") -> pd.DataFrame:
    """Mean ECE per encoder and condition (seeds, then datasets, averaged; corruptions pooled per severity).

    Returns
    -------
    pandas.DataFrame
        ``encoder, condition, ece, auroc`` (and ``ece_floor``, the ECE of a
        perfectly calibrated probe on as many test images, where the results
        carry it) with conditions ordered clean, decreasing label fractions,
        increasing severities, shift.
    """
    rows = _arm_rows(results, arm).copy()
    rows["label"] = condition_labels(rows)
    # The floor is drawn under each condition: a corruption block of 125 images has a larger one than clean's 2,000.
    columns = ["ece", "auroc", "ece_floor"] if "ece_floor" in rows else ["ece", "auroc"]
    per_dataset = rows.groupby(["encoder", "dataset", "label"])[columns].mean()
    table = per_dataset.groupby(level=["encoder", "label"]).mean().reset_index().rename(columns={"label": "condition"})
    order: list[str] = ["clean"]
    order += [f"labels {100 * f:g}%" for f in sorted(rows.loc[rows["condition"] == "label_fraction", "label_fraction"].unique(), reverse=True)]
    order += [f"corruption s{int(s)}" for s in sorted(rows.loc[rows["condition"] == "corruption", "severity"].unique())]
    order += ["shift (site B)"] if (rows["condition"] == "shift").any() else []
    order += ["cue removed"] if (rows["condition"] == "cue_removed").any() else []
    table["condition"] = pd.Categorical(table["condition"], categories=order, ordered=True)
    table = table.sort_values(["encoder", "condition"], kind="mergesort").reset_index(drop=True)
    table["condition"] = table["condition"].astype(str)
    return table


def rank_probabilities(crs_draws: np.ndarray, encoders: Sequence[str], order: Sequence[str] | None = None) -> pd.DataFrame:
    """P(rank = r) per encoder from bootstrap CRS draws.

    Parameters
    ----------
    crs_draws : numpy.ndarray
        Shape (n_draws, n_encoders): the CRS of each encoder in each draw.
    encoders : sequence of str
        Column names of ``crs_draws``.
    order : sequence of str, optional
        Row order (default: by mean rank, best first).

    Returns
    -------
    pandas.DataFrame
        Index encoder, columns 1..n; rank 1 = highest CRS, ties share the best
        rank (so a row can sum to 1 while a column sums to more than 1).
    """
    draws = np.asarray(crs_draws, dtype=float)
    names = [str(e) for e in encoders]
    if draws.ndim != 2 or draws.shape[1] != len(names):
        raise ValueError(f"crs_draws must have shape (n_draws, {len(names)}), got {draws.shape}")
    ranks = descending_ranks(draws, ties="min", axis=1)
    n = len(names)
    counts = np.stack([(ranks == r).mean(axis=0) for r in range(1, n + 1)], axis=1)
    table = pd.DataFrame(counts, index=pd.Index(names, name="encoder"), columns=range(1, n + 1))
    if order is None:
        mean_rank = ranks.mean(axis=0)
        order = [names[i] for i in np.lexsort((np.array(names), mean_rank))]
    return table.loc[list(order)]


def dataset_overview(results: pd.DataFrame) -> pd.DataFrame:
    """One row per dataset of a run: domain, task, test size, and what the grid covers.

    Returns
    -------
    pandas.DataFrame
        ``dataset, domain, task, test images, encoders, seeds, corruptions,
        site B`` (test images: the largest clean ``n_test``; corruptions: the
        number of corruption families; site B: whether a shift condition
        exists), sorted by dataset.
    """
    table = as_validated(results).frame
    rows = []
    for name, group in table.groupby("dataset", sort=True, observed=True):
        clean = group.loc[group["condition"] == "clean", "n_test"]
        rows.append({
            "dataset": str(name),
            "domain": str(group["domain"].iloc[0]),
            "task": str(group["task"].iloc[0]),
            "test images": int(clean.max()) if not clean.empty else 0,
            "encoders": int(group["encoder"].nunique()),
            "seeds": int(group["seed"].nunique()),
            "corruptions": int(group.loc[group["condition"] == "corruption", "corruption"].nunique()),
            "site B": bool((group["condition"] == "shift").any()),
        })
    return pd.DataFrame(rows)


#: The column of :func:`dataset_overview` that marks a dataset with a second site.
SITE_COLUMN = "site B"


def shown_overview(overview: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """:func:`dataset_overview` as the cohort chapter shows it, with its caption.

    The second-site column is shown only when some dataset has a second site:
    on data with one site per dataset (a user's MedMNIST files, say) a column
    of "no" would name a site B that does not exist.

    Parameters
    ----------
    overview : pandas.DataFrame
        :func:`dataset_overview`.

    Returns
    -------
    table : pandas.DataFrame
        The overview, without :data:`SITE_COLUMN` when no dataset has a second site.
    caption : str

    Examples
    --------
    >>> overview = pd.DataFrame({"dataset": ["derm", "cxr"], "test images": [15, 15], "site B": [False, False]})
    >>> table, caption = shown_overview(overview)
    >>> list(table.columns), caption
    (['dataset', 'test images'], 'The datasets of this run: none has a second site, so robustness has no shift term')
    >>> shown_overview(overview.assign(**{"site B": [False, True]}))[1]
    'The datasets of this run: those marked site B carry the shift term of robustness'
    """
    if SITE_COLUMN in overview.columns and overview[SITE_COLUMN].astype(bool).any():
        return overview, f"The datasets of this run: those marked {SITE_COLUMN} carry the shift term of robustness"
    return (overview.drop(columns=[SITE_COLUMN], errors="ignore"),
            "The datasets of this run: none has a second site, so robustness has no shift term")


def insertion_bars(fixed: pd.DataFrame, renormalised: pd.DataFrame) -> pd.DataFrame:
    """Absolute CRS change of each published entry under both schemes, aligned by entry.

    Parameters
    ----------
    fixed, renormalised : pandas.DataFrame
        ``entry_id, candidate, crs_displacement`` per published entry (the
        registry's ``displacement`` and ``renormalised`` tables).

    Returns
    -------
    pandas.DataFrame
        ``encoder, fixed, cohort`` in the order of ``fixed`` (the input of
        :func:`crsbench_lib.report.plots.contrasts.insertion_displacement`).

    Raises
    ------
    SchemaError
        If an entry of ``fixed`` is missing from ``renormalised``.
    """
    cohort = renormalised.set_index("entry_id")["crs_displacement"]
    missing = sorted(set(fixed["entry_id"]) - set(cohort.index))
    if missing:
        raise SchemaError(f"insertion_bars: entry {missing[0]!r} has no renormalised displacement")
    return pd.DataFrame({
        "encoder": fixed["candidate"].astype(str).to_numpy(),
        "fixed": fixed["crs_displacement"].abs().to_numpy(dtype=float),
        "cohort": cohort.loc[fixed["entry_id"]].abs().to_numpy(dtype=float),
    })


UNTRAINED_MARKERS: tuple[str, ...] = ("random initialisation", "raw pixels")


def untrained_encoders(zoo: pd.DataFrame | Sequence[dict]) -> list[str]:
    """Encoders that learned nothing: random initialisation or raw pixels.

    Parameters
    ----------
    zoo : pandas.DataFrame
        ``name, description`` per encoder (the encoder registry's
        ``crsbench_lib.encoders.zoo.describe_encoders()``, which the chapter passes in: the report layer
        does not import the encoders).

    Returns
    -------
    list of str
        Names whose description names one of :data:`UNTRAINED_MARKERS`; a gate
        that advances one of them is too lax for its cohort.
    """
    zoo = pd.DataFrame(zoo)
    if not {"name", "description"} <= set(zoo.columns):
        raise SchemaError("untrained_encoders: the zoo table needs columns 'name' and 'description'")
    text = zoo["description"].astype(str).str.lower()
    mask = text.apply(lambda d: any(marker in d for marker in UNTRAINED_MARKERS))
    return zoo.loc[mask, "name"].astype(str).tolist()


def candidate_rank_labels(scores: pd.DataFrame, references: Sequence[str], column: str = "crs") -> pd.Series:
    """Rank among the candidates only (1 = highest ``column``); a reference gets "–" (it is never ranked).

    Every page ranks candidates the same way: a reference encoder (classical
    features, a random network, the in-task reference: :mod:`crsbench_lib.report.roles`)
    is shown beside them but takes no rank, so that the candidates' ranks agree
    from page to page.

    Examples
    --------
    >>> scores = pd.DataFrame({"encoder": ["a", "ref", "b"], "crs": [0.5, 0.9, 0.7]})
    >>> candidate_rank_labels(scores, ["ref"]).tolist()
    ['2', '–', '1']
    """
    is_reference = scores["encoder"].astype(str).isin(set(references))
    candidates = scores.loc[~is_reference, column]
    ranks = pd.Series(descending_ranks(candidates.to_numpy(float), ties="min").astype(str), index=candidates.index)
    return ranks.reindex(scores.index).fillna("–").rename("rank")


def zoo_table(zoo: pd.DataFrame | Sequence[dict], results: pd.DataFrame,
              families: Mapping[str, str] | None = None) -> pd.DataFrame:
    """The encoder zoo with what this run holds of it: ``name, family, in this run, LoRA arm`` (and ``role``).

    Parameters
    ----------
    zoo : pandas.DataFrame
        ``name, family`` per encoder (``crsbench_lib.encoders.zoo.describe_encoders()``).
    results : pandas.DataFrame
        The run's results table.
    families : mapping of str to str, optional
        Encoder -> study family key (``crsbench_lib.encoders.zoo.zoo_families()``);
        given, a ``role`` column says which encoders are candidates and which
        are references (:mod:`crsbench_lib.report.roles`): the list the other
        chapters point to instead of naming every reference.

    Examples
    --------
    >>> zoo = [{"name": "hog", "family": "handcrafted"}, {"name": "mae", "family": "neural"}]
    >>> results = pd.DataFrame({"encoder": ["hog", "mae"], "arm": ["frozen", "frozen"]})
    >>> zoo_table(zoo, results, {"hog": "classical", "mae": "mim"})["role"].tolist()
    ['reference', 'candidate']
    """
    zoo = pd.DataFrame(zoo)
    if not {"name", "family"} <= set(zoo.columns):
        raise SchemaError("zoo_table: the zoo table needs columns 'name' and 'family'")
    table = zoo[["name", "family"]].copy()
    if families is not None:
        table["role"] = ["reference" if is_reference_family(families.get(str(name))) else "candidate"
                         for name in table["name"]]
    table["in this run"] = table["name"].isin(set(results["encoder"].astype(str)))
    table["LoRA arm"] = table["name"].isin(set(results.loc[results["arm"] == "lora", "encoder"].astype(str)))
    return table.reset_index(drop=True)


def axis_leaders(profiles: pd.DataFrame) -> dict[str, str]:
    """The best encoder on each raw axis (highest D and L, lowest C and R); ties go to the first name.

    Parameters
    ----------
    profiles : pandas.DataFrame
        Raw profiles, index encoder, columns D, C, L, R.
    """
    from crsbench_lib.standard import AXES, HIGHER_IS_BETTER

    ordered = profiles.sort_index()
    return {axis: str(ordered[axis].idxmax() if HIGHER_IS_BETTER[axis] else ordered[axis].idxmin()) for axis in AXES}


def leading_pair(pairwise: pd.DataFrame, first: str, second: str) -> dict[str, float | bool]:
    """The CRS difference ``first - second`` and its intervals from a bootstrap's pairwise table.

    The table may hold the pair in either order; the sign is flipped to match.

    Returns
    -------
    dict
        ``diff, diff_low, diff_high`` (percentile interval) and, where the
        table has them, ``diff_bias, diff_basic_low, diff_basic_high``
        (basic interval) and ``diff_point_inside``.

    Raises
    ------
    SchemaError
        If the pair is not in the table.

    Examples
    --------
    >>> pairwise = pd.DataFrame({"encoder_a": ["a"], "encoder_b": ["b"], "diff": [0.05], "diff_low": [-0.09],
    ...                          "diff_high": [0.02], "diff_bias": [-0.08], "diff_basic_low": [0.08],
    ...                          "diff_basic_high": [0.19], "diff_point_inside": [False]})
    >>> leading_pair(pairwise, "b", "a")["diff_basic_low"], leading_pair(pairwise, "b", "a")["diff_point_inside"]
    (-0.19, False)
    """
    forward = pairwise[(pairwise["encoder_a"] == first) & (pairwise["encoder_b"] == second)]
    if not forward.empty:
        row = forward.iloc[0]
        out = {"diff": float(row["diff"]), "diff_low": float(row["diff_low"]), "diff_high": float(row["diff_high"])}
        if "diff_basic_low" in row.index:
            out.update(diff_bias=float(row["diff_bias"]), diff_basic_low=float(row["diff_basic_low"]),
                       diff_basic_high=float(row["diff_basic_high"]))
    else:
        backward = pairwise[(pairwise["encoder_a"] == second) & (pairwise["encoder_b"] == first)]
        if backward.empty:
            raise SchemaError(f"leading_pair: no pairwise row for {first!r} and {second!r}")
        row = backward.iloc[0]
        out = {"diff": -float(row["diff"]), "diff_low": -float(row["diff_high"]), "diff_high": -float(row["diff_low"])}
        if "diff_basic_low" in row.index:
            out.update(diff_bias=-float(row["diff_bias"]), diff_basic_low=-float(row["diff_basic_high"]),
                       diff_basic_high=-float(row["diff_basic_low"]))
    if "diff_point_inside" in row.index:
        # Negating draws and point together keeps the point on the same side of the interval.
        out["diff_point_inside"] = bool(row["diff_point_inside"])
    return out


def tier_table(summary: pd.DataFrame, top_k: int, tied: Sequence[str] = ()) -> pd.DataFrame:
    """The leading-tier chapter's table: one row per encoder, references marked, in the summary's order.

    Parameters
    ----------
    summary : pandas.DataFrame
        A bootstrap summary (:func:`crsbench_lib.scoring.two_level_bootstrap.two_level_bootstrap`).
    top_k : int
        The k of its ``p_top{k}`` column.
    tied : sequence of str
        The references the draws cannot separate from the leader
        (:func:`crsbench_lib.scoring.bootstrap.tied_with_leader`); candidates
        are marked from the summary's ``in_tier``, the one tier definition.

    Returns
    -------
    pandas.DataFrame
        encoder (``" (reference)"`` appended for a reference), CRS (point,
        leave-self-out), CRS score table (whole panel), median of draws, bias,
        in the leading tier (candidates), reference not separated from the
        leader, the percentile and basic intervals' ends, point
        inside, P(rank 1), P(top k) (missing for a reference).
    """
    column = f"p_top{top_k}"
    wanted = ["encoder", "role", "crs", "crs_full_panel", "crs_median", "bias", "in_tier", "crs_low", "crs_high",
              "crs_basic_low", "crs_basic_high", "point_inside", "p_rank1", column]
    missing = [c for c in wanted if c not in summary.columns]
    if missing:
        raise SchemaError(f"tier_table: the summary lacks column {missing[0]!r}")
    names = summary["encoder"].astype(str) + np.where(summary["role"] == "reference", " (reference)", "")
    return pd.DataFrame({
        "encoder": names.to_numpy(),
        "CRS": summary["crs"].to_numpy(),
        "CRS score table": summary["crs_full_panel"].to_numpy(),
        "median of draws": summary["crs_median"].to_numpy(),
        "bias": summary["bias"].to_numpy(),
        "in the leading tier": (summary["in_tier"].astype(bool) & (summary["role"] != "reference")).to_numpy(),
        "reference not separated from the leader": (
            (summary["role"] == "reference") & summary["encoder"].astype(str).isin(set(tied))).to_numpy(),
        "percentile low": summary["crs_low"].to_numpy(),
        "percentile high": summary["crs_high"].to_numpy(),
        "basic low": summary["crs_basic_low"].to_numpy(),
        "basic high": summary["crs_basic_high"].to_numpy(),
        "point inside": summary["point_inside"].to_numpy(dtype=bool),
        "P(rank 1)": summary["p_rank1"].to_numpy(dtype=float),
        f"P(top {top_k})": summary[column].to_numpy(dtype=float),
    })


def panel_summary(panel: object, n_panel: int) -> pd.DataFrame:
    """Leave-one-out and random sub-panel perturbations in one table.

    Parameters
    ----------
    panel : PanelPerturbation
        :func:`crsbench_lib.scoring.sensitivity.panel_perturbation` output.
    n_panel : int
        Members of the full panel.

    Returns
    -------
    pandas.DataFrame
        ``scheme, panels, mean_tau, top_k_changed``.
    """
    return pd.DataFrame({
        "scheme": ["leave-one-out", f"random {panel.subset_size} of {n_panel}"],
        "panels": [len(panel.leave_one_out), len(panel.subset_taus)],
        "mean_tau": [panel.mean_tau_leave_one_out, panel.mean_tau_subsets],
        "top_k_changed": [panel.share_changed_leave_one_out, panel.share_changed_subsets],
    })


def choose_newcomers(
    profiles: pd.DataFrame, candidates: Sequence[str] | None, n_candidates: int, exclude: Sequence[str] = ()
) -> list[str]:
    """The encoders an insertion test treats as newcomers.

    Parameters
    ----------
    profiles : pandas.DataFrame
        Raw profiles, index encoder.
    candidates : sequence of str, optional
        Named newcomers; ``None`` takes the ``n_candidates`` with the highest
        clean AUROC ``D`` (the arrivals that disturb a cohort most).
    n_candidates : int
        How many when ``candidates`` is None.
    exclude : sequence of str
        Never chosen by default (references: a model trained on the evaluation
        labels is not a newcomer to a registry of candidates); named
        ``candidates`` are taken as given.

    Raises
    ------
    NotebookError
        On an unknown encoder, or when no encoder would stay behind.
    """
    from crsbench_lib.errors import NotebookError

    eligible = profiles.loc[[name for name in profiles.index if name not in set(exclude)]]
    chosen = list(candidates) if candidates is not None else list(
        eligible["D"].sort_values(ascending=False, kind="mergesort").index[:n_candidates])
    unknown = [c for c in chosen if c not in profiles.index]
    if unknown:
        raise NotebookError(f"parameter 'candidates': unknown encoder {unknown[0]!r}; valid: {', '.join(map(str, profiles.index))}")
    if not chosen or len(set(chosen)) >= len(profiles):
        raise NotebookError(f"parameter 'candidates': choose between 1 and {len(profiles) - 1} encoders, got {len(chosen)}")
    return [str(c) for c in chosen]


def displacement_bars(existing: pd.DataFrame) -> pd.DataFrame:
    """``encoder, fixed, cohort``: the absolute score change of each existing encoder (insertion test)."""
    return pd.DataFrame({
        "encoder": existing["encoder"].astype(str).to_numpy(),
        "fixed": existing["fixed_displacement"].abs().to_numpy(dtype=float),
        "cohort": existing["cohort_displacement"].abs().to_numpy(dtype=float),
    })


def augmentation_effect(pairs: pd.DataFrame, results: pd.DataFrame, arm: str = "frozen") -> pd.DataFrame:
    """What acquisition augmentation buys: clean AUROC and mean corruption AUROC loss of each pair.

    For each encoder the clean AUROC (the ``D`` axis) and the average
    corruption loss (mean over (corruption, severity) of
    ``max(0, AUROC_clean - AUROC_c,s)``, a piece of the ``R`` axis) are taken
    per cell from :func:`crsbench_lib.scoring.axes.raw_axes`, then averaged over
    seeds and then datasets, like the encoder profile.

    Parameters
    ----------
    pairs : pandas.DataFrame
        ``augmented, plain``: pairs of encoders that differ only by acquisition
        augmentation (:func:`crsbench_lib.encoders.cards.augmentation_pairs`).
    results : pandas.DataFrame
        A results table (validated here).
    arm : {"frozen", "lora"}
        Which arm to read.

    Returns
    -------
    pandas.DataFrame
        One row per pair, in the order given: ``augmented, plain, in_results``
        (both encoders are in the table), ``clean_aug, clean_plain,
        corruption_loss_aug, corruption_loss_plain`` and the differences
        ``clean_gain = clean_aug - clean_plain`` and ``loss_change =
        corruption_loss_aug - corruption_loss_plain``, then ``n_datasets``
        (datasets both encoders have), ``clean_higher_in`` and
        ``loss_lower_in`` (on how many of them the augmented encoder has the
        higher clean AUROC, the lower corruption loss). Pairs not in the table
        keep NaN numbers and zero counts; a loss is NaN where the table has no
        corruption rows.

    Raises
    ------
    ValueError
        If ``pairs`` lacks the ``augmented`` or ``plain`` column.

    Examples
    --------
    >>> from crsbench_lib.results.synthetic import synthetic_results
    >>> table = synthetic_results(n_encoders=3, seeds=(0,))
    >>> pairs = pd.DataFrame({"augmented": ["enc00", "x"], "plain": ["enc01", "y"]})
    >>> augmentation_effect(pairs, table)["in_results"].tolist()
    [True, False]
    """
    from crsbench_lib.scoring.axes import raw_axes

    missing = [c for c in ("augmented", "plain") if c not in pairs.columns]
    if missing:
        raise ValueError(f"augmentation_effect: pairs lack column(s) {', '.join(missing)}")
    raw = raw_axes(results, arm=arm)
    per_dataset = raw.groupby(["encoder", "dataset"])[["D", "avg_corruption_loss"]].mean()
    per_encoder = per_dataset.groupby(level="encoder").mean()
    out = pd.DataFrame({"augmented": pairs["augmented"].astype(str).to_numpy(),
                        "plain": pairs["plain"].astype(str).to_numpy()})
    out["in_results"] = out["augmented"].isin(per_encoder.index) & out["plain"].isin(per_encoder.index)
    for side in ("aug", "plain"):
        found = per_encoder.reindex(out["augmented" if side == "aug" else "plain"])
        out[f"clean_{side}"] = found["D"].to_numpy(dtype=float)
        out[f"corruption_loss_{side}"] = found["avg_corruption_loss"].to_numpy(dtype=float)
    # A pair half in the table is still absent: its numbers would compare nothing.
    numbers = ["clean_aug", "clean_plain", "corruption_loss_aug", "corruption_loss_plain"]
    out.loc[~out["in_results"], numbers] = np.nan
    out["clean_gain"] = out["clean_aug"] - out["clean_plain"]
    out["loss_change"] = out["corruption_loss_aug"] - out["corruption_loss_plain"]
    # How consistent the difference is: on how many datasets the augmented encoder is the better one.
    wide = per_dataset.unstack("dataset")
    counts = []
    for aug, plain, present in zip(out["augmented"], out["plain"], out["in_results"]):
        if not present:
            counts.append((0, 0, 0))
            continue
        clean = wide["D"].loc[aug] - wide["D"].loc[plain]
        loss = wide["avg_corruption_loss"].loc[aug] - wide["avg_corruption_loss"].loc[plain]
        shared = clean.notna()
        counts.append((int(shared.sum()), int((clean[shared] > 0).sum()), int((loss[shared] < 0).sum())))
    out[["n_datasets", "clean_higher_in", "loss_lower_in"]] = pd.DataFrame(counts, index=out.index)
    return out
