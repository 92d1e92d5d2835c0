"""The self-audit's figure: observed coverage of each quantity's intervals against the nominal level.

:func:`coverage_figure` draws one row per audited quantity, one marker per
interval method (percentile, basic, the leading tier's set), each with a bar of
two Monte-Carlo errors either side (the error the chapter's sentences judge by,
:func:`crsbench_lib.report.sentences.coverage.judged_se`), and a line at the
nominal level.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from crsbench_lib.report.plots.canvas import new_figure, require_columns
from crsbench_lib.report.sentences.coverage import QUANTITY_NAMES, TOLERANCE_SE, judged_se
from crsbench_lib.report.style import MUTED, OKABE_ITO

#: Marker and colour of each interval method (Okabe-Ito).
METHOD_STYLES: dict[str, tuple[str, str]] = {
    "percentile": ("o", OKABE_ITO[0]), "basic": ("s", OKABE_ITO[1]), "set": ("D", OKABE_ITO[2]),
}
_COLUMNS = ("quantity", "method", "nominal", "observed", "n_replicates", "mc_se")


def coverage_figure(table: pd.DataFrame) -> Figure:
    """Observed coverage per quantity and interval method, with +/- two Monte-Carlo errors, against nominal.

    Parameters
    ----------
    table : pandas.DataFrame
        A coverage table (:func:`crsbench_lib.scoring.coverage.coverage_table`):
        quantity, method, nominal, observed, n_replicates, mc_se.

    Returns
    -------
    matplotlib.figure.Figure
        One panel; rows are quantities (in the order of
        :data:`~crsbench_lib.report.sentences.coverage.QUANTITY_NAMES`, the
        leading tier last), markers the methods, the dashed line the nominal
        level. Each bar spans ``observed +/- 2 se`` clipped to [0, 1], ``se``
        the judged Monte-Carlo error.

    Raises
    ------
    ValueError
        On a missing column or an empty table.

    Examples
    --------
    >>> table = pd.DataFrame({"quantity": ["axis_D", "axis_D"], "method": ["percentile", "basic"],
    ...     "nominal": 0.95, "observed": [0.9, 0.95], "n_replicates": 10, "mc_se": [0.05, 0.04]})
    >>> len(coverage_figure(table).axes)
    1
    """
    require_columns(table, _COLUMNS, "coverage_figure")
    if table.empty:
        raise ValueError("coverage_figure: the coverage table is empty")
    order = [q for q in (*QUANTITY_NAMES, "leading_tier") if q in set(table["quantity"])]
    order += sorted(set(table["quantity"]) - set(order))
    methods = [m for m in METHOD_STYLES if m in set(table["method"])]
    methods += sorted(set(table["method"]) - set(methods))
    fig, axes = new_figure(height_ratio=0.12 + 0.07 * len(order))
    ax = axes[0]
    step = 0.22
    offsets = {m: (i - (len(methods) - 1) / 2) * step for i, m in enumerate(methods)}
    for k, method in enumerate(methods):
        rows = table[table["method"] == method]
        if rows.empty:
            continue
        marker, colour = METHOD_STYLES.get(method, ("^", OKABE_ITO[(3 + k) % len(OKABE_ITO)]))
        y = np.array([order.index(q) for q in rows["quantity"]], dtype=float) + offsets[method]
        x = rows["observed"].to_numpy(dtype=float)
        se = np.array([judged_se(float(r["nominal"]), float(r["mc_se"]), int(r["n_replicates"]))
                       for _, r in rows.iterrows()])
        low = np.clip(x - TOLERANCE_SE * se, 0.0, 1.0)
        high = np.clip(x + TOLERANCE_SE * se, 0.0, 1.0)
        ax.errorbar(x, y, xerr=np.vstack([x - low, high - x]), fmt=marker, color=colour, ecolor=colour,
                    elinewidth=1.2, capsize=2, label=method, zorder=3)
    for nominal in sorted(set(table["nominal"].astype(float))):
        ax.axvline(nominal, color=MUTED, ls="--", lw=1, zorder=1)
    ax.set_yticks(range(len(order)), [QUANTITY_NAMES.get(q, "the leading tier" if q == "leading_tier" else q)
                                      for q in order])
    ax.invert_yaxis()
    ax.set_xlim(-0.02, 1.02)
    ax.set_xlabel(f"observed coverage (bars: ±{TOLERANCE_SE:g} Monte-Carlo errors; dashed: nominal)")
    # Beside the panel, so no marker hides behind it whatever the shares.
    ax.legend(title="interval", loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, title_fontsize=8,
              frameon=False)
    ax.set_title(f"Coverage over {int(table['n_replicates'].max())} replicates", fontsize=10)
    return fig


__all__ = ["METHOD_STYLES", "coverage_figure"]
