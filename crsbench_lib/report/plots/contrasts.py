"""Figures of two conditions side by side: before and after a change, and the study beside this build.

Before and after a post-hoc calibrator (:func:`calibration_before_after`),
acquisition augmentation (:func:`augmentation_effect`) and an insertion
(:func:`insertion_displacement`, :func:`before_after_scatter`); clean against
corrupted (:func:`corruption_overview`); the study's figures beside this
build's (:func:`published_vs_build`); the ranking under the standard's anchors
beside the ranking under anchors taken from this cohort (:func:`anchor_sensitivity_figure`).
"""

from __future__ import annotations

import textwrap

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure

from crsbench_lib.report.plots.canvas import new_figure, placeholder, require_columns
from crsbench_lib.report.style import (
    DIVERGING_CMAP,
    EMPHASIS,
    FONT_SIZE,
    HIGHLIGHT,
    MUTED,
    OKABE_ITO,
    SEQUENTIAL_CMAP,
    apply_style,
    figure_size,
)
from crsbench_lib.scoring.published import PUBLISHED, PublishedFigures


def calibration_before_after(summary: pd.DataFrame) -> Figure:
    """ECE before and after each post-hoc calibrator, and the AUROC change.

    Parameters
    ----------
    summary : pandas.DataFrame
        ``dataset, calibration, ece_before, ece_after, relative_ece_reduction,
        auroc_change`` (``calibration_ablation.calibration_summary``), and
        optionally ``ece_floor``: the mean ECE floor of each row's
        uncalibrated probes, drawn as a grey bar from 0 under the row.

    Returns
    -------
    matplotlib.figure.Figure
        Left, ECE before and after per row (with the floor when given); right,
        the mean AUROC change in a neutral colour (the left panel's two colours
        mean "before" and "after", not a sign).
    """
    require_columns(summary, ("dataset", "calibration", "ece_before", "ece_after", "auroc_change"), "calibration_before_after")
    fig, axes = new_figure(height_ratio=0.5, ncols=2, width_ratios=[3, 2], sharey=True)
    labels = [f"{d} / {c}" for d, c in zip(summary["dataset"], summary["calibration"], strict=True)]
    y = np.arange(len(summary))
    before = summary["ece_before"].to_numpy(dtype=float)
    after = summary["ece_after"].to_numpy(dtype=float)
    ax = axes[0]
    if "ece_floor" in summary.columns:
        # The ECE a perfectly calibrated probe shows on this test set: a drop is read against it (the caption asks
        # the reader to), so it is drawn, not left to another chapter.
        ax.barh(y, summary["ece_floor"].to_numpy(dtype=float), height=0.55, color="#E3E3E3", zorder=1,
                label="ECE floor (uncalibrated)")
    ax.hlines(y, after, before, color=MUTED, lw=2)
    ax.scatter(before, y, color=HIGHLIGHT, label="uncalibrated", zorder=3)
    ax.scatter(after, y, color=EMPHASIS, label="after calibrator", zorder=3)
    # The signed change of ECE (a rise reads "+8%", never "--8%"), right of both markers so it hides neither.
    for yi, b, a in zip(y, before, after, strict=True):
        if np.isfinite(b) and np.isfinite(a) and b != 0:
            ax.text(max(a, b), yi, f"   {100 * (a - b) / b:+.0f}%", va="center", fontsize=8)
    ax.set_yticks(y, labels)
    ax.invert_yaxis()
    ax.set_xlabel("mean ECE (test split)")
    ax.set_xlim(0, float(np.nanmax(np.r_[before, after])) * 1.3)  # room for the signed change right of the dots
    # Above both panels, in room the layout keeps for it: inside a panel it would cover a row.
    fig.legend(*ax.get_legend_handles_labels(), loc="outside upper center", ncol=3)
    bx = axes[1]
    change = summary["auroc_change"].to_numpy(dtype=float)
    bx.barh(y, change, color=OKABE_ITO[4])  # one colour: the bar's side of 0 gives the sign
    bx.axvline(0, color="black", lw=0.8)
    bound = max(0.01, float(np.max(np.abs(change))) * 1.3)
    bx.set_xlim(-bound, bound)
    bx.set_xlabel("mean AUROC change")
    return fig


def loss_colour_scale(values: np.ndarray) -> dict[str, object]:
    """The colour scale of a heat map of losses, fitted to its values (``sns.heatmap`` keywords).

    Sequential from 0 to the largest value when no value is negative (a
    diverging scale would spend half its colours on losses nobody has; the
    darker, the larger the loss); diverging and centred on 0 only when a value
    is negative (a gain), running from the smallest value to the largest (not
    symmetric: the colours of a sign stop where its values do).

    Examples
    --------
    >>> scale = loss_colour_scale(np.array([0.003, 0.08, np.nan]))
    >>> scale["vmin"], scale["vmax"], "center" in scale
    (0.0, 0.08, False)
    >>> scale = loss_colour_scale(np.array([-0.01, 0.08]))
    >>> scale["vmin"], scale["vmax"], scale["center"]
    (-0.01, 0.08, 0.0)
    """
    finite = np.asarray(values, dtype=float)
    finite = finite[np.isfinite(finite)]
    low = float(finite.min()) if finite.size else 0.0
    high = float(finite.max()) if finite.size else 1.0
    if low >= 0:
        return {"cmap": f"{SEQUENTIAL_CMAP}_r", "vmin": 0.0, "vmax": high if high > 0 else 1.0}
    return {"cmap": DIVERGING_CMAP, "center": 0.0, "vmin": low, "vmax": max(high, 0.0)}


def corruption_overview(cells: pd.DataFrame, r: float | None = None, ci: tuple[float, float] | None = None) -> Figure:
    """Heat map of the mean AUROC loss per (corruption, dataset) and the loss-vs-ECE scatter.

    Parameters
    ----------
    cells : pandas.DataFrame
        ``dataset, corruption, mean_auroc_loss, mean_ece_increase``
        (``corruption_cells.corruption_cells``).
    r, ci : float and (float, float), optional
        Pearson r and its interval, printed on the scatter.

    Returns
    -------
    matplotlib.figure.Figure
        Left, the heat map: one row per corruption, one column per dataset, each
        cell printed with three decimals (blank where the corruption is not
        applied to that dataset), on the colour scale of :func:`loss_colour_scale`
        (the darker, the larger the loss); right, one point per cell. The
        figure grows with the number of corruptions so every row stays legible.
    """
    require_columns(cells, ("dataset", "corruption", "mean_auroc_loss", "mean_ece_increase"), "corruption_overview")
    # Corruptions as rows: their names read horizontally and a cell is as wide as a printed number, however
    # many corruptions a run has (as columns, 16 of them left 0.2 inch a cell and overprinted every number).
    grid = cells.pivot(index="corruption", columns="dataset", values="mean_auroc_loss")
    n_rows, n_cols = grid.shape
    fig, axes = new_figure(height_ratio=max(0.5, 0.16 + 0.04 * n_rows), ncols=2,
                           width_ratios=[2.2 + 0.45 * n_cols, 4.0])
    sns.heatmap(grid, ax=axes[0], **loss_colour_scale(grid.to_numpy(dtype=float)), annot=True, fmt=".3f",
                annot_kws={"fontsize": FONT_SIZE - 1}, linewidths=0.4, linecolor="white",
                # The colour bar under the map, not beside it, where its label met the scatter's y label.
                cbar_kws={"label": "mean AUROC loss", "location": "bottom", "shrink": 0.8, "pad": 0.02, "aspect": 30})
    axes[0].set_xlabel("")
    axes[0].set_ylabel("")
    # A few datasets fit side by side; more are slanted so neighbouring names never touch.
    axes[0].tick_params(axis="x", rotation=0 if n_cols <= 4 else 45, length=0)
    axes[0].tick_params(axis="y", rotation=0, length=0)
    axes[0].set_title("mean AUROC loss per cell\n(blank: not applied)", fontsize=8.5)
    ax = axes[1]
    datasets = sorted(cells["dataset"].astype(str).unique())
    for i, dataset in enumerate(datasets):
        part = cells[cells["dataset"].astype(str) == dataset]
        ax.scatter(part["mean_auroc_loss"], part["mean_ece_increase"], color=OKABE_ITO[i % len(OKABE_ITO)],
                   label=dataset, s=26, zorder=3)
    x = cells["mean_auroc_loss"].to_numpy(dtype=float)
    y = cells["mean_ece_increase"].to_numpy(dtype=float)
    if np.ptp(x) > 0:
        slope, intercept = np.polyfit(x, y, 1)
        xs = np.linspace(x.min(), x.max(), 2)
        ax.plot(xs, intercept + slope * xs, color="black", lw=1, ls="--", zorder=2)
    if r is not None:
        text = f"r = {r:.2f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci is not None else "") + f"\n{len(cells)} cells"
        ax.text(0.03, 0.97, text, transform=ax.transAxes, va="top", fontsize=8)
    ax.set_xlabel("mean AUROC loss")
    ax.set_ylabel("mean ECE increase")
    ax.set_title("one point per cell", fontsize=8.5)
    ax.legend(loc="lower right")
    return fig


def augmentation_effect(effect: pd.DataFrame) -> Figure:
    """Clean AUROC and mean corruption AUROC loss of each aug/noaug pair, without and with augmentation.

    Parameters
    ----------
    effect : pandas.DataFrame
        :func:`crsbench_lib.report.summaries.augmentation_effect`; pairs with
        ``in_results`` False are left out (the chapter says so in words).

    Returns
    -------
    matplotlib.figure.Figure
        Two panels sharing the pair axis: one arrow per pair from the plain to
        the augmented encoder; a placeholder when no pair is in the table.
    """
    require_columns(effect, ("augmented", "plain", "in_results", "clean_aug", "clean_plain",
                             "corruption_loss_aug", "corruption_loss_plain"), "augmentation_effect")
    shown = effect[effect["in_results"].astype(bool)].reset_index(drop=True)
    if shown.empty:
        return placeholder("no aug/noaug pair in this results table")
    fig, axes = new_figure(height_ratio=0.22 + 0.1 * len(shown), ncols=2, sharey=True)
    y = np.arange(len(shown))
    panels = (("clean", "clean AUROC\n(higher is better)"), ("corruption_loss", "mean corruption AUROC loss\n(lower is better)"))
    for ax, (stem, label) in zip(axes, panels, strict=True):
        before = shown[f"{stem}_plain"].to_numpy(dtype=float)
        after = shown[f"{stem}_aug"].to_numpy(dtype=float)
        for yi, b, a in zip(y, before, after, strict=True):
            if np.isfinite(b) and np.isfinite(a):
                ax.annotate("", xy=(a, yi), xytext=(b, yi), arrowprops={"arrowstyle": "->", "color": MUTED})
        ax.scatter(before, y, color=MUTED, zorder=3, label="without acquisition augmentation")
        ax.scatter(after, y, color=HIGHLIGHT, zorder=3, label="with acquisition augmentation")
        ax.set_xlabel(label)
        ax.margins(x=0.25, y=0.4)
    axes[0].set_yticks(y, [f"{a}\nvs {p}" for a, p in zip(shown["augmented"], shown["plain"], strict=True)])
    axes[0].invert_yaxis()
    axes[1].legend(loc="best", fontsize=7)
    return fig


def insertion_displacement(table: pd.DataFrame) -> Figure:
    """Score change of existing encoders when candidates are inserted, fixed vs cohort-renormalised.

    Parameters
    ----------
    table : pandas.DataFrame
        ``encoder, fixed, cohort``: the absolute change of each existing
        encoder's score under each scheme.

    Returns
    -------
    matplotlib.figure.Figure
    """
    require_columns(table, ("encoder", "fixed", "cohort"), "insertion_displacement")
    fig, (ax,) = new_figure(height_ratio=0.5)
    y = np.arange(len(table))
    # Fixed first: the legend then lists the schemes in the order their bars stand in each pair (top to bottom).
    ax.barh(y - 0.2, table["fixed"].to_numpy(dtype=float), height=0.4, color=EMPHASIS, label="fixed reference")
    ax.barh(y + 0.2, table["cohort"].to_numpy(dtype=float), height=0.4, color=HIGHLIGHT, label="cohort-renormalised")
    for yi, value in zip(y, table["fixed"].to_numpy(dtype=float), strict=True):
        if value == 0:
            ax.text(0, yi - 0.2, " 0", va="center", fontsize=7, color=EMPHASIS)
    ax.set_yticks(y, table["encoder"].astype(str))
    ax.invert_yaxis()
    ax.set_xlabel("|change of an existing encoder's score| after insertion")
    # Above the panel, never inside it: any corner of the panel may hold a long bar.
    ax.legend(loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=2, borderaxespad=0.2)
    return fig


def before_after_scatter(fixed: pd.DataFrame, renormalised: pd.DataFrame) -> Figure:
    """Every published score before vs after an insertion, under the fixed reference and under renormalisation.

    On the diagonal means unmoved. The registry chapter draws it from
    :func:`crsbench_lib.registry.insertion.register_then_insert`'s
    ``displacement`` and ``renormalised`` tables.

    Parameters
    ----------
    fixed, renormalised : pandas.DataFrame
        ``crs_before, crs_after`` per published entry, under each scheme.

    Returns
    -------
    matplotlib.figure.Figure
    """
    for table, what in ((fixed, "fixed"), (renormalised, "renormalised")):
        require_columns(table, ("crs_before", "crs_after"), f"before_after_scatter ({what})")
    apply_style()
    fig, panels = plt.subplots(1, 2, figsize=figure_size(0.45), sharex=True, sharey=True)
    for ax, (title, table, colour) in zip(
        panels,
        [("fixed reference (the registry)", fixed, EMPHASIS), ("cohort-renormalised (for contrast)", renormalised, HIGHLIGHT)],
        strict=True,
    ):
        low = min(table["crs_before"].min(), table["crs_after"].min())
        high = max(table["crs_before"].max(), table["crs_after"].max())
        ax.plot([low, high], [low, high], color=MUTED, linewidth=0.8, zorder=0)
        ax.scatter(table["crs_before"], table["crs_after"], color=colour, s=22)
        ax.set_title(title)
        ax.set_xlabel("CRS before the insertion")
    panels[0].set_ylabel("CRS after the insertion")
    fig.suptitle("Every published entry, before vs after: on the diagonal means unmoved")
    return fig


#: Rows of the comparison that count what was measured (the inputs of the analysis), not results: never drawn.
INPUT_QUANTITIES: frozenset[str] = frozenset({"encoders", "pairs", "corruption cells"})
#: Counts drawn as a share of the row that counts their whole, under a new name (a count on its own has no scale).
SHARE_OF: dict[str, tuple[str, str]] = {"reversed pairs": ("pairs", "reversed pairs (share of pairs)")}
#: The count of weight draws whose top 3 changed, drawn as a share of the draws when both sides' draws are known.
TOP3_CHANGES = "weight draws: top-3 changes"
#: Rows measured in another unit than the common scale (ranks, not a share or a correlation): left to the table.
OTHER_UNITS: dict[str, str] = {"mean |rank displacement|": "in ranks"}
#: The common scale of the dot plot: rank correlations, shares, probabilities and CRS all lie in it.
COMMON_SCALE: tuple[float, float] = (-1.0, 1.0)


def comparable_rows(table: pd.DataFrame, n_draws: int | None = None,
                    figures: PublishedFigures = PUBLISHED) -> tuple[pd.DataFrame, list[str]]:
    """The rows of a published comparison that are results on one common scale, and why each other row is not.

    Geometry of the figure only: a count becomes a share of its whole (the
    reversed pairs of the pairs; the weight draws that changed the top 3 of the
    draws, when ``n_draws`` gives this build's draws), so that every drawn value
    lies on :data:`COMMON_SCALE`; nothing else is computed.

    Parameters
    ----------
    table : pandas.DataFrame
        ``quantity, study, this_build`` (:func:`crsbench_lib.report.comparison.published_comparison`),
        optionally ``build_low, build_high``: an interval of this build's value.
    n_draws : int, optional
        This build's weight draws (the study's are ``figures.weight_perturbations``).
    figures : PublishedFigures
        The study's figures.

    Returns
    -------
    (pandas.DataFrame, list of str)
        ``quantity, study, this_build, build_low, build_high`` (floats; the
        interval NaN where the table carries none), in the table's order; and
        one phrase per row left out, saying why (an input, another unit,
        nothing to compare).

    Examples
    --------
    >>> table = pd.DataFrame({"quantity": ["encoders", "reversed pairs", "pairs", "top CRS"],
    ...                       "study": [15, 21, 105, 0.703], "this_build": [19, 8, 171, 0.688]})
    >>> drawn, left_out = comparable_rows(table)
    >>> list(drawn["quantity"]), [round(v, 3) for v in drawn["study"]], left_out
    (['reversed pairs (share of pairs)', 'top CRS'], [0.2, 0.703], ['encoders, pairs (inputs)'])
    """
    require_columns(table, ("quantity", "study", "this_build"), "published_vs_build")
    by_name = {str(q): row for q, (_, row) in zip(table["quantity"], table.iterrows(), strict=True)}
    rows, inputs, reasons = [], [], []
    for name, row in by_name.items():
        study, build = float(row["study"]), float(row["this_build"])
        low = float(row["build_low"]) if "build_low" in table.columns else np.nan
        high = float(row["build_high"]) if "build_high" in table.columns else np.nan
        if name in INPUT_QUANTITIES:
            inputs.append(name)
            continue
        if name in OTHER_UNITS:
            reasons.append(f"{name} ({OTHER_UNITS[name]})")
            continue
        if name in SHARE_OF:
            whole, label = SHARE_OF[name]
            if whole not in by_name:
                reasons.append(f"{name} (no count of {whole})")
                continue
            study_whole, build_whole = float(by_name[whole]["study"]), float(by_name[whole]["this_build"])
            study, build = study / study_whole, build / build_whole
            low, high = low / build_whole, high / build_whole
            name = label
        elif name == TOP3_CHANGES:
            if n_draws is None:
                reasons.append(f"{name} (a count of draws)")
                continue
            study, build = study / figures.weight_perturbations, build / n_draws
            low, high = low / n_draws, high / n_draws
            name = f"{name} (share of draws)"
        if not (np.isfinite(study) and np.isfinite(build)):
            reasons.append(f"{name} (no value {'in this build' if np.isfinite(study) else 'from the study'})")
            continue
        if not all(COMMON_SCALE[0] <= v <= COMMON_SCALE[1] for v in (study, build)):
            reasons.append(f"{name} (off the common scale)")
            continue
        rows.append({"quantity": name, "study": study, "this_build": build, "build_low": low, "build_high": high})
    if inputs:
        reasons.insert(0, f"{', '.join(inputs)} (input{'' if len(inputs) == 1 else 's'})")
    drawn = pd.DataFrame(rows, columns=["quantity", "study", "this_build", "build_low", "build_high"])
    return drawn, reasons


def published_vs_build(table: pd.DataFrame, n_draws: int | None = None,
                       figures: PublishedFigures = PUBLISHED) -> Figure:
    """The study's reported results beside this build's, as one dot plot on one shared axis.

    Parameters
    ----------
    table : pandas.DataFrame
        ``quantity, study, this_build`` (numbers; NaN where a side has none),
        optionally ``build_low, build_high`` (this build's interval, drawn where
        finite).
    n_draws : int, optional
        This build's weight draws: with it, the draws that changed the top 3
        are drawn as a share of the draws.
    figures : PublishedFigures
        The study's figures (its number of weight draws).

    Returns
    -------
    matplotlib.figure.Figure
        One row per comparable result (:func:`comparable_rows`): the study's
        value as an open diamond, this build's as a filled dot (with its
        interval when given), a grey line between them, all on one axis that
        runs from the smaller of 0 and the data to 1. Inputs (counts of
        encoders, pairs, cells), rows in other units and rows with one side
        missing are not drawn; the x label names them.
    """
    drawn, left_out = comparable_rows(table, n_draws=n_draws, figures=figures)
    if drawn.empty:
        return placeholder("no result of the study has a comparable value in this build")
    fig, (ax,) = new_figure(height_ratio=0.14 + 0.052 * len(drawn))
    y = np.arange(len(drawn))
    study = drawn["study"].to_numpy(dtype=float)
    build = drawn["this_build"].to_numpy(dtype=float)
    # A grey line between the two values: its length is the gap the differences chapter explains.
    ax.hlines(y, np.minimum(study, build), np.maximum(study, build), color=MUTED, lw=1.5, zorder=1)
    low, high = drawn["build_low"].to_numpy(dtype=float), drawn["build_high"].to_numpy(dtype=float)
    has = np.isfinite(low) & np.isfinite(high)
    if has.any():
        ax.errorbar(build[has], y[has], xerr=np.vstack([build[has] - low[has], high[has] - build[has]]), fmt="none",
                    ecolor=EMPHASIS, elinewidth=1.2, capsize=3, zorder=2, label="this build's interval")
    ax.scatter(study, y, marker="D", s=64, facecolor="white", edgecolor=OKABE_ITO[1], lw=1.8, zorder=3,
               label="the study (as reported)")
    ax.scatter(build, y, marker="o", s=46, color=EMPHASIS, zorder=4, label="this build")
    ax.set_yticks(y, [textwrap.fill(str(q), 34) for q in drawn["quantity"]])
    ax.invert_yaxis()
    # One honest axis for every row: from 0 (or below, when a value is negative) to 1, never zoomed to the data.
    values = np.concatenate([study, build, low[has], high[has]])
    left = min(0.0, float(np.floor(np.nanmin(values) * 4) / 4))
    ax.set_xlim(left - 0.02, 1.02)
    ax.xaxis.grid(True, color="#E6E6E6", lw=0.8, zorder=0)
    ax.set_axisbelow(True)
    label = "value (rank correlations, shares, probabilities and CRS share one scale)"
    if left_out:
        label += "\n" + textwrap.fill("Not drawn (the comparison table has them): " + "; ".join(left_out) + ".", 72)
    ax.set_xlabel(label)
    fig.legend(*ax.get_legend_handles_labels(), loc="outside upper center", ncol=3)
    return fig


def anchor_sensitivity_figure(anchors: pd.DataFrame, top_k: int = 3) -> Figure:
    """How far the CRS ranking moves when an axis's anchors come from this cohort: τ_b and the top set kept.

    Parameters
    ----------
    anchors : pandas.DataFrame
        :func:`crsbench_lib.report.differences.anchor_sensitivity`: ``anchors_from_cohort``,
        ``tau_to_standard``, ``top_k_overlap``.
    top_k : int
        The size of the top set the overlap counts.

    Returns
    -------
    matplotlib.figure.Figure
        Two panels sharing one row per choice of anchors. Left, a stem from
        the dashed line at τ_b 1 (the standard's ranking unchanged) to the
        choice's Kendall τ_b with that ranking, labelled with it, on an axis
        from the smaller of 0 and the data to 1, so a τ_b of 0.9 reads as the
        small move it is. Right, how many of the top ``top_k`` the choice
        keeps, on an axis from 0 to ``top_k``. A choice that moves nothing is
        grey.
    """
    require_columns(anchors, ("anchors_from_cohort", "tau_to_standard", "top_k_overlap"), "anchor_sensitivity_figure")
    if anchors.empty:
        return placeholder("no anchor sensitivity in this build")
    labels = [str(a) for a in anchors["anchors_from_cohort"]]
    taus = anchors["tau_to_standard"].to_numpy(dtype=float)
    kept = anchors["top_k_overlap"].to_numpy(dtype=float)
    fig, (ax, bx) = new_figure(height_ratio=0.14 + 0.06 * len(labels), ncols=2, sharey=True, width_ratios=[3, 1.3])
    y = np.arange(len(labels))[::-1]
    moved = np.where(np.isfinite(taus), taus < 1.0 - 1e-12, False) | (kept < top_k)
    colours = [EMPHASIS if m else MUTED for m in moved]
    # A stem from the unchanged ranking (τ_b 1) to each choice's τ_b: its length is how far those anchors move it.
    ax.hlines(y, taus, 1.0, colors=colours, lw=2.5)
    ax.scatter(taus, y, c=colours, s=36, zorder=3)
    ax.axvline(1.0, color=HIGHLIGHT, ls="--", lw=1)
    # τ_b lives in [-1, 1]; the axis starts at 0 (or lower, for a ranking turned over), never at the data.
    left = min(0.0, float(np.floor(np.nanmin(taus) * 4) / 4)) if np.isfinite(taus).any() else 0.0
    ax.set_xlim(left - 0.02, 1.02)
    for yi, tau in zip(y, taus, strict=True):
        if np.isfinite(tau):
            # Left of the dot, inside the axis; right of it only for a dot at the axis's left end.
            inside = tau - left > 0.25 * (1.0 - left)
            ax.text(tau, yi, f"τ_b {tau:.3f}  " if inside else f"  τ_b {tau:.3f}", ha="right" if inside else "left",
                    va="center", fontsize=FONT_SIZE - 0.5)
    ax.set_yticks(y, [f"{label} anchors from this cohort" for label in labels])
    ax.set_xlabel("Kendall τ_b to the ranking under\nthe standard's anchors (1 = unchanged)")
    ax.xaxis.grid(True, color="#E6E6E6", lw=0.8)
    ax.set_axisbelow(True)
    # The top set: the leaders a reader would pick, which τ_b over the whole ranking can hide.
    bx.hlines(y, kept, top_k, colors=colours, lw=2.5)
    bx.scatter(kept, y, c=colours, s=36, zorder=3)
    bx.axvline(top_k, color=HIGHLIGHT, ls="--", lw=1)
    for yi, k in zip(y, kept, strict=True):
        bx.text(k, yi + 0.18, f"{int(k)} of {top_k}", ha="center", va="bottom", fontsize=FONT_SIZE - 0.5)
    bx.set_xlim(-0.3, top_k + 0.3)
    bx.set_xticks(range(top_k + 1))
    bx.set_xlabel(f"of the top {top_k} under\nthe standard, kept")
    bx.tick_params(axis="y", length=0)
    return fig
