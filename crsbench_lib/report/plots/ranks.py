"""Figures of rankings: how two orders of the encoders compare, and how stable an order is.

Slope charts of one rank against another with every reversed pair marked
(:func:`bump_chart`, :func:`transfer_comparison`), rank probabilities under the
bootstrap (:func:`rank_probability_heatmap`), the Kendall tau of perturbed
rankings (:func:`sensitivity_distribution`) and of reduced-profile predictors
(:func:`lodo_comparison`). The only arithmetic here is geometry (where two
lines cross).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter, MaxNLocator

from crsbench_lib.report.plots.canvas import new_figure, require_columns
from crsbench_lib.report.style import (
    EMPHASIS,
    FONT_SIZE,
    HIGHLIGHT,
    MUTED,
    OKABE_ITO,
    SEQUENTIAL_CMAP,
    apply_style,
    figure_size,
)


def crossing_pairs(left: Sequence[float], right: Sequence[float]) -> list[tuple[int, int]]:
    """Index pairs whose order differs between ``left`` and ``right`` (strictly: ties do not cross)."""
    a, b = np.asarray(left, dtype=float), np.asarray(right, dtype=float)
    return [(i, j) for i, j in combinations(range(a.size), 2) if (a[i] - a[j]) * (b[i] - b[j]) < 0]


def crossing_points(
    left: Sequence[float], right: Sequence[float], pairs: Sequence[tuple[int, int]],
) -> dict[tuple[float, float], int]:
    """Where the lines of each crossing pair meet on a slope chart (x 0 to 1), and how many pairs meet there.

    Geometry only: ``pairs`` are :func:`crossing_pairs` of ``left`` and ``right``; points that agree to 1e-9
    are one point. Ordered by x, then y.

    Examples
    --------
    >>> left, right = [1, 2, 3], [3, 2, 1]
    >>> crossing_points(left, right, crossing_pairs(left, right))
    {(0.5, 2.0): 3}
    """
    a, b = np.asarray(left, dtype=float), np.asarray(right, dtype=float)
    counts: dict[tuple[float, float], int] = {}
    for i, j in pairs:
        slope_i, slope_j = b[i] - a[i], b[j] - a[j]
        t = (a[j] - a[i]) / (slope_i - slope_j)
        key = (round(float(t), 9), round(float(a[i] + t * slope_i), 9))
        counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items()))


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
        ax.text(-0.04, left_r[i], f"{name}  {left_r[i]:g}", ha="right", va="center", fontsize=FONT_SIZE - 0.5,
                fontweight=weight)
        ax.text(1.04, right_r[i], f"{right_r[i]:g}  {name}", ha="left", va="center", fontsize=FONT_SIZE - 0.5,
                fontweight=weight)
    pairs = crossing_pairs(left_r, right_r)
    for (t, y), count in crossing_points(left_r, right_r, pairs).items():
        ax.scatter([t], [y], marker="x", color="black", s=22, lw=1.1, zorder=4)
        if count > 1:
            # Pairs that cross at one point (a swap across an unmoved encoder) share one cross: the count says
            # how many, so the crosses still add up to the reversed pairs.
            ax.annotate(f"{count} pairs", (t, y), xytext=(0, 5), textcoords="offset points", ha="center",
                        va="bottom", fontsize=FONT_SIZE - 1, zorder=5,
                        bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.85})
    ax.set_xlim(-0.45, 1.45)
    ax.set_ylim(n + 0.7, 0.3)
    ax.set_xticks([0, 1], [f"{labels[0]}\n(1 = best)", f"{labels[1]}\n(1 = best)"])
    ax.set_yticks([])
    ax.spines[["left", "bottom"]].set_visible(False)
    ax.tick_params(length=0)
    return len(pairs)


def fit_slope_labels(fig: Figure, ax: plt.Axes, rounds: int = 4) -> None:
    """Widen a slope panel's x limits until the names written beside its two rank columns lie inside it.

    Geometry only. Names outside the panel made the saved figure wider than the
    book's column, so the page shrank every letter of it (7 pt printed at 6 px);
    inside, the figure keeps the column's width. The lines keep x 0 to 1.
    """
    for _ in range(rounds):
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        box = ax.get_window_extent(renderer)
        texts = [t for t in ax.texts if t.get_text().strip() and t.get_position()[0] in (-0.04, 1.04)]
        if not texts or box.width <= 0:
            return
        widths = {side: max((t.get_window_extent(renderer).width for t in texts if t.get_position()[0] == x),
                            default=0.0) for side, x in (("left", -0.04), ("right", 1.04))}
        share_left, share_right = widths["left"] / box.width, widths["right"] / box.width
        if share_left + share_right >= 0.9:
            return  # names wider than the panel: leave the limits, a narrower panel cannot hold them either
        span = 1.08 / (1.0 - share_left - share_right) * 1.02
        limits = (-0.04 - share_left * span, 1.04 + share_right * span)
        if np.allclose(limits, ax.get_xlim(), atol=1e-3):
            return
        ax.set_xlim(*limits)


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
    require_columns(ranks, ("encoder", "rank_auroc", "rank_crs"), "bump_chart")
    fig, (ax,) = new_figure(height_ratio=0.75)
    n = len(ranks)
    k = _slope_panel(ax, list(ranks["encoder"].astype(str)), ranks["rank_auroc"], ranks["rank_crs"],
                     ("AUROC rank", "CRS rank"), highlight)
    ax.set_title(title or f"{k} of {n * (n - 1) // 2} pairs reversed (x: a crossing, counted where several pairs meet)")
    handles = [
        Line2D([], [], color=EMPHASIS, lw=2, label="higher under CRS"),
        Line2D([], [], color=HIGHLIGHT, lw=2, label="lower under CRS"),
        Line2D([], [], color=MUTED, lw=2, label="same rank"),
        Line2D([], [], color="black", marker="x", lw=0, label="reversed pair"),
    ]
    # Outside the panel, below the column labels: the layout keeps room for it, so it never covers "(1 = best)".
    fig.legend(handles=handles, loc="outside lower center", ncol=4)
    fit_slope_labels(fig, ax)
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
    require_columns(ranks, ("encoder", "rank_frozen", "rank_lora"), "transfer_comparison")
    # One panel above the other, each the column's width: side by side, two columns of names and a third of
    # bar labels did not fit, the figure came out wider than the page and every letter was shrunk to fit.
    heights = [1.0 + 0.42 * len(ranks)] + ([1.3 + 0.3 * len(gains)] if gains is not None else [])
    apply_style()
    fig, axes = plt.subplots(len(heights), 1, figsize=figure_size(sum(heights) / 10.5), height_ratios=heights,
                             squeeze=False)
    axes = axes[:, 0]
    k = _slope_panel(axes[0], list(ranks["encoder"].astype(str)), ranks["rank_frozen"], ranks["rank_lora"],
                     ("frozen CRS rank", "LoRA CRS rank"), highlight)
    axes[0].set_title(f"{k} reversed pair{'' if k == 1 else 's'}")
    if gains is not None:
        require_columns(gains, ("encoder", "auroc_gain"), "transfer_comparison gains")
        order = gains.sort_values("auroc_gain", ascending=True)
        values = order["auroc_gain"].to_numpy(dtype=float)
        axes[1].barh(order["encoder"].astype(str), values, color=[EMPHASIS if v >= 0 else HIGHLIGHT for v in values])
        axes[1].axvline(0, color="black", lw=0.8)
        axes[1].set_xlabel("clean AUROC gain (LoRA - frozen)")
        axes[1].xaxis.set_major_locator(MaxNLocator(nbins=5))
        # Signed tick labels with their own exponent, never an offset text that lands on the axis label.
        axes[1].xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:+.2g}" if v else "0"))
        axes[1].tick_params(axis="y", length=0)
    for ax in axes:
        ax.tick_params(labelsize=FONT_SIZE - 0.5)
    fit_slope_labels(fig, axes[0])
    return fig


def cell_font_size(n_columns: int) -> float:
    """The font size (points) of a number of up to three characters in each of ``n_columns`` cells across the column.

    The book's size (:data:`~crsbench_lib.report.style.FONT_SIZE`) while it
    fits, smaller for a wider grid, never under 6 points.

    Examples
    --------
    >>> cell_font_size(19), cell_font_size(40)
    (9.5, 6.0)
    """
    return float(min(FONT_SIZE, max(6.0, 340.0 / (1.65 * max(n_columns, 1)))))


def rank_probability_heatmap(probabilities: pd.DataFrame, top_k: int | None = 3,
                             point_crs: "pd.Series | None" = None) -> Figure:
    """P(rank = r) for every encoder (rows) and rank r (columns).

    Parameters
    ----------
    probabilities : pandas.DataFrame
        Index encoder, columns 1..n, rows summing to 1 (e.g.
        :func:`crsbench_lib.report.summaries.rank_probabilities`).
    top_k : int, optional
        Draw a line after rank ``top_k``.
    point_crs : pandas.Series, optional
        The point CRS of each encoder (index encoder). When given, the rows are
        drawn in its order (highest first, ties by name) and the y axis says so;
        otherwise in the order of ``probabilities``. A page that says its rows
        follow the point CRS passes it, so the figure cannot drift from the text.

    Returns
    -------
    matplotlib.figure.Figure
    """
    apply_style()
    if point_crs is not None:
        point = pd.Series(point_crs, dtype=float)
        point.index = point.index.astype(str)
        missing = sorted(set(map(str, probabilities.index)) - set(point.index))
        if missing:
            raise ValueError(f"rank_probability_heatmap: no point CRS for {missing}")
        names = [str(name) for name in probabilities.index]
        order = sorted(range(len(names)), key=lambda i: (-float(point[names[i]]), names[i]))
        probabilities = probabilities.iloc[order]
    n = probabilities.shape[1]
    fig, (ax,) = new_figure(height_ratio=min(1.0, 0.18 + 0.045 * len(probabilities)))
    annotate = probabilities.map(lambda p: "" if p < 0.005 else f"{p:.2f}".lstrip("0") if p < 1 else "1")
    # The colour bar under the map, not beside it: the columns get its width, and the numbers the book's font
    # size while a ".47" still fits its cell (7 pt printed 6 px digits in a column of the page).
    sns.heatmap(probabilities, ax=ax, cmap=SEQUENTIAL_CMAP, vmin=0, vmax=1, annot=annotate, fmt="",
                annot_kws={"fontsize": cell_font_size(n)},
                cbar_kws={"label": "bootstrap probability", "location": "bottom", "shrink": 0.6, "pad": 0.02,
                          "aspect": 40},
                linewidths=0.4, linecolor="white")
    if top_k is not None and 0 < top_k < n:
        ax.axvline(top_k, color=HIGHLIGHT, lw=2)
    ax.set_xlabel("CRS rank in the resampled draw")
    ax.set_ylabel("by point CRS (highest first)" if point_crs is not None else "")
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
        from the default's), drawn as a second panel: one dot per scheme,
        labelled with the count of panels when ``panels`` is given
        (``summaries.panel_summary``).
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
    fig, axes = new_figure(height_ratio=0.42, ncols=ncols, width_ratios=[2, 1] if ncols == 2 else None)
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
        _panel_changes(axes[1], panel)
    return fig


def _panel_changes(ax: plt.Axes, panel: pd.DataFrame) -> None:
    """One dot per panel scheme at the share of panels whose top set changes, each labelled with its count.

    A dot, not a bar: a share of 0 (the usual answer) is still a mark the
    reader sees at 0, with "0 of 19 panels" beside it, never an empty axis.
    """
    require_columns(panel, ("scheme", "top_k_changed"), "sensitivity_distribution panel")
    shares = panel["top_k_changed"].to_numpy(dtype=float)
    y = np.arange(len(panel))
    ax.hlines(y, 0, shares, color=OKABE_ITO[2], lw=2.5)
    ax.scatter(shares, y, color=OKABE_ITO[2], s=40, zorder=3)
    for yi, (_, row) in zip(y, panel.iterrows(), strict=True):
        share = float(row["top_k_changed"])
        if "panels" in panel.columns:
            # A share is a count of panels; the count is what a reader can check against the table.
            label = f"{int(round(share * int(row['panels'])))} of {int(row['panels'])} panels"
        else:
            label = f"{100 * share:.0f}% of panels"
        # Above its dot, from the left edge: inside the axes whatever the share.
        ax.text(0, yi - 0.22, label, va="bottom", ha="left", fontsize=7.5)
    ax.set_yticks(y, panel["scheme"].astype(str))
    ax.set_ylim(len(panel) - 0.5, -0.75)
    top = float(np.nanmax(shares)) if np.isfinite(shares).any() else 0.0
    ax.set_xlim(-0.02, min(1.02, max(0.25, 1.3 * top)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{100 * v:.0f}%"))
    ax.set_xlabel("share of panels whose\ntop set changes")
    if top == 0:
        ax.set_title("no panel changes the top set", fontsize=8.5)


def lodo_comparison(summary: pd.DataFrame, noise: pd.DataFrame | None = None, level: float = 0.95) -> Figure:
    """Kendall tau of each reduced-profile predictor against the held-out AUROC ranking, beside its noise band.

    Parameters
    ----------
    summary : pandas.DataFrame
        Index held-out dataset (plus "mean"), columns predictors
        (``lodo.lodo_summary``).
    noise : pandas.DataFrame, optional
        ``held_out, draw_low, draw_high``: the central range of τ_b between two
        bootstrap draws of each held-out AUROC ranking
        (``sentences.lodo.held_out_noise_summary``; one range per dataset, repeated
        rows of a dataset agree). Drawn as a grey band behind that dataset's bars:
        the finding is where the bars stand against it.
    level : float
        The coverage of that range, for the legend.

    Returns
    -------
    matplotlib.figure.Figure
        One group of bars per held-out dataset; the y axis spans the bars and
        bands (and 0), not the whole [-1, 1].
    """
    fig, (ax,) = new_figure(height_ratio=0.45)
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
               label=names.get(predictor, predictor), alpha=1.0 if predictor in ("crs", "auroc") else 0.55, zorder=2)
    shown = [summary.to_numpy(dtype=float).ravel(), [0.0]]
    if noise is not None:
        require_columns(noise, ("held_out", "draw_low", "draw_high"), "lodo_comparison noise")
        first = noise.drop_duplicates("held_out")
        bands = first.set_index(first["held_out"].astype(str))
        label = f"central {level:.0%} of τ_b between two bootstrap\ndraws of the held-out AUROC ranking"
        for xi, group in zip(x, groups, strict=True):
            if str(group) not in bands.index:
                continue  # "mean" averages datasets: no one ranking's noise to draw behind it
            low, high = float(bands.at[str(group), "draw_low"]), float(bands.at[str(group), "draw_high"])
            if np.isfinite(low) and np.isfinite(high):
                # Behind the bars, as wide as the group: a bar below the band falls short of the ranking's noise.
                ax.fill_between([xi - 0.46, xi + 0.46], low, high, color=MUTED, alpha=0.3, lw=0, zorder=1,
                                label=label)
                label = None
                shown.append([low, high])
    ax.axhline(0, color="black", lw=0.8)
    ax.set_xticks(x, [f"held out: {g}" if g != "mean" else "mean" for g in groups])
    # Limits from the data (τ_b lives in [-1, 1], but all-positive bars on that range waste half the panel).
    values = np.concatenate([np.asarray(v, dtype=float) for v in shown])
    values = values[np.isfinite(values)]
    low, high = float(values.min()), float(values.max())
    pad = 0.06 * max(high - low, 0.1)
    ax.set_ylim(max(-1.02, low - pad), min(1.02, high + pad))
    ax.set_ylabel("Kendall tau with AUROC on d")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=3)
    return fig
