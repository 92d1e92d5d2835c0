"""The book's figures: tables in, matplotlib Figures out.

Every function takes the tables the scoring layer returns (documented per
function), draws one figure sized for the book's column with the colour-blind
safe palette of :mod:`crsbench_lib.report.style`, and returns the
:class:`matplotlib.figure.Figure` without showing it. No function computes a
statistic the chapter reports; the only arithmetic here is geometry (where two
lines cross, which points lie on a drawn front).
"""

from __future__ import annotations

from collections.abc import Sequence
import textwrap
from itertools import combinations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator

from crsbench_lib.report.style import (
    AXIS_NAMES,
    DIVERGING_CMAP,
    EMPHASIS,
    HIGHLIGHT,
    MUTED,
    OKABE_ITO,
    SEQUENTIAL_CMAP,
    apply_style,
    encoder_colours,
    figure_size,
)
from crsbench_lib.standard import AXES


def _require(table: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise ValueError(f"{what}: missing column(s) {', '.join(repr(m) for m in missing)}")


def _new(height_ratio: float = 0.55, ncols: int = 1, **kwargs: object) -> tuple[Figure, np.ndarray]:
    apply_style()
    fig, axes = plt.subplots(1, ncols, figsize=figure_size(height_ratio), squeeze=False, **kwargs)
    return fig, axes[0]


def crossing_pairs(left: Sequence[float], right: Sequence[float]) -> list[tuple[int, int]]:
    """Index pairs whose order differs between ``left`` and ``right`` (strictly: ties do not cross)."""
    a, b = np.asarray(left, dtype=float), np.asarray(right, dtype=float)
    return [(i, j) for i, j in combinations(range(a.size), 2) if (a[i] - a[j]) * (b[i] - b[j]) < 0]


def _slope_panel(
    ax: plt.Axes,
    names: Sequence[str],
    left: Sequence[float],
    right: Sequence[float],
    labels: tuple[str, str],
    highlight: Sequence[str],
) -> int:
    """Draw a rank-to-rank slope chart on ``ax``; return the number of crossings marked."""
    left_r, right_r = np.asarray(left, dtype=float), np.asarray(right, dtype=float)
    n = len(names)
    marked = set(highlight)
    for i, name in enumerate(names):
        moved = right_r[i] - left_r[i]
        colour = EMPHASIS if moved < 0 else HIGHLIGHT if moved > 0 else MUTED
        width = 2.4 if name in marked else 1.3
        ax.plot([0, 1], [left_r[i], right_r[i]], color=colour, lw=width, alpha=0.9, solid_capstyle="round", zorder=2)
        ax.scatter([0, 1], [left_r[i], right_r[i]], color=colour, s=18, zorder=3)
        weight = "bold" if name in marked else "normal"
        # The rank is written into the label: a tick label beside a long name would collide with it.
        ax.text(-0.04, left_r[i], f"{name}  {left_r[i]:g}", ha="right", va="center", fontsize=8, fontweight=weight)
        ax.text(1.04, right_r[i], f"{right_r[i]:g}  {name}", ha="left", va="center", fontsize=8, fontweight=weight)
    pairs = crossing_pairs(left_r, right_r)
    for i, j in pairs:
        slope_i, slope_j = right_r[i] - left_r[i], right_r[j] - left_r[j]
        t = (left_r[j] - left_r[i]) / (slope_i - slope_j)
        ax.scatter([t], [left_r[i] + t * slope_i], marker="x", color="black", s=22, lw=1.1, zorder=4)
    ax.set_xlim(-0.45, 1.45)
    ax.set_ylim(n + 0.7, 0.3)
    ax.set_xticks([0, 1], [f"{labels[0]}\n(1 = best)", f"{labels[1]}\n(1 = best)"])
    ax.set_yticks([])
    ax.spines[["left", "bottom"]].set_visible(False)
    ax.tick_params(length=0)
    return len(pairs)


def bump_chart(ranks: pd.DataFrame, highlight: Sequence[str] = (), title: str | None = None) -> Figure:
    """AUROC rank against CRS rank, with every reversed pair marked where its lines cross.

    Parameters
    ----------
    ranks : pandas.DataFrame
        ``encoder, rank_auroc, rank_crs`` (e.g. ``agreement.rank_table``).
    highlight : sequence of str
        Encoders drawn thicker and labelled in bold.
    title : str, optional
        Defaults to "<k> of <N> pairs reversed".

    Returns
    -------
    matplotlib.figure.Figure
    """
    _require(ranks, ("encoder", "rank_auroc", "rank_crs"), "bump_chart")
    fig, (ax,) = _new(height_ratio=0.75)
    n = len(ranks)
    k = _slope_panel(ax, list(ranks["encoder"].astype(str)), ranks["rank_auroc"], ranks["rank_crs"],
                     ("AUROC rank", "CRS rank"), highlight)
    ax.set_title(title or f"{k} of {n * (n - 1) // 2} pairs reversed (x marks each crossing)")
    handles = [
        Line2D([], [], color=EMPHASIS, lw=2, label="higher under CRS"),
        Line2D([], [], color=HIGHLIGHT, lw=2, label="lower under CRS"),
        Line2D([], [], color=MUTED, lw=2, label="same rank"),
        Line2D([], [], color="black", marker="x", lw=0, label="reversed pair"),
    ]
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.04), ncol=4)
    return fig


def axis_profiles(
    scores: pd.DataFrame,
    highlight: Sequence[str] = (),
    kind: str = "parallel",
) -> Figure:
    """Normalised axis profiles as parallel coordinates or a radar chart.

    Parameters
    ----------
    scores : pandas.DataFrame
        ``encoder`` and the normalised axes ``s_D, s_C, s_L, s_R`` (e.g.
        ``crs.score_profiles``); 1 is the best anchor on every axis.
    highlight : sequence of str
        Encoders drawn in colour and labelled (the rest in grey); with none,
        every encoder gets a colour.
    kind : {"parallel", "radar"}

    Returns
    -------
    matplotlib.figure.Figure
    """
    cols = [f"s_{a}" for a in AXES]
    _require(scores, ["encoder", *cols], "axis_profiles")
    if kind not in ("parallel", "radar"):
        raise ValueError(f"kind must be 'parallel' or 'radar', got {kind!r}")
    names = list(scores["encoder"].astype(str))
    colours = encoder_colours(names, highlight)
    shown = set(highlight) if highlight else set(names)
    values = scores[cols].to_numpy(dtype=float)
    apply_style()
    if kind == "parallel":
        fig, (ax,) = _new(height_ratio=0.55)
        x = np.arange(len(AXES))
        order = sorted(range(len(names)), key=lambda i: names[i] in shown)  # highlighted on top
        for i in order:
            ax.plot(x, values[i], color=colours[names[i]], lw=2.2 if names[i] in shown else 1.0,
                    marker="o", ms=3.5, zorder=3 if names[i] in shown else 2)
            if names[i] in shown:
                ax.text(x[-1] + 0.06, values[i, -1], names[i], va="center", fontsize=8, color=colours[names[i]])
        ax.set_xticks(x, [f"{AXIS_NAMES[a]}\n(s_{a})" for a in AXES])
        ax.set_xlim(-0.2, len(AXES) - 0.35)
        ax.set_ylim(-0.03, 1.03)
        ax.set_ylabel("normalised score (1 = best anchor)")
        for xi in x:
            ax.axvline(xi, color="#DDDDDD", lw=0.8, zorder=1)
        return fig
    fig = plt.figure(figsize=figure_size(0.75))
    ax = fig.add_subplot(projection="polar")
    angles = np.linspace(0, 2 * np.pi, len(AXES), endpoint=False)
    closed = np.concatenate([angles, angles[:1]])
    for i in sorted(range(len(names)), key=lambda i: names[i] in shown):
        ring = np.concatenate([values[i], values[i][:1]])
        ax.plot(closed, ring, color=colours[names[i]], lw=2 if names[i] in shown else 0.8,
                label=names[i] if names[i] in shown else None)
    ax.set_xticks(angles, [AXIS_NAMES[a] for a in AXES])
    ax.set_ylim(0, 1)
    ax.legend(loc="upper left", bbox_to_anchor=(1.05, 1.0))
    return fig


def pareto_front_mask(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Points not weakly dominated in the (x, y) plane (both larger-is-better)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    dominated = ((x[None, :] >= x[:, None]) & (y[None, :] >= y[:, None])
                 & ((x[None, :] > x[:, None]) | (y[None, :] > y[:, None]))).any(axis=1)
    return ~dominated


def pareto_view(scores: pd.DataFrame, highlight: Sequence[str] = (), versus: str = "s_D") -> Figure:
    """Discrimination against each other normalised axis, with each plane's Pareto front.

    Parameters
    ----------
    scores : pandas.DataFrame
        ``encoder, crs`` and the normalised axes ``s_D, s_C, s_L, s_R``.
    highlight : sequence of str
        Encoders labelled on every panel (default: the three best by CRS).
    versus : str
        The normalised axis on the horizontal of every panel.

    Returns
    -------
    matplotlib.figure.Figure
        Three panels; colour = CRS; the step line joins the encoders no other
        encoder beats on both plotted axes.
    """
    cols = [f"s_{a}" for a in AXES]
    _require(scores, ["encoder", "crs", *cols], "pareto_view")
    if versus not in cols:
        raise ValueError(f"versus must be one of {cols}, got {versus!r}")
    others = [c for c in cols if c != versus]
    fig, axes = _new(height_ratio=0.42, ncols=len(others), sharex=True, sharey=True)
    names = scores["encoder"].astype(str).to_numpy()
    label = set(highlight) if highlight else set(scores.nlargest(3, "crs")["encoder"].astype(str))
    x = scores[versus].to_numpy(dtype=float)
    crs = scores["crs"].to_numpy(dtype=float)
    points = None
    for ax, other in zip(axes, others, strict=True):
        y = scores[other].to_numpy(dtype=float)
        front = pareto_front_mask(x, y)
        order = np.argsort(-x[front])
        fx, fy = x[front][order], y[front][order]
        ax.step(fx, fy, where="post", color=MUTED, lw=1.2, zorder=1)
        points = ax.scatter(x, y, c=crs, cmap=SEQUENTIAL_CMAP, vmin=0, vmax=1, s=34,
                            edgecolor=np.where(front, "black", "none").tolist(), lw=0.9, zorder=2)
        for xi, yi, name in zip(x, y, names, strict=True):
            if name in label:
                ax.annotate(name, (xi, yi), xytext=(3, 3), textcoords="offset points", fontsize=7.5)
        ax.set_xlabel(f"{AXIS_NAMES[versus[2:]]} ({versus})")
        ax.set_title(AXIS_NAMES[other[2:]])
        ax.set_xlim(-0.03, 1.03)
        ax.set_ylim(-0.03, 1.08)
    axes[0].set_ylabel("normalised score")
    fig.colorbar(points, ax=list(axes), label="CRS", shrink=0.85)
    return fig


def rank_probability_heatmap(probabilities: pd.DataFrame, top_k: int | None = 3) -> Figure:
    """P(rank = r) for every encoder (rows, best first) and rank r (columns).

    Parameters
    ----------
    probabilities : pandas.DataFrame
        Index encoder, columns 1..n, rows summing to 1 (e.g.
        :func:`crsbench_lib.report.summaries.rank_probabilities`).
    top_k : int, optional
        Draw a line after rank ``top_k``.

    Returns
    -------
    matplotlib.figure.Figure
    """
    apply_style()
    n = probabilities.shape[1]
    fig, (ax,) = _new(height_ratio=min(1.0, 0.18 + 0.045 * len(probabilities)))
    annotate = probabilities.map(lambda p: "" if p < 0.005 else f"{p:.2f}".lstrip("0") if p < 1 else "1")
    sns.heatmap(probabilities, ax=ax, cmap=SEQUENTIAL_CMAP, vmin=0, vmax=1, annot=annotate, fmt="",
                annot_kws={"fontsize": 7}, cbar_kws={"label": "bootstrap probability", "shrink": 0.8},
                linewidths=0.4, linecolor="white")
    if top_k is not None and 0 < top_k < n:
        ax.axvline(top_k, color=HIGHLIGHT, lw=2)
    ax.set_xlabel("CRS rank in the resampled draw")
    ax.set_ylabel("")
    ax.tick_params(length=0)
    return fig


def sensitivity_distribution(
    weight_taus: np.ndarray,
    panel: pd.DataFrame | None = None,
    reference: tuple[float, float] | None = None,
) -> Figure:
    """Kendall tau of perturbed-weight rankings to the default one, and panel perturbations.

    Parameters
    ----------
    weight_taus : array of float
        One Kendall tau per weight draw.
    panel : pandas.DataFrame, optional
        ``scheme`` (e.g. "leave-one-out", "random subset") and
        ``top_k_changed`` (share of perturbed panels whose top-k set differs
        from the default's), drawn as a second panel.
    reference : (float, float), optional
        A range to shade on the tau axis (the study's reported mean tau).

    Returns
    -------
    matplotlib.figure.Figure
    """
    taus = np.asarray(weight_taus, dtype=float)
    taus = taus[np.isfinite(taus)]
    if taus.size == 0:
        raise ValueError("weight_taus holds no finite value")
    ncols = 2 if panel is not None else 1
    fig, axes = _new(height_ratio=0.42, ncols=ncols, width_ratios=[2, 1] if ncols == 2 else None)
    ax = axes[0]
    low = min(taus.min(), reference[0] if reference else 1.0)
    bins = np.linspace(max(-1.0, low - 0.02), 1.0, 31)
    ax.hist(taus, bins=bins, color=EMPHASIS, alpha=0.85)
    ax.axvline(taus.mean(), color="black", lw=1.5, ls="--", label=f"mean {taus.mean():.3f}")
    if reference is not None:
        ax.axvspan(reference[0], reference[1] + 1e-4, color=OKABE_ITO[1], alpha=0.35, label="study (reported mean)")
    ax.set_xlabel("Kendall tau to the default-weight ranking")
    ax.set_ylabel("weight draws")
    ax.legend(loc="upper left")
    if panel is not None:
        _require(panel, ("scheme", "top_k_changed"), "sensitivity_distribution panel")
        bx = axes[1]
        bx.barh(panel["scheme"].astype(str), panel["top_k_changed"].to_numpy(dtype=float), color=OKABE_ITO[2])
        bx.set_xlim(0, 1)
        bx.set_xlabel("share of panels whose\ntop set changes")
        bx.invert_yaxis()
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
    _require(table, ("encoder", "fixed", "cohort"), "insertion_displacement")
    fig, (ax,) = _new(height_ratio=0.5)
    y = np.arange(len(table))
    ax.barh(y + 0.2, table["cohort"].to_numpy(dtype=float), height=0.4, color=HIGHLIGHT, label="cohort-renormalised")
    ax.barh(y - 0.2, table["fixed"].to_numpy(dtype=float), height=0.4, color=EMPHASIS, label="fixed reference")
    for yi, value in zip(y, table["fixed"].to_numpy(dtype=float), strict=True):
        if value == 0:
            ax.text(0, yi - 0.2, " 0", va="center", fontsize=7, color=EMPHASIS)
    ax.set_yticks(y, table["encoder"].astype(str))
    ax.invert_yaxis()
    ax.set_xlabel("|change of an existing encoder's score| after insertion")
    ax.legend(loc="lower right")
    return fig


def calibration_before_after(summary: pd.DataFrame) -> Figure:
    """ECE before and after each post-hoc calibrator, and the AUROC change.

    Parameters
    ----------
    summary : pandas.DataFrame
        ``dataset, calibration, ece_before, ece_after, relative_ece_reduction,
        auroc_change`` (``calibration_ablation.calibration_summary``).

    Returns
    -------
    matplotlib.figure.Figure
    """
    _require(summary, ("dataset", "calibration", "ece_before", "ece_after", "auroc_change"), "calibration_before_after")
    fig, axes = _new(height_ratio=0.5, ncols=2, width_ratios=[3, 2], sharey=True)
    labels = [f"{d} / {c}" for d, c in zip(summary["dataset"], summary["calibration"], strict=True)]
    y = np.arange(len(summary))
    before = summary["ece_before"].to_numpy(dtype=float)
    after = summary["ece_after"].to_numpy(dtype=float)
    ax = axes[0]
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
    ax.set_xlim(0, float(np.nanmax(np.r_[before, after])) * 1.3)
    ax.legend(loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=2, borderaxespad=0.2)
    bx = axes[1]
    change = summary["auroc_change"].to_numpy(dtype=float)
    bx.barh(y, change, color=[EMPHASIS if c >= 0 else HIGHLIGHT for c in change])
    bx.axvline(0, color="black", lw=0.8)
    bound = max(0.01, float(np.max(np.abs(change))) * 1.3)
    bx.set_xlim(-bound, bound)
    bx.set_xlabel("mean AUROC change")
    return fig


def corruption_overview(cells: pd.DataFrame, r: float | None = None, ci: tuple[float, float] | None = None) -> Figure:
    """Heat map of the mean AUROC loss per (dataset, corruption) and the loss-vs-ECE scatter.

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
    """
    _require(cells, ("dataset", "corruption", "mean_auroc_loss", "mean_ece_increase"), "corruption_overview")
    fig, axes = _new(height_ratio=0.5, ncols=2, width_ratios=[3, 2])
    grid = cells.pivot(index="dataset", columns="corruption", values="mean_auroc_loss")
    bound = float(np.nanmax(np.abs(grid.to_numpy()))) or 1.0
    sns.heatmap(grid, ax=axes[0], cmap=DIVERGING_CMAP, center=0, vmin=-bound, vmax=bound, annot=True, fmt=".3f",
                annot_kws={"fontsize": 6.5}, cbar_kws={"label": "mean AUROC loss", "shrink": 0.8},
                linewidths=0.4, linecolor="white")
    axes[0].set_xlabel("")
    axes[0].set_ylabel("")
    axes[0].tick_params(axis="x", rotation=60, length=0)
    axes[0].tick_params(axis="y", rotation=0, length=0)
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
    ax.legend(loc="lower right")
    return fig


def lodo_comparison(summary: pd.DataFrame) -> Figure:
    """Kendall tau of each reduced-profile predictor against the held-out AUROC ranking.

    Parameters
    ----------
    summary : pandas.DataFrame
        Index held-out dataset (plus "mean"), columns predictors
        (``lodo.lodo_summary``).

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, (ax,) = _new(height_ratio=0.45)
    predictors = list(summary.columns)
    groups = list(summary.index)
    width = 0.8 / max(1, len(predictors))
    x = np.arange(len(groups))
    names = {"crs": "CRS without d", "auroc": "AUROC without d (baseline)", "C": "calibration", "L": "label efficiency",
             "R": "robustness"}
    for j, predictor in enumerate(predictors):
        values = summary[predictor].to_numpy(dtype=float)
        colour = EMPHASIS if predictor == "crs" else OKABE_ITO[1] if predictor == "auroc" else OKABE_ITO[(j + 2) % 8]
        ax.bar(x + (j - (len(predictors) - 1) / 2) * width, np.nan_to_num(values), width=width, color=colour,
               label=names.get(predictor, predictor), alpha=1.0 if predictor in ("crs", "auroc") else 0.55)
    ax.axhline(0, color="black", lw=0.8)
    ax.set_xticks(x, [f"held out: {g}" if g != "mean" else "mean" for g in groups])
    ax.set_ylim(-1, 1)
    ax.set_ylabel("Kendall tau with AUROC on d")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=3)
    return fig


def transfer_comparison(ranks: pd.DataFrame, gains: pd.DataFrame | None = None, highlight: Sequence[str] = ()) -> Figure:
    """Frozen CRS rank against adapted CRS rank, and the AUROC gain of adaptation.

    Parameters
    ----------
    ranks : pandas.DataFrame
        ``encoder, rank_frozen, rank_lora`` (``transfer.rank_comparison``).
    gains : pandas.DataFrame, optional
        ``encoder, auroc_gain`` (``transfer.auroc_gain``).
    highlight : sequence of str

    Returns
    -------
    matplotlib.figure.Figure
    """
    _require(ranks, ("encoder", "rank_frozen", "rank_lora"), "transfer_comparison")
    ncols = 2 if gains is not None else 1
    fig, axes = _new(height_ratio=0.6, ncols=ncols, width_ratios=[3, 2] if ncols == 2 else None)
    k = _slope_panel(axes[0], list(ranks["encoder"].astype(str)), ranks["rank_frozen"], ranks["rank_lora"],
                     ("frozen CRS rank", "LoRA CRS rank"), highlight)
    axes[0].set_title(f"{k} reversed pair{'' if k == 1 else 's'}")
    if gains is not None:
        _require(gains, ("encoder", "auroc_gain"), "transfer_comparison gains")
        order = gains.sort_values("auroc_gain", ascending=True)
        values = order["auroc_gain"].to_numpy(dtype=float)
        axes[1].barh(order["encoder"].astype(str), values, color=[EMPHASIS if v >= 0 else HIGHLIGHT for v in values])
        axes[1].axvline(0, color="black", lw=0.8)
        axes[1].set_xlabel("clean AUROC gain (LoRA - frozen)")
        # The gain panel is narrow and gains have three decimals: few ticks, slanted, so labels never touch.
        axes[1].xaxis.set_major_locator(MaxNLocator(nbins=3))
        axes[1].tick_params(axis="x", labelrotation=40)
        for label in axes[1].get_xticklabels():
            label.set_horizontalalignment("right")
    return fig


def label_efficiency_curves(curves: pd.DataFrame, highlight: Sequence[str] = ()) -> Figure:
    """AUROC retention against the fraction of labels, one line per encoder.

    Parameters
    ----------
    curves : pandas.DataFrame
        ``encoder, label_fraction, retention`` (``summaries.label_efficiency_curves``).
    highlight : sequence of str

    Returns
    -------
    matplotlib.figure.Figure
    """
    _require(curves, ("encoder", "label_fraction", "retention"), "label_efficiency_curves")
    fig, (ax,) = _new(height_ratio=0.55)
    names = sorted(curves["encoder"].astype(str).unique())
    colours = encoder_colours(names, highlight)
    shown = set(highlight) if highlight else set(names)
    for name in sorted(names, key=lambda e: e in shown):
        part = curves[curves["encoder"].astype(str) == name].sort_values("label_fraction")
        ax.plot(part["label_fraction"], part["retention"], color=colours[name], marker="o", ms=3,
                lw=2 if name in shown and highlight else 1.1, label=name if name in shown else None)
    ax.set_xscale("log")
    fractions = sorted(curves["label_fraction"].unique())
    ax.set_xticks(fractions, [f"{100 * f:g}%" for f in fractions])
    ax.minorticks_off()
    ax.set_xlabel("share of train labels")
    ax.set_ylabel("AUROC / AUROC at 100% labels")
    ax.legend(loc="lower right", ncol=2 if len(shown) > 6 else 1)
    return fig


def ece_by_condition(table: pd.DataFrame, highlight: Sequence[str] = ()) -> Figure:
    """Mean ECE per encoder under each condition (clean, label fractions, corruption severities, shift).

    Parameters
    ----------
    table : pandas.DataFrame
        ``encoder, condition, ece`` (``summaries.ece_by_condition``); the
        condition column's order is kept on the horizontal axis.
    highlight : sequence of str

    Returns
    -------
    matplotlib.figure.Figure
    """
    _require(table, ("encoder", "condition", "ece"), "ece_by_condition")
    fig, (ax,) = _new(height_ratio=0.55)
    conditions = list(dict.fromkeys(table["condition"].astype(str)))
    x = {c: i for i, c in enumerate(conditions)}
    names = sorted(table["encoder"].astype(str).unique())
    colours = encoder_colours(names, highlight)
    shown = set(highlight) if highlight else set(names)
    for name in sorted(names, key=lambda e: e in shown):
        part = table[table["encoder"].astype(str) == name]
        ax.plot([x[c] for c in part["condition"].astype(str)], part["ece"], color=colours[name], marker="o", ms=3,
                lw=1.8 if name in shown and highlight else 1.0, label=name if name in shown else None)
    ax.set_xticks(range(len(conditions)), conditions, rotation=35, ha="right")
    ax.set_ylabel("mean ECE")
    ax.set_ylim(bottom=0)
    ax.legend(loc="upper left", ncol=3 if len(shown) > 6 else 1, fontsize=7)
    return fig


def gate_matrix(gate: pd.DataFrame) -> Figure:
    """Pass/fail of every encoder on every gated axis, with its decision.

    Parameters
    ----------
    gate : pandas.DataFrame
        ``selection_gate.selection_gate`` output (``encoder``, ``pass_<axis>``,
        ``decision``, optionally ``p_tier``).

    Returns
    -------
    matplotlib.figure.Figure
    """
    _require(gate, ("encoder", "decision"), "gate_matrix")
    axes_cols = [c for c in (f"pass_{a}" for a in AXES) if c in gate.columns]
    if not axes_cols:
        raise ValueError("gate_matrix: no pass_<axis> column")
    fig, (ax,) = _new(height_ratio=min(1.0, 0.2 + 0.045 * len(gate)))
    matrix = gate[axes_cols].to_numpy(dtype=float)
    ax.imshow(matrix, cmap=plt.matplotlib.colors.ListedColormap([HIGHLIGHT, OKABE_ITO[2]]), vmin=0, vmax=1,
              aspect="auto")
    for (i, j), value in np.ndenumerate(matrix):
        ax.text(j, i, "pass" if value else "fail", ha="center", va="center", fontsize=7, color="white")
    ax.set_xticks(range(len(axes_cols)), [AXIS_NAMES[c[5:]] for c in axes_cols])
    ax.xaxis.tick_top()
    labels = list(gate["encoder"].astype(str))
    ax.set_yticks(range(len(gate)), labels)
    for i, decision in enumerate(gate["decision"].astype(str)):
        suffix = f"  (P = {gate['p_tier'].iloc[i]:.2f})" if "p_tier" in gate.columns else ""
        ax.text(len(axes_cols) - 0.4, i, f"{decision}{suffix}", va="center", fontsize=7.5,
                fontweight="bold" if decision == "advance" else "normal")
    ax.set_xlim(-0.5, len(axes_cols) + 2.6)
    ax.spines[:].set_visible(False)
    ax.tick_params(length=0)
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
    _require(table, ("quantity", "study", "this_build"), "published_vs_build")
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


def figure_png(fig: Figure) -> bytes:
    """The figure as PNG bytes at the book's resolution; closes a pyplot-managed figure."""
    import io

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    if plt.fignum_exists(getattr(fig, "number", -1)):
        plt.close(fig)
    return buffer.getvalue()


def glue_figure(name: str, fig: Figure) -> None:
    """Store a figure in the notebook under ``name`` for a numbered MyST figure (``{glue:figure}``).

    The chapter's markdown places it with a caption, alt text and a label that
    other pages cross-reference (``{numref}``); nothing is displayed where this
    is called.
    """
    from IPython.display import Image
    from myst_nb import glue

    glue(name, Image(data=figure_png(fig), format="png"), display=False)


def show(fig: Figure) -> None:
    """Display a figure once as a PNG output of the current notebook cell, then close it.

    Works the same for pyplot-managed figures and for bare ``Figure`` objects
    (which matplotlib's inline backend would not display on its own), and
    closing prevents the inline backend from showing a pyplot figure twice.
    """
    import io

    import matplotlib.pyplot as plt
    from IPython.display import Image, display

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    display(Image(data=buffer.getvalue(), format="png"))
    if plt.fignum_exists(getattr(fig, "number", -1)):
        plt.close(fig)


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
        _require(table, ("crs_before", "crs_after"), f"before_after_scatter ({what})")
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


def placeholder(message: str) -> Figure:
    """A small figure that only says ``message`` (a figure slot with nothing to draw in this run)."""
    apply_style()
    fig, ax = plt.subplots(figsize=figure_size(0.12))
    ax.text(0.5, 0.5, message, ha="center", va="center", color=MUTED)
    ax.set_axis_off()
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
    _require(effect, ("augmented", "plain", "in_results", "clean_aug", "clean_plain",
                      "corruption_loss_aug", "corruption_loss_plain"), "augmentation_effect")
    shown = effect[effect["in_results"].astype(bool)].reset_index(drop=True)
    if shown.empty:
        return placeholder("no aug/noaug pair in this results table")
    fig, axes = _new(height_ratio=0.22 + 0.1 * len(shown), ncols=2, sharey=True)
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


def stack_figures(figures: Sequence[Figure], dpi: int = 100) -> Figure:
    """Several finished figures as one, one below the other (left-aligned, white padding).

    The cohort chapter draws one contact sheet per dataset of the run, however
    many there are, and shows them as one numbered figure.

    Parameters
    ----------
    figures : sequence of Figure
        Drawn top to bottom; each is rendered at ``dpi`` and closed if pyplot manages it.
    dpi : int
        Resolution at which each figure is rendered and the result is sized.

    Returns
    -------
    matplotlib.figure.Figure
        Pixel for pixel the stacked renderings.

    Raises
    ------
    ValueError
        If ``figures`` is empty.

    Examples
    --------
    >>> a, b = Figure(figsize=(2, 1)), Figure(figsize=(1, 1))
    >>> [float(v) for v in stack_figures([a, b]).get_size_inches()]
    [2.0, 2.0]
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    if not figures:
        raise ValueError("stack_figures: no figure to stack")
    images = []
    for fig in figures:
        fig.set_dpi(dpi)
        canvas = FigureCanvasAgg(fig)
        canvas.draw()
        images.append(np.asarray(canvas.buffer_rgba())[..., :3].copy())
        if plt.fignum_exists(getattr(fig, "number", -1)):
            plt.close(fig)
    width = max(image.shape[1] for image in images)
    padded = [np.pad(image, ((0, 0), (0, width - image.shape[1]), (0, 0)), constant_values=255) for image in images]
    stacked = np.concatenate(padded, axis=0)
    out = Figure(figsize=(stacked.shape[1] / dpi, stacked.shape[0] / dpi), dpi=dpi)
    ax = out.add_axes((0, 0, 1, 1))
    ax.imshow(stacked, interpolation="nearest")
    ax.set_axis_off()
    return out
