"""Figures of axis profiles: each encoder's four axes, their trade-offs and their thresholds.

Normalised profiles as parallel coordinates or a radar (:func:`axis_profiles`),
discrimination against each other axis with the Pareto front
(:func:`pareto_view`), retention and ECE across conditions
(:func:`label_efficiency_curves`, :func:`ece_by_condition`), and the selection
gate's pass/fail per axis (:func:`gate_matrix`). The only arithmetic here is
geometry (which points lie on a drawn front, where end labels go apart); :func:`retention_on_scale` gathers
the retention curves from the scoring layer's own label-efficiency axis.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

from crsbench_lib.report.plots.canvas import new_figure, require_columns
from crsbench_lib.report.style import (
    AXIS_NAMES,
    FONT_SIZE,
    HIGHLIGHT,
    MUTED,
    OKABE_ITO,
    SEQUENTIAL_CMAP,
    apply_style,
    encoder_colours,
    figure_size,
)
from crsbench_lib.standard import AXES


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
    require_columns(scores, ["encoder", *cols], "axis_profiles")
    if kind not in ("parallel", "radar"):
        raise ValueError(f"kind must be 'parallel' or 'radar', got {kind!r}")
    names = list(scores["encoder"].astype(str))
    colours = encoder_colours(names, highlight)
    shown = set(highlight) if highlight else set(names)
    values = scores[cols].to_numpy(dtype=float)
    apply_style()
    if kind == "parallel":
        fig, (ax,) = new_figure(height_ratio=0.55)
        x = np.arange(len(AXES))
        order = sorted(range(len(names)), key=lambda i: names[i] in shown)  # highlighted on top
        for i in order:
            ax.plot(x, values[i], color=colours[names[i]], lw=2.2 if names[i] in shown else 1.0,
                    marker="o", ms=3.5, zorder=3 if names[i] in shown else 2)
        labelled = [i for i in range(len(names)) if names[i] in shown and np.isfinite(values[i, -1])]
        ends = [float(values[i, -1]) for i in labelled]
        # End labels spread apart (two encoders ending 0.004 apart overprinted each other), each joined to its
        # line's end by a thin leader, in a margin the x limits keep inside the panel.
        for i, end, y in zip(labelled, ends, spread_labels(ends, gap=0.045, low=-0.02, high=1.02), strict=True):
            ax.plot([x[-1], x[-1] + 0.12], [end, y], color=colours[names[i]], lw=0.7, zorder=2)
            ax.text(x[-1] + 0.15, y, names[i], va="center", fontsize=8, color=colours[names[i]])
        ax.set_xticks(x, [f"{AXIS_NAMES[a]}\n(s_{a})" for a in AXES])
        longest = max((len(names[i]) for i in labelled), default=0)
        ax.set_xlim(-0.2, len(AXES) - 0.8 + 0.055 * longest)
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


def spread_labels(positions: Sequence[float], gap: float, low: float = -np.inf, high: float = np.inf) -> list[float]:
    """Label positions moved apart to at least ``gap`` each, as little as possible, kept within [low, high].

    Geometry only (where to write each of several labels on one axis); the
    input order is kept. Where the labels need more room than [low, high]
    holds, the gap shrinks to fit.

    Examples
    --------
    >>> [round(v, 3) for v in spread_labels([0.83, 0.826, 0.2], gap=0.05)]
    [0.853, 0.803, 0.2]
    """
    values = np.asarray(positions, dtype=float)
    if values.size == 0:
        return []
    if np.isfinite(high - low) and gap * (values.size - 1) > high - low:
        gap = (high - low) / max(values.size - 1, 1)
    order = np.argsort(values, kind="mergesort")
    placed = values[order].copy()
    # Pull each cluster of too-close labels apart around its centre, merging clusters until none is too close.
    clusters = [[k] for k in range(placed.size)]
    while True:
        merged = False
        centres = []
        for members in clusters:
            centre = float(np.mean(values[order][members]))
            first = centre - gap * (len(members) - 1) / 2
            first = min(max(first, low), high - gap * (len(members) - 1))
            centres.append(first)
        for c in range(len(clusters) - 1):
            top_of_lower = centres[c] + gap * (len(clusters[c]) - 1)
            if centres[c + 1] - top_of_lower < gap - 1e-12:
                clusters[c:c + 2] = [clusters[c] + clusters[c + 1]]
                merged = True
                break
        if not merged:
            break
    for members, first in zip(clusters, centres, strict=True):
        for k, member in enumerate(members):
            placed[member] = first + gap * k
    out = np.empty_like(placed)
    out[order] = placed
    return out.tolist()


def pareto_front_mask(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Points not weakly dominated in the (x, y) plane (both larger-is-better)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    dominated = ((x[None, :] >= x[:, None]) & (y[None, :] >= y[:, None])
                 & ((x[None, :] > x[:, None]) | (y[None, :] > y[:, None]))).any(axis=1)
    return ~dominated


def _span(values: np.ndarray, minimum: float = 0.02) -> tuple[float, float]:
    """The finite range of ``values``, widened to at least ``minimum`` (a colour scale needs a width)."""
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return 0.0, 1.0
    low, high = float(finite.min()), float(finite.max())
    if high - low < minimum:
        middle = (low + high) / 2
        low, high = middle - minimum / 2, middle + minimum / 2
    return low, high


def _padded(values: np.ndarray, pad: float = 0.06, top: float = 0.0) -> tuple[float, float]:
    """Axis limits around the data (a share ``pad`` of its range each side, ``top`` more above for labels)."""
    low, high = _span(np.asarray(values, dtype=float).ravel(), minimum=0.1)
    width = high - low
    return low - pad * width, high + (pad + top) * width


#: Marker shapes of the encoders a Pareto view names (in order); the rest are dots.
NAMED_MARKERS: tuple[str, ...] = ("*", "^", "s", "D", "P", "X", "v")


def _tag_named(ax: plt.Axes, xs: Sequence[float], ys: Sequence[float]) -> None:
    """Number the named points 1, 2, ... beside the cluster they sit in, the numbers spread apart, each on a leader.

    Geometry only. Named encoders are the leaders, so their markers crowd the
    same corner and cover each other; a number per marker, moved clear of the
    others by :func:`spread_labels` and joined to it by a thin line, says which
    marker is which (the legend keys the numbers to the names).
    """
    if not xs:
        return
    (x_low, x_high), (y_low, y_high) = ax.get_xlim(), ax.get_ylim()
    x_span, y_span = x_high - x_low, y_high - y_low
    middle = (x_low + x_high) / 2
    spread = spread_labels(ys, gap=0.11 * y_span, low=y_low + 0.06 * y_span, high=y_high - 0.06 * y_span)
    for k, (x, y, tag_y) in enumerate(zip(xs, ys, spread, strict=True), start=1):
        # Toward the middle of the panel, where the room is: left of a point on the right half, else right.
        tag_x = x - 0.17 * x_span if x > middle else x + 0.17 * x_span
        ax.plot([x, tag_x], [y, tag_y], color="#505050", lw=0.7, zorder=2.5)
        ax.text(tag_x, tag_y, str(k), ha="center", va="center", fontsize=FONT_SIZE - 0.5, fontweight="bold", zorder=4,
                bbox={"boxstyle": "circle,pad=0.15", "fc": "white", "ec": "#505050", "lw": 0.6})


def pareto_view(scores: pd.DataFrame, highlight: Sequence[str] = (), versus: str = "s_D") -> Figure:
    """Discrimination against each other normalised axis, with each plane's Pareto front.

    Parameters
    ----------
    scores : pandas.DataFrame
        ``encoder, crs`` and the normalised axes ``s_D, s_C, s_L, s_R``.
    highlight : sequence of str
        Encoders named on every panel (default: the three best by CRS), at most
        :data:`NAMED_MARKERS` of them.
    versus : str
        The normalised axis on the horizontal of every panel.

    Returns
    -------
    matplotlib.figure.Figure
        Three panels; colour = CRS over the candidates' own range; the axes
        span the data (not the whole 0-1 scale); the step line joins the
        encoders no other encoder beats on both plotted axes. A named encoder
        has its own marker shape, keyed in a legend under the panels: names
        written beside the points collided and ran into the next panel.
    """
    cols = [f"s_{a}" for a in AXES]
    require_columns(scores, ["encoder", "crs", *cols], "pareto_view")
    if versus not in cols:
        raise ValueError(f"versus must be one of {cols}, got {versus!r}")
    others = [c for c in cols if c != versus]
    fig, axes = new_figure(height_ratio=0.5, ncols=len(others), sharex=True, sharey=True)
    names = scores["encoder"].astype(str).to_numpy()
    named = list(highlight) if highlight else list(scores.nlargest(3, "crs")["encoder"].astype(str))
    named = [name for name in dict.fromkeys(named) if name in set(names)][:len(NAMED_MARKERS)]
    x = scores[versus].to_numpy(dtype=float)
    crs = scores["crs"].to_numpy(dtype=float)
    # Colour and axes span the data, not the whole 0-1 scale: encoders that differ by 0.05 must look different.
    low, high = _span(crs)
    y_all = scores[others].to_numpy(dtype=float)
    plain = ~np.isin(names, named)
    points = None
    for ax, other in zip(axes, others, strict=True):
        y = scores[other].to_numpy(dtype=float)
        front = pareto_front_mask(x, y)
        order = np.argsort(-x[front])
        fx, fy = x[front][order], y[front][order]
        ax.step(fx, fy, where="post", color=MUTED, lw=1.2, zorder=1)
        points = ax.scatter(x[plain], y[plain], c=crs[plain], cmap=SEQUENTIAL_CMAP, vmin=low, vmax=high, s=30,
                            edgecolor=np.where(front[plain], "black", "none").tolist(), lw=0.9, zorder=2)
        for marker, name in zip(NAMED_MARKERS, named):
            i = int(np.flatnonzero(names == name)[0])
            # A black edge means "on the front" here as for every point; off it, a thin grey one keeps it visible.
            ax.scatter([x[i]], [y[i]], c=[crs[i]], cmap=SEQUENTIAL_CMAP, vmin=low, vmax=high, marker=marker,
                       s=110 if marker == "*" else 60, edgecolor="black" if front[i] else "#707070",
                       lw=1.2 if front[i] else 0.6, zorder=3)
        ax.set_xlabel(f"{AXIS_NAMES[versus[2:]]}\n({versus})")
        ax.set_title(AXIS_NAMES[other[2:]])
        ax.set_xlim(*_padded(x))
        ax.set_ylim(*_padded(y_all))
        _tag_named(ax, [x[int(np.flatnonzero(names == n)[0])] for n in named],
                   [y[int(np.flatnonzero(names == n)[0])] for n in named])
        # Three ticks at most on a third of the column: "0.25 0.50" ran together.
        ax.xaxis.set_major_locator(MaxNLocator(nbins=3))
    axes[0].set_ylabel("normalised score")
    fig.colorbar(points, ax=list(axes), label="CRS", shrink=0.85, aspect=30)
    if named:
        keys = [Line2D([], [], marker=m, ls="", color="white", markeredgecolor="black",
                       markersize=10 if m == "*" else 7, label=f"{k} {name}")
                for k, (m, name) in enumerate(zip(NAMED_MARKERS, named), start=1)]
        keys.append(Line2D([], [], marker="o", ls="", color="white", markeredgecolor="black", markersize=6,
                           label="on the front (black edge)"))
        fig.legend(handles=keys, loc="outside lower center", ncol=min(len(keys), 2), fontsize=FONT_SIZE - 0.5)
    return fig


#: The y-axis label of the retention curves on each label-efficiency scale (:class:`crsbench_lib.standard.AxisScales`).
RETENTION_LABELS: dict[str, str] = {
    "ratio": "AUROC / AUROC at 100% labels",
    "chance": "(AUROC − 0.5) / (AUROC at 100% − 0.5)",
}


def retention_on_scale(results: "pd.DataFrame | object", standard: "object", arm: str = "frozen") -> pd.DataFrame:
    """Each encoder's retention at every label fraction of ``standard``, on the scale its ``L`` uses.

    No arithmetic of its own: every point is the label-efficiency axis of
    :func:`crsbench_lib.scoring.axes.raw_axes` computed on that one fraction,
    with the standard's scales (so near-chance cells, the chance margin and the
    per-cell ratios are the axis's), and averaged over seeds then datasets by
    :func:`crsbench_lib.scoring.axes.encoder_profiles`. The mean of an
    encoder's points below 100 % is therefore its profile ``L``.

    Returns
    -------
    pandas.DataFrame
        ``encoder, label_fraction, retention`` with fraction 1.0 (retention 1),
        sorted by encoder and fraction: the input of :func:`label_efficiency_curves`.
    """
    from crsbench_lib.scoring import axes

    fractions = [float(f) for f in standard.label_fractions if float(f) < 1.0]
    parts = []
    for fraction in fractions:
        raw = axes.raw_axes(results, arm=arm, label_fractions=[fraction], scales=standard.axis_scales,
                             ece_estimator=standard.ece_estimator, robustness=standard.robustness)
        level = axes.encoder_profiles(raw)["L"]
        parts.append(pd.DataFrame({"encoder": level.index.astype(str), "label_fraction": fraction,
                                   "retention": level.to_numpy(dtype=float)}))
    names = sorted({str(e) for part in parts for e in part["encoder"]})
    parts.append(pd.DataFrame({"encoder": names, "label_fraction": 1.0, "retention": 1.0}))
    curves = pd.concat(parts, ignore_index=True)
    return curves.sort_values(["encoder", "label_fraction"], kind="mergesort").reset_index(drop=True)


def label_efficiency_curves(curves: pd.DataFrame, highlight: Sequence[str] = (), scale: str = "ratio") -> Figure:
    """AUROC retention against the fraction of labels, one line per encoder.

    Parameters
    ----------
    curves : pandas.DataFrame
        ``encoder, label_fraction, retention`` (:func:`retention_on_scale`, or
        ``summaries.label_efficiency_curves`` on the study's ratio scale).
    highlight : sequence of str
    scale : {"ratio", "chance"}
        The scale ``curves`` is on, named on the y axis (:data:`RETENTION_LABELS`).

    Returns
    -------
    matplotlib.figure.Figure
    """
    require_columns(curves, ("encoder", "label_fraction", "retention"), "label_efficiency_curves")
    if scale not in RETENTION_LABELS:
        raise ValueError(f"label_efficiency_curves: scale must be one of {sorted(RETENTION_LABELS)}, got {scale!r}")
    fig, (ax,) = new_figure(height_ratio=0.55)
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
    ax.set_ylabel(RETENTION_LABELS[scale])
    ax.legend(loc="lower right", ncol=2 if len(shown) > 6 else 1)
    return fig


def condition_family(condition: str) -> str:
    """The family of a condition label of ``summaries.ece_by_condition``: its first word ("labels 25%" -> "labels").

    Examples
    --------
    >>> [condition_family(c) for c in ["clean", "labels 25%", "corruption s3", "shift (site B)"]]
    ['clean', 'labels', 'corruption', 'shift']
    """
    return str(condition).split(" ", 1)[0]


def ece_by_condition(table: pd.DataFrame, highlight: Sequence[str] = ()) -> Figure:
    """Mean ECE per encoder under each condition (clean, label fractions, corruption severities, shift).

    Parameters
    ----------
    table : pandas.DataFrame
        ``encoder, condition, ece`` (``summaries.ece_by_condition``); the
        condition column's order is kept on the horizontal axis. With an
        ``ece_floor`` column (each row's mean ECE floor, the ECE a perfectly
        calibrated probe shows on that condition's test images), the floor of
        each condition is drawn under its markers as a grey bar from 0 to the
        mean floor of its encoders.
    highlight : sequence of str

    Returns
    -------
    matplotlib.figure.Figure
        A marker per encoder and condition; lines join only conditions of one
        family (label fractions, corruption severities), whose order means
        something, never clean to a label fraction or a severity to the shift.
        Faint rules separate the families. The floor bars show where a rise is
        the smaller test set's finite-sample bias, not lost calibration: each
        corruption condition is scored on its own block of test images, far
        fewer than the clean test set, and the floor grows as n shrinks.
    """
    require_columns(table, ("encoder", "condition", "ece"), "ece_by_condition")
    fig, (ax,) = new_figure(height_ratio=0.55)
    conditions = list(dict.fromkeys(table["condition"].astype(str)))
    x = {c: i for i, c in enumerate(conditions)}
    names = sorted(table["encoder"].astype(str).unique())
    colours = encoder_colours(names, highlight)
    shown = set(highlight) if highlight else set(names)
    keys = []
    if "ece_floor" in table.columns and table["ece_floor"].notna().any():
        # One bar per condition, behind every marker: the ECE its test size alone produces (method section 9,
        # amendment 5). Without it a rise at corruption severity 1 reads as lost calibration when it is mostly
        # the smaller block of test images each corruption is scored on.
        floors = table.groupby(table["condition"].astype(str), sort=False)["ece_floor"].mean()
        floors = floors.reindex(conditions).to_numpy(dtype=float)
        ax.bar(range(len(conditions)), np.nan_to_num(floors), width=0.6, color="#E3E3E3", zorder=0)
        keys.append(Patch(color="#E3E3E3", label="ECE floor at the condition's test size"))
    for name in sorted(names, key=lambda e: e in shown):
        part = table[table["encoder"].astype(str) == name]
        width = 1.8 if name in shown and highlight else 1.0
        for _, rows in part.groupby(part["condition"].astype(str).map(condition_family), sort=False):
            xs = [x[c] for c in rows["condition"].astype(str)]
            # A line within a family (a dose: fewer labels, stronger corruption); a lone marker otherwise.
            ax.plot(xs, rows["ece"], color=colours[name], marker="o", ms=3.5 if len(xs) == 1 else 3,
                    lw=width if len(xs) > 1 else 0)
        if name in shown:
            keys.append(Line2D([], [], color=colours[name], marker="o", ms=3, lw=width, label=name))
    for i in range(1, len(conditions)):
        if condition_family(conditions[i]) != condition_family(conditions[i - 1]):
            ax.axvline(i - 0.5, color="#DDDDDD", lw=0.8, zorder=0)
    ax.set_xticks(range(len(conditions)), conditions, rotation=35, ha="right")
    ax.set_ylabel("mean ECE")
    ax.set_ylim(bottom=0)
    # Above the panel, never inside it: the label-fraction lines climb into every corner.
    fig.legend(handles=keys, loc="outside upper center", ncol=min(len(keys), 4 if len(keys) > 6 else 2))
    return fig


#: The cell words of the leading-tier column (a reference is never in the tier: it does not compete).
TIER_WORDS: dict[str, str] = {"in": "in tier", "out": "outside", "reference": "reference"}


def gate_matrix(gate: pd.DataFrame) -> Figure:
    """Pass/fail of every encoder on every gated axis, its leading-tier membership, and its decision.

    Parameters
    ----------
    gate : pandas.DataFrame
        ``selection_gate.selection_gate`` output (``encoder``, ``pass_<axis>``,
        ``decision``; ``leading_tier`` and ``role`` when the gate read a
        bootstrap summary).

    Returns
    -------
    matplotlib.figure.Figure
        One row per encoder; one column per gated axis (pass / fail), then,
        when ``leading_tier`` is given, a "Leading tier" column (in tier /
        outside; grey for a reference, which never competes); the decision is
        written to the right. Column headers are slanted so long axis names
        never run into each other.
    """
    require_columns(gate, ("encoder", "decision"), "gate_matrix")
    axes_cols = [c for c in (f"pass_{a}" for a in AXES) if c in gate.columns]
    if not axes_cols:
        raise ValueError("gate_matrix: no pass_<axis> column")
    fig, (ax,) = new_figure(height_ratio=min(1.0, 0.24 + 0.045 * len(gate)))
    matrix = gate[axes_cols].to_numpy(dtype=float)
    headers = [AXIS_NAMES[c[5:]] for c in axes_cols]
    words = [["pass" if value else "fail" for value in row] for row in matrix]
    has_tier = "leading_tier" in gate.columns
    if has_tier:
        # The caption promises the tier as a column: a candidate advances only when this cell passes too.
        reference = (gate["role"].astype(str) == "reference").to_numpy() if "role" in gate.columns \
            else np.zeros(len(gate), dtype=bool)
        tier = np.where(reference, np.nan, gate["leading_tier"].astype(bool).to_numpy(dtype=float))
        matrix = np.column_stack([matrix, tier])
        headers.append("Leading tier")
        for row, in_tier, ref in zip(words, tier, reference, strict=True):
            row.append(TIER_WORDS["reference" if ref else "in" if in_tier else "out"])
    colours = plt.matplotlib.colors.ListedColormap([HIGHLIGHT, OKABE_ITO[2]]).with_extremes(bad="#D9D9D9")
    ax.imshow(np.ma.masked_invalid(matrix), cmap=colours, vmin=0, vmax=1, aspect="auto")
    for (i, j), value in np.ndenumerate(matrix):
        text = words[i][j]
        ax.text(j, i, text, ha="center", va="center", fontsize=7 if len(text) < 10 else 6,
                color="black" if np.isnan(value) else "white")
    if has_tier:
        # A white gap sets the tier (read from the bootstrap) apart from the thresholds (read from the profile).
        ax.axvline(len(axes_cols) - 0.5, color="white", lw=4)
    n_cols = matrix.shape[1]
    ax.set_xticks(range(n_cols), headers, rotation=30, ha="left", rotation_mode="anchor")
    ax.xaxis.tick_top()
    labels = list(gate["encoder"].astype(str))
    ax.set_yticks(range(len(gate)), labels)
    for i, decision in enumerate(gate["decision"].astype(str)):
        ax.text(n_cols - 0.4, i, decision, va="center", fontsize=7.5,
                fontweight="bold" if decision == "advance" else "normal")
    ax.text(n_cols - 0.4, -0.5 - 0.2, "decision", va="bottom", fontsize=FONT_SIZE - 1, fontstyle="italic")
    ax.set_xlim(-0.5, n_cols + 2.6)
    ax.spines[:].set_visible(False)
    ax.tick_params(length=0)
    return fig
