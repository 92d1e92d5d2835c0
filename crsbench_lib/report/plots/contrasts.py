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
    HIGHLIGHT,
    MUTED,
    OKABE_ITO,
    apply_style,
    figure_size,
)


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
        applied to that dataset); right, one point per cell. The figure grows
        with the number of corruptions so every row stays legible.
    """
    require_columns(cells, ("dataset", "corruption", "mean_auroc_loss", "mean_ece_increase"), "corruption_overview")
    # Corruptions as rows: their names read horizontally and a cell is as wide as a printed number, however
    # many corruptions a run has (as columns, 16 of them left 0.2 inch a cell and overprinted every number).
    grid = cells.pivot(index="corruption", columns="dataset", values="mean_auroc_loss")
    n_rows, n_cols = grid.shape
    fig, axes = new_figure(height_ratio=max(0.5, 0.16 + 0.04 * n_rows), ncols=2,
                           width_ratios=[2.2 + 0.45 * n_cols, 4.0])
    bound = float(np.nanmax(np.abs(grid.to_numpy()))) or 1.0
    sns.heatmap(grid, ax=axes[0], cmap=DIVERGING_CMAP, center=0, vmin=-bound, vmax=bound, annot=True, fmt=".3f",
                annot_kws={"fontsize": 7}, linewidths=0.4, linecolor="white",
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


def published_vs_build(table: pd.DataFrame) -> Figure:
    """The study's reported figures beside this build's, one small panel per quantity.

    Parameters
    ----------
    table : pandas.DataFrame
        ``quantity, study, this_build`` (numbers; NaN where a side has none).

    Returns
    -------
    matplotlib.figure.Figure
    """
    require_columns(table, ("quantity", "study", "this_build"), "published_vs_build")
    n = len(table)
    ncols = min(4, max(1, n))
    nrows = int(np.ceil(n / ncols))
    apply_style()
    fig, axes = plt.subplots(nrows, ncols, figsize=figure_size(0.36 * nrows + 0.05), squeeze=False)
    for ax, (_, row) in zip(axes.flat, table.iterrows()):
        values = [float(row["study"]), float(row["this_build"])]
        ax.bar([0, 1], np.nan_to_num(values), color=[OKABE_ITO[1], EMPHASIS], width=0.65)
        for xi, v in enumerate(values):
            ax.text(xi, np.nan_to_num(v), "n/a" if np.isnan(v) else f"{v:.3g}", ha="center", va="bottom", fontsize=7)
        ax.set_xticks([0, 1], ["study", "build"])
        ax.set_title(textwrap.fill(str(row["quantity"]), 24), fontsize=7.5)
        ax.set_yticks([])
        ax.spines["left"].set_visible(False)
        top = np.nanmax(np.abs(values)) if np.isfinite(values).any() else 1.0
        ax.set_ylim(min(0, np.nanmin(values) * 1.2 if np.isfinite(values).any() else 0), top * 1.25 or 1)
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    return fig


def anchor_sensitivity_figure(anchors: pd.DataFrame, top_k: int = 3) -> Figure:
    """How far the CRS ranking moves when an axis's anchors come from this cohort: one bar per choice.

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
        One stem per choice of anchors from the dashed line at τ_b 1 (the
        standard's ranking unchanged) to its Kendall τ_b with that ranking, each
        labelled with its τ_b and the top-``top_k`` members it keeps; the
        longest stem is the choice of anchors that decides most of the ranking.
    """
    require_columns(anchors, ("anchors_from_cohort", "tau_to_standard", "top_k_overlap"), "anchor_sensitivity_figure")
    if anchors.empty:
        return placeholder("no anchor sensitivity in this build")
    apply_style()
    labels = [str(a) for a in anchors["anchors_from_cohort"]]
    taus = anchors["tau_to_standard"].to_numpy(dtype=float)
    fig, (ax,) = new_figure(height_ratio=0.12 + 0.06 * len(labels))
    y = np.arange(len(labels))[::-1]
    low = float(np.nanmin(taus)) if np.isfinite(taus).any() else 0.0
    moved = np.where(np.isfinite(taus), taus < 1.0 - 1e-12, False)
    colours = [EMPHASIS if m else MUTED for m in moved]
    # A stem from the unchanged ranking (τ_b 1) to each choice's τ_b: its length is how far those anchors move it.
    ax.hlines(y, taus, 1.0, colors=colours, lw=2.5)
    ax.scatter(taus, y, c=colours, s=36, zorder=3)
    ax.axvline(1.0, color=HIGHLIGHT, ls="--", lw=1)
    for yi, tau, keep in zip(y, taus, anchors["top_k_overlap"]):
        ax.text(1.0, yi, f"  τ_b {tau:.3f}, top {top_k}: {int(keep)} of {top_k} kept", va="center", fontsize=7)
    ax.set_yticks(y, [f"{label} anchors from this cohort" for label in labels])
    span = max(1.0 - low, 0.02)
    ax.set_xlim(low - 0.15 * span, 1.0 + 1.1 * span)
    ax.set_xticks([t for t in ax.get_xticks() if low - 0.15 * span <= t <= 1.0 + 1e-9])
    ax.set_xlabel("Kendall τ_b to the ranking under the standard's anchors (1 = unchanged)")
    return fig
