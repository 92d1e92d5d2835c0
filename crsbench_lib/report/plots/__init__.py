"""The book's figures: tables in, matplotlib Figures out, one module per kind of figure.

Every figure function takes the tables the scoring layer returns (documented
per function), draws one figure sized for the book's column with the
colour-blind safe palette of :mod:`crsbench_lib.report.style`, and returns the
:class:`matplotlib.figure.Figure` without showing it. No function computes a
statistic the chapter reports; the only arithmetic here is geometry (where two
lines cross, which points lie on a drawn front).

* :mod:`.canvas` -- a new figure in the book's style, its table checked, a placeholder;
* :mod:`.ranks` -- rankings compared and their stability;
* :mod:`.profiles` -- axis profiles, their trade-offs and thresholds;
* :mod:`.contrasts` -- before and after a change, the study beside this build;
* :mod:`.output` -- finished figures onto the page.
"""
